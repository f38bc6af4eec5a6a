// The HTML views on small hand-written modules: the values each view must show are worked out
// by hand from the module text (device grids from the tile assignment, live bytes from the
// shapes), not copied from the output.
#include "tools/inspect/html_report.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/inspect/html_diff.h"
#include "tools/inspect/html_sharding.h"
#include "tools/inspect/program_graph.h"

namespace tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A [2,4]-tiled dot's output sliced by an offset table: the index arithmetic (constant table,
// partition-id, dynamic-slice, reshape, compare) feeds a dynamic-slice; one all-reduce.
constexpr char kPartitioned[] = R"(
HloModule m, num_partitions=8

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main {
  p = f32[64,32] parameter(0), sharding={devices=[2,4]<=[8]}
  q = f32[16] parameter(1), sharding={devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}
  table = s32[8] constant({0, 8, 16, 24, 0, 8, 16, 24})
  pid = u32[] partition-id()
  ds = s32[1] dynamic-slice(table, pid), dynamic_slice_sizes={1}
  offset = s32[] reshape(ds)
  zero = s32[] constant(0)
  slice = f32[64,8] dynamic-slice(p, zero, offset), dynamic_slice_sizes={64,8}
  ROOT ar = f32[64,8] all-reduce(slice), replica_groups=[2,4]<=[8], to_apply=add, metadata={op_name="jit(f)/dot_general"}
}
)";

// The same computation, unpartitioned: global shapes, no collective, no partition-id.
constexpr char kUnpartitioned[] = R"(
HloModule m

ENTRY main {
  p = f32[64,32] parameter(0)
  ROOT n = f32[64,32] negate(p)
}
)";

std::unique_ptr<InspectedModule> Inspect(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::path(testing::TempDir()) / name;
  std::ofstream(path) << text;
  absl::StatusOr<std::unique_ptr<InspectedModule>> m = InspectModule(path.string(), {});
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlReportTest, SummaryInHumanUnitsFirst) {
  auto m = Inspect("partitioned.hlo", kPartitioned);
  ASSERT_NE(m, nullptr);
  const std::string html = InspectReportHtml(*m);
  // The all-reduce of f32[64,8] (2 KiB) in groups of 4: a ring receives 2 * 3/4 * 2048 bytes.
  EXPECT_THAT(html, HasSubstr("<div class=\"value\">3.0 KiB</div><div class=\"label\">bytes "
                              "received per device"));
  EXPECT_LT(html.find("id=\"summary\""), html.find("id=\"by-source\""));
  EXPECT_LT(html.find("id=\"by-source\""), html.find("id=\"graph-section\""));
  EXPECT_THAT(html, Not(HasSubstr("id=\"not-spmd\"")));
  EXPECT_THAT(html, HasSubstr("<td>jit(f)/dot_general</td>"));
}

TEST(HtmlReportTest, WarnsWhenTheModuleIsNotAnSpmdProgram) {
  auto m = Inspect("unpartitioned.hlo", kUnpartitioned);
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(InspectReportHtml(*m), HasSubstr("id=\"not-spmd\">Warning: this module is not an "
                                               "SPMD program"));
  EXPECT_THAT(InspectReportText(*m), HasSubstr("warning: this module is not an SPMD program"));
}

TEST(HtmlReportTest, FoldsIndexArithmeticIntoItsUser) {
  auto m = Inspect("partitioned.hlo", kPartitioned);
  ASSERT_NE(m, nullptr);
  GraphOptions options;
  options.fold_index_arithmetic = true;
  const std::vector<ComputationGraph> graphs = BuildProgramGraph(*m->parsed.module, options);
  ASSERT_FALSE(graphs.empty());
  const ComputationGraph& entry = graphs.front();
  EXPECT_EQ(entry.num_folded, 5);  // table, pid, ds, offset, zero.
  for (const GraphNode& n : entry.nodes) {
    if (n.instr->name() == "slice") EXPECT_EQ(n.folded_inputs.size(), 5u);
    if (n.instr->name() == "p" || n.instr->name() == "ar") EXPECT_FALSE(n.folded);
  }
  const std::string html = InspectReportHtml(*m);
  EXPECT_THAT(html, HasSubstr("+5 index ops"));
  EXPECT_THAT(
      html,
      Not(HasSubstr(
          "id=\"n" +
          std::to_string(m->parsed.module->entry_computation()->instructions()[3]->unique_id()) +
          "\"")));  // pid is not drawn.
  EXPECT_THAT(html, HasSubstr("receives 3.0 KiB"));
}

TEST(HtmlReportTest, ShardingGridNamesTheDevicesOfEachBlock) {
  auto m = Inspect("partitioned.hlo", kPartitioned);
  ASSERT_NE(m, nullptr);
  const std::vector<ShardedValue> values = EntryShardings(*m->parsed.module);
  ASSERT_EQ(values.size(), 2u);
  const std::string html = ShardingSection(values, 8, "test");
  // p: [2,4]<=[8], block (1,2) holds device 1*4+2 = 6.
  EXPECT_THAT(html, HasSubstr("title=\"block (1,2) of f32[64,32]: devices 6\""));
  // q: tiles [2] over devices <=[4,2]T(1,0) = 0,2,4,6,1,3,5,7 as [2,4]: block 0 = {0,2,4,6}.
  EXPECT_THAT(html, HasSubstr("title=\"block (0,0) of f32[16]: devices 0,2,4,6\""));
  EXPECT_THAT(html, HasSubstr("title=\"block (0,1) of f32[16]: devices 1,3,5,7\""));
  EXPECT_THAT(html, HasSubstr("mesh [2,4]: dim 0 in 2, replicated x4"));
  EXPECT_EQ(Count(html, "class=\"block\""), 8u + 2u);
}

TEST(HtmlReportTest, MemoryCurveFollowsTheInstructionOrder) {
  auto m = Inspect("unpartitioned.hlo", kUnpartitioned);
  ASSERT_NE(m, nullptr);
  // p (8 KiB) lives throughout; n adds 8 KiB.
  EXPECT_EQ(m->peak.live_bytes, (std::vector<int64_t>{8192, 16384}));
  EXPECT_THAT(InspectReportHtml(*m), HasSubstr("data-bytes=\"8192 16384\""));
}

TEST(HtmlReportTest, DiffPairsCollectivesWhateverTheGroupNotation) {
  auto a = Inspect("a.hlo", kPartitioned);
  std::string other = kPartitioned;
  other.replace(other.find("replica_groups=[2,4]<=[8]"), 25,
                "replica_groups={{0,1,2,3},{4,5,6,7}}");
  auto b = Inspect("b.hlo", other);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const std::string html = DiffReportHtml(*a, *b);
  EXPECT_THAT(html, HasSubstr("<table id=\"diff-summary\">"));
  EXPECT_EQ(Count(html, "<tr class=\"pair\" data-compare=\"same\">"), 1u);
  EXPECT_THAT(html, HasSubstr("id=\"a-shardings\""));
  EXPECT_THAT(html, HasSubstr("id=\"b-memory\""));
}

}  // namespace
}  // namespace tools
