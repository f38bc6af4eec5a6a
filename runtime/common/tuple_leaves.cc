// Depth-first leaf enumeration and index-path access.
#include "runtime/common/tuple_leaves.h"

#include "hlo/strings.h"

namespace runtime {
namespace {

void CollectLeaves(const hlo::Shape& shape, hlo::ShapeIndex& prefix,
                   std::vector<hlo::ShapeIndex>& out) {
  if (!shape.IsTuple()) {
    out.push_back(prefix);
    return;
  }
  for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
    prefix.push_back(i);
    CollectLeaves(shape.tuple_shapes(i), prefix, out);
    prefix.pop_back();
  }
}

}  // namespace

std::vector<hlo::ShapeIndex> LeafIndices(const hlo::Shape& shape) {
  std::vector<hlo::ShapeIndex> out;
  hlo::ShapeIndex prefix;
  CollectLeaves(shape, prefix, out);
  return out;
}

const hlo::Shape& LeafShape(const hlo::Shape& shape, const hlo::ShapeIndex& index) {
  const hlo::Shape* s = &shape;
  for (int64_t i : index) s = &s->tuple_shapes(i);
  return *s;
}

const hlo::Literal& LeafOf(const hlo::Literal& literal, const hlo::ShapeIndex& index) {
  const hlo::Literal* l = &literal;
  for (int64_t i : index) l = &l->tuple_elements()[i];
  return *l;
}

hlo::Literal& MutableLeafOf(hlo::Literal& literal, const hlo::ShapeIndex& index) {
  hlo::Literal* l = &literal;
  for (int64_t i : index) l = &(*l->mutable_tuple_elements())[i];
  return *l;
}

std::string LeafName(std::string_view base, const hlo::ShapeIndex& index) {
  if (index.empty()) return std::string(base);
  std::string out = hlo::StrCat(base, " {");
  for (size_t i = 0; i < index.size(); ++i) hlo::StrAppend(&out, i ? "," : "", index[i]);
  return out + "}";
}

std::string LeafFileStem(std::string_view base, const hlo::ShapeIndex& index) {
  std::string out(base);
  for (int64_t i : index) hlo::StrAppend(&out, "_", i);
  return out;
}

}  // namespace runtime
