// Walking the array leaves of tuple-shaped values. Leaves are visited in flattened order
// (depth first, element 0 first), which is also the order of a tuple sharding's elements and
// of a module's output files.
#ifndef RUNTIME_COMMON_TUPLE_LEAVES_H_
#define RUNTIME_COMMON_TUPLE_LEAVES_H_

#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/literal.h"

namespace runtime {

// The index of every non-tuple leaf of `shape`, in flattened order; `{{}}` for a non-tuple.
std::vector<hlo::ShapeIndex> LeafIndices(const hlo::Shape& shape);

// The sub-shape / sub-literal at `index`. REQUIRES: `index` is valid for the value.
const hlo::Shape& LeafShape(const hlo::Shape& shape, const hlo::ShapeIndex& index);
const hlo::Literal& LeafOf(const hlo::Literal& literal, const hlo::ShapeIndex& index);
hlo::Literal& MutableLeafOf(hlo::Literal& literal, const hlo::ShapeIndex& index);

// `base` for the empty index, else `base {1,0}`.
std::string LeafName(std::string_view base, const hlo::ShapeIndex& index);

// `base` for the empty index, else `base_1_0` (for file names).
std::string LeafFileStem(std::string_view base, const hlo::ShapeIndex& index);

}  // namespace runtime

#endif  // RUNTIME_COMMON_TUPLE_LEAVES_H_
