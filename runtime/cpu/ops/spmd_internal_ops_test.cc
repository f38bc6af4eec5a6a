// Tests of the internal SPMD custom-calls (spmd_internal_ops.cc) and the debug custom-calls
// (debug_custom_calls.cc) on small hand-checked examples, through the parser and the evaluator.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/custom_call_config.h"
#include "hlo/ir/literal.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {
namespace {

using hlo::CustomCallConfig;
using hlo::Literal;
using V = std::vector<int64_t>;

absl::StatusOr<Literal> RunBody(const std::string& body) {
  auto module = hlo::ParseHloModule("HloModule m\nENTRY e {\n" + body + "\n}\n");
  if (!module.ok()) return module.status();
  return Evaluator(**module, {}).RunEntry({});
}

V Ints(const Literal& l) {
  V v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetInt(i));
  return v;
}

// The results of `call` (a custom-call on x) as integer lists, one per tuple element.
std::vector<V> RunCall(const std::string& x, const std::string& call) {
  absl::StatusOr<Literal> r = RunBody("x = " + x + "\n" + call);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  if (!r->shape().IsTuple()) return {Ints(*r)};
  std::vector<V> out;
  for (const Literal& e : r->tuple_elements()) out.push_back(Ints(e));
  return out;
}

const char kIota5[] = "s32[5] constant({0, 1, 2, 3, 4})";

TEST(SpmdInternalOpsTest, RotateRight) {
  EXPECT_EQ(RunCall(kIota5, R"(ROOT r = s32[5] custom-call(x),
      custom_call_target="_SPMDInternalOp_RotateRight", backend_config="dimension=0,amount=2")"),
            (std::vector<V>{{3, 4, 0, 1, 2}}));
  EXPECT_EQ(RunCall("s32[2,3] constant({{0, 1, 2}, {3, 4, 5}})", R"(ROOT r = s32[2,3] custom-call(x),
      custom_call_target="_SPMDInternalOp_RotateRight", backend_config="dimension=1,amount=4")"),
            (std::vector<V>{{2, 0, 1, 5, 3, 4}}));
}

TEST(SpmdInternalOpsTest, MultiRotate) {
  EXPECT_EQ(RunCall(kIota5, R"(ROOT r = (s32[5], s32[5], s32[5]) custom-call(x),
      custom_call_target="_SPMDInternalOp_MultiRotate",
      backend_config="dimension=0,left_amount=1,right_amount=1,bufferize=0")"),
            (std::vector<V>{{1, 2, 3, 4, 0}, {0, 1, 2, 3, 4}, {4, 0, 1, 2, 3}}));
}

TEST(SpmdInternalOpsTest, Wrap) {
  EXPECT_EQ(RunCall(kIota5, R"(ROOT r = s32[8] custom-call(x),
      custom_call_target="_SPMDInternalOp_Wrap",
      backend_config="dimension=0,left_amount=1,right_amount=2")"),
            (std::vector<V>{{4, 0, 1, 2, 3, 4, 0, 1}}));
  // A longer declared result is zero past the wrapped array.
  EXPECT_EQ(RunCall(kIota5, R"(ROOT r = s32[10] custom-call(x),
      custom_call_target="_SPMDInternalOp_Wrap",
      backend_config="dimension=0,left_amount=1,right_amount=2")"),
            (std::vector<V>{{4, 0, 1, 2, 3, 4, 0, 1, 0, 0}}));
}

TEST(SpmdInternalOpsTest, MultiPad) {
  EXPECT_EQ(RunCall("s32[3] constant({1, 2, 3})", R"(p = s32[] constant(9)
      ROOT r = (s32[5], s32[5], s32[5]) custom-call(x, p),
      custom_call_target="_SPMDInternalOp_MultiPad", backend_config="dimension=0,amt=2,bufferize=0")"),
            (std::vector<V>{{9, 9, 1, 2, 3}, {9, 1, 2, 3, 9}, {1, 2, 3, 9, 9}}));
}

TEST(SpmdInternalOpsTest, MultiSlice) {
  EXPECT_EQ(RunCall("s32[6] constant({0, 1, 2, 3, 4, 5})", R"(ROOT r = (s32[3], s32[3], s32[3]) custom-call(x),
      custom_call_target="_SPMDInternalOp_MultiSlice",
      backend_config="dimension=0,amount=2,start_indices=[1],limit_indices=[4],strides=[1],bufferize=0")"),
            (std::vector<V>{{1, 2, 3}, {2, 3, 4}, {3, 4, 5}}));
  // Two dimensions, a stride, and the shift along dimension 1.
  EXPECT_EQ(RunCall("s32[2,6] constant({{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}})",
                    R"(ROOT r = (s32[1,2], s32[1,2]) custom-call(x),
      custom_call_target="_SPMDInternalOp_MultiSlice",
      backend_config="dimension=1,amount=1,start_indices=[1, 0],limit_indices=[2, 4],strides=[1, 2]")"),
            (std::vector<V>{{6, 8}, {7, 9}}));
}

TEST(SpmdInternalOpsTest, BadConfigsAreClearErrors) {
  absl::StatusOr<Literal> r = RunBody(std::string("x = ") + kIota5 + R"(
      ROOT r = s32[5] custom-call(x), custom_call_target="_SPMDInternalOp_RotateRight",
      backend_config="dimension=0,amount=2,speed=3")");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("unsupported key \"speed\""), std::string::npos)
      << r.status().ToString();
  r = RunBody(std::string("x = ") + kIota5 + R"(
      ROOT r = s32[5] custom-call(x), custom_call_target="_SPMDInternalOp_RotateRight",
      backend_config="dimension=0")");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("lacks \"amount\""), std::string::npos);
  r = RunBody(std::string("x = ") + kIota5 + R"(
      ROOT r = (s32[3], s32[3]) custom-call(x), custom_call_target="_SPMDInternalOp_MultiSlice",
      backend_config="dimension=0,amount=1,start_indices=[2],limit_indices=[5],strides=[1]")");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("outside dimension 0"), std::string::npos)
      << r.status().ToString();
}

TEST(CustomCallConfigTest, ParsesIntegersAndLists) {
  absl::StatusOr<CustomCallConfig> c = CustomCallConfig::Parse(
      "t", "a=-3, b=[1, 2,3],c=[]", std::vector<std::string_view>{"a", "b", "c"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(*c->Int("a"), -3);
  EXPECT_EQ(*c->List("b"), (V{1, 2, 3}));
  EXPECT_TRUE(c->List("c")->empty());
  EXPECT_FALSE(c->Int("b").ok());
  EXPECT_FALSE(CustomCallConfig::Parse("t", "a=1,a=2", std::vector<std::string_view>{"a"}).ok());
  EXPECT_FALSE(CustomCallConfig::Parse("t", "a=x", std::vector<std::string_view>{"a"}).ok());
}

TEST(DebugCustomCallsTest, LogIsANoOpAndRngSeedIsFixed) {
  absl::StatusOr<Literal> log = RunBody(std::string("x = ") + kIota5 + R"(
      ROOT r = () custom-call(x), custom_call_target="xla.debug.Log", custom_call_has_side_effect=true)");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_TRUE(log->shape().IsTuple());
  absl::StatusOr<Literal> seed = RunBody(R"(ROOT s = u64[] custom-call(), custom_call_target="GetRngSeed")");
  ASSERT_TRUE(seed.ok()) << seed.status().ToString();
  EXPECT_EQ(seed->GetInt(0), 42);
}

}  // namespace
}  // namespace runtime
