// The oracle: a partitioned program is right when, on the same inputs, it computes what the
// unpartitioned program computes.
//
// VerifyAgainst gives both programs the same seeded random arguments (or given ones):
//   1. the unpartitioned module runs on one device on the full arguments;
//   2. each full argument leaf is sliced per device by its parameter's sharding
//      (ShardRegionForDevice) and placed at the origin of a zero array of the shape the SPMD
//      program's parameter has on a device -- that shape is the truth, so uneven shards arrive
//      padded with zeros, as the partitioner expects;
//   3. the SPMD program runs on N devices;
//   4. each root leaf is assembled from the devices' results by the root sharding (replicated:
//      device 0's; maximal: its device's; tiled: each device's region, padding dropped), and
//      devices that hold the same region (replicated or partially replicated) must agree;
//   5. every leaf is compared element-wise (compare.h); a floating leaf that fails is judged
//      again against the exact (f64) result by the reference's own rounding error
//      (verify_exact.h), unless the caller gave its own tolerance.
// A module that is in part an SPMD program already (collectives, partition-id/replica-id,
// manual shardings or the manual custom-calls; NeedsPerDeviceReference) has no one-device
// meaning: its reference run simulates N devices that each run it on the full arguments, a
// manual parameter leaf taking a per-device value (ManualLeafForDevice: device 0's is the
// full argument's) and a leaf with manual subgroups a per-group value (group 0's is the full
// argument), and the SPMD program gets the same values (sliced by the tiling inside each
// group). Manual root leaves are then compared device by device, leaves with manual subgroups
// group by group (assembled from the group's devices), and the others against device 0's
// reference result.
// Values without a sharding are replicated (XLA's rule). Random values: floats uniform in
// [-1, 1) (f8e8m0fnu block scales: powers of two 2^-3..2^3), signed integers in [-8, 8),
// unsigned in [0, 16), pred fair coin flips; each leaf of
// each parameter draws from its own stream, so one argument does not shift another.
#ifndef RUNTIME_CPU_VERIFY_H_
#define RUNTIME_CPU_VERIFY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/literal.h"
#include "hlo/sharding/hlo_sharding.h"
#include "runtime/cpu/compare.h"
#include "runtime/cpu/verify_exact.h"

namespace runtime {

// A random literal of `shape` (tuples leaf by leaf) drawn from `stream` (see the file comment).
hlo::Literal RandomLiteral(const hlo::Shape& shape, uint64_t seed, uint64_t stream);

// Sets element `i` of array `literal` to a random value drawn from `state` (RandomLiteral's
// distribution for the literal's element type), advancing `state`.
void SetRandomElement(hlo::Literal& literal, int64_t i, uint64_t& state);

// Random arguments for the entry parameters of `module`: parameter i draws from stream i.
std::vector<hlo::Literal> RandomArguments(const hlo::HloModule& module, uint64_t seed);

// The leaf sharding of leaf `leaf` (flattened order) of a value of `shape` sharded by
// `sharding` (null: replicated).
absl::StatusOr<hlo::HloSharding> LeafSharding(const hlo::HloSharding* sharding,
                                              const hlo::Shape& shape, int64_t leaf);

// Every byte of a shard's padding (ShardForDevice): NaN for floating types, -1 for signed
// integers, all ones for unsigned ones. Runtimes leave padding undefined, so a partitioned
// program that reads it unmasked (summing it, say) fails verification instead of passing on
// zeros.
inline constexpr uint8_t kPaddingPoison = 0xFF;

// Unreduced values (hlo/sharding/unreduced.h) as the verifiers pass and read them: an
// unreduced argument is held by its group's first member (UnreducedHolder; device 0 for
// `{unreduced}`), the others holding the identity of the reduction (FillWithReductionIdentity:
// zeros for a sum, the lowest value for a maximum, the highest for a minimum); an unreduced
// result is its group's members' values combined (CombinePartials).
absl::StatusOr<int64_t> UnreducedHolder(const hlo::HloSharding& sharding, int64_t device);
absl::Status FillWithReductionIdentity(hlo::ReductionOp op, hlo::Literal* literal);
absl::StatusOr<hlo::Literal> CombinePartials(const std::vector<const hlo::Literal*>& parts,
                                             hlo::ReductionOp op);

// Device `device`'s argument of shape `device_shape` cut from the full array leaf `full` by
// `sharding`: its region at the origin, kPaddingPoison elsewhere. Fails when the region does
// not fit in `device_shape` or the element types differ.
absl::StatusOr<hlo::Literal> ShardForDevice(const hlo::Literal& full,
                                            const hlo::HloSharding& sharding,
                                            const hlo::Shape& device_shape, int64_t device);

// An array leaf of `full_shape` put together from every device's result leaf `shards[d]`.
// `disagreement` describes the first pair of devices that hold the same region with different
// values (empty when they agree).
struct Assembled {
  hlo::Literal value;
  std::string disagreement;
};
absl::StatusOr<Assembled> AssembleFromShards(absl::Span<const hlo::Literal* const> shards,
                                             const hlo::HloSharding& sharding,
                                             const hlo::Shape& full_shape);

struct VerifyOptions {
  uint64_t seed = 0;
  // Devices the SPMD program runs on (partitions; one replica).
  int64_t num_partitions = 1;
  double collective_timeout_seconds = 60.0;
  // Full arguments to use instead of random ones (one per parameter of the unpartitioned
  // module).
  std::optional<std::vector<hlo::Literal>> arguments;
  // Replaces the per-type default tolerance for every leaf.
  std::optional<Tolerance> tolerance;
};

// The verdict for one root leaf.
struct LeafVerdict {
  std::string name;  // "output" or "output {1}" (the leaf's tuple index).
  hlo::Shape shape;
  Tolerance tolerance;
  ArrayComparison comparison;
  // Set when `comparison` failed on a floating leaf and the exact (f64) result could be
  // computed: the leaf passes when the SPMD program rounds no worse than the reference
  // (verify_exact.h).
  std::optional<ExactCheck> exact;
  std::string disagreement;  // Devices holding one region disagree; empty if not.
  bool ok() const {
    return (comparison.ok() || (exact.has_value() && exact->ok())) && disagreement.empty();
  }
};

struct VerifyResult {
  std::vector<LeafVerdict> leaves;
  hlo::Literal expected;   // The unpartitioned result.
  hlo::Literal assembled;  // The partitioned result, assembled to full shapes.
  bool ok() const;
  // One line per leaf: shape, largest absolute and relative error, and for a failing leaf the
  // number of mismatches with the first mismatching index and both values.
  std::string ToString() const;
};

// Step 2: every device's arguments for `spmd`, cut from `arguments` (one full literal per
// parameter of `unpartitioned`) by the unpartitioned parameters' shardings. Fails when the
// parameter counts or leaf counts differ, when `spmd` has replica_count > 1, or when a shard
// does not fit the SPMD program's parameter.
absl::StatusOr<std::vector<std::vector<hlo::Literal>>> ShardArguments(
    const hlo::HloModule& unpartitioned, const hlo::HloModule& spmd,
    const std::vector<hlo::Literal>& arguments, int64_t num_devices);

// See the file comment.
bool NeedsPerDeviceReference(const hlo::HloModule& module);
// What of an SPMD program a verifier models without a per-device reference run.
enum class PerDeviceModel {
  kNone,
  kManualRegions,  // Manual regions: manual values (partially too), the conversions into and
                   // out of them, and the collectives and partition-ids computed inside them.
};
// Why `module` is in part an SPMD program already beyond what `model` covers (its first such
// instruction, named), or nullopt.
std::optional<std::string> PerDeviceReferenceReason(const hlo::HloModule& module,
                                                    PerDeviceModel model);
// Device `device`'s value of a manual parameter leaf whose full argument is `full`.
hlo::Literal ManualLeafForDevice(const hlo::Literal& full, int64_t device, int64_t parameter,
                                 int64_t leaf);

// Step 1: runs `unpartitioned` on `arguments` (one full literal per parameter): on one device,
// or on `num_devices` when NeedsPerDeviceReference. Returns one result per device run.
absl::StatusOr<std::vector<hlo::Literal>> RunReference(const hlo::HloModule& unpartitioned,
                                                       std::vector<hlo::Literal> arguments,
                                                       int64_t num_devices,
                                                       double collective_timeout_seconds);

// Steps 4 and 5: assembles `device_results` by the root sharding of `unpartitioned` and
// compares them with `expected`, RunReference's results. Fails when the results do not fit.
absl::StatusOr<VerifyResult> CompareResults(const hlo::HloModule& unpartitioned,
                                            std::vector<hlo::Literal> expected,
                                            const std::vector<hlo::Literal>& device_results,
                                            const VerifyOptions& options);

// CompareResults fails with this kind of error when a root leaf fails its comparison and the
// unpartitioned module's own per-device runs already disagree on it though its sharding is not
// manual: the module has no single meaning there (its manual code leaves devices different
// where a sharding says they agree, e.g. SPMDShardToFullShape to {replicated} of per-device
// shards; or it reads partition-id outside manual code), so no partitioning of it is wrong.
bool IsDeviceDependentInput(const absl::Status& status);
// An error of that kind, with `message`.
absl::Status DeviceDependentInputError(std::string message);

// Step 5's second look (verify_exact.h): whether `result` needs the exact rerun (a floating
// leaf failed, no tolerance was given, the reference runs on one device), and the rerun
// itself on the full `arguments` for every floating leaf that failed, setting its `exact`.
bool NeedsExactRecheck(const hlo::HloModule& unpartitioned, const VerifyOptions& options,
                       const VerifyResult& result);
void RecheckAgainstExact(const hlo::HloModule& unpartitioned, std::vector<hlo::Literal> arguments,
                         const VerifyOptions& options, VerifyResult& result);

// Runs both programs (see the file comment) and compares them. Fails, rather than reporting a
// mismatch, when the programs cannot be run or do not fit together (parameter counts, leaf
// counts, shards that do not fit the SPMD program's shapes).
absl::StatusOr<VerifyResult> VerifyAgainst(const hlo::HloModule& unpartitioned,
                                           const hlo::HloModule& spmd,
                                           const VerifyOptions& options);

}  // namespace runtime

#endif  // RUNTIME_CPU_VERIFY_H_
