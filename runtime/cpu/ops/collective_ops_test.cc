// Collectives on N simulated devices against hand-computed values: group modes (cross-replica,
// cross-partition, cross-replica-and-partition, flattened ids), iota replica groups with a
// transpose, combiners on the fast and the generic path, both all-to-all forms,
// collective-permute with devices that receive nothing, and the failure modes (a missing
// participant, devices that disagree on shapes) turning into errors, never hangs.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/verifier/hlo_verifier.h"
#include "runtime/cpu/collective_hub.h"
#include "runtime/cpu/evaluator.h"
#include "runtime/cpu/multi_device_runner.h"

namespace runtime {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return nullptr;
  absl::Status verified = hlo::VerifyModule(**module);
  EXPECT_TRUE(verified.ok()) << verified;
  return *std::move(module);
}

Literal Array(PrimitiveType type, std::vector<int64_t> dims, const std::vector<double>& values) {
  Literal literal(Shape::Array(type, dims));
  for (size_t i = 0; i < values.size(); ++i) literal.SetDouble(i, values[i]);
  return literal;
}

std::vector<double> Values(const Literal& literal) {
  std::vector<double> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetDouble(i));
  return out;
}

std::vector<int64_t> Ints(const Literal& literal) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetInt(i));
  return out;
}

// Runs `text` on partitions x replicas devices; device d gets `arg(d)` as its only argument
// (none when `arg` is null).
std::vector<Literal> RunText(const std::string& text, int64_t partitions, int64_t replicas,
                             const std::function<std::vector<Literal>(int64_t)>& args) {
  std::unique_ptr<hlo::HloModule> module = Parse(text);
  if (module == nullptr) return {};
  MultiDeviceOptions options;
  options.num_partitions = partitions;
  options.num_replicas = replicas;
  options.collective_timeout_seconds = 10;
  std::vector<std::vector<Literal>> per_device;
  for (int64_t d = 0; d < partitions * replicas; ++d) {
    per_device.push_back(args ? args(d) : std::vector<Literal>{});
  }
  absl::StatusOr<std::vector<Literal>> results =
      RunOnDevices(*module, std::move(per_device), options);
  EXPECT_TRUE(results.ok()) << results.status();
  return results.ok() ? *std::move(results) : std::vector<Literal>{};
}

// Device d's argument: a rows x cols s32 array with element (i, j) = 100 d + 10 i + j.
std::vector<Literal> Tagged(int64_t d, int64_t rows, int64_t cols) {
  std::vector<double> v;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) v.push_back(100 * d + 10 * i + j);
  }
  std::vector<Literal> args;
  args.push_back(Array(PrimitiveType::kS32, {rows, cols}, v));
  return args;
}

constexpr char kSum[] = R"(
sum {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] add(a, b)
}
)";

TEST(CollectiveOpsTest, PartitionAndReplicaIds) {
  std::vector<Literal> results = RunText(R"(
HloModule ids, num_partitions=2, replica_count=2
ENTRY e {
  p = u32[] partition-id()
  r = u32[] replica-id()
  ROOT t = (u32[], u32[]) tuple(p, r)
})",
                                         2, 2, nullptr);
  ASSERT_EQ(results.size(), 4u);
  for (int64_t d = 0; d < 4; ++d) {
    EXPECT_EQ(results[d].tuple_elements()[0].GetInt(0), d % 2) << d;
    EXPECT_EQ(results[d].tuple_elements()[1].GetInt(0), d / 2) << d;
  }
}

TEST(CollectiveOpsTest, AllGatherIotaGroupsWithTranspose) {
  // [2,4]<=[4,2]T(1,0) is {{0,2,4,6},{1,3,5,7}}.
  std::vector<Literal> results = RunText(R"(
HloModule ag, num_partitions=8
ENTRY e {
  x = s32[1,2] parameter(0)
  ROOT ag = s32[4,2] all-gather(x), channel_id=1, replica_groups=[2,4]<=[4,2]T(1,0), dimensions={0}, use_global_device_ids=true
})",
                                         8, 1, [](int64_t d) { return Tagged(d, 1, 2); });
  ASSERT_EQ(results.size(), 8u);
  EXPECT_THAT(Ints(results[3]), ElementsAre(100, 101, 300, 301, 500, 501, 700, 701));
  EXPECT_THAT(Ints(results[4]), ElementsAre(0, 1, 200, 201, 400, 401, 600, 601));
}

TEST(CollectiveOpsTest, AllGatherExplicitGroupsAlongMinorDimension) {
  std::vector<Literal> results = RunText(R"(
HloModule ag, num_partitions=4
ENTRY e {
  x = s32[2,1] parameter(0)
  ROOT ag = s32[2,2] all-gather(x), channel_id=1, replica_groups={{3,0},{2,1}}, dimensions={1}, use_global_device_ids=true
})",
                                         4, 1, [](int64_t d) { return Tagged(d, 2, 1); });
  ASSERT_EQ(results.size(), 4u);
  // Group {3,0}: member 0 is device 3.
  EXPECT_THAT(Ints(results[0]), ElementsAre(300, 0, 310, 10));
  EXPECT_THAT(Ints(results[1]), ElementsAre(200, 100, 210, 110));
}

TEST(CollectiveOpsTest, AllReduceCrossPartitionFastAndGenericCombiners) {
  const std::string text = std::string("HloModule ar, num_partitions=4\n") + kSum + R"(
slow_sum {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] copy(a)
  ROOT r = s32[] add(c, b)
}
ENTRY e {
  x = s32[1,2] parameter(0)
  fast = s32[1,2] all-reduce(x), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=sum
  slow = s32[1,2] all-reduce(x), channel_id=2, replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, to_apply=slow_sum
  ROOT t = (s32[1,2], s32[1,2]) tuple(fast, slow)
})";
  std::vector<Literal> results = RunText(text, 4, 1, [](int64_t d) { return Tagged(d, 1, 2); });
  ASSERT_EQ(results.size(), 4u);
  EXPECT_THAT(Ints(results[0].tuple_elements()[0]), ElementsAre(100, 102));  // 0 + 100
  EXPECT_THAT(Ints(results[3].tuple_elements()[0]), ElementsAre(500, 502));  // 200 + 300
  // Groups {0,2},{1,3}.
  EXPECT_THAT(Ints(results[0].tuple_elements()[1]), ElementsAre(200, 202));
  EXPECT_THAT(Ints(results[3].tuple_elements()[1]), ElementsAre(400, 402));
}

TEST(CollectiveOpsTest, AllReduceGroupModes) {
  // 2 replicas x 2 partitions; device d = 2 r + p holds d + 1.
  const std::string text =
      std::string("HloModule modes, num_partitions=2, replica_count=2\n") + kSum + R"(
ENTRY e {
  x = s32[] parameter(0)
  cross_replica = s32[] all-reduce(x), replica_groups={}, to_apply=sum
  cross_both = s32[] all-reduce(x), channel_id=1, replica_groups={{0},{1}}, to_apply=sum
  flattened = s32[] all-reduce(x), channel_id=2, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=sum
  ROOT t = (s32[], s32[], s32[]) tuple(cross_replica, cross_both, flattened)
})";
  std::vector<Literal> results = RunText(text, 2, 2, [](int64_t d) {
    std::vector<Literal> args;
    args.push_back(Array(PrimitiveType::kS32, {}, {static_cast<double>(d + 1)}));
    return args;
  });
  ASSERT_EQ(results.size(), 4u);
  // Cross-replica: devices {0,2} and {1,3}. Cross-replica-and-partition with replica groups
  // {0},{1}: devices {0,1} and {2,3}. Flattened: {0,3} and {1,2}.
  const int64_t expected[4][3] = {{4, 3, 5}, {6, 3, 5}, {4, 7, 5}, {6, 7, 5}};
  for (int64_t d = 0; d < 4; ++d) {
    for (int64_t k = 0; k < 3; ++k) {
      EXPECT_EQ(results[d].tuple_elements()[k].GetInt(0), expected[d][k]) << d << " " << k;
    }
  }
}

TEST(CollectiveOpsTest, AllReduceMaxMinAndPredicates) {
  const std::string text = R"(
HloModule ar, num_partitions=3
max_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}
min_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] minimum(b, a)
}
and_p {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] and(a, b)
}
or_p {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] or(a, b)
}
ENTRY e {
  x = f32[2] parameter(0)
  q = pred[2] parameter(1)
  mx = f32[2] all-reduce(x), channel_id=1, replica_groups={}, to_apply=max_f
  mn = f32[2] all-reduce(x), channel_id=2, replica_groups={}, to_apply=min_f
  all = pred[2] all-reduce(q), channel_id=3, replica_groups={}, to_apply=and_p
  any = pred[2] all-reduce(q), channel_id=4, replica_groups={}, to_apply=or_p
  ROOT t = (f32[2], f32[2], pred[2], pred[2]) tuple(mx, mn, all, any)
})";
  std::vector<Literal> results = RunText(text, 3, 1, [](int64_t d) {
    std::vector<Literal> args;
    args.push_back(Array(PrimitiveType::kF32, {2}, {d * 1.5, -d * 0.5}));
    args.push_back(Array(PrimitiveType::kPred, {2}, {1, d == 1 ? 1.0 : 0.0}));
    return args;
  });
  ASSERT_EQ(results.size(), 3u);
  const std::vector<Literal>& r = results[2].tuple_elements();
  EXPECT_THAT(Values(r[0]), ElementsAre(3.0, 0.0));
  EXPECT_THAT(Values(r[1]), ElementsAre(0.0, -1.0));
  EXPECT_THAT(Ints(r[2]), ElementsAre(1, 0));
  EXPECT_THAT(Ints(r[3]), ElementsAre(1, 1));
}

TEST(CollectiveOpsTest, AllReduceBf16) {
  const std::string text = R"(
HloModule ar, num_partitions=2
add_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT r = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[2] parameter(0)
  ROOT s = bf16[2] all-reduce(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add_bf16
})";
  std::vector<Literal> results = RunText(text, 2, 1, [](int64_t d) {
    std::vector<Literal> args;
    args.push_back(Array(PrimitiveType::kBF16, {2}, {1.0 + d, 0.25}));
    return args;
  });
  ASSERT_EQ(results.size(), 2u);
  EXPECT_THAT(Values(results[1]), ElementsAre(3.0, 0.5));
}

TEST(CollectiveOpsTest, ReduceScatterFollowsGroupOrder) {
  const std::string text = std::string("HloModule rs, num_partitions=4\n") + kSum + R"(
ENTRY e {
  x = s32[2,2] parameter(0)
  ROOT rs = s32[1,2] reduce-scatter(x), channel_id=1, replica_groups={{3,0},{1,2}}, dimensions={0}, use_global_device_ids=true, to_apply=sum
})";
  std::vector<Literal> results = RunText(text, 4, 1, [](int64_t d) { return Tagged(d, 2, 2); });
  ASSERT_EQ(results.size(), 4u);
  // Group {3,0}: sum = {{300, 302}, {320, 322}}; device 3 (rank 0) gets row 0.
  EXPECT_THAT(Ints(results[3]), ElementsAre(300, 302));
  EXPECT_THAT(Ints(results[0]), ElementsAre(320, 322));
  EXPECT_THAT(Ints(results[2]), ElementsAre(320, 322));  // {1,2}: rank 1 of 100 + 200.
}

TEST(CollectiveOpsTest, AllToAllArrayForm) {
  std::vector<Literal> results = RunText(R"(
HloModule a2a, num_partitions=4
ENTRY e {
  x = s32[4,2] parameter(0)
  rows = s32[4,2] all-to-all(x), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}
  cols = s32[4,2] all-to-all(x), channel_id=2, replica_groups=[2,2]<=[2,2]T(1,0), dimensions={1}
  ROOT t = (s32[4,2], s32[4,2]) tuple(rows, cols)
})",
                                         4, 1, [](int64_t d) { return Tagged(d, 4, 2); });
  ASSERT_EQ(results.size(), 4u);
  // Rows: device 2 receives row 2 of every device, in device order.
  EXPECT_THAT(Ints(results[2].tuple_elements()[0]),
              ElementsAre(20, 21, 120, 121, 220, 221, 320, 321));
  // Columns, groups {0,2},{1,3}: device 2 (rank 1) gets column 1 of device 0, then of itself.
  EXPECT_THAT(Ints(results[2].tuple_elements()[1]), ElementsAre(1, 201, 11, 211, 21, 221, 31, 231));
}

TEST(CollectiveOpsTest, AllToAllTupleForm) {
  std::vector<Literal> results =
      RunText(R"(
HloModule a2a, num_partitions=2
ENTRY e {
  a = s32[2] parameter(0)
  b = s32[2] parameter(1)
  ROOT t = (s32[2], s32[2]) all-to-all(a, b), channel_id=1, replica_groups={{1,0}}
})",
              2, 1, [](int64_t d) {
                std::vector<Literal> args;
                args.push_back(Array(PrimitiveType::kS32, {2}, {10.0 * d, 10.0 * d + 1}));
                args.push_back(Array(PrimitiveType::kS32, {2}, {10.0 * d + 5, 10.0 * d + 6}));
                return args;
              });
  ASSERT_EQ(results.size(), 2u);
  // Group order {1,0}: device 0 has rank 1, so it receives operand 1 of device 1, then its own.
  EXPECT_THAT(Ints(results[0].tuple_elements()[0]), ElementsAre(15, 16));
  EXPECT_THAT(Ints(results[0].tuple_elements()[1]), ElementsAre(5, 6));
  EXPECT_THAT(Ints(results[1].tuple_elements()[0]), ElementsAre(10, 11));
  EXPECT_THAT(Ints(results[1].tuple_elements()[1]), ElementsAre(0, 1));
}

TEST(CollectiveOpsTest, CollectivePermuteWithNonTargets) {
  std::vector<Literal> results = RunText(R"(
HloModule cp, num_partitions=4
ENTRY e {
  x = s32[1,2] parameter(0)
  ROOT cp = s32[1,2] collective-permute(x), channel_id=1, source_target_pairs={{0,2},{2,1},{1,0}}
})",
                                         4, 1, [](int64_t d) { return Tagged(d, 1, 2); });
  ASSERT_EQ(results.size(), 4u);
  EXPECT_THAT(Ints(results[0]), ElementsAre(100, 101));
  EXPECT_THAT(Ints(results[1]), ElementsAre(200, 201));
  EXPECT_THAT(Ints(results[2]), ElementsAre(0, 1));
  EXPECT_THAT(Ints(results[3]), ElementsAre(0, 0));  // Not a target: zeros.
}

TEST(CollectiveOpsTest, CollectivePermuteAcrossReplicas) {
  std::vector<Literal> results = RunText(R"(
HloModule cp, num_partitions=2, replica_count=2
ENTRY e {
  x = s32[1,1] parameter(0)
  ROOT cp = s32[1,1] collective-permute(x), source_target_pairs={{0,1},{1,0}}
})",
                                         2, 2, [](int64_t d) { return Tagged(d, 1, 1); });
  ASSERT_EQ(results.size(), 4u);
  // Without channel_id the pairs name replicas: device 2 r + p receives from 2 (1 - r) + p.
  EXPECT_THAT(Ints(results[0]), ElementsAre(200));
  EXPECT_THAT(Ints(results[1]), ElementsAre(300));
  EXPECT_THAT(Ints(results[3]), ElementsAre(100));
}

TEST(CollectiveOpsTest, SingleDeviceWithoutHub) {
  std::unique_ptr<hlo::HloModule> module = Parse(std::string("HloModule one\n") + kSum + R"(
ENTRY e {
  x = s32[2] parameter(0)
  ROOT s = s32[2] all-reduce(x), replica_groups={}, to_apply=sum
})");
  ASSERT_NE(module, nullptr);
  Evaluator evaluator(*module, DeviceContext{});
  std::vector<Literal> args;
  args.push_back(Array(PrimitiveType::kS32, {2}, {4, 5}));
  absl::StatusOr<Literal> result = evaluator.RunEntry(std::move(args));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Ints(*result), ElementsAre(4, 5));
}

TEST(CollectiveOpsTest, MissingParticipantTimesOutNamingTheInstruction) {
  std::unique_ptr<hlo::HloModule> module = Parse(R"(
HloModule missing, num_partitions=2
ENTRY e {
  x = s32[1,1] parameter(0)
  ROOT gathered = s32[2,1] all-gather(x), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
})");
  ASSERT_NE(module, nullptr);
  CollectiveHub hub(2, /*timeout_seconds=*/0.2);
  DeviceContext device;
  device.num_partitions = 2;
  device.hub = &hub;
  Evaluator evaluator(*module, device);  // Device 1 never runs.
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Literal> result = evaluator.RunEntry(Tagged(0, 1, 1));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("%gathered"));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("{1} never arrived"));
  EXPECT_LT(seconds, 5.0);
}

TEST(CollectiveOpsTest, DevicesDisagreeingOnShapesIsAnError) {
  // Two modules whose collective has the same id but different operand shapes.
  auto text = [](int n) {
    return "HloModule m, num_partitions=2\nENTRY e {\n  x = s32[" + std::to_string(n) +
           ",1] parameter(0)\n  ROOT cp = s32[" + std::to_string(n) +
           ",1] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,0}}\n}\n";
  };
  std::unique_ptr<hlo::HloModule> a = Parse(text(1));
  std::unique_ptr<hlo::HloModule> b = Parse(text(2));
  ASSERT_TRUE(a && b);
  CollectiveHub hub(2, 10);
  absl::StatusOr<Literal> results[2] = {absl::UnknownError(""), absl::UnknownError("")};
  auto run = [&](int64_t d, const hlo::HloModule& module, int rows) {
    DeviceContext device;
    device.partition_id = d;
    device.num_partitions = 2;
    device.hub = &hub;
    Evaluator evaluator(module, device);
    results[d] = evaluator.RunEntry(Tagged(d, rows, 1));
  };
  std::thread t0(run, 0, std::cref(*a), 1);
  std::thread t1(run, 1, std::cref(*b), 2);
  t0.join();
  t1.join();
  for (const auto& r : results) {
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("instruction %cp"));
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("disagree on the operand shape"));
  }
}

TEST(CollectiveOpsTest, OneFailingDeviceStopsTheOthersPromptly) {
  // Partitions 2 and 3 are in no group and fail at once; 0 and 1 must not wait the timeout.
  std::unique_ptr<hlo::HloModule> module =
      Parse(std::string("HloModule m, num_partitions=4\n") + kSum + R"(
ENTRY e {
  x = s32[1,1] parameter(0)
  ROOT s = s32[1,1] all-reduce(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=sum
})");
  ASSERT_NE(module, nullptr);
  MultiDeviceOptions options;
  options.num_partitions = 4;
  options.collective_timeout_seconds = 30;
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < 4; ++d) args.push_back(Tagged(d, 1, 1));
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Literal>> results = RunOnDevices(*module, std::move(args), options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(std::string(results.status().message()), HasSubstr("is in no replica group"));
  EXPECT_LT(seconds, 5.0);
}

TEST(CollectiveOpsTest, ReplicaGroupIdOutOfRange) {
  std::unique_ptr<hlo::HloModule> module = Parse(R"(
HloModule m, num_partitions=2
ENTRY e {
  x = s32[1,1] parameter(0)
  ROOT g = s32[2,1] all-gather(x), channel_id=1, replica_groups={{0,5}}, dimensions={0}, use_global_device_ids=true
})");
  ASSERT_NE(module, nullptr);
  MultiDeviceOptions options;
  options.num_partitions = 2;
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < 2; ++d) args.push_back(Tagged(d, 1, 1));
  absl::StatusOr<std::vector<Literal>> results = RunOnDevices(*module, std::move(args), options);
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(std::string(results.status().message()),
              HasSubstr("instruction %g: replica group names device 5 but there are only 2"));
}

TEST(CollectiveOpsTest, DynamicRootCollectiveBroadcastIsAnErrorNotACrash) {
  // The second operand names the root; the result is one array for two operands, which the
  // one-output-per-operand handlers used to index past the end of.
  std::unique_ptr<hlo::HloModule> module = Parse(R"(
HloModule m, replica_count=2
ENTRY e {
  x = f32[2,1] parameter(0)
  root = f32[1] parameter(1)
  ROOT cb = f32[2,1] collective-broadcast(x, root), replica_groups={{1,0}}, has_dynamic_root=true
})");
  ASSERT_NE(module, nullptr);
  MultiDeviceOptions options;
  options.num_replicas = 2;
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < 2; ++d) {
    std::vector<Literal> device_args;
    device_args.push_back(Array(PrimitiveType::kF32, {2, 1}, {1, 2}));
    device_args.push_back(Array(PrimitiveType::kF32, {1}, {0}));
    args.push_back(std::move(device_args));
  }
  absl::StatusOr<std::vector<Literal>> results = RunOnDevices(*module, std::move(args), options);
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(std::string(results.status().message()),
              HasSubstr("instruction %cb: expected one output per operand (2)"));
}

}  // namespace
}  // namespace runtime
