// CudaDevice: the CUDA runtime and cuBLAS behind DeviceApi. Every CUDA or cuBLAS error becomes a
// Status naming the call. GEMM uses cublasGemmStridedBatchedEx with f32 accumulation for
// f16/bf16/f32 inputs (CUBLAS_COMPUTE_32F, no TF32) and f64 for f64.
#include "runtime/cuda/cuda_device.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cuda/kernels/launch.h"

namespace runtime {
namespace cuda {
namespace {

absl::Status CudaError(cudaError_t error, std::string_view what) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      hlo::StrCat(what, " failed: ", cudaGetErrorName(error), ": ", cudaGetErrorString(error)));
}

absl::Status LaunchError(int code, std::string_view kernel) {
  return CudaError(static_cast<cudaError_t>(code), hlo::StrCat("launch of kernel ", kernel));
}

absl::StatusOr<cudaDataType_t> CudaType(int t) {
  switch (t) {
    case spmd_cuda::kF16: return CUDA_R_16F;
    case spmd_cuda::kBF16: return CUDA_R_16BF;
    case spmd_cuda::kF32: return CUDA_R_32F;
    case spmd_cuda::kF64: return CUDA_R_64F;
    default: return absl::UnimplementedError("cuBLAS GEMM supports f16, bf16, f32 and f64 only");
  }
}

class CudaDevice : public DeviceApi {
 public:
  CudaDevice(int ordinal, cudaStream_t stream, std::string name)
      : ordinal_(ordinal), stream_(stream), name_(std::move(name)) {}
  ~CudaDevice() override {
    cudaSetDevice(ordinal_);
    if (blas_ != nullptr) cublasDestroy(blas_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return name_; }
  void* stream() override { return stream_; }

  // Stream-ordered allocation from the device's memory pool (cudaMallocAsync; device memory,
  // not managed): freed blocks are reused without a device-wide synchronization, so the
  // executor's per-run outputs and scratch buffers cost little.
  absl::StatusOr<void*> Allocate(int64_t bytes) override {
    RETURN_IF_ERROR(Select());
    void* p = nullptr;
    cudaError_t e = cudaMallocAsync(&p, bytes, stream_);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return absl::ResourceExhaustedError(
          hlo::StrCat(name_, ": out of device memory allocating ", bytes, " bytes"));
    }
    RETURN_IF_ERROR(CudaError(e, "cudaMallocAsync"));
    return p;
  }
  void Free(void* ptr) override {
    cudaSetDevice(ordinal_);
    cudaFreeAsync(ptr, stream_);  // Errors here have nowhere to go.
  }
  absl::Status CopyToDevice(void* dst, const void* src, int64_t bytes) override {
    RETURN_IF_ERROR(Select());
    RETURN_IF_ERROR(CudaError(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpy H2D"));
    // The host source may go away after the call: wait for pageable copies to finish.
    return CudaError(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  absl::Status CopyToHost(void* dst, const void* src, int64_t bytes) override {
    RETURN_IF_ERROR(Select());
    RETURN_IF_ERROR(CudaError(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpy D2H"));
    return CudaError(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  absl::Status CopyOnDevice(void* dst, const void* src, int64_t bytes) override {
    if (bytes == 0 || dst == src) return absl::OkStatus();
    RETURN_IF_ERROR(Select());
    return CudaError(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_),
                     "cudaMemcpy D2D");
  }
  absl::Status SetZero(void* dst, int64_t bytes) override {
    if (bytes == 0) return absl::OkStatus();
    RETURN_IF_ERROR(Select());
    return CudaError(cudaMemsetAsync(dst, 0, bytes, stream_), "cudaMemsetAsync");
  }
  absl::Status Synchronize() override {
    RETURN_IF_ERROR(Select());
    return CudaError(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  absl::StatusOr<bool> IsIdle() override {
    cudaError_t e = cudaStreamQuery(stream_);
    if (e == cudaErrorNotReady) return false;
    RETURN_IF_ERROR(CudaError(e, "cudaStreamQuery"));
    return true;
  }

  absl::Status Elementwise(const spmd_cuda::ElementwiseParams& p) override {
    RETURN_IF_ERROR(Select());
    return LaunchError(spmd_cuda::LaunchElementwise(p, stream_), "elementwise");
  }
  absl::Status StridedCopy(const spmd_cuda::StridedCopyParams& p) override {
    RETURN_IF_ERROR(Select());
    return LaunchError(spmd_cuda::LaunchStridedCopy(p, stream_), "strided-copy");
  }
  absl::Status Reduce(const spmd_cuda::ReduceParams& p) override {
    RETURN_IF_ERROR(Select());
    return LaunchError(spmd_cuda::LaunchReduce(p, stream_), "reduce");
  }
  absl::Status Iota(const spmd_cuda::IotaParams& p) override {
    RETURN_IF_ERROR(Select());
    return LaunchError(spmd_cuda::LaunchIota(p, stream_), "iota");
  }
  absl::Status Gather(const spmd_cuda::GatherParams& p) override {
    RETURN_IF_ERROR(Select());
    return LaunchError(spmd_cuda::LaunchGather(p, stream_), "gather");
  }
  absl::Status Scatter(const spmd_cuda::ScatterParams& p) override {
    RETURN_IF_ERROR(Select());
    return LaunchError(spmd_cuda::LaunchScatter(p, stream_), "scatter");
  }
  absl::Status Im2Col(const spmd_cuda::Im2ColParams& p) override {
    RETURN_IF_ERROR(Select());
    return LaunchError(spmd_cuda::LaunchIm2Col(p, stream_), "im2col");
  }
  absl::Status ReduceWindow(const spmd_cuda::ReduceWindowParams& p) override {
    RETURN_IF_ERROR(Select());
    return LaunchError(spmd_cuda::LaunchReduceWindow(p, stream_), "reduce-window");
  }
  absl::Status SelectWindow(const spmd_cuda::SelectWindowParams& p) override {
    RETURN_IF_ERROR(Select());
    return LaunchError(spmd_cuda::LaunchSelectWindow(p, stream_), "select-and-scatter select");
  }
  absl::Status TopK(const spmd_cuda::TopKParams& p) override {
    RETURN_IF_ERROR(Select());
    return LaunchError(spmd_cuda::LaunchTopK(p, stream_), "topk");
  }
  absl::Status Gemm(const spmd_cuda::GemmParams& p) override;

 private:
  absl::Status Select() { return CudaError(cudaSetDevice(ordinal_), "cudaSetDevice"); }

  int ordinal_;
  cudaStream_t stream_;
  std::string name_;
  cublasHandle_t blas_ = nullptr;
};

absl::Status CudaDevice::Gemm(const spmd_cuda::GemmParams& p) {
  RETURN_IF_ERROR(Select());
  if (blas_ == nullptr) {
    if (cublasCreate(&blas_) != CUBLAS_STATUS_SUCCESS) {
      blas_ = nullptr;
      return absl::InternalError(hlo::StrCat(name_, ": cublasCreate failed"));
    }
    cublasSetStream(blas_, stream_);
  }
  ASSIGN_OR_RETURN(cudaDataType_t in_type, CudaType(p.in_type));
  ASSIGN_OR_RETURN(cudaDataType_t out_type, CudaType(p.out_type));
  const bool f64 = p.in_type == spmd_cuda::kF64;
  const float alpha32 = 1, beta32 = 0;
  const double alpha64 = 1, beta64 = 0;
  const void* alpha = f64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&beta64) : &beta32;
  cublasStatus_t s = cublasGemmStridedBatchedEx(
      blas_, p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, p.m,
      p.n, p.k, alpha, p.a, in_type, p.lda, p.stride_a, p.b, in_type, p.ldb, p.stride_b, beta,
      p.c, out_type, p.ldc, p.stride_c, p.batch, f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS) {
    return absl::InternalError(hlo::StrCat(name_, ": cublasGemmStridedBatchedEx failed: ",
                                           cublasGetStatusString(s)));
  }
  return absl::OkStatus();
}

}  // namespace

int CudaDeviceCount(std::string* reason) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    if (reason != nullptr) {
      *reason = hlo::StrCat(cudaGetErrorName(e), ": ", cudaGetErrorString(e));
    }
    cudaGetLastError();  // Clear the sticky-free error so later calls start clean.
    return 0;
  }
  if (count == 0 && reason != nullptr) *reason = "no CUDA device";
  return count;
}

absl::StatusOr<std::unique_ptr<DeviceApi>> MakeCudaDevice(int ordinal) {
  RETURN_IF_ERROR(CudaError(cudaSetDevice(ordinal), hlo::StrCat("cudaSetDevice(", ordinal, ")")));
  cudaDeviceProp prop;
  RETURN_IF_ERROR(CudaError(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties"));
  // Keep freed pool memory for reuse instead of returning it at every synchronization.
  cudaMemPool_t pool;
  RETURN_IF_ERROR(CudaError(cudaDeviceGetDefaultMemPool(&pool, ordinal), "cudaDeviceGetDefaultMemPool"));
  uint64_t keep = UINT64_MAX;
  RETURN_IF_ERROR(CudaError(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
                            "cudaMemPoolSetAttribute"));
  cudaStream_t stream;
  RETURN_IF_ERROR(
      CudaError(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  return std::unique_ptr<DeviceApi>(
      new CudaDevice(ordinal, stream, hlo::StrCat("cuda:", ordinal, " (", prop.name, ")")));
}

}  // namespace cuda
}  // namespace runtime
