// A seeded structured mutation fuzzer for the partitioner and for `spmd-run --verify` (issue
// "Never silently wrong, never a crash").
//
// Seeds are HLO modules: the XLA corpus (../shared/corpus/xla-tests/{spmd,propagation}, read at
// run time, never copied), tests/testdata and modules of tests/random_module_generator.h. Mutant
// `index` of run seed `s` is a pure function of (seeds, s, index): it picks a seed module and
// applies one to three text mutations (partition_fuzz_mutate.cc) drawn from its own
// std::mt19937_64 stream, so any mutant is reproduced from its two numbers alone.
//
// Each mutant is checked the way `spmd-run --verify` checks a module (partition_fuzz_check.cc),
// in a forked child process so that a crash, an abort or a hang is reported instead of ending
// the run:
//   1. parse and verify (hlo/verifier): a rejected mutant is fine;
//   2. the driver's passes (tools/partition_driver.h, ProcessInput): success or an error
//      status, never a crash or a hang (the child is killed after a time budget);
//   3. when the module is deterministic and small enough, both programs run on the CPU
//      executor on seeded random arguments and are compared (runtime/cpu/verify.h): a
//      mismatch is a failure, and so is an SPMD program that fails to run where the
//      unpartitioned one ran. Ops the executor does not support are not failures.
#ifndef TESTS_PARTITION_FUZZ_H_
#define TESTS_PARTITION_FUZZ_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tests/random_module_generator.h"

namespace partition_fuzz {

// ---- Seeds ------------------------------------------------------------------------------------

struct SeedModule {
  std::string name;  // "spmd/TiledToTiledEven", "testdata/matmul.hlo", "generated/17".
  std::string text;  // Its header always states num_partitions.
  // The spmd corpus: like the conformance suite, partition without propagation (half of its
  // mutants; the others run the default pipeline).
  bool partition_only = false;
};

struct SeedOptions {
  std::filesystem::path corpus_dir;    // .../xla-tests; empty or missing: no corpus seeds.
  std::filesystem::path testdata_dir;  // tests/testdata; empty or missing: none.
  int64_t generated = 40;              // Modules of random_module_generator, seeds 1..N.
  // Corpus modules longer than this are skipped (the largest hold dozens of instructions and
  // mostly exercise the same handlers as the small ones).
  int64_t max_bytes = 6000;
};

// Corpus cases whose MANIFEST.tsv flags say rng, io or error are skipped; num_partitions comes
// from the manifest (else the module header, else 1 + the largest device id in the text).
std::vector<SeedModule> LoadSeeds(const SeedOptions& options);

// ---- Mutants ----------------------------------------------------------------------------------

// Deterministic draws: the generator's (tests/random_module_generator.h).
using random_module::Random;

struct Mutant {
  uint64_t run_seed = 0;
  uint64_t index = 0;
  std::string seed_name;
  std::vector<std::string> mutations;  // What was done, in order.
  std::string text;
  std::vector<std::string> passes;  // {"partition", "cleanup"} or the default pipeline.
  std::string dot_strategy;         // Non-empty: every dot forced to this family (spmd-partition's
                                    // --dot-strategy); a family that does not apply is an error.
  // "run seed S, mutant I (of SEED): M1; M2".
  std::string Describe() const;
};

// Applies one random mutation to `text` (the kinds listed in partition_fuzz_mutate.cc), trying
// other kinds when the drawn one does not apply. Returns its description, or "" when none
// applied.
std::string MutateOnce(std::string& text, Random& rng);

// Mutant `index` of run `run_seed`. REQUIRES: `seeds` is not empty.
Mutant MakeMutant(const std::vector<SeedModule>& seeds, uint64_t run_seed, uint64_t index);

// ---- Checking one mutant ----------------------------------------------------------------------

enum class Outcome {
  kRejected,        // The parser or the verifier refused it.
  kPartitionError,  // The passes returned an error status.
  kPartitioned,     // Partitioned; not executed (`kind` says why).
  kVerified,        // Partitioned, executed, and the outputs match.
  kNearMiss,        // A numerical difference, not a bug (`kind` says which).
  kFailure,         // Crash, hang, mismatch, or an SPMD program that cannot run.
};

struct CheckResult {
  Outcome outcome = Outcome::kFailure;
  // A short class: "parse", "verifier", an error class, a skip reason, or the failure kind
  // ("crash", "hang", "mismatch", "spmd-run-error", ...).
  std::string kind;
  std::string detail;  // The error message or the verdict.
  std::string phase;   // The last phase the check reached (CheckMutantIsolated sets it).
  double seconds = 0;  // How long the check took (CheckMutantIsolated sets it).
};

struct CheckOptions {
  double timeout_seconds = 20;     // Per mutant, all phases together.
  std::filesystem::path work_dir;  // Where each child writes its mutant.hlo.
  // Execution limits: programs above them are partitioned but not run (the CPU executor
  // simulates every device in this process).
  double max_flops = 2e8;                  // Reference FLOPs, and SPMD FLOPs times devices.
  int64_t max_bytes = int64_t{256} << 20;  // Peak live bytes, likewise.
  int64_t max_devices = 16;
  int64_t max_trip_count = 256;  // Every while loop needs a static trip count up to this.
  double collective_timeout_seconds = 5;
  int64_t memory_limit_gib = 8;  // RLIMIT_AS of the child.
};

// Reports the phase the check is in ("parse", "partition", "reference", "spmd-run", ...).
using Progress = std::function<void(std::string_view phase)>;

// Checks `mutant` in this process (steps 1-3 of the file comment). May crash or hang.
CheckResult CheckMutant(const Mutant& mutant, const CheckOptions& options,
                        const Progress& progress);

// The result of running `work` in a forked child.
struct IsolatedRun {
  bool finished = false;   // Exited normally with a result.
  bool timed_out = false;  // Killed after the time budget.
  int signal = 0;          // The signal that ended the child, or 0.
  int exit_code = 0;
  std::string result;       // What `work` returned (when finished).
  std::string last_phase;   // The last phase it reported.
  std::string output_tail;  // The end of what the child wrote to stdout and stderr.
  double seconds = 0;
};

// Runs `work` in a child process, on a large stack, with its memory limited to
// `memory_limit_gib` (0: no limit), and kills it after `timeout_seconds`.
IsolatedRun RunIsolated(const std::function<std::string(const Progress&)>& work,
                        double timeout_seconds, int64_t memory_limit_gib = 0);

// CheckMutant in a child (RunIsolated): a crash is a "crash" failure, a child killed in the
// partition phases twice in a row a "hang" failure (once may be a busy machine); one killed
// while running the unpartitioned reference is a skip (the reference is slow; that says
// nothing about the partitioner).
CheckResult CheckMutantIsolated(const Mutant& mutant, const CheckOptions& options);

// ---- Runs -------------------------------------------------------------------------------------

struct FuzzOptions {
  uint64_t seed = 1;
  uint64_t first_index = 0;
  int64_t max_mutants = 0;  // 0: no limit.
  double max_seconds = 0;   // 0: no limit.
  CheckOptions check;
  // Failures are written here as failure-KIND-SEED-INDEX.{hlo,txt}; empty: not saved.
  std::filesystem::path out_dir;
  int64_t max_saved_per_signature = 3;
  // What else selects the seeds (e.g. "PARTITION_FUZZ_GENERATED=200 HLO_CORPUS_DIR=..."): the
  // saved .txt gives the command that reproduces the mutant with these set.
  std::string reproduce_env;
  double progress_seconds = 0;  // Print a progress line this often (0: never).
};

struct Failure {
  Mutant mutant;
  CheckResult result;
  std::string signature;   // kind + the error with numbers and names elided.
  std::string saved_path;  // The .hlo written, or empty.
};

struct Summary {
  int64_t tried = 0;
  int64_t rejected_parse = 0;
  int64_t rejected_verifier = 0;
  int64_t accepted = 0;  // Passed the parser and the verifier.
  int64_t partition_errors = 0;
  int64_t partitioned = 0;  // The passes succeeded.
  int64_t executed = 0;     // Both programs ran and were compared.
  int64_t verified = 0;     // ... and matched.
  int64_t near_misses = 0;
  std::map<std::string, int64_t> partition_error_kinds;
  std::map<std::string, int64_t> skip_reasons;  // Why partitioned mutants were not executed.
  std::map<std::string, int64_t> near_miss_kinds;
  std::map<std::string, std::string> near_miss_first;  // Kind -> its first mutant (Describe).
  std::map<std::string, int64_t> failure_signatures;
  std::vector<Failure> failures;  // Every failing mutant (the text of the first few kept).
  double seconds = 0;
  double slowest_seconds = 0;  // The slowest mutant that did not time out, and which it was.
  std::string slowest;

  void Add(const Mutant& mutant, const CheckResult& result);
  std::string ToString() const;
};

// The signature failures are grouped by: `kind` and the first line of `detail` with numbers,
// %names and file positions elided.
std::string FailureSignature(const CheckResult& result);

// Checks mutants first_index, first_index + 1, ... until either limit is reached.
Summary RunFuzz(const std::vector<SeedModule>& seeds, const FuzzOptions& options);

}  // namespace partition_fuzz

#endif  // TESTS_PARTITION_FUZZ_H_
