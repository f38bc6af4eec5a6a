// Two-phase rendezvous: arrive (publish the input) -> compute -> finish; each group has its own
// slot, erased by the group's last member to leave.
#include "runtime/cpu/collective_hub.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "hlo/strings.h"

namespace runtime {
namespace {

// `group`'s devices in increasing order; every device when it is empty.
std::vector<int64_t> SortedMembers(absl::Span<const int64_t> group, int64_t num_devices) {
  std::vector<int64_t> members(group.begin(), group.end());
  if (members.empty()) {
    members.resize(num_devices);
    std::iota(members.begin(), members.end(), 0);
  }
  std::sort(members.begin(), members.end());
  return members;
}

}  // namespace

void CollectiveHub::Abort(const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_.ok()) aborted_ = status;
  cv_.notify_all();
}

absl::Status CollectiveHub::Rendezvous(
    const CollectiveKey& key, int64_t device, std::string_view name, const hlo::Literal* input,
    const std::function<absl::Status(absl::Span<const hlo::Literal* const>)>& compute,
    absl::Span<const int64_t> group) {
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeout_seconds_));
  const std::vector<int64_t> members = SortedMembers(group, num_devices_);
  const bool member_ok = std::binary_search(members.begin(), members.end(), device) &&
                         members.front() >= 0 && members.back() < num_devices_ &&
                         std::adjacent_find(members.begin(), members.end()) == members.end();
  std::unique_lock<std::mutex> lock(mu_);
  if (!aborted_.ok()) return aborted_;
  const std::pair<CollectiveKey, int64_t> slot_key(key, members.front());
  Slot& slot = slots_[slot_key];
  if (slot.inputs.empty()) {
    slot.inputs.assign(num_devices_, nullptr);
    slot.expected = static_cast<int64_t>(members.size());
  }
  if (!member_ok || slot.expected != static_cast<int64_t>(members.size()) ||
      slot.inputs[device] != nullptr) {
    return absl::InternalError(hlo::StrCat("collective ", name, ": bad device ", device));
  }
  slot.inputs[device] = input;
  ++slot.arrived;
  cv_.notify_all();
  auto wait_for = [&](auto done, std::string_view phase) -> absl::Status {
    while (!done()) {
      if (!aborted_.ok()) return aborted_;
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && !done()) {
        std::string missing;
        for (int64_t d : members) {
          if (slot.inputs[d] == nullptr) hlo::StrAppend(&missing, missing.empty() ? "" : ",", d);
        }
        absl::Status status = absl::DeadlineExceededError(hlo::StrCat(
            "collective ", name, ": device ", device, " timed out ", phase,
            missing.empty() ? std::string() : hlo::StrCat("; devices {", missing, "} never arrived")));
        aborted_ = status;
        cv_.notify_all();
        return status;
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status s = wait_for([&] { return slot.arrived == slot.expected; }, "waiting for peers");
      !s.ok()) {
    return s;
  }
  std::vector<const hlo::Literal*> inputs = slot.inputs;
  lock.unlock();
  absl::Status computed = compute(inputs);
  lock.lock();
  if (!computed.ok() && aborted_.ok()) {
    aborted_ = computed;
    cv_.notify_all();
  }
  ++slot.finished;
  cv_.notify_all();
  // The whole group has arrived, so every member runs its compute, which does not block, and
  // finishes. Wait for all of them with no deadline and regardless of errors: a member that
  // left early would free its input while a peer may still be reading it.
  cv_.wait(lock, [&] { return slot.finished == slot.expected; });
  if (++slot.departed == slot.expected) slots_.erase(slot_key);
  if (!computed.ok()) return computed;
  return aborted_;
}

}  // namespace runtime
