// Every emitted reshard, run by the CPU executor (runtime/cpu) on 8 simulated devices: each
// device's result must hold exactly its shard of the target sharding. A test-only dependency on
// the runtime layer (the executor is the project's oracle); the planner and emitter do not
// depend on it.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/literal.h"
#include "runtime/cpu/multi_device_runner.h"
#include "spmd/reshard/reshard_testing.h"

namespace spmd {
namespace {

using testing::kTestDevices;

hlo::Literal ToLiteral(const testing::SimArray& array) {
  hlo::Literal literal(hlo::Shape::Array(hlo::PrimitiveType::kF32, array.dims));
  for (size_t i = 0; i < array.data.size(); ++i) literal.SetDouble(i, array.data[i]);
  return literal;
}

testing::SimArray FromLiteral(const hlo::Literal& literal) {
  testing::SimArray array{literal.shape().dimensions(), {}};
  for (int64_t i = 0; i < literal.element_count(); ++i) array.data.push_back(literal.GetDouble(i));
  return array;
}

TEST(ReshardExecutorTest, EveryPairRunsOnEightDevices) {
  ReshardPlanner planner;
  int checked = 0;
  for (const hlo::Shape& shape : testing::TestShapes()) {
    const std::vector<double> full = testing::RandomArray(shape, 11);
    for (const std::string& from_text : testing::TestShardings()) {
      for (const std::string& to_text : testing::TestShardings()) {
        const hlo::HloSharding from = hlo::HloSharding::Parse(from_text).value();
        const hlo::HloSharding to = hlo::HloSharding::Parse(to_text).value();
        absl::StatusOr<testing::ReshardModule> built =
            testing::BuildReshardModule(shape, from, to, planner);
        ASSERT_TRUE(built.ok()) << built.status();
        SCOPED_TRACE(built->plan->Explain() + built->module->ToString());
        std::vector<std::vector<hlo::Literal>> args(kTestDevices);
        for (int64_t device = 0; device < kTestDevices; ++device) {
          args[device].push_back(ToLiteral(testing::ShardOf(full, shape, from, device)));
        }
        runtime::MultiDeviceOptions options;
        options.num_partitions = kTestDevices;
        options.collective_timeout_seconds = 20;
        absl::StatusOr<std::vector<hlo::Literal>> results =
            runtime::RunOnDevices(*built->module, std::move(args), options);
        ASSERT_TRUE(results.ok()) << results.status();
        for (int64_t device = 0; device < kTestDevices; ++device) {
          EXPECT_EQ(testing::CheckShard(FromLiteral((*results)[device]), full, shape, to, device),
                    "");
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3 * 15 * 15);
}

}  // namespace
}  // namespace spmd
