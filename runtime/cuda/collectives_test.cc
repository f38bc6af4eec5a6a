// Logical devices sharing one device (copy collectives) against the CPU executor's collectives:
// every collective kind, in leading and non-leading dimensions, with strided replica groups,
// a hand-partitioned MLP step on 8 devices (testdata/mlp_spmd.hlo), groups that take different
// branches meeting apart, and a peer that never arrives turning into an error instead of a hang.
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/testing/differential_test_util.h"

namespace runtime {
namespace cuda {
namespace {

constexpr char kHeader[] = R"(HloModule m, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

struct Case {
  const char* name;
  const char* entry;
};

const Case kCases[] = {
    {"all_reduce", R"(ENTRY e {
  x = f32[3,4] parameter(0)
  ROOT r = f32[3,4] all-reduce(x), channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add
})"},
    {"all_gather_inner_dim", R"(ENTRY e {
  x = f32[3,2] parameter(0)
  ROOT g = f32[3,8] all-gather(x), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true
})"},
    {"all_gather_leading_dim", R"(ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT g = f32[4,3] all-gather(x), channel_id=1, replica_groups={{0,3},{1,2}}, dimensions={0}, use_global_device_ids=true
})"},
    {"reduce_scatter_inner_dim", R"(ENTRY e {
  x = f32[3,8] parameter(0)
  ROOT r = f32[3,2] reduce-scatter(x), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={1}, use_global_device_ids=true, to_apply=add
})"},
    {"all_to_all", R"(ENTRY e {
  x = f32[4,6] parameter(0)
  ROOT a = f32[4,6] all-to-all(x), channel_id=1, replica_groups={{0,1},{2,3}}, dimensions={1}
})"},
    {"collective_permute", R"(ENTRY e {
  x = f32[5] parameter(0)
  ROOT p = f32[5] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,2},{2,0}}
})"},
    {"partition_id", R"(ENTRY e {
  x = f32[2] parameter(0)
  p = u32[] partition-id()
  f = f32[] convert(p)
  b = f32[2] broadcast(f), dimensions={}
  ROOT s = f32[2] add(x, b)
})"},
};

class CopyCollectivesTest : public ::testing::TestWithParam<Case> {};

TEST_P(CopyCollectivesTest, MatchesCpuExecutor) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module =
      ParseForTest(std::string(kHeader) + GetParam().entry);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status s = CompareWithCpu(**module, HostOptions(4));
  EXPECT_TRUE(s.ok()) << s;
}

INSTANTIATE_TEST_SUITE_P(Kinds, CopyCollectivesTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

void ExpectFileMatches(const std::string& path, int64_t devices) {
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(text.str());
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status s = CompareWithCpu(**module, HostOptions(devices));
  EXPECT_TRUE(s.ok()) << s;
}

TEST(CopyCollectivesExample, HandPartitionedMlpOnEightDevices) {
  ExpectFileMatches("runtime/cuda/testdata/mlp_spmd.hlo", 8);
}

TEST(CopyCollectivesExample, EveryCollectiveOnOneDevice) {
  ExpectFileMatches("runtime/cuda/testdata/allreduce_1dev.hlo", 1);
}

TEST(CopyCollectivesGroups, GroupsThatTakeDifferentBranchesMeetApart) {
  // Partitions {0,1} take the branch with an all-reduce, {2,3} the one with an all-gather; each
  // collective combines one group only, so each group must meet on its own (as the CPU
  // executor's hub and XLA's runtimes do), not wait for devices that never come.
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(std::string(kHeader) + R"(
reduce_branch {
  a = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(a), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=add
}
gather_branch {
  a = f32[4] parameter(0)
  g = f32[8] all-gather(a), channel_id=2, replica_groups={{0,1},{2,3}}, dimensions={0}, use_global_device_ids=true
  ROOT s = f32[4] slice(g), slice={[2:6]}
}
ENTRY e {
  x = f32[4] parameter(0)
  pid = u32[] partition-id()
  two = u32[] constant(2)
  low = pred[] compare(pid, two), direction=LT
  ROOT r = f32[4] conditional(low, x, x), true_computation=reduce_branch, false_computation=gather_branch
})");
  ASSERT_TRUE(module.ok()) << module.status();
  CudaRunOptions options = HostOptions(4);
  options.collective_timeout_seconds = 2;
  absl::Status s = CompareWithCpu(**module, options);
  EXPECT_TRUE(s.ok()) << s;
}

TEST(CopyCollectivesErrors, MissingPeerTimesOutNamingTheInstruction) {
  // Only partition 0 takes the branch with the all-reduce: partition 1 never arrives.
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseForTest(R"(HloModule m, num_partitions=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
with_all_reduce {
  a = f32[4] parameter(0)
  ROOT lonely = f32[4] all-reduce(a), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
}
without {
  a = f32[4] parameter(0)
  ROOT c = f32[4] copy(a)
}
ENTRY e {
  x = f32[4] parameter(0)
  pid = u32[] partition-id()
  zero = u32[] constant(0)
  first = pred[] compare(pid, zero), direction=EQ
  ROOT r = f32[4] conditional(first, x, x), true_computation=with_all_reduce, false_computation=without
})");
  ASSERT_TRUE(module.ok()) << module.status();
  CudaRunOptions options = HostOptions(2);
  options.collective_timeout_seconds = 0.3;
  std::vector<std::vector<hlo::Literal>> args(2);
  for (auto& a : args) a.emplace_back(hlo::Shape::Array(hlo::PrimitiveType::kF32, {4}));
  absl::StatusOr<std::vector<hlo::Literal>> r = RunOnCudaDevices(**module, args, options);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(r.status().message()),
              ::testing::HasSubstr("instruction %lonely: device 0 waited 0.3 s at the collective; "
                                   "devices {1} never arrived"));
}

}  // namespace
}  // namespace cuda
}  // namespace runtime
