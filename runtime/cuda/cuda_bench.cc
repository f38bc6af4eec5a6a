// cuda_bench: the CUDA executor's speed on one machine, for tools/gpu_check.sh.
//
//   dot    an N x N x N bf16 dot (f32 accumulation) through the executor, against a cublasGemmEx
//          call of the same shape on the same buffers in the same run (best of --iters each);
//   nccl   all-reduce of --allreduce-mib MiB over NCCL across every local GPU (a thread each):
//          algorithm bandwidth bytes/time and bus bandwidth algbw * 2(n-1)/n, NCCL's convention;
//   copies the same all-reduce among 8 logical devices on GPU 0 (device-to-device copies).
// Prints one line per measurement, `key: value` pairs; exits 2 when there is no GPU.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"
#include "runtime/cuda/copy_collectives.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/executor.h"
#include "runtime/cuda/kernels/element_math.h"
#include "runtime/cuda/nccl_collectives.h"

namespace runtime {
namespace cuda {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void Check(const absl::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "cuda_bench: %s: %s\n", what, std::string(s.message()).c_str());
    std::exit(1);
  }
}

// Best time of `iters` runs of `run` (after two warm-up runs), each ended by `sync`.
double BestSeconds(int iters, const std::function<void()>& run, const std::function<void()>& sync) {
  for (int i = 0; i < 2; ++i) run();
  sync();
  double best = 1e30;
  for (int i = 0; i < iters; ++i) {
    const auto start = Clock::now();
    run();
    sync();
    best = std::min(best, Seconds(start));
  }
  return best;
}

void BenchDot(int64_t n, int iters) {
  const std::string text = hlo::StrCat("HloModule dot_bench\nENTRY e {\n  a = bf16[", n, ",", n,
                                       "] parameter(0)\n  b = bf16[", n, ",", n,
                                       "] parameter(1)\n  ROOT d = bf16[", n, ",", n,
                                       "] dot(a, b), lhs_contracting_dims={1}, "
                                       "rhs_contracting_dims={0}\n}\n");
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  Check(module.status(), "parsing the dot module");
  absl::StatusOr<std::unique_ptr<DeviceApi>> device = MakeCudaDevice(0);
  Check(device.status(), "creating the device");
  DeviceApi& dev = **device;
  const int64_t bytes = n * n * 2;
  std::vector<uint16_t> host(n * n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (uint16_t& v : host) v = spmd_cuda::FloatToBf16(dist(rng));
  std::vector<DeviceBuffer> buffers;
  std::vector<DeviceValue> args;
  for (int k = 0; k < 2; ++k) {
    absl::StatusOr<DeviceBuffer> buf = DeviceBuffer::Allocate(dev, bytes);
    Check(buf.status(), "allocating an operand");
    Check(dev.CopyToDevice(buf->data(), host.data(), bytes), "uploading an operand");
    const hlo::Shape shape = hlo::Shape::Array(hlo::PrimitiveType::kBF16, {n, n});
    args.push_back({shape, {{buf->data(), shape}}});
    buffers.push_back(*std::move(buf));
  }
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(dev, bytes);
  Check(out.status(), "allocating the result");
  CudaExecutor executor(**module, dev, nullptr, DeviceContext());
  auto sync = [&] { Check(dev.Synchronize(), "synchronizing"); };
  const double ours = BestSeconds(iters, [&] {
    Check(executor.RunEntryOnDevice(args).status(), "running the dot");
  }, sync);
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) Check(absl::InternalError("cublasCreate"), "cuBLAS");
  cublasSetStream(handle, static_cast<cudaStream_t>(dev.stream()));
  const float alpha = 1, beta = 0;
  const double theirs = BestSeconds(iters, [&] {
    const cublasStatus_t s = cublasGemmEx(
        handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, args[1].leaves[0].data, CUDA_R_16BF, n,
        args[0].leaves[0].data, CUDA_R_16BF, n, &beta, out->data(), CUDA_R_16BF, n,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) Check(absl::InternalError(cublasGetStatusString(s)), "cublasGemmEx");
  }, sync);
  cublasDestroy(handle);
  const double flop = 2.0 * n * n * n;
  std::printf("dot: bf16 %lldx%lldx%lld executor_tflops: %.1f cublas_tflops: %.1f ratio_pct: %.1f\n",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
              flop / ours / 1e12, flop / theirs / 1e12, 100.0 * theirs / ours);
}

// An all-reduce instruction to name in collective calls.
std::unique_ptr<hlo::HloModule> AllReduceModule() {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> m = hlo::ParseHloModule(R"(HloModule ar
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), replica_groups={}, to_apply=add
})");
  Check(m.status(), "parsing the all-reduce module");
  return *std::move(m);
}

// Times `iters` all-reduces of `count` f32 on each of `n` threads; `make` builds thread d's
// device and collective layer.
double TimeAllReduce(int n, int64_t count, int iters,
                     const std::function<std::pair<std::unique_ptr<DeviceApi>,
                                                   std::unique_ptr<Collectives>>(int)>& make) {
  std::unique_ptr<hlo::HloModule> module = AllReduceModule();
  std::vector<double> best(n, 1e30);
  std::vector<std::thread> threads;
  for (int d = 0; d < n; ++d) {
    threads.emplace_back([&, d] {
      auto [device, layer] = make(d);
      absl::StatusOr<DeviceBuffer> in = DeviceBuffer::Allocate(*device, count * 4);
      absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(*device, count * 4);
      Check(in.status(), "allocating");
      Check(out.status(), "allocating");
      CollectiveOp op;
      op.instr = module->entry_computation()->root_instruction();
      op.grouping.groups.push_back({});
      for (int k = 0; k < n; ++k) op.grouping.groups[0].push_back(k);
      op.grouping.rank = d;
      op.dtype = spmd_cuda::kF32;
      op.device = d;
      for (int i = 0; i < iters + 2; ++i) {
        op.sequence = i;
        const auto start = Clock::now();
        Check(layer->AllReduce(op, in->data(), out->data(), count), "all-reduce");
        Check(device->Synchronize(), "synchronizing");
        if (i >= 2) best[d] = std::min(best[d], Seconds(start));
      }
      in->Reset();
      out->Reset();
      Check(device->Synchronize(), "synchronizing");
      layer.reset();
    });
  }
  for (std::thread& t : threads) t.join();
  return *std::max_element(best.begin(), best.end());
}

void BenchAllReduce(int64_t mib, int iters, int gpus) {
  const int64_t bytes = mib << 20, count = bytes / 4;
  std::unique_ptr<NcclApi> nccl = MakeRealNccl();
  absl::StatusOr<NcclUniqueId> id = nccl->GetUniqueId();
  Check(id.status(), "ncclGetUniqueId");
  std::vector<NcclComm> worlds(gpus, nullptr);
  const double t = TimeAllReduce(gpus, count, iters, [&](int d) {
    absl::StatusOr<std::unique_ptr<DeviceApi>> device = MakeCudaDevice(d);
    Check(device.status(), "creating a device");
    absl::StatusOr<NcclComm> world = nccl->CommInitRank(gpus, *id, d);
    Check(world.status(), "ncclCommInitRank");
    worlds[d] = *world;
    std::unique_ptr<Collectives> layer =
        std::make_unique<NcclCollectives>(*nccl, **device, NcclRank{*world, d, gpus}, 60.0);
    return std::make_pair(*std::move(device), std::move(layer));
  });
  for (NcclComm w : worlds) nccl->CommDestroy(w).IgnoreError();
  const double algbw = bytes / t / 1e9;
  std::printf("allreduce_nccl: %lld MiB gpus: %d algbw_gbs: %.1f busbw_gbs: %.1f\n",
              static_cast<long long>(mib), gpus, algbw, algbw * 2.0 * (gpus - 1) / gpus);
  const int logical = 8;
  CopyHub hub(logical, 60.0);
  const double tc = TimeAllReduce(logical, count / 8, iters, [&](int) {
    absl::StatusOr<std::unique_ptr<DeviceApi>> device = MakeCudaDevice(0);
    Check(device.status(), "creating a device");
    std::unique_ptr<Collectives> layer = std::make_unique<CopyCollectives>(hub, **device);
    return std::make_pair(*std::move(device), std::move(layer));
  });
  const double calgbw = bytes / 8 / tc / 1e9;
  std::printf("allreduce_copies: %lld MiB logical_devices: %d algbw_gbs: %.1f busbw_gbs: %.1f\n",
              static_cast<long long>(mib / 8), logical, calgbw, calgbw * 2.0 * (logical - 1) / logical);
}

}  // namespace
}  // namespace cuda
}  // namespace runtime

int main(int argc, char** argv) {
  int64_t n = 8192, mib = 256;
  int iters = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--dot-size") n = std::atoll(argv[i + 1]);
    else if (flag == "--allreduce-mib") mib = std::atoll(argv[i + 1]);
    else if (flag == "--iters") iters = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: cuda_bench [--dot-size N] [--allreduce-mib M] [--iters K]\n");
      return 2;
    }
  }
  std::string reason;
  const int gpus = runtime::cuda::CudaDeviceCount(&reason);
  if (gpus == 0) {
    std::fprintf(stderr, "cuda_bench: no GPU (%s)\n", reason.c_str());
    return 2;
  }
  runtime::cuda::BenchDot(n, iters);
  runtime::cuda::BenchAllReduce(mib, iters, gpus);
  return 0;
}
