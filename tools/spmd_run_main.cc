// spmd-run: run an HLO module on N simulated CPU devices, or verify an SPMD program against its
// unpartitioned module (../shared/docs/cli-contract.md, "spmd-run").
//
// Modes:
//   spmd-run --partitioned P.hlo          run the SPMD program P on N devices as it is;
//   spmd-run --passes none M.hlo          run M without partitioning (N devices, default 1);
//   spmd-run --verify --against P.hlo M   compare SPMD program P with unpartitioned M on the
//                                         same seeded random (or --inputs) arguments;
//   spmd-run --verify M                   the same with P = M partitioned by our passes
//                                         (--passes, default propagate,partition,cleanup);
//   spmd-run M                            partition M with --passes and run it on N devices.
// Files for --inputs/--outputs (.npy, see npy.h):
//   param_<i>.npy, output.npy; tuple leaves add their index: param_0_1.npy, output_2.npy;
//   per-device values of a multi-device run live in device_<d>/ (inputs fall back to the
//   shared file when device_<d>/ has none); a verification also writes reference_output*.npy,
//   the unpartitioned module's result.
// Errors are `FILE:LINE:COL: error: MESSAGE` when they concern an instruction. Exit codes:
// 0 success, 1 an input failed (parse, verification, run, mismatch), 2 usage error.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "hlo/analysis/module_stats.h"
#include "hlo/io/module_io.h"
#include "hlo/large_stack.h"
#include "hlo/strings.h"
#include "hlo/verifier/hlo_verifier.h"
#include "runtime/cpu/host_malloc.h"
#include "runtime/cpu/modular_verify.h"
#include "runtime/cpu/multi_device_runner.h"
#include "runtime/cpu/sampled_verify.h"
#include "runtime/cpu/verify.h"
#include "runtime/cuda/cuda_runner.h"
#include "tools/cli_checks.h"
#include "tools/partition_driver.h"
#include "tools/spmd_run_io.h"
#include "tools/spmd_run_mpi.h"
#include "tools/version.h"

namespace {

using hlo::Literal;
using hlo::ParsedModule;

struct Options {
  std::string input;
  int64_t num_partitions = 0;  // 0: from the modules.
  std::string passes = "default";
  std::string backend = "cpu";
  bool verify = false;
  std::string against;
  bool partitioned = false;
  bool strict = false;
  uint64_t seed = 0;
  // --rtol / --atol: the tolerance of every compared output (default: by element type, with
  // floating mismatches judged again against the exact result; verify_exact.h).
  std::optional<double> rtol, atol;
  std::string inputs_dir;
  std::string outputs_dir;
  int repeat = 1;
  double collective_timeout = 60.0;
  // A multi-process job (tools/spmd_run_mpi.h): --mpi or a launcher's environment.
  bool mpi = false;
  int64_t devices_per_process = 0;  // 0: the device count over the number of processes.
  // Every process reads its own devices' arguments and writes its own devices' results.
  bool per_process_io = false;
  tools::MpiJob* job = nullptr;     // Set on rank 0 of such a job on the CPU executor.
  // With --backend=cuda: this process's device of the job (the ncclUniqueId over MPI).
  std::optional<runtime::cuda::DistributedEnv> cuda_env;
  // Refuse modules whose estimated work or live memory exceed these (0: no limit). 800 GFLOP
  // keeps a --verify run to about 40 s of CPU time on the 2-core machines we measured (AVX-512
  // GEMM): a bf16 dot on 64 devices spends most of it converting and generating operands
  // (LookaheadUsersOfDot, 1100 GFLOP: 58 s), a plain f32 dot far less (8192^3 on 2 devices,
  // 1100 GFLOP: 19 s).
  double max_gflop = 800;
  double max_memory_gib = 8;
  // --verify over the limits above: auto compares sampled output elements (sampled_verify.h),
  // and checks instruction by instruction (modular_verify.h) when the outputs depend on more
  // than a sample can evaluate; never refuses; always samples even when the full run fits;
  // modular checks instruction by instruction.
  std::string sampled = "auto";
};

// Prints `message` (one error line) and returns exit code 1: an input failed.
int Fail(std::string_view message) {
  std::cerr << message << "\n";
  return 1;
}

int Fail(const absl::Status& status) { return Fail(hlo::ToStd(status.message())); }

// ---- Loading and locating errors ------------------------------------------------------------

const hlo::HloInstruction* FindInstruction(const hlo::HloModule& module, std::string_view name) {
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->name() == name) return instr.get();
    }
  }
  return nullptr;
}

// `status` placed at the first instruction of `parsed` it names (ParsedModule::Locate).
std::string Locate(const ParsedModule& parsed, const absl::Status& status) {
  return parsed.Locate(hlo::ToStd(status.message()));
}

// An error of the program our passes made from `input`, placed in the file the user wrote: the
// instruction it names, less the `.spmdN` / `.rsN` suffixes the partitioner adds, where `input`
// defines it (the partitioned program's own line follows); else placed in `program`.
std::string LocateInInput(const ParsedModule& input, const ParsedModule& program,
                          const absl::Status& status) {
  const std::string message(hlo::ToStd(status.message()));
  const std::string located = program.Locate(message);
  const size_t at = message.find('%');
  if (located.rfind(program.filename + ":", 0) != 0 || at == std::string::npos) return located;
  size_t end = message.find_first_of(": ,)", at);
  std::string name = message.substr(at + 1, end == std::string::npos ? end : end - at - 1);
  while (!input.PositionOf(name)) {
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos) return located;
    const std::string suffix = name.substr(dot + 1);
    const size_t digits = suffix.find_first_of("0123456789");
    const std::string kind = suffix.substr(0, digits);
    if ((kind != "spmd" && kind != "rs") || digits == std::string::npos) return located;
    name.resize(dot);
  }
  const std::pair<int64_t, int64_t> position = *input.PositionOf(name);
  return hlo::StrCat(
      input.filename, ":", position.first, ":", position.second, ": error: ", message,
      " (in the partitioned program: ", located.substr(0, located.find(": error: ")), ")");
}

// Reads, parses and verifies `path`. `num_partitions` (when positive) overrides the module's
// device count, as --num-partitions does; otherwise a module whose shardings name more devices
// than its num_partitions gets 1 + the largest device id, as spmd-partition does.
std::optional<ParsedModule> Load(const std::string& path, std::string* error,
                                 int64_t num_partitions = 0) {
  absl::StatusOr<std::string> contents = hlo::ReadInput(path);
  if (!contents.ok()) {
    *error = std::string(hlo::ToStd(contents.status().message()));
    return std::nullopt;
  }
  absl::StatusOr<ParsedModule> parsed = hlo::ParseModuleFile(path, *contents);
  if (!parsed.ok()) {
    *error = std::string(hlo::ToStd(parsed.status().message()));
    return std::nullopt;
  }
  // The device count spmd-partition would use (a module's shardings naming devices beyond its
  // declared num_partitions is then a verifier error, as there).
  absl::StatusOr<int64_t> resolved = tools::ResolveNumPartitions(
      *parsed->module, num_partitions > 0 ? std::optional<int64_t>(num_partitions) : std::nullopt);
  if (!resolved.ok()) {
    *error = parsed->FormatError(nullptr, hlo::ToStd(resolved.status().message()));
    return std::nullopt;
  }
  parsed->module->mutable_config()->num_partitions = *resolved;
  std::vector<hlo::VerifierError> errors;
  if (absl::Status s = hlo::VerifyModule(*parsed->module, &errors); !s.ok()) {
    const hlo::HloInstruction* instr =
        errors.empty() ? nullptr : FindInstruction(*parsed->module, errors[0].instruction_name);
    *error =
        parsed->FormatError(instr, errors.empty() ? hlo::ToStd(s.message()) : errors[0].message);
    return std::nullopt;
  }
  if (absl::Status s = hlo::CheckNoElidedConstants(*parsed->module); !s.ok()) {
    *error = parsed->Locate(hlo::ToStd(s.message()));
    return std::nullopt;
  }
  return *std::move(parsed);
}

// INPUT partitioned by our own passes (as spmd-partition would), parsed back for running.
std::optional<ParsedModule> Partition(const Options& options,
                                      const std::vector<std::string>& passes, std::string* error,
                                      std::vector<hlo::SpmdOrigin>* origins = nullptr) {
  tools::DriverOptions driver;
  driver.record_origins = origins != nullptr;
  driver.passes = passes;
  if (options.num_partitions > 0) driver.num_partitions = options.num_partitions;
  driver.strict = options.strict;
  absl::StatusOr<tools::DriverResult> result = tools::ProcessInput(options.input, driver);
  if (!result.ok()) {
    *error = std::string(hlo::ToStd(result.status().message()));
    return std::nullopt;
  }
  if (origins != nullptr) *origins = std::move(result->origins);
  absl::StatusOr<ParsedModule> parsed = hlo::ParseHloModuleWithLocations(
      result->output, hlo::StrCat(options.input, " (partitioned)"));
  if (!parsed.ok()) {
    *error = std::string(hlo::ToStd(parsed.status().message()));
    return std::nullopt;
  }
  return *std::move(parsed);
}

// A clear refusal instead of hours of simulation or an out-of-memory abort: the module's
// estimated FLOPs and peak live bytes (hlo/analysis/module_stats), times the `devices` that
// run it in this one process, against the limits.
std::optional<std::string> ExceedsLimits(const Options& options, const hlo::ModuleStats& stats,
                                         int64_t devices = 1) {
  const double gflop = static_cast<double>(stats.flops) * static_cast<double>(devices) / 1e9;
  const double gib = static_cast<double>(stats.peak_memory_bytes) * static_cast<double>(devices) /
                     (1024.0 * 1024 * 1024);
  char buf[256];
  if (options.max_gflop > 0 && gflop > options.max_gflop) {
    std::snprintf(buf, sizeof(buf),
                  "the module needs about %.0f GFLOP, above --max-gflop=%.0f (the CPU executor "
                  "simulates every device on this machine); raise the limit to run it anyway",
                  gflop, options.max_gflop);
    return std::string(buf);
  }
  if (options.max_memory_gib > 0 && gib > options.max_memory_gib) {
    std::snprintf(buf, sizeof(buf),
                  "the module's live values peak at about %.1f GiB, above --max-memory-gib=%.1f; "
                  "raise the limit to run it anyway",
                  gib, options.max_memory_gib);
    return std::string(buf);
  }
  return std::nullopt;
}

// A --verify run keeps the reference's outputs while every device of the SPMD program runs:
// refused when the two together exceed --max-memory-gib, though each fits on its own.
std::optional<std::string> VerifyExceedsMemory(const Options& options,
                                               const hlo::HloModule& unpartitioned,
                                               const hlo::ModuleStats& spmd, int64_t devices) {
  if (options.max_memory_gib <= 0) return std::nullopt;
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  const hlo::Shape& returned = unpartitioned.entry_computation()->root_instruction()->shape();
  const double outputs = static_cast<double>(returned.byte_size()) / kGiB;
  const double running = static_cast<double>(spmd.peak_memory_bytes) *
                         static_cast<double>(devices) / kGiB;
  if (outputs + running <= options.max_memory_gib) return std::nullopt;
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "verifying holds the reference's outputs (%.1f GiB) while the %lld devices run "
                "(%.1f GiB): above --max-memory-gib=%.1f; raise the limit to run it anyway",
                outputs, static_cast<long long>(devices), running, options.max_memory_gib);
  return std::string(buf);
}

// --num-partitions, else the first module's num_partitions, else (for an unpartitioned
// module) 1 + the largest device id in its shardings.
int64_t ResolveDevices(const Options& options, const hlo::HloModule& program,
                       const hlo::HloModule* unpartitioned) {
  if (options.num_partitions > 0) return options.num_partitions;
  if (program.config().num_partitions > 1) return program.config().num_partitions;
  if (unpartitioned == nullptr) return 1;
  if (unpartitioned->config().num_partitions > 1) return unpartitioned->config().num_partitions;
  return std::max<int64_t>(1, hlo::MaxDeviceIdInShardings(*unpartitioned) + 1);
}

// ---- Running --------------------------------------------------------------------------------

double MedianMillis(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  return n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
}

// Runs `module` once on `args` with `backend`: the CPU executor's simulated devices, or the
// CUDA executor (one process driving the local GPUs, or -- with RANK/WORLD_SIZE set -- this
// process's device of a multi-process job, whose `args` then hold that device's only).
absl::StatusOr<std::vector<Literal>> RunOnBackend(const hlo::HloModule& module,
                                                  std::vector<std::vector<Literal>> args,
                                                  const runtime::MultiDeviceOptions& devices,
                                                  const Options& options) {
  if (options.job != nullptr) {
    return options.job->Run(module, devices.num_partitions, devices.num_replicas, std::move(args));
  }
  if (options.backend != "cuda") return runtime::RunOnDevices(module, std::move(args), devices);
  runtime::cuda::CudaRunOptions cuda;
  cuda.num_partitions = devices.num_partitions;
  cuda.num_replicas = devices.num_replicas;
  cuda.collective_timeout_seconds = devices.collective_timeout_seconds;
  absl::StatusOr<std::optional<runtime::cuda::DistributedEnv>> env =
      options.cuda_env ? options.cuda_env : runtime::cuda::DistributedEnvFromEnvironment();
  if (!env.ok()) return env.status();
  if (!env->has_value()) return runtime::cuda::RunOnCudaDevices(module, args, cuda);
  absl::StatusOr<Literal> mine = runtime::cuda::RunDistributed(module, args[0], **env, cuda);
  if (!mine.ok()) return mine.status();
  std::vector<Literal> out;
  out.push_back(*std::move(mine));
  return out;
}

// The device this process runs in a multi-process CUDA job (RANK), or -1.
int64_t DistributedRank(const Options& options) {
  if (options.backend != "cuda") return -1;
  if (options.cuda_env) return options.cuda_env->rank;
  absl::StatusOr<std::optional<runtime::cuda::DistributedEnv>> env =
      runtime::cuda::DistributedEnvFromEnvironment();
  return env.ok() && env->has_value() ? (*env)->rank : -1;
}

// Runs `module` `repeat` times on copies of `args`; returns the last results. Prints the
// median wall time when repeat > 1.
absl::StatusOr<std::vector<Literal>> RunRepeated(const hlo::HloModule& module,
                                                 std::vector<std::vector<Literal>> args,
                                                 const runtime::MultiDeviceOptions& devices,
                                                 const Options& options) {
  const int repeat = options.repeat;
  std::vector<double> times;
  absl::StatusOr<std::vector<Literal>> results = absl::UnknownError("not run");
  const size_t num_devices = args.size();
  for (int k = 0; k < std::max(1, repeat); ++k) {
    // The last run takes the arguments themselves (they can be GiBs): no copy without --repeat.
    std::vector<std::vector<Literal>> these = k + 1 < repeat ? args : std::move(args);
    const auto start = std::chrono::steady_clock::now();
    results = RunOnBackend(module, std::move(these), devices, options);
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    if (!results.ok()) return results;
  }
  if (repeat > 1) {
    std::cout << "median wall time: " << MedianMillis(times) << " ms over " << repeat << " runs on "
              << num_devices << " device(s)\n";
  }
  return results;
}

// The files of a run (--inputs, --outputs, --seed).
tools::RunFiles FilesOf(const Options& options) {
  return tools::RunFiles{options.inputs_dir, options.outputs_dir, options.seed};
}

int RunProgram(const Options& options, const std::vector<std::string>& passes) {
  std::string error;
  std::optional<ParsedModule> program = options.partitioned || passes.empty()
                                            ? Load(options.input, &error)
                                            : Partition(options, passes, &error);
  if (!program) return Fail(error);
  const hlo::HloModule& module = *program->module;
  runtime::MultiDeviceOptions devices;
  devices.num_partitions = ResolveDevices(options, module, nullptr);
  devices.num_replicas = std::max<int64_t>(1, module.config().replica_count);
  devices.collective_timeout_seconds = options.collective_timeout;
  const int64_t n = devices.num_partitions * devices.num_replicas;
  // The devices whose values this process holds: its own with --per-process-io.
  int64_t held = n;
  if (options.per_process_io) {
    absl::StatusOr<int64_t> k = options.job->DevicesPerProcess(n);
    if (!k.ok()) return Fail(hlo::StrCat(options.input, ": error: ", k.status().message()));
    held = *k;
  }
  if (options.backend == "cpu") {
    if (std::optional<std::string> refusal =
            ExceedsLimits(options, hlo::ComputeModuleStats(module), held)) {
      return Fail(hlo::StrCat(options.input, ": error: ", *refusal));
    }
  }
  if (options.per_process_io) {
    absl::Status s = options.job->RunPerProcess(module, devices.num_partitions,
                                                devices.num_replicas, FilesOf(options));
    return s.ok() ? 0 : Fail(Locate(*program, s));
  }
  // A multi-process CUDA job: this process runs device `rank` only.
  const int64_t rank = DistributedRank(options);
  if (rank >= n) return Fail(hlo::StrCat("RANK=", rank, " but the program has ", n, " devices"));
  const int64_t first = std::max<int64_t>(rank, 0);
  absl::StatusOr<std::vector<std::vector<Literal>>> args = tools::DeviceArguments(
      FilesOf(options), *module.entry_computation(), first, rank >= 0 ? 1 : n);
  if (!args.ok()) return Fail(Locate(*program, args.status()));
  absl::StatusOr<std::vector<Literal>> results =
      RunRepeated(module, *std::move(args), devices, options);
  if (!results.ok()) return Fail(Locate(*program, results.status()));
  if (!options.outputs_dir.empty()) {
    absl::Status s = tools::WriteDeviceResults(options.outputs_dir, n, first, *results);
    return s.ok() ? 0 : Fail(s);
  }
  std::cout << tools::DeviceResultsText(n, first, *results);
  return 0;
}

// ---- Verifying ------------------------------------------------------------------------------

// Prints `verdict`; exit code 0 when it passed, 1 (with an error line) when not.
// "verification passed: PROGRAM matches INPUT on N devices (seed S)", the start of every
// oracle's passing line.
std::string PassedLine(const Options& options, const std::string& program_name, int64_t n) {
  return hlo::StrCat("verification passed: ", program_name, " matches ", options.input, " on ",
                     n, " devices (seed ", options.seed, ")");
}

int ReportVerdict(const Options& options, const runtime::VerifyResult& verdict,
                  const std::string& program_name, int64_t n, std::string_view how) {
  std::cout << verdict.ToString();
  if (!verdict.ok()) {
    std::cerr << program_name << ": error: the SPMD program's outputs do not match "
              << options.input << " on " << n << " devices (seed " << options.seed << ")\n";
    return 1;
  }
  std::cout << PassedLine(options, program_name, n) << how << "\n";
  return 0;
}

// The tolerance --rtol / --atol give (the other one 0), or none.
std::optional<runtime::Tolerance> GivenTolerance(const Options& options) {
  if (!options.rtol && !options.atol) return std::nullopt;
  return runtime::Tolerance{options.rtol.value_or(0), options.atol.value_or(0)};
}

// The sampled oracle (runtime/cpu/sampled_verify.h) for a pair too large to run in full.
// The modular oracle (runtime/cpu/modular_verify.h): each instruction checked on its own.
// `why`, when not empty, says why the run switched to it.
int VerifyModularProgram(const Options& options, const ParsedModule& full,
                         const ParsedModule& spmd, absl::Span<const hlo::SpmdOrigin> origins,
                         const std::string& program_name, int64_t n,
                         const std::string& why = "") {
  if (!why.empty()) std::cout << why << "; checking instruction by instruction instead\n";
  if (origins.empty()) {
    return Fail(hlo::StrCat(program_name, ": error: instruction-by-instruction verification "
                                          "needs our partitioner's records of where each value "
                                          "comes from (not available with --against, or "
                                          "without the partition pass)"));
  }
  runtime::ModularVerifyOptions modular;
  modular.seed = options.seed;
  modular.tolerance = GivenTolerance(options);
  modular.num_partitions = n;
  absl::StatusOr<runtime::ModularResult> verdict =
      runtime::VerifyModular(*full.module, *spmd.module, origins, modular);
  if (!verdict.ok()) return Fail(Locate(spmd, verdict.status()));
  std::cout << verdict->ToString();
  if (!verdict->ok()) {
    std::cerr << program_name << ": error: " << verdict->mismatches.size()
              << " instructions of the SPMD program do not compute what " << options.input
              << " computes on " << n << " devices (seed " << options.seed << ")\n";
    return 1;
  }
  std::cout << PassedLine(options, program_name, n)
            << " instruction by instruction (each checked on sampled elements of random "
               "operands)";
  if (!verdict->unverified.empty()) {
    std::cout << "; " << verdict->unverified.size() << " not verified themselves (listed above)";
  }
  std::cout << "\n";
  return 0;
}

// The sampled oracle (runtime/cpu/sampled_verify.h) for a pair too large to run in full; with
// --sampled=auto, outputs that depend on more than a sample can evaluate are checked
// instruction by instruction instead.
int VerifySampledProgram(const Options& options, const ParsedModule& full,
                         const ParsedModule& spmd, absl::Span<const hlo::SpmdOrigin> origins,
                         const std::string& program_name, int64_t n) {
  if (options.sampled == "modular") {
    return VerifyModularProgram(options, full, spmd, origins, program_name, n);
  }
  runtime::SampledVerifyOptions sampled;
  sampled.seed = options.seed;
  sampled.tolerance = GivenTolerance(options);
  sampled.num_partitions = n;
  absl::StatusOr<runtime::VerifyResult> verdict =
      runtime::VerifySampled(*full.module, *spmd.module, sampled);
  const bool too_much = !verdict.ok() &&
                        (verdict.status().code() == absl::StatusCode::kResourceExhausted ||
                         verdict.status().code() == absl::StatusCode::kUnimplemented);
  if (too_much && options.sampled == "auto" && !origins.empty()) {
    return VerifyModularProgram(
        options, full, spmd, origins, program_name, n,
        hlo::StrCat("sampling the outputs cannot go ahead (", verdict.status().message(), ")"));
  }
  if (!verdict.ok()) return Fail(Locate(spmd, verdict.status()));
  return ReportVerdict(options, *verdict, program_name, n,
                       " on sampled elements (the point evaluator)");
}

int VerifyProgram(const Options& options, const std::vector<std::string>& passes) {
  std::string error;
  std::optional<ParsedModule> full = Load(options.input, &error, options.num_partitions);
  if (!full) return Fail(error);
  // Errors of our own partitioning are placed in the file the user wrote.
  const hlo::ParsedModule source_positions{
      nullptr, {}, full->instruction_positions, full->header_attributes, full->filename};
  auto locate_program = [&](const ParsedModule& program, const absl::Status& status) {
    return options.against.empty() ? LocateInInput(source_positions, program, status)
                                   : Locate(program, status);
  };
  // Why the full run cannot go ahead, and which program it names.
  std::optional<std::string> refusal =
      ExceedsLimits(options, hlo::ComputeModuleStats(*full->module));
  std::string refused = options.input;
  std::vector<hlo::SpmdOrigin> origins;
  std::optional<ParsedModule> spmd = options.against.empty()
                                         ? Partition(options, passes, &error, &origins)
                                         : Load(options.against, &error);
  if (!spmd) return Fail(error);
  if (options.against.empty() &&
      std::find(passes.begin(), passes.end(), "propagate") != passes.end()) {
    // The reference reads its parameters' and root's shardings as the partitioner saw them:
    // after propagation (which may shard an unannotated root, e.g. inside a manual region).
    std::optional<ParsedModule> propagated = Partition(options, {"propagate"}, &error);
    if (!propagated) return Fail(error);
    full = std::move(propagated);
  }
  const std::string program_name =
      options.against.empty() ? hlo::StrCat(options.input, " (partitioned)") : options.against;
  const int64_t n = ResolveDevices(options, *spmd->module, full->module.get());
  // Every device of the SPMD program runs in this process.
  if (!refusal) {
    const hlo::ModuleStats spmd_stats = hlo::ComputeModuleStats(*spmd->module);
    refusal = ExceedsLimits(options, spmd_stats, n);
    refused = program_name;
    if (!refusal) refusal = VerifyExceedsMemory(options, *full->module, spmd_stats, n);
  }
  const bool can_sample = options.inputs_dir.empty() && options.outputs_dir.empty() &&
                          options.backend == "cpu" && options.repeat == 1;
  const bool forced = options.sampled == "always" || options.sampled == "modular";
  if (forced || (refusal && options.sampled == "auto" && can_sample)) {
    if (!can_sample) {
      return Fail(hlo::StrCat(options.input, ": error: --sampled=", options.sampled,
                              " compares computed "
                              "elements only: it cannot take --inputs, --outputs, --repeat or "
                              "--backend=cuda"));
    }
    if (refusal) {
      std::cout << "the full run is over this machine's limits ("
                << *refusal
                << "); comparing sampled output elements instead (--sampled=never refuses)\n";
    }
    return VerifySampledProgram(options, *full, *spmd, origins, program_name, n);
  }
  if (refusal) return Fail(hlo::StrCat(refused, ": error: ", *refusal));
  // The full arguments: drawn from the seed or read from --inputs (again for the exact rerun).
  auto full_arguments = [&]() -> absl::StatusOr<std::vector<Literal>> {
    if (options.inputs_dir.empty()) return runtime::RandomArguments(*full->module, options.seed);
    return tools::ReadParameters(options.inputs_dir, *full->module->entry_computation());
  };
  absl::StatusOr<std::vector<Literal>> read = full_arguments();
  if (!read.ok()) return Fail(read.status());
  std::vector<Literal> arguments = *std::move(read);
  absl::StatusOr<std::vector<std::vector<Literal>>> device_args =
      runtime::ShardArguments(*full->module, *spmd->module, arguments, n);
  if (!device_args.ok()) return Fail(locate_program(*spmd, device_args.status()));
  runtime::VerifyOptions verify;
  verify.tolerance = GivenTolerance(options);
  absl::StatusOr<std::vector<Literal>> expected =
      runtime::RunReference(*full->module, std::move(arguments), n, options.collective_timeout);
  if (!expected.ok() && !origins.empty() && options.sampled == "auto" && can_sample) {
    // The unpartitioned module itself cannot run here (a loop that never ends, an op the
    // executor has no kernel for): our partitioning can still be checked op by op.
    return VerifyModularProgram(
        options, *full, *spmd, origins, program_name, n,
        hlo::StrCat("the unpartitioned module cannot run here (",
                    Locate(*full, expected.status()), ")"));
  }
  if (!expected.ok()) return Fail(Locate(*full, expected.status()));
  runtime::MultiDeviceOptions devices;
  devices.collective_timeout_seconds = options.collective_timeout;
  devices.num_partitions = n;
  absl::StatusOr<std::vector<Literal>> results =
      RunRepeated(*spmd->module, *std::move(device_args), devices, options);
  if (!results.ok()) return Fail(locate_program(*spmd, results.status()));
  absl::StatusOr<runtime::VerifyResult> verdict =
      runtime::CompareResults(*full->module, *std::move(expected), *results, verify);
  if (runtime::IsDeviceDependentInput(verdict.status())) {
    return Fail(source_positions.Locate(hlo::ToStd(verdict.status().message())));
  }
  if (!verdict.ok()) return Fail(locate_program(*spmd, verdict.status()));
  if (runtime::NeedsExactRecheck(*full->module, verify, *verdict)) {
    absl::StatusOr<std::vector<Literal>> again = full_arguments();
    if (!again.ok()) return Fail(again.status());
    runtime::RecheckAgainstExact(*full->module, *std::move(again), verify, *verdict);
  }
  if (!options.outputs_dir.empty()) {
    for (auto [stem, value] :
         {std::pair<const char*, const Literal*>{"output", &verdict->assembled},
          {"reference_output", &verdict->expected}}) {
      if (absl::Status s = tools::WriteOutputs(options.outputs_dir, stem, *value); !s.ok()) {
        return Fail(s);
      }
    }
  }
  return ReportVerdict(
      options, *verdict, program_name, n,
      options.backend == "cuda" ? " with the CUDA backend against the CPU executor" : "");
}

// Refusals that depend on what this build lacks; nullopt when the request can run.
std::optional<std::string> Unavailable(const Options& options,
                                       const std::vector<std::string>& passes) {
  if (options.backend == "cuda" && options.verify &&
      (std::getenv("RANK") != nullptr || std::getenv("WORLD_SIZE") != nullptr)) {
    return "--verify with --backend=cuda runs in one process (unset RANK and WORLD_SIZE)";
  }
  if (options.mpi && options.backend == "cuda" && options.verify) {
    return "--verify with --backend=cuda runs in one process (without --mpi)";
  }
  if (options.mpi && options.backend == "cpu" &&
      (options.repeat > 1 || options.sampled == "always" || options.sampled == "modular")) {
    return "--mpi runs the program once in full: it cannot take --repeat or --sampled=always "
           "or modular";
  }
  return std::nullopt;
}

// Why --per-process-io cannot go with the other options (a usage error), or nullopt.
std::optional<std::string> PerProcessConflict(const Options& options) {
  if (!options.per_process_io) return std::nullopt;
  if (options.verify) {
    return "--per-process-io cannot take --verify: verification compares on rank 0, which then "
           "holds every argument and result (without --per-process-io rank 0 scatters the "
           "arguments and gathers the results)";
  }
  if (options.backend != "cpu" || !options.mpi) {
    return "--per-process-io runs the processes of an MPI job on the CPU executor: it needs "
           "--mpi (or mpirun / srun starting several processes) and --backend=cpu";
  }
  return std::nullopt;
}

// This process's device of a CUDA job under MPI: rank, world size, the launcher's local rank
// (its GPU), and rank 0's ncclUniqueId sent to the others over MPI.
runtime::cuda::DistributedEnv CudaEnvOf(tools::MpiJob& job) {
  runtime::cuda::DistributedEnv env;
  env.rank = job.rank();
  env.world_size = job.size();
  env.local_rank = job.local_rank();
  env.share_id = [&job](std::optional<runtime::cuda::NcclUniqueId> mine)
      -> absl::StatusOr<runtime::cuda::NcclUniqueId> {
    runtime::cuda::NcclUniqueId id;
    std::vector<uint8_t> bytes(sizeof(id.bytes));
    if (mine) std::memcpy(bytes.data(), mine->bytes, bytes.size());
    absl::StatusOr<std::vector<uint8_t>> shared = job.ShareBytes(std::move(bytes));
    if (!shared.ok()) return shared.status();
    if (shared->size() != sizeof(id.bytes)) {
      return absl::InternalError("the ncclUniqueId from rank 0 has the wrong size");
    }
    std::memcpy(id.bytes, shared->data(), sizeof(id.bytes));
    return id;
  };
  return env;
}

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app{"Run HLO modules on simulated devices, or verify an SPMD program."};
  app.set_version_flag("--version", tools::VersionLine("spmd-run"));
  Options options;
  app.add_option("input", options.input, "HLO text (.hlo, .txt), HloModuleProto (.pb) or -")
      ->required();
  app.add_option("--num-partitions", options.num_partitions, "device count (1 to 65536)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  app.add_option("--passes", options.passes, "how INPUT is partitioned: default, none, or a list");
  app.add_option("--backend", options.backend, "cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  CLI::Option* verify =
      app.add_flag("--verify", options.verify, "compare the partitioned program with INPUT");
  app.add_option("--against", options.against, "with --verify: the SPMD program to check")
      ->needs(verify);
  app.add_flag("--partitioned", options.partitioned, "INPUT is already an SPMD program")
      ->excludes(verify);
  app.add_option("--seed", options.seed, "seed of the random inputs");
  app.add_option("--rtol", options.rtol,
                 "relative tolerance of every output (default: by element type, and a floating "
                 "mismatch is judged against the exact f64 result)")
      ->check(tools::kNonNegative);
  app.add_option("--atol", options.atol,
                 "absolute tolerance, scaled by max(1, the output's largest magnitude)")
      ->check(tools::kNonNegative);
  app.add_option("--inputs", options.inputs_dir, "read arguments from .npy files in DIR");
  app.add_option("--outputs", options.outputs_dir, "write results as .npy files into DIR");
  app.add_option("--repeat", options.repeat, "run K times, print the median wall time")
      ->check(tools::kPositive);
  app.add_option("--max-gflop", options.max_gflop,
                 "refuse modules needing more GFLOP than this (0: no limit; default 800)");
  app.add_option("--max-memory-gib", options.max_memory_gib,
                 "refuse modules whose live values peak above this many GiB (0: no limit; "
                 "default 8)");
  app.add_option("--sampled", options.sampled,
                 "with --verify: auto (default) compares sampled output elements when the full "
                 "run is over --max-gflop or --max-memory-gib, instruction by instruction when "
                 "they depend on too much to sample; never refuses instead; always samples; "
                 "modular checks each instruction on its own")
      ->check(CLI::IsMember({"auto", "never", "always", "modular"}));
  app.add_flag("--strict", options.strict,
               "refuse a partitioning that computes a split instruction whole (a replicated "
               "fallback)");
  app.add_option("--collective-timeout", options.collective_timeout,
                 "seconds a device waits for its peers at a collective (default 60)")
      ->check(tools::kPositive);
  app.add_flag("--mpi", options.mpi,
               "run across the processes of an MPI job (mpirun, srun): each runs the threads of "
               "its devices, collectives go over MPI; implied when a launcher started several "
               "processes");
  app.add_option("--devices-per-process", options.devices_per_process,
                 "with --mpi: devices each process runs (default: devices / processes)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  app.add_flag("--per-process-io", options.per_process_io,
               "with --mpi: each process reads its own devices' arguments (--inputs DIR: "
               "device_<d>/param_<i>.npy, else the shared param_<i>.npy; or draws them from "
               "--seed) and writes its own devices' results (--outputs DIR: "
               "device_<d>/output*.npy, renamed into place once every process has written); "
               "rank 0 holds no other process's values. Not with --verify");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  absl::StatusOr<std::vector<std::string>> passes = tools::ExpandPassList(options.passes);
  if (!passes.ok()) {
    std::cerr << "spmd-run: " << passes.status().message() << "\n";
    return 2;
  }
  // On the CPU executor rank 0 runs spmd-run and the others serve it; on CUDA (--mpi only)
  // every rank runs spmd-run for its own device.
  const bool cuda = options.backend == "cuda";
  absl::StatusOr<std::unique_ptr<tools::MpiJob>> job =
      !cuda || options.mpi ? tools::MpiJob::Start(options.mpi, options.devices_per_process,
                                                  options.collective_timeout, /*serve=*/!cuda)
                           : nullptr;
  if (!job.ok()) return Fail(hlo::StrCat("spmd-run: error: ", job.status().message()));
  if (*job != nullptr && !cuda && (*job)->rank() != 0) return (*job)->Serve();
  options.mpi = *job != nullptr;
  if (options.mpi && cuda) {
    options.cuda_env = CudaEnvOf(**job);
  } else {
    options.job = job->get();
  }
  int code = 1;
  try {
    if (std::optional<std::string> conflict = PerProcessConflict(options)) {
      std::cerr << "spmd-run: error: " << *conflict << "\n";
      code = 2;
    } else if (std::optional<std::string> refusal = Unavailable(options, *passes)) {
      std::cerr << options.input << ": error: " << *refusal << "\n";
    } else {
      code = options.verify ? VerifyProgram(options, *passes) : RunProgram(options, *passes);
    }
  } catch (const std::bad_alloc&) {
    std::cerr << options.input << ": error: out of memory: the module's values do not fit in "
              << "this machine's memory\n";
  }
  return *job != nullptr ? (*job)->Finish(code) : code;
}

// The work runs on a large stack: deeply nested modules recurse once per level. The executor's
// malloc settings come first: the work thread must share the main arena (M_ARENA_MAX = 1) from
// its first allocation, or GiB-sized values live in a thread arena that returns and re-faults
// its pages (KeepPartitionedNonSlicedDimension: 36 s of system time).
int main(int argc, char** argv) {
  runtime::TuneMallocForExecutor();
  return hlo::RunOnLargeStack([&] { return Main(argc, argv); });
}
