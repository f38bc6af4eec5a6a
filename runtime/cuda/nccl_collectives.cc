// NCCL collectives: communicator cache by grouping, one NCCL call (or a send/recv group) per
// collective, then the watchdog wait.
#include "runtime/cuda/nccl_collectives.h"

#include <chrono>
#include <thread>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cuda/kernels/element_math.h"

namespace runtime {
namespace cuda {
namespace {

absl::Status Named(const CollectiveOp& op, std::string_view what, const absl::Status& s) {
  if (s.ok()) return s;
  return absl::Status(s.code(), hlo::StrCat("instruction %", op.instr->name(), ": ", what, ": ",
                                            s.message()));
}

}  // namespace

NcclCollectives::~NcclCollectives() {
  for (auto& [grouping, comm] : comms_) {
    if (comm != rank_.world) nccl_.CommDestroy(comm).IgnoreError();
  }
}

absl::StatusOr<NcclComm> NcclCollectives::CommFor(const CollectiveOp& op) {
  const Grouping& g = op.grouping;
  auto it = comms_.find(g.groups);
  if (it != comms_.end()) return it->second;
  bool whole_world = g.groups.size() == 1 &&
                     static_cast<int64_t>(g.groups[0].size()) == rank_.world_size;
  for (int64_t k = 0; whole_world && k < rank_.world_size; ++k) {
    whole_world = g.groups[0][k] == k;
  }
  NcclComm comm = rank_.world;
  if (!whole_world) {
    absl::StatusOr<NcclComm> split = nccl_.CommSplit(rank_.world, static_cast<int>(g.group),
                                                     static_cast<int>(g.rank));
    if (!split.ok()) return Named(op, "creating its communicator", split.status());
    comm = *split;
  }
  comms_[g.groups] = comm;
  return comm;
}

absl::Status NcclCollectives::Finish(const CollectiveOp& op, NcclComm comm, absl::Status issued,
                                     std::string_view what) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_seconds_));
  absl::Status status = std::move(issued);
  while (status.ok()) {
    absl::StatusOr<bool> idle = device_.IsIdle();
    if (!idle.ok()) {
      status = idle.status();
      break;
    }
    status = nccl_.AsyncError(comm);
    if (*idle || !status.ok()) break;
    if (Clock::now() > deadline) {
      status = absl::DeadlineExceededError(hlo::StrCat(
          "did not complete within ", timeout_seconds_,
          " s (a peer failed or never reached it); the communicator was aborted"));
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  if (status.ok()) return status;
  nccl_.CommAbort(comm).IgnoreError();  // The communicator is unusable after an error.
  for (auto it = comms_.begin(); it != comms_.end(); ++it) {
    if (it->second == comm) {
      comms_.erase(it);
      break;
    }
  }
  return Named(op, hlo::StrCat("NCCL ", what), status);
}

absl::Status NcclCollectives::AllReduce(const CollectiveOp& op, const void* in, void* out,
                                        int64_t count) {
  ASSIGN_OR_RETURN(NcclComm comm, CommFor(op));
  return Finish(op, comm,
                nccl_.AllReduce(in, out, count, op.dtype, op.reduce, comm, device_.stream()),
                "all-reduce");
}

absl::Status NcclCollectives::AllGather(const CollectiveOp& op, const void* in, void* out,
                                        int64_t count) {
  ASSIGN_OR_RETURN(NcclComm comm, CommFor(op));
  return Finish(op, comm, nccl_.AllGather(in, out, count, op.dtype, comm, device_.stream()),
                "all-gather");
}

absl::Status NcclCollectives::ReduceScatter(const CollectiveOp& op, const void* in, void* out,
                                            int64_t count) {
  ASSIGN_OR_RETURN(NcclComm comm, CommFor(op));
  return Finish(op, comm,
                nccl_.ReduceScatter(in, out, count, op.dtype, op.reduce, comm, device_.stream()),
                "reduce-scatter");
}

absl::Status NcclCollectives::AllToAll(const CollectiveOp& op, const void* in, void* out,
                                       int64_t count) {
  ASSIGN_OR_RETURN(NcclComm comm, CommFor(op));
  const int64_t bytes = ChunkBytes(op.dtype, count);
  auto issue = [&]() -> absl::Status {
    RETURN_IF_ERROR(nccl_.GroupStart());
    absl::Status s;
    for (int64_t j = 0; j < op.grouping.size() && s.ok(); ++j) {
      s = nccl_.Send(BytesAfter(in, j * bytes), count, op.dtype, static_cast<int>(j), comm, device_.stream());
      if (s.ok()) {
        s = nccl_.Recv(BytesAfter(out, j * bytes), count, op.dtype, static_cast<int>(j), comm,
                       device_.stream());
      }
    }
    absl::Status end = nccl_.GroupEnd();
    return s.ok() ? end : s;
  };
  return Finish(op, comm, issue(), "all-to-all");
}

absl::Status NcclCollectives::CollectivePermute(const CollectiveOp& op, const void* in, void* out,
                                                int64_t count,
                                                const std::vector<int64_t>& targets,
                                                int64_t source) {
  NcclComm comm = rank_.world;
  auto issue = [&]() -> absl::Status {
    RETURN_IF_ERROR(nccl_.GroupStart());
    absl::Status s;
    for (int64_t t : targets) {
      if (s.ok()) {
        s = nccl_.Send(in, count, op.dtype, static_cast<int>(t), comm, device_.stream());
      }
    }
    if (s.ok() && source >= 0) {
      s = nccl_.Recv(out, count, op.dtype, static_cast<int>(source), comm, device_.stream());
    }
    absl::Status end = nccl_.GroupEnd();
    return s.ok() ? end : s;
  };
  return Finish(op, comm, issue(), "collective-permute");
}

}  // namespace cuda
}  // namespace runtime
