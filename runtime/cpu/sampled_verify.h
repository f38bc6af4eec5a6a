// Sampled verification: the oracle of verify.h for programs too large to run on this machine
// (a 41 GB operand, a dot of several TFLOP summed over the simulated devices).
//
// Instead of running both programs in full, it computes chosen elements of the outputs with the
// point evaluator (point_evaluator.h), which evaluates only what those elements depend on:
//   1. arguments are a pure function of (seed, parameter, leaf, element index) with verify.h's
//      distributions, so the reference and every device see the same values without either
//      being materialized; a device's parameter element is the full argument's element at the
//      shard's offset (zero in the padding of an uneven shard; an unreduced argument is held by
//      its group's first member, the others holding the reduction's identity, as verify.h's
//      ShardForDevice passes it);
//   2. for each root leaf, the sample is: the first and last element of every device's region
//      (where shard-boundary mistakes show), a few random elements inside each region, and
//      `random_samples` uniformly random elements of the whole array;
//   3. each sampled element is computed by the unpartitioned program and by the devices it was
//      picked for plus up to `holders_per_element` others that hold it, and compared under
//      verify.h's tolerances (an unreduced leaf's value on a device is its group's values
//      combined).
// Exact on the sampled elements; a mistake confined to unsampled elements is not seen. The
// verdict's leaf names say how many elements were compared. Modules that need a per-device
// reference (NeedsPerDeviceReference: collectives or manual shardings in the input) and ops the
// point evaluator does not support are errors.
#ifndef RUNTIME_CPU_SAMPLED_VERIFY_H_
#define RUNTIME_CPU_SAMPLED_VERIFY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/sharding/hlo_sharding.h"
#include "hlo/sharding/shard_geometry.h"
#include "runtime/cpu/compare.h"
#include "runtime/cpu/verify.h"

namespace runtime {

struct SampledVerifyOptions {
  uint64_t seed = 0;
  int64_t num_partitions = 1;
  // Uniformly random elements per root leaf, on top of each device region's first, last and
  // `per_device_random` random elements.
  int64_t random_samples = 48;
  int64_t per_device_random = 2;
  // Devices that compute each sampled element, among those holding it, besides the devices it
  // was picked for (a replicated leaf is held by all; every device still computes its region's
  // first and last element, so replicas that disagree there are seen).
  int64_t holders_per_element = 2;
  // Devices per distinct region whose random elements are picked (0: every device); every
  // device still computes its region's first and last element unless
  // `first_last_on_every_device` is false (then only the picked replicas do).
  int64_t replicas_per_region = 0;
  bool first_last_on_every_device = true;
  // Element evaluations allowed per program (point_evaluator.h).
  int64_t element_budget = 60'000'000;
  std::optional<Tolerance> tolerance;
};

// One array leaf of `shape`, which each of options.num_partitions devices holds as its region
// under `sharding` in an array of `device_shape`, compared on a sample (step 2 of the file
// comment; `salt` varies it between leaves): `reference` gives the reference's elements at
// global row-major indices, `device` a device's at indices into `device_shape`.
struct SampledComparison {
  std::vector<int64_t> sample;          // The sampled global indices, ascending.
  hlo::Literal expected_sample;         // The reference's values at `sample`.
  // Each device value compared: (device, position in `sample`), in device order, and the
  // expected and actual values of the pairs.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  hlo::Literal expected, actual;
  ArrayComparison comparison;  // first_mismatch: a global index.
  int64_t mismatch_device = -1;
};
absl::StatusOr<SampledComparison> CompareSampledLeaf(
    const hlo::Shape& shape, const hlo::Shape& device_shape, const hlo::HloSharding& sharding,
    const SampledVerifyOptions& options, uint64_t salt, const Tolerance& tolerance,
    const std::function<absl::StatusOr<hlo::Literal>(absl::Span<const int64_t>)>& reference,
    const std::function<absl::StatusOr<hlo::Literal>(int64_t, absl::Span<const int64_t>)>&
        device);

// Device `device`'s region of a leaf of `shape` held as `sharding`: ShardRegionForDevice's,
// and no data on a device a tiled sharding does not use (it holds nothing that is read).
absl::StatusOr<hlo::ShardRegion> DeviceRegion(const hlo::HloSharding& sharding,
                                              const hlo::Shape& shape, int64_t device);

// The mixing function behind every hashed random value of sampled verification: a value is
// SetRandomElement's draw from the state SampleHash(stream + index).
uint64_t SampleHash(uint64_t x);

// Runs `work` on a thread with a 1 GiB stack (the point evaluator recurses along operand chains
// and loop iterations); out of memory there is an error.
absl::Status RunOnLargeStack(const std::function<absl::Status()>& work);

// See the file comment. The result's `expected` and `assembled` are empty.
absl::StatusOr<VerifyResult> VerifySampled(const hlo::HloModule& unpartitioned,
                                           const hlo::HloModule& spmd,
                                           const SampledVerifyOptions& options);

}  // namespace runtime

#endif  // RUNTIME_CPU_SAMPLED_VERIFY_H_
