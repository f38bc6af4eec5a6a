// The random values that stand in for recorded values in modular verification
// (modular_verify.h): a pure function of (seed, the original instruction, element index), laid
// out on each device by the record's sharding, with garbage in uneven shards' padding. A
// manual value is one array per manual group (per device when fully manual), so its states
// mix the group in.
#ifndef RUNTIME_CPU_MODULAR_CUTS_H_
#define RUNTIME_CPU_MODULAR_CUTS_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hlo/analysis/iota_pieces.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/literal.h"
#include "hlo/sharding/hlo_sharding.h"

namespace runtime {
namespace modular {

// The random value standing in for one original instruction's value.
struct CutValue {
  const hlo::HloInstruction* original;  // In the unpartitioned module.
  hlo::HloSharding sharding;            // Its layout on the devices.
  uint64_t stream;
  // False for a value the partitioner may rebuild wherever it is used instead of resharding
  // it: one fixed by the program (constants and what is computed from them alone) and a
  // broadcast (made again from its operand in a consumer's shape). Such a value keeps its
  // true value on both sides, computed from its operands' (Rebuildable).
  bool cut = true;
  // The dims along which the original's value does not vary (hlo::ConstantAlongDims: a
  // broadcast's new dims and what elementwise ops keep of them). The partitioner may rely on
  // that (it reshards such a value by moving one element along them), so the random value
  // standing in for it is constant along them too: a value the original could have.
  std::vector<int64_t> constant_dims;
  // The parts of the original's value that are iotas (an index array's batch positions beside
  // computed indices; hlo::IotaPieces): the partitioner may rely on them (it splits the operand
  // dims they address like batch dims), so the stand-in keeps their true values there.
  std::vector<hlo::IotaPiece> iota_pieces;
  // A manual value's manual groups that must hold one value (empty: none), as the class each
  // group belongs to (its lowest group): devices whose manual values SPMDShardToFullShape
  // places in one region of a global value must agree (the conversion reads the first), so
  // their stand-ins agree too (AgreeingGroups).
  std::vector<int64_t> agree;
  // A global value in a manual layout: it entered the manual groups through an op that
  // forwards it (a Sharding custom-call naming the groups), so every group holds the global
  // value, and its manual leaves stand in with the global value's elements.
  bool global = false;
};

// Whether the partitioner may rebuild `instr`'s value wherever it is used instead of resharding
// it (a broadcast, or a value fixed by the program text: computed from constants and iotas
// alone); `fixed` memoizes.
bool Rebuildable(const hlo::HloInstruction& instr,
                 absl::flat_hash_map<const hlo::HloInstruction*, bool>& fixed);

// Whether leaf sharding `s` is manual on every device or has manual subgroups.
bool IsManual(const hlo::HloSharding& s);
bool IsManualLeaf(const CutValue& cut, int64_t leaf);

// The classes of manual groups of `source`'s value (manual leaf sharding `sharding` on
// `num_devices` devices) that must agree: those whose values an SPMDShardToFullShape reading
// it (through ops that forward their operand) places in one region. Empty when none must.
std::vector<int64_t> AgreeingGroups(const hlo::HloInstruction& source,
                                    const hlo::HloSharding& sharding, int64_t num_devices);

// Device `device`'s elements `indices` of manual leaf `leaf` of `cut`, whole: its manual
// group's value (what the reference computes as that device).
absl::Status FillManual(const CutValue& cut, int64_t leaf, int64_t device,
                        absl::Span<const int64_t> indices, hlo::Literal& out);
// Device `device`'s elements `indices` of its padded shard (shaped `local`) of leaf `leaf`: of
// the one value, or of its manual group's when the leaf is manual.
absl::Status FillShard(const CutValue& cut, const hlo::Shape& local, int64_t leaf, int64_t device,
                       absl::Span<const int64_t> indices, hlo::Literal& out);
// The full value's elements `indices`, drawn in the original's type (then widened when `out`
// is the f64 reference's).
void FillFull(const CutValue& cut, int64_t leaf, absl::Span<const int64_t> indices,
              hlo::Literal& out);

}  // namespace modular
}  // namespace runtime

#endif  // RUNTIME_CPU_MODULAR_CUTS_H_
