// Error lines taken apart for failure records, and the baseline comparison's edge cases.
#include "tools/batch/json_records.h"

#include "gtest/gtest.h"
#include "tools/batch/baseline.h"

namespace tools {
namespace {

TEST(ParseErrorLineTest, PlacesWithAndWithoutPositions) {
  LocatedError e = ParseErrorLine("C:/m:x.hlo:3:18: error: unknown opcode 'frob'");
  EXPECT_EQ(e.file, "C:/m:x.hlo");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.column, 18);
  EXPECT_EQ(e.message, "unknown opcode 'frob'");
  e = ParseErrorLine("out/a:b.hlo: error: cannot write");
  EXPECT_EQ(e.file, "out/a:b.hlo");
  EXPECT_EQ(e.line, 0);
  EXPECT_EQ(e.message, "cannot write");
  e = ParseErrorLine("no place at all");
  EXPECT_EQ(e.file, "");
  EXPECT_EQ(e.message, "no place at all");
}

TEST(FailureRecordTest, NullPositionsWhenNoneNamed) {
  const BatchInput input{"d/x.hlo", "x", "x.hlo"};
  EXPECT_EQ(spmd::ToJson(FailureRecord(input, "read", "d/x.hlo: error: not found")),
            R"({"input": "d/x.hlo", "error": "d/x.hlo: error: not found", "key": "x.hlo", )"
            R"("kind": "read", "file": "d/x.hlo", "line": null, "column": null, )"
            R"("message": "not found"})");
}

TEST(CompareWithBaselineTest, ToleranceZeroesAndOneSidedModules) {
  Baseline baseline;
  baseline.path = "b.jsonl";
  baseline.modules["a"] = ModuleMetrics{100, 10, 0};
  baseline.modules["failed"] = std::nullopt;
  baseline.modules["gone"] = ModuleMetrics{1, 1, 1};
  const std::vector<std::pair<std::string, std::optional<ModuleMetrics>>> run = {
      {"a", ModuleMetrics{110, 5, 8}}, {"failed", ModuleMetrics{1, 1, 1}}, {"new", std::nullopt}};
  BaselineReport report = CompareWithBaseline(baseline, run, 10);
  ASSERT_EQ(report.changes.size(), 3u);
  EXPECT_FALSE(report.changes[0].regression);  // +10% is within 10%.
  EXPECT_FALSE(report.changes[1].regression);  // Shrank.
  EXPECT_TRUE(report.changes[2].regression);   // Grew from zero.
  EXPECT_EQ(report.regressions(), 1u);
  EXPECT_EQ(report.failed_in_baseline, std::vector<std::string>{"failed"});
  EXPECT_TRUE(report.not_in_baseline.empty());  // "new" failed in this run: not listed.
  EXPECT_EQ(report.not_in_run, std::vector<std::string>{"gone"});
  EXPECT_NE(report.Text().find("baseline: a: peak memory per device grew 0 bytes -> 8 bytes (new, "
                               "over the tolerance of 10%)\n"),
            std::string::npos)
      << report.Text();
  EXPECT_NE(spmd::ToJson(report.Json()).find("\"change_percent\": null"), std::string::npos);
}

}  // namespace
}  // namespace tools
