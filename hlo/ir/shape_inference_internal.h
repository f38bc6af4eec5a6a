// Helpers shared by the shape_inference_*.cc files. Not part of the public API: include
// hlo/ir/shape_inference.h instead.
#ifndef HLO_IR_SHAPE_INFERENCE_INTERNAL_H_
#define HLO_IR_SHAPE_INFERENCE_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/shape.h"

namespace hlo {
namespace shape_inference_internal {

// Passes absl::StrCat arguments through, converting std::string_view (which this absl build
// does not alias to absl::string_view).
template <typename T>
const T& StrArg(const T& value) {
  return value;
}
inline absl::string_view StrArg(std::string_view value) {
  return absl::string_view(value.data(), value.size());
}

// absl::StrCat that also accepts std::string_view.
template <typename... Args>
std::string Cat(const Args&... args) {
  return absl::StrCat(StrArg(args)...);
}

// InvalidArgument whose message is Cat(args...).
template <typename... Args>
absl::Status InvalidArg(const Args&... args) {
  return absl::InvalidArgumentError(Cat(args...));
}

// `shape` in HLO text without layout, e.g. "f32[2,3]".
std::string ShapeStr(const Shape& shape);
// "{1,2,3}".
std::string DimsStr(absl::Span<const int64_t> dims);
// Name of an element type, e.g. "f32".
std::string TypeStr(PrimitiveType type);

// Error "`op`: `what` must be an array, got SHAPE" unless `shape` is an array.
absl::Status ExpectArray(std::string_view op, std::string_view what, const Shape& shape);
// Error unless `shape` is an array of rank 0.
absl::Status ExpectScalar(std::string_view op, std::string_view what, const Shape& shape);
bool IsScalar(const Shape& shape);
bool SameDimensions(const Shape& a, const Shape& b);
// A rank-0 array of `type`.
Shape Scalar(PrimitiveType type);
// `shape` with its element type replaced (dimensions, dynamism kept; layout dropped).
Shape WithElementType(const Shape& shape, PrimitiveType type);

// Error unless every entry of `dims` is in [0, rank) and no entry repeats; with `sorted`, also
// unless they ascend. `what` names the list, e.g. "dimensions".
absl::Status CheckDimensionList(std::string_view op, std::string_view what,
                                absl::Span<const int64_t> dims, int64_t rank, bool sorted = false);
// Whether `dims` is a permutation of 0..rank-1.
bool IsPermutation(absl::Span<const int64_t> dims, int64_t rank);

// Checks that `reducer` reduces N = `init_values.size()` accumulators with N inputs whose
// element types are `input_types`: 2N scalar parameters, result a scalar (N == 1) or an N-tuple
// of scalars, parameter i and result i of init value i's shape, parameter N+i of input type i.
absl::Status VerifyReducerShape(std::string_view op, const ProgramShape& reducer,
                                absl::Span<const Shape* const> init_values,
                                absl::Span<const PrimitiveType> input_types);

// A scalar (T, T) -> T reducer for all of `element_types` (all-reduce, reduce-scatter).
absl::Status VerifyBinaryScalarReducer(std::string_view op, const ProgramShape& reducer,
                                       absl::Span<const PrimitiveType> element_types);

// "Type A is wider than B": complex > floating > integral > pred, then more bits. Used where
// XLA picks the higher-precision type of two inputs.
PrimitiveType WiderType(PrimitiveType a, PrimitiveType b);

}  // namespace shape_inference_internal
}  // namespace hlo

#endif  // HLO_IR_SHAPE_INFERENCE_INTERNAL_H_
