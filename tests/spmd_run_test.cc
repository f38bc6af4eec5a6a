// End-to-end: spmd-run. The hand-written XLA-style SPMD matmul (strided all-gathers, a dot, a
// partition-id-indexed offset table and dynamic-slice) verifies against its unpartitioned
// module; the copy with one wrong replica group is a mismatch (exit 1), also with the CUDA
// backend on the host device. Also: the CUDA backend without a GPU and its multi-process
// environment, usage errors (exit 2), located runtime errors, .npy inputs and outputs, and
// --repeat.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cpu/npy.h"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kRun[] = "tools/spmd-run";
constexpr char kFull[] = "tests/testdata/matmul.hlo";
constexpr char kSpmd[] = "tests/testdata/matmul_spmd.hlo";
constexpr char kWrong[] = "tests/testdata/matmul_spmd_wrong_group.hlo";

struct Outcome {
  int code = -1;
  std::string output;  // stdout and stderr.
};

// Runs spmd-run with `args`; `env` ("NAME=value ...", each followed by a space) prefixes the
// command line.
Outcome SpmdRun(const std::string& args, const std::string& env = "") {
  Outcome out;
  FILE* pipe = popen((env + kRun + " " + args + " 2>&1").c_str(), "r");
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) out.output.append(buf, n);
  const int status = pclose(pipe);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(SpmdRunTest, HandWrittenSpmdMatmulVerifies) {
  for (const char* seed : {"0", "17"}) {
    Outcome r =
        SpmdRun(std::string("--verify --against ") + kSpmd + " --seed " + seed + " " + kFull);
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("output: f32[8,12]: max abs error"));
    EXPECT_THAT(r.output, HasSubstr("verification passed"));
    EXPECT_THAT(r.output, HasSubstr("on 8 devices"));
  }
}

TEST(SpmdRunTest, WrongReplicaGroupIsAMismatch) {
  Outcome r = SpmdRun(std::string("--verify --against ") + kWrong + " " + kFull);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("MISMATCH: 48 of 96 elements differ; first at [0,0]"));
  EXPECT_THAT(r.output, HasSubstr(std::string(kWrong) + ": error: the SPMD program's outputs do "
                                                        "not match"));
}

// --rtol / --atol replace the tolerance of every output: a loose one lets the wrong replica
// group through (the user asked for it), and the line says which tolerance held, at which
// element and how close it came.
TEST(SpmdRunTest, GivenToleranceReplacesTheDefault) {
  Outcome loose =
      SpmdRun(std::string("--verify --rtol 100 --atol 100 --against ") + kWrong + " " + kFull);
  EXPECT_EQ(loose.code, 0) << loose.output;
  EXPECT_THAT(loose.output, HasSubstr("; worst element ["));
  EXPECT_THAT(loose.output, HasSubstr(" allowed (atol 100 x "));
  EXPECT_THAT(loose.output, HasSubstr("max(1, largest |expected|), + rtol 100 x |expected|): ok"));
  Outcome strict = SpmdRun(std::string("--verify --rtol 0 --against ") + kSpmd + " " + kFull);
  EXPECT_THAT(strict.output, HasSubstr("(exact)"));
  Outcome bad = SpmdRun(std::string("--verify --rtol -1 --against ") + kSpmd + " " + kFull);
  EXPECT_EQ(bad.code, 2) << bad.output;
}

TEST(SpmdRunTest, CudaBackendWithoutAGpuFailsClearly) {
  Outcome cuda = SpmdRun(std::string("--backend cuda --partitioned ") + kSpmd);
  if (cuda.code == 0) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(cuda.code, 1);
  EXPECT_THAT(cuda.output, HasSubstr(std::string(kSpmd) + ": error: no usable GPU: "));
}

TEST(SpmdRunTest, CudaBackendOnTheHostDeviceVerifiesAgainstCpu) {
  // SPMD_CUDA_DEVICE=host: the CUDA executor with the kernels' host twins, copy collectives.
  for (const std::string& args : {std::string("--verify --against ") + kSpmd + " " + kFull,
                                  std::string("--verify ") + kFull}) {
    Outcome r = SpmdRun("--backend cuda " + args, "SPMD_CUDA_DEVICE=host ");
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("with the CUDA backend against the CPU executor"));
  }
  Outcome wrong = SpmdRun(std::string("--backend cuda --verify --against ") + kWrong + " " + kFull,
                          "SPMD_CUDA_DEVICE=host ");
  EXPECT_EQ(wrong.code, 1) << wrong.output;
  EXPECT_THAT(wrong.output, HasSubstr("MISMATCH"));
}

TEST(SpmdRunTest, CudaMultiProcessEnvironmentIsChecked) {
  Outcome r = SpmdRun(std::string("--backend cuda --partitioned ") + kSpmd,
                      "RANK=0 WORLD_SIZE=8 SPMD_CUDA_DEVICE=host ");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.output, HasSubstr("SPMD_NCCL_ID_FILE must name a file"));
  Outcome verify = SpmdRun(std::string("--backend cuda --verify --against ") + kSpmd + " " + kFull,
                           "RANK=0 WORLD_SIZE=8 ");
  EXPECT_EQ(verify.code, 1);
  EXPECT_THAT(verify.output, HasSubstr("--verify with --backend=cuda runs in one process"));
}

TEST(SpmdRunTest, VerifiesOurOwnPartitioning) {
  Outcome r = SpmdRun(std::string("--verify --passes partition,cleanup ") + kFull);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("verification passed"));
  EXPECT_THAT(r.output, HasSubstr("(partitioned) matches"));
}

TEST(SpmdRunTest, RefusesModulesBeyondTheWorkLimitWithSamplingOff) {
  Outcome r =
      SpmdRun("--verify --sampled=never --passes partition,cleanup tests/testdata/huge_dot.hlo");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("tests/testdata/huge_dot.hlo: error: the module needs about "
                                  "1100 GFLOP, above --max-gflop=800"));
}

TEST(SpmdRunTest, VerifiesModulesBeyondTheWorkLimitOnASample) {
  Outcome r = SpmdRun("--verify --passes partition,cleanup tests/testdata/huge_dot.hlo");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the module needs about 1100 GFLOP, above --max-gflop=800"));
  EXPECT_THAT(r.output, HasSubstr("comparing sampled output elements instead"));
  EXPECT_THAT(r.output, HasSubstr("on sampled elements (the point evaluator)"));
  // Sampling cannot write every output element.
  Outcome outputs = SpmdRun("--verify --sampled=always --outputs " + ::testing::TempDir() +
                            "/sampled_out --passes partition,cleanup tests/testdata/huge_dot.hlo");
  EXPECT_EQ(outputs.code, 1) << outputs.output;
  EXPECT_THAT(outputs.output, HasSubstr("cannot take --inputs, --outputs"));
}

// A loss over a 1.1 TFLOP dot: its one output element depends on the whole dot, so sampling the
// outputs would run the program; each instruction is checked on its own instead.
TEST(SpmdRunTest, ChecksInstructionByInstructionWhenOutputsDependOnEverything) {
  Outcome r = SpmdRun("--verify --passes partition,cleanup tests/testdata/huge_dot_loss.hlo");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("checking instruction by instruction instead"));
  // d and loss; the constant zero is merged into the partitioner's own zero (an internal
  // value without records), so its record is dropped and it is evaluated, not cut.
  EXPECT_THAT(r.output, HasSubstr("2 instructions and 0 boundaries checked"));
  EXPECT_THAT(r.output, HasSubstr("0 mismatches, 0 not verified"));
  EXPECT_THAT(r.output, HasSubstr("instruction by instruction (each checked on sampled"));
  Outcome forced = SpmdRun(std::string("--verify --sampled=modular --passes partition,cleanup ") +
                           kFull);
  EXPECT_EQ(forced.code, 0) << forced.output;
  EXPECT_THAT(forced.output, HasSubstr("modular verification: "));
  // A program we did not partition comes without the records.
  Outcome against =
      SpmdRun(std::string("--verify --sampled=modular --against ") + kWrong + " " + kFull);
  EXPECT_EQ(against.code, 1) << against.output;
  EXPECT_THAT(against.output, HasSubstr("needs our partitioner's records of where each value "
                                        "comes from (not available with --against"));
}

// SPMDShardToFullShape whose operand propagation split inside its manual groups otherwise
// than the result splits each group's value (partition fuzzer, seed 2601): the result
// sharding's tile (one of 3 columns) is not the operand's (2 of them), so each device brings its
// group's whole value, as the partitioner reads it. The reference placed the device's 2-column
// tile into its 1-column region and called the right program a mismatch (full run and modular).
// The same module with a result sharding that gives one tile to devices of two manual groups
// has no single meaning, and is named so.
constexpr char kShardToFull[] = R"(HloModule module, num_partitions=8
ENTRY %entry {
  %param0 = f32[6,3,8] parameter(0)
  %copy = f32[6,3,8] copy(%param0), sharding={devices=[1,2,1,4]<=[8] last_tile_dim_replicate}
  %annotate = f32[6,3,8] custom-call(%copy), custom_call_target="Sharding",
    backend_config="unspecified_dims=[1,2]",
    sharding={devices=[2,1,1,4]0,1,4,5,2,3,6,7 last_tile_dim_replicate}
  %to_manual = f32[3,3,8] custom-call(%annotate), custom_call_target="SPMDFullToShardShape",
    backend_config="unspecified_dims=[1,2]",
    sharding={devices=[1,1,1,4,2]0,2,1,3,4,6,5,7 last_tile_dims={replicated,manual}}
  %to_auto = f32[6,3,8] custom-call(%to_manual), custom_call_target="SPMDShardToFullShape",
    backend_config="unspecified_dims=[1,2]", sharding=RESULT
  ROOT %copy.3 = f32[6,3,8] copy(%to_auto),
    sharding={devices=[1,1,2,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}
})";

TEST(SpmdRunTest, ShardToFullOfATileThatIsNotTheResultsBringsTheGroupsValue) {
  std::string text = kShardToFull;
  const std::string consistent = "{devices=[2,4,1,1]0,1,4,5,2,3,6,7 last_tile_dim_replicate}";
  text.replace(text.find("RESULT"), 6, consistent);
  const std::string path = WriteFile("shard_to_full_tiles.hlo", text);
  for (const char* mode : {"", "--sampled=modular "}) {
    Outcome r = SpmdRun(std::string("--verify ") + mode + path);
    EXPECT_EQ(r.code, 0) << mode << r.output;
  }
  std::string split = kShardToFull;
  split.replace(split.find("RESULT"), 6,
                "{devices=[2,4,1,1]<=[4,2]T(1,0) last_tile_dim_replicate}");
  Outcome r = SpmdRun("--verify " + WriteFile("shard_to_full_groups.hlo", split));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the unpartitioned module itself gives devices"));
}

// A scalar's broadcast wanted in two device orders is the same instruction twice, which the
// cleanup merges (found by the partition fuzzer): the merged instruction held its value in two
// layouts, so its records are dropped and it is evaluated from the scalar, not cut to values
// laid out one way and read the other.
TEST(SpmdRunTest, ModularVerificationFollowsMergedInstructions) {
  const std::string path = WriteFile("merged_layouts.hlo", R"(
HloModule merged_layouts, num_partitions=8

ENTRY entry {
  p = f32[] parameter(0), sharding={replicated}
  br = f32[5] broadcast(p), dimensions={}, sharding={devices=[4]0,1,2,3}
  add = f32[5] add(br, br)
  annotate = f32[5] custom-call(add), custom_call_target="Sharding",
    backend_config="unspecified_dims=[0]", sharding={replicated}
  ROOT copy = f32[5] copy(annotate), sharding={devices=[4]3,2,1,0}
}
)");
  Outcome r = SpmdRun("--verify --sampled=modular " + path);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("0 mismatches, 0 not verified"));
  // A sum of broadcasts built in three device orders, two of them the same instructions: the
  // merged one loses its records, and so must the sum's record in the third order, or the
  // reference would read the sum cut to random values while the devices compute it.
  const std::string broadcasts = WriteFile("merged_broadcasts.hlo", R"(
HloModule merged_broadcasts, num_partitions=8

ENTRY entry {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3,20] parameter(1)
  b0 = f32[20,2,20,3,20] broadcast(p0), dimensions={1,3}, sharding={devices=[2,1,2,1,2]<=[8]}
  b1 = f32[20,2,20,3,20] broadcast(p1), dimensions={1,3,4}, sharding={devices=[2,1,2,1,2]<=[8]}
  add = f32[20,2,20,3,20] add(b0, b1), sharding={devices=[2,1,2,1,2]<=[8]}
  c0 = f32[20,2,20,3,20] copy(add), sharding={devices=[2,1,2,1,2]6,7,2,3,4,5,0,1}
  c1 = f32[20,2,20,3,20] sine(add), sharding={devices=[2,1,2,1,2]7,6,3,2,5,4,0,1}
  ROOT t = (f32[20,2,20,3,20], f32[20,2,20,3,20]) tuple(c0, c1),
    sharding={{devices=[2,1,2,1,2]6,7,2,3,4,5,0,1},{devices=[2,1,2,1,2]7,6,3,2,5,4,0,1}}
}
)");
  Outcome b = SpmdRun("--verify --sampled=modular " + broadcasts);
  EXPECT_EQ(b.code, 0) << b.output;
  EXPECT_THAT(b.output, HasSubstr("0 mismatches, 0 not verified"));
  // Two equal reshapes, partitioned alike and merged: the merged instruction holds both
  // originals' value, one of which is also rebuilt whole for its reader. Both originals get
  // one random stand-in, whichever record a reader goes through (a mutant of XLA's
  // ReshapeWithSpecialCache1 the partition fuzzer found).
  const std::string reshapes = WriteFile("merged_reshapes.hlo", R"(
HloModule merged_reshapes, num_partitions=4

ENTRY entry {
  p0 = bf16[8,8] parameter(0), sharding={replicated}
  reshape = bf16[64] reshape(p0), sharding={devices=[4]<=[4]}
  reshape.2 = bf16[64] reshape(p0), sharding={devices=[4]<=[4]}
  abs = bf16[64] abs(reshape.2), sharding={replicated}
  ROOT tuple = (bf16[64], bf16[64], bf16[64]) tuple(reshape, reshape.2, abs),
    sharding={{devices=[4]<=[4]}, {devices=[4]<=[4]}, {replicated}}
}
)");
  Outcome m = SpmdRun("--verify --sampled=modular " + reshapes);
  EXPECT_EQ(m.code, 0) << m.output;
  EXPECT_THAT(m.output, HasSubstr("0 mismatches, 0 not verified"));
}

// The unpartitioned module cannot run here (a custom-call without a kernel): our partitioning of
// the rest is still checked, the call named as not verified.
TEST(SpmdRunTest, ModulesTheExecutorCannotRunAreCheckedInstructionByInstruction) {
  const std::string path = WriteFile("opaque_kernel.hlo", R"(
HloModule opaque_kernel, num_partitions=2

ENTRY e {
  a = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}
  c = f32[8,4] custom-call(a), custom_call_target="NoSuchKernel", sharding={devices=[2,1]<=[2]}
  ROOT t = f32[4,8] transpose(c), dimensions={1,0}, sharding={devices=[2,1]<=[2]}
}
)");
  Outcome r = SpmdRun("--verify " + path);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the unpartitioned module cannot run here ("));
  EXPECT_THAT(r.output, HasSubstr("not supported by the CPU executor); checking instruction by "
                                  "instruction instead"));
  EXPECT_THAT(r.output, HasSubstr("not verified: %c: sampled evaluation does not support "
                                  "custom-call \"NoSuchKernel\""));
  EXPECT_THAT(r.output, HasSubstr("1 instructions and 0 boundaries checked"));
  EXPECT_THAT(r.output, HasSubstr("1 not verified themselves (listed above)"));
  // --sampled=never keeps the full run's verdict: an error.
  EXPECT_EQ(SpmdRun("--verify --sampled=never " + path).code, 1);
}

TEST(SpmdRunTest, UsageErrorsExitTwo) {
  EXPECT_EQ(SpmdRun(std::string("--against ") + kSpmd + " " + kFull).code, 2);
  EXPECT_EQ(SpmdRun(std::string("--verify --partitioned ") + kFull).code, 2);
  EXPECT_EQ(SpmdRun(std::string("--backend tpu ") + kFull).code, 2);
  EXPECT_EQ(SpmdRun(std::string("--passes frobnicate ") + kFull).code, 2);
  EXPECT_EQ(SpmdRun("").code, 2);
}

TEST(SpmdRunTest, RuntimeErrorsNameTheInstructionsLine) {
  const std::string path = WriteFile("bad_group.hlo", R"(HloModule bad, num_partitions=2
ENTRY e {
  x = f32[2] parameter(0)
  ROOT g = f32[4] all-gather(x), channel_id=1, replica_groups={{0,5}}, dimensions={0}, use_global_device_ids=true
}
)");
  Outcome r = SpmdRun("--partitioned " + path);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.output, StartsWith(path + ":4:8: error: instruction %g: replica group names "
                                          "device 5 but there are only 2"));
}

// A module whose manual code leaves devices with different values under a replicated sharding
// (XLA's partitioner accepts the assertion unchecked) has no single result: --verify names the
// input's root line and says why, instead of calling the partitioning wrong.
TEST(SpmdRunTest, ModuleThatMakesReplicatedValuesDifferIsNamed) {
  const std::string path = WriteFile("differs.hlo", R"(HloModule differs, num_partitions=2
ENTRY e {
  p = f32[4,3] parameter(0), sharding={devices=[2,1]0,1}
  m = f32[2,3] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  ROOT r = f32[2,3] custom-call(m), custom_call_target="SPMDShardToFullShape", sharding={replicated}
}
)");
  Outcome r = SpmdRun("--verify " + path);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.output, StartsWith(path + ":5:8: error: %r output: the unpartitioned module "
                                          "itself gives devices 0 and 1 different values"));
  EXPECT_THAT(r.output, HasSubstr("so its result is not defined"));
}

TEST(SpmdRunTest, NpyInputsAndOutputsPerDevice) {
  const std::string dir = ::testing::TempDir() + "/npy";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/in/device_1");
  const std::string path = WriteFile("permute.hlo", R"(HloModule permute, num_partitions=2
ENTRY e {
  x = s32[3] parameter(0)
  ROOT p = s32[3] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,0}}
}
)");
  hlo::Literal shared(hlo::Shape::Array(hlo::PrimitiveType::kS32, {3}));
  hlo::Literal own = shared;
  for (int i = 0; i < 3; ++i) {
    shared.SetInt(i, i + 1);
    own.SetInt(i, 10 * (i + 1));
  }
  ASSERT_TRUE(runtime::WriteNpy(dir + "/in/param_0.npy", shared).ok());
  ASSERT_TRUE(runtime::WriteNpy(dir + "/in/device_1/param_0.npy", own).ok());
  Outcome r = SpmdRun("--partitioned --inputs " + dir + "/in --outputs " + dir + "/out " + path);
  ASSERT_EQ(r.code, 0) << r.output;
  absl::StatusOr<hlo::Literal> at0 = runtime::ReadNpy(dir + "/out/device_0/output.npy");
  absl::StatusOr<hlo::Literal> at1 = runtime::ReadNpy(dir + "/out/device_1/output.npy");
  ASSERT_TRUE(at0.ok() && at1.ok());
  EXPECT_EQ(*at0, own);     // Device 0 receives device 1's argument...
  EXPECT_EQ(*at1, shared);  // ...and device 1 device 0's, read from the shared file.
}

TEST(SpmdRunTest, RepeatPrintsTheMedianTime) {
  Outcome r = SpmdRun(std::string("--partitioned --repeat 3 ") + kSpmd);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("median wall time: "));
  EXPECT_THAT(r.output, HasSubstr("over 3 runs on 8 device(s)"));
  EXPECT_THAT(r.output, HasSubstr("device 7 output: f32[4,3]"));
}

}  // namespace
