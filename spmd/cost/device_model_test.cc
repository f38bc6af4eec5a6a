#include "spmd/cost/device_model.h"

#include <limits>

#include "gtest/gtest.h"
#include "spmd/cost/json_value.h"

namespace spmd {
namespace {

TEST(JsonTest, ParsesNestedValues) {
  absl::StatusOr<JsonValue> v =
      ParseJson(R"({"a": [1, 2.5e3, true, false, null], "b": {"c": "x\ny\u0041"}})");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->Find("a")->array.size(), 5u);
  EXPECT_EQ(v->Find("a")->array[1].number, 2500);
  EXPECT_TRUE(v->Find("a")->array[2].boolean);
  EXPECT_FALSE(v->Find("a")->array[3].boolean);
  EXPECT_EQ(v->Find("b")->Find("c")->string, "x\nyA");
  EXPECT_EQ(v->Find("missing"), nullptr);
}

TEST(JsonTest, ErrorsNameLineAndColumn) {
  absl::StatusOr<JsonValue> v = ParseJson("{\n  \"a\": tru }");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(std::string(v.status().message()).find("2:8"), std::string::npos)
      << v.status().message();
  EXPECT_FALSE(ParseJson("[1, 2").ok());
  EXPECT_FALSE(ParseJson("{} x").ok());
  EXPECT_FALSE(ParseJson(std::string(1000, '[')).ok());  // Too deep, not a stack overflow.
}

TEST(JsonTest, WritesOneLineThatReadsBack) {
  JsonValue v = JsonValue::Object();
  v.Add("n", int64_t{1} << 40).Add("x", 0.25).Add("s", "a\"b\n").Add("none", nullptr);
  v.Add("list", JsonValue::Array().Push(true).Push(1.0 / 0.0));
  const std::string text = ToJson(v);
  EXPECT_EQ(text, R"({"n": 1099511627776, "x": 0.25, "s": "a\"b\u000a", "none": null, )"
                  R"("list": [true, null]})");
  absl::StatusOr<JsonValue> back = ParseJson(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->Find("s")->string, "a\"b\n");
  EXPECT_EQ(back->Find("n")->number, 1099511627776.0);
}

TEST(DeviceModelTest, BuiltinsExistAndDiffer) {
  for (const std::string& name : BuiltinDeviceModelNames()) {
    absl::StatusOr<DeviceModel> m = DeviceModelByName(name);
    ASSERT_TRUE(m.ok()) << name;
    EXPECT_FALSE(m->levels.empty());
    EXPECT_GT(m->memory_bytes, 0);
  }
  EXPECT_FALSE(DeviceModelByName("abacus").ok());
  absl::StatusOr<DeviceModel> h100 = DeviceModelByName("h100-nvlink");
  ASSERT_TRUE(h100.ok());
  // bf16 runs on tensor cores: faster than f32.
  EXPECT_LT(h100->ComputeTimeUs(1e12, hlo::PrimitiveType::kBF16),
            h100->ComputeTimeUs(1e12, hlo::PrimitiveType::kF32));
}

TEST(DeviceModelTest, LevelsSelectedByGroupMembership) {
  absl::StatusOr<DeviceModel> m = DeviceModelByName("h100-nvlink");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->LevelFor({0, 1, 7}).name, "nvlink");
  EXPECT_EQ(m->LevelFor({8, 15}).name, "nvlink");
  EXPECT_EQ(m->LevelFor({7, 8}).name, "infiniband");
  // The slowest group decides.
  EXPECT_EQ(m->LinkFor({{0, 1}, {6, 9}}).bandwidth_bytes_per_us,
            m->levels[1].link.bandwidth_bytes_per_us);
  EXPECT_EQ(m->LinkFor({{0, 1}, {8, 9}}).bandwidth_bytes_per_us,
            m->levels[0].link.bandwidth_bytes_per_us);
}

TEST(DeviceModelTest, ParsesJson) {
  absl::StatusOr<DeviceModel> m = ParseDeviceModelJson(R"({
    "name": "lab", "flops_per_second": {"f32": 2e12}, "memory_bytes": 1e9,
    "levels": [{"name": "pcie", "devices_per_group": 4, "latency_us": 10, "bandwidth_gbps": 20},
               {"name": "eth", "latency_us": 50, "bandwidth_gbps": 1}]})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->name, "lab");
  EXPECT_DOUBLE_EQ(m->f32_flops_per_us, 2e6);
  EXPECT_DOUBLE_EQ(m->bf16_flops_per_us, 2e6);  // Defaults to the f32 rate.
  EXPECT_DOUBLE_EQ(m->ComputeTimeUs(2e6, hlo::PrimitiveType::kF32), 1.0);
  ASSERT_EQ(m->levels.size(), 2u);
  EXPECT_DOUBLE_EQ(m->levels[0].link.bandwidth_bytes_per_us, 2e4);
  EXPECT_EQ(m->LevelFor({3, 4}).name, "eth");
  EXPECT_EQ(m->loop_step_us, 0);  // Optional.
}

TEST(DeviceModelTest, MemoryBandwidthTimesMemoryTraffic) {
  EXPECT_GT(DefaultDeviceModel().MemoryTimeUs(1e9), 0);
  absl::StatusOr<DeviceModel> m = ParseDeviceModelJson(
      R"({"flops_per_second": {"f32": 1e12}, "memory_bytes": 1, "memory_bandwidth_gbps": 2000,
          "levels": [{"latency_us": 1, "bandwidth_gbps": 10}]})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->MemoryTimeUs(4e6), 2.0);  // 4 MB at 2 TB/s.
  m = ParseDeviceModelJson(
      R"({"flops_per_second": {"f32": 1e12}, "memory_bytes": 1,
          "levels": [{"latency_us": 1, "bandwidth_gbps": 10}]})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->MemoryTimeUs(4e6), 0);  // Optional: unknown bandwidth is not timed.
  m = ParseDeviceModelJson(
      R"({"flops_per_second": {"f32": 1e12}, "memory_bytes": 1, "memory_bandwidth_gbps": -1,
          "levels": [{"latency_us": 1, "bandwidth_gbps": 10}]})");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("memory_bandwidth_gbps"), std::string::npos);
}

TEST(DeviceModelTest, LoopStepCost) {
  EXPECT_GT(DefaultDeviceModel().loop_step_us, 0);
  absl::StatusOr<DeviceModel> m = ParseDeviceModelJson(
      R"({"flops_per_second": {"f32": 1e12}, "memory_bytes": 1, "loop_step_us": 3.5,
          "levels": [{"latency_us": 1, "bandwidth_gbps": 10}]})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->loop_step_us, 3.5);
  m = ParseDeviceModelJson(
      R"({"flops_per_second": {"f32": 1e12}, "memory_bytes": 1, "loop_step_us": -1,
          "levels": [{"latency_us": 1, "bandwidth_gbps": 10}]})");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("loop_step_us"), std::string::npos);
}

TEST(DeviceModelTest, RejectsBadJson) {
  EXPECT_FALSE(ParseDeviceModelJson("[]").ok());
  EXPECT_FALSE(ParseDeviceModelJson(R"({"memory_bytes": 1, "levels": []})").ok());
  absl::StatusOr<DeviceModel> m = ParseDeviceModelJson(
      R"({"flops_per_second": {"f32": 1e12}, "memory_bytes": 1,
          "levels": [{"latency_us": 1, "bandwidth_gbps": 0}]})");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("bandwidth_gbps"), std::string::npos);
  EXPECT_FALSE(LoadDeviceModel("/nonexistent/model.json").ok());
}

TEST(ChooseNearFastestTest, FewestBytesAmongTheNearlyFastest) {
  // 104 us is within 5% of 100 us and receives fewer bytes; 106 us is not, however few it moves.
  EXPECT_EQ(ChooseNearFastest({100.0, 104.0, 106.0}, {1000, 800, 10}), 1u);
  // Equal bytes: the lesser time, unless `prefer` says otherwise; then the earlier.
  EXPECT_EQ(ChooseNearFastest({101.0, 100.0}, {500, 500}), 1u);
  EXPECT_EQ(ChooseNearFastest({101.0, 100.0}, {500, 500}, [](size_t, size_t) { return false; }),
            0u);
  EXPECT_EQ(ChooseNearFastest({100.0, 100.0}, {500, 500}), 0u);
  // An ineligible candidate (infinite time) is never chosen while another is eligible.
  EXPECT_EQ(ChooseNearFastest({std::numeric_limits<double>::infinity(), 7.0}, {0, 9}), 1u);
  EXPECT_EQ(ChooseNearFastest({}, {}), 0u);
}

}  // namespace
}  // namespace spmd
