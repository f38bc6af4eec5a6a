// The instruction builder of the SPMD program, shared by the partitioner (PartitionContext)
// and the reshard emitter: it adds named instructions to one per-device computation and knows
// the idioms both need -- scalar constants, the device's partition-id, per-device values looked
// up in a constant table by partition-id, high padding and slicing to a size, sum reducers and
// all-reduces with fresh channel ids.
//
// Names are `base` + a suffix + a number; the number is the instruction's module-wide unique id
// or the builder's own sequence (see NameScheme). Instructions are added in the order the calls
// are made, so two builds that make the same calls print the same program.
#ifndef SPMD_BUILDER_SPMD_BUILDER_H_
#define SPMD_BUILDER_SPMD_BUILDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_module.h"

namespace spmd {

// Hands out module-wide unique channel ids for emitted collectives. Not thread-safe: one
// allocator per module being partitioned.
class ChannelIdAllocator {
 public:
  explicit ChannelIdAllocator(int64_t next = 1) : next_(next) {}
  // An allocator whose first id is above every channel_id already used in `module`.
  static ChannelIdAllocator ForModule(const hlo::HloModule& module);
  int64_t Next() { return next_++; }

 private:
  int64_t next_;
};

// How a builder names what it adds: `base` + `suffix` + a number, the instruction's unique id
// (by_unique_id; the builder's sequence while the computation is outside a module) or the
// builder's sequence. `base` is the opcode's name, or `fixed_base` when that is set (the
// windowed loops' `<prefix>.<n>`).
struct NameScheme {
  std::string suffix;
  bool by_unique_id = false;
  std::string fixed_base;
};

class SpmdBuilder {
 public:
  // Adds to `computation`, taking channel ids from `channel_ids`; both must outlive the builder.
  SpmdBuilder(hlo::HloComputation* computation, ChannelIdAllocator* channel_ids, NameScheme names)
      : computation_(computation), channel_ids_(channel_ids), names_(std::move(names)) {}

  hlo::HloComputation* computation() const { return computation_; }
  ChannelIdAllocator& channel_ids() { return *channel_ids_; }

  // Adds an instruction named after its opcode.
  hlo::HloInstruction* Add(hlo::HloOpcode opcode, hlo::Shape shape,
                           std::vector<hlo::HloInstruction*> operands);
  // Adds a copy of `original` (opcode, attributes, called computations, a name derived from
  // its own) with new operands and shape.
  hlo::HloInstruction* AddClone(const hlo::HloInstruction& original, hlo::Shape shape,
                                std::vector<hlo::HloInstruction*> operands);
  // A name from `base` in this builder's scheme, numbered by its sequence.
  std::string UniqueName(std::string_view base);
  // The builder's sequence, handed between the builders of a computation and the computations
  // it calls so that names stay unique in the module.
  int64_t next_number() const {
    return shared_sequence_ != nullptr ? *shared_sequence_ : next_number_;
  }
  void set_next_number(int64_t next) { sequence() = next; }
  // Numbers from `*sequence` from now on, a sequence shared by the builders of one emitted
  // construct (a loop's outer instructions, body and condition); it must outlive the builder.
  void NumberFrom(int64_t* sequence) { shared_sequence_ = sequence; }
  // Every instruction added from now on is also appended to `*added` (nullptr: none).
  void RecordAddedTo(std::vector<hlo::HloInstruction*>* added) { added_ = added; }

  // A scalar constant of `type` holding `value` (converted as Literal::SetDouble does).
  hlo::HloInstruction* ScalarConstant(hlo::PrimitiveType type, double value);
  // The s32 scalar constant `value`.
  hlo::HloInstruction* S32(int64_t value) {
    return ScalarConstant(hlo::PrimitiveType::kS32, static_cast<double>(value));
  }
  // Zeros of `shape`: a scalar zero constant broadcast to it.
  hlo::HloInstruction* Zeros(const hlo::Shape& shape);
  // The elementwise `opcode` of `a` and `b`, shaped like `a`.
  hlo::HloInstruction* Binary(hlo::HloOpcode opcode, hlo::HloInstruction* a,
                              hlo::HloInstruction* b) {
    return Add(opcode, a->shape(), {a, b});
  }
  // Element `index` of the tuple `tuple`.
  hlo::HloInstruction* GetTupleElement(hlo::HloInstruction* tuple, int64_t index);
  // The u32 partition-id, added on first use. `UsePartitionId` makes `id` (a u32 scalar already
  // in the computation) stand for it: the device's id in a subspace of devices.
  hlo::HloInstruction* PartitionId();
  void UsePartitionId(hlo::HloInstruction* id) { partition_id_ = id; }
  // The `type` scalar table[partition-id]: a constant table, a dynamic-slice of it at
  // partition-id and a reshape to a scalar (in that order).
  hlo::HloInstruction* TableLookup(const std::vector<int64_t>& table, hlo::PrimitiveType type);
  // The s32 scalar table[partition-id], or a constant when all entries agree.
  hlo::HloInstruction* PerDeviceScalar(const std::vector<int64_t>& table);
  // The pred scalar table[partition-id] == 1.
  hlo::HloInstruction* PerDeviceFlag(const std::vector<int64_t>& table);
  // `value` on the devices whose `keeps` entry is 1, elsewhere `fill` (a scalar of its type;
  // null: zero) broadcast: select(broadcast(PerDeviceFlag(keeps)), value, fill).
  hlo::HloInstruction* KeepOnDevices(hlo::HloInstruction* value, const std::vector<int64_t>& keeps,
                                     hlo::HloInstruction* fill = nullptr);

  // `value` padded at the high end with zeros to `dims` (`value` itself when it has them).
  hlo::HloInstruction* PadHigh(hlo::HloInstruction* value, const std::vector<int64_t>& dims);
  // The leading `dims` of `value` (`value` itself when it has them).
  hlo::HloInstruction* SliceTo(hlo::HloInstruction* value, const std::vector<int64_t>& dims);
  // Positions [start, limit) of `value` along `dim` (every other dim whole).
  hlo::HloInstruction* SliceAlong(hlo::HloInstruction* value, int64_t dim, int64_t start,
                                  int64_t limit);
  // A dynamic-slice of `size` elements of `value` along `dim` from the s32 scalar `start` (and
  // from 0 along every other dim; one zero constant is added for them, before the slice).
  hlo::HloInstruction* SliceDim(hlo::HloInstruction* value, int64_t dim, hlo::HloInstruction* start,
                                int64_t size);
  // `base` with `update` written into it along `dim` from `start` (0 along every other dim).
  hlo::HloInstruction* UpdateDim(hlo::HloInstruction* base, hlo::HloInstruction* update,
                                 int64_t dim, hlo::HloInstruction* start);

  // The scalar add (or maximum, minimum: `op`) computation for `type`, added to the
  // computation's module once (found by name when another builder added it).
  absl::StatusOr<hlo::HloComputation*> AddReducer(hlo::PrimitiveType type,
                                                  hlo::ReductionOp op = hlo::ReductionOp::kSum);
  // An all-reduce summing `value` over `groups` (new channel, global device ids); with `op`,
  // taking the maximum or minimum instead.
  absl::StatusOr<hlo::HloInstruction*> AllReduceSum(hlo::HloInstruction* value,
                                                    hlo::ReplicaGroups groups,
                                                    hlo::ReductionOp op = hlo::ReductionOp::kSum);
  // A reduce-scatter summing `value` over groups of `group_size` devices along `dim`, each
  // device keeping the block of its index in its group; `dim` padded at the high end with zeros
  // to a multiple of `group_size` first.
  absl::StatusOr<hlo::HloInstruction*> ReduceScatterSum(hlo::HloInstruction* value,
                                                        hlo::ReplicaGroups groups,
                                                        int64_t group_size, int64_t dim);
  // A reducing collective (all-reduce, reduce-scatter) of `value` to `shape` over `groups`
  // combining with `reducer`, on a new channel with global device ids.
  hlo::HloInstruction* ReducingCollective(hlo::HloOpcode opcode, hlo::Shape shape,
                                          hlo::HloInstruction* value, hlo::ReplicaGroups groups,
                                          hlo::HloComputation* reducer);
  // An all-gather of `operands` along `dim` over `groups` of `group_size` devices each (one
  // operand: its array; several: a tuple, one collective for all of them), on a new channel with
  // global device ids.
  hlo::HloInstruction* AllGather(std::vector<hlo::HloInstruction*> operands, int64_t dim,
                                 hlo::ReplicaGroups groups, int64_t group_size);
  // A collective-permute of `value` (shaped like it) along `pairs` (source, target), on a new
  // channel.
  hlo::HloInstruction* CollectivePermute(hlo::HloInstruction* value,
                                         std::vector<std::pair<int64_t, int64_t>> pairs);

 private:
  int64_t& sequence() { return shared_sequence_ != nullptr ? *shared_sequence_ : next_number_; }
  // Per-dim start indices of a `rank` array: `start` at `dim`, one s32 zero elsewhere.
  std::vector<hlo::HloInstruction*> StartsAt(int64_t rank, int64_t dim, hlo::HloInstruction* start);

  hlo::HloComputation* computation_;
  ChannelIdAllocator* channel_ids_;
  NameScheme names_;
  int64_t next_number_ = 0;
  int64_t* shared_sequence_ = nullptr;
  std::vector<hlo::HloInstruction*>* added_ = nullptr;
  hlo::HloInstruction* partition_id_ = nullptr;
  std::map<std::pair<hlo::PrimitiveType, hlo::ReductionOp>, hlo::HloComputation*> reducers_;
};

// Whether every entry of `table` is the same (a per-device value that is a constant).
bool IsUniform(const std::vector<int64_t>& table);

// A `like`-typed array of `dims`, with the default layout when `like` has a layout (as in
// modules parsed from XLA's text), without one otherwise.
hlo::Shape WithDims(const hlo::Shape& like, const std::vector<int64_t>& dims);

}  // namespace spmd

#endif  // SPMD_BUILDER_SPMD_BUILDER_H_
