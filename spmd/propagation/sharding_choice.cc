// Proposals are sorted by tile count (stable, so equal counts keep the caller's order) and
// folded into a running choice; among conflicting proposals the cheaper wins, and on equal
// cost the one seen first (the running choice, so `current` before any proposal). Costs are
// computed only on conflicts, so the common case (one proposal, or agreeing proposals) never
// consults the reshard planner.
#include "spmd/propagation/sharding_choice.h"

#include <algorithm>

#include "hlo/sharding/sharding_transforms.h"
#include "hlo/strings.h"
#include "spmd/propagation/factor_projection.h"

namespace spmd {

using hlo::HloSharding;

std::optional<Choice> ChooseSharding(const std::optional<HloSharding>& current,
                                     std::vector<Proposal> proposals,
                                     absl::FunctionRef<double(const HloSharding&)> cost,
                                     bool may_move_sideways) {
  if (proposals.size() > 1) {
    std::stable_sort(proposals.begin(), proposals.end(),
                     [](const Proposal& a, const Proposal& b) {
                       return DataTiles(a.sharding) > DataTiles(b.sharding);
                     });
  }
  const int64_t current_tiles = current ? DataTiles(*current) : 0;
  std::optional<Choice> best;
  if (current) best = Choice{*current, {}, ""};
  for (Proposal& p : proposals) {
    const int64_t tiles = DataTiles(p.sharding);
    if (!best) {
      best = Choice{std::move(p.sharding), {p.source}, "from one source"};
      continue;
    }
    if (p.sharding == best->sharding) continue;
    absl::StatusOr<HloSharding> merged = hlo::MergeShardings(best->sharding, p.sharding);
    if (merged.ok()) {
      if (DataTiles(*merged) > DataTiles(best->sharding)) {
        best->sharding = *std::move(merged);
        best->sources.push_back(p.source);
        best->reason = best->sources.size() > 1 ? "merged" : "refined";
      }
      continue;
    }
    if (tiles < current_tiles || tiles < DataTiles(best->sharding)) continue;
    if (tiles == current_tiles && !may_move_sideways) continue;
    const double keep = cost(best->sharding);
    const double take = cost(p.sharding);
    if (take < keep) {
      best = Choice{std::move(p.sharding),
                    {p.source},
                    hlo::StrCat("chose it (cost ", take, " us) over ", best->sharding.ToString(),
                                " (cost ", keep, " us)")};
    } else {
      best->reason = hlo::StrCat(best->reason, best->reason.empty() ? "" : "; ", "kept over ",
                                 p.sharding.ToString(), " (cost ", keep, " us vs ", take, " us)");
    }
  }
  if (!best || best->sources.empty()) return std::nullopt;
  if (DataTiles(best->sharding) > current_tiles) return best;
  // A sideways move: a conflicting proposal with as many tiles, strictly cheaper than `current`.
  if (current && best->sharding != *current) return best;
  return std::nullopt;
}

}  // namespace spmd
