// Messages on MPI_COMM_WORLD (the collectives use their own communicator): kProgram from rank 0
// to each rank ("P R K\n" -- partitions, replicas, devices per process -- then the HLO text;
// empty: no program, stop), kArguments (the rank's devices' arguments, packed in device and
// parameter order), kResults back to rank 0 (the rank's devices' results); kShared: bytes
// rank 0 gives every rank (ShareBytes: NCCL's unique id).
#include "tools/spmd_run_mpi.h"

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

enum Tag : int { kProgram = 1, kArguments = 2, kResults = 3, kShared = 4 };

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
  return runtime::RunOnDevices(module, std::move(arguments), devices);
}

absl::StatusOr<std::vector<Literal>> MpiJob::Run(const hlo::HloModule& module,
                                                 int64_t num_partitions, int64_t num_replicas,
                                                 std::vector<std::vector<Literal>> arguments) {
  const int64_t n = num_partitions * num_replicas;
  const int64_t k = devices_per_process_ > 0 ? devices_per_process_ : n / size();
  if (k < 1 || k * size() != n) {
    return absl::InvalidArgumentError(hlo::StrCat(
        "the program has ", n, " devices, which ", size(), " processes",
        devices_per_process_ > 0 ? hlo::StrCat(" x ", k, " devices (--devices-per-process)")
                                 : std::string(),
        " do not cover: start devices / K processes with --devices-per-process K"));
  }
  const std::string text =
      hlo::StrCat(num_partitions, " ", num_replicas, " ", k, "\n", module.ToString());
  const std::vector<uint8_t> program(text.begin(), text.end());
  for (int r = 1; r < size(); ++r) {
    if (absl::Status s = session_->Send(r, kProgram, program, timeout_, "the program"); !s.ok()) {
      return s;
    }
  }
  program_sent_ = true;
  run_failed_ = true;  // Until every result is in.
  // Rank 0 runs the text the others run: the same instruction ids, so the same collective keys.
  absl::StatusOr<hlo::ParsedModule> parsed =
      hlo::ParseHloModuleWithLocations(text.substr(text.find('\n') + 1), "program");
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

int MpiJob::Serve() {
  const std::string label = RankLabel(rank(), size());
  auto fail = [&](const absl::Status& s) {
    session_->Abort(hlo::StrCat(label, ": error: ", s.message()), 1);
  };
  absl::StatusOr<std::vector<uint8_t>> program = session_->Receive(0, kProgram, 0, "the program");
  if (!program.ok()) fail(program.status());
  if (!program->empty()) {
    const std::string text(program->begin(), program->end());
    int64_t partitions = 0, replicas = 0, k = 0;
    std::istringstream(text.substr(0, text.find('\n'))) >> partitions >> replicas >> k;
    absl::StatusOr<hlo::ParsedModule> parsed =
        hlo::ParseHloModuleWithLocations(text.substr(text.find('\n') + 1), "program");
    if (!parsed.ok()) fail(parsed.status());
    absl::StatusOr<std::vector<uint8_t>> bytes =
        session_->Receive(0, kArguments, timeout_, "the arguments");
    if (!bytes.ok()) fail(bytes.status());
    absl::StatusOr<std::vector<std::vector<Literal>>> arguments =
        UnpackAll(*bytes, k, ParameterShapes(*parsed->module));
    if (!arguments.ok()) fail(arguments.status());
    absl::StatusOr<std::vector<Literal>> results =
        RunLocal(*parsed->module, partitions, replicas, k, *std::move(arguments));
    if (!results.ok()) fail(results.status());
    std::vector<uint8_t> packed;
    for (const Literal& result : *results) runtime::AppendLiteralBytes(result, &packed);
    if (absl::Status s = session_->Send(0, kResults, packed, timeout_, "the results"); !s.ok()) {
      fail(s);
    }
  }
  if (absl::Status s = session_->Barrier(); !s.ok()) fail(s);
  return 0;
}

int MpiJob::Finish(int code) {
  if (run_failed_) {
    session_->Abort(
        hlo::StrCat(RankLabel(rank(), size()), ": ending the job after the error above"),
        code == 0 ? 1 : code);
  }
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

}  // namespace tools
