// CopyHub rounds keyed by (instruction id, sequence, group); CopyCollectives' algorithms over them.
#include "runtime/cuda/copy_collectives.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <tuple>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/collective_groups.h"
#include "runtime/cuda/kernels/element_math.h"

namespace runtime {
namespace cuda {
namespace {

int ElementOpOf(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum: return spmd_cuda::kAdd;
    case ReduceKind::kProd: return spmd_cuda::kMul;
    case ReduceKind::kMax: return spmd_cuda::kMax;
    default: return spmd_cuda::kMin;
  }
}

}  // namespace

void CopyHub::Abort(const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_.ok()) aborted_ = status;
  cv_.notify_all();
}

absl::Status CopyHub::Exchange(const CollectiveOp& op, Entry mine,
                               const std::function<absl::Status(const std::vector<Entry>&)>& work) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_seconds_));
  const std::vector<int64_t> members = SortedMembers(op.members, num_devices_);
  const int64_t expected = static_cast<int64_t>(members.size());
  const int64_t least = members.front();
  const std::tuple<int64_t, int64_t, int64_t> key{op.instr->unique_id(), op.sequence, least};
  std::unique_lock<std::mutex> lock(mu_);
  if (!aborted_.ok()) return aborted_;
  Round& round = rounds_[key];
  if (round.entries.empty()) {
    round.entries.resize(num_devices_);
    round.present.assign(num_devices_, false);
  }
  round.entries[op.device] = mine;
  round.present[op.device] = true;
  ++round.arrived;
  cv_.notify_all();
  while (round.arrived < expected && aborted_.ok()) {
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && round.arrived < expected) {
      std::string missing;
      for (int64_t d : members) {
        if (!round.present[d]) hlo::StrAppend(&missing, missing.empty() ? "" : ",", d);
      }
      aborted_ = absl::DeadlineExceededError(hlo::StrCat(
          "instruction %", op.instr->name(), ": device ", op.device, " waited ",
          timeout_seconds_, " s at the collective; devices {", missing, "} never arrived"));
      cv_.notify_all();
    }
  }
  if (!aborted_.ok() && round.arrived < expected) {
    if (++round.departed == round.arrived) rounds_.erase(key);
    return aborted_;
  }
  const std::vector<Entry> entries = round.entries;
  lock.unlock();
  absl::Status done = work(entries);
  lock.lock();
  if (!done.ok() && aborted_.ok()) aborted_ = done;
  ++round.finished;
  cv_.notify_all();
  // Everyone has arrived and work never blocks on peers: wait for all, even after errors, so
  // no input is freed while a peer reads it.
  cv_.wait(lock, [&] { return round.finished == expected; });
  if (++round.departed == expected) rounds_.erase(key);
  return done.ok() ? aborted_ : done;
}

absl::Status CopyCollectives::Run(
    const CollectiveOp& op, const void* in, void* out,
    const std::function<absl::Status(const std::vector<CopyHub::Entry>&)>& work) {
  RETURN_IF_ERROR(device_.Synchronize());  // Peers read our input on their own streams.
  return hub_.Exchange(op, {in, out}, [&](const std::vector<CopyHub::Entry>& entries) {
    RETURN_IF_ERROR(work(entries));
    return device_.Synchronize();  // Done reading peers' inputs before anyone leaves.
  });
}

absl::Status CopyCollectives::ReduceInto(const CollectiveOp& op,
                                         const std::vector<CopyHub::Entry>& entries,
                                         int64_t offset, void* out, int64_t count) {
  const std::vector<int64_t>& group = op.grouping.groups[op.grouping.group];
  RETURN_IF_ERROR(
      device_.CopyOnDevice(out, BytesAfter(entries[group[0]].in, offset), ChunkBytes(op.dtype, count)));
  for (size_t k = 1; k < group.size(); ++k) {
    spmd_cuda::ElementwiseParams p;
    p.op = ElementOpOf(op.reduce);
    p.in_type = p.out_type = op.dtype;
    p.in[0] = out;
    p.in[1] = BytesAfter(entries[group[k]].in, offset);
    p.out = out;
    p.n = count;
    RETURN_IF_ERROR(device_.Elementwise(p));
  }
  return absl::OkStatus();
}

absl::Status CopyCollectives::AllReduce(const CollectiveOp& op, const void* in, void* out,
                                        int64_t count) {
  return Run(op, in, out, [&](const std::vector<CopyHub::Entry>& entries) {
    return ReduceInto(op, entries, 0, out, count);
  });
}

absl::Status CopyCollectives::AllGather(const CollectiveOp& op, const void* in, void* out,
                                        int64_t count) {
  const int64_t bytes = ChunkBytes(op.dtype, count);
  return Run(op, in, out, [&](const std::vector<CopyHub::Entry>& entries) -> absl::Status {
    const std::vector<int64_t>& group = op.grouping.groups[op.grouping.group];
    for (size_t k = 0; k < group.size(); ++k) {
      RETURN_IF_ERROR(device_.CopyOnDevice(BytesAfter(out, k * bytes), entries[group[k]].in, bytes));
    }
    return absl::OkStatus();
  });
}

absl::Status CopyCollectives::ReduceScatter(const CollectiveOp& op, const void* in, void* out,
                                            int64_t count) {
  return Run(op, in, out, [&](const std::vector<CopyHub::Entry>& entries) {
    return ReduceInto(op, entries, op.grouping.rank * ChunkBytes(op.dtype, count), out, count);
  });
}

absl::Status CopyCollectives::AllToAll(const CollectiveOp& op, const void* in, void* out,
                                       int64_t count) {
  const int64_t bytes = ChunkBytes(op.dtype, count);
  return Run(op, in, out, [&](const std::vector<CopyHub::Entry>& entries) -> absl::Status {
    const std::vector<int64_t>& group = op.grouping.groups[op.grouping.group];
    for (size_t k = 0; k < group.size(); ++k) {
      RETURN_IF_ERROR(device_.CopyOnDevice(BytesAfter(out, k * bytes),
                                           BytesAfter(entries[group[k]].in, op.grouping.rank * bytes),
                                           bytes));
    }
    return absl::OkStatus();
  });
}

absl::Status CopyCollectives::CollectivePermute(const CollectiveOp& op, const void* in, void* out,
                                                int64_t count, const std::vector<int64_t>&,
                                                int64_t source) {
  return Run(op, in, out, [&](const std::vector<CopyHub::Entry>& entries) -> absl::Status {
    if (source < 0) return absl::OkStatus();
    return device_.CopyOnDevice(out, entries[source].in, ChunkBytes(op.dtype, count));
  });
}

}  // namespace cuda
}  // namespace runtime
