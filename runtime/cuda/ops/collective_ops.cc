// all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute, partition-id and
// replica-id. Groups come from collective_grouping.h; the transfer itself from the executor's
// Collectives (NCCL or device copies). Collectives work on contiguous chunks, so a dimension
// that is not the leading non-trivial one is packed into (or unpacked from) a scratch buffer
// of [group size, chunk] with a strided copy.
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/collective_groups.h"
#include "runtime/common/strided_index.h"
#include "runtime/cuda/op_registry.h"
#include "runtime/cuda/ops/op_util.h"

namespace runtime {
namespace cuda {
namespace {

using hlo::HloOpcode;

absl::StatusOr<Collectives*> Layer(OpContext& ctx) {
  if (ctx.executor.collectives() == nullptr) {
    return absl::FailedPreconditionError("no collective layer: run through RunOnCudaDevices");
  }
  return ctx.executor.collectives();
}

absl::StatusOr<CollectiveOp> MakeOp(OpContext& ctx, const DeviceArray& array, bool grouped) {
  CollectiveOp op;
  op.instr = &ctx.instr;
  ASSIGN_OR_RETURN(op.dtype, DTypeOf(array.shape.element_type()));
  if (grouped) {
    ASSIGN_OR_RETURN(op.grouping, GroupingOf(ctx.instr, ctx.executor.context()));
    op.members = op.grouping.groups[op.grouping.group];
  } else {
    op.members = PermuteGroup(ctx.instr, ctx.executor.context());
  }
  op.sequence = ctx.executor.NextSequence(ctx.instr);
  op.device = GlobalDeviceId(ctx.executor.context());
  return op;
}

absl::StatusOr<ReduceKind> ReduceKindOf(OpContext& ctx, int dtype) {
  ASSIGN_OR_RETURN(int op, ReducerOp(*ctx.instr.to_apply()));
  switch (op) {
    case spmd_cuda::kAdd: return ReduceKind::kSum;
    case spmd_cuda::kMul: return ReduceKind::kProd;
    case spmd_cuda::kMax: return ReduceKind::kMax;
    case spmd_cuda::kMin: return ReduceKind::kMin;
    default:
      if (dtype == spmd_cuda::kPred) return op == spmd_cuda::kAnd ? ReduceKind::kMin : ReduceKind::kMax;
      return absl::UnimplementedError("bitwise and/or all-reduce of integers is not supported");
  }
}

// True when splitting `shape` along `dim` gives contiguous chunks (all earlier dims are 1).
bool Contiguous(const hlo::Shape& shape, int64_t dim) {
  for (int64_t d = 0; d < dim; ++d) {
    if (shape.dimensions(d) != 1) return false;
  }
  return true;
}

// Copies between `full` (split along `dim` into `g` chunks) and packed [g, chunk]; `pack`
// chooses the direction.
absl::Status Repack(OpContext& ctx, const DeviceArray& full, int64_t dim, int64_t g, void* packed,
                    bool pack) {
  std::vector<int64_t> chunk = full.shape.dimensions();
  chunk[dim] /= g;
  const std::vector<int64_t> full_strides = RowMajorStrides(full.shape.dimensions());
  int64_t chunk_elems = 1;
  for (int64_t c : chunk) chunk_elems *= c;
  CopySpec spec;
  spec.dims = chunk;
  spec.dims.insert(spec.dims.begin(), g);
  std::vector<int64_t> packed_strides = RowMajorStrides(chunk);
  packed_strides.insert(packed_strides.begin(), chunk_elems);
  std::vector<int64_t> strided = full_strides;
  strided.insert(strided.begin(), chunk[dim] * full_strides[dim]);
  spec.src_strides = pack ? strided : packed_strides;
  spec.dst_strides = pack ? packed_strides : strided;
  const int width = static_cast<int>(ElementBytes(full.shape));
  return pack ? LaunchCopy(ctx.device(), spec, width, full.data, packed)
              : LaunchCopy(ctx.device(), spec, width, packed, full.data);
}

absl::Status HandleAllReduce(OpContext& ctx) {
  ASSIGN_OR_RETURN(Collectives * layer, Layer(ctx));
  for (size_t i = 0; i < ctx.operands.size(); ++i) {
    ASSIGN_OR_RETURN(CollectiveOp op, MakeOp(ctx, ctx.operands[i], true));
    ASSIGN_OR_RETURN(op.reduce, ReduceKindOf(ctx, op.dtype));
    RETURN_IF_ERROR(layer->AllReduce(op, ctx.operands[i].data, ctx.outputs[i].data,
                                     ctx.operands[i].shape.num_elements()));
  }
  return absl::OkStatus();
}

// all-gather (`gather`) and reduce-scatter, operand by operand. The full-size side (the
// gathered output, the scattered input) is repacked through scratch when `dimension` is not
// its leading non-trivial dimension.
absl::Status GatherOrScatter(OpContext& ctx, bool gather) {
  ASSIGN_OR_RETURN(Collectives * layer, Layer(ctx));
  const int64_t dim = ctx.instr.attrs().dimensions.at(0);
  for (size_t i = 0; i < ctx.operands.size(); ++i) {
    const DeviceArray& in = ctx.operands[i];
    const DeviceArray& out = ctx.outputs[i];
    const DeviceArray& full = gather ? out : in;
    ASSIGN_OR_RETURN(CollectiveOp op, MakeOp(ctx, in, true));
    if (!gather) {
      ASSIGN_OR_RETURN(op.reduce, ReduceKindOf(ctx, op.dtype));
    }
    const int64_t count = (gather ? in : out).shape.num_elements();
    auto run = [&](const void* src, void* dst) {
      return gather ? layer->AllGather(op, src, dst, count)
                    : layer->ReduceScatter(op, src, dst, count);
    };
    if (Contiguous(full.shape, dim)) {
      RETURN_IF_ERROR(run(in.data, out.data));
      continue;
    }
    ASSIGN_OR_RETURN(DeviceBuffer packed, ctx.executor.Scratch(full.shape.byte_size()));
    if (gather) {
      RETURN_IF_ERROR(run(in.data, packed.data()));
      RETURN_IF_ERROR(Repack(ctx, out, dim, op.grouping.size(), packed.data(), /*pack=*/false));
    } else {
      RETURN_IF_ERROR(Repack(ctx, in, dim, op.grouping.size(), packed.data(), /*pack=*/true));
      RETURN_IF_ERROR(run(packed.data(), out.data));
    }
  }
  return absl::OkStatus();
}

absl::Status HandleAllGather(OpContext& ctx) { return GatherOrScatter(ctx, /*gather=*/true); }
absl::Status HandleReduceScatter(OpContext& ctx) { return GatherOrScatter(ctx, /*gather=*/false); }

absl::Status HandleAllToAll(OpContext& ctx) {
  ASSIGN_OR_RETURN(Collectives * layer, Layer(ctx));
  ASSIGN_OR_RETURN(CollectiveOp op, MakeOp(ctx, ctx.operands[0], true));
  const int64_t g = op.grouping.size();
  if (ctx.instr.attrs().dimensions.empty()) {  // Tuple form: operand j goes to member j.
    if (static_cast<int64_t>(ctx.operands.size()) != g) {
      return absl::InvalidArgumentError("tuple all-to-all needs one operand per group member");
    }
    const int64_t bytes = ctx.operands[0].shape.byte_size();
    ASSIGN_OR_RETURN(DeviceBuffer in, ctx.executor.Scratch(bytes * g));
    ASSIGN_OR_RETURN(DeviceBuffer out, ctx.executor.Scratch(bytes * g));
    for (int64_t j = 0; j < g; ++j) {
      RETURN_IF_ERROR(ctx.device().CopyOnDevice(static_cast<char*>(in.data()) + j * bytes,
                                                ctx.operands[j].data, bytes));
    }
    RETURN_IF_ERROR(layer->AllToAll(op, in.data(), out.data(), ctx.operands[0].shape.num_elements()));
    for (int64_t j = 0; j < g; ++j) {
      RETURN_IF_ERROR(ctx.device().CopyOnDevice(
          ctx.outputs[j].data, static_cast<char*>(out.data()) + j * bytes, bytes));
    }
    return absl::OkStatus();
  }
  const int64_t dim = ctx.instr.attrs().dimensions[0];
  const DeviceArray& in = ctx.operands[0];
  const DeviceArray& out = ctx.outputs[0];
  const int64_t count = in.shape.num_elements() / g;
  if (Contiguous(in.shape, dim)) return layer->AllToAll(op, in.data, out.data, count);
  ASSIGN_OR_RETURN(DeviceBuffer packed_in, ctx.executor.Scratch(in.shape.byte_size()));
  ASSIGN_OR_RETURN(DeviceBuffer packed_out, ctx.executor.Scratch(out.shape.byte_size()));
  RETURN_IF_ERROR(Repack(ctx, in, dim, g, packed_in.data(), /*pack=*/true));
  RETURN_IF_ERROR(layer->AllToAll(op, packed_in.data(), packed_out.data(), count));
  return Repack(ctx, out, dim, g, packed_out.data(), /*pack=*/false);
}

absl::Status HandleCollectivePermute(OpContext& ctx) {
  ASSIGN_OR_RETURN(Collectives * layer, Layer(ctx));
  if (ctx.operands.size() != 1) {
    return absl::UnimplementedError(
        "combined or in-place collective-permute is not supported by the CUDA executor");
  }
  const DeviceContext& me = ctx.executor.context();
  ASSIGN_OR_RETURN(int64_t source, PermuteSourceOf(ctx.instr, me));  // Checks the pairs.
  ASSIGN_OR_RETURN(CollectiveOp op, MakeOp(ctx, ctx.operands[0], false));
  std::vector<int64_t> targets;
  for (int64_t d = 0; d < me.num_partitions * me.num_replicas; ++d) {
    DeviceContext other = me;
    other.partition_id = d % me.num_partitions;
    other.replica_id = d / me.num_partitions;
    ASSIGN_OR_RETURN(int64_t from, PermuteSourceOf(ctx.instr, other));
    if (from == op.device) targets.push_back(d);
  }
  if (source < 0) RETURN_IF_ERROR(FillWithZeros(ctx.device(), ctx.outputs[0]));
  return layer->CollectivePermute(op, ctx.operands[0].data, ctx.outputs[0].data,
                                  ctx.operands[0].shape.num_elements(), targets, source);
}

absl::Status HandleDeviceId(OpContext& ctx) {
  const DeviceContext& me = ctx.executor.context();
  const uint32_t id = static_cast<uint32_t>(
      ctx.instr.opcode() == HloOpcode::kPartitionId ? me.partition_id : me.replica_id);
  return ctx.device().CopyToDevice(ctx.outputs[0].data, &id, sizeof(id));
}

}  // namespace

void RegisterCollectiveOps(CudaOpTable& table) {
  table[HloOpcode::kAllReduce] = HandleAllReduce;
  table[HloOpcode::kAllGather] = HandleAllGather;
  table[HloOpcode::kReduceScatter] = HandleReduceScatter;
  table[HloOpcode::kAllToAll] = HandleAllToAll;
  table[HloOpcode::kCollectivePermute] = HandleCollectivePermute;
  table[HloOpcode::kPartitionId] = HandleDeviceId;
  table[HloOpcode::kReplicaId] = HandleDeviceId;
}

}  // namespace cuda
}  // namespace runtime
