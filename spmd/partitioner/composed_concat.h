// A concatenate built from pieces of the values its operands are windows of.
//
// Along the concatenated dimension d an operand is often a window of another value x: a slice
// of it, an edge pad of it, or unary elementwise ops (negate, convert, ...) of those, through
// copies. Partitioned one op at a time, each slice or pad moves its own halo and the
// concatenate moves halos again for each operand. Composed, operand k covers result positions
// [offset_k, offset_k + size_k), which are x's positions from start_k (outside [0, N_x): the
// pad's value), so every result block knows which positions of x it needs: it fetches exactly
// those from x's shards (split like the result along d), every operand's pieces packed into
// shared rounds of collective-permutes (window_pieces.h), writes them into one buffer per
// operand, fills the pad positions, applies the operand's elementwise ops and selects each
// operand's range. XLA's rotate-right and pad-with-wrap patterns (jnp.roll, circular padding)
// are such concatenates:
//
//   %a = f32[2] slice(f32[12] %x), slice={[10:12]}      (each split 4 ways: shards of 3)
//   %b = f32[10] slice(%x), slice={[0:10]}
//   %r = f32[12] concatenate(%a, %b), dimensions={0}     r[i] = x[(i + 10) mod 12]
//   => every device receives its left neighbour's last 2 elements, the last device's going to
//      the first: one collective-permute.
#ifndef SPMD_PARTITIONER_COMPOSED_CONCAT_H_
#define SPMD_PARTITIONER_COMPOSED_CONCAT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/sharding/hlo_sharding.h"
#include "spmd/partitioner/candidate_cost.h"
#include "spmd/partitioner/partition_context.h"
#include "spmd/partitioner/window_pieces.h"

namespace spmd {

// One operand of the concatenate as a window of its source along d.
struct ConcatSegment {
  const hlo::HloInstruction* source = nullptr;
  int64_t offset = 0;  // The result position of the operand's first element.
  int64_t size = 0;
  int64_t start = 0;  // The source position of the operand's first element (may be < 0).
  // The pad's value for positions outside [0, N_source), when the chain passes an edge pad.
  const hlo::HloInstruction* fill = nullptr;
  // Unary elementwise ops applied to the window, innermost first.
  std::vector<const hlo::HloInstruction*> modifiers;
};

// The pieces of one source, packed into rounds.
struct SourcePieces {
  const hlo::HloInstruction* source = nullptr;
  std::vector<Piece> pieces;
  std::vector<int64_t> segment;      // Per piece: the operand it fills.
  std::vector<int64_t> destination;  // Per piece: its first position in the receiver's block.
  std::vector<FetchRound> rounds;
};

struct ComposedConcat {
  int64_t dim = 0;
  int64_t tiles = 1;
  int64_t block = 0;  // Os: result positions per block along dim.
  std::vector<ConcatSegment> segments;
  std::vector<SourcePieces> sources;
};

// The plan that builds a result of `m` positions along `d`, split `tiles` ways, from
// `segments`; nullopt when a source or the result has no positions.
std::optional<ComposedConcat> PlanFromSegments(std::vector<ConcatSegment> segments, int64_t d,
                                               int64_t tiles, int64_t m);

// The composed plan of `concatenate` in `sharding` (tiled, split along the concatenated dim),
// or nullopt when no operand is a window of another value.
std::optional<ComposedConcat> PlanComposedConcat(const hlo::HloInstruction& concatenate,
                                                 const hlo::HloSharding& sharding);

// What the plan costs a device: each source resharded to `sharding`, then its remote rounds.
Received ComposedConcatCost(const ComposedConcat& plan, const hlo::HloSharding& sharding,
                            PartitionContext& ctx);

// Each device's block, in `sharding`, of the result (of `result_shape`) the plan builds.
absl::StatusOr<hlo::HloInstruction*> EmitComposedConcat(const ComposedConcat& plan,
                                                        const hlo::Shape& result_shape,
                                                        const hlo::HloSharding& sharding,
                                                        PartitionContext& ctx);

}  // namespace spmd

#endif  // SPMD_PARTITIONER_COMPOSED_CONCAT_H_
