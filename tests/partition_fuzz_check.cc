// Checking one mutant the way `spmd-run --verify` checks a module, and running that check in a
// child process.
//
// CheckMutant follows tools/spmd_run_main.cc's VerifyProgram: the input is parsed and verified
// (num_partitions raised to cover the devices its shardings name), partitioned by the driver
// (tools/partition_driver.h, with the verifier after every pass), the output parsed back, and
// -- when the pipeline propagates -- the reference is the module after propagation alone. The
// programs then run on the CPU executor in stages so that each error can be told apart:
//   ShardArguments fails   -> the SPMD program's parameters do not hold their shards: failure;
//   RunReference fails     -> the unpartitioned module cannot run: not the partitioner's doing;
//   RunOnDevices fails     -> the SPMD program cannot run where the reference did: failure;
//   CompareResults differs -> mismatch: failure (within rtol = atol = 1e-3: a near miss);
// except that errors for what the executor or the oracle does not support are skips. Modules
// whose result may legitimately differ (random numbers, I/O, unknown custom-calls, reducers
// that are not associative and commutative or start from a value that is not their identity,
// unstable sorts of several operands, top-k, whose
// indices ties make ambiguous) and modules over the execution limits are partitioned but not
// run.
//
// RunIsolated forks: the child runs the work on a large stack (deep modules recurse once per
// level) and reports its phase and result through a pipe; the parent kills it at the deadline.
// The parent never starts threads, so forking it is safe.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "hlo/analysis/executed_instructions.h"
#include "hlo/analysis/module_stats.h"
#include "hlo/io/module_io.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/large_stack.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"
#include "hlo/verifier/hlo_verifier.h"
#include "runtime/cpu/multi_device_runner.h"
#include "runtime/cpu/modular_verify.h"
#include "runtime/cpu/verify.h"
#include "tests/partition_fuzz.h"
#include "tools/partition_driver.h"

namespace partition_fuzz {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloModule;
using hlo::HloOpcode;

// The skip reason of a module whose value depends on the device (manual code that makes
// devices differ where a sharding says they agree).
constexpr char kDeviceDependent[] = "an SPMD program whose value depends on the device";

// ---- Error classes ----------------------------------------------------------------------------

std::string Message(const absl::Status& status) {
  return std::string(hlo::ToStd(status.message()));
}

// `message` without its `FILE:LINE:COL: error: ` prefix.
std::string StripLocation(const std::string& message) {
  const size_t at = message.find(": error: ");
  return at == std::string::npos ? message : message.substr(at + 9);
}

bool IsUnsupported(const absl::Status& status) {
  const std::string m = Message(status);
  return status.code() == absl::StatusCode::kUnimplemented ||
         m.find("not supported") != std::string::npos || m.find("unsupported") != std::string::npos;
}

CheckResult Result(Outcome outcome, std::string kind, std::string detail = "") {
  return CheckResult{outcome, std::move(kind), std::move(detail)};
}

CheckResult Skip(const std::string& reason, const std::string& detail = "") {
  return Result(Outcome::kPartitioned, reason, detail);
}

CheckResult Fail(const std::string& kind, const std::string& detail) {
  return Result(Outcome::kFailure, kind, detail);
}

// ---- Determinism ------------------------------------------------------------------------------

// Whether `computation` combines its two parameters with one associative and commutative op, so
// that the order a partitioned program combines values in does not matter.
bool IsOrderInsensitive(const HloComputation& computation) {
  const HloInstruction* root = computation.root_instruction();
  if (computation.num_parameters() != 2 || root == nullptr || root->operand_count() != 2) {
    return false;
  }
  static const std::vector<HloOpcode> kOps = {
      HloOpcode::kAdd, HloOpcode::kMultiply, HloOpcode::kMaximum, HloOpcode::kMinimum,
      HloOpcode::kAnd, HloOpcode::kOr,       HloOpcode::kXor};
  if (std::find(kOps.begin(), kOps.end(), root->opcode()) == kOps.end()) return false;
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  return a != b && a->opcode() == HloOpcode::kParameter && b->opcode() == HloOpcode::kParameter;
}

// Whether `init` is the identity of the binary op `op` (`x op init == x`). A reduction's
// partitioned form may apply its init value once per shard and pad uneven shards with it, as
// XLA's semantics allow (the init value must be an identity); with another init value the
// partitioned result differs legitimately (e.g. a max reducer mutated into multiply on -inf).
bool IsIdentity(const HloInstruction& init, HloOpcode op) {
  if (init.opcode() != HloOpcode::kConstant || !init.attrs().literal.has_value() ||
      !init.shape().IsArray() || init.shape().num_elements() != 1) {
    return false;
  }
  const hlo::Literal& value = *init.attrs().literal;
  const hlo::PrimitiveType type = init.shape().element_type();
  if (hlo::IsFloatingPointType(type)) {
    const double x = value.GetDouble(0);
    const double inf = std::numeric_limits<double>::infinity();
    return (op == HloOpcode::kAdd && x == 0) || (op == HloOpcode::kMultiply && x == 1) ||
           (op == HloOpcode::kMaximum && x == -inf) || (op == HloOpcode::kMinimum && x == inf);
  }
  if (!hlo::IsIntegralType(type) && type != hlo::PrimitiveType::kPred) return false;
  const int bits = type == hlo::PrimitiveType::kPred ? 1 : hlo::BitWidth(type);
  const bool is_signed = hlo::IsSignedIntegralType(type);
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t x = value.GetUint(0) & mask;
  const uint64_t sign_bit = uint64_t{1} << (bits - 1);
  switch (op) {
    case HloOpcode::kAdd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      return x == 0;
    case HloOpcode::kMultiply:
      return x == 1;
    case HloOpcode::kAnd:
      return x == mask;
    case HloOpcode::kMaximum:
      return x == (is_signed ? sign_bit : 0);
    case HloOpcode::kMinimum:
      return x == (is_signed ? sign_bit - 1 : mask);
    default:
      return false;
  }
}

// Whether the reduction `instr` (reduce, reduce-window or select-and-scatter) starts from its
// reducer's identity. Variadic reductions do not get here (their reducers return tuples).
bool StartsFromIdentity(const HloInstruction& instr) {
  const bool select = instr.opcode() == HloOpcode::kSelectAndScatter;
  const int64_t init = select ? 2 : 1;
  const size_t reducer = select ? 1 : 0;
  if (instr.operand_count() != init + 1 || instr.called_computations().size() <= reducer) {
    return false;
  }
  const HloInstruction* root = instr.called_computations()[reducer]->root_instruction();
  return root != nullptr && IsIdentity(*instr.operand(init), root->opcode());
}

// The custom-calls whose results are a function of their operands on the CPU executor.
bool IsDeterministicCustomCall(const HloInstruction& instr) {
  const std::string& target = instr.attrs().custom_call_target;
  return hlo::IsPlacementCustomCall(instr) || target == "Sharding" ||
         target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape" ||
         target == "GetRngSeed" || target == "xla.debug.Log" ||
         target.rfind("_SPMDInternalOp_", 0) == 0;
}

// Why `instr` may give different results run twice or partitioned; "" when it may not.
std::string Nondeterminism(const HloInstruction& instr) {
  const HloOpcode op = instr.opcode();
  if (op == HloOpcode::kRng || op == HloOpcode::kRngBitGenerator ||
      op == HloOpcode::kRngGetAndUpdateState || op == HloOpcode::kInfeed ||
      op == HloOpcode::kOutfeed || op == HloOpcode::kSend || op == HloOpcode::kRecv) {
    return "random numbers or I/O";
  }
  if (op == HloOpcode::kCustomCall && instr.attrs().custom_call_target == "TopK") {
    return "top-k (ties)";
  }
  if (op == HloOpcode::kCustomCall && !IsDeterministicCustomCall(instr)) return "custom-call";
  if (op == HloOpcode::kTopK) return "top-k (ties)";
  if (op == HloOpcode::kSort && !instr.attrs().is_stable && instr.operand_count() > 1) {
    return "unstable sort of several operands";
  }
  const bool reduces = op == HloOpcode::kReduce || op == HloOpcode::kReduceWindow ||
                       op == HloOpcode::kScatter || op == HloOpcode::kAllReduce ||
                       op == HloOpcode::kAllReduceStart || op == HloOpcode::kReduceScatter;
  if (reduces && (instr.called_computations().empty() ||
                  !IsOrderInsensitive(*instr.called_computations().front()))) {
    return "a reducer that is not associative and commutative";
  }
  if (op == HloOpcode::kSelectAndScatter &&
      (instr.called_computations().size() < 2 ||
       !IsOrderInsensitive(*instr.called_computations()[1]))) {
    return "a reducer that is not associative and commutative";
  }
  if ((op == HloOpcode::kReduce || op == HloOpcode::kReduceWindow ||
       op == HloOpcode::kSelectAndScatter) &&
      !StartsFromIdentity(instr)) {
    return "an init value that is not the identity of its reducer";
  }
  return "";
}

std::string Nondeterminism(const HloModule& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      std::string why = Nondeterminism(*instr);
      if (!why.empty()) return why;
    }
  }
  return "";
}

// ---- Execution limits -------------------------------------------------------------------------

// Why the programs are not run (CheckOptions' limits); "" when they are.
std::string OverLimits(const HloModule& full, const HloModule& spmd, int64_t devices,
                       const CheckOptions& options) {
  if (devices > options.max_devices) return "over the execution limits (devices)";
  for (const HloModule* module : {&full, &spmd}) {
    for (const auto& computation : module->computations()) {
      for (const auto& instr : computation->instructions()) {
        if (instr->opcode() != HloOpcode::kWhile) continue;
        const std::optional<int64_t> trips = hlo::StaticTripCount(*instr);
        if (!trips.has_value()) return "a while loop without a static trip count";
        if (*trips > options.max_trip_count) return "over the execution limits (loop trips)";
      }
    }
  }
  const hlo::ModuleStats reference = hlo::ComputeModuleStats(full);
  const hlo::ModuleStats partitioned = hlo::ComputeModuleStats(spmd);
  const double reference_runs = runtime::NeedsPerDeviceReference(full) ? devices : 1;
  const double n = static_cast<double>(devices);
  if (reference.flops * reference_runs > options.max_flops ||
      partitioned.flops * n > options.max_flops) {
    return "over the execution limits (FLOPs)";
  }
  if (reference.peak_memory_bytes * reference_runs > options.max_bytes ||
      partitioned.peak_memory_bytes * n > options.max_bytes) {
    return "over the execution limits (memory)";
  }
  return "";
}

// ---- The check --------------------------------------------------------------------------------

// spmd-run's Load: parse, raise num_partitions to cover the shardings' devices, verify.
absl::StatusOr<hlo::ParsedModule> LoadVerified(const std::string& path, const std::string& text) {
  absl::StatusOr<hlo::ParsedModule> parsed = hlo::ParseModuleFile(path, text);
  if (!parsed.ok()) return parsed.status();
  hlo::HloModuleConfig* config = parsed->module->mutable_config();
  config->num_partitions =
      std::max<int64_t>(config->num_partitions, hlo::MaxDeviceIdInShardings(*parsed->module) + 1);
  if (absl::Status s = hlo::VerifyModule(*parsed->module); !s.ok()) {
    return absl::FailedPreconditionError(Message(s));  // Told apart from parse errors.
  }
  return parsed;
}

// The driver's passes `passes` on `path`, parsed back.
// With `origins`, the partitioner's records are kept there (for modular verification).
absl::StatusOr<hlo::ParsedModule> RunDriver(const std::string& path,
                                            const std::vector<std::string>& passes,
                                            const std::string& dot_strategy = "",
                                            std::vector<hlo::SpmdOrigin>* origins = nullptr) {
  tools::DriverOptions driver;
  driver.passes = passes;
  driver.dot_strategy = dot_strategy;
  driver.record_origins = origins != nullptr;
  absl::StatusOr<tools::DriverResult> result = tools::ProcessInput(path, driver);
  if (!result.ok()) return result.status();
  if (origins != nullptr) *origins = std::move(result->origins);
  absl::StatusOr<hlo::ParsedModule> parsed =
      hlo::ParseHloModuleWithLocations(result->output, path + " (partitioned)");
  if (!parsed.ok()) {
    return absl::DataLossError("the driver's output does not parse: " + Message(parsed.status()));
  }
  return parsed;
}

// spmd-run's ResolveDevices without --num-partitions.
int64_t Devices(const HloModule& spmd, const HloModule& full) {
  if (spmd.config().num_partitions > 1) return spmd.config().num_partitions;
  if (full.config().num_partitions > 1) return full.config().num_partitions;
  return std::max<int64_t>(1, hlo::MaxDeviceIdInShardings(full) + 1);
}

// Whether the module has manual parts (manual shardings or the manual custom-calls).
bool HasManualParts(const HloModule& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      const std::string& target = instr->attrs().custom_call_target;
      if (target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape") return true;
      if (instr->has_sharding() &&
          instr->sharding().ToString().find("manual") != std::string::npos) {
        return true;
      }
    }
  }
  return false;
}

// Whether the per-device reference runs give different results for a module without manual
// parts: it is an SPMD program already (collectives, partition-id) whose value depends on the
// device, while its root (not manual) says all devices compute one value. Verification takes
// device 0's result as that value (verify.h), which then means nothing: such mismatches are no
// partitioner bug (tests/testdata/matmul_spmd.hlo fails `spmd-run --verify` unmutated).
bool DeviceDependentInput(const HloModule& full, const std::vector<hlo::Literal>& expected) {
  if (HasManualParts(full)) return false;
  for (const hlo::Literal& result : expected) {
    if (!(result == expected.front())) return true;
  }
  return false;
}

// Whether every failing leaf is floating-point (integers and pred are compared exactly).
bool OnlyFloatsFail(const runtime::VerifyResult& verdict) {
  for (const runtime::LeafVerdict& leaf : verdict.leaves) {
    if (!leaf.ok() && !hlo::IsFloatingPointType(leaf.shape.element_type())) return false;
  }
  return true;
}

// Ten times the loosest default tolerance of the leaves, and at least rtol = atol = 1e-3 (a
// chain of dots can cancel intermediates in the thousands down to a result near 1).
runtime::Tolerance LooseTolerance(const runtime::VerifyResult& verdict) {
  runtime::Tolerance loose{1e-3, 1e-3};
  for (const runtime::LeafVerdict& leaf : verdict.leaves) {
    loose.rtol = std::max(loose.rtol, 10 * leaf.tolerance.rtol);
    loose.atol = std::max(loose.atol, 10 * leaf.tolerance.atol);
  }
  return loose;
}

// Whether the module applies a discontinuous or ill-conditioned op (rounding, sign, compare,
// conversion to integers, sort, log near 0, ...) and sums floats (dot, reduce, ...): a sum
// reordered by partitioning then moves a few values across a step, e.g. bf16 round(x) of a
// dot's result is 1 on one side and 2 on the other.
bool IllConditioned(const HloModule& module) {
  static const std::vector<HloOpcode> kSteps = {HloOpcode::kFloor,
                                                HloOpcode::kCeil,
                                                HloOpcode::kRoundNearestAfz,
                                                HloOpcode::kRoundNearestEven,
                                                HloOpcode::kSign,
                                                HloOpcode::kCompare,
                                                HloOpcode::kRemainder,
                                                HloOpcode::kAtan2,
                                                HloOpcode::kReducePrecision,
                                                HloOpcode::kSort,
                                                HloOpcode::kLog,
                                                HloOpcode::kLog1p,
                                                HloOpcode::kSqrt,
                                                HloOpcode::kRsqrt,
                                                HloOpcode::kPower,
                                                HloOpcode::kDivide,
                                                HloOpcode::kConvert};
  static const std::vector<HloOpcode> kSums = {HloOpcode::kDot,       HloOpcode::kConvolution,
                                               HloOpcode::kReduce,    HloOpcode::kReduceWindow,
                                               HloOpcode::kAllReduce, HloOpcode::kReduceScatter,
                                               HloOpcode::kScatter};
  bool step = false, sum = false;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      const HloOpcode op = instr->opcode();
      step |= std::find(kSteps.begin(), kSteps.end(), op) != kSteps.end();
      sum |= std::find(kSums.begin(), kSums.end(), op) != kSums.end() && instr->shape().IsArray() &&
             hlo::IsFloatingPointType(instr->shape().element_type());
    }
  }
  return step && sum;
}

// Whether each failing leaf differs in at most 2% of its elements (at least one allowed) and
// its devices agree.
bool FewMismatches(const runtime::VerifyResult& verdict) {
  for (const runtime::LeafVerdict& leaf : verdict.leaves) {
    const runtime::ArrayComparison& c = leaf.comparison;
    if (!leaf.disagreement.empty() || !c.problem.empty()) return false;
    if (c.mismatches > std::max<int64_t>(1, c.elements / 50)) return false;
  }
  return true;
}

// A mismatch's class, the first line of its detail (failures are grouped by it): whether the
// values are wrong or only devices that should agree disagree, and what the input holds that
// is known to matter (manual parts, unreduced shardings).
std::string MismatchClass(const HloModule& full, const runtime::VerifyResult& verdict) {
  bool wrong_values = false, unreduced = false;
  for (const runtime::LeafVerdict& leaf : verdict.leaves) wrong_values |= !leaf.comparison.ok();
  for (const auto& computation : full.computations()) {
    for (const auto& instr : computation->instructions()) {
      unreduced |= instr->has_sharding() &&
                   instr->sharding().ToString().find("unreduced") != std::string::npos;
    }
  }
  std::string out = wrong_values ? "wrong values" : "devices that should agree disagree";
  if (HasManualParts(full)) out += ", input with manual parts";
  if (unreduced) out += ", input with unreduced shardings";
  return out;
}

// Compares the device results with the reference under the default tolerances and, for a
// failing floating leaf, against the exact (f64) result by the reference's own rounding error
// (spmd-run --verify's rule, verify_exact.h: a reordered or wider sum may be closer to the exact
// value than the sequential reference). A floating-point mismatch within LooseTolerance, or in
// a few elements of an ill-conditioned module, is a near miss (a reordered sum), not a failure.
CheckResult Compare(const HloModule& full, const std::vector<hlo::Literal>& expected,
                    const std::vector<hlo::Literal>& results, uint64_t seed) {
  runtime::VerifyOptions verify;
  absl::StatusOr<runtime::VerifyResult> verdict =
      runtime::CompareResults(full, expected, results, verify);
  if (verdict.ok() && runtime::NeedsExactRecheck(full, verify, *verdict)) {
    // The same seeded arguments again (RandomArguments is deterministic).
    runtime::RecheckAgainstExact(full, runtime::RandomArguments(full, seed), verify, *verdict);
  }
  if (!verdict.ok()) {
    if (IsUnsupported(verdict.status()))
      return Skip("unsupported by the oracle", Message(verdict.status()));
    if (runtime::IsDeviceDependentInput(verdict.status())) {
      return Skip(kDeviceDependent, Message(verdict.status()));
    }
    return Fail("compare-error", Message(verdict.status()));
  }
  if (verdict->ok()) return Result(Outcome::kVerified, "");
  if (DeviceDependentInput(full, expected)) {
    return Skip(kDeviceDependent, verdict->ToString());
  }
  verify.tolerance = LooseTolerance(*verdict);
  absl::StatusOr<runtime::VerifyResult> loose =
      runtime::CompareResults(full, expected, results, verify);
  if (OnlyFloatsFail(*verdict) && loose.ok() && loose->ok()) {
    return Result(Outcome::kNearMiss,
                  "within ten times the default tolerance (rtol = atol = "
                  "1e-3 at least)",
                  verdict->ToString());
  }
  if (OnlyFloatsFail(*verdict) && FewMismatches(*verdict) && IllConditioned(full)) {
    return Result(Outcome::kNearMiss, "a few elements after a discontinuous op on a float sum",
                  verdict->ToString());
  }
  return Fail("mismatch", MismatchClass(full, *verdict) + "\n" + verdict->ToString());
}

// Runs both programs on seeded random arguments and compares them (the file comment's stages).
CheckResult Execute(const HloModule& full, const HloModule& spmd, int64_t devices, uint64_t seed,
                    const CheckOptions& options, const Progress& progress) {
  progress("limits");
  if (std::string why = Nondeterminism(full); !why.empty()) return Skip("nondeterministic", why);
  if (std::string why = OverLimits(full, spmd, devices, options); !why.empty()) return Skip(why);
  progress("arguments");
  std::vector<hlo::Literal> arguments = runtime::RandomArguments(full, seed);
  absl::StatusOr<std::vector<std::vector<hlo::Literal>>> device_arguments =
      runtime::ShardArguments(full, spmd, arguments, devices);
  if (!device_arguments.ok()) {
    if (IsUnsupported(device_arguments.status())) {
      return Skip("unsupported by the oracle", Message(device_arguments.status()));
    }
    return Fail("shard-arguments", Message(device_arguments.status()));
  }
  progress("reference");
  absl::StatusOr<std::vector<hlo::Literal>> expected = runtime::RunReference(
      full, std::move(arguments), devices, options.collective_timeout_seconds);
  if (!expected.ok()) return Skip("the reference cannot run", Message(expected.status()));
  progress("spmd-run");
  runtime::MultiDeviceOptions run;
  run.num_partitions = devices;
  run.collective_timeout_seconds = options.collective_timeout_seconds;
  absl::StatusOr<std::vector<hlo::Literal>> results =
      runtime::RunOnDevices(spmd, *std::move(device_arguments), run);
  if (!results.ok()) {
    if (IsUnsupported(results.status())) {
      return Skip("unsupported by the executor", Message(results.status()));
    }
    return Fail("spmd-run-error", Message(results.status()));
  }
  progress("compare");
  return Compare(full, *expected, *results, seed);
}

// Modular verification (runtime/cpu/modular_verify.h) of the same pair, as spmd-run --verify
// uses it for what it cannot run: it must pass what the full run passed, and is the oracle where
// the full run could not go ahead for a reason other than nondeterminism. A mismatch is a
// failure (floating ones within ten times the default tolerance: a near miss); what it refuses
// (manual and unreduced values, collectives in the input) keeps `result`. A module whose value
// depends on the device has no single meaning to check.
CheckResult CheckModular(const HloModule& full, const HloModule& spmd, int64_t devices,
                         uint64_t seed, const std::vector<hlo::SpmdOrigin>& origins,
                         CheckResult result, const Progress& progress) {
  const bool ran = result.outcome == Outcome::kVerified || result.outcome == Outcome::kNearMiss;
  const bool could_not_run = result.outcome == Outcome::kPartitioned &&
                             result.kind != "nondeterministic" && result.kind != kDeviceDependent;
  if (origins.empty() || !(ran || could_not_run)) return result;
  progress("modular");
  runtime::ModularVerifyOptions modular;
  modular.seed = seed;
  modular.num_partitions = devices;
  // A mutant's check stays within its time limit: what is left unchecked then is named.
  modular.element_budget = 20'000'000;
  modular.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  absl::StatusOr<runtime::ModularResult> checked =
      runtime::VerifyModular(full, spmd, origins, modular);
  if (!checked.ok() || checked->ok()) return result;
  // As for the full run (Compare, which also floors the loose tolerance at 1e-3): floating
  // mismatches within ten times the default tolerance are a near miss (e.g. a bf16 dot's partial
  // sums all-reduced in bf16 over 16 devices).
  modular.tolerance_scale = 10;
  modular.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  absl::StatusOr<runtime::ModularResult> loose =
      runtime::VerifyModular(full, spmd, origins, modular);
  if (loose.ok() && loose->ok() && loose->unverified.size() <= checked->unverified.size()) {
    return Result(Outcome::kNearMiss, "modular: within ten times the default tolerance",
                  checked->ToString());
  }
  return Fail("modular-mismatch", "full run: " + result.kind + "\n" + checked->ToString());
}

// ---- The child process ------------------------------------------------------------------------

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void RunChild(const std::function<std::string(const Progress&)>& work, int report,
                           int output, int64_t memory_limit_gib) {
  dup2(output, STDOUT_FILENO);
  dup2(output, STDERR_FILENO);
  if (memory_limit_gib > 0) {
    const rlim_t bytes = static_cast<rlim_t>(memory_limit_gib) << 30;
    const rlimit limit{bytes, bytes};
    setrlimit(RLIMIT_AS, &limit);
  }
  const Progress progress = [report](std::string_view phase) {
    WriteAll(report, "P " + std::string(phase) + "\n");
  };
  std::string result;
  {
    hlo::LargeStackThread thread([&] { result = work(progress); });
  }
  WriteAll(report, "R\n" + result);
  _exit(0);
}

// Reads the child's two pipes until both close or `deadline` passes.
bool ReadUntilDone(int report, int output, std::chrono::steady_clock::time_point deadline,
                   std::string* reported, std::string* printed) {
  pollfd fds[2] = {{report, POLLIN, 0}, {output, POLLIN, 0}};
  std::string* sinks[2] = {reported, printed};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    if (poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000))) < 0) continue;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || fds[k].revents == 0) continue;
      char buf[4096];
      const ssize_t n = read(fds[k].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[k]->append(buf, static_cast<size_t>(n));
        if (k == 1 && printed->size() > 16384) printed->erase(0, printed->size() - 8192);
      } else {
        fds[k].fd = -1;
        --open_fds;
      }
    }
  }
  return true;
}

// Splits what the child reported into its last phase and its result.
void ParseReport(const std::string& reported, IsolatedRun* run) {
  size_t at = 0;
  while (at < reported.size()) {
    size_t eol = reported.find('\n', at);
    if (eol == std::string::npos) eol = reported.size();
    const std::string line = reported.substr(at, eol - at);
    if (line == "R") {
      run->finished = true;
      run->result = eol < reported.size() ? reported.substr(eol + 1) : "";
      return;
    }
    if (line.rfind("P ", 0) == 0) run->last_phase = line.substr(2);
    at = eol + 1;
  }
}

std::string Encode(const CheckResult& r) {
  std::string kind = r.kind;
  std::replace(kind.begin(), kind.end(), '\n', ' ');
  return std::to_string(static_cast<int>(r.outcome)) + "\n" + kind + "\n" + r.detail;
}

CheckResult Decode(const std::string& s) {
  const size_t a = s.find('\n');
  const size_t b = a == std::string::npos ? a : s.find('\n', a + 1);
  if (b == std::string::npos) return Fail("crash", "the child's report is cut short: " + s);
  return Result(static_cast<Outcome>(std::atoi(s.substr(0, a).c_str())), s.substr(a + 1, b - a - 1),
                s.substr(b + 1));
}

std::string Tail(const std::string& s, size_t lines) {
  size_t at = s.size();
  for (size_t k = 0; k <= lines && at > 0; ++k) {
    at = s.rfind('\n', at - 1);
    if (at == std::string::npos) return s;
  }
  return s.substr(at + 1);
}

}  // namespace

CheckResult CheckMutant(const Mutant& mutant, const CheckOptions& options,
                        const Progress& progress) {
  progress("parse");
  const std::string path =
      (options.work_dir / ("mutant-" + std::to_string(getpid()) + ".hlo")).string();
  std::ofstream(path, std::ios::binary) << mutant.text;
  absl::StatusOr<hlo::ParsedModule> full = LoadVerified(path, mutant.text);
  if (!full.ok()) {
    const bool verifier = full.status().code() == absl::StatusCode::kFailedPrecondition;
    return Result(Outcome::kRejected, verifier ? "verifier" : "parse", Message(full.status()));
  }
  progress("partition");
  std::vector<hlo::SpmdOrigin> origins;
  absl::StatusOr<hlo::ParsedModule> spmd =
      RunDriver(path, mutant.passes, mutant.dot_strategy, &origins);
  if (!spmd.ok()) {
    if (spmd.status().code() == absl::StatusCode::kDataLoss) {
      return Fail("unparsable-output", Message(spmd.status()));
    }
    return Result(Outcome::kPartitionError, absl::StatusCodeToString(spmd.status().code()),
                  StripLocation(Message(spmd.status())));
  }
  if (std::find(mutant.passes.begin(), mutant.passes.end(), "propagate") != mutant.passes.end()) {
    // As spmd-run does: the reference reads the shardings propagation chose.
    progress("propagate");
    absl::StatusOr<hlo::ParsedModule> propagated = RunDriver(path, {"propagate"});
    if (!propagated.ok()) return Fail("propagation-alone-failed", Message(propagated.status()));
    full = std::move(propagated);
  }
  std::remove(path.c_str());
  const int64_t devices = Devices(*spmd->module, *full->module);
  CheckResult result =
      Execute(*full->module, *spmd->module, devices, mutant.index, options, progress);
  return CheckModular(*full->module, *spmd->module, devices, mutant.index, origins,
                      std::move(result), progress);
}

IsolatedRun RunIsolated(const std::function<std::string(const Progress&)>& work,
                        double timeout_seconds, int64_t memory_limit_gib) {
  IsolatedRun run;
  int report[2], output[2];
  if (pipe2(report, O_CLOEXEC) != 0) return run;
  if (pipe2(output, O_CLOEXEC) != 0) {
    close(report[0]);
    close(report[1]);
    return run;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    close(output[0]);
    RunChild(work, report[1], output[1], memory_limit_gib);
  }
  close(report[1]);
  close(output[1]);
  std::string reported;
  const auto deadline =
      start + std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  if (pid < 0) {
    run.output_tail = std::string("fork failed: ") + std::strerror(errno);
  } else if (!ReadUntilDone(report[0], output[0], deadline, &reported, &run.output_tail)) {
    run.timed_out = true;
    kill(pid, SIGKILL);
  }
  close(report[0]);
  close(output[0]);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ParseReport(reported, &run);
  if (run.timed_out) run.finished = false;
  if (pid > 0 && WIFSIGNALED(status) && !run.timed_out) {
    run.signal = WTERMSIG(status);
    run.finished = false;
  }
  if (pid > 0 && WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (run.exit_code != 0) run.finished = false;
  return run;
}

CheckResult CheckMutantIsolated(const Mutant& mutant, const CheckOptions& options) {
  auto check = [&] {
    return RunIsolated(
        [&](const Progress& progress) { return Encode(CheckMutant(mutant, options, progress)); },
        options.timeout_seconds, options.memory_limit_gib);
  };
  IsolatedRun run = check();
  // A run past the deadline is tried once more before it counts as a hang: on a shared machine
  // a busy moment (a build on every core) can stretch a one-second check past it, and a true
  // hang times out again.
  if (run.timed_out && run.last_phase != "reference" && run.last_phase != "arguments") {
    run = check();
  }
  CheckResult result;
  const std::string output =
      run.output_tail.empty() ? "" : "\n--- output ---\n" + Tail(run.output_tail, 20);
  if (run.finished) {
    result = Decode(run.result);
  } else if (run.timed_out && (run.last_phase == "reference" || run.last_phase == "arguments")) {
    result = Skip("the reference is over the time budget");
  } else if (run.timed_out) {
    result = Fail("hang", hlo::StrCat("no result after ", options.timeout_seconds, " s in phase '",
                                      run.last_phase, "'", output));
  } else {
    const std::string how =
        run.signal != 0 ? hlo::StrCat("signal ", run.signal, " (", strsignal(run.signal), ")")
                        : hlo::StrCat("exit code ", run.exit_code);
    result = Fail("crash", hlo::StrCat("the check died with ", how, " in phase '", run.last_phase,
                                       "'", output));
  }
  result.phase = run.last_phase;
  result.seconds = run.seconds;
  return result;
}

}  // namespace partition_fuzz
