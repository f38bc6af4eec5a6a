// State shared by the partitioner's handlers while one computation is partitioned.
//
// Every original instruction maps to a PartitionedValue: its per-device instruction in the SPMD
// computation (shaped as the padded shard of `sharding`), the sharding, and the original (full)
// shape. Handlers never reshard by hand: they ask `GetInSharding(operand, S)` for an operand in
// the sharding they need, and the context plans and emits the cheapest reshard once per
// (operand, sharding).
#ifndef SPMD_PARTITIONER_PARTITION_CONTEXT_H_
#define SPMD_PARTITIONER_PARTITION_CONTEXT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "hlo/analysis/constant_dims.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/sharding/spmd_origin.h"
#include "spmd/builder/spmd_builder.h"
#include "spmd/partitioner/partitioner_options.h"
#include "spmd/reshard/reshard_emitter.h"
#include "spmd/reshard/reshard_planner.h"

namespace spmd {

struct PartitionedValue {
  hlo::HloInstruction* value = nullptr;  // Per-device instruction in the SPMD computation.
  hlo::HloSharding sharding = hlo::HloSharding::Replicate();  // How the value is laid out.
  hlo::Shape base_shape;                 // The original (unpartitioned) shape.
};

// Totals reported in statistics and the explanation log.
struct PartitionLog {
  int64_t full_rematerializations = 0;
  // Instructions whose sharding splits them but that were computed whole on every device (no
  // strategy for that sharding), and the bytes of their full results.
  int64_t replicated_fallbacks = 0;
  int64_t replicated_fallback_bytes = 0;
  std::vector<std::string> lines;  // One line per reshard decision (--explain).
  // With PartitionerOptions::record_origins: each partitioned computation's value records, its
  // instructions in post order, then its return record (hlo/sharding/spmd_origin.h).
  std::vector<hlo::SpmdOrigin> origins;
  // Instructions the partitioner's preprocessing added to the module it partitions
  // (conv_as_dot.h): the unpartitioned module has none of them, so no origin record names them.
  absl::flat_hash_set<const hlo::HloInstruction*> preprocessed;
  bool keep_lines = true;          // PartitionerOptions::explain: whether to build them.
};

// A dot strategy decision with its --explain table, shared by every dot that poses the same
// problem (defined in dot_handler.cc).
struct CachedDotDecision;

// What decides a dot's strategy, compared by value (filled by dot_handler.cc): the operand and
// result shapes (layouts cleared), the lhs, rhs and wanted shardings, the dimension numbers, the
// device model's name, the other shardings each operand already exists in and how many dots
// share each operand's reshard.
struct DotProblemKey {
  std::vector<hlo::Shape> shapes;
  std::vector<hlo::HloSharding> shardings;
  hlo::DotDimensionNumbers dimension_numbers;
  std::string device_model;
  std::vector<hlo::HloSharding> lhs_available, rhs_available;
  std::vector<int64_t> sharers;  // DotProblem::lhs_sharers and rhs_sharers.

  friend bool operator==(const DotProblemKey& a, const DotProblemKey& b) {
    return a.shapes == b.shapes && a.shardings == b.shardings &&
           a.dimension_numbers == b.dimension_numbers && a.device_model == b.device_model &&
           a.lhs_available == b.lhs_available && a.rhs_available == b.rhs_available &&
           a.sharers == b.sharers;
  }
  template <typename H>
  friend H AbslHashValue(H h, const DotProblemKey& k) {
    for (const hlo::Shape& shape : k.shapes) {
      h = H::combine(std::move(h), static_cast<int>(shape.element_type()), shape.dimensions());
    }
    const hlo::DotDimensionNumbers& dn = k.dimension_numbers;
    return H::combine(std::move(h), k.shardings, dn.lhs_batch_dimensions, dn.rhs_batch_dimensions,
                      dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions, k.device_model,
                      k.lhs_available, k.rhs_available, k.sharers);
  }
};

class PartitionContext {
 public:
  PartitionContext(hlo::HloComputation* output, int64_t num_devices, ReshardPlanner* planner,
                   ChannelIdAllocator* channel_ids, PartitionLog* log,
                   const PartitionerOptions* options)
      : output_(output),
        num_devices_(num_devices),
        planner_(planner),
        channel_ids_(channel_ids),
        log_(log),
        options_(options),
        builder_(output, channel_ids, {".spmd", /*by_unique_id=*/false}),
        emitter_(output, channel_ids) {}
  // A context for `output`, a computation called by this one's (a loop body, a branch): same
  // devices, planner, channels, log and options; names continue this context's sequence so
  // they stay unique in the module.
  PartitionContext(hlo::HloComputation* output, PartitionContext& caller)
      : PartitionContext(output, caller.num_devices_, caller.planner_, caller.channel_ids_,
                         caller.log_, caller.options_) {
    builder_.set_next_number(caller.builder_.next_number());
  }

  int64_t num_devices() const { return num_devices_; }
  hlo::HloComputation* output() const { return output_; }
  ChannelIdAllocator& channel_ids() { return *channel_ids_; }
  ReshardPlanner& planner() { return *planner_; }
  const PartitionerOptions& options() const { return *options_; }
  PartitionLog& log() { return *log_; }
  // Dot decisions by problem key (shapes, shardings, dimension numbers), for this run.
  absl::flat_hash_map<DotProblemKey, std::shared_ptr<const CachedDotDecision>>& dot_decisions() {
    return dot_decisions_;
  }
  // The scalar add computation for `type` (created once per module), for all-reduce and
  // reduce-scatter of sums.
  absl::StatusOr<hlo::HloComputation*> AddReducer(hlo::PrimitiveType type) {
    return builder_.AddReducer(type);
  }
  // An all-reduce (new channel, global device ids) summing `value` over each of `groups`.
  absl::StatusOr<hlo::HloInstruction*> AllReduceSum(
      hlo::HloInstruction* value, const std::vector<std::vector<int64_t>>& groups);
  // A reduce-scatter summing `value` over each of `groups` along `dim` (padded to whole
  // blocks), each device keeping the block of its index in its group.
  absl::StatusOr<hlo::HloInstruction*> ReduceScatterSum(
      hlo::HloInstruction* value, const std::vector<std::vector<int64_t>>& groups, int64_t dim);

  // Records that `original`, wanted in the split `sharding`, is computed whole on every device
  // because of `reason`: counted and logged, or (PartitionerOptions::strict) an error.
  absl::Status RecordFallback(const hlo::HloInstruction& original, const hlo::HloSharding& sharding,
                              std::string_view reason);

  // The partitioned form of an already partitioned original instruction.
  absl::StatusOr<const PartitionedValue*> Get(const hlo::HloInstruction* original) const;
  void Set(const hlo::HloInstruction* original, PartitionedValue value);

  // The per-device value of `original` laid out as `sharding` (resharding and caching as
  // needed; tuples leaf by leaf).
  absl::StatusOr<hlo::HloInstruction*> GetInSharding(const hlo::HloInstruction* original,
                                                     const hlo::HloSharding& sharding);
  // The shardings other than its own in which `original` already exists (earlier reshards):
  // asking for it in one of them again moves nothing.
  const std::vector<hlo::HloSharding>& ReshardedShardings(
      const hlo::HloInstruction* original) const;
  // Reshards a value that is not (or no longer) tied to an original instruction.
  absl::StatusOr<hlo::HloInstruction*> Reshard(hlo::HloInstruction* value,
                                               const hlo::Shape& base_shape,
                                               const hlo::HloSharding& from,
                                               const hlo::HloSharding& to);

  // Whether `instr` was made to bring a global value into manual subgroups (each device's tile
  // of it, ReshardManual): its collectives may combine devices of different groups, which
  // hold the same global value.
  bool EntersManualGroups(const hlo::HloInstruction* instr) const {
    return entering_.contains(instr);
  }

  // The planner's plan for resharding an array of `shape` from `from` to `to`, as Reshard
  // would emit it; inside manual subgroups, one group's plan (the same in each).
  absl::StatusOr<std::shared_ptr<const ReshardPlan>> PlanReshard(const hlo::Shape& shape,
                                                                 const hlo::HloSharding& from,
                                                                 const hlo::HloSharding& to);

  // The iota `original` laid out as `sharding` (replicated, or tiled with replicated subgroups
  // only): a local iota plus each device's offset along the iota dim (of rank > 1: a 1-D iota,
  // shifted and converted, then broadcast, as XLA does). nullptr for other
  // shardings and for element types other than integral and floating-point.
  absl::StatusOr<hlo::HloInstruction*> LocalIota(const hlo::HloInstruction& original,
                                                 const hlo::HloSharding& sharding);
  // `original` computed again in `to` (rebuild.h, RebuildAgainUs) where `pv` reaches `to` by a
  // local slice and the rebuild's work is no more than the slice's: the whole value is then not
  // held for this user. nullptr when that does not apply.
  absl::StatusOr<hlo::HloInstruction*> RebuildInsteadOfSlice(const hlo::HloInstruction* original,
                                                             const PartitionedValue& pv,
                                                             const hlo::HloSharding& to);
  // `original` computed again in `to` (rebuild.h), with an origin record for the value it makes
  // (a second home of `original`, which the modular verifier cuts like the first).
  absl::StatusOr<hlo::HloInstruction*> RebuildRecorded(const hlo::HloInstruction* original,
                                                       const hlo::HloSharding& to);
  // `pv` (the value of `original`) resharded to `to` when `original` is constant along dims
  // that either sharding splits (hlo::ConstantAlongDims: a broadcast's new dims): one element
  // along them is resharded with them replicated, then broadcast to `to`'s shard; the copies
  // along those dims never move. nullptr when that does not apply.
  absl::StatusOr<hlo::HloInstruction*> ReshardAlongConstantDims(const hlo::HloInstruction& original,
                                                                const PartitionedValue& pv,
                                                                const hlo::HloSharding& to);

  // The builder of the SPMD computation, for the idioms PartitionContext does not forward.
  SpmdBuilder& builder() { return builder_; }
  // Adds an instruction to the SPMD computation (SpmdBuilder::Add; names `<opcode>.spmdN`).
  hlo::HloInstruction* Add(hlo::HloOpcode opcode, hlo::Shape shape,
                           std::vector<hlo::HloInstruction*> operands) {
    return builder_.Add(opcode, std::move(shape), std::move(operands));
  }
  // Adds a copy of `original` (opcode, attributes, called computations, a derived name) with
  // new operands and shape.
  hlo::HloInstruction* AddClone(const hlo::HloInstruction& original, hlo::Shape shape,
                                std::vector<hlo::HloInstruction*> operands) {
    return builder_.AddClone(original, std::move(shape), std::move(operands));
  }
  // An s32 scalar holding `table[partition-id]` (a constant when all entries agree).
  hlo::HloInstruction* PerDeviceScalar(const std::vector<int64_t>& table);
  hlo::HloInstruction* ScalarConstant(hlo::PrimitiveType type, double value) {
    return builder_.ScalarConstant(type, value);
  }
  // Each device's shard bounds along `dim` under `sharding` for an array of `shape`: the
  // offsets (or, with `limits`, the ends) of the devices' regions; 0 for devices the sharding
  // does not use (they hold nothing, and what they compute is never read).
  std::vector<int64_t> ShardBounds(const hlo::HloSharding& sharding, const hlo::Shape& shape,
                                   int64_t dim, bool limits = false) const;
  // The integer scalar `index` as s32, clamped to [0, max_start] (as dynamic-slice and
  // dynamic-update-slice clamp their starts).
  hlo::HloInstruction* ClampedIndex(hlo::HloInstruction* index, int64_t max_start);
  // Replaces elements of the padded shard `value` that lie beyond `base_shape`'s end (along
  // any dimension `sharding` splits unevenly) by the scalar `fill` (null: zeros, made only
  // when needed). Returns `value` when no dimension is padded.
  absl::StatusOr<hlo::HloInstruction*> MaskPadding(hlo::HloInstruction* value,
                                                   const hlo::Shape& base_shape,
                                                   const hlo::HloSharding& sharding,
                                                   hlo::HloInstruction* fill = nullptr);
  // pred[dims of `like`]: lo <= origin + i < hi, where i is the index along `dim` (computed
  // along `dim` and broadcast over the others); origin, lo and hi are s32 scalars. Masks by
  // global position: origin is the device's offset of its block along `dim`.
  hlo::HloInstruction* PositionInRange(const hlo::Shape& like, int64_t dim,
                                       hlo::HloInstruction* origin, hlo::HloInstruction* lo,
                                       hlo::HloInstruction* hi);
  // One bound of PositionsInRanges.
  struct PositionRange {
    int64_t dim;
    hlo::HloInstruction* origin;
    hlo::HloInstruction* lo;
    hlo::HloInstruction* hi;
  };
  // pred[dims of `like`]: PositionInRange for every range at once. Each range is computed along
  // its dim alone and the ranges are combined over only the dims they name (pred[n1, n2] for
  // two), then broadcast over the others: the work is that of the named dims, not of `like`.
  // REQUIRES: `ranges` non-empty, one per dim.
  hlo::HloInstruction* PositionsInRanges(const hlo::Shape& like, std::vector<PositionRange> ranges);
  // Reshards into, out of or inside manual regions (manual and manual-subgroup shardings):
  // replicated or group-whole values become manual values as they are; a global value enters
  // manual subgroups as each device's tile; inside subgroups the reshard is planned per group
  // (reshard_grouped.h). Anything else is an error naming the manual custom-calls.
  absl::StatusOr<hlo::HloInstruction*> ReshardManual(hlo::HloInstruction* value,
                                                     const hlo::Shape& base_shape,
                                                     const hlo::HloSharding& from,
                                                     const hlo::HloSharding& to);
  // Before a reshard from `from` to `to`: the dims whose data lies in their first k of t
  // tiles with 2k < t (a size-1 dim split 8 ways, k = 1), and that `to` splits into fewer
  // tiles, are replicated by one masked all-reduce (SumDataTiles) instead of all-gathers of
  // mostly padding (the reshard then slices); a dim with data in the first of 2 tiles joins.
  // Replaces `value` and returns its new sharding (`from` when nothing applies).
  absl::StatusOr<hlo::HloSharding> ReplicateDataTileDims(hlo::HloInstruction*& value,
                                                        const hlo::Shape& base_shape,
                                                        const hlo::HloSharding& from,
                                                        const hlo::HloSharding& to);
  // One dim of an array `size` long, tiled into shards of `shard`, data in its first `tiles`.
  struct DataTiles {
    int64_t dim, shard, tiles, size;
  };
  // `value` (tiled by `sharding`) whole along every dim of `dims` on every device: each data
  // tile's holders place their shard at its offset in zeros, the others contribute zeros, and
  // a sum over each group along those dims assembles it; the padding is cut off.
  absl::StatusOr<hlo::HloInstruction*> SumDataTiles(hlo::HloInstruction* value,
                                                    const hlo::HloSharding& sharding,
                                                    const std::vector<DataTiles>& dims);
  // Reshards a tuple value leaf by leaf (get-tuple-element, reshard, tuple).
  absl::StatusOr<hlo::HloInstruction*> ReshardTuple(hlo::HloInstruction* value,
                                                    const hlo::Shape& base_shape,
                                                    const hlo::HloSharding& from,
                                                    const hlo::HloSharding& to);
  // A name unique in the SPMD computation, derived from `base`.
  std::string UniqueName(std::string_view base) { return builder_.UniqueName(base); }
  // Hands the name sequence back to the caller's context (see the second constructor).
  void ReturnNamesTo(PartitionContext& caller) const {
    caller.builder_.set_next_number(builder_.next_number());
  }

 private:
  hlo::HloComputation* output_;
  int64_t num_devices_;
  ReshardPlanner* planner_;
  ChannelIdAllocator* channel_ids_;
  PartitionLog* log_;
  const PartitionerOptions* options_;
  // The handlers' instructions; the reshards' have their own builder in the emitter (names
  // `.rs<unique id>` and a partition-id of their own).
  SpmdBuilder builder_;
  // One emitter for the whole computation: unique names and one partition-id.
  ReshardEmitter emitter_;
  absl::flat_hash_map<const hlo::HloInstruction*, PartitionedValue> values_;
  // Cache of resharded per-device values by (original, sharding).
  absl::flat_hash_map<std::pair<const hlo::HloInstruction*, hlo::HloSharding>,
                      hlo::HloInstruction*>
      resharded_;
  absl::flat_hash_map<const hlo::HloInstruction*, std::vector<hlo::HloSharding>> resharded_to_;
  absl::flat_hash_map<DotProblemKey, std::shared_ptr<const CachedDotDecision>> dot_decisions_;
  // The instructions that brought global values into manual subgroups (EntersManualGroups).
  absl::flat_hash_set<const hlo::HloInstruction*> entering_;
  // hlo::ConstantAlongDims of the originals resharded so far (ReshardAlongConstantDims).
  hlo::ConstantDimsMemo constant_dims_;
};

// The lowest of `num_devices` devices that tiled `sharding` does not name (a sharding over some
// of the devices: that device holds nothing), or nullopt.
std::optional<int64_t> FirstUnnamedDevice(const hlo::HloSharding& sharding, int64_t num_devices);

// Whether every device holds the whole value (its shard shape is the full shape): replicated,
// maximal-free tilings whose data dims are all 1 (e.g. manual subgroups over whole values),
// and {manual}.
bool IsWholeOnEveryDevice(const hlo::HloSharding& sharding);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_PARTITION_CONTEXT_H_
