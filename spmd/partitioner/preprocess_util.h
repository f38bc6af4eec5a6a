// Helpers shared by the rewrites that run before partitioning (SpmdPartitioner::Preprocess:
// conv_as_dot.h, sort_slices.h): names no instruction of the module has, and one new
// instruction carrying the rewritten instruction's metadata and a sharding.
#ifndef SPMD_PARTITIONER_PREPROCESS_UTIL_H_
#define SPMD_PARTITIONER_PREPROCESS_UTIL_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/sharding/hlo_sharding.h"

namespace spmd {

// Names unused in a module: `base`, else `base.1`, `base.2`, ...
class FreshNames {
 public:
  explicit FreshNames(const hlo::HloModule& module);
  std::string Fresh(const std::string& base);

 private:
  absl::flat_hash_set<std::string> taken_;
};

// The instructions of `computation` that order others (control predecessors): their successors
// hold pointers to them, so a rewrite never removes them.
absl::flat_hash_set<const hlo::HloInstruction*> OrderingInstructions(
    const hlo::HloComputation& computation);

// Adds `opcode` over `operands` with `shape` to `computation`, named `name`, with `like`'s
// metadata and `sharding` when there is one.
hlo::HloInstruction* AddLike(hlo::HloComputation& computation, hlo::HloOpcode opcode,
                             hlo::Shape shape, std::vector<hlo::HloInstruction*> operands,
                             const hlo::HloInstruction& like,
                             const std::optional<hlo::HloSharding>& sharding,
                             const std::string& name);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_PREPROCESS_UTIL_H_
