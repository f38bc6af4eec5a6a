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
// builder's sequence.
struct NameScheme {
  std::string suffix;
  bool by_unique_id = false;
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
  int64_t next_number() const { return next_number_; }
  void set_next_number(int64_t next) { next_number_ = next; }
  // Every instruction added from now on is also appended to `*added` (nullptr: none).
  void RecordAddedTo(std::vector<hlo::HloInstruction*>* added) { added_ = added; }

  // A scalar constant of `type` holding `value` (converted as Literal::SetDouble does).
  hlo::HloInstruction* ScalarConstant(hlo::PrimitiveType type, double value);
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

  // `value` padded at the high end with zeros to `dims` (`value` itself when it has them).
  hlo::HloInstruction* PadHigh(hlo::HloInstruction* value, const std::vector<int64_t>& dims);
  // The leading `dims` of `value` (`value` itself when it has them).
  hlo::HloInstruction* SliceTo(hlo::HloInstruction* value, const std::vector<int64_t>& dims);

  // The scalar add computation for `type`, added to the computation's module once (found by
  // name when another builder added it).
  absl::StatusOr<hlo::HloComputation*> AddReducer(hlo::PrimitiveType type);
  // An all-reduce summing `value` over `groups` (new channel, global device ids).
  absl::StatusOr<hlo::HloInstruction*> AllReduceSum(hlo::HloInstruction* value,
                                                    hlo::ReplicaGroups groups);

 private:
  hlo::HloComputation* computation_;
  ChannelIdAllocator* channel_ids_;
  NameScheme names_;
  int64_t next_number_ = 0;
  std::vector<hlo::HloInstruction*>* added_ = nullptr;
  hlo::HloInstruction* partition_id_ = nullptr;
  std::map<hlo::PrimitiveType, hlo::HloComputation*> reducers_;
};

// Whether every entry of `table` is the same (a per-device value that is a constant).
bool IsUniform(const std::vector<int64_t>& table);

// A `like`-typed array of `dims`, with the default layout when `like` has a layout (as in
// modules parsed from XLA's text), without one otherwise.
hlo::Shape WithDims(const hlo::Shape& like, const std::vector<int64_t>& dims);

}  // namespace spmd

#endif  // SPMD_BUILDER_SPMD_BUILDER_H_
