// Two-phase rendezvous: arrive (publish the input) -> compute -> finish; each group has its own
// slot, erased by the group's last member to leave.
#include "runtime/cpu/collective_hub.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "hlo/strings.h"
#include "runtime/common/collective_groups.h"
#include "runtime/cpu/literal_bytes.h"

namespace runtime {
namespace {

// `group`'s devices in increasing order; every device when it is empty.
// Sends this process's members' inputs (`payload`, packed in device order) to the other
// processes holding `members` and returns theirs: one literal of `shape` per remote member, in
// device order.
absl::StatusOr<std::vector<hlo::Literal>> ExchangeWithProcesses(
    CollectiveTransport& transport, const CollectiveKey& key, std::string_view name,
    const std::vector<int64_t>& members, const hlo::Shape& shape, std::vector<uint8_t> payload) {
  std::map<int, size_t> counts;  // Remote members by process.
  for (int64_t d : members) {
    if (transport.ProcessOf(d) != transport.process()) ++counts[transport.ProcessOf(d)];
  }
  std::vector<int> peers;
  std::vector<size_t> expected;
  const size_t each = static_cast<size_t>(shape.byte_size());
  for (const auto& [process, count] : counts) {
    peers.push_back(process);
    expected.push_back(count * each);
  }
  absl::StatusOr<std::vector<std::vector<uint8_t>>> received =
      transport.Exchange(key, members.front(), name, peers, std::move(payload), expected);
  if (!received.ok()) return received.status();
  std::map<int, absl::Span<const uint8_t>> unread;
  for (size_t i = 0; i < peers.size(); ++i) unread[peers[i]] = (*received)[i];
  std::vector<hlo::Literal> remote;
  for (int64_t d : members) {
    const int process = transport.ProcessOf(d);
    if (process == transport.process()) continue;
    absl::StatusOr<hlo::Literal> value = TakeLiteral(shape, &unread[process]);
    if (!value.ok()) return value.status();
    remote.push_back(*std::move(value));
  }
  return remote;
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
                         std::adjacent_find(members.begin(), members.end()) == members.end() &&
                         IsLocal(device);
  const int64_t local_members =
      std::count_if(members.begin(), members.end(), [&](int64_t d) { return IsLocal(d); });
  std::unique_lock<std::mutex> lock(mu_);
  if (!aborted_.ok()) return aborted_;
  const std::pair<CollectiveKey, int64_t> slot_key(key, members.front());
  Slot& slot = slots_[slot_key];
  if (slot.inputs.empty()) {
    slot.inputs.assign(num_devices_, nullptr);
    slot.expected = local_members;
  }
  if (!member_ok || slot.expected != local_members || slot.inputs[device] != nullptr) {
    return absl::InternalError(hlo::StrCat("collective ", name, ": bad device ", device));
  }
  slot.inputs[device] = input;
  const bool completes_local_part = ++slot.arrived == slot.expected;
  cv_.notify_all();
  auto wait_for = [&](auto done, std::string_view phase) -> absl::Status {
    while (!done()) {
      if (!aborted_.ok()) return aborted_;
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && !done()) {
        std::string missing;
        for (int64_t d : members) {
          if (IsLocal(d) && slot.inputs[d] == nullptr)
            hlo::StrAppend(&missing, missing.empty() ? "" : ",", d);
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
  if (local_members < static_cast<int64_t>(members.size())) {
    if (absl::Status s = JoinExchange(key, name, members, completes_local_part, slot, lock);
        !s.ok()) {
      return s;
    }
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

absl::Status CollectiveHub::JoinExchange(const CollectiveKey& key, std::string_view name,
                                         const std::vector<int64_t>& members, bool exchanger,
                                         Slot& slot, std::unique_lock<std::mutex>& lock) {
  if (exchanger) {
    // Copied under the lock: a member that leaves on an abort frees its input.
    std::vector<uint8_t> payload;
    const hlo::Literal* first_local = nullptr;  // Every member's input has its shape.
    for (int64_t d : members) {
      if (!IsLocal(d)) continue;
      AppendLiteralBytes(*slot.inputs[d], &payload);
      if (first_local == nullptr) first_local = slot.inputs[d];
    }
    const hlo::Shape shape = first_local->shape();
    lock.unlock();
    absl::StatusOr<std::vector<hlo::Literal>> remote =
        ExchangeWithProcesses(*transport_, key, name, members, shape, std::move(payload));
    lock.lock();
    if (remote.ok()) {
      slot.remote = *std::move(remote);
      size_t next = 0;
      for (int64_t d : members) {
        if (!IsLocal(d)) slot.inputs[d] = &slot.remote[next++];
      }
    } else if (aborted_.ok()) {
      aborted_ = remote.status();
    }
    slot.exchanged = true;
    cv_.notify_all();
  }
  // The exchanging member's transport has the deadline; the others wait for it.
  cv_.wait(lock, [&] { return slot.exchanged || !aborted_.ok(); });
  return aborted_;
}

}  // namespace runtime
