// Combining the shardings proposed for one value: merge what is compatible, and where
// proposals conflict keep the one with the lower estimated cost, saying why.
//
//   current none, proposals {devices=[2,1,2]<=[4] last_tile_dim_replicate} and
//   {devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}  =>  {devices=[2,2]<=[4]}, "merged"
//   current none, proposals [2,1] and [1,2] on 2 devices    =>  the cheaper of the two,
//   "chose {..} (cost 3.1 us) over {..} (cost 9.7 us)"
//   current [1,2], proposal [2,1], may_move_sideways        =>  [2,1] only if it costs less
#ifndef SPMD_PROPAGATION_SHARDING_CHOICE_H_
#define SPMD_PROPAGATION_SHARDING_CHOICE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "hlo/sharding/hlo_sharding.h"

namespace spmd {

// A sharding proposed for a value, and where it came from (an index the caller interprets).
struct Proposal {
  hlo::HloSharding sharding;
  int64_t source = -1;
};

// The outcome: the new sharding, the proposals it was built from, and why.
struct Choice {
  hlo::HloSharding sharding;
  std::vector<int64_t> sources;
  std::string reason;
};

// Folds `proposals` (most tiles first) into `current`: a compatible proposal merges
// (hlo::MergeShardings) when that adds tiles; a conflicting one replaces the running choice
// only when it has at least as many tiles and a strictly lower `cost`. It replaces `current`
// when it has more tiles, or, if `may_move_sideways`, as many (a sideways move: `current` was
// an earlier, costlier choice between equally specific shardings). Returns the choice when it
// has more tiles than `current`, or differs from it by a sideways move (or `current` is
// empty); nullopt when nothing improves.
std::optional<Choice> ChooseSharding(const std::optional<hlo::HloSharding>& current,
                                     std::vector<Proposal> proposals,
                                     absl::FunctionRef<double(const hlo::HloSharding&)> cost,
                                     bool may_move_sideways = false);

}  // namespace spmd

#endif  // SPMD_PROPAGATION_SHARDING_CHOICE_H_
