// FakeNccl: text records of calls; communicators are small integers disguised as pointers.
#include "runtime/cuda/fake_nccl.h"

#include <cstdint>

#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace runtime {
namespace cuda {
namespace {

const char* OpName(ReduceKind op) {
  switch (op) {
    case ReduceKind::kSum: return "sum";
    case ReduceKind::kProd: return "prod";
    case ReduceKind::kMax: return "max";
    default: return "min";
  }
}

}  // namespace

std::vector<std::string> FakeNccl::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

std::vector<std::string> FakeNccl::CallsOn(const std::string& comm) const {
  std::vector<std::string> out;
  for (const std::string& c : calls()) {
    if (c.find(comm) != std::string::npos || c.find("comm=") == std::string::npos) out.push_back(c);
  }
  return out;
}

void FakeNccl::FailNext(const std::string& call) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_ = call;
}

absl::Status FakeNccl::Record(const std::string& call, const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.push_back(text);
  if (fail_next_ == call) {
    fail_next_.clear();
    return absl::InternalError(hlo::StrCat("NCCL ", call, " failed: unhandled system error"));
  }
  return absl::OkStatus();
}

NcclComm FakeNccl::NewComm(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  comm_names_.push_back(name);
  return reinterpret_cast<NcclComm>(static_cast<uintptr_t>(comm_names_.size()));
}

std::string FakeNccl::Name(NcclComm comm) const {
  std::lock_guard<std::mutex> lock(mu_);
  const uintptr_t k = reinterpret_cast<uintptr_t>(comm);
  return k >= 1 && k <= comm_names_.size() ? comm_names_[k - 1] : "?";
}

absl::StatusOr<NcclUniqueId> FakeNccl::GetUniqueId() {
  RETURN_IF_ERROR(Record("GetUniqueId", "GetUniqueId"));
  return NcclUniqueId();
}

absl::StatusOr<NcclComm> FakeNccl::CommInitRank(int world, const NcclUniqueId&, int rank) {
  NcclComm comm = NewComm(hlo::StrCat("world", rank));
  RETURN_IF_ERROR(Record("CommInitRank", hlo::StrCat("CommInitRank(world=", world, ", rank=",
                                                     rank, ") comm=", Name(comm))));
  return comm;
}

absl::StatusOr<NcclComm> FakeNccl::CommSplit(NcclComm comm, int color, int key) {
  const std::string parent = Name(comm);
  NcclComm out = NewComm(hlo::StrCat(parent, ".split", color, "_", key));
  RETURN_IF_ERROR(Record("CommSplit", hlo::StrCat("CommSplit(color=", color, ", key=", key,
                                                  ") comm=", parent, " -> ", Name(out))));
  return out;
}

absl::Status FakeNccl::CommAbort(NcclComm comm) {
  return Record("CommAbort", hlo::StrCat("CommAbort comm=", Name(comm)));
}

absl::Status FakeNccl::CommDestroy(NcclComm comm) {
  return Record("CommDestroy", hlo::StrCat("CommDestroy comm=", Name(comm)));
}

absl::Status FakeNccl::AsyncError(NcclComm) { return absl::OkStatus(); }

absl::Status FakeNccl::AllReduce(const void*, void*, int64_t count, int dtype, ReduceKind op,
                                 NcclComm comm, void*) {
  return Record("AllReduce", hlo::StrCat("AllReduce(count=", count, ", dtype=", dtype, ", ",
                                         OpName(op), ") comm=", Name(comm)));
}

absl::Status FakeNccl::AllGather(const void*, void*, int64_t count, int dtype, NcclComm comm,
                                 void*) {
  return Record("AllGather", hlo::StrCat("AllGather(send_count=", count, ", dtype=", dtype,
                                         ") comm=", Name(comm)));
}

absl::Status FakeNccl::ReduceScatter(const void*, void*, int64_t count, int dtype, ReduceKind op,
                                     NcclComm comm, void*) {
  return Record("ReduceScatter", hlo::StrCat("ReduceScatter(recv_count=", count, ", dtype=", dtype,
                                             ", ", OpName(op), ") comm=", Name(comm)));
}

absl::Status FakeNccl::Send(const void*, int64_t count, int dtype, int peer, NcclComm comm, void*) {
  return Record("Send", hlo::StrCat("Send(count=", count, ", dtype=", dtype, ", peer=", peer,
                                    ") comm=", Name(comm)));
}

absl::Status FakeNccl::Recv(void*, int64_t count, int dtype, int peer, NcclComm comm, void*) {
  return Record("Recv", hlo::StrCat("Recv(count=", count, ", dtype=", dtype, ", peer=", peer,
                                    ") comm=", Name(comm)));
}

absl::Status FakeNccl::GroupStart() { return Record("GroupStart", "GroupStart"); }
absl::Status FakeNccl::GroupEnd() { return Record("GroupEnd", "GroupEnd"); }

}  // namespace cuda
}  // namespace runtime
