// Modular verification: an SPMD program checked instruction by instruction, for programs whose
// outputs depend on too much to sample (each gradient element of a train step depends on the
// whole forward pass, so sampled_verify.h would have to run the program).
//
// The partitioner's records (hlo/sharding/spmd_origin.h) say which SPMD instruction holds each
// original instruction's value and how that value is laid out. Every recorded value is *cut*:
// replaced by a random value that is a pure function of (seed, the original instruction it
// holds, element index), laid out on each device by its record's sharding, with random garbage
// in the padding of uneven shards (a partitioned op may not assume what padding holds). Then
// each original instruction I is checked on its own:
//   - the reference computes a sample of I's elements from its operands' cut values;
//   - each device computes the same elements of its region of I's partitioned value from the
//     cut values of the recorded values that value reads: the reshards, collectives, halo
//     exchanges and windowed loops in between are evaluated (point_evaluator.h), not assumed;
//   - they are compared as sampled_verify.h compares (each device region's first and last
//     element and random ones), a floating mismatch judged against the exact (f64) result by
//     the reference's own rounding (verify_exact.h) unless a tolerance is given.
// A while, conditional or call is checked at its boundaries: each operand arrives laid out as
// its callee's parameter expects, the callee returns in the layout of the caller's value, and
// a loop's state, condition and body agree; the callee's instructions are checked like any
// other, and so is each computation's return (its root resharded for the caller).
// If every check holds for every value, the SPMD program computes the unpartitioned one, by
// induction over the program; here they hold on the sampled elements of random values.
// Collectives are assumed to run in lockstep, as the point evaluator assumes.
// An instruction the point evaluator has no element semantics for (rng, an opaque
// custom-call) cannot be checked itself: the result names it as not verified, and the program
// around it is still checked (its value is cut like any other). A check over the element
// budget is named the same way, unless one replica of each region can afford it (a sum over a
// whole replicated weight on each of 8 devices): then that is checked and the report says so.
// Manual regions are modelled: a manual value is one array per manual group (per device when
// fully manual; a partially manual one tiled inside its group), cut per group (modular_cuts.h),
// and checked on each device against the reference computed as that device; the conversions
// into and out of a region are not cut -- the reference evaluates them as each device from their
// operand's cut value, and what reads a global value made of manual ones reads each device's --
// and groups whose values SPMDShardToFullShape places in one region get one stand-in (the
// conversion reads the first; the program must make them agree, which their own checks see).
// Unreduced shardings are refused, and so are collectives and partition-ids outside manual
// regions (no single reference there).
#ifndef RUNTIME_CPU_MODULAR_VERIFY_H_
#define RUNTIME_CPU_MODULAR_VERIFY_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/sharding/spmd_origin.h"
#include "runtime/cpu/compare.h"

namespace runtime {

struct ModularVerifyOptions {
  uint64_t seed = 0;
  int64_t num_partitions = 1;
  // Random elements per device region, besides its first and last, and uniformly random ones
  // per leaf.
  int64_t per_device_random = 2;
  int64_t random_samples = 4;
  // Element evaluations allowed per check and side (a sum over a whole weight of 2^28 elements
  // is about 10 s; reductions run block by block and cut values are not memoized, so a reduce
  // over a cut operand stays small in memory -- an uncut operand's elements are memoized).
  int64_t element_budget = 600'000'000;
  // Elements evaluated over all checks (ModularResult::elements), 0: no limit. Once spent, the
  // remaining checks are not verified (named so); the fuzzer bounds a mutant's time with it.
  int64_t total_element_budget = 0;
  // Evaluation stops at this time: a check cut short, and those not started, are not verified.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::optional<Tolerance> tolerance;
  // Without `tolerance`: the default tolerances of floating types times this (the fuzzer's
  // near-miss check asks whether a mismatch is within ten times them).
  double tolerance_scale = 1;
};

struct ModularResult {
  int64_t instructions = 0;  // Original instructions checked.
  int64_t boundaries = 0;    // Call-site operands and computation returns checked.
  int64_t compared = 0;      // Device values compared.
  int64_t elements = 0;      // Elements evaluated (memoized), both sides: the work done.
  std::vector<std::string> mismatches;  // One line per failing check.
  std::vector<std::string> unverified;  // One line per check that could not run, with why.
  // Checks that every replica of a region could not afford, computed on one replica of each
  // region instead.
  std::vector<std::string> thinned;
  bool ok() const { return mismatches.empty(); }
  // The mismatches and unverified checks, then a summary line.
  std::string ToString() const;
};

// See the file comment. `origins` describe `spmd` as partitioned from `unpartitioned`.
absl::StatusOr<ModularResult> VerifyModular(const hlo::HloModule& unpartitioned,
                                            const hlo::HloModule& spmd,
                                            absl::Span<const hlo::SpmdOrigin> origins,
                                            const ModularVerifyOptions& options);

}  // namespace runtime

#endif  // RUNTIME_CPU_MODULAR_VERIFY_H_
