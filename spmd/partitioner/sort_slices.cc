#include "spmd/partitioner/sort_slices.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/analysis/combiner.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/sharding/sharding_transforms.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "spmd/partitioner/preprocess_util.h"

namespace spmd {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::Shape;

// A sort's readers: for each result (one per operand), the slices reading it and the
// get-tuple-element between (null for a single-operand sort).
struct Readers {
  std::vector<HloInstruction*> gtes;                 // Per result; null when none or unused.
  std::vector<std::vector<HloInstruction*>> slices;  // Per result.
};

// Whether `instr` can be removed or re-created: nothing orders it and it is not a root.
bool Free(const HloInstruction& instr, const absl::flat_hash_set<const HloInstruction*>& ordering) {
  return instr.control_predecessors().empty() && !ordering.contains(&instr) &&
         instr.parent()->root_instruction() != &instr;
}

// Appends `value`'s users to `slices` when every one is a removable slice.
bool AllSlices(const HloInstruction& value,
               const absl::flat_hash_set<const HloInstruction*>& ordering,
               std::vector<HloInstruction*>& slices) {
  for (HloInstruction* user : value.users()) {
    // A slice may be the root (it is re-created as the root); nothing may order it.
    if (user->opcode() != HloOpcode::kSlice || !user->control_predecessors().empty() ||
        ordering.contains(user)) {
      return false;
    }
    slices.push_back(user);
  }
  return true;
}

std::optional<Readers> ReadersOf(const HloInstruction& sort,
                                 const absl::flat_hash_set<const HloInstruction*>& ordering) {
  Readers readers;
  const int64_t results = sort.operand_count();
  readers.gtes.assign(results, nullptr);
  readers.slices.resize(results);
  if (!sort.shape().IsTuple()) {
    if (!AllSlices(sort, ordering, readers.slices[0])) return std::nullopt;
    return readers;
  }
  for (HloInstruction* user : sort.users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement || !Free(*user, ordering)) {
      return std::nullopt;
    }
    const int64_t i = user->tuple_index();
    if (readers.gtes[i] != nullptr ||
        !AllSlices(*user, ordering, readers.slices[i])) {  // Two GTEs of one result: left alone.
      return std::nullopt;
    }
    readers.gtes[i] = user;
  }
  return readers;
}

// What the slices read: per dim, the hull [lo, hi) of their positions; along the sort dim
// [0, K).
struct Hull {
  std::vector<int64_t> lo, hi;
};

Hull HullOf(const Readers& readers, const Shape& shape, int64_t sort_dim) {
  Hull hull;
  hull.lo.assign(shape.rank(), std::numeric_limits<int64_t>::max());
  hull.hi.assign(shape.rank(), 0);
  for (const auto& slices : readers.slices) {
    for (const HloInstruction* slice : slices) {
      for (int64_t d = 0; d < shape.rank(); ++d) {
        const hlo::SliceDimension& s = slice->attrs().slice_dimensions[d];
        hull.lo[d] = std::min(hull.lo[d], s.start);
        hull.hi[d] = std::max(hull.hi[d], s.limit);
      }
    }
  }
  hull.lo[sort_dim] = 0;
  return hull;
}

// The tiles `sharding` cuts `dim` into (1 unless tiled).
int64_t TilesAlong(const std::optional<HloSharding>& sharding, int64_t dim) {
  if (!sharding.has_value() || !sharding->IsTiled()) return 1;
  return sharding->tile_assignment().dim(dim);
}

std::optional<HloSharding> ShardingOf(const HloInstruction& instr) {
  if (!instr.has_sharding()) return std::nullopt;
  return instr.sharding();
}

// `shape` cut to the hull along every dim but `sort_dim`.
Shape NarrowedShape(const Shape& shape, const Hull& hull, int64_t sort_dim) {
  std::vector<int64_t> dims = shape.dimensions();
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (d != sort_dim) dims[d] = hull.hi[d] - hull.lo[d];
  }
  return Shape::Array(shape.element_type(), dims);
}

// `sharding` for a slice of shape `narrowed`: dims cut below their tile count are replicated.
absl::StatusOr<std::optional<HloSharding>> NarrowedSharding(
    const std::optional<HloSharding>& sharding, const Shape& narrowed) {
  std::vector<int64_t> replicated;
  for (int64_t d = 0; d < narrowed.rank(); ++d) {
    if (narrowed.dimensions(d) < TilesAlong(sharding, d)) replicated.push_back(d);
  }
  if (replicated.empty()) return sharding;
  ASSIGN_OR_RETURN(HloSharding s, hlo::PartiallyReplicate(*sharding, replicated));
  return std::optional<HloSharding>(std::move(s));
}

// Whether `operand` holds its position along `dim`: an iota along `dim`, or a broadcast of an
// iota whose dim lands on `dim`, of a 32- or 64-bit integer type that holds every position (a
// narrower one wraps, and shifted positions would not order as the wrapped ones do).
bool PositionsAlong(const HloInstruction& operand, int64_t dim) {
  const hlo::PrimitiveType type = operand.shape().element_type();
  if (type != hlo::PrimitiveType::kS32 && type != hlo::PrimitiveType::kU32 &&
      type != hlo::PrimitiveType::kS64 && type != hlo::PrimitiveType::kU64) {
    return false;
  }
  if (operand.opcode() == HloOpcode::kIota) return operand.attrs().iota_dimension == dim;
  if (operand.opcode() != HloOpcode::kBroadcast) return false;
  const HloInstruction& iota = *operand.operand(0);
  return iota.opcode() == HloOpcode::kIota &&
         operand.dimensions()[iota.attrs().iota_dimension] == dim;
}

// Whether `comparator` reads its operand `i` (parameters 2i and 2i+1) only by comparing the
// two with each other: the order it gives is then the same when every such value is shifted
// by one constant.
bool ComparedOnlyWithEachOther(const hlo::HloComputation& comparator, int64_t i) {
  const HloInstruction* lhs = comparator.parameter_instruction(2 * i);
  const HloInstruction* rhs = comparator.parameter_instruction(2 * i + 1);
  if (lhs == nullptr || rhs == nullptr) return false;
  for (const HloInstruction* param : {lhs, rhs}) {
    for (const HloInstruction* user : param->users()) {
      if (user->opcode() != HloOpcode::kCompare || user->operand_count() != 2) return false;
      const bool pair = (user->operand(0) == lhs && user->operand(1) == rhs) ||
                        (user->operand(0) == rhs && user->operand(1) == lhs);
      if (!pair) return false;
    }
  }
  return true;
}

// The shape of the blocks a sort along `dim` of `shape` runs in, `tiles` of them.
Shape BlockShape(const Shape& shape, int64_t dim, int64_t tiles) {
  std::vector<int64_t> dims = shape.dimensions();
  dims[dim] /= tiles;
  dims.insert(dims.begin() + dim, tiles);
  return Shape::Array(shape.element_type(), dims);
}

// One sort's rewrite (file comment): its operands and their shape as they are rewritten, and
// the new instructions.
class SortRewrite {
 public:
  SortRewrite(HloInstruction& sort, FreshNames& names)
      : sort_(sort), computation_(*sort.parent()), names_(names), name_(sort.name()) {}

  // The instructions added so far, in order.
  const std::vector<HloInstruction*>& added() const { return added_; }

  // The operands sliced to `hull` along the other dims, each keeping its sharding with the dims
  // narrowed below their tile count replicated (NarrowedSharding).
  absl::Status Narrow(const Hull& hull, int64_t sort_dim) {
    for (int64_t i = 0; i < sort_.operand_count(); ++i) {
      HloInstruction* operand = sort_.operand(i);
      const Shape shape = NarrowedShape(operand->shape(), hull, sort_dim);
      ASSIGN_OR_RETURN(std::optional<HloSharding> sharding,
                       NarrowedSharding(ShardingOf(*operand), shape));
      HloInstruction* sliced = Made(AddLike(computation_, HloOpcode::kSlice, shape, {operand},
                                            sort_, sharding, names_.Fresh(name_ + ".narrowed")));
      for (int64_t d = 0; d < shape.rank(); ++d) {
        const int64_t lo = d == sort_dim ? 0 : hull.lo[d];
        sliced->mutable_attrs()->slice_dimensions.push_back({lo, lo + shape.dimensions(d), 1});
      }
      operands_.push_back(sliced);
    }
    return absl::OkStatus();
  }

  void KeepOperands() {
    for (int64_t i = 0; i < sort_.operand_count(); ++i) {
      operands_.push_back(sort_.operand(i));
    }
  }

  // Each device sorts its block of `tiles` along `dim` and keeps the first `k`; `blocked` is
  // the first operand's sharding, which splits `dim` `tiles` ways. Leaves the candidates,
  // t*k along `dim`, as the operands of the final sort, whose sharding is `blocked` with `dim`
  // replicated. An operand that holds its position along `dim` and that the comparator only
  // compares with itself (`positions`) is an iota within each block, and its kept values are
  // shifted by the block's start: each device makes its own, and adds the offset to k values
  // per row, not to its whole block.
  absl::Status SortBlocks(int64_t dim, int64_t tiles, int64_t k, const HloSharding& blocked,
                          const HloSharding& block_sharding, const std::vector<bool>& positions) {
    const Shape& shape = operands_[0]->shape();
    const std::vector<int64_t> block_dims = BlockShape(shape, dim, tiles).dimensions();
    std::vector<int64_t> kept_dims = block_dims;
    kept_dims[dim + 1] = k;
    std::vector<int64_t> candidate_dims = shape.dimensions();
    candidate_dims[dim] = tiles * k;
    std::vector<HloInstruction*> blocks;
    std::vector<Shape> block_shapes;
    for (size_t i = 0; i < operands_.size(); ++i) {
      block_shapes.push_back(Shape::Array(operands_[i]->shape().element_type(), block_dims));
      const std::string name = names_.Fresh(name_ + ".blocks");
      HloInstruction* block = positions[i]
                                  ? AddLike(computation_, HloOpcode::kIota, block_shapes.back(), {},
                                            sort_, block_sharding, name)
                                  : AddLike(computation_, HloOpcode::kReshape, block_shapes.back(),
                                            {operands_[i]}, sort_, block_sharding, name);
      if (positions[i]) block->mutable_attrs()->iota_dimension = dim + 1;
      blocks.push_back(Made(block));
    }
    HloInstruction* sorted = Sort(blocks, block_shapes, dim + 1, block_sharding, ".blocks");
    std::vector<HloInstruction*> candidates;
    for (size_t i = 0; i < blocks.size(); ++i) {
      const Shape kept_shape = Shape::Array(block_shapes[i].element_type(), kept_dims);
      HloInstruction* kept = Made(AddLike(computation_, HloOpcode::kSlice, kept_shape,
                                          {Leaf(sorted, i, block_sharding)}, sort_, block_sharding,
                                          names_.Fresh(name_ + ".kept")));
      for (int64_t d = 0; d < static_cast<int64_t>(kept_dims.size()); ++d) {
        kept->mutable_attrs()->slice_dimensions.push_back({0, kept_dims[d], 1});
      }
      if (positions[i])
        kept = BlockStartsAdded(kept, dim, shape.dimensions(dim) / tiles, block_sharding);
      candidates.push_back(
          Made(AddLike(computation_, HloOpcode::kReshape,
                       Shape::Array(kept_shape.element_type(), candidate_dims), {kept}, sort_,
                       blocked, names_.Fresh(name_ + ".candidates"))));
    }
    operands_ = std::move(candidates);
    ASSIGN_OR_RETURN(HloSharding merged, hlo::PartiallyReplicate(blocked, {dim}));
    final_sharding_ = std::move(merged);
    return absl::OkStatus();
  }

  // The final sort of the operands along `dim`, and the slices re-created on it at positions
  // shifted by `hull.lo`; removes the old sort, its get-tuple-elements and slices.
  absl::Status Finish(const Readers& readers, const Hull& hull, int64_t dim, const char* suffix) {
    if (!final_sharding_.has_value() && sort_.has_sharding()) {
      final_sharding_ =
          sort_.sharding().IsTuple() ? sort_.sharding().tuple_elements().front() : sort_.sharding();
    }
    std::vector<Shape> shapes;
    for (const HloInstruction* operand : operands_) shapes.push_back(operand->shape());
    HloInstruction* sorted = Sort(operands_, shapes, dim, final_sharding_, suffix);
    for (size_t i = 0; i < operands_.size(); ++i) {
      HloInstruction* leaf = nullptr;
      for (HloInstruction* slice : readers.slices[i]) {
        if (leaf == nullptr) leaf = Leaf(sorted, i, final_sharding_);
        RETURN_IF_ERROR(Recreate(*slice, leaf, hull));
      }
      if (readers.gtes[i] != nullptr)
        RETURN_IF_ERROR(computation_.RemoveInstruction(readers.gtes[i]));
    }
    return computation_.RemoveInstruction(&sort_);
  }

 private:
  // `kept` + (its block index along `dim`) * `block`.
  HloInstruction* BlockStartsAdded(HloInstruction* kept, int64_t dim, int64_t block,
                                   const HloSharding& sharding) {
    const Shape& shape = kept->shape();
    HloInstruction* index = Made(AddLike(computation_, HloOpcode::kIota, shape, {}, sort_, sharding,
                                         names_.Fresh(name_ + ".block")));
    index->mutable_attrs()->iota_dimension = dim;
    const Shape scalar = Shape::Array(shape.element_type(), {});
    HloInstruction* size =
        Made(AddLike(computation_, HloOpcode::kConstant, scalar, {}, sort_,
                     HloSharding::Replicate(), names_.Fresh(name_ + ".block_size")));
    hlo::Literal literal(scalar);
    literal.SetInt(0, block);
    size->mutable_attrs()->literal = std::move(literal);
    HloInstruction* sizes = Made(AddLike(computation_, HloOpcode::kBroadcast, shape, {size}, sort_,
                                         sharding, names_.Fresh(name_ + ".block_size")));
    HloInstruction* starts = Made(AddLike(computation_, HloOpcode::kMultiply, shape, {index, sizes},
                                          sort_, sharding, names_.Fresh(name_ + ".block_start")));
    return Made(AddLike(computation_, HloOpcode::kAdd, shape, {kept, starts}, sort_, sharding,
                        names_.Fresh(name_ + ".indices")));
  }

  HloInstruction* Made(HloInstruction* instr) {
    added_.push_back(instr);
    return instr;
  }

  HloInstruction* Sort(const std::vector<HloInstruction*>& operands,
                       const std::vector<Shape>& shapes, int64_t dim,
                       const std::optional<HloSharding>& leaf, const char* suffix) {
    const bool tuple = operands.size() > 1;
    std::optional<HloSharding> sharding = leaf;
    const Shape shape = tuple ? Shape::Tuple(shapes) : shapes[0];
    if (tuple && leaf.has_value()) sharding = HloSharding::SingleTuple(shape, *leaf);
    HloInstruction* sorted = Made(AddLike(computation_, HloOpcode::kSort, shape, operands, sort_,
                                          sharding, names_.Fresh(name_ + suffix)));
    sorted->mutable_attrs()->dimensions = {dim};
    sorted->mutable_attrs()->is_stable = true;  // See the file comment.
    sorted->AppendCalledComputation(sort_.to_apply());
    return sorted;
  }

  // Result `i` of `sorted`: the sort itself when it has one operand.
  HloInstruction* Leaf(HloInstruction* sorted, size_t i, const std::optional<HloSharding>& leaf) {
    if (!sorted->shape().IsTuple()) return sorted;
    HloInstruction* gte =
        Made(AddLike(computation_, HloOpcode::kGetTupleElement, sorted->shape().tuple_shapes()[i],
                     {sorted}, sort_, leaf, names_.Fresh(name_ + ".result")));
    gte->mutable_attrs()->tuple_index = static_cast<int64_t>(i);
    return gte;
  }

  // `slice` again, on `leaf`, which holds the hull of what it read.
  absl::Status Recreate(HloInstruction& slice, HloInstruction* leaf, const Hull& hull) {
    std::vector<hlo::SliceDimension> window = slice.attrs().slice_dimensions;
    for (size_t d = 0; d < window.size(); ++d) {
      window[d].start -= hull.lo[d];
      window[d].limit -= hull.lo[d];
    }
    const std::string name = slice.name();  // A copy: `slice` is removed below.
    HloInstruction* again = AddLike(computation_, HloOpcode::kSlice, slice.shape(), {leaf}, slice,
                                    ShardingOf(slice), names_.Fresh(name + ".again"));
    again->mutable_attrs()->slice_dimensions = std::move(window);
    slice.ReplaceAllUsesWith(again);
    if (computation_.root_instruction() == &slice) computation_.set_root_instruction(again);
    RETURN_IF_ERROR(computation_.RemoveInstruction(&slice));
    again->set_name(name);
    return absl::OkStatus();
  }

  HloInstruction& sort_;
  hlo::HloComputation& computation_;
  FreshNames& names_;
  const std::string name_;
  std::vector<HloInstruction*> operands_;
  std::optional<HloSharding> final_sharding_;
  std::vector<HloInstruction*> added_;
};

// How `sort` is narrowed ("" when it is not), and the rewrite done.
absl::StatusOr<std::string> NarrowOne(HloInstruction& sort, const Readers& readers,
                                      FreshNames& names,
                                      absl::flat_hash_set<const HloInstruction*>& added) {
  const int64_t dim = sort.dimensions()[0];
  const Shape& shape = sort.operand(0)->shape();
  const Hull hull = HullOf(readers, shape, dim);
  bool narrowed = false;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (d == dim) continue;
    if (hull.lo[d] >= hull.hi[d]) return std::string();  // No slice reads anything.
    narrowed = narrowed || hull.lo[d] > 0 || hull.hi[d] < shape.dimensions(d);
  }
  // Everything is decided before anything is added.
  const Shape sorted_shape = NarrowedShape(shape, hull, dim);
  ASSIGN_OR_RETURN(std::optional<HloSharding> first,
                   NarrowedSharding(ShardingOf(*sort.operand(0)), sorted_shape));
  const int64_t n = shape.dimensions(dim);
  const int64_t k = hull.hi[dim];
  const int64_t tiles =
      first.has_value() && !first->HasManualSubgroup() ? TilesAlong(first, dim) : 1;
  std::optional<HloSharding> block_sharding;
  if (tiles > 1 && n % tiles == 0 && k > 0 && k < n / tiles && k * (tiles - 1) < n / tiles &&
      hlo::IsStrictWeakOrder(*sort.to_apply())) {
    absl::StatusOr<HloSharding> s =
        hlo::ReshapeSharding(*first, sorted_shape, BlockShape(sorted_shape, dim, tiles));
    if (s.ok()) block_sharding = *std::move(s);
  }
  if (!narrowed && !block_sharding.has_value()) return std::string();
  SortRewrite rewrite(sort, names);
  if (narrowed) {
    RETURN_IF_ERROR(rewrite.Narrow(hull, dim));
  } else {
    rewrite.KeepOperands();
  }
  std::string how = narrowed ? "sorted only the rows its slices read" : "";
  if (block_sharding.has_value()) {
    std::vector<bool> positions;
    for (int64_t i = 0; i < sort.operand_count(); ++i) {
      positions.push_back(PositionsAlong(*sort.operand(i), dim) &&
                          ComparedOnlyWithEachOther(*sort.to_apply(), i));
    }
    RETURN_IF_ERROR(rewrite.SortBlocks(dim, tiles, k, *first, *block_sharding, positions));
    how = hlo::StrCat(how, how.empty() ? "" : ", ", "sorted in ", tiles, " blocks of ", n / tiles,
                      ", the first ", k, " of each merged");
  }
  RETURN_IF_ERROR(
      rewrite.Finish(readers, hull, dim, block_sharding.has_value() ? ".merge" : ".narrowed"));
  added.insert(rewrite.added().begin(), rewrite.added().end());
  return how;
}

}  // namespace

absl::StatusOr<std::vector<NarrowedSort>> NarrowSlicedSorts(
    hlo::HloComputation& computation, absl::flat_hash_set<const HloInstruction*>& added) {
  const absl::flat_hash_set<const HloInstruction*> ordering = OrderingInstructions(computation);
  std::vector<std::pair<HloInstruction*, Readers>> sorts;
  for (const std::unique_ptr<HloInstruction>& instr : computation.instructions()) {
    if (instr->opcode() != HloOpcode::kSort || instr->dimensions().size() != 1 ||
        instr->operand_count() == 0 || !instr->operand(0)->shape().IsArray() ||
        instr->called_computations().size() != 1 || !Free(*instr, ordering)) {
      continue;
    }
    if (std::optional<Readers> readers = ReadersOf(*instr, ordering)) {
      sorts.push_back({instr.get(), *std::move(readers)});
    }
  }
  std::vector<NarrowedSort> narrowed;
  if (sorts.empty() || computation.parent() == nullptr) return narrowed;
  FreshNames names(*computation.parent());
  for (auto& [sort, readers] : sorts) {
    const std::string name = sort->name();
    ASSIGN_OR_RETURN(std::string how, NarrowOne(*sort, readers, names, added));
    if (!how.empty()) narrowed.push_back({name, how});
  }
  return narrowed;
}

}  // namespace spmd
