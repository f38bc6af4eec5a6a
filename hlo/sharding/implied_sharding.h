// The shardings an unannotated instruction implies without any op rule, which sharding
// propagation (spmd/propagation) and the partitioner (spmd/partitioner) both need and must agree
// on:
//   * manual regions: an instruction consuming a {manual} value is in the region (XLA's
//     ShardingPropagation rule: {manual} flows to every user but SPMDShardToFullShape, which
//     leaves the region). A conditional's branch arguments count like its index: the branches
//     run on each device's own manual value, so the results are per device even when the
//     index is the same everywhere;
//   * manual conversions: which sharding of the global side makes each device's shard its
//     manual value (ConversionGlobalSharding);
//   * tuple pass-through: a tuple or get-tuple-element moves no data, so its leaves keep their
//     operands' leaf shardings (replicating them would gather every element).
//
//   %m = f32[4] custom-call(%x), custom_call_target="SPMDFullToShardShape", sharding={manual}
//   %c = f32[4] conditional(s32[] %i, %m, %m), ...      -> {manual} (ManualFlowsToResults)
//   %t = (f32[4], f32[8]) tuple(%c, %y)                  -> {{manual}, %y's} (PassThroughSharding)
#ifndef HLO_SHARDING_IMPLIED_SHARDING_H_
#define HLO_SHARDING_IMPLIED_SHARDING_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"

namespace hlo {

// Whether a {manual} operand puts unannotated `instr`'s results in the manual region: every op
// but SPMDShardToFullShape, with every operand (a conditional's branch arguments as well as its
// index).
bool ManualFlowsToResults(const HloInstruction& instr);

// Whether `instr` is a manual conversion: SPMDFullToShardShape or SPMDShardToFullShape.
bool IsManualConversion(const HloInstruction& instr);

// {manual} for every leaf of `shape`.
HloSharding ManualOver(const Shape& shape);

// The sharding the global side of manual conversion `conversion` (SPMDFullToShardShape's
// operand, SPMDShardToFullShape's result), sharded `global`, has for each device's shard to be
// its manual value of shape `device_shape`: ManualConversionSharding
// (sharding_transforms.h) over the conversion's `unspecified_dims`, the dims it leaves open to
// propagation (which may split them further on the global side). The partitioner and the CPU
// executor's reference both read conversions through it.
absl::StatusOr<HloSharding> ConversionGlobalSharding(const HloInstruction& conversion,
                                                     const HloSharding& global,
                                                     const Shape& device_shape);

// The position of tuple element `index`'s first leaf among the leaves of `tuple` (the leaves
// of the elements before it).
int64_t ElementLeafOffset(const Shape& tuple, int64_t index);

// The sharding of `shape` whose leaves are `leaves` (one per leaf, in order): the leaf itself
// for an array, a tuple sharding for a tuple; an error when they do not fit.
absl::StatusOr<HloSharding> FromLeaves(const Shape& shape, std::vector<HloSharding> leaves);

// The sharding an unannotated tuple or get-tuple-element passes through from its operands'
// leaf shardings (`operand_leaves`: every operand's leaves, in operand order); nullopt when they
// do not fit its operands' shapes. REQUIRES: `instr` is a tuple or get-tuple-element.
std::optional<HloSharding> PassThroughSharding(const HloInstruction& instr,
                                               std::vector<HloSharding> operand_leaves);

}  // namespace hlo

#endif  // HLO_SHARDING_IMPLIED_SHARDING_H_
