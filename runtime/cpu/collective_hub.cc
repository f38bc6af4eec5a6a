// Two-phase rendezvous: arrive (publish the input) -> compute -> finish; the slot is erased by
// the last device to leave.
#include "runtime/cpu/collective_hub.h"

#include <chrono>

#include "hlo/strings.h"

namespace runtime {

void CollectiveHub::Abort(const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_.ok()) aborted_ = status;
  cv_.notify_all();
}

absl::Status CollectiveHub::Rendezvous(
    const CollectiveKey& key, int64_t device, std::string_view name, const hlo::Literal* input,
    const std::function<absl::Status(absl::Span<const hlo::Literal* const>)>& compute) {
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeout_seconds_));
  std::unique_lock<std::mutex> lock(mu_);
  if (!aborted_.ok()) return aborted_;
  Slot& slot = slots_[key];
  if (slot.inputs.empty()) slot.inputs.assign(num_devices_, nullptr);
  if (device < 0 || device >= num_devices_ || slot.inputs[device] != nullptr) {
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
        for (int64_t d = 0; d < num_devices_; ++d) {
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
  if (absl::Status s = wait_for([&] { return slot.arrived == num_devices_; }, "waiting for peers");
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
  // Every device has arrived, so every device runs its compute, which does not block, and
  // finishes. Wait for all of them with no deadline and regardless of errors: a device that
  // left early would free its input while a peer may still be reading it.
  cv_.wait(lock, [&] { return slot.finished == num_devices_; });
  if (++slot.departed == num_devices_) slots_.erase(key);
  if (!computed.ok()) return computed;
  return aborted_;
}

}  // namespace runtime
