// Modular verification (modular_verify.h): the records resolved against both modules, the cut
// values, and the checks of instructions, call-site boundaries and returns.
#include "runtime/cpu/modular_verify.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "hlo/analysis/constant_dims.h"
#include "hlo/analysis/iota_pieces.h"
#include "hlo/ir/primitive_type.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/unreduced.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/opcode_table.h"
#include "runtime/cpu/modular_cuts.h"
#include "runtime/cpu/ops/manual_ops.h"
#include "runtime/cpu/point_elements.h"
#include "runtime/cpu/point_evaluator.h"
#include "runtime/cpu/sampled_verify.h"
#include "runtime/cpu/verify.h"
#include "runtime/cpu/verify_exact.h"

namespace runtime {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Literal;
using hlo::Shape;
using hlo::SpmdOrigin;

using modular::CutValue;
using modular::FillFull;
using modular::FillManual;
using modular::FillShard;
using modular::IsManual;
using modular::IsManualLeaf;

using NameKey = std::pair<std::string, std::string>;  // (computation, instruction)

NameKey KeyOf(const HloInstruction& instr) { return {instr.parent()->name(), instr.name()}; }

using NameIndex = absl::flat_hash_map<NameKey, const HloInstruction*>;

NameIndex IndexByName(const hlo::HloModule& module) {
  NameIndex index;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) index.try_emplace(KeyOf(*instr), instr.get());
  }
  return index;
}

const HloInstruction* Find(const NameIndex& index, const std::string& computation,
                           const std::string& instruction) {
  const auto found = index.find(NameKey{computation, instruction});
  return found == index.end() ? nullptr : found->second;
}

uint64_t HashName(const std::string& computation, const std::string& instruction) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a: the same stream on every run.
  for (const std::string* part : {&computation, &instruction}) {
    for (unsigned char c : *part) h = (h ^ c) * 0x100000001b3ULL;
    h = (h ^ '/') * 0x100000001b3ULL;
  }
  return h;
}

// The records resolved against both modules.
struct Resolved {
  struct Value {
    const SpmdOrigin* origin;
    const HloInstruction* device;    // In the SPMD program.
    const HloInstruction* original;  // In the unpartitioned module.
  };
  std::vector<Value> values, returns;
  // The cut value each recorded SPMD instruction holds: its first record's.
  // (Values fixed by the program keep CutValue::cut false.)
  absl::node_hash_map<const HloInstruction*, CutValue> device_cuts;
  // Per SPMD computation, the cut value of each original instruction it holds (by name, so the
  // f64 copy of the unpartitioned module finds them too).
  absl::flat_hash_map<const HloComputation*, absl::flat_hash_map<NameKey, const CutValue*>>
      reference_cuts;
  absl::flat_hash_map<const HloComputation*, HloSharding> return_shardings;
  // The original computation each partitioned computation was made from.
  absl::flat_hash_map<const HloComputation*, std::string> sources;
};

absl::Status CheckLayouts(const SpmdOrigin& origin, const Shape& shape) {
  for (int64_t leaf = 0; leaf < shape.leaf_count(); ++leaf) {
    ASSIGN_OR_RETURN(HloSharding s, LeafSharding(&origin.sharding, shape, leaf));
    if (hlo::HasUnreduced(s)) {
      return absl::UnimplementedError(
          hlo::StrCat("modular verification does not support unreduced values (%",
                      origin.original_instruction, " is ", s.ToString(), ")"));
    }
  }
  return absl::OkStatus();
}

// The original whose random values `original`'s cut takes: through ops whose value is their
// operand's (copies, sharding custom-calls), the operand's, so that the partitioner may read
// the one where the program reads the other (the reshard made for a sharding custom-call also
// serves its operand's uses) without a false mismatch.
const HloInstruction& ValueSource(const HloInstruction& original) {
  const HloInstruction* at = &original;
  while (hlo::ForwardsOperand(*at) && at->operand_count() == 1 &&
         at->operand(0)->shape().Compatible(at->shape())) {
    at = at->operand(0);
  }
  return *at;
}

// Originals that hold one value: recorded at one SPMD instruction with compatible shapes (the
// partitioner's cleanup merged their identical partitioned instructions, e.g. two equal
// reshapes). One random value stands in for all of them -- their ValueSource's, the first
// recorded -- so that whichever record a reader goes through, the reference and the devices
// read the same values.
class SameValues {
 public:
  SameValues(const NameIndex& devices, const NameIndex& originals,
             absl::Span<const SpmdOrigin> origins) {
    absl::flat_hash_map<const HloInstruction*, const HloInstruction*> first_at;
    for (const SpmdOrigin& origin : origins) {
      if (origin.kind == SpmdOrigin::Kind::kReturn) continue;
      const HloInstruction* device = Find(devices, origin.computation, origin.instruction);
      const HloInstruction* original =
          Find(originals, origin.original_computation, origin.original_instruction);
      if (device == nullptr || original == nullptr) continue;
      const HloInstruction* source = &ValueSource(*original);
      const auto [at, added] = first_at.try_emplace(device, source);
      if (!added && at->second->shape().Compatible(source->shape())) Join(at->second, source);
    }
  }
  // The instruction whose random value stands in for `source` (a ValueSource).
  const HloInstruction& Of(const HloInstruction& source) const { return *Root(&source); }

 private:
  const HloInstruction* Root(const HloInstruction* at) const {
    for (auto up = parent_.find(at); up != parent_.end(); up = parent_.find(at)) at = up->second;
    return at;
  }
  void Join(const HloInstruction* first, const HloInstruction* other) {
    const HloInstruction* a = Root(first);
    const HloInstruction* b = Root(other);
    if (a != b) parent_[b] = a;
  }
  absl::flat_hash_map<const HloInstruction*, const HloInstruction*> parent_;
};

absl::StatusOr<Resolved> Resolve(const hlo::HloModule& unpartitioned, const hlo::HloModule& spmd,
                                 absl::Span<const SpmdOrigin> origins, uint64_t seed,
                                 int64_t num_devices) {
  Resolved r;
  const NameIndex devices = IndexByName(spmd);
  const NameIndex originals = IndexByName(unpartitioned);
  absl::flat_hash_map<const HloInstruction*, bool> fixed;
  hlo::ConstantDimsMemo constant_dims;
  const SameValues same(devices, originals, origins);
  // Originals recorded in a layout without manual leaves: global values. One that a marker
  // brings into manual groups is held by every group (CutValue::global).
  absl::flat_hash_set<const HloInstruction*> global;
  for (const SpmdOrigin& origin : origins) {
    const HloInstruction* original =
        Find(originals, origin.original_computation, origin.original_instruction);
    bool manual = false;
    for (const HloSharding& leaf : origin.sharding.IsTuple()
                                       ? origin.sharding.tuple_elements()
                                       : std::vector<HloSharding>{origin.sharding}) {
      manual = manual || modular::IsManual(leaf);
    }
    if (original != nullptr && origin.kind != SpmdOrigin::Kind::kReturn && !manual) {
      global.insert(original);
    }
  }
  for (const SpmdOrigin& origin : origins) {
    const HloInstruction* device = Find(devices, origin.computation, origin.instruction);
    if (device == nullptr) continue;  // Removed as dead code: nothing reads it.
    const HloComputation* computation = device->parent();
    const HloInstruction* original =
        Find(originals, origin.original_computation, origin.original_instruction);
    if (original == nullptr) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "the partitioner's records name %", origin.original_instruction, " in %",
          origin.original_computation, ", which the unpartitioned module does not have"));
    }
    RETURN_IF_ERROR(CheckLayouts(origin, original->shape()));
    if (origin.kind == SpmdOrigin::Kind::kReturn) {
      r.returns.push_back({&origin, device, original});
      r.return_shardings.insert_or_assign(computation, origin.sharding);
      r.sources.insert_or_assign(computation, origin.original_computation);
      continue;
    }
    r.values.push_back({&origin, device, original});
    // A manual conversion's value is its operand's, laid out per device: it is not cut, nor is
    // what only forwards it, so the reference computes it from its operand's cut value
    // (point_ops_devices.cc) and the devices read their shards of that same value.
    if (IsManualConversion(ValueSource(*original))) continue;
    const HloInstruction& source = same.Of(ValueSource(*original));
    const uint64_t stream =
        SampleHash(seed ^ HashName(source.parent()->name(), source.name()));
    const CutValue& cut =
        r.device_cuts
            .try_emplace(
                device,
                CutValue{original, origin.sharding, stream, !modular::Rebuildable(*original, fixed),
                         hlo::ConstantAlongDims(*original, constant_dims), hlo::IotaPieces(source),
                         modular::AgreeingGroups(source, origin.sharding, num_devices),
                         &source != original && global.contains(&source)})
            .first->second;
    if (cut.cut) r.reference_cuts[computation].insert_or_assign(KeyOf(*original), &cut);
  }
  return r;
}

// Whether the reference's element `at` of a value of `full` sharded `sharding` on `num_devices`
// devices differs as the devices holding it compute it (`as_device(d)`: its value as device d):
// "the value X as device d computes it and Y as device e", or nullopt when they agree.
absl::StatusOr<std::optional<std::string>> DeviceDependence(
    absl::Span<const int64_t> at, const Shape& full, const HloSharding& sharding,
    int64_t num_devices, const Tolerance& tolerance,
    const std::function<absl::StatusOr<Literal>(int64_t)>& as_device) {
  std::optional<Literal> first;
  int64_t first_device = -1;
  for (int64_t d = 0; d < num_devices; ++d) {
    absl::StatusOr<hlo::ShardRegion> region = hlo::ShardRegionForDevice(sharding, full, d);
    if (!region.ok() || region->empty()) continue;
    bool holds = true;
    for (size_t k = 0; k < at.size(); ++k) {
      holds = holds && at[k] >= region->offsets[k] && at[k] < region->limits[k];
    }
    if (!holds) continue;
    absl::StatusOr<Literal> value = as_device(d);
    if (!value.ok()) return std::optional<std::string>();
    if (!first.has_value()) {
      first = *std::move(value);
      first_device = d;
      continue;
    }
    const ArrayComparison differ = CompareArrays(*first, *value, tolerance);
    if (!differ.ok()) {
      return std::optional<std::string>(
          hlo::StrCat("the value ", differ.expected_value, " as device ", first_device,
                      " computes it and ", differ.actual_value, " as device ", d));
    }
  }
  return std::optional<std::string>();
}

class DeviceCuts : public CutSource {
 public:
  explicit DeviceCuts(const Resolved& resolved) : resolved_(resolved) {}
  bool IsCut(const HloInstruction& instr) const override {
    const auto found = resolved_.device_cuts.find(&instr);
    return found != resolved_.device_cuts.end() && found->second.cut;
  }
  absl::Status Fill(const HloInstruction& instr, int64_t leaf, int64_t device,
                    absl::Span<const int64_t> indices, Literal& out) const override {
    const CutValue& cut = resolved_.device_cuts.at(&instr);
    return FillShard(cut, *points::LeafAt(instr.shape(), leaf), leaf, device, indices, out);
  }

 private:
  const Resolved& resolved_;
};

class ReferenceCuts : public CutSource {
 public:
  explicit ReferenceCuts(const absl::flat_hash_map<NameKey, const CutValue*>& cuts)
      : cuts_(cuts) {}
  bool IsCut(const HloInstruction& instr) const override { return cuts_.contains(KeyOf(instr)); }
  absl::Status Fill(const HloInstruction& instr, int64_t leaf, int64_t device,
                    absl::Span<const int64_t> indices, Literal& out) const override {
    const CutValue& cut = *cuts_.at(KeyOf(instr));
    if (IsManualLeaf(cut, leaf)) return FillManual(cut, leaf, device, indices, out);
    FillFull(cut, leaf, indices, out);
    return absl::OkStatus();
  }

 private:
  const absl::flat_hash_map<NameKey, const CutValue*>& cuts_;
};

// Every entry parameter is cut: reaching one uncut is a bug of the records.
class NoArguments : public ArgumentSource {
 public:
  absl::Status Fill(int64_t parameter, int64_t, int64_t, absl::Span<const int64_t>,
                    Literal&) const override {
    return absl::InternalError(
        hlo::StrCat("entry parameter ", parameter, " has no record (modular verification)"));
  }
};

// Whether a check that `devices` devices compute in turn will stay within the element budget,
// judged as they go: once two have run, the remaining ones are forecast to cost what
// the cheapest so far did (optimistic: a device that evaluates a collective also memoizes its
// peers' values for them). A check forecast over the budget fails now (ResourceExhausted)
// instead of spending the budget first (a scatter reading its whole index shard on each of
// 1536 devices); the caller then checks one replica per region.
class WorkForecast {
 public:
  explicit WorkForecast(int64_t devices) : devices_(devices) {}

  absl::Status After(int64_t work, const HloInstruction& instr, int64_t budget) {
    spent_ += work;
    cheapest_ = std::min(cheapest_, work);
    if (++called_ < 2 || called_ >= devices_) return absl::OkStatus();
    const double remaining = static_cast<double>(devices_ - called_);
    const double forecast =
        static_cast<double>(spent_) + static_cast<double>(cheapest_) * remaining;
    if (forecast <= static_cast<double>(budget)) return absl::OkStatus();
    return absl::ResourceExhaustedError(hlo::StrCat(
        "sampled evaluation is forecast to need more than ", budget, " elements on the ",
        devices_, " devices computing it (at %", instr.name(), ")"));
  }

 private:
  int64_t devices_;
  int64_t called_ = 0;
  int64_t spent_ = 0;
  int64_t cheapest_ = std::numeric_limits<int64_t>::max();
};

// One check: the reference's value of `reference` against the devices' value of `device`,
// laid out as `sharding`. `compute_*`: compute the instruction from its operands rather than
// read its cut value.
struct Check {
  std::string what;
  const HloInstruction* reference;
  bool compute_reference;
  const HloInstruction* device;
  bool compute_device;
  const HloComputation* site;  // The SPMD computation whose reference cuts apply.
  HloSharding sharding;
  bool instruction = false;  // An original instruction's check (else a boundary's).
  // On a mismatch, check again reading `device`'s cut value (compute_device false).
  bool or_read = false;
};

class Checker {
 public:
  Checker(const hlo::HloModule& unpartitioned, const hlo::HloModule& spmd,
          const Resolved& resolved, const ModularVerifyOptions& options)
      : unpartitioned_(unpartitioned), spmd_(spmd), resolved_(resolved), options_(options) {
    sampling_.seed = options.seed;
    sampling_.num_partitions = options.num_partitions;
    sampling_.random_samples = options.random_samples;
    sampling_.per_device_random = options.per_device_random;
    sampling_.holders_per_element = 1;
    // Replicas of a region compute it the same way unless the program tells devices apart
    // (their collectives, partition-id): one picked per region, another as a random holder
    // of each element, the choice rotating between checks.
    sampling_.replicas_per_region = 1;
  }

  // Runs `check`, adding its outcome to `result`. What cannot be evaluated (no element
  // semantics, over the budget) is not verified; any other failure of the SPMD side, once the
  // reference has its values (a loop that does not stop, an index out of range), is a
  // mismatch; the reference's own failures leave the check not verified, with the reason.
  void Run(const Check& check, ModularResult& result) {
    const Shape& shape = check.reference->shape();
    for (int64_t leaf = 0; leaf < shape.leaf_count(); ++leaf) {
      LeafOutcome outcome = Attempt(check, leaf, /*one_replica=*/false, result);
      if (!outcome.matches() && check.or_read) {
        // A shared value that is not computed like this one (or cannot be computed here, an
        // entry parameter) may still be this one's value: read it.
        Check read = check;
        read.compute_device = false;
        read.or_read = false;
        LeafOutcome again = Attempt(read, leaf, /*one_replica=*/false, result);
        if (again.matches()) outcome = std::move(again);
      }
      if (outcome.spmd_error && outcome.error.code() == absl::StatusCode::kResourceExhausted) {
        // Every replica of a region computing it is over the budget (a sum over a whole
        // replicated weight on each device): one replica per region computes it instead.
        outcome = Attempt(check, leaf, /*one_replica=*/true, result);
        if (outcome.error.ok()) {
          result.thinned.push_back(hlo::StrCat(check.what, " (output leaf ", leaf, ")"));
        }
      }
      if (!outcome.error.ok()) {
        const absl::StatusCode code = outcome.error.code();
        const bool cannot = code == absl::StatusCode::kUnimplemented ||
                            code == absl::StatusCode::kResourceExhausted;
        if (outcome.spmd_error && !cannot) {
          result.mismatches.push_back(hlo::StrCat(check.what,
                                                  ": the SPMD program cannot compute it (",
                                                  outcome.error.message(), ")"));
        } else {
          result.unverified.push_back(hlo::StrCat(check.what, ": ", outcome.error.message()));
        }
        return;
      }
      if (!outcome.mismatch.empty()) {
        result.mismatches.push_back(outcome.mismatch);
        break;
      }
    }
    if (check.instruction) ++result.instructions;
  }

 private:
  // One leaf's comparison.
  struct LeafOutcome {
    absl::Status error;       // The leaf could not be compared.
    bool spmd_error = false;  // `error` came from the SPMD side, the reference having values.
    std::string mismatch;     // The mismatch's line; empty when the leaf matches.
    bool matches() const { return error.ok() && mismatch.empty(); }
  };

  // Compares leaf `leaf` of `check`, with `one_replica`: on one replica of each region only.
  LeafOutcome Attempt(const Check& check, int64_t leaf, bool one_replica,
                      ModularResult& result) {
    LeafOutcome outcome;
    absl::StatusOr<std::string> line =
        RunLeaf(check, leaf, one_replica, result, &outcome.spmd_error);
    if (line.ok()) {
      outcome.mismatch = *std::move(line);
    } else {
      outcome.error = line.status();
    }
    return outcome;
  }

  // Empty when the leaf matches; else the mismatch's line. `spmd_error`: whether a failure
  // came from the SPMD side.
  absl::StatusOr<std::string> RunLeaf(const Check& check, int64_t leaf, bool one_replica,
                                      ModularResult& result, bool* spmd_error) {
    const Shape& full = *points::LeafAt(check.reference->shape(), leaf);
    if (!full.IsArray()) return std::string();  // A token: no data to compare.
    const Shape* local = points::LeafAt(check.device->shape(), leaf);
    if (local == nullptr || local->rank() != full.rank() ||
        local->element_type() != full.element_type()) {
      return hlo::StrCat(check.what, ": the SPMD value %", check.device->name(), " is ",
                         check.device->shape().ToString(), ", not a shard of ",
                         check.reference->shape().ToString());
    }
    ASSIGN_OR_RETURN(HloSharding sharding,
                     LeafSharding(&check.sharding, check.reference->shape(), leaf));
    absl::StatusOr<Shape> padded = hlo::PaddedShardShape(sharding, full);
    if (!padded.ok() || padded->dimensions() != local->dimensions()) {
      return hlo::StrCat(check.what, ": the SPMD value %", check.device->name(), " is ",
                         local->ToString(false), ", not the padded shard ",
                         padded.ok() ? padded->ToString(false) : std::string(padded.status().message()),
                         " of ", full.ToString(false), " under ", sharding.ToString());
    }
    Tolerance tolerance = options_.tolerance.value_or(DefaultTolerance(full.element_type()));
    if (!options_.tolerance.has_value()) {
      tolerance.rtol *= options_.tolerance_scale;
      tolerance.atol *= options_.tolerance_scale;
    }
    const auto site = resolved_.reference_cuts.find(check.site);
    static const absl::flat_hash_map<NameKey, const CutValue*> kNone;
    ReferenceCuts reference_cuts(site == resolved_.reference_cuts.end() ? kNone : site->second);
    DeviceCuts device_cuts(resolved_);
    NoArguments no_arguments;
    if (IsManual(sharding)) {
      return CompareManual(check, leaf, full, *local, sharding, tolerance, reference_cuts,
                           device_cuts, result, spmd_error);
    }
    PointEvaluator devices(spmd_, no_arguments, options_.num_partitions);
    devices.set_cuts(&device_cuts);
    devices.set_element_budget(options_.element_budget);
    devices.set_deadline(options_.deadline);
    // The work, counted however the leaf ends.
    struct Count {
      const PointEvaluator& devices;
      int64_t& total;
      ~Count() { total += devices.memoized_elements(); }
    } count{devices, result.elements};
    auto reference_in = [&](const hlo::HloModule& module, const HloInstruction& instr,
                            absl::Span<const int64_t> global,
                            int64_t as_device = -1) -> absl::StatusOr<Literal> {
      // All devices (-1): a manual conversion's global value reads each element on the first
      // device holding it; as one device, on that device where it holds it.
      PointEvaluator reference(module, no_arguments, options_.num_partitions);
      reference.set_cuts(&reference_cuts);
      reference.set_element_budget(options_.element_budget);
      reference.set_deadline(options_.deadline);
      absl::StatusOr<Literal> values =
          reference.Elements(instr, leaf, as_device, global, check.compute_reference);
      result.elements += reference.memoized_elements();
      return values;
    };
    SampledVerifyOptions sampling = sampling_;
    sampling.first_last_on_every_device = !one_replica;
    WorkForecast forecast(one_replica ? hlo::DataTiles(sharding) : options_.num_partitions);
    ASSIGN_OR_RETURN(
        SampledComparison compared,
        CompareSampledLeaf(
            full, *local, sharding, sampling, HashName(check.what, std::to_string(leaf)),
            tolerance,
            [&](absl::Span<const int64_t> global) {
              return reference_in(unpartitioned_, *check.reference, global);
            },
            [&](int64_t d, absl::Span<const int64_t> indices) -> absl::StatusOr<Literal> {
              const int64_t before = devices.memoized_elements();
              absl::StatusOr<Literal> values =
                  devices.Elements(*check.device, leaf, d, indices, check.compute_device);
              *spmd_error = !values.ok();
              if (!values.ok()) return values;
              absl::Status affordable = forecast.After(devices.memoized_elements() - before,
                                                       *check.device, options_.element_budget);
              if (!affordable.ok()) {
                *spmd_error = true;
                return affordable;
              }
              return values;
            }));
    result.compared += static_cast<int64_t>(compared.pairs.size());
    if (compared.comparison.ok()) return std::string();
    // The module's own value there differs as computed by the devices holding it: its manual
    // code leaves devices different where a sharding says they agree, so it has no single
    // meaning there, and no partitioning of it is wrong.
    const std::vector<int64_t> at = compared.comparison.first_mismatch;
    ASSIGN_OR_RETURN(
        std::optional<std::string> dependent,
        DeviceDependence(at, full, sharding, options_.num_partitions, tolerance, [&](int64_t d) {
          const std::vector<int64_t> flat = {points::Ravel(at.data(), full.dimensions())};
          return reference_in(unpartitioned_, *check.reference, flat, d);
        }));
    if (dependent.has_value()) {
      return DeviceDependentInputError(hlo::StrCat(
          check.what, ": the unpartitioned module itself gives element ", FormatIndex(at), " ",
          *dependent, " though its sharding ", sharding.ToString(),
          " makes it one value: the module's manual code does not make the devices agree "
          "where its shardings say they do, so its result is not defined"));
    }
    std::string line = hlo::StrCat(
        check.what, " (%", check.device->name(), " in %", check.device->parent()->name(),
        "): device ", compared.mismatch_device, ", element ",
        FormatIndex(compared.comparison.first_mismatch), " of ", full.ToString(), ": expected ",
        compared.comparison.expected_value, ", got ", compared.comparison.actual_value, " (",
        compared.comparison.mismatches, " of ", compared.pairs.size(), " values differ; rtol ",
        tolerance.rtol, ", atol ", tolerance.atol, ")");
    if (options_.tolerance.has_value()) return line;
    const hlo::HloModule* wide = Wide();
    const HloInstruction* wide_instr =
        wide == nullptr ? nullptr
                        : Find(wide_index_, check.reference->parent()->name(),
                               check.reference->name());
    if (wide_instr == nullptr) return line;
    ASSIGN_OR_RETURN(Literal exact_sample, reference_in(*wide, *wide_instr, compared.sample));
    Literal exact(Shape::Array(exact_sample.shape().element_type(),
                               {static_cast<int64_t>(compared.pairs.size())}));
    const int width = hlo::ByteWidth(exact.shape().element_type());
    for (size_t k = 0; k < compared.pairs.size(); ++k) {
      points::SetBits(exact, static_cast<int64_t>(k), width,
                      points::BitsAt(exact_sample, compared.pairs[k].second, width));
    }
    std::optional<ExactCheck> against =
        CheckAgainstExact(compared.expected, compared.actual, exact, tolerance);
    if (against.has_value() && against->ok()) return std::string();
    if (against.has_value()) {
      hlo::StrAppend(&line, "; against the exact (f64) result: error ", against->spmd_error,
                     ", the reference's own ", against->reference_error, ", held to ",
                     against->bound);
    }
    return line;
  }

  // A manual leaf: a different value in each manual group (each device when fully manual), so
  // each device's elements are held to the reference computed as that device (its manual
  // operands' cut values are its group's). Each device's region of its group's value (all of
  // it when fully manual) is sampled alike: its first and last elements and random ones.
  absl::StatusOr<std::string> CompareManual(const Check& check, int64_t leaf, const Shape& full,
                                            const Shape& local, const HloSharding& sharding,
                                            const Tolerance& tolerance,
                                            const ReferenceCuts& reference_cuts,
                                            const DeviceCuts& device_cuts, ModularResult& result,
                                            bool* spmd_error) {
    const uint64_t salt = SampleHash(options_.seed ^ HashName(check.what, std::to_string(leaf)));
    NoArguments no_arguments;
    const int64_t n = options_.num_partitions;
    PointEvaluator reference(unpartitioned_, no_arguments, n);
    PointEvaluator devices(spmd_, no_arguments, n);
    reference.set_cuts(&reference_cuts);
    devices.set_cuts(&device_cuts);
    for (PointEvaluator* ev : {&reference, &devices}) {
      ev->set_element_budget(options_.element_budget);
      ev->set_deadline(options_.deadline);
    }
    struct Count {
      const PointEvaluator& a;
      const PointEvaluator& b;
      int64_t& total;
      ~Count() { total += a.memoized_elements() + b.memoized_elements(); }
    } count_work{reference, devices, result.elements};
    for (int64_t d = 0; d < n; ++d) {
      ASSIGN_OR_RETURN(const hlo::ShardRegion region, DeviceRegion(sharding, full, d));
      if (!region.holds_data || region.empty()) continue;
      const std::vector<int64_t> sizes = region.sizes();
      int64_t count = 1;
      for (int64_t size : sizes) count *= size;
      std::vector<int64_t> sample = {0, count - 1};
      for (int64_t k = 0; k < options_.random_samples + options_.per_device_random; ++k) {
        sample.push_back(static_cast<int64_t>(SampleHash(salt + static_cast<uint64_t>(k)) %
                                              static_cast<uint64_t>(count)));
      }
      std::sort(sample.begin(), sample.end());
      sample.erase(std::unique(sample.begin(), sample.end()), sample.end());
      // Each sampled position of the region, in the group's value and in the padded shard.
      std::vector<int64_t> global(sample.size()), mine(sample.size()), index(full.rank());
      for (size_t k = 0; k < sample.size(); ++k) {
        points::Unravel(sample[k], sizes, index.data());
        mine[k] = points::Ravel(index.data(), local.dimensions());
        for (int64_t j = 0; j < full.rank(); ++j) index[j] += region.offsets[j];
        global[k] = points::Ravel(index.data(), full.dimensions());
      }
      ASSIGN_OR_RETURN(Literal expected, reference.Elements(*check.reference, leaf, d, global,
                                                            check.compute_reference));
      absl::StatusOr<Literal> actual =
          devices.Elements(*check.device, leaf, d, mine, check.compute_device);
      if (!actual.ok()) {
        *spmd_error = true;
        return actual.status();
      }
      result.compared += static_cast<int64_t>(sample.size());
      const ArrayComparison compared = CompareArrays(expected, *actual, tolerance);
      if (compared.first_mismatch.empty()) continue;
      points::Unravel(global[compared.first_mismatch[0]], full.dimensions(), index.data());
      return hlo::StrCat(check.what, " (%", check.device->name(), " in %",
                         check.device->parent()->name(), "): device ", d, ", element ",
                         FormatIndex(index), " of its manual value ", full.ToString(),
                         ": expected ", compared.expected_value, ", got ", compared.actual_value,
                         " (", compared.mismatches, " of ", sample.size(),
                         " values differ; rtol ", tolerance.rtol, ", atol ", tolerance.atol, ")");
    }
    return std::string();
  }

  // The unpartitioned module computing in f64, made on first use (null when it cannot be).
  const hlo::HloModule* Wide() {
    if (!wide_tried_) {
      wide_tried_ = true;
      absl::StatusOr<std::unique_ptr<hlo::HloModule>> made = WidenToF64(unpartitioned_);
      if (made.ok()) {
        wide_ = *std::move(made);
        wide_index_ = IndexByName(*wide_);
      }
    }
    return wide_.get();
  }

  const hlo::HloModule& unpartitioned_;
  const hlo::HloModule& spmd_;
  const Resolved& resolved_;
  const ModularVerifyOptions& options_;
  SampledVerifyOptions sampling_;
  bool wide_tried_ = false;
  std::unique_ptr<hlo::HloModule> wide_;
  NameIndex wide_index_;
};

// The sharding `callee`'s parameter `k` is recorded with; null when it has no record (unused).
const HloSharding* ParameterSharding(const Resolved& resolved, const HloComputation& callee,
                                     int64_t k) {
  if (k >= callee.num_parameters()) return nullptr;
  const auto found = resolved.device_cuts.find(callee.parameter_instruction(k));
  return found == resolved.device_cuts.end() ? nullptr : &found->second.sharding;
}

std::string Named(const HloInstruction& instr) { return hlo::StrCat("%", instr.name()); }

// Whether a value of `shape` holds an array (not only tokens).
bool HasData(const Shape& shape) {
  for (int64_t leaf = 0; leaf < shape.leaf_count(); ++leaf) {
    if (points::LeafAt(shape, leaf)->IsArray()) return true;
  }
  return false;
}

// The checks at a control-flow instruction's boundaries: each operand against the layout its
// callee's parameter takes, and the layouts the callee and the caller agree on.
void BoundaryChecks(const Resolved::Value& value, const Resolved& resolved,
                    std::vector<Check>& checks, ModularResult& result) {
  const HloInstruction& original = *value.original;
  const HloInstruction& device = *value.device;
  const HloSharding& sharding = value.origin->sharding;
  auto agree = [&](const HloComputation& callee, const HloSharding* returned) {
    if (returned != nullptr && *returned != sharding) {
      result.mismatches.push_back(hlo::StrCat(
          Named(original), ": %", callee.name(), " returns ", returned->ToString(),
          " but the caller's value is laid out as ", sharding.ToString()));
    }
  };
  auto returned = [&](const HloComputation& callee) -> const HloSharding* {
    const auto found = resolved.return_shardings.find(&callee);
    return found == resolved.return_shardings.end() ? nullptr : &found->second;
  };
  auto operand = [&](int64_t k, const HloSharding* expected) {
    if (expected == nullptr) return;
    checks.push_back({hlo::StrCat("operand ", k, " of ", Named(original)), original.operand(k),
                      false, device.operand(k), false, device.parent(), *expected});
  };
  if (device.opcode() != original.opcode() || device.operand_count() != original.operand_count() ||
      device.called_computations().size() != original.called_computations().size()) {
    result.mismatches.push_back(hlo::StrCat(Named(original), " is held by ", Named(device),
                                            ", a ", hlo::HloOpcodeString(device.opcode()), " of ",
                                            device.operand_count(), " operands calling ",
                                            device.called_computations().size(),
                                            " computations"));
    return;
  }
  // Each callee must be partitioned from the computation the original calls in its place.
  for (size_t c = 0; c < device.called_computations().size(); ++c) {
    const HloComputation& callee = *device.called_computations()[c];
    const std::string& wanted = original.called_computations()[c]->name();
    const auto source = resolved.sources.find(&callee);
    if (source != resolved.sources.end() && source->second != wanted) {
      result.mismatches.push_back(hlo::StrCat(Named(original), ": %", callee.name(),
                                              " is partitioned from %", source->second,
                                              " but the original calls %", wanted, " there"));
    }
  }
  if (original.opcode() == HloOpcode::kWhile) {
    const HloComputation& body = *device.while_body();
    const HloComputation& condition = *device.while_condition();
    for (const HloSharding* state :
         {ParameterSharding(resolved, body, 0), ParameterSharding(resolved, condition, 0)}) {
      if (state != nullptr && *state != sharding) {
        result.mismatches.push_back(hlo::StrCat(Named(original), ": its loop state is laid out as ",
                                                sharding.ToString(), " but a callee takes ",
                                                state->ToString()));
      }
    }
    agree(body, returned(body));
    operand(0, &sharding);
    return;
  }
  static const HloSharding kReplicated = HloSharding::Replicate();
  const bool branches = original.opcode() == HloOpcode::kConditional;
  if (branches) operand(0, &kReplicated);
  for (size_t c = 0; c < device.called_computations().size(); ++c) {
    const HloComputation& callee = *device.called_computations()[c];
    agree(callee, returned(callee));
    if (branches) {
      operand(static_cast<int64_t>(c) + 1, ParameterSharding(resolved, callee, 0));
    } else {
      for (int64_t k = 0; k < device.operand_count(); ++k) {
        operand(k, ParameterSharding(resolved, callee, k));
      }
    }
  }
}

// Every check the records call for.
std::vector<Check> Checks(const Resolved& resolved, ModularResult& result) {
  std::vector<Check> checks;
  for (const Resolved::Value& value : resolved.values) {
    const HloInstruction& original = *value.original;
    const HloOpcode opcode = original.opcode();
    if (opcode == HloOpcode::kParameter) continue;  // Inputs, or checked at the call site.
    if (IsOneOf(opcode, {HloOpcode::kWhile, HloOpcode::kConditional, HloOpcode::kCall})) {
      BoundaryChecks(value, resolved, checks, result);
      continue;
    }
    if (!HasData(original.shape())) {  // A token: what an outfeed or send sends is not seen.
      if (std::any_of(original.operands().begin(), original.operands().end(),
                      [](const HloInstruction* o) { return HasData(o->shape()); })) {
        result.unverified.push_back(hlo::StrCat(Named(original), ": ",
                                                hlo::HloOpcodeString(opcode),
                                                " sends data that is not compared"));
      }
      continue;
    }
    // An instruction sharing its SPMD value with an earlier one (the value's owner) is either
    // computed the same way from the same operands (two sharding custom-calls of one value:
    // the value is computed) or the owner's value itself (a copy of the owner: the value is
    // read, the owner's cut).
    const auto held = resolved.device_cuts.find(value.device);
    const bool shared = held != resolved.device_cuts.end() && held->second.original != &original;
    checks.push_back({Named(original), &original, true, value.device, true,
                      value.device->parent(), value.origin->sharding, /*instruction=*/true,
                      /*or_read=*/shared});
  }
  for (const Resolved::Value& value : resolved.returns) {
    const auto held = resolved.device_cuts.find(value.device);
    if (held != resolved.device_cuts.end() && held->second.original == value.original &&
        held->second.sharding == value.origin->sharding) {
      continue;  // Returned as it is.
    }
    checks.push_back({hlo::StrCat("the return of %", value.device->parent()->name()),
                      value.original, false, value.device, false, value.device->parent(),
                      value.origin->sharding});
  }
  return checks;
}

}  // namespace

std::string ModularResult::ToString() const {
  std::string out;
  for (const std::string& line : mismatches) hlo::StrAppend(&out, "MISMATCH: ", line, "\n");
  for (const std::string& line : unverified) hlo::StrAppend(&out, "not verified: ", line, "\n");
  if (!thinned.empty()) {
    hlo::StrAppend(&out, "checked on one replica of each region (every replica is over the "
                         "element budget): ",
                   thinned.size(), " checks, the first ", thinned.front(), "\n");
  }
  hlo::StrAppend(&out, "modular verification: ", instructions, " instructions and ", boundaries,
                 " boundaries checked on ", compared, " device values (", elements,
                 " elements evaluated); ", mismatches.size(),
                 " mismatch", mismatches.size() == 1 ? "" : "es", ", ", unverified.size(),
                 " not verified\n");
  return out;
}

absl::StatusOr<ModularResult> VerifyModular(const hlo::HloModule& unpartitioned,
                                            const hlo::HloModule& spmd,
                                            absl::Span<const hlo::SpmdOrigin> origins,
                                            const ModularVerifyOptions& options) {
  if (origins.empty()) {
    return absl::InvalidArgumentError(
        "modular verification needs the partitioner's records of where each value comes from");
  }
  // Manual regions are modelled: each manual group's value is cut on its own, and the
  // reference computes as each device (CompareManual); a manual conversion's other side is
  // evaluated from each device's (point_ops_devices.cc).
  if (std::optional<std::string> why =
          PerDeviceReferenceReason(unpartitioned, PerDeviceModel::kManualRegions)) {
    return absl::UnimplementedError(hlo::StrCat(
        "modular verification does not support modules that are in part SPMD programs already (",
        *why, ")"));
  }
  ASSIGN_OR_RETURN(Resolved resolved,
                   Resolve(unpartitioned, spmd, origins, options.seed, options.num_partitions));
  ModularResult result;
  const std::vector<Check> checks = Checks(resolved, result);
  result.boundaries = std::count_if(checks.begin(), checks.end(),
                                    [](const Check& c) { return !c.instruction; });
  Checker checker(unpartitioned, spmd, resolved, options);
  RETURN_IF_ERROR(RunOnLargeStack([&]() -> absl::Status {
    for (const Check& check : checks) {
      if (options.total_element_budget > 0 && result.elements >= options.total_element_budget) {
        result.unverified.push_back(hlo::StrCat(check.what, ": the total element budget (",
                                                options.total_element_budget, ") is spent"));
        continue;
      }
      if (std::chrono::steady_clock::now() > options.deadline) {
        result.unverified.push_back(check.what + ": out of time");
        continue;
      }
      checker.Run(check, result);
    }
    return absl::OkStatus();
  }));
  return result;
}

}  // namespace runtime
