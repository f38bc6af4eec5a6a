// The CUDA executor on a real GPU against the CPU executor: the op cases of executor_test and
// the example modules on one device (among them long reductions and every dot layout), collectives among 4 logical devices sharing GPU 0 (copies), and NCCL at world
// size 1. Skips, saying why, when this machine has no usable GPU (CI, developer machines).
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/op_test_cases.h"
#include "runtime/cuda/testing/differential_test_util.h"

namespace runtime {
namespace cuda {
namespace {

#define SKIP_WITHOUT_GPU()                                                        \
  do {                                                                            \
    std::string reason;                                                           \
    if (CudaDeviceCount(&reason) == 0) GTEST_SKIP() << "no usable GPU: " << reason; \
  } while (false)

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void ExpectMatch(const std::string& path, int64_t devices, CollectiveBackend backend) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(ReadFile(path));
  ASSERT_TRUE(module.ok()) << module.status();
  CudaRunOptions options;
  options.num_partitions = devices;
  options.collectives = backend;
  options.collective_timeout_seconds = 60;
  absl::Status s = CompareWithCpu(**module, options);
  EXPECT_TRUE(s.ok()) << path << ": " << s;
}

TEST(GpuTest, OpsOnOneDevice) {
  SKIP_WITHOUT_GPU();
  ExpectMatch("runtime/cuda/testdata/ops_1dev.hlo", 1, CollectiveBackend::kAuto);
}

TEST(GpuTest, LongAndShortReductions) {
  SKIP_WITHOUT_GPU();
  ExpectMatch("runtime/cuda/testdata/reductions_1dev.hlo", 1, CollectiveBackend::kAuto);
}

TEST(GpuTest, OpCasesOfTheHostTests) {
  SKIP_WITHOUT_GPU();
  for (const OpCase& c : OpCases()) {
    absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(OpCaseText(c));
    ASSERT_TRUE(module.ok()) << module.status();
    CudaRunOptions options;
    absl::Status s = CompareWithCpu(**module, options);
    EXPECT_TRUE(s.ok()) << c.name << ": " << s;
  }
}

// Scatter-add of bf16 with every target hit 512 times: each partial sum is rounded to bf16, so
// the result depends on the order of the updates. The GPU must apply them in index order, as
// the CPU executor does (not in the order atomics happen to land), so the bits agree.
TEST(GpuTest, ScatterCombinesDuplicateIndicesInIndexOrder) {
  SKIP_WITHOUT_GPU();
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(R"(HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[8,64] parameter(0)
  io = s32[4096,1] iota(), iota_dimension=0
  c8 = s32[] constant(8)
  b8 = s32[4096,1] broadcast(c8), dimensions={}
  i = s32[4096,1] remainder(io, b8)
  u = bf16[4096,64] parameter(1)
  ROOT s = bf16[8,64] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})");
  ASSERT_TRUE(module.ok()) << module.status();
  for (uint64_t seed : {1, 2, 3}) {
    absl::Status s = CompareWithCpu(**module, CudaRunOptions(), seed, /*bitwise=*/true);
    EXPECT_TRUE(s.ok()) << "seed " << seed << ": " << s;
  }
}

TEST(GpuTest, CollectivesAmongLogicalDevicesOnOneGpu) {
  SKIP_WITHOUT_GPU();
  ExpectMatch("runtime/cuda/testdata/mlp_spmd.hlo", 8, CollectiveBackend::kCopies);
}

TEST(GpuTest, NcclAtWorldSizeOne) {
  SKIP_WITHOUT_GPU();
  ExpectMatch("runtime/cuda/testdata/allreduce_1dev.hlo", 1, CollectiveBackend::kNccl);
}

}  // namespace
}  // namespace cuda
}  // namespace runtime
