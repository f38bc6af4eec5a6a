#include "hlo/sharding/implied_sharding.h"

#include <utility>

#include "hlo/ir/custom_call_config.h"
#include "hlo/sharding/sharding_transforms.h"

namespace hlo {

bool ManualFlowsToResults(const HloInstruction& instr) {
  return !(instr.opcode() == HloOpcode::kCustomCall &&
           instr.attrs().custom_call_target == "SPMDShardToFullShape");
}

bool IsManualConversion(const HloInstruction& instr) {
  const std::string& target = instr.attrs().custom_call_target;
  return instr.opcode() == HloOpcode::kCustomCall &&
         (target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape");
}

HloSharding ManualOver(const Shape& shape) {
  return shape.IsTuple() ? HloSharding::SingleTuple(shape, HloSharding::Manual())
                         : HloSharding::Manual();
}

int64_t ElementLeafOffset(const Shape& tuple, int64_t index) {
  int64_t offset = 0;
  for (int64_t i = 0; i < index && i < tuple.tuple_shapes_size(); ++i) {
    offset += tuple.tuple_shapes(i).leaf_count();
  }
  return offset;
}

absl::StatusOr<HloSharding> FromLeaves(const Shape& shape, std::vector<HloSharding> leaves) {
  if (shape.IsTuple()) return HloSharding::Tuple(shape, std::move(leaves));
  if (leaves.size() != 1) {
    return absl::InvalidArgumentError("a non-tuple value takes exactly one leaf sharding");
  }
  return std::move(leaves.front());
}

std::optional<HloSharding> PassThroughSharding(const HloInstruction& instr,
                                               std::vector<HloSharding> operand_leaves) {
  std::vector<HloSharding> leaves = std::move(operand_leaves);
  if (instr.opcode() == HloOpcode::kGetTupleElement) {
    // The leaves of element `index` of the operand's tuple.
    const Shape& tuple = instr.operand(0)->shape();
    const int64_t index = instr.tuple_index();
    if (!tuple.IsTuple() || index >= static_cast<int64_t>(tuple.tuple_shapes().size())) {
      return std::nullopt;
    }
    const size_t first = ElementLeafOffset(tuple, index);
    const size_t count = tuple.tuple_shapes()[index].leaf_count();
    if (first + count > leaves.size()) return std::nullopt;
    leaves = std::vector<HloSharding>(leaves.begin() + first, leaves.begin() + first + count);
  }
  absl::StatusOr<HloSharding> sharding = FromLeaves(instr.shape(), std::move(leaves));
  if (!sharding.ok()) return std::nullopt;
  return *std::move(sharding);
}

absl::StatusOr<HloSharding> ConversionGlobalSharding(const HloInstruction& conversion,
                                                     const HloSharding& global,
                                                     const Shape& device_shape) {
  const bool to_shard = conversion.attrs().custom_call_target == "SPMDFullToShardShape";
  if (conversion.operand_count() != 1) return global;
  const Shape& global_shape = to_shard ? conversion.operand(0)->shape() : conversion.shape();
  const std::vector<int64_t> open =
      ParseUnspecifiedDims(conversion.attrs().backend_config).value_or(std::vector<int64_t>{});
  return ManualConversionSharding(global, global_shape, device_shape, open);
}

}  // namespace hlo
