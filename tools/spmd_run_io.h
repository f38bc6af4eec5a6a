// spmd-run's argument and result files (--inputs / --outputs, .npy: runtime/cpu/npy.h), shared
// by the one-process run and the processes of an MPI job, which read and write only their own
// devices' files with --per-process-io (tools/spmd_run_mpi.h).
//
// Layout: param_<i>.npy and output.npy; a tuple leaf adds its index (param_0_1.npy,
// output_2.npy). A run on several devices keeps each device's values in device_<d>/: a
// device's argument is device_<d>/param_<i>.npy, else the shared param_<i>.npy (the same value
// on every device); its results are device_<d>/output*.npy.
#ifndef TOOLS_SPMD_RUN_IO_H_
#define TOOLS_SPMD_RUN_IO_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/literal.h"

namespace tools {

// Where a run's arguments come from and its results go.
struct RunFiles {
  std::string inputs_dir;   // Empty: arguments drawn from `seed`.
  std::string outputs_dir;  // Empty: results printed.
  uint64_t seed = 0;
};

// `dir`/device_<d>.
std::string DeviceDir(const std::string& dir, int64_t d);

// Parameter `p` of shape `shape` read from `dir`, leaf by leaf.
absl::StatusOr<hlo::Literal> ReadParameter(const std::string& dir, int64_t p,
                                           const hlo::Shape& shape);
// Every parameter of `entry`, read from `dir`.
absl::StatusOr<std::vector<hlo::Literal>> ReadParameters(const std::string& dir,
                                                         const hlo::HloComputation& entry);

// Writes `value`'s leaves into `dir` (created) as <stem>*.npy, each atomically.
absl::Status WriteOutputs(const std::string& dir, std::string_view stem,
                          const hlo::Literal& value);

// The arguments of devices [`first`, `first` + `count`) of a run of `entry`: read from `files.inputs_dir` (device_<d>/ first, then the shared files), or seeded random
// values, different on every device (device d's depend only on the seed, d and the parameter).
absl::StatusOr<std::vector<std::vector<hlo::Literal>>> DeviceArguments(
    const RunFiles& files, const hlo::HloComputation& entry, int64_t first, int64_t count);

// The results of devices `first`, `first` + 1, ... of a run on `num_devices`, written as
// spmd-run writes them: `dir`/output*.npy for one device, else `dir`/device_<d>/output*.npy.
// With `staged`, every file is written as <file>.staged and the (staged, final) path pairs are
// appended to it for CommitStaged / DiscardStaged.
absl::Status WriteDeviceResults(const std::string& dir, int64_t num_devices, int64_t first,
                                const std::vector<hlo::Literal>& results,
                                std::vector<std::pair<std::string, std::string>>* staged = nullptr);

// Renames each staged file to its final path; the first failure is returned.
absl::Status CommitStaged(const std::vector<std::pair<std::string, std::string>>& staged);
// Removes the staged files.
void DiscardStaged(const std::vector<std::pair<std::string, std::string>>& staged);

// The results of devices `first`, `first` + 1, ... of a run on `num_devices` as spmd-run
// prints them: one line per leaf, labelled `output` (one device) or `device <d> output`, with
// the elements when there are at most 256.
std::string DeviceResultsText(int64_t num_devices, int64_t first,
                              const std::vector<hlo::Literal>& results);

}  // namespace tools

#endif  // TOOLS_SPMD_RUN_IO_H_
