// End-to-end: spmd-inspect. The statistics, collectives table and peak memory of a module in
// XLA's post-partitioning syntax (tests/testdata/inspect/xla_dump_spmd.hlo: entry main.5_spmd,
// iota replica groups, a fusion, async pairs, a while loop with a known trip count) and of a
// hand-partitioned matmul in our syntax, all against numbers computed by hand from the
// contract's formulas; --dot, --html, --diff; errors and exit codes.
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tool_runner.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using testing_tools::Outcome;
using testing_tools::RunShell;

constexpr char kTool[] = "tools/spmd-inspect ";
constexpr char kDump[] = "tests/testdata/inspect/xla_dump_spmd.hlo";

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// S is the per-device buffer, g the largest group (xla_dump_spmd.hlo has 8 partitions):
//   all-gather-start      S_out f32[16,64] = 4096 B, g = 4 ([2,4]<=[4,2]T(1,0)): 3072
//   all-reduce-start      S = f32[16,32] = 2048 B, g = 8 ([1,8]<=[8]): 2*2048*7/8 = 3584
//   reduce-scatter-start  S_in = 2048 B, g = 8: 1792
//   all-to-all            S = 2048 B, g = 2: 1024
//   collective-permute-start in the loop body, 3 iterations, S = 2048 B: 6144
// FLOPs: the fusion's multiply 16*64 = 1024, the dot 2*16*32*64 = 65536, the loop's s32 add
// 3 times = 66563. Instructions: entry 17, fusion 2, condition 4, body 8 = 31.
// Peak: param 1024 + param.1 8192 + param.2 2048 + all-gather-start's output 4096 + fusion
// 4096 = 19456, when the fusion is computed.
TEST(InspectTest, XlaDumpStatisticsHandComputed) {
  Outcome r = RunShell(std::string(kTool) + "--stats json " + kDump);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"module\": \"jit_step\""));
  EXPECT_THAT(r.out, HasSubstr("\"num_partitions\": 8, \"instructions\": {\"before\": 31, "
                               "\"after\": 31}"));
  EXPECT_THAT(r.out, HasSubstr("\"per_device\": {\"flops\": 66563, \"comm_bytes\": 15616, "
                               "\"peak_memory_bytes\": 19456}"));
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "\"collectives\": {\"all-gather\": {\"count\": 1, \"bytes\": 3072}, \"all-reduce\": "
          "{\"count\": 1, \"bytes\": 3584}, \"reduce-scatter\": {\"count\": 1, \"bytes\": 1792}, "
          "\"all-to-all\": {\"count\": 1, \"bytes\": 1024}, \"collective-permute\": {\"count\": 3, "
          "\"bytes\": 6144}}"));
  EXPECT_EQ(Count(r.out, "\n"), 1u);
  // The step-time estimate comes from the cost model (spmd/cost), here only checked to be set.
  EXPECT_THAT(r.out, Not(HasSubstr("\"estimated_step_time_us\": 0.000")));
}

TEST(InspectTest, XlaDumpTables) {
  Outcome r = RunShell(std::string(kTool) + kDump);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("collectives: 5 instructions"));
  EXPECT_THAT(
      r.out,
      MatchesRegex("(.|\n)*1 +all-gather +all-gather-start +main.5_spmd +"
                   "f32\\[16,64\\] +\\[2,4\\]<=\\[4,2\\]T\\(1,0\\) +4 +1 +3072 +3072\n(.|\n)*"));
  EXPECT_THAT(
      r.out, MatchesRegex("(.|\n)*3 +reduce-scatter +reduce-scatter-start +main.5_spmd +"
                          "f32\\[2,32\\] +\\{\\{0,1,2,3,4,5,6,7\\}\\} +8 +1 +1792 +1792\n(.|\n)*"));
  EXPECT_THAT(
      r.out,
      MatchesRegex("(.|\n)*5 +collective-permute +collective-permute-start +"
                   "while_body +f32\\[16,32\\] +\\{\\{0,1\\},(.|\n)* +- +3 +2048 +6144\n(.|\n)*"));
  EXPECT_THAT(r.out, HasSubstr("peak memory per device: 19456 bytes, at fusion (main.5_spmd)"));
  EXPECT_THAT(r.out, MatchesRegex("(.|\n)*8192 +param.1 +parameter +f32\\[64,32\\]\n(.|\n)*"));
}

// matmul_spmd.hlo (our syntax, 8 partitions): xg gathers f32[4,16] = 256 B in groups of 4:
// 192; wg gathers f32[16,12] = 768 B in groups of 2: 384. Nothing else communicates.
TEST(InspectTest, HandPartitionedMatmulInOurSyntax) {
  Outcome r = RunShell(std::string(kTool) + "--stats json tests/testdata/matmul_spmd.hlo");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"comm_bytes\": 576"));
  EXPECT_THAT(r.out, HasSubstr("\"all-gather\": {\"count\": 2, \"bytes\": 576}"));
}

TEST(InspectTest, DotAndHtmlOutputs) {
  const fs::path dir = testing_tools::FreshDir("outputs");
  Outcome r = RunShell(std::string(kTool) + kDump + " --dot " + (dir / "g.dot").string() +
                       " --html " + (dir / "r.html").string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string dot = testing_tools::ReadFile(dir / "g.dot");
  EXPECT_THAT(dot, HasSubstr("digraph \"jit_step\" {"));
  EXPECT_THAT(dot, HasSubstr("label=\"main.5_spmd\""));
  EXPECT_THAT(dot, HasSubstr("label=\"while_body\""));
  // Both halves of the four async pairs, and the all-to-all.
  EXPECT_EQ(Count(dot, "fillcolor=\"#f5a623\""), 9u);
  EXPECT_THAT(dot, HasSubstr("sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}"));
  const std::string html = testing_tools::ReadFile(dir / "r.html");
  EXPECT_THAT(html, HasSubstr("<table id=\"collectives\">"));
  EXPECT_EQ(Count(html, "<tr data-node="), 5u);
  EXPECT_EQ(Count(html, "<g class=\"node collective\""), 9u);
  // Self-contained: nothing is loaded from elsewhere.
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("href=")));
  EXPECT_THAT(html, Not(HasSubstr("https:")));
}

TEST(InspectTest, DiffOfTwoPartitionings) {
  Outcome r =
      RunShell(std::string(kTool) +
               "--diff tests/testdata/matmul_spmd.hlo tests/testdata/matmul_spmd_wrong_group.hlo");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, MatchesRegex("(.|\n)*all-gather bytes +576 +576 +0\n(.|\n)*"));
  // Same devices in another order: an all-gather concatenates in group order, so they differ.
  EXPECT_THAT(r.out,
              MatchesRegex("(.|\n)*1 +all-gather +xg +f32\\[4,16\\] +\\[2,4\\]<=\\[4,2\\]T\\(1,0\\)"
                           " +1 +192 +\\| +all-gather +xg +f32\\[4,16\\] +"
                           "\\{\\{0,2,6,4\\},\\{1,3,5,7\\}\\} +1 +192 +other groups\n(.|\n)*"));
  EXPECT_THAT(r.out, MatchesRegex("(.|\n)*2 +all-gather +wg (.|\n)* +same\n(.|\n)*"));
  // Against the unpartitioned module (1 device): the parameters' per-device shapes differ.
  Outcome full = RunShell(std::string(kTool) +
                          "--diff tests/testdata/matmul.hlo tests/testdata/matmul_spmd.hlo");
  ASSERT_EQ(full.code, 0) << full.err;
  EXPECT_THAT(full.out, MatchesRegex("(.|\n)*all-gather count +0 +2 +\\+2\n(.|\n)*"));
  EXPECT_THAT(full.out,
              MatchesRegex("(.|\n)*\n  x +parameter +f32\\[8,16\\] +f32\\[4,4\\]\n(.|\n)*"));
}

// Our partitioner gives every instruction it makes for an op that op's metadata (as XLA's
// does), so --by-source can say which source op and line the bytes are received for. The FSDP
// weight w (f32[16,8], split over 2 devices) is gathered for the dot: 512 B in groups of 2,
// 256 B received; the negate needs nothing.
TEST(InspectTest, BytesBySourceOpAndLine) {
  const fs::path dir = testing_tools::FreshDir("by_source");
  testing_tools::WriteFile(dir / "m.hlo", R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[8,16] parameter(0), sharding={devices=[2,1]0,1}
  w = f32[16,8] parameter(1), sharding={devices=[2,1]0,1}
  d = f32[8,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1]0,1}, metadata={op_name="mlp/dot" source_file="model.py" source_line=12}
  ROOT n = f32[8,8] negate(d), sharding={devices=[2,1]0,1}, metadata={op_name="mlp/neg" source_file="model.py" source_line=13}
}
)");
  const std::string out = (dir / "out.hlo").string();
  Outcome p = RunShell("tools/spmd-partition " + (dir / "m.hlo").string() + " -o " + out);
  ASSERT_EQ(p.code, 0) << p.err;
  const std::string partitioned = testing_tools::ReadFile(out);
  EXPECT_THAT(partitioned,
              HasSubstr("all-gather(%w), dimensions={0}, channel_id=1, replica_groups=[1,2]<=[2], "
                        "use_global_device_ids=true, metadata={op_name=\"mlp/dot\" "
                        "source_file=\"model.py\" source_line=12}"));
  Outcome r = RunShell(std::string(kTool) + out + " --by-source 5");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("by source op (256 bytes)"));
  EXPECT_THAT(r.out, MatchesRegex("(.|\n)*\n +256 +100% +1 +mlp/dot\n(.|\n)*"));
  EXPECT_THAT(r.out, MatchesRegex("(.|\n)*\n +256 +100% +1 +model.py:12\n(.|\n)*"));
  EXPECT_THAT(r.out, Not(HasSubstr("mlp/neg")));
}

// Two partitionings name and order their collectives differently: --diff pairs them by kind,
// shape and replica groups (iota and explicit lists alike), lists the unpaired ones, and with
// --fail-on-increase exits 1 when B moves more bytes than A (the permute's 512 B here).
TEST(InspectTest, DiffPairsCollectivesByWhatTheyDo) {
  const fs::path dir = testing_tools::FreshDir("diff_pairs");
  testing_tools::WriteFile(dir / "a.hlo", R"(HloModule m, num_partitions=4
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8,16] parameter(0)
  g = f32[16,16] all-gather(p), dimensions={0}, replica_groups=[2,2]<=[4], use_global_device_ids=true, channel_id=1
  ROOT r = f32[16,16] all-reduce(g), replica_groups=[1,4]<=[4], use_global_device_ids=true, channel_id=2, to_apply=add
}
)");
  testing_tools::WriteFile(dir / "b.hlo", R"(HloModule m, num_partitions=4
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[8,16] parameter(0)
  extra = f32[8,16] collective-permute(p), source_target_pairs={{0,1},{1,0},{2,3},{3,2}}, channel_id=3
  gathered = f32[16,16] all-gather(extra), dimensions={0}, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, channel_id=4
  ROOT sum = f32[16,16] all-reduce(gathered), replica_groups={{3,1,0,2}}, use_global_device_ids=true, channel_id=5, to_apply=add
}
)");
  const std::string pair = (dir / "a.hlo").string() + " " + (dir / "b.hlo").string();
  Outcome r = RunShell(std::string(kTool) + "--diff " + pair);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out,
              MatchesRegex("(.|\n)*1 +all-gather +g +f32\\[16,16\\] +\\[2,2\\]<=\\[4\\] (.|\n)*"
                           "\\| +all-gather +gathered +f32\\[16,16\\] +\\{\\{0,1\\},\\{2,3\\}\\} "
                           "(.|\n)* +same\n(.|\n)*"));
  // An all-reduce's group order does not matter: {{3,1,0,2}} is [1,4]<=[4].
  EXPECT_THAT(
      r.out,
      MatchesRegex("(.|\n)*2 +all-reduce +r (.|\n)*\\| +all-reduce +sum (.|\n)* +same\n(.|\n)*"));
  EXPECT_THAT(r.out,
              MatchesRegex("(.|\n)*\\| +collective-permute +extra (.|\n)* +B only\n(.|\n)*"));
  Outcome same = RunShell(std::string(kTool) + "--fail-on-increase --diff " +
                          (dir / "a.hlo").string() + " " + (dir / "a.hlo").string());
  EXPECT_EQ(same.code, 0) << same.err;
  Outcome grew = RunShell(std::string(kTool) + "--fail-on-increase --diff " + pair);
  EXPECT_EQ(grew.code, 1) << grew.out;
  EXPECT_THAT(grew.err, HasSubstr("B grew: bytes received per device"));
}

TEST(InspectTest, BadInputFailsWithLocationAndNoOutput) {
  const fs::path dir = testing_tools::FreshDir("bad");
  testing_tools::WriteFile(dir / "bad.hlo",
                           "HloModule m\nENTRY e {\n  ROOT p = f32[] frob(0)\n}\n");
  Outcome r = RunShell(std::string(kTool) + (dir / "bad.hlo").string() + " --html " +
                       (dir / "r.html").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, (dir / "bad.hlo").string() + ":3:18: error: unknown opcode 'frob'\n");
  EXPECT_FALSE(fs::exists(dir / "r.html"));
  testing_tools::WriteFile(dir / "shape.hlo",
                           "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n"
                           "  ROOT r = f32[3] negate(a)\n}\n");
  Outcome v = RunShell(std::string(kTool) + (dir / "shape.hlo").string());
  EXPECT_EQ(v.code, 1);
  EXPECT_THAT(v.err, HasSubstr("shape.hlo:4:8: error: "));
}

TEST(InspectTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunShell(std::string(kTool)).code, 2);
  EXPECT_EQ(RunShell(std::string(kTool) + "--diff a.hlo").code, 2);
  EXPECT_EQ(RunShell(std::string(kTool) + "--stats xml " + kDump).code, 2);
  EXPECT_EQ(RunShell(std::string(kTool) + "--device-model no-such-model " + kDump).code, 2);
  EXPECT_EQ(RunShell(std::string(kTool) + "--help").code, 0);
}

}  // namespace
