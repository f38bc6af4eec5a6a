// Sampled verification (sampled_verify.h): hashed arguments, the sample of each root leaf, and
// the comparison of the point evaluator's values.
#include "runtime/cpu/sampled_verify.h"

#include <pthread.h>

#include <algorithm>
#include <functional>
#include <map>

#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/unreduced.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/tuple_leaves.h"
#include "runtime/cpu/point_elements.h"
#include "runtime/cpu/point_evaluator.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::HloSharding;
using hlo::Literal;
using hlo::Shape;

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Arguments as a function of their element index (the file comment of sampled_verify.h).
class HashedArguments : public ArgumentSource {
 public:
  HashedArguments(const hlo::HloComputation& unpartitioned, const hlo::HloComputation& spmd,
                  uint64_t seed)
      : unpartitioned_(unpartitioned), spmd_(spmd), seed_(seed) {}

  absl::Status Fill(int64_t parameter, int64_t leaf, int64_t device,
                    absl::Span<const int64_t> indices, Literal& out) const override {
    const HloInstruction* full = unpartitioned_.parameter_instruction(parameter);
    const Shape* full_shape = points::LeafAt(full->shape(), leaf);
    const uint64_t stream = Mix(seed_ ^ Mix(static_cast<uint64_t>(parameter) * 1000003ULL +
                                            static_cast<uint64_t>(leaf)));
    if (device < 0) {
      for (size_t i = 0; i < indices.size(); ++i) {
        uint64_t state = Mix(stream + static_cast<uint64_t>(indices[i]));
        SetRandomElement(out, static_cast<int64_t>(i), state);
      }
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(HloSharding sharding, LeafSharding(full->sharding_ptr(), full->shape(), leaf));
    if (hlo::HasUnreduced(sharding)) {  // As ShardForDevice passes it.
      ASSIGN_OR_RETURN(const int64_t holder, UnreducedHolder(sharding, device));
      if (holder != device) return FillWithReductionIdentity(sharding.reduction_op(), &out);
      ASSIGN_OR_RETURN(sharding, hlo::UnreducedAsReplicated(sharding));
    }
    ASSIGN_OR_RETURN(hlo::ShardRegion region,
                     hlo::ShardRegionForDevice(sharding, *full_shape, device));
    const Shape* local_shape =
        points::LeafAt(spmd_.parameter_instruction(parameter)->shape(), leaf);
    if (local_shape == nullptr || local_shape->rank() != full_shape->rank()) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "parameter ", parameter, " leaf ", leaf, " does not fit the SPMD program's parameter"));
    }
    // Padding stays zero, as ShardForDevice leaves it.
    points::ForEachShardElement(
        local_shape->dimensions(), full_shape->dimensions(), region, indices,
        [&](size_t i, int64_t global) {
          if (global < 0) return;
          uint64_t state = Mix(stream + static_cast<uint64_t>(global));
          SetRandomElement(out, static_cast<int64_t>(i), state);
        });
    return absl::OkStatus();
  }

 private:
  const hlo::HloComputation& unpartitioned_;
  const hlo::HloComputation& spmd_;
  uint64_t seed_;
};

// Runs `work` on a thread with a 1 GiB stack (the point evaluator recurses along operand chains
// and loop iterations).
absl::Status OnLargeStack(const std::function<absl::Status()>& work) {
  struct Job {
    const std::function<absl::Status()>* work;
    absl::Status status;
  } job{&work, absl::OkStatus()};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t{1} << 30);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    Job* j = static_cast<Job*>(arg);
    try {
      j->status = (*j->work)();
    } catch (const std::bad_alloc&) {
      j->status = absl::ResourceExhaustedError(
          "sampled evaluation ran out of memory (the sample depends on too many elements)");
    }
    return nullptr;
  };
  const int rc = pthread_create(&thread, &attr, run, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) return work();
  pthread_join(thread, nullptr);
  return job.status;
}

absl::Status CheckSupported(const hlo::HloModule& unpartitioned) {
  if (NeedsPerDeviceReference(unpartitioned)) {
    return absl::UnimplementedError(
        "sampled verification does not support modules that are in part SPMD programs already "
        "(collectives, partition-id or manual shardings in the input)");
  }
  return absl::OkStatus();
}

// Every device's region of a root leaf of `shape` sharded by `sharding`.
absl::StatusOr<std::vector<hlo::ShardRegion>> Regions(const HloSharding& sharding,
                                                      const Shape& shape, int64_t num_devices) {
  std::vector<hlo::ShardRegion> regions;
  for (int64_t d = 0; d < num_devices; ++d) {
    ASSIGN_OR_RETURN(regions.emplace_back(), DeviceRegion(sharding, shape, d));
  }
  return regions;
}

bool HoldsData(const hlo::ShardRegion& r) { return r.holds_data && !r.empty(); }

// Whether `r` holds the element at multi-index `index`.
bool Holds(const hlo::ShardRegion& r, const std::vector<int64_t>& index) {
  bool inside = HoldsData(r);
  for (size_t j = 0; j < index.size() && inside; ++j) {
    inside = index[j] >= r.offsets[j] && index[j] < r.limits[j];
  }
  return inside;
}

// The devices whose regions the sample picks random elements for (every device computes its
// region's first and last element): all, or with options.replicas_per_region, that many of the
// devices holding each distinct region (which ones rotates with the seed and `salt`).
std::vector<bool> PickingDevices(const std::vector<hlo::ShardRegion>& regions,
                                 const SampledVerifyOptions& options, uint64_t salt) {
  const int64_t n = static_cast<int64_t>(regions.size());
  std::vector<bool> picking(n, options.replicas_per_region <= 0);
  if (options.replicas_per_region <= 0) return picking;
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>, std::vector<int64_t>> holders;
  for (int64_t d = 0; d < n; ++d) {
    if (HoldsData(regions[d])) holders[{regions[d].offsets, regions[d].limits}].push_back(d);
  }
  for (const auto& [region, devices] : holders) {
    const size_t h = devices.size();
    const size_t first =
        Mix(options.seed ^ Mix(salt ^ static_cast<uint64_t>(devices.front()))) % h;
    for (size_t k = 0; k < h && k < static_cast<size_t>(options.replicas_per_region); ++k) {
      picking[devices[(first + k) % h]] = true;
    }
  }
  return picking;
}

// The sample of a root leaf of `shape` whose devices hold `regions`: global element -> the
// devices that must compute it (those it was picked for as a region's first, last or random
// element; none for the uniformly random ones).
std::map<int64_t, std::vector<int64_t>> Sample(const std::vector<hlo::ShardRegion>& regions,
                                               const Shape& shape,
                                               const SampledVerifyOptions& options,
                                               uint64_t salt) {
  std::map<int64_t, std::vector<int64_t>> picked;
  const int64_t total = shape.num_elements();
  if (total == 0) return picked;
  uint64_t state = Mix(options.seed ^ Mix(salt));
  auto next = [&](int64_t bound) {
    state = Mix(state);
    return static_cast<int64_t>(state % static_cast<uint64_t>(bound));
  };
  auto pick = [&](const int64_t* index, int64_t device) {
    std::vector<int64_t>& devices = picked[points::Ravel(index, shape.dimensions())];
    if (devices.empty() || devices.back() != device) devices.push_back(device);
  };
  std::vector<int64_t> index(shape.rank());
  const std::vector<bool> picking = PickingDevices(regions, options, salt);
  for (int64_t d = 0; d < static_cast<int64_t>(regions.size()); ++d) {
    const hlo::ShardRegion& region = regions[d];
    if (!HoldsData(region) || (!picking[d] && !options.first_last_on_every_device)) continue;
    std::vector<int64_t> last(region.limits);
    for (int64_t& x : last) --x;
    pick(region.offsets.data(), d);
    pick(last.data(), d);
    for (int64_t k = 0; k < options.per_device_random && picking[d]; ++k) {
      for (size_t j = 0; j < index.size(); ++j) {
        index[j] = region.offsets[j] + next(region.limits[j] - region.offsets[j]);
      }
      pick(index.data(), d);
    }
  }
  for (int64_t k = 0; k < options.random_samples; ++k) picked.try_emplace(next(total));
  return picked;
}

// The devices that compute each sampled element (sorted): those it was picked for, and up to
// `holders_per_element` of the devices that hold it (all of them for a replicated leaf).
std::vector<std::vector<int64_t>> Checkers(const std::map<int64_t, std::vector<int64_t>>& picked,
                                           const std::vector<hlo::ShardRegion>& regions,
                                           const Shape& shape,
                                           const SampledVerifyOptions& options) {
  std::vector<std::vector<int64_t>> checkers;
  std::vector<int64_t> index(shape.rank());
  for (const auto& [global, picked_for] : picked) {
    points::Unravel(global, shape.dimensions(), index.data());
    std::vector<int64_t> holders;
    for (int64_t d = 0; d < static_cast<int64_t>(regions.size()); ++d) {
      if (Holds(regions[d], index)) holders.push_back(d);
    }
    std::vector<int64_t> chosen = picked_for;
    const size_t h = holders.size();
    for (int64_t k = 0; k < options.holders_per_element && static_cast<size_t>(k) < h; ++k) {
      chosen.push_back(holders[(Mix(global) + static_cast<uint64_t>(k) * (h / 2 + 1)) % h]);
    }
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    checkers.push_back(std::move(chosen));
  }
  return checkers;
}

// Compares root leaf `leaf` on the sample: the reference's values against the checkers'.
absl::StatusOr<LeafVerdict> VerifySampledLeaf(const hlo::HloModule& unpartitioned,
                                              const hlo::HloModule& spmd, int64_t leaf,
                                              PointEvaluator& reference, PointEvaluator& devices,
                                              const SampledVerifyOptions& options) {
  const HloInstruction& root = *unpartitioned.entry_computation()->root_instruction();
  const Shape& shape = *points::LeafAt(root.shape(), leaf);
  const Shape* device_shape =
      points::LeafAt(spmd.entry_computation()->root_instruction()->shape(), leaf);
  ASSIGN_OR_RETURN(HloSharding sharding, LeafSharding(root.sharding_ptr(), root.shape(), leaf));
  // An unreduced leaf: each device's value is its group's values combined (as
  // AssembleFromShards reads them), compared where the reduced sharding puts it.
  std::vector<int64_t> group_of(options.num_partitions, -1);
  std::vector<std::vector<int64_t>> groups;
  const hlo::ReductionOp op = sharding.reduction_op();
  if (hlo::HasUnreduced(sharding)) {
    ASSIGN_OR_RETURN(groups, hlo::UnreducedGroups(sharding, options.num_partitions));
    for (size_t g = 0; g < groups.size(); ++g) {
      for (int64_t d : groups[g]) {
        if (d < options.num_partitions) group_of[d] = static_cast<int64_t>(g);
      }
    }
    ASSIGN_OR_RETURN(sharding, hlo::UnreducedAsReplicated(sharding));
  }
  auto device_value = [&](int64_t device,
                          absl::Span<const int64_t> local) -> absl::StatusOr<Literal> {
    if (group_of[device] < 0) return devices.EntryRootElements(device, leaf, local);
    std::vector<Literal> parts;
    for (int64_t member : groups[group_of[device]]) {
      ASSIGN_OR_RETURN(parts.emplace_back(), devices.EntryRootElements(member, leaf, local));
    }
    std::vector<const Literal*> views;
    for (const Literal& part : parts) views.push_back(&part);
    return CombinePartials(views, op);
  };
  LeafVerdict verdict;
  verdict.shape = shape;
  verdict.tolerance = options.tolerance.value_or(DefaultTolerance(shape.element_type()));
  ASSIGN_OR_RETURN(
      SampledComparison compared,
      CompareSampledLeaf(
          shape, *device_shape, sharding, options, static_cast<uint64_t>(leaf), verdict.tolerance,
          [&](absl::Span<const int64_t> global) {
            return reference.EntryRootElements(-1, leaf, global);
          },
          device_value));
  verdict.comparison = std::move(compared.comparison);
  verdict.name = hlo::StrCat(LeafName("output", LeafIndices(root.shape()).at(leaf)), " (sampled: ",
                             compared.sample.size(), " of ", shape.num_elements(), " elements, ",
                             compared.pairs.size(), " device values)");
  if (compared.mismatch_device >= 0) {
    hlo::StrAppend(&verdict.name, " [first mismatch on device ", compared.mismatch_device, "]");
  }
  return verdict;
}

}  // namespace

absl::StatusOr<SampledComparison> CompareSampledLeaf(
    const Shape& shape, const Shape& device_shape, const HloSharding& sharding,
    const SampledVerifyOptions& options, uint64_t salt, const Tolerance& tolerance,
    const std::function<absl::StatusOr<Literal>(absl::Span<const int64_t>)>& reference,
    const std::function<absl::StatusOr<Literal>(int64_t, absl::Span<const int64_t>)>& device) {
  ASSIGN_OR_RETURN(std::vector<hlo::ShardRegion> regions,
                   Regions(sharding, shape, options.num_partitions));
  const std::map<int64_t, std::vector<int64_t>> picked = Sample(regions, shape, options, salt);
  SampledComparison out;
  for (const auto& [global, devices] : picked) out.sample.push_back(global);
  ASSIGN_OR_RETURN(out.expected_sample, reference(out.sample));
  const std::vector<std::vector<int64_t>> checkers = Checkers(picked, regions, shape, options);
  std::vector<int64_t> index(shape.rank());
  // Every (device, sampled element) pair, in device order.
  const int width = hlo::ByteWidth(shape.element_type());
  std::vector<uint64_t> actual_bits;
  for (int64_t d = 0; d < options.num_partitions; ++d) {
    const hlo::ShardRegion& region = regions[d];
    std::vector<int64_t> local, positions;
    for (size_t s = 0; s < out.sample.size(); ++s) {
      if (!std::binary_search(checkers[s].begin(), checkers[s].end(), d)) continue;
      points::Unravel(out.sample[s], shape.dimensions(), index.data());
      for (size_t j = 0; j < index.size(); ++j) index[j] -= region.offsets[j];
      local.push_back(points::Ravel(index.data(), device_shape.dimensions()));
      positions.push_back(static_cast<int64_t>(s));
    }
    if (local.empty()) continue;
    ASSIGN_OR_RETURN(Literal actual, device(d, local));
    for (size_t k = 0; k < local.size(); ++k) {
      out.pairs.emplace_back(d, positions[k]);
      actual_bits.push_back(points::BitsAt(actual, static_cast<int64_t>(k), width));
    }
  }
  const int64_t m = static_cast<int64_t>(out.pairs.size());
  out.expected = Literal(Shape::Array(shape.element_type(), {m}));
  out.actual = Literal(out.expected.shape());
  for (int64_t k = 0; k < m; ++k) {
    points::SetBits(out.expected, k, width,
                    points::BitsAt(out.expected_sample, out.pairs[k].second, width));
    points::SetBits(out.actual, k, width, actual_bits[k]);
  }
  out.comparison = CompareArrays(out.expected, out.actual, tolerance);
  if (!out.comparison.first_mismatch.empty()) {
    const auto [d, position] = out.pairs[out.comparison.first_mismatch[0]];
    out.mismatch_device = d;
    out.comparison.first_mismatch.assign(shape.rank(), 0);
    points::Unravel(out.sample[position], shape.dimensions(),
                    out.comparison.first_mismatch.data());
  }
  out.comparison.elements = m;
  return out;
}

uint64_t SampleHash(uint64_t x) { return Mix(x); }

absl::StatusOr<hlo::ShardRegion> DeviceRegion(const HloSharding& sharding, const Shape& shape,
                                              int64_t device) {
  if (sharding.IsTiled() && !sharding.UsesDevice(device)) {
    return hlo::ShardRegion{std::vector<int64_t>(shape.rank(), 0),
                            std::vector<int64_t>(shape.rank(), 0), /*holds_data=*/false};
  }
  return hlo::ShardRegionForDevice(sharding, shape, device);
}

absl::Status RunOnLargeStack(const std::function<absl::Status()>& work) {
  return OnLargeStack(work);
}

absl::StatusOr<VerifyResult> VerifySampled(const hlo::HloModule& unpartitioned,
                                           const hlo::HloModule& spmd,
                                           const SampledVerifyOptions& options) {
  RETURN_IF_ERROR(CheckSupported(unpartitioned));
  const hlo::HloComputation& full_entry = *unpartitioned.entry_computation();
  const hlo::HloComputation& spmd_entry = *spmd.entry_computation();
  if (full_entry.num_parameters() != spmd_entry.num_parameters()) {
    return absl::InvalidArgumentError(hlo::StrCat(
        "the unpartitioned module takes ", full_entry.num_parameters(),
        " parameters but the SPMD program takes ", spmd_entry.num_parameters()));
  }
  const int64_t leaves = full_entry.root_instruction()->shape().leaf_count();
  if (spmd_entry.root_instruction()->shape().leaf_count() != leaves) {
    return absl::InvalidArgumentError("the two programs' outputs have different leaf counts");
  }
  HashedArguments arguments(full_entry, spmd_entry, options.seed);
  PointEvaluator reference(unpartitioned, arguments, 1);
  PointEvaluator devices(spmd, arguments, options.num_partitions);
  reference.set_element_budget(options.element_budget);
  devices.set_element_budget(options.element_budget);
  VerifyResult result;
  RETURN_IF_ERROR(OnLargeStack([&]() -> absl::Status {
    for (int64_t leaf = 0; leaf < leaves; ++leaf) {
      ASSIGN_OR_RETURN(LeafVerdict verdict,
                       VerifySampledLeaf(unpartitioned, spmd, leaf, reference, devices, options));
      result.leaves.push_back(std::move(verdict));
    }
    return absl::OkStatus();
  }));
  return result;
}

}  // namespace runtime
