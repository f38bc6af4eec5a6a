// InferShape: the instruction-level entry point. A table maps each opcode with inference to an
// adapter that checks the operand and called-computation counts, gathers the operand shapes,
// attributes and callee program shapes, and calls the shape-level function of its family
// (shape_inference_{elementwise,data_movement,gather_scatter,reduction,linalg,control,
// collective}.cc). Opcodes missing from the table get UnimplementedError. The result is
// returned without layouts.
#include "hlo/ir/shape_inference.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/linalg_attributes.h"
#include "hlo/ir/scan_attributes.h"
#include "hlo/ir/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hlo {
namespace {

using shape_inference_internal::InvalidArg;
using shape_inference_internal::Scalar;

std::string_view OpName(const HloInstruction& instr) { return HloOpcodeString(instr.opcode()); }

absl::Status ExpectOperandCount(const HloInstruction& instr, int64_t n) {
  if (instr.operand_count() == n) return absl::OkStatus();
  return InvalidArg(OpName(instr), ": expected ", n, " operand", n == 1 ? "" : "s", ", got ",
                    instr.operand_count());
}

absl::Status ExpectMinOperandCount(const HloInstruction& instr, int64_t n) {
  if (instr.operand_count() >= n) return absl::OkStatus();
  return InvalidArg(OpName(instr), ": expected at least ", n, " operand", n == 1 ? "" : "s",
                    ", got ", instr.operand_count());
}

// Shapes of operands [begin, end) (end < 0: all remaining).
std::vector<const Shape*> OperandShapes(const HloInstruction& instr, int64_t begin = 0,
                                        int64_t end = -1) {
  if (end < 0) end = instr.operand_count();
  std::vector<const Shape*> shapes;
  for (int64_t i = begin; i < end; ++i) shapes.push_back(&instr.operand(i)->shape());
  return shapes;
}

// Program shapes of the called computations, of which there must be exactly `n` (any number
// when n < 0, but at least one).
absl::StatusOr<std::vector<ProgramShape>> CalledShapes(const HloInstruction& instr, int64_t n) {
  const auto& called = instr.called_computations();
  const int64_t count = static_cast<int64_t>(called.size());
  if ((n >= 0 && count != n) || (n < 0 && count == 0)) {
    return InvalidArg(OpName(instr), ": expected ", n < 0 ? "at least 1" : std::to_string(n),
                      " called computation", n == 1 ? "" : "s", ", got ", count);
  }
  std::vector<ProgramShape> shapes;
  for (int64_t i = 0; i < count; ++i) {
    if (called[i] == nullptr)
      return InvalidArg(OpName(instr), ": called computation ", i, " is null");
    shapes.push_back(called[i]->ComputeProgramShape());
  }
  return shapes;
}

// The single entry of `dimensions={d}`.
absl::StatusOr<int64_t> SingleDimension(const HloInstruction& instr) {
  if (instr.dimensions().size() != 1) {
    return InvalidArg(OpName(instr), ": expected exactly one entry in dimensions, got ",
                      instr.dimensions().size());
  }
  return instr.dimensions()[0];
}

std::optional<PrimitiveType> DeclaredArrayType(const HloInstruction& instr) {
  if (!instr.shape().IsArray()) return std::nullopt;
  return instr.shape().element_type();
}

template <typename T>
absl::StatusOr<T> Required(const HloInstruction& instr, const std::optional<T>& attr,
                           std::string_view name) {
  if (!attr.has_value()) return InvalidArg(OpName(instr), ": missing ", name);
  return *attr;
}

// --- Group sizes of collectives ------------------------------------------------------------

absl::StatusOr<int64_t> IotaGroupSize(const HloInstruction& instr,
                                      const IotaReplicaGroupList& iota) {
  int64_t product = 1;
  for (int64_t d : iota.iota_reshape_dims) product *= d;
  const bool perm_ok = iota.iota_transpose_perm.empty() ||
                       shape_inference_internal::IsPermutation(iota.iota_transpose_perm,
                                                               iota.iota_reshape_dims.size());
  if (!perm_ok || iota.num_devices_per_group <= 0 ||
      product != iota.num_replica_groups * iota.num_devices_per_group) {
    return InvalidArg(OpName(instr), ": malformed iota replica_groups [", iota.num_replica_groups,
                      ",", iota.num_devices_per_group, "]");
  }
  return iota.num_devices_per_group;
}

// Each id of explicit replica groups names one participant once: {{0,0},{1}} would count device
// 0's value twice, whatever the collective.
absl::Status CheckReplicaGroupIds(const HloInstruction& instr) {
  const std::optional<ReplicaGroups>& groups = instr.attrs().replica_groups;
  if (!groups.has_value()) return absl::OkStatus();
  absl::flat_hash_set<int64_t> seen;
  for (size_t g = 0; g < groups->groups.size(); ++g) {
    for (int64_t id : groups->groups[g]) {
      if (id < 0) {
        return InvalidArg(OpName(instr), ": replica group ", g, " has negative id ", id);
      }
      if (!seen.insert(id).second) {
        return InvalidArg(OpName(instr), ": id ", id, " appears more than once in replica_groups");
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ExplicitGroupSize(const HloInstruction& instr,
                                          const std::vector<std::vector<int64_t>>& groups) {
  for (size_t g = 1; g < groups.size(); ++g) {
    if (groups[g].size() != groups[0].size()) {
      return InvalidArg(OpName(instr), ": replica groups must have equal sizes, group ", g, " has ",
                        groups[g].size(), " devices but group 0 has ", groups[0].size());
    }
  }
  return static_cast<int64_t>(groups[0].size());
}

// Number of participants per group, following XLA's CollectiveOpGroupMode: explicit groups
// give it directly; empty groups mean all replicas (no channel_id), all partitions
// (channel_id, op without use_global_device_ids), or replicas x partitions.
absl::StatusOr<int64_t> GroupSize(const HloInstruction& instr, bool has_global_ids_flag) {
  const InstructionAttributes& attrs = instr.attrs();
  const HloModule* module = instr.parent() ? instr.parent()->parent() : nullptr;
  // Cross-replica-and-partition mode: the groups list replica ids and each spans every
  // partition.
  const int64_t partitions_per_member =
      has_global_ids_flag && attrs.channel_id.has_value() && !attrs.use_global_device_ids &&
              module != nullptr
          ? module->config().num_partitions
          : 1;
  if (attrs.replica_groups.has_value()) {
    if (attrs.replica_groups->iota.has_value()) {
      ASSIGN_OR_RETURN(int64_t size, IotaGroupSize(instr, *attrs.replica_groups->iota));
      return size * partitions_per_member;
    }
    if (!attrs.replica_groups->groups.empty()) {
      ASSIGN_OR_RETURN(int64_t size, ExplicitGroupSize(instr, attrs.replica_groups->groups));
      return size * partitions_per_member;
    }
  }
  if (module == nullptr) {
    return InvalidArg(OpName(instr), ": replica_groups is empty and the instruction is not in ",
                      "a module, so the group size is unknown");
  }
  const HloModuleConfig& config = module->config();
  if (!attrs.channel_id.has_value()) return config.replica_count;
  if (!has_global_ids_flag) return config.num_partitions;
  if (attrs.use_global_device_ids) {
    return InvalidArg(OpName(instr), ": use_global_device_ids needs explicit replica_groups");
  }
  return config.replica_count * config.num_partitions;
}

// --- Adapters, one per opcode (or family) --------------------------------------------------

using Adapter = absl::StatusOr<Shape> (*)(const HloInstruction&);

absl::StatusOr<Shape> Unary(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferUnaryOpShape(i.opcode(), i.operand(0)->shape());
}

absl::StatusOr<Shape> Binary(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 2));
  return InferBinaryOpShape(i.opcode(), i.operand(0)->shape(), i.operand(1)->shape());
}

absl::StatusOr<Shape> Compare(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 2));
  return InferCompareShape(i.operand(0)->shape(), i.operand(1)->shape());
}

absl::StatusOr<Shape> Select(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 3));
  return InferSelectShape(i.operand(0)->shape(), i.operand(1)->shape(), i.operand(2)->shape());
}

absl::StatusOr<Shape> Clamp(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 3));
  return InferClampShape(i.operand(0)->shape(), i.operand(1)->shape(), i.operand(2)->shape());
}

absl::StatusOr<Shape> Convert(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferConvertShape(i.operand(0)->shape(), i.shape().element_type());
}

absl::StatusOr<Shape> BitcastConvert(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferBitcastConvertShape(i.operand(0)->shape(), i.shape().element_type());
}

absl::StatusOr<Shape> StochasticConvert(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 2));
  return InferStochasticConvertShape(i.operand(0)->shape(), i.operand(1)->shape(),
                                     i.shape().element_type());
}

absl::StatusOr<Shape> ReducePrecision(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferReducePrecisionShape(i.operand(0)->shape(), i.attrs().exponent_bits,
                                   i.attrs().mantissa_bits);
}

absl::StatusOr<Shape> Map(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectMinOperandCount(i, 1));
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, 1));
  return InferMapShape(OperandShapes(i), called[0], i.dimensions());
}

absl::StatusOr<Shape> Broadcast(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferBroadcastShape(i.operand(0)->shape(), i.shape(), i.dimensions());
}

absl::StatusOr<Shape> Reshape(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferReshapeShape(i.operand(0)->shape(), i.shape());
}

absl::StatusOr<Shape> DynamicReshape(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectMinOperandCount(i, 1));
  return InferDynamicReshapeShape(i.operand(0)->shape(), OperandShapes(i, 1), i.shape());
}

absl::StatusOr<Shape> Transpose(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferTransposeShape(i.operand(0)->shape(), i.dimensions());
}

absl::StatusOr<Shape> Iota(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 0));
  return InferIotaShape(i.shape(), i.attrs().iota_dimension);
}

absl::StatusOr<Shape> Slice(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferSliceShape(i.operand(0)->shape(), i.attrs().slice_dimensions);
}

absl::StatusOr<Shape> DynamicSlice(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectMinOperandCount(i, 1));
  return InferDynamicSliceShape(i.operand(0)->shape(), OperandShapes(i, 1),
                                i.attrs().dynamic_slice_sizes);
}

absl::StatusOr<Shape> DynamicUpdateSlice(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectMinOperandCount(i, 2));
  return InferDynamicUpdateSliceShape(i.operand(0)->shape(), i.operand(1)->shape(),
                                      OperandShapes(i, 2));
}

absl::StatusOr<Shape> Pad(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 2));
  ASSIGN_OR_RETURN(PaddingConfig config, Required(i, i.attrs().padding_config, "padding"));
  return InferPadShape(i.operand(0)->shape(), i.operand(1)->shape(), config);
}

absl::StatusOr<Shape> Concatenate(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectMinOperandCount(i, 1));
  ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(i));
  return InferConcatenateShape(OperandShapes(i), dimension);
}

absl::StatusOr<Shape> Reverse(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferReverseShape(i.operand(0)->shape(), i.dimensions());
}

absl::StatusOr<Shape> Tuple(const HloInstruction& i) { return InferTupleShape(OperandShapes(i)); }

absl::StatusOr<Shape> GetTupleElement(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferGetTupleElementShape(i.operand(0)->shape(), i.tuple_index());
}

absl::StatusOr<Shape> Bitcast(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferBitcastShape(i.operand(0)->shape(), i.shape());
}

absl::StatusOr<Shape> GetDimensionSize(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(i));
  return InferGetDimensionSizeShape(i.operand(0)->shape(), dimension);
}

absl::StatusOr<Shape> SetDimensionSize(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 2));
  ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(i));
  return InferSetDimensionSizeShape(i.operand(0)->shape(), i.operand(1)->shape(), dimension);
}

absl::StatusOr<Shape> Gather(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 2));
  ASSIGN_OR_RETURN(GatherDimensionNumbers dnums,
                   Required(i, i.attrs().gather_dimension_numbers, "dimension numbers"));
  return InferGatherShape(i.operand(0)->shape(), i.operand(1)->shape(), dnums,
                          i.attrs().gather_slice_sizes);
}

absl::StatusOr<Shape> Scatter(const HloInstruction& i) {
  ASSIGN_OR_RETURN(ScatterDimensionNumbers dnums,
                   Required(i, i.attrs().scatter_dimension_numbers, "dimension numbers"));
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, 1));
  return InferScatterShape(OperandShapes(i), called[0], dnums);
}

absl::StatusOr<Shape> Reduce(const HloInstruction& i) {
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, 1));
  return InferReduceShape(OperandShapes(i), i.dimensions(), called[0]);
}

absl::StatusOr<Shape> ReduceWindow(const HloInstruction& i) {
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, 1));
  return InferReduceWindowShape(OperandShapes(i), i.attrs().window.value_or(Window{}), called[0]);
}

absl::StatusOr<Shape> SelectAndScatter(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 3));
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, 2));
  return InferSelectAndScatterShape(i.operand(0)->shape(), called[0],
                                    i.attrs().window.value_or(Window{}), i.operand(1)->shape(),
                                    i.operand(2)->shape(), called[1]);
}

absl::StatusOr<Shape> Sort(const HloInstruction& i) {
  ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(i));
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, 1));
  return InferSortShape(OperandShapes(i), dimension, called[0]);
}

absl::StatusOr<Shape> TopK(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferTopKShape(i.operand(0)->shape(), i.attrs().k);
}

absl::StatusOr<Shape> Dot(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 2));
  const DotDimensionNumbers dnums = i.attrs().dot_dimension_numbers.value_or(DotDimensionNumbers{});
  if (!i.attrs().operand_precision.empty() && i.attrs().operand_precision.size() != 2) {
    return InvalidArg("dot: operand_precision must have 2 entries, has ",
                      i.attrs().operand_precision.size());
  }
  return InferDotShape(i.operand(0)->shape(), i.operand(1)->shape(), dnums, DeclaredArrayType(i));
}

absl::StatusOr<Shape> Convolution(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 2));
  ConvolutionConfig config;
  ASSIGN_OR_RETURN(config.dnums,
                   Required(i, i.attrs().convolution_dimension_numbers, "dim_labels"));
  config.window = i.attrs().window.value_or(Window{});
  config.feature_group_count = i.attrs().feature_group_count;
  config.batch_group_count = i.attrs().batch_group_count;
  config.preferred_element_type = DeclaredArrayType(i);
  return InferConvolutionShape(i.operand(0)->shape(), i.operand(1)->shape(), config);
}

absl::StatusOr<Shape> Fft(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  return InferFftShape(i.operand(0)->shape(), i.attrs().fft_type, i.attrs().fft_length);
}

absl::StatusOr<Shape> TriangularSolve(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 2));
  ASSIGN_OR_RETURN(TriangularSolveAttributes attributes, ReadTriangularSolveAttributes(i));
  return InferTriangularSolveShape(i.operand(0)->shape(), i.operand(1)->shape(),
                                   attributes.left_side);
}

absl::StatusOr<Shape> Cholesky(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  RETURN_IF_ERROR(ReadCholeskyAttributes(i).status());
  return InferCholeskyShape(i.operand(0)->shape());
}

absl::StatusOr<Shape> BatchNormTraining(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 3));
  return InferBatchNormTrainingShape(i.operand(0)->shape(), i.operand(1)->shape(),
                                     i.operand(2)->shape(), i.attrs().feature_index);
}

absl::StatusOr<Shape> BatchNormInference(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 5));
  return InferBatchNormInferenceShape(i.operand(0)->shape(), i.operand(1)->shape(),
                                      i.operand(2)->shape(), i.operand(3)->shape(),
                                      i.operand(4)->shape(), i.attrs().feature_index);
}

absl::StatusOr<Shape> BatchNormGrad(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 5));
  return InferBatchNormGradShape(i.operand(0)->shape(), i.operand(1)->shape(),
                                 i.operand(2)->shape(), i.operand(3)->shape(),
                                 i.operand(4)->shape(), i.attrs().feature_index);
}

absl::StatusOr<Shape> Call(const HloInstruction& i) {
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, 1));
  return InferCallShape(OperandShapes(i), called[0]);
}

absl::StatusOr<Shape> Scan(const HloInstruction& i) {
  ASSIGN_OR_RETURN(ScanAttributes scan, ReadScanAttributes(i));
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, 1));
  return InferScanShape(OperandShapes(i), scan.dimension, scan.num_carries, called[0]);
}

absl::StatusOr<Shape> While(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, 2));
  return InferWhileShape(called[0], called[1], i.operand(0)->shape());
}

absl::StatusOr<Shape> Conditional(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectMinOperandCount(i, 1));
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, -1));
  if (i.operand_count() != static_cast<int64_t>(called.size()) + 1) {
    return InvalidArg("conditional: expected ", called.size() + 1,
                      " operands (branch index + one per branch), got ", i.operand_count());
  }
  return InferConditionalShape(i.operand(0)->shape(), called, OperandShapes(i, 1));
}

absl::StatusOr<Shape> AllReduce(const HloInstruction& i) {
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, 1));
  return InferAllReduceShape(OperandShapes(i), called[0]);
}

// With empty replica_groups the group is "all replicas/partitions"; when the module config does
// not say how many there are (both counts 1), the declared shape tells the shard count.
bool GroupSizeUnknown(const HloInstruction& i) {
  const auto& groups = i.attrs().replica_groups;
  if (groups && (groups->iota || !groups->groups.empty())) return false;
  const HloModule* module = i.parent() ? i.parent()->parent() : nullptr;
  return module != nullptr && module->config().replica_count == 1 &&
         module->config().num_partitions == 1;
}

int64_t ShardCountFromShapes(const Shape& small, const Shape& big, int64_t dimension) {
  if (!small.IsArray() || !big.IsArray() || dimension < 0 || dimension >= small.rank() ||
      dimension >= big.rank() || small.dimensions(dimension) == 0) {
    return 1;
  }
  return std::max<int64_t>(1, big.dimensions(dimension) / small.dimensions(dimension));
}

absl::StatusOr<Shape> AllGather(const HloInstruction& i) {
  ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(i));
  if (GroupSizeUnknown(i) && i.operand_count() == 1) {
    return InferAllGatherShape(OperandShapes(i), dimension,
                               ShardCountFromShapes(i.operand(0)->shape(), i.shape(), dimension));
  }
  ASSIGN_OR_RETURN(int64_t shard_count, GroupSize(i, /*has_global_ids_flag=*/true));
  return InferAllGatherShape(OperandShapes(i), dimension, shard_count);
}

absl::StatusOr<Shape> ReduceScatter(const HloInstruction& i) {
  ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(i));
  ASSIGN_OR_RETURN(std::vector<ProgramShape> called, CalledShapes(i, 1));
  if (GroupSizeUnknown(i) && i.operand_count() == 1) {
    return InferReduceScatterShape(
        OperandShapes(i), dimension,
        ShardCountFromShapes(i.shape(), i.operand(0)->shape(), dimension), called[0]);
  }
  ASSIGN_OR_RETURN(int64_t shard_count, GroupSize(i, /*has_global_ids_flag=*/true));
  return InferReduceScatterShape(OperandShapes(i), dimension, shard_count, called[0]);
}

absl::StatusOr<Shape> AllToAll(const HloInstruction& i) {
  if (i.dimensions().empty()) return InferAllToAllShape(OperandShapes(i), std::nullopt, 1);
  ASSIGN_OR_RETURN(int64_t dimension, SingleDimension(i));
  ASSIGN_OR_RETURN(int64_t split_count, GroupSize(i, /*has_global_ids_flag=*/false));
  return InferAllToAllShape(OperandShapes(i), dimension, split_count);
}

absl::StatusOr<Shape> CollectivePermute(const HloInstruction& i) {
  return InferCollectivePermuteShape(OperandShapes(i), i.attrs().source_target_pairs);
}

// collective-broadcast, opt-barrier and domain pass their operand(s) through.
absl::StatusOr<Shape> PassThrough(const HloInstruction& i) {
  if (i.opcode() == HloOpcode::kCollectiveBroadcast) {
    RETURN_IF_ERROR(ExpectMinOperandCount(i, 1));
    // With a dynamic root the extra operand names the root; the result is the data operand.
    if (i.operand_count() == 2) return i.operand(0)->shape();
  } else {
    RETURN_IF_ERROR(ExpectOperandCount(i, 1));
  }
  if (i.operand_count() == 1) return i.operand(0)->shape();
  return InferTupleShape(OperandShapes(i));
}

absl::StatusOr<Shape> AfterAll(const HloInstruction& i) {
  return InferAfterAllShape(OperandShapes(i));
}

absl::StatusOr<Shape> AddDependency(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 2));
  return InferAddDependencyShape(i.operand(0)->shape(), i.operand(1)->shape());
}

absl::StatusOr<Shape> Rng(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 2));
  return InferRngShape(i.operand(0)->shape(), i.operand(1)->shape(), i.attrs().distribution,
                       i.shape());
}

absl::StatusOr<Shape> DeviceId(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 0));
  return Scalar(PrimitiveType::kU32);
}

absl::StatusOr<Shape> Constant(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 0));
  if (!i.attrs().literal.has_value()) return InvalidArg("constant: missing literal");
  return i.attrs().literal->shape();
}

absl::StatusOr<Shape> Parameter(const HloInstruction& i) {
  RETURN_IF_ERROR(ExpectOperandCount(i, 0));
  return i.shape();
}

const absl::flat_hash_map<HloOpcode, Adapter>& AdapterTable() {
  static const auto* table = new absl::flat_hash_map<HloOpcode, Adapter>({
      {HloOpcode::kAddDependency, &AddDependency},
      {HloOpcode::kAfterAll, &AfterAll},
      {HloOpcode::kAllGather, &AllGather},
      {HloOpcode::kAllReduce, &AllReduce},
      {HloOpcode::kAllToAll, &AllToAll},
      {HloOpcode::kBatchNormGrad, &BatchNormGrad},
      {HloOpcode::kBatchNormInference, &BatchNormInference},
      {HloOpcode::kBatchNormTraining, &BatchNormTraining},
      {HloOpcode::kBitcast, &Bitcast},
      {HloOpcode::kBitcastConvert, &BitcastConvert},
      {HloOpcode::kBroadcast, &Broadcast},
      {HloOpcode::kCall, &Call},
      {HloOpcode::kCholesky, &Cholesky},
      {HloOpcode::kClamp, &Clamp},
      {HloOpcode::kCollectiveBroadcast, &PassThrough},
      {HloOpcode::kCollectivePermute, &CollectivePermute},
      {HloOpcode::kCompare, &Compare},
      {HloOpcode::kConcatenate, &Concatenate},
      {HloOpcode::kConditional, &Conditional},
      {HloOpcode::kConstant, &Constant},
      {HloOpcode::kConvert, &Convert},
      {HloOpcode::kConvolution, &Convolution},
      {HloOpcode::kDomain, &PassThrough},
      {HloOpcode::kDot, &Dot},
      {HloOpcode::kDynamicReshape, &DynamicReshape},
      {HloOpcode::kDynamicSlice, &DynamicSlice},
      {HloOpcode::kDynamicUpdateSlice, &DynamicUpdateSlice},
      {HloOpcode::kFft, &Fft},
      {HloOpcode::kScan, &Scan},
      {HloOpcode::kCustomCall, &InferCustomCallShape},
      {HloOpcode::kGather, &Gather},
      {HloOpcode::kGetDimensionSize, &GetDimensionSize},
      {HloOpcode::kGetTupleElement, &GetTupleElement},
      {HloOpcode::kIota, &Iota},
      {HloOpcode::kMap, &Map},
      {HloOpcode::kOptimizationBarrier, &PassThrough},
      {HloOpcode::kPad, &Pad},
      {HloOpcode::kParameter, &Parameter},
      {HloOpcode::kPartitionId, &DeviceId},
      {HloOpcode::kReduce, &Reduce},
      {HloOpcode::kReducePrecision, &ReducePrecision},
      {HloOpcode::kReduceScatter, &ReduceScatter},
      {HloOpcode::kReduceWindow, &ReduceWindow},
      {HloOpcode::kReplicaId, &DeviceId},
      {HloOpcode::kReshape, &Reshape},
      {HloOpcode::kReverse, &Reverse},
      {HloOpcode::kRng, &Rng},
      {HloOpcode::kScatter, &Scatter},
      {HloOpcode::kSelect, &Select},
      {HloOpcode::kSelectAndScatter, &SelectAndScatter},
      {HloOpcode::kSetDimensionSize, &SetDimensionSize},
      {HloOpcode::kSlice, &Slice},
      {HloOpcode::kSort, &Sort},
      {HloOpcode::kStochasticConvert, &StochasticConvert},
      {HloOpcode::kTopK, &TopK},
      {HloOpcode::kTranspose, &Transpose},
      {HloOpcode::kTriangularSolve, &TriangularSolve},
      {HloOpcode::kTuple, &Tuple},
      {HloOpcode::kWhile, &While},
  });
  return *table;
}

void StripLayouts(Shape* shape) {
  shape->clear_layout();
  if (!shape->IsTuple()) return;
  for (Shape& element : *shape->mutable_tuple_shapes()) StripLayouts(&element);
}

Adapter FindAdapter(HloOpcode opcode) {
  if (IsElementwiseUnary(opcode)) return &Unary;
  if (IsElementwiseBinary(opcode)) return &Binary;
  auto it = AdapterTable().find(opcode);
  return it == AdapterTable().end() ? nullptr : it->second;
}

}  // namespace

absl::StatusOr<Shape> InferShape(const HloInstruction& instr) {
  Adapter adapter = FindAdapter(instr.opcode());
  if (adapter == nullptr) {
    return absl::UnimplementedError(
        shape_inference_internal::Cat("shape inference is not implemented for ", OpName(instr)));
  }
  for (int64_t k = 0; k < instr.operand_count(); ++k) {
    if (instr.operand(k) == nullptr) return InvalidArg(OpName(instr), ": operand ", k, " is null");
  }
  RETURN_IF_ERROR(CheckReplicaGroupIds(instr));
  ASSIGN_OR_RETURN(Shape shape, adapter(instr));
  StripLayouts(&shape);
  return shape;
}

}  // namespace hlo
