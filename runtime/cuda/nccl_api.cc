// RealNccl: each method is one libnccl call; ncclResult_t becomes a Status with the call's name
// and ncclGetErrorString / ncclGetLastError.
#include <nccl.h>

#include <cstring>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cuda/kernels/kernel_params.h"
#include "runtime/cuda/nccl_api.h"

namespace runtime {
namespace cuda {
namespace {

static_assert(sizeof(ncclUniqueId) == sizeof(NcclUniqueId), "NCCL_UNIQUE_ID_BYTES changed");

absl::Status Check(ncclResult_t r, std::string_view call, ncclComm_t comm = nullptr) {
  if (r == ncclSuccess) return absl::OkStatus();
  const char* last = ncclGetLastError(comm);
  return absl::InternalError(hlo::StrCat("NCCL ", call, " failed: ", ncclGetErrorString(r),
                                         last != nullptr && *last ? hlo::StrCat(" (", last, ")")
                                                                  : std::string()));
}

absl::StatusOr<ncclDataType_t> NcclType(int dtype) {
  switch (dtype) {
    case spmd_cuda::kPred: case spmd_cuda::kU8: return ncclUint8;
    case spmd_cuda::kS8: return ncclInt8;
    case spmd_cuda::kS32: return ncclInt32;
    case spmd_cuda::kU32: return ncclUint32;
    case spmd_cuda::kS64: return ncclInt64;
    case spmd_cuda::kU64: return ncclUint64;
    case spmd_cuda::kF16: return ncclFloat16;
    case spmd_cuda::kBF16: return ncclBfloat16;
    case spmd_cuda::kF32: return ncclFloat32;
    case spmd_cuda::kF64: return ncclFloat64;
    default: return absl::UnimplementedError("NCCL has no 16-bit integer type");
  }
}

ncclRedOp_t NcclOp(ReduceKind op) {
  switch (op) {
    case ReduceKind::kSum: return ncclSum;
    case ReduceKind::kProd: return ncclProd;
    case ReduceKind::kMax: return ncclMax;
    default: return ncclMin;
  }
}

ncclComm_t C(NcclComm c) { return static_cast<ncclComm_t>(c); }
cudaStream_t S(void* s) { return static_cast<cudaStream_t>(s); }

class RealNccl : public NcclApi {
 public:
  absl::StatusOr<NcclUniqueId> GetUniqueId() override {
    ncclUniqueId id;
    RETURN_IF_ERROR(Check(ncclGetUniqueId(&id), "ncclGetUniqueId"));
    NcclUniqueId out;
    std::memcpy(out.bytes, &id, sizeof(id));
    return out;
  }
  absl::StatusOr<NcclComm> CommInitRank(int world, const NcclUniqueId& uid, int rank) override {
    ncclUniqueId id;
    std::memcpy(&id, uid.bytes, sizeof(id));
    ncclComm_t comm = nullptr;
    RETURN_IF_ERROR(Check(ncclCommInitRank(&comm, world, id, rank), "ncclCommInitRank"));
    return static_cast<NcclComm>(comm);
  }
  absl::StatusOr<NcclComm> CommSplit(NcclComm comm, int color, int key) override {
    ncclComm_t out = nullptr;
    RETURN_IF_ERROR(Check(ncclCommSplit(C(comm), color, key, &out, nullptr), "ncclCommSplit", C(comm)));
    return static_cast<NcclComm>(out);
  }
  absl::Status CommAbort(NcclComm comm) override {
    return Check(ncclCommAbort(C(comm)), "ncclCommAbort");
  }
  absl::Status CommDestroy(NcclComm comm) override {
    return Check(ncclCommDestroy(C(comm)), "ncclCommDestroy");
  }
  absl::Status AsyncError(NcclComm comm) override {
    ncclResult_t async = ncclSuccess;
    RETURN_IF_ERROR(Check(ncclCommGetAsyncError(C(comm), &async), "ncclCommGetAsyncError", C(comm)));
    if (async == ncclInProgress) return absl::OkStatus();
    return Check(async, "asynchronous operation", C(comm));
  }
  absl::Status AllReduce(const void* send, void* recv, int64_t count, int dtype, ReduceKind op,
                         NcclComm comm, void* stream) override {
    ASSIGN_OR_RETURN(ncclDataType_t t, NcclType(dtype));
    return Check(ncclAllReduce(send, recv, count, t, NcclOp(op), C(comm), S(stream)),
                 "ncclAllReduce", C(comm));
  }
  absl::Status AllGather(const void* send, void* recv, int64_t count, int dtype, NcclComm comm,
                         void* stream) override {
    ASSIGN_OR_RETURN(ncclDataType_t t, NcclType(dtype));
    return Check(ncclAllGather(send, recv, count, t, C(comm), S(stream)), "ncclAllGather", C(comm));
  }
  absl::Status ReduceScatter(const void* send, void* recv, int64_t count, int dtype,
                             ReduceKind op, NcclComm comm, void* stream) override {
    ASSIGN_OR_RETURN(ncclDataType_t t, NcclType(dtype));
    return Check(ncclReduceScatter(send, recv, count, t, NcclOp(op), C(comm), S(stream)),
                 "ncclReduceScatter", C(comm));
  }
  absl::Status Send(const void* send, int64_t count, int dtype, int peer, NcclComm comm,
                    void* stream) override {
    ASSIGN_OR_RETURN(ncclDataType_t t, NcclType(dtype));
    return Check(ncclSend(send, count, t, peer, C(comm), S(stream)), "ncclSend", C(comm));
  }
  absl::Status Recv(void* recv, int64_t count, int dtype, int peer, NcclComm comm,
                    void* stream) override {
    ASSIGN_OR_RETURN(ncclDataType_t t, NcclType(dtype));
    return Check(ncclRecv(recv, count, t, peer, C(comm), S(stream)), "ncclRecv", C(comm));
  }
  absl::Status GroupStart() override { return Check(ncclGroupStart(), "ncclGroupStart"); }
  absl::Status GroupEnd() override { return Check(ncclGroupEnd(), "ncclGroupEnd"); }
};

}  // namespace

std::unique_ptr<NcclApi> MakeRealNccl() { return std::make_unique<RealNccl>(); }

}  // namespace cuda
}  // namespace runtime
