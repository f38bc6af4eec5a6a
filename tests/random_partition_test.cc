// A randomized differential test of the partitioner. Each seed generates a small f32 module: a
// chain of 2-6 ops (elementwise unary/binary, broadcast, transpose, reshape, reduce, dot,
// slice, pad, concatenate, reverse, dynamic-slice, dynamic-update-slice, select/compare, iota,
// convolution, reduce-window) over random shapes of rank 1-4 with dims 1-17, so that shards are
// often uneven, with random shardings on its parameters, intermediates and root: tiled over 2,
// 4 or 8 devices in iota, transposed-iota or explicit device order, partially replicated,
// replicated or maximal, and often the sharding of the op's operand. A fifth of the chains run
// as the computation of a `call`, three tenths as the body of a two-trip while loop whose
// state holds the parameters and the result (its sharding mostly annotated with theirs), and a
// fifth as the true branch of a conditional on a random pred (the false branch gives zeros),
// so called computations are partitioned with random parameter and state shardings. The test checks that the
// partitioned program is valid HLO and computes what the unpartitioned module computes on
// random inputs (runtime::VerifyAgainst, two input seeds), and that the sampled and modular
// oracles agree (no false alarm). About 40% of the cases leave most
// intermediates unannotated and run sharding propagation first, as `spmd-partition` does; half
// of the cases with a dot force one dot strategy family on it (where the family applies).
//
// The generator computes every result shape itself (what shape inference gives) and the test
// verifies the module before partitioning, so an invalid module is reported as a generator
// bug, not a partitioner bug. Generation depends only on the seed (mt19937_64, whose output
// the standard fixes, reduced by our own arithmetic), so a case is reproduced by its name:
//   bazel-bin/tests/random_partition_test --gtest_filter='*seed_17'
// prints the module in the failure's trace. For exploration, RANDOM_PARTITION_SEEDS=FIRST-LAST
// runs other seeds and RANDOM_PARTITION_DUMP_DIR=DIR writes each module to DIR/seed_N.hlo
// (for `spmd-run --verify`).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/transforms/dead_code_elimination.h"
#include "hlo/verifier/hlo_verifier.h"
#include "runtime/cpu/modular_verify.h"
#include "runtime/cpu/sampled_verify.h"
#include "runtime/cpu/verify.h"
#include "spmd/partitioner/spmd_partitioner.h"
#include "spmd/propagation/sharding_propagation.h"
#include "tests/random_module_generator.h"

namespace {

using random_module::GeneratedModule;
using random_module::ModuleGenerator;

// Looser than the f32 default (rtol 1e-4, atol 1e-5 scaled by the result's magnitude): a chain
// of dots over iotas builds intermediates in the thousands that a reduce or dot may cancel
// down to a result near 1, so a reordered sum is off by ~1e-4 there. A partitioning bug
// (a wrong halo, shard or mask) is off by the values' own size.
constexpr runtime::Tolerance kTolerance = {/*rtol=*/1e-3, /*atol=*/1e-3};

// ---- The test ---------------------------------------------------------------------------------

// Seeds 1..kCases, or the range in RANDOM_PARTITION_SEEDS. Every committed seed passes; a
// seed that starts failing is a partitioner bug (minimise its module and fix the partitioner)
// unless the trace says "generator bug".
constexpr uint64_t kCases = 1000;

std::vector<uint64_t> Seeds() {
  uint64_t first = 1, last = kCases;
  if (const char* range = std::getenv("RANDOM_PARTITION_SEEDS")) {
    const std::string s = range;
    const size_t dash = s.find('-');
    first = std::stoull(s.substr(0, dash));
    last = dash == std::string::npos ? first : std::stoull(s.substr(dash + 1));
  }
  std::vector<uint64_t> seeds;
  for (uint64_t seed = first; seed <= last; ++seed) seeds.push_back(seed);
  return seeds;
}

struct PartitionedModule {
  std::unique_ptr<hlo::HloModule> spmd;
  std::string explain;
  std::vector<hlo::SpmdOrigin> origins;  // For modular verification.
};

// The partition pass and dead-code cleanup on a fresh parse of `text`.
absl::StatusOr<PartitionedModule> PartitionText(const std::string& text,
                                                const spmd::PartitionerOptions& options) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  spmd::PartitionerOptions recording = options;
  recording.record_origins = true;
  spmd::SpmdPartitioner partitioner(recording);
  absl::StatusOr<bool> ran = partitioner.Run(module->get());
  if (!ran.ok()) return ran.status();
  hlo::DeadCodeElimination cleanup;
  ran = cleanup.Run(module->get());
  if (!ran.ok()) return ran.status();
  PartitionedModule out{*std::move(module), "", partitioner.log().origins};
  for (const std::string& line : partitioner.log().lines) out.explain += line + "\n";
  return out;
}

// Partitions `text` with every dot forced to `dot_strategy` (when not empty), or with the
// partitioner's own choice where the forced strategy does not apply (a refusal, not a bug).
absl::StatusOr<PartitionedModule> PartitionWithDotStrategy(const std::string& text,
                                                           const std::string& dot_strategy) {
  spmd::PartitionerOptions options;
  options.dot.forced_family = dot_strategy;
  absl::StatusOr<PartitionedModule> p = PartitionText(text, options);
  if (!dot_strategy.empty() && !p.ok() &&
      p.status().message().find("does not apply to this dot") != std::string_view::npos) {
    options.dot.forced_family.clear();
    p = PartitionText(text, options);
  }
  return p;
}

// The module of `text`, verified: a failure is a generator bug.
absl::StatusOr<std::unique_ptr<hlo::HloModule>> ParseValid(const std::string& text) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  if (absl::Status valid = hlo::VerifyModule(**module); !valid.ok()) return valid;
  return module;
}

// How many seeds the sampled and modular oracles checked (the others use ops they refuse),
// printed at the end.
int sampled_checks = 0;
int sampled_refusals = 0;
int modular_checks = 0;
int modular_refusals = 0;

class SampledCount : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("sampled verification checked %d modules and refused %d\n", sampled_checks,
                sampled_refusals);
    std::printf("modular verification checked %d modules and refused %d\n", modular_checks,
                modular_refusals);
  }
};
const auto* const kSampledCount = ::testing::AddGlobalTestEnvironment(new SampledCount);

class RandomPartitionTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(RandomPartitionTest, PartitionedProgramMatchesTheOriginal) {
  const GeneratedModule generated = ModuleGenerator(GetParam()).Generate();
  SCOPED_TRACE("seed " + std::to_string(GetParam()) + (generated.propagate ? " (propagated)" : "") +
               (generated.dot_strategy.empty() ? "" : " (dots: " + generated.dot_strategy + ")") +
               ":\n" + generated.text);
  if (const char* dir = std::getenv("RANDOM_PARTITION_DUMP_DIR")) {
    std::ofstream(std::string(dir) + "/seed_" + std::to_string(GetParam()) + ".hlo")
        << generated.text;
  }
  ASSERT_EQ(generated.error, "") << "generator bug";
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> original = ParseValid(generated.text);
  ASSERT_TRUE(original.ok()) << "generator bug: " << original.status();
  std::string text = generated.text;
  if (generated.propagate) {
    spmd::ShardingPropagation propagation;
    absl::StatusOr<bool> ran = propagation.Run(original->get());
    ASSERT_TRUE(ran.ok()) << "propagation failed: " << ran.status();
    text = (*original)->ToString();
  }
  absl::StatusOr<PartitionedModule> p = PartitionWithDotStrategy(text, generated.dot_strategy);
  ASSERT_TRUE(p.ok()) << "partitioning failed: " << p.status();
  const absl::Status spmd_valid = hlo::VerifyModule(*p->spmd);
  ASSERT_TRUE(spmd_valid.ok()) << "the partitioned module is invalid: " << spmd_valid << "\n"
                               << p->spmd->ToString();
  for (uint64_t seed : {1, 2}) {
    runtime::VerifyOptions options;
    options.seed = seed;
    options.num_partitions = generated.devices;
    options.tolerance = kTolerance;
    absl::StatusOr<runtime::VerifyResult> result =
        runtime::VerifyAgainst(**original, *p->spmd, options);
    ASSERT_TRUE(result.ok()) << result.status() << "\n" << p->spmd->ToString();
    EXPECT_TRUE(result->ok()) << result->ToString() << "\n" << p->spmd->ToString() << p->explain;
  }
  // The sampled oracle (the point evaluator) must agree: it passes what the full run passes.
  // Ops it does not evaluate (gather, scatter, convolution, ...) are a clean refusal.
  runtime::SampledVerifyOptions sampled;
  sampled.seed = 3;
  sampled.num_partitions = generated.devices;
  sampled.tolerance = kTolerance;
  absl::StatusOr<runtime::VerifyResult> point = runtime::VerifySampled(**original, *p->spmd, sampled);
  ++(point.ok() ? sampled_checks : sampled_refusals);
  if (point.ok()) {
    EXPECT_TRUE(point->ok()) << "sampled verification: " << point->ToString() << "\n"
                             << p->spmd->ToString();
  } else {
    EXPECT_EQ(point.status().code(), absl::StatusCode::kUnimplemented) << point.status();
  }
  // So must modular verification (each instruction on random operands): no false alarm.
  runtime::ModularVerifyOptions modular;
  modular.seed = 4;
  modular.num_partitions = generated.devices;
  modular.tolerance = kTolerance;
  absl::StatusOr<runtime::ModularResult> checked =
      runtime::VerifyModular(**original, *p->spmd, p->origins, modular);
  ++(checked.ok() ? modular_checks : modular_refusals);
  if (checked.ok()) {
    EXPECT_TRUE(checked->ok()) << "modular verification: " << checked->ToString() << "\n"
                               << p->spmd->ToString();
  } else {
    EXPECT_EQ(checked.status().code(), absl::StatusCode::kUnimplemented) << checked.status();
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomPartitionTest, ::testing::ValuesIn(Seeds()),
                         [](const ::testing::TestParamInfo<uint64_t>& info) {
                           return "seed_" + std::to_string(info.param);
                         });

}  // namespace
