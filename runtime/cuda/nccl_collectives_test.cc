// The NCCL calls each collective makes, recorded by a fake NCCL: one executor as rank 1 of 4
// (the fake moves no data and never blocks, so one rank can run alone), communicator splits
// once per distinct grouping, the world communicator reused for whole-world groups, grouped
// send/recv for all-to-all and collective-permute; errors and the watchdog's timeout name the
// instruction and abort the communicator.
#include "runtime/cuda/nccl_collectives.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/strings.h"
#include "runtime/cuda/executor.h"
#include "runtime/cuda/fake_nccl.h"
#include "runtime/cuda/host_device.h"
#include "runtime/cuda/kernels/kernel_params.h"
#include "runtime/cuda/testing/differential_test_util.h"

namespace runtime {
namespace cuda {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kModule[] = R"(HloModule m, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[3,4] parameter(0)
  r = f32[3,4] all-reduce(x), channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add
  r2 = f32[3,4] all-reduce(r), channel_id=2, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add
  g = f32[12,4] all-gather(r2), channel_id=3, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  rs = f32[6,4] reduce-scatter(g), channel_id=4, replica_groups={{0,1},{2,3}}, dimensions={0}, use_global_device_ids=true, to_apply=add
  a = f32[6,4] all-to-all(rs), channel_id=5, replica_groups={{0,1},{2,3}}, dimensions={0}
  ROOT p = f32[6,4] collective-permute(a), channel_id=6, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
})";

// Runs kModule as device 1 of 4 with `nccl` and `device`.
absl::Status RunAsRankOne(FakeNccl& nccl, DeviceApi& device, double timeout = 10) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(kModule);
  if (!module.ok()) return module.status();
  NcclComm world = reinterpret_cast<NcclComm>(1);
  nccl.CommInitRank(4, NcclUniqueId(), 1).IgnoreError();  // Names communicator 1 "world1".
  DeviceContext ctx;
  ctx.num_partitions = 4;
  ctx.partition_id = 1;
  NcclCollectives collectives(nccl, device, {world, 1, 4}, timeout);
  CudaExecutor executor(**module, device, &collectives, ctx);
  return executor.RunEntry({hlo::Literal(hlo::Shape::Array(hlo::PrimitiveType::kF32, {3, 4}))})
      .status();
}

TEST(NcclCollectivesTest, CallsPerCollective) {
  FakeNccl nccl;
  std::unique_ptr<DeviceApi> device = MakeHostDevice();
  ASSERT_TRUE(RunAsRankOne(nccl, *device).ok());
  const int f32 = spmd_cuda::kF32;
  EXPECT_THAT(
      nccl.calls(),
      ElementsAre(
          "CommInitRank(world=4, rank=1) comm=world1",
          // {{0,2},{1,3}}: device 1 is group 1, rank 0; split once, reused by the second.
          "CommSplit(color=1, key=0) comm=world1 -> world1.split1_0",
          hlo::StrCat("AllReduce(count=12, dtype=", f32, ", sum) comm=world1.split1_0"),
          hlo::StrCat("AllReduce(count=12, dtype=", f32, ", sum) comm=world1.split1_0"),
          // The whole world in order: the world communicator itself.
          hlo::StrCat("AllGather(send_count=12, dtype=", f32, ") comm=world1"),
          "CommSplit(color=0, key=1) comm=world1 -> world1.split0_1",
          hlo::StrCat("ReduceScatter(recv_count=24, dtype=", f32, ", sum) comm=world1.split0_1"),
          // all-to-all over the same grouping {{0,1},{2,3}}: grouped send/recv with both.
          "GroupStart",
          hlo::StrCat("Send(count=12, dtype=", f32, ", peer=0) comm=world1.split0_1"),
          hlo::StrCat("Recv(count=12, dtype=", f32, ", peer=0) comm=world1.split0_1"),
          hlo::StrCat("Send(count=12, dtype=", f32, ", peer=1) comm=world1.split0_1"),
          hlo::StrCat("Recv(count=12, dtype=", f32, ", peer=1) comm=world1.split0_1"),
          "GroupEnd",
          // collective-permute: send to 2, receive from 0, on the world communicator.
          "GroupStart", hlo::StrCat("Send(count=24, dtype=", f32, ", peer=2) comm=world1"),
          hlo::StrCat("Recv(count=24, dtype=", f32, ", peer=0) comm=world1"), "GroupEnd",
          // Split communicators are destroyed with the collective layer.
          "CommDestroy comm=world1.split0_1", "CommDestroy comm=world1.split1_0"));
}

TEST(NcclCollectivesTest, NcclErrorNamesTheInstructionAndAborts) {
  FakeNccl nccl;
  nccl.FailNext("ReduceScatter");
  std::unique_ptr<DeviceApi> device = MakeHostDevice();
  absl::Status s = RunAsRankOne(nccl, *device);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("instruction %rs: NCCL reduce-scatter: NCCL ReduceScatter failed"));
  EXPECT_THAT(nccl.calls(), ::testing::Contains("CommAbort comm=world1.split0_1"));
}

// A device whose stream never drains: the watchdog must give up.
class HangingDevice : public DeviceApi {
 public:
  HangingDevice() : host_(MakeHostDevice()) {}
  std::string name() const override { return "hanging"; }
  void* stream() override { return nullptr; }
  absl::StatusOr<void*> Allocate(int64_t b) override { return host_->Allocate(b); }
  void Free(void* p) override { host_->Free(p); }
  absl::Status CopyToDevice(void* d, const void* s, int64_t b) override {
    return host_->CopyToDevice(d, s, b);
  }
  absl::Status CopyToHost(void* d, const void* s, int64_t b) override {
    return host_->CopyToHost(d, s, b);
  }
  absl::Status CopyOnDevice(void* d, const void* s, int64_t b) override {
    return host_->CopyOnDevice(d, s, b);
  }
  absl::Status SetZero(void* d, int64_t b) override { return host_->SetZero(d, b); }
  absl::Status Synchronize() override { return absl::OkStatus(); }
  absl::StatusOr<bool> IsIdle() override { return false; }
  absl::Status Elementwise(const spmd_cuda::ElementwiseParams& p) override {
    return host_->Elementwise(p);
  }
  absl::Status StridedCopy(const spmd_cuda::StridedCopyParams& p) override {
    return host_->StridedCopy(p);
  }
  absl::Status Reduce(const spmd_cuda::ReduceParams& p) override { return host_->Reduce(p); }
  absl::Status Iota(const spmd_cuda::IotaParams& p) override { return host_->Iota(p); }
  absl::Status Gather(const spmd_cuda::GatherParams& p) override { return host_->Gather(p); }
  absl::Status Scatter(const spmd_cuda::ScatterParams& p) override { return host_->Scatter(p); }
  absl::Status Im2Col(const spmd_cuda::Im2ColParams& p) override { return host_->Im2Col(p); }
  absl::Status ReduceWindow(const spmd_cuda::ReduceWindowParams& p) override {
    return host_->ReduceWindow(p);
  }
  absl::Status SelectWindow(const spmd_cuda::SelectWindowParams& p) override {
    return host_->SelectWindow(p);
  }
  absl::Status TopK(const spmd_cuda::TopKParams& p) override { return host_->TopK(p); }
  absl::Status Gemm(const spmd_cuda::GemmParams& p) override { return host_->Gemm(p); }

 private:
  std::unique_ptr<DeviceApi> host_;
};

TEST(NcclCollectivesTest, WatchdogTimesOutAndAborts) {
  FakeNccl nccl;
  HangingDevice device;
  absl::Status s = RunAsRankOne(nccl, device, /*timeout=*/0.05);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("instruction %r: NCCL all-reduce: did not complete within 0.05 s"));
  EXPECT_THAT(nccl.calls(), ::testing::Contains("CommAbort comm=world1.split1_0"));
}

TEST(NcclCollectivesTest, RunnerSetsUpOneWorldRankPerDevice) {
  FakeNccl nccl;
  CudaRunOptions options = HostOptions(2);
  options.collectives = CollectiveBackend::kNccl;
  options.nccl = &nccl;
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(R"(HloModule m, num_partitions=2
ENTRY e {
  ROOT x = f32[2] parameter(0)
})");
  ASSERT_TRUE(module.ok());
  std::vector<std::vector<hlo::Literal>> args(2);
  for (auto& a : args) a.emplace_back(hlo::Shape::Array(hlo::PrimitiveType::kF32, {2}));
  ASSERT_TRUE(RunOnCudaDevices(**module, args, options).ok());
  EXPECT_THAT(nccl.calls(), ::testing::UnorderedElementsAre(
                                "GetUniqueId", "CommInitRank(world=2, rank=0) comm=world0",
                                "CommInitRank(world=2, rank=1) comm=world1",
                                "CommDestroy comm=world0", "CommDestroy comm=world1"));
}

TEST(NcclCollectivesTest, NoRankJoinsTheWorldWhenADeviceFailsToStart) {
  FakeNccl nccl;
  CudaRunOptions options = HostOptions(2);
  options.collectives = CollectiveBackend::kNccl;
  options.nccl = &nccl;
  options.make_device = [](int64_t d) -> absl::StatusOr<std::unique_ptr<DeviceApi>> {
    if (d == 1) return absl::ResourceExhaustedError("device 1 is out of memory");
    return MakeHostDevice();
  };
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(R"(HloModule m, num_partitions=2
ENTRY e {
  ROOT x = f32[2] parameter(0)
})");
  ASSERT_TRUE(module.ok());
  std::vector<std::vector<hlo::Literal>> args(2);
  for (auto& a : args) a.emplace_back(hlo::Shape::Array(hlo::PrimitiveType::kF32, {2}));
  absl::StatusOr<std::vector<hlo::Literal>> r = RunOnCudaDevices(**module, args, options);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("device 1 is out of memory"));
  EXPECT_THAT(nccl.calls(), ElementsAre("GetUniqueId"));
}

}  // namespace
}  // namespace cuda
}  // namespace runtime
