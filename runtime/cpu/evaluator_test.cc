// Tests of the evaluator's own control flow: fusion and async-start run their called
// computations, and a while loop that never ends stops at the trip limit (or, when an
// iteration leaves its state unchanged, at once) with an error naming it.
#include "runtime/cpu/evaluator.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/literal.h"
#include "hlo/parser/hlo_parser.h"

namespace runtime {
namespace {

using hlo::Literal;

absl::StatusOr<Literal> RunText(const std::string& text, int64_t max_trips) {
  auto module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  Evaluator evaluator(**module, {});
  evaluator.set_max_while_trips(max_trips);
  return evaluator.RunEntry({});
}

TEST(EvaluatorTest, FusionRunsItsCalledComputation) {
  absl::StatusOr<Literal> r = RunText(R"(
HloModule m
fused { a = s32[2] parameter(0)  b = s32[2] parameter(1)  ROOT s = s32[2] subtract(a, b) }
ENTRY e {
  x = s32[2] constant({5, 7})
  y = s32[2] constant({1, 2})
  ROOT f = s32[2] fusion(x, y), kind=kLoop, calls=fused
})", Evaluator::kDefaultMaxWhileTrips);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->GetInt(0), 4);
  EXPECT_EQ(r->GetInt(1), 5);
}

TEST(EvaluatorTest, AsyncStartRunsItsComputationAndDoneTakesTheResult) {
  absl::StatusOr<Literal> r = RunText(R"(
HloModule m
callee { a = s32[2] parameter(0)  b = s32[2] parameter(1)  ROOT s = s32[2] subtract(a, b) }
ENTRY e {
  x = s32[2] constant({5, 7})
  y = s32[2] constant({1, 2})
  start = ((s32[2], s32[2]), s32[2], u32[]) call-start(x, y), to_apply=callee
  ROOT done = s32[2] call-done(start)
})", Evaluator::kDefaultMaxWhileTrips);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->GetInt(0), 4);
  EXPECT_EQ(r->GetInt(1), 5);
}

const char kCountTo[] = R"(
HloModule m
body { p = s32[] parameter(0)  one = s32[] constant(1)  ROOT n = s32[] add(p, one) }
cond { p = s32[] parameter(0)  limit = s32[] constant(LIMIT)  ROOT lt = pred[] compare(p, limit), direction=LT }
ENTRY e { zero = s32[] constant(0)  ROOT loop = s32[] while(zero), condition=cond, body=body }
)";

std::string CountTo(int limit) {
  std::string text = kCountTo;
  text.replace(text.find("LIMIT"), 5, std::to_string(limit));
  return text;
}

TEST(EvaluatorTest, WhileRunsUpToTheTripLimit) {
  absl::StatusOr<Literal> r = RunText(CountTo(100), 100);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->GetInt(0), 100);
}

TEST(EvaluatorTest, WhileBeyondTheTripLimitIsAnErrorNamingTheLoop) {
  absl::StatusOr<Literal> r = RunText(CountTo(101), 100);
  ASSERT_FALSE(r.ok());
  const std::string message(r.status().message());
  EXPECT_NE(message.find("%loop"), std::string::npos) << message;
  EXPECT_NE(message.find("100 iterations"), std::string::npos) << message;
}

TEST(EvaluatorTest, WhileWhoseBodyChangesNothingIsAnErrorAtOnce) {
  // body adds zero: the state never changes and the condition always holds. Without the
  // progress check this would run to the (here huge) trip limit.
  std::string text = CountTo(5);
  text.replace(text.find("constant(1)"), 11, "constant(0)");
  absl::StatusOr<Literal> r = RunText(text, int64_t{1} << 60);
  ASSERT_FALSE(r.ok());
  const std::string message(r.status().message());
  EXPECT_NE(message.find("%loop: while loop never ends: iteration 1 leaves its state unchanged"),
            std::string::npos)
      << message;
}

TEST(EvaluatorTest, WhileWhoseConditionReadsOnlyPassedThroughStateIsAnErrorAtOnce) {
  // The counter is passed through unchanged while the body does other (here: random) work,
  // so the progress check cannot see it; the condition still never changes.
  absl::StatusOr<Literal> r = RunText(R"(
HloModule m
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  x = f32[4] rng(lo, hi), distribution=rng_uniform
  ROOT t = (s32[], f32[4]) tuple(i, x)
}
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  limit = s32[] constant(3)
  ROOT lt = pred[] compare(i, limit), direction=LT
}
ENTRY e {
  zero = s32[] constant(0)
  v = f32[4] constant({1, 2, 3, 4})
  init = (s32[], f32[4]) tuple(zero, v)
  ROOT loop = (s32[], f32[4]) while(init), condition=cond, body=body
})", int64_t{1} << 60);
  ASSERT_FALSE(r.ok());
  const std::string message(r.status().message());
  EXPECT_NE(message.find("%loop: while loop never ends: its condition holds"), std::string::npos)
      << message;
  // A loop that counts is not flagged.
  EXPECT_TRUE(RunText(CountTo(3), 100).ok());
}

}  // namespace
}  // namespace runtime
