// The .npy files of spmd-run's arguments and results (see spmd_run_io.h for the layout).
// Staged results are complete files under a temporary name: a job whose every process staged
// its devices' results renames them into place, so a failed job leaves no partial outputs.
#include "tools/spmd_run_io.h"

#include <cstdio>
#include <filesystem>

#include "hlo/strings.h"
#include "runtime/common/tuple_leaves.h"
#include "runtime/cpu/npy.h"
#include "runtime/cpu/verify.h"

namespace tools {

using hlo::Literal;

std::string DeviceDir(const std::string& dir, int64_t d) {
  return (std::filesystem::path(dir) / hlo::StrCat("device_", d)).string();
}

absl::StatusOr<Literal> ReadParameter(const std::string& dir, int64_t p, const hlo::Shape& shape) {
  Literal value(shape);
  for (const hlo::ShapeIndex& index : runtime::LeafIndices(shape)) {
    const std::string path = (std::filesystem::path(dir) /
                              (runtime::LeafFileStem(hlo::StrCat("param_", p), index) + ".npy"))
                                 .string();
    absl::StatusOr<Literal> leaf = runtime::ReadNpyAs(path, runtime::LeafShape(shape, index));
    if (!leaf.ok()) return leaf.status();
    runtime::MutableLeafOf(value, index) = *std::move(leaf);
  }
  return value;
}

absl::StatusOr<std::vector<Literal>> ReadParameters(const std::string& dir,
                                                    const hlo::HloComputation& entry) {
  std::vector<Literal> args;
  for (int64_t p = 0; p < entry.num_parameters(); ++p) {
    absl::StatusOr<Literal> arg = ReadParameter(dir, p, entry.parameter_instruction(p)->shape());
    if (!arg.ok()) return arg.status();
    args.push_back(*std::move(arg));
  }
  return args;
}

namespace {

// Writes `value`'s leaves as `dir`/<stem>*.npy, or as <that>.staged recorded in `staged`.
absl::Status WriteLeaves(const std::string& dir, std::string_view stem, const Literal& value,
                         std::vector<std::pair<std::string, std::string>>* staged) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(hlo::StrCat(dir, ": error: cannot create directory"));
  for (const hlo::ShapeIndex& index : runtime::LeafIndices(value.shape())) {
    const std::string path =
        (std::filesystem::path(dir) / (runtime::LeafFileStem(stem, index) + ".npy")).string();
    const std::string written = staged != nullptr ? path + ".staged" : path;
    if (absl::Status s = runtime::WriteNpy(written, runtime::LeafOf(value, index)); !s.ok()) {
      return s;
    }
    if (staged != nullptr) staged->emplace_back(written, path);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteOutputs(const std::string& dir, std::string_view stem, const Literal& value) {
  return WriteLeaves(dir, stem, value, nullptr);
}

absl::StatusOr<std::vector<std::vector<Literal>>> DeviceArguments(const RunFiles& files,
                                                                  const hlo::HloComputation& entry,
                                                                  int64_t first, int64_t count) {
  std::vector<std::vector<Literal>> args(count);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t d = first + i;
    if (files.inputs_dir.empty()) {
      for (int64_t p = 0; p < entry.num_parameters(); ++p) {
        args[i].push_back(runtime::RandomLiteral(entry.parameter_instruction(p)->shape(),
                                                 files.seed, (d << 20) + p));
      }
      continue;
    }
    const std::string own = DeviceDir(files.inputs_dir, d);
    const std::string& dir = std::filesystem::is_directory(own) ? own : files.inputs_dir;
    absl::StatusOr<std::vector<Literal>> read = ReadParameters(dir, entry);
    if (!read.ok()) return read.status();
    args[i] = *std::move(read);
  }
  return args;
}

absl::Status WriteDeviceResults(const std::string& dir, int64_t num_devices, int64_t first,
                                const std::vector<Literal>& results,
                                std::vector<std::pair<std::string, std::string>>* staged) {
  for (size_t k = 0; k < results.size(); ++k) {
    const std::string where =
        num_devices == 1 ? dir : DeviceDir(dir, first + static_cast<int64_t>(k));
    if (absl::Status s = WriteLeaves(where, "output", results[k], staged); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CommitStaged(const std::vector<std::pair<std::string, std::string>>& staged) {
  for (const auto& [from, to] : staged) {
    std::error_code ec;
    std::filesystem::rename(from, to, ec);
    if (ec) {
      return absl::PermissionDeniedError(
          hlo::StrCat(to, ": error: cannot rename the staged result into place: ", ec.message()));
    }
  }
  return absl::OkStatus();
}

void DiscardStaged(const std::vector<std::pair<std::string, std::string>>& staged) {
  for (const auto& [from, to] : staged) {
    std::error_code ec;
    std::filesystem::remove(from, ec);
  }
}

namespace {

void AppendValue(const std::string& label, const Literal& value, std::string* out) {
  for (const hlo::ShapeIndex& index : runtime::LeafIndices(value.shape())) {
    const Literal& leaf = runtime::LeafOf(value, index);
    hlo::StrAppend(out, runtime::LeafName(label, index), ": ", leaf.shape().ToString(false));
    if (leaf.element_count() <= 256) {
      hlo::StrAppend(out, " ", leaf.ToString(), "\n");
    } else {
      hlo::StrAppend(out, " (", leaf.element_count(),
                     " elements; use --outputs DIR to save them)\n");
    }
  }
}

}  // namespace

std::string DeviceResultsText(int64_t num_devices, int64_t first,
                              const std::vector<Literal>& results) {
  std::string out;
  for (size_t k = 0; k < results.size(); ++k) {
    const int64_t d = first + static_cast<int64_t>(k);
    AppendValue(num_devices == 1 ? "output" : hlo::StrCat("device ", d, " output"), results[k],
                &out);
  }
  return out;
}

}  // namespace tools
