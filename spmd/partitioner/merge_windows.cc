#include "spmd/partitioner/merge_windows.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/status_macros.h"
#include "spmd/partitioner/preprocess_util.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// Whether `instr` is used once, by `user` alone, and nothing orders it.
bool OnlyFeeds(const HloInstruction& instr, const HloInstruction& user) {
  return instr.users().size() == 1 && instr.users()[0] == &user &&
         instr.control_predecessors().empty() && instr.parent()->root_instruction() != &instr;
}

bool UnitStrides(const HloInstruction& slice) {
  for (const hlo::SliceDimension& d : slice.attrs().slice_dimensions) {
    if (d.stride != 1) return false;
  }
  return true;
}

bool EdgeOnly(const hlo::PaddingConfig& config) {
  for (const hlo::PaddingDimension& d : config.dimensions) {
    if (d.interior_padding != 0) return false;
  }
  return true;
}

// The pad `slice` reads through copies that feed nothing else, and that chain (the pad last);
// empty when there is none.
std::vector<HloInstruction*> PadChain(HloInstruction& slice) {
  std::vector<HloInstruction*> chain;
  HloInstruction* user = &slice;
  HloInstruction* value = slice.operand(0);
  while (OnlyFeeds(*value, *user)) {
    chain.push_back(value);
    if (value->opcode() == HloOpcode::kPad) return chain;
    if (value->opcode() != HloOpcode::kCopy) break;
    user = value;
    value = value->operand(0);
  }
  return {};
}

// pad(x) sliced: the slice's [start, limit) of the padded dim, as edge padding of x.
hlo::PaddingConfig Merged(const hlo::PaddingConfig& pad, const HloInstruction& slice,
                          const HloInstruction& padded) {
  hlo::PaddingConfig merged = pad;
  for (size_t d = 0; d < merged.dimensions.size(); ++d) {
    const hlo::SliceDimension& s = slice.attrs().slice_dimensions[d];
    hlo::PaddingDimension& p = merged.dimensions[d];
    p.edge_padding_low -= s.start;
    p.edge_padding_high -= padded.shape().dimensions(static_cast<int64_t>(d)) - s.limit;
  }
  return merged;
}

absl::Status MergeOne(HloInstruction& slice, const std::vector<HloInstruction*>& chain) {
  HloInstruction& pad = *chain.back();
  auto merged =
      HloInstruction::Create(HloOpcode::kPad, slice.shape(), {pad.operand(0), pad.operand(1)});
  merged->mutable_attrs()->padding_config = Merged(*pad.attrs().padding_config, slice, pad);
  merged->mutable_attrs()->metadata = slice.attrs().metadata;
  if (slice.has_sharding()) merged->set_sharding(slice.sharding());
  hlo::HloComputation& computation = *slice.parent();
  HloInstruction* added = computation.AddInstruction(std::move(merged));
  slice.ReplaceAllUsesWith(added);
  if (computation.root_instruction() == &slice) computation.set_root_instruction(added);
  const std::string name = slice.name();
  RETURN_IF_ERROR(computation.RemoveInstruction(&slice));
  for (HloInstruction* dead : chain) RETURN_IF_ERROR(computation.RemoveInstruction(dead));
  added->set_name(name);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> MergeSlicesOfPads(hlo::HloComputation& computation) {
  const absl::flat_hash_set<const HloInstruction*> ordering = OrderingInstructions(computation);
  std::vector<std::pair<HloInstruction*, std::vector<HloInstruction*>>> merges;
  for (const std::unique_ptr<HloInstruction>& instr : computation.instructions()) {
    if (instr->opcode() != HloOpcode::kSlice || !instr->shape().IsArray() ||
        !instr->control_predecessors().empty() || ordering.contains(instr.get()) ||
        !UnitStrides(*instr)) {
      continue;
    }
    std::vector<HloInstruction*> chain = PadChain(*instr);
    if (chain.empty() || !chain.back()->attrs().padding_config.has_value() ||
        !EdgeOnly(*chain.back()->attrs().padding_config) ||
        std::any_of(chain.begin(), chain.end(),
                    [&](const HloInstruction* c) { return ordering.contains(c); })) {
      continue;
    }
    merges.push_back({instr.get(), std::move(chain)});
  }
  std::vector<std::string> names;
  for (auto& [slice, chain] : merges) {
    names.push_back(slice->name());
    RETURN_IF_ERROR(MergeOne(*slice, chain));
  }
  return names;
}

}  // namespace spmd
