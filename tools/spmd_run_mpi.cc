// Messages on MPI_COMM_WORLD (the collectives use their own communicator): kProgram from rank 0
// to each rank (ProgramHeader's line "P R K F SEED I O\n" -- partitions, replicas, devices per
// process, 1 with --per-process-io, the seed and the byte lengths of the inputs and outputs
// directories --, the two directories, then the HLO text; empty: no program, stop),
// kArguments (the rank's devices' arguments, packed in device and parameter order), kResults
// back to rank 0 (the rank's devices' results); kShared: bytes rank 0 gives every rank
// (ShareBytes: NCCL's unique id); kVote / kVerdict: Agree's rounds (empty: ok, else an error);
// kFailure: a failed rank's FailureReport to rank 0.
#include "tools/spmd_run_mpi.h"

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>

#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"
#include "runtime/cpu/literal_bytes.h"
#include "runtime/cpu/multi_device_runner.h"
#include "runtime/mpi/launcher_env.h"
#include "runtime/mpi/mpi_transport.h"

namespace tools {
namespace {

using hlo::Literal;

enum Tag : int {
  kProgram = 1,
  kArguments = 2,
  kResults = 3,
  kShared = 4,
  kVote = 5,
  kVerdict = 6,
  kFailure = 7,
};

using Clock = std::chrono::steady_clock;
constexpr auto kReportWindow = std::chrono::milliseconds(200);

// What a program message says besides the HLO text.
struct ProgramHeader {
  int64_t partitions = 0, replicas = 0, per_process = 0;
  bool own_files = false;  // --per-process-io: `files` say where each rank's values are.
  RunFiles files;
};

std::string EncodeProgram(const ProgramHeader& h, const std::string& hlo_text) {
  return hlo::StrCat(h.partitions, " ", h.replicas, " ", h.per_process, " ", h.own_files ? 1 : 0,
                     " ", h.files.seed, " ", h.files.inputs_dir.size(), " ",
                     h.files.outputs_dir.size(), "\n", h.files.inputs_dir, h.files.outputs_dir,
                     hlo_text);
}

// The header and the HLO text of a program message.
absl::StatusOr<std::pair<ProgramHeader, std::string>> DecodeProgram(const std::string& message) {
  const size_t eol = message.find('\n');
  ProgramHeader h;
  int own_files = 0;
  size_t in = 0, out = 0;
  std::istringstream line(message.substr(0, eol));
  if (eol == std::string::npos ||
      !(line >> h.partitions >> h.replicas >> h.per_process >> own_files >> h.files.seed >> in >>
        out) ||
      eol + 1 + in + out > message.size()) {
    return absl::InternalError("a malformed program message from rank 0");
  }
  h.own_files = own_files != 0;
  h.files.inputs_dir = message.substr(eol + 1, in);
  h.files.outputs_dir = message.substr(eol + 1 + in, out);
  return std::make_pair(h, message.substr(eol + 1 + in + out));
}

std::vector<uint8_t> BytesOf(std::string_view text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

std::vector<uint8_t> PackAll(const std::vector<std::vector<Literal>>& values) {
  std::vector<uint8_t> bytes;
  for (const std::vector<Literal>& device : values) {
    for (const Literal& value : device) runtime::AppendLiteralBytes(value, &bytes);
  }
  return bytes;
}

// `devices` lists of one literal per shape of `shapes`, read from `bytes`.
absl::StatusOr<std::vector<std::vector<Literal>>> UnpackAll(const std::vector<uint8_t>& bytes,
                                                            int64_t devices,
                                                            const std::vector<hlo::Shape>& shapes) {
  absl::Span<const uint8_t> unread(bytes);
  std::vector<std::vector<Literal>> values(devices);
  for (std::vector<Literal>& device : values) {
    for (const hlo::Shape& shape : shapes) {
      absl::StatusOr<Literal> value = runtime::TakeLiteral(shape, &unread);
      if (!value.ok()) return value.status();
      device.push_back(*std::move(value));
    }
  }
  if (!unread.empty()) return absl::InvalidArgumentError("more bytes than values");
  return values;
}

std::vector<hlo::Shape> ParameterShapes(const hlo::HloModule& module) {
  std::vector<hlo::Shape> shapes;
  const hlo::HloComputation& entry = *module.entry_computation();
  for (int64_t p = 0; p < entry.num_parameters(); ++p) {
    shapes.push_back(entry.parameter_instruction(p)->shape());
  }
  return shapes;
}

std::string RankLabel(int rank, int size) {
  return hlo::StrCat("spmd-run (rank ", rank, " of ", size, ")");
}

}  // namespace

absl::StatusOr<std::unique_ptr<MpiJob>> MpiJob::Start(bool requested, int64_t devices_per_process,
                                                      double collective_timeout_seconds,
                                                      bool serve) {
  const std::optional<runtime::mpi::LauncherEnv> env = runtime::mpi::LauncherEnvFromEnvironment();
  if (!requested && (!env || env->size < 2)) return nullptr;
  absl::StatusOr<std::unique_ptr<runtime::mpi::MpiSession>> session =
      runtime::mpi::MpiSession::Init(nullptr, nullptr);
  if (!session.ok()) return session.status();
  const int local_rank = env ? env->local_rank : (*session)->rank();
  return std::unique_ptr<MpiJob>(new MpiJob(*std::move(session), devices_per_process,
                                            collective_timeout_seconds, serve, local_rank));
}

absl::StatusOr<std::vector<uint8_t>> MpiJob::ShareBytes(std::vector<uint8_t> bytes) {
  if (rank() != 0) return session_->Receive(0, kShared, timeout_, "rank 0's shared bytes");
  for (int r = 1; r < size(); ++r) {
    if (absl::Status s = session_->Send(r, kShared, bytes, timeout_, "the shared bytes"); !s.ok()) {
      return s;
    }
  }
  return bytes;
}

absl::StatusOr<std::vector<Literal>> MpiJob::RunLocal(const hlo::HloModule& module,
                                                      int64_t num_partitions, int64_t num_replicas,
                                                      int64_t per_process,
                                                      std::vector<std::vector<Literal>> arguments) {
  runtime::mpi::MpiTransport transport(*session_, num_partitions * num_replicas, per_process,
                                       timeout_);
  runtime::MultiDeviceOptions devices;
  devices.num_partitions = num_partitions;
  devices.num_replicas = num_replicas;
  devices.collective_timeout_seconds = timeout_;
  devices.first_device = rank() * per_process;
  devices.local_devices = per_process;
  devices.transport = &transport;
  absl::StatusOr<std::vector<Literal>> results =
      runtime::RunOnDevices(module, std::move(arguments), devices);
  if (!results.ok()) {
    run_error_ = results.status();
    timeout_seen_ = transport.first_timeout();
  }
  return results;
}

absl::StatusOr<int64_t> MpiJob::DevicesPerProcess(int64_t n) const {
  const int64_t k = devices_per_process_ > 0 ? devices_per_process_ : n / size();
  if (k < 1 || k * size() != n) {
    return absl::InvalidArgumentError(hlo::StrCat(
        "the program has ", n, " devices, which ", size(), " processes",
        devices_per_process_ > 0 ? hlo::StrCat(" x ", k, " devices (--devices-per-process)")
                                 : std::string(),
        " do not cover: start devices / K processes with --devices-per-process K"));
  }
  return k;
}

absl::StatusOr<hlo::ParsedModule> MpiJob::SendProgram(const std::string& text) {
  const std::vector<uint8_t> program = BytesOf(text);
  for (int r = 1; r < size(); ++r) {
    if (absl::Status s = session_->Send(r, kProgram, program, timeout_, "the program"); !s.ok()) {
      return s;
    }
  }
  program_sent_ = true;
  run_failed_ = true;  // Until the run's outcome is known on every rank.
  StartWatch();
  // Rank 0 runs the text the others run: the same instruction ids, so the same collective keys.
  absl::StatusOr<std::pair<ProgramHeader, std::string>> decoded = DecodeProgram(text);
  if (!decoded.ok()) return decoded.status();
  return hlo::ParseHloModuleWithLocations(decoded->second, "program");
}

absl::StatusOr<std::vector<Literal>> MpiJob::Run(const hlo::HloModule& module,
                                                 int64_t num_partitions, int64_t num_replicas,
                                                 std::vector<std::vector<Literal>> arguments) {
  absl::StatusOr<int64_t> per_process = DevicesPerProcess(num_partitions * num_replicas);
  if (!per_process.ok()) return per_process.status();
  const int64_t k = per_process_ = *per_process;
  absl::StatusOr<hlo::ParsedModule> parsed = SendProgram(
      EncodeProgram(ProgramHeader{num_partitions, num_replicas, k}, module.ToString()));
  if (!parsed.ok()) return parsed.status();
  for (int r = 1; r < size(); ++r) {
    std::vector<std::vector<Literal>> theirs(
        std::make_move_iterator(arguments.begin() + r * k),
        std::make_move_iterator(arguments.begin() + (r + 1) * k));
    if (absl::Status s = session_->Send(r, kArguments, PackAll(theirs), timeout_,
                                        hlo::StrCat("the arguments of rank ", r));
        !s.ok()) {
      return s;
    }
  }
  arguments.resize(k);
  absl::StatusOr<std::vector<Literal>> mine =
      RunLocal(*parsed->module, num_partitions, num_replicas, k, std::move(arguments));
  if (!mine.ok()) return mine.status();
  std::vector<Literal> results = *std::move(mine);
  const std::vector<hlo::Shape> root = {
      parsed->module->entry_computation()->root_instruction()->shape()};
  for (int r = 1; r < size(); ++r) {
    absl::StatusOr<std::vector<uint8_t>> bytes =
        session_->Receive(r, kResults, timeout_, hlo::StrCat("the results of rank ", r));
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<std::vector<std::vector<Literal>>> theirs = UnpackAll(*bytes, k, root);
    if (!theirs.ok()) return theirs.status();
    for (std::vector<Literal>& one : *theirs) results.push_back(std::move(one[0]));
  }
  run_failed_ = false;
  return results;
}

absl::Status MpiJob::RunPerProcess(const hlo::HloModule& module, int64_t num_partitions,
                                   int64_t num_replicas, const RunFiles& files) {
  absl::StatusOr<int64_t> k = DevicesPerProcess(num_partitions * num_replicas);
  if (!k.ok()) return k.status();
  per_process_ = *k;
  absl::StatusOr<hlo::ParsedModule> parsed = SendProgram(EncodeProgram(
      ProgramHeader{num_partitions, num_replicas, *k, true, files}, module.ToString()));
  if (!parsed.ok()) return parsed.status();
  return RunOwnFiles(*parsed->module, num_partitions, num_replicas, *k, files);
}

absl::Status MpiJob::RunOwnFiles(const hlo::HloModule& module, int64_t num_partitions,
                                 int64_t num_replicas, int64_t per_process,
                                 const RunFiles& files) {
  const int64_t n = num_partitions * num_replicas;
  const int64_t first = rank() * per_process;
  run_failed_ = true;
  absl::StatusOr<std::vector<std::vector<Literal>>> arguments =
      DeviceArguments(files, *module.entry_computation(), first, per_process);
  if (absl::Status s = Agree(arguments.status(), "reading the arguments"); !s.ok()) {
    run_failed_ = false;
    return s;
  }
  absl::StatusOr<std::vector<Literal>> results =
      RunLocal(module, num_partitions, num_replicas, per_process, *std::move(arguments));
  if (!results.ok()) return results.status();  // Finish (or Serve) ends the job.
  std::vector<std::pair<std::string, std::string>> staged;
  absl::Status written = absl::OkStatus();
  if (files.outputs_dir.empty()) {
    const std::string text = DeviceResultsText(n, first, *results);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else {
    written = WriteDeviceResults(files.outputs_dir, n, first, *results, &staged);
  }
  results->clear();
  absl::Status agreed = Agree(written, "writing the results");
  run_failed_ = false;
  if (!agreed.ok()) {
    DiscardStaged(staged);
    return agreed;
  }
  absl::Status committed = CommitStaged(staged);
  if (!committed.ok() && rank() != 0) {
    std::fprintf(stderr, "%s: %s\n", RankLabel(rank(), size()).c_str(),
                 std::string(committed.message()).c_str());
  }
  return committed;
}

absl::Status MpiJob::Agree(const absl::Status& mine, std::string_view step) {
  auto broken = [&](const absl::Status& s) {
    session_->Abort(hlo::StrCat(RankLabel(rank(), size()), ": error: ", step, ": ", s.message()),
                    1);
  };
  // No deadline: a process reads and writes its files as slowly as its file system does; one
  // that dies meanwhile ends the job through the launcher.
  if (rank() != 0) {
    if (absl::Status s = session_->Send(0, kVote, BytesOf(hlo::ToStd(mine.message())), 0, "the vote");
        !s.ok()) {
      broken(s);
    }
    absl::StatusOr<std::vector<uint8_t>> verdict = session_->Receive(0, kVerdict, 0, "the verdict");
    if (!verdict.ok()) broken(verdict.status());
    if (verdict->empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(std::string(verdict->begin(), verdict->end()));
  }
  std::string verdict;
  if (!mine.ok()) verdict = hlo::StrCat(mine.message(), " (rank 0 of ", size(), ")");
  for (int r = 1; r < size(); ++r) {
    absl::StatusOr<std::vector<uint8_t>> vote =
        session_->Receive(r, kVote, 0, hlo::StrCat("the vote of rank ", r));
    if (!vote.ok()) broken(vote.status());
    if (verdict.empty() && !vote->empty()) {
      verdict = hlo::StrCat(std::string(vote->begin(), vote->end()), " (rank ", r, " of ", size(),
                            ")");
    }
  }
  for (int r = 1; r < size(); ++r) {
    if (absl::Status s = session_->Send(r, kVerdict, BytesOf(verdict), 0, "the verdict");
        !s.ok()) {
      broken(s);
    }
  }
  if (verdict.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(verdict);
}

int MpiJob::Serve() {
  int code = 0;
  absl::StatusOr<std::vector<uint8_t>> program = session_->Receive(0, kProgram, 0, "the program");
  if (!program.ok()) FailRun(program.status());
  if (!program->empty()) {
    absl::StatusOr<std::pair<ProgramHeader, std::string>> decoded =
        DecodeProgram(std::string(program->begin(), program->end()));
    if (!decoded.ok()) FailRun(decoded.status());
    const ProgramHeader& h = decoded->first;
    per_process_ = h.per_process;
    absl::StatusOr<hlo::ParsedModule> parsed =
        hlo::ParseHloModuleWithLocations(decoded->second, "program");
    if (!parsed.ok()) FailRun(parsed.status());
    if (h.own_files) {
      // Rank 0 prints an agreed error; a failed run ends the job.
      absl::Status s =
          RunOwnFiles(*parsed->module, h.partitions, h.replicas, h.per_process, h.files);
      if (run_failed_) FailRun(s);
      code = s.ok() ? 0 : 1;
    } else {
      absl::Status s = ServeArguments(*parsed->module, h.partitions, h.replicas, h.per_process);
      if (!s.ok()) FailRun(s);
    }
  }
  if (absl::Status s = session_->Barrier(); !s.ok()) FailRun(s);
  return code;
}

absl::Status MpiJob::ServeArguments(const hlo::HloModule& module, int64_t num_partitions,
                                    int64_t num_replicas, int64_t per_process) {
  absl::StatusOr<std::vector<uint8_t>> bytes =
      session_->Receive(0, kArguments, timeout_, "the arguments");
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<std::vector<std::vector<Literal>>> arguments =
      UnpackAll(*bytes, per_process, ParameterShapes(module));
  if (!arguments.ok()) return arguments.status();
  absl::StatusOr<std::vector<Literal>> results =
      RunLocal(module, num_partitions, num_replicas, per_process, *std::move(arguments));
  if (!results.ok()) return results.status();
  std::vector<uint8_t> packed;
  for (const Literal& result : *results) runtime::AppendLiteralBytes(result, &packed);
  return session_->Send(0, kResults, packed, timeout_, "the results");
}

int MpiJob::Finish(int code) {
  if (run_failed_) {
    if (rank() != 0) {
      session_->Abort(
          hlo::StrCat(RankLabel(rank(), size()), ": ending the job after the error above"), 1);
    }
    {
      std::lock_guard<std::mutex> lock(reports_mu_);
      reports_.push_back(ReportOf(run_error_));
    }
    std::this_thread::sleep_for(kReportWindow);  // The others' reports of the same fault.
    EndJob();
  }
  StopWatch();
  if (!program_sent_ && serve_ && rank() == 0) {
    for (int r = 1; r < size(); ++r) {
      if (absl::Status s = session_->Send(r, kProgram, {}, timeout_, "the stop"); !s.ok()) {
        session_->Abort(hlo::StrCat(RankLabel(rank(), size()), ": error: ", s.message()), 1);
      }
    }
  }
  if (absl::Status s = session_->Barrier(); !s.ok()) {
    session_->Abort(hlo::StrCat(RankLabel(rank(), size()), ": error: ", s.message()), 1);
  }
  return code;
}

runtime::mpi::FailureReport MpiJob::ReportOf(const absl::Status& error) const {
  runtime::mpi::FailureReport report;
  report.rank = rank();
  report.timeout_seconds = timeout_;
  report.message = error.ok() ? std::string("its error above") : std::string(error.message());
  if (absl::IsDeadlineExceeded(error) && timeout_seen_) {
    report.blamed = timeout_seen_->ranks;
    report.collective = timeout_seen_->collective;
    report.execution = timeout_seen_->execution;
  }
  return report;
}

void MpiJob::FailRun(const absl::Status& error) {
  const std::string line = hlo::StrCat(RankLabel(rank(), size()), ": error: ", error.message());
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  const double grace = std::min(2.0, timeout_ / 2);
  const runtime::mpi::FailureReport report = ReportOf(error);
  if (session_->Send(0, kFailure, BytesOf(runtime::mpi::EncodeFailureReport(report)), grace,
                     "the failure report")
          .ok()) {
    std::this_thread::sleep_for(std::chrono::duration<double>(grace));
  }
  // Rank 0 did not end the job (it may be the rank that failed): this rank's own view.
  session_->Abort(hlo::StrCat(RankLabel(rank(), size()), ": error: ",
                              runtime::mpi::FirstFailureLine({report}, per_process_)),
                  1);
}

void MpiJob::StartWatch() {
  if (rank() != 0 || watcher_.joinable()) return;
  stop_watch_ = false;
  watcher_ = std::thread([this] { Watch(); });
}

void MpiJob::StopWatch() {
  if (!watcher_.joinable()) return;
  stop_watch_ = true;
  watcher_.join();
}

void MpiJob::Watch() {
  std::optional<Clock::time_point> first_report;
  while (!stop_watch_) {
    int found = 0;
    MPI_Status status;
    session_->Call(
        [&] { return MPI_Iprobe(MPI_ANY_SOURCE, kFailure, MPI_COMM_WORLD, &found, &status); });
    if (found) {
      absl::StatusOr<std::vector<uint8_t>> bytes =
          session_->Receive(status.MPI_SOURCE, kFailure, 1.0, "a failure report");
      absl::StatusOr<runtime::mpi::FailureReport> report =
          bytes.ok() ? runtime::mpi::DecodeFailureReport(
                           std::string_view(reinterpret_cast<const char*>(bytes->data()),
                                            bytes->size()))
                     : absl::StatusOr<runtime::mpi::FailureReport>(bytes.status());
      if (report.ok()) {
        std::lock_guard<std::mutex> lock(reports_mu_);
        reports_.push_back(*std::move(report));
      }
      if (!first_report) first_report = Clock::now();
      continue;
    }
    if (first_report && Clock::now() - *first_report > kReportWindow) EndJob();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void MpiJob::EndJob() {
  if (ending_.exchange(true)) {
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));  // The other ends it.
  }
  std::string line;
  {
    std::lock_guard<std::mutex> lock(reports_mu_);
    line = runtime::mpi::FirstFailureLine(reports_, per_process_);
  }
  session_->Abort(hlo::StrCat("spmd-run: error: ", line), 1);
}

}  // namespace tools
