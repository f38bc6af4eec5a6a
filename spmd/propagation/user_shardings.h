// The user's intent, read off the module before propagation: which value classes start with a
// sharding, and how firmly it is held.
//
//   kFixed      an annotation (any instruction's `sharding=`, a Sharding custom-call without
//               unspecified_dims, an entry parameter or root). Never changed.
//   kRefinable  a Sharding custom-call with `unspecified_dims=[...]` in its backend_config: the
//               listed dims may still be split by propagation, the others keep the annotation.
//   kFree       an entry parameter or root leaf whose allow_spmd_sharding_propagation_to_
//               parameters / _to_output flag is true: a starting point propagation may refine.
// An entry parameter or root leaf with no sharding is held replicated (XLA's rule: the
// program's interface is the user's) unless its flag is true, which leaves it to propagation.
// {unknown} annotations (e.g. `{unknown shard_as 0}`) give no sharding, only group membership.
#ifndef SPMD_PROPAGATION_USER_SHARDINGS_H_
#define SPMD_PROPAGATION_USER_SHARDINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/propagation/value_classes.h"

namespace spmd {

enum class Hold { kFree, kRefinable, kFixed };

struct UserSharding {
  hlo::HloSharding sharding;
  Hold hold = Hold::kFixed;
  // kRefinable: open_dims[d] says dimension d may still be split.
  std::vector<bool> open_dims;
  const hlo::HloInstruction* source = nullptr;  // The annotated instruction.
  // An unannotated entry root, held replicated by default: a manual region reaching it may
  // still claim it (a manual value cannot become replicated without SPMDShardToFullShape).
  bool default_root = false;
};

// One entry per class of `classes`: the strongest user sharding among its leaves (the first in
// module order among equals), or nullopt.
std::vector<std::optional<UserSharding>> CollectUserShardings(const hlo::HloModule& module,
                                                              const ValueClasses& classes);

// Fails when a while loop's annotations place it on two devices: among the while's own
// sharding and the shardings in its body, every one that puts the whole value on a single
// device ({maximal device=N}, or a tuple all on N) must name the same device (XLA rejects these
// loops too). The message names the loop and two instructions that disagree.
absl::Status CheckWhileDeviceAssignments(const hlo::HloModule& module);

// Whether the entry root leaf `leaf` / entry parameter `number` may take a propagated
// sharding over its own: its flag in `flags` (one flag for all when there is one) is true.
bool PropagationAllowed(const std::vector<bool>& flags, int64_t index);

}  // namespace spmd

#endif  // SPMD_PROPAGATION_USER_SHARDINGS_H_
