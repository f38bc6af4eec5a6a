// Shape inference for the collectives: all-reduce, all-gather, reduce-scatter, all-to-all and
// collective-permute. Group sizes (`shard_count`, `split_count`) are computed by the caller
// (InferShape reads them from replica_groups or the module config).
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/ir/shape_inference.h"
#include "hlo/ir/shape_inference_internal.h"
#include "hlo/status_macros.h"

namespace hlo {

using shape_inference_internal::ExpectArray;
using shape_inference_internal::InvalidArg;
using shape_inference_internal::ShapeStr;
using shape_inference_internal::VerifyBinaryScalarReducer;

namespace {

// The single shape, or a tuple of all of them.
Shape ShapeOrTuple(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return shapes[0];
  return Shape::Tuple(std::move(shapes));
}

// Applies `resize` to `dimension` of every operand; the operands must be arrays of rank >
// `dimension`.
template <typename Resize>
absl::StatusOr<Shape> ResizeDimension(std::string_view op, absl::Span<const Shape* const> operands,
                                      int64_t dimension, Resize resize) {
  if (operands.empty()) return InvalidArg(op, ": expected at least one operand");
  std::vector<Shape> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Shape& s = *operands[i];
    RETURN_IF_ERROR(ExpectArray(op, absl::StrCat("operand ", i), s));
    if (dimension < 0 || dimension >= s.rank()) {
      return InvalidArg(op, ": dimension ", dimension, " is out of range for operand ", i, " ",
                        ShapeStr(s));
    }
    Shape result = s;
    result.clear_layout();
    ASSIGN_OR_RETURN(int64_t size, resize(i, s.dimensions(dimension)));
    result.set_dimension(dimension, size);
    results.push_back(std::move(result));
  }
  return ShapeOrTuple(std::move(results));
}

std::vector<PrimitiveType> ElementTypes(absl::Span<const Shape* const> shapes) {
  std::vector<PrimitiveType> types;
  for (const Shape* s : shapes) types.push_back(s->element_type());
  return types;
}

}  // namespace

absl::StatusOr<Shape> InferAllReduceShape(absl::Span<const Shape* const> operands,
                                          const ProgramShape& to_apply) {
  if (operands.empty()) return InvalidArg("all-reduce: expected at least one operand");
  std::vector<Shape> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    RETURN_IF_ERROR(ExpectArray("all-reduce", absl::StrCat("operand ", i), *operands[i]));
    results.push_back(*operands[i]);
  }
  RETURN_IF_ERROR(VerifyBinaryScalarReducer("all-reduce", to_apply, ElementTypes(operands)));
  return ShapeOrTuple(std::move(results));
}

absl::StatusOr<Shape> InferAllGatherShape(absl::Span<const Shape* const> operands,
                                          int64_t dimension, int64_t shard_count) {
  if (shard_count <= 0) return InvalidArg("all-gather: shard count must be positive");
  return ResizeDimension(
      "all-gather", operands, dimension,
      [&](size_t, int64_t size) -> absl::StatusOr<int64_t> { return size * shard_count; });
}

absl::StatusOr<Shape> InferReduceScatterShape(absl::Span<const Shape* const> operands,
                                              int64_t dimension, int64_t shard_count,
                                              const ProgramShape& to_apply) {
  if (shard_count <= 0) return InvalidArg("reduce-scatter: shard count must be positive");
  RETURN_IF_ERROR(VerifyBinaryScalarReducer("reduce-scatter", to_apply, ElementTypes(operands)));
  return ResizeDimension("reduce-scatter", operands, dimension,
                         [&](size_t i, int64_t size) -> absl::StatusOr<int64_t> {
                           if (size % shard_count != 0) {
                             return InvalidArg("reduce-scatter: operand ", i, " dimension ",
                                               dimension, " has size ", size,
                                               ", not divisible by the shard count ", shard_count);
                           }
                           return size / shard_count;
                         });
}

absl::StatusOr<Shape> InferAllToAllShape(absl::Span<const Shape* const> operands,
                                         std::optional<int64_t> split_dimension,
                                         int64_t split_count) {
  if (operands.empty()) return InvalidArg("all-to-all: expected at least one operand");
  if (!split_dimension.has_value()) {
    std::vector<Shape> results;
    for (size_t i = 0; i < operands.size(); ++i) {
      if (!operands[i]->Compatible(*operands[0])) {
        return InvalidArg("all-to-all: operand ", i, " ", ShapeStr(*operands[i]),
                          " differs from operand 0 ", ShapeStr(*operands[0]));
      }
      results.push_back(*operands[i]);
    }
    return Shape::Tuple(std::move(results));
  }
  if (operands.size() != 1) {
    return InvalidArg("all-to-all: the array form (with dimensions) takes one operand, got ",
                      operands.size());
  }
  const Shape& s = *operands[0];
  RETURN_IF_ERROR(ExpectArray("all-to-all", "operand", s));
  const int64_t d = *split_dimension;
  if (d < 0 || d >= s.rank()) {
    return InvalidArg("all-to-all: split dimension ", d, " is out of range for ", ShapeStr(s));
  }
  if (split_count <= 0 || s.dimensions(d) % split_count != 0) {
    return InvalidArg("all-to-all: split dimension ", d, " has size ", s.dimensions(d),
                      ", not divisible by the split count ", split_count);
  }
  return s;
}

absl::StatusOr<Shape> InferCollectivePermuteShape(
    absl::Span<const Shape* const> operands, absl::Span<const std::pair<int64_t, int64_t>> pairs) {
  absl::flat_hash_set<int64_t> sources, targets;
  // The in-place form (4 operands) may read and write several slices per device.
  const bool in_place = operands.size() == 4;
  for (const auto& [source, target] : pairs) {
    if (source < 0 || target < 0) {
      return InvalidArg("collective-permute: negative id in pair {", source, ",", target, "}");
    }
    if (in_place) continue;
    if (!sources.insert(source).second) {
      return InvalidArg("collective-permute: source ", source, " appears more than once");
    }
    if (!targets.insert(target).second) {
      return InvalidArg("collective-permute: target ", target, " appears more than once");
    }
  }
  if (operands.size() == 1) {
    RETURN_IF_ERROR(ExpectArray("collective-permute", "operand", *operands[0]));
    return *operands[0];
  }
  if (operands.size() == 4) return *operands[1];
  // The combined form permutes each operand the same way and returns them as a tuple.
  std::vector<Shape> elements;
  for (const Shape* operand : operands) {
    RETURN_IF_ERROR(ExpectArray("collective-permute", "operand", *operand));
    elements.push_back(*operand);
  }
  if (elements.empty()) return InvalidArg("collective-permute: expected at least one operand");
  return Shape::Tuple(std::move(elements));
}

}  // namespace hlo
