// Opcode semantics of the point evaluator (point_evaluator.h). Data movement (transpose, slice,
// pad, ...) maps each asked element to one operand element (or a zero); arithmetic gathers the
// operand elements it needs into small arrays and runs the CPU executor's handler on a
// synthetic instruction over them (elementwise ops on [n], a dot on [n,K] x [n,K], a reduce
// over [n,R], a sort over [rows,S], a topk over [rows,N]). Collectives and manual conversions
// are in point_ops_devices.cc.
#include "runtime/cpu/point_ops.h"

#include <algorithm>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "hlo/ir/primitive_type.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/collective_groups.h"
#include "runtime/common/opcode_table.h"
#include "runtime/common/strided_index.h"
#include "runtime/common/strided_view.h"
#include "runtime/common/tuple_leaves.h"
#include "runtime/cpu/evaluator.h"
#include "runtime/cpu/ops/manual_ops.h"
#include "runtime/cpu/point_elements.h"
#include "runtime/cpu/point_evaluator.h"

namespace runtime {
namespace points {

int64_t LeafOffset(const hlo::Shape& shape, int64_t element) {
  int64_t offset = 0;
  for (int64_t i = 0; i < element; ++i) offset += shape.tuple_shapes(i).leaf_count();
  return offset;
}

const hlo::Shape* LeafAt(const hlo::Shape& shape, int64_t leaf) {
  if (!shape.IsTuple()) return leaf == 0 ? &shape : nullptr;
  for (const hlo::Shape& element : shape.tuple_shapes()) {
    const int64_t count = element.leaf_count();
    if (leaf < count) return LeafAt(element, leaf);
    leaf -= count;
  }
  return nullptr;
}

absl::StatusOr<const hlo::Shape*> FlatLeafShape(const hlo::HloInstruction& instr, int64_t leaf) {
  const hlo::Shape* shape = LeafAt(instr.shape(), leaf);
  if (shape == nullptr) {
    return absl::InternalError(
        hlo::StrCat("sampled evaluation: %", instr.name(), " has no leaf ", leaf));
  }
  if (!shape->IsArray() || hlo::ByteWidth(shape->element_type()) > 8) {
    return absl::UnimplementedError(
        hlo::StrCat("sampled evaluation does not support values of type ", shape->ToString(false),
                    " (%", instr.name(), ")"));
  }
  return shape;
}

}  // namespace points

namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::Shape;
using Frame = PointEvaluator::Frame;
using points::AsMatrix;
using points::AsScalar;
using points::Source;
using points::Synthetic;
using points::Unsupported;

// The rows along `dim` that asked elements lie in: `indices` index a value of dims `dims`, and
// a row is named by its start in an operand of dims `operand_dims` (which differ at most at
// `dim`), in first-asked order; `where` gives each element's (row, position along dim).
struct AskedRows {
  std::vector<int64_t> starts;
  std::vector<std::pair<int64_t, int64_t>> where;
};

AskedRows RowsOf(absl::Span<const int64_t> indices, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& operand_dims, int64_t dim) {
  AskedRows asked;
  absl::flat_hash_map<int64_t, int64_t> row_of;
  asked.where.resize(indices.size());
  std::vector<int64_t> operand_strides = RowMajorStrides(operand_dims);
  operand_strides[dim] = 0;  // A row's start: the position along `dim` dropped.
  points::MultiIndexWalk walk(dims);
  int64_t last_start = -1;  // Consecutive elements mostly share a row: looked up once.
  int64_t last_row = -1;
  for (size_t e = 0; e < indices.size(); ++e) {
    const int64_t* i = walk.To(indices[e]);
    int64_t start = 0;
    for (size_t d = 0; d < dims.size(); ++d) start += i[d] * operand_strides[d];
    if (start != last_start) {
      auto [it, inserted] = row_of.try_emplace(start, static_cast<int64_t>(asked.starts.size()));
      if (inserted) asked.starts.push_back(start);
      last_start = start;
      last_row = it->second;
    }
    asked.where[e] = {last_row, i[dim]};
  }
  return asked;
}

// The operand indices of the rows starting at `starts`, `length` elements `stride` apart each.
std::vector<int64_t> RowIndices(const std::vector<int64_t>& starts, int64_t length,
                                int64_t stride) {
  std::vector<int64_t> out;
  out.reserve(starts.size() * length);
  for (int64_t start : starts) {
    for (int64_t p = 0; p < length; ++p) out.push_back(start + p * stride);
  }
  return out;
}

// The elements `where` (row, position) of `result`, rows of `width` elements.
Literal PickFromRows(const Literal& result, const std::vector<std::pair<int64_t, int64_t>>& where,
                     int64_t width) {
  const hlo::PrimitiveType type = result.shape().element_type();
  const int bytes = hlo::ByteWidth(type);
  Literal out(Shape::Array(type, {static_cast<int64_t>(where.size())}));
  for (size_t e = 0; e < where.size(); ++e) {
    points::SetBits(out, static_cast<int64_t>(e), bytes,
                    points::BitsAt(result, where[e].first * width + where[e].second, bytes));
  }
  return out;
}

bool IsPointElementwise(const HloInstruction& instr) {
  return hlo::IsElementwise(instr) || instr.opcode() == HloOpcode::kMap;
}

}  // namespace

absl::StatusOr<Literal> PointEvaluator::Compute(const HloInstruction& instr, int64_t leaf,
                                                const Frame* frame,
                                                absl::Span<const int64_t> indices) {
  return PointOps::Compute(*this, instr, leaf, frame, indices);
}

absl::StatusOr<Literal> PointOps::Fetch(PointEvaluator& ev, hlo::PrimitiveType type,
                                        const std::vector<Source>& sources) {
  const int width = hlo::ByteWidth(type);
  Literal out(Shape::Array(type, {static_cast<int64_t>(sources.size())}));
  absl::flat_hash_map<PointEvaluator::MemoKey, std::vector<int64_t>> groups;
  std::vector<PointEvaluator::MemoKey> order;
  const Source* previous = nullptr;  // Runs of sources share a value: hashed once per run.
  std::vector<int64_t>* group = nullptr;
  for (size_t i = 0; i < sources.size(); ++i) {
    const Source& s = sources[i];
    if (s.instr == nullptr) continue;
    if (previous == nullptr || s.instr != previous->instr || s.leaf != previous->leaf ||
        s.frame != previous->frame) {
      auto [it, inserted] = groups.try_emplace({s.instr, s.leaf, s.frame});
      if (inserted) order.push_back(it->first);
      group = &it->second;
      previous = &s;
    }
    group->push_back(static_cast<int64_t>(i));
  }
  for (const PointEvaluator::MemoKey& key : order) {
    const std::vector<int64_t>& positions = groups[key];
    std::vector<int64_t> asked;
    asked.reserve(positions.size());
    for (int64_t p : positions) asked.push_back(sources[p].index);
    ASSIGN_OR_RETURN(Literal values,
                     ev.Get(*std::get<0>(key), std::get<1>(key), std::get<2>(key), asked));
    if (values.shape().element_type() != type) {
      return absl::InternalError("sampled evaluation: element types differ along a data move");
    }
    for (size_t j = 0; j < positions.size(); ++j) {
      points::SetBits(out, positions[j], width,
                      points::BitsAt(values, static_cast<int64_t>(j), width));
    }
  }
  return out;
}

absl::StatusOr<Literal> PointOps::Move(PointEvaluator& ev, const HloInstruction& instr,
                                       int64_t leaf, absl::Span<const int64_t> indices,
                                       const Mapper& map) {
  ASSIGN_OR_RETURN(const Shape* shape, points::FlatLeafShape(instr, leaf));
  points::MultiIndexWalk walk(shape->dimensions());
  std::vector<int64_t> mapped(shape->rank());  // The mapper's copy: it may rewrite it.
  std::vector<Source> sources(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    const int64_t* index = walk.To(indices[i]);
    std::copy(index, index + mapped.size(), mapped.begin());
    RETURN_IF_ERROR(map(mapped.data(), sources[i]));
  }
  return Fetch(ev, shape->element_type(), sources);
}

absl::StatusOr<Literal> PointOps::RunHandler(PointEvaluator& ev, const HloInstruction& synthetic,
                                             absl::Span<const Literal* const> operands) {
  OpHandler handler = FindOpHandler(synthetic.opcode());
  if (handler == nullptr) return Unsupported(synthetic);
  Evaluator evaluator(ev.module_, DeviceContext{});
  return handler(synthetic, operands, evaluator);
}

// Start indices of a dynamic-slice (first = 1) or dynamic-update-slice (first = 2), clamped as
// XLA does so that a window of `sizes` fits in `sliced`.
absl::StatusOr<std::vector<int64_t>> PointOps::Offsets(PointEvaluator& ev,
                                                       const HloInstruction& instr, int64_t first,
                                                       const Frame* frame, const Shape& sliced,
                                                       const std::vector<int64_t>& sizes) {
  const int64_t rank = sliced.rank();
  std::vector<int64_t> offsets(rank, 0);
  const bool packed = instr.operand_count() == first + 1 && rank > 0 &&
                      instr.operand(first)->shape().rank() == 1;
  if (packed) {
    std::vector<int64_t> all(rank);
    for (int64_t d = 0; d < rank; ++d) all[d] = d;
    ASSIGN_OR_RETURN(Literal values, ev.Get(*instr.operand(first), 0, frame, all));
    for (int64_t d = 0; d < rank; ++d) offsets[d] = values.GetInt(d);
  } else {
    if (instr.operand_count() != first + rank) return Unsupported(instr, "with these operands");
    for (int64_t d = 0; d < rank; ++d) {
      ASSIGN_OR_RETURN(offsets[d], ev.ScalarInt(*instr.operand(first + d), frame));
    }
  }
  return ClampStarts(offsets, sliced.dimensions(), sizes);
}

absl::StatusOr<PointOps::Placed> PointOps::PlacedOperands(PointEvaluator& ev,
                                                          const HloInstruction& instr,
                                                          const Frame* frame) {
  using PlaceFn = absl::StatusOr<Placed> (*)(PointEvaluator&, const HloInstruction&, const Frame*);
  static constexpr std::pair<HloOpcode, PlaceFn> kPlacements[] = {
      {HloOpcode::kConcatenate,
       [](PointEvaluator&, const HloInstruction& instr, const Frame*) -> absl::StatusOr<Placed> {
         std::vector<const Shape*> shapes;
         for (const HloInstruction* part : instr.operands()) shapes.push_back(&part->shape());
         Placed placed;
         const std::vector<Placement> placements =
             ConcatenatePlacements(shapes, instr.dimensions().at(0));
         for (size_t k = 0; k < placements.size(); ++k) {
           placed.parts.push_back({instr.operand(k), placements[k]});
         }
         return placed;
       }},
      {HloOpcode::kPad,
       [](PointEvaluator&, const HloInstruction& instr, const Frame*) -> absl::StatusOr<Placed> {
         const HloInstruction* op0 = instr.operand(0);
         Placement placement =
             PadPlacement(op0->shape(), instr.shape(), *instr.attrs().padding_config);
         return Placed{{{op0, std::move(placement)}}, instr.operand(1), /*scalar=*/true};
       }},
      {HloOpcode::kDynamicUpdateSlice,
       [](PointEvaluator& ev, const HloInstruction& instr,
          const Frame* frame) -> absl::StatusOr<Placed> {
         const HloInstruction* update = instr.operand(1);
         ASSIGN_OR_RETURN(
             std::vector<int64_t> start,
             Offsets(ev, instr, 2, frame, instr.operand(0)->shape(), update->shape().dimensions()));
         return Placed{{{update, UpdatePlacement(update->shape(), start)}},
                       instr.operand(0),
                       /*scalar=*/false};
       }},
  };
  for (const auto& [opcode, place] : kPlacements) {
    if (instr.opcode() == opcode) return place(ev, instr, frame);
  }
  return Placed{};
}

absl::StatusOr<Literal> PointOps::DataMovement(PointEvaluator& ev, const HloInstruction& instr,
                                               int64_t leaf, const Frame* frame,
                                               absl::Span<const int64_t> indices, bool* handled) {
  *handled = true;
  if (instr.opcode() == HloOpcode::kDynamicSlice) {
    const Shape& from = instr.operand(0)->shape();
    ASSIGN_OR_RETURN(std::vector<int64_t> start,
                     Offsets(ev, instr, 1, frame, from, instr.shape().dimensions()));
    return ReadView(ev, instr, leaf, frame, indices,
                    WindowView(from, start, instr.shape().dimensions()));
  }
  ASSIGN_OR_RETURN(const Placed placed, PlacedOperands(ev, instr, frame));
  if (placed.parts.empty()) {
    *handled = false;
    return Literal();
  }
  std::vector<int64_t> at(instr.shape().rank());
  return Move(ev, instr, leaf, indices, [&](int64_t* o, Source& s) {
    for (const auto& [part, placement] : placed.parts) {
      if (placement.Find(o, at.data())) {
        s = Source{part, 0, frame, points::Ravel(at.data(), part->shape().dimensions())};
        return absl::OkStatus();
      }
    }
    if (placed.otherwise == nullptr) return absl::InternalError("concatenate index out of range");
    const int64_t index =
        placed.scalar ? 0 : points::Ravel(o, placed.otherwise->shape().dimensions());
    s = Source{placed.otherwise, 0, frame, index};
    return absl::OkStatus();
  });
}

absl::StatusOr<Literal> PointOps::ReadView(PointEvaluator& ev, const HloInstruction& instr,
                                           int64_t leaf, const Frame* frame,
                                           absl::Span<const int64_t> indices,
                                           const StridedView& view) {
  return Move(ev, instr, leaf, indices, [&](int64_t* o, Source& s) {
    s = Source{instr.operand(0), 0, frame, view.At(o)};
    return absl::OkStatus();
  });
}

absl::StatusOr<Literal> PointOps::SourceView(PointEvaluator& ev, const HloInstruction& instr,
                                             int64_t leaf, const Frame* frame,
                                             absl::Span<const int64_t> indices) {
  return ReadView(ev, instr, leaf, frame, indices, *SourceViewOf(instr));
}

absl::StatusOr<Literal> PointOps::Elementwise(PointEvaluator& ev, const HloInstruction& instr,
                                              const Frame* frame,
                                              absl::Span<const int64_t> indices) {
  const int64_t n = static_cast<int64_t>(indices.size());
  std::vector<Literal> operands;
  for (const HloInstruction* operand : instr.operands()) {
    // clamp takes scalar bounds with array operands.
    const bool scalar = operand->shape().rank() == 0 && instr.shape().rank() > 0;
    ASSIGN_OR_RETURN(Literal values,
                     ev.Get(*operand, 0, frame,
                            scalar ? std::vector<int64_t>(n, 0)
                                   : std::vector<int64_t>(indices.begin(), indices.end())));
    operands.push_back(std::move(values));
  }
  std::vector<const Literal*> pointers;
  for (const Literal& l : operands) pointers.push_back(&l);
  Synthetic synthetic;
  HloInstruction* made =
      synthetic.Like(instr, Shape::Array(instr.shape().element_type(), {n}), pointers);
  if (instr.opcode() == HloOpcode::kMap) made->mutable_attrs()->dimensions = {0};
  return RunHandler(ev, *made, pointers);
}

absl::StatusOr<Literal> PointOps::Dot(PointEvaluator& ev, const HloInstruction& instr,
                                      const Frame* frame, absl::Span<const int64_t> indices) {
  // A dot without dimension numbers is an outer product.
  const hlo::DotDimensionNumbers dn =
      instr.attrs().dot_dimension_numbers.value_or(hlo::DotDimensionNumbers{});
  const HloInstruction* lhs = instr.operand(0);
  const HloInstruction* rhs = instr.operand(1);
  auto free_dims = [](const Shape& s, const std::vector<int64_t>& batch,
                      const std::vector<int64_t>& contracting) {
    std::vector<int64_t> free;
    for (int64_t d = 0; d < s.rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
        free.push_back(d);
      }
    }
    return free;
  };
  const std::vector<int64_t> lhs_free =
      free_dims(lhs->shape(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_free =
      free_dims(rhs->shape(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  std::vector<int64_t> k_dims;
  for (int64_t d : dn.lhs_contracting_dimensions) k_dims.push_back(lhs->shape().dimensions(d));
  int64_t k_size = 1;
  for (int64_t s : k_dims) k_size *= s;
  const int64_t n = static_cast<int64_t>(indices.size());
  RETURN_IF_ERROR(ev.Reserve(2 * n * k_size, instr));
  const size_t batch = dn.lhs_batch_dimensions.size();
  std::vector<Source> lhs_src(n * k_size), rhs_src(n * k_size);
  std::vector<int64_t> o(instr.shape().rank()), li(lhs->shape().rank()), ri(rhs->shape().rank()),
      k(k_dims.size());
  for (int64_t i = 0; i < n; ++i) {
    points::Unravel(indices[i], instr.shape().dimensions(), o.data());
    for (size_t b = 0; b < batch; ++b) {
      li[dn.lhs_batch_dimensions[b]] = o[b];
      ri[dn.rhs_batch_dimensions[b]] = o[b];
    }
    for (size_t f = 0; f < lhs_free.size(); ++f) li[lhs_free[f]] = o[batch + f];
    for (size_t f = 0; f < rhs_free.size(); ++f) ri[rhs_free[f]] = o[batch + lhs_free.size() + f];
    for (int64_t c = 0; c < k_size; ++c) {
      points::Unravel(c, k_dims, k.data());
      for (size_t j = 0; j < k.size(); ++j) {
        li[dn.lhs_contracting_dimensions[j]] = k[j];
        ri[dn.rhs_contracting_dimensions[j]] = k[j];
      }
      lhs_src[i * k_size + c] = Source{lhs, 0, frame, points::Ravel(li.data(), lhs->shape().dimensions())};
      rhs_src[i * k_size + c] = Source{rhs, 0, frame, points::Ravel(ri.data(), rhs->shape().dimensions())};
    }
  }
  ASSIGN_OR_RETURN(Literal l, Fetch(ev, lhs->shape().element_type(), lhs_src));
  ASSIGN_OR_RETURN(Literal r, Fetch(ev, rhs->shape().element_type(), rhs_src));
  const Literal lm = AsMatrix(std::move(l), n, k_size);
  const Literal rm = AsMatrix(std::move(r), n, k_size);
  const Literal* operands[] = {&lm, &rm};
  Synthetic synthetic;
  HloInstruction* made =
      synthetic.Like(instr, Shape::Array(instr.shape().element_type(), {n}), operands);
  made->mutable_attrs()->dot_dimension_numbers = hlo::DotDimensionNumbers{{1}, {1}, {0}, {0}};
  return RunHandler(ev, *made, operands);
}

namespace {

// How a reduce's output elements map to its operand's elements.
struct ReduceGeometry {
  std::vector<int64_t> kept, reduced, r_dims;
  int64_t r_size = 1;
};

ReduceGeometry GeometryOf(const HloInstruction& instr) {
  ReduceGeometry g;
  const Shape& in_shape = instr.operand(0)->shape();
  g.reduced = instr.dimensions();
  for (int64_t d = 0; d < in_shape.rank(); ++d) {
    if (std::find(g.reduced.begin(), g.reduced.end(), d) == g.reduced.end()) g.kept.push_back(d);
  }
  for (int64_t d : g.reduced) g.r_dims.push_back(in_shape.dimensions(d));
  for (int64_t s : g.r_dims) g.r_size *= s;
  return g;
}

// The results of a reduce of `inputs` operands as a list (one array per input).
std::vector<Literal> Results(Literal value, int64_t inputs) {
  std::vector<Literal> out;
  if (inputs == 1) {
    out.push_back(std::move(value));
  } else {
    for (Literal& leaf : *value.mutable_tuple_elements()) out.push_back(std::move(leaf));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<Literal>> PointOps::ReduceRange(PointEvaluator& ev,
                                                           const HloInstruction& instr,
                                                           const Frame* frame,
                                                           absl::Span<const int64_t> indices,
                                                           int64_t begin, int64_t end,
                                                           std::vector<Literal> inits) {
  const int64_t inputs = instr.operand_count() / 2;
  const Shape& in_shape = instr.operand(0)->shape();
  const ReduceGeometry g = GeometryOf(instr);
  const int64_t n = static_cast<int64_t>(indices.size());
  const int64_t width = end - begin;
  RETURN_IF_ERROR(ev.Reserve(inputs * n * width, instr));
  const Shape& out_shape = *points::LeafAt(instr.shape(), 0);
  const std::vector<int64_t> stride = hlo::RowMajorStrides(in_shape.dimensions());
  std::vector<int64_t> in_indices(n * width);
  std::vector<int64_t> o(out_shape.rank()), r(g.r_dims.size());
  for (int64_t e = 0; e < n; ++e) {
    points::Unravel(indices[e], out_shape.dimensions(), o.data());
    int64_t base = 0;
    for (size_t k = 0; k < g.kept.size(); ++k) base += o[k] * stride[g.kept[k]];
    // An odometer over the reduced coordinates, the last fastest.
    points::Unravel(begin, g.r_dims, r.data());
    int64_t offset = 0;
    for (size_t k = 0; k < g.reduced.size(); ++k) offset += r[k] * stride[g.reduced[k]];
    for (int64_t c = 0; c < width; ++c) {
      in_indices[e * width + c] = base + offset;
      for (int64_t k = static_cast<int64_t>(r.size()) - 1; k >= 0; --k) {
        offset += stride[g.reduced[k]];
        if (++r[k] < g.r_dims[k] || k == 0) break;
        offset -= r[k] * stride[g.reduced[k]];
        r[k] = 0;
      }
    }
  }
  std::vector<Literal> operands;
  for (int64_t j = 0; j < inputs; ++j) {
    ASSIGN_OR_RETURN(Literal values, ev.Get(*instr.operand(j), 0, frame, in_indices));
    operands.push_back(AsMatrix(std::move(values), n, width));
  }
  for (int64_t j = 0; j < inputs; ++j) {
    if (inits.empty()) {
      ASSIGN_OR_RETURN(Literal init, ev.Get(*instr.operand(inputs + j), 0, frame, {0}));
      operands.push_back(AsScalar(init));
    } else {
      operands.push_back(AsScalar(inits[j]));
    }
  }
  std::vector<const Literal*> pointers;
  for (const Literal& l : operands) pointers.push_back(&l);
  std::vector<Shape> results;
  for (int64_t j = 0; j < inputs; ++j) {
    results.push_back(Shape::Array(instr.operand(inputs + j)->shape().element_type(), {n}));
  }
  Synthetic synthetic;
  HloInstruction* made =
      synthetic.Like(instr, inputs == 1 ? results[0] : Shape::Tuple(results), pointers);
  made->mutable_attrs()->dimensions = {1};
  ASSIGN_OR_RETURN(Literal value, RunHandler(ev, *made, pointers));
  return Results(std::move(value), inputs);
}

absl::StatusOr<Literal> PointOps::Reduce(PointEvaluator& ev, const HloInstruction& instr,
                                         int64_t leaf, const Frame* frame,
                                         absl::Span<const int64_t> indices) {
  const int64_t r_size = GeometryOf(instr).r_size;
  const int64_t n = static_cast<int64_t>(indices.size());
  const int64_t block = ev.reduce_block();
  if (r_size <= block) {  // Groups of whole slices.
    const int64_t group = std::max<int64_t>(1, block / std::max<int64_t>(1, r_size));
    if (n <= group) {
      ASSIGN_OR_RETURN(std::vector<Literal> values,
                       ReduceRange(ev, instr, frame, indices, 0, r_size, {}));
      return std::move(values[leaf]);
    }
    ASSIGN_OR_RETURN(const Shape* out_shape, points::FlatLeafShape(instr, leaf));
    Literal out(Shape::Array(out_shape->element_type(), {n}));
    const int width = hlo::ByteWidth(out_shape->element_type());
    for (int64_t e0 = 0; e0 < n; e0 += group) {
      const int64_t g = std::min(group, n - e0);
      ASSIGN_OR_RETURN(std::vector<Literal> values,
                       ReduceRange(ev, instr, frame, indices.subspan(e0, g), 0, r_size, {}));
      for (int64_t e = 0; e < g; ++e) {
        points::SetBits(out, e0 + e, width, points::BitsAt(values[leaf], e, width));
      }
    }
    return out;
  }
  // Each element's slice block by block, the running result carried as the initial value.
  ASSIGN_OR_RETURN(const Shape* out_shape, points::FlatLeafShape(instr, leaf));
  Literal out(Shape::Array(out_shape->element_type(), {n}));
  const int width = hlo::ByteWidth(out_shape->element_type());
  for (int64_t e = 0; e < n; ++e) {
    std::vector<Literal> running;
    for (int64_t begin = 0; begin < r_size; begin += block) {
      ASSIGN_OR_RETURN(running,
                       ReduceRange(ev, instr, frame, indices.subspan(e, 1), begin,
                                   std::min(r_size, begin + block), std::move(running)));
    }
    points::SetBits(out, e, width, points::BitsAt(running[leaf], 0, width));
  }
  return out;
}

absl::StatusOr<Literal> PointOps::Sort(PointEvaluator& ev, const HloInstruction& instr,
                                       int64_t leaf, const Frame* frame,
                                       absl::Span<const int64_t> indices) {
  const Shape& shape = instr.operand(0)->shape();
  const int64_t dim = instr.dimensions().at(0);
  const int64_t length = shape.dimensions(dim);
  const AskedRows asked = RowsOf(indices, shape.dimensions(), shape.dimensions(), dim);
  const int64_t rows = static_cast<int64_t>(asked.starts.size());
  RETURN_IF_ERROR(ev.Reserve(instr.operand_count() * rows * length, instr));
  int64_t stride = 1;
  for (int64_t d = dim + 1; d < shape.rank(); ++d) stride *= shape.dimensions(d);
  const std::vector<int64_t> row_indices = RowIndices(asked.starts, length, stride);
  std::vector<Literal> operands;
  std::vector<Shape> results;
  for (const HloInstruction* operand : instr.operands()) {
    ASSIGN_OR_RETURN(Literal values, ev.Get(*operand, 0, frame, row_indices));
    operands.push_back(AsMatrix(std::move(values), rows, length));
    results.push_back(operands.back().shape());
  }
  std::vector<const Literal*> pointers;
  for (const Literal& l : operands) pointers.push_back(&l);
  Synthetic synthetic;
  HloInstruction* made = synthetic.Like(
      instr, results.size() == 1 ? results[0] : Shape::Tuple(results), pointers);
  made->mutable_attrs()->dimensions = {1};
  ASSIGN_OR_RETURN(Literal sorted, RunHandler(ev, *made, pointers));
  return PickFromRows(results.size() == 1 ? sorted : sorted.tuple_elements()[leaf], asked.where,
                      length);
}

absl::StatusOr<Literal> PointOps::TopK(PointEvaluator& ev, const HloInstruction& instr,
                                       int64_t leaf, const Frame* frame,
                                       absl::Span<const int64_t> indices) {
  const Shape& shape = instr.operand(0)->shape();
  const int64_t dim = shape.rank() - 1;
  const int64_t length = shape.dimensions(dim);
  const int64_t k = instr.shape().tuple_shapes(0).dimensions(dim);
  const AskedRows asked =
      RowsOf(indices, instr.shape().tuple_shapes(leaf).dimensions(), shape.dimensions(), dim);
  const int64_t rows = static_cast<int64_t>(asked.starts.size());
  RETURN_IF_ERROR(ev.Reserve(rows * length, instr));
  ASSIGN_OR_RETURN(Literal values,
                   ev.Get(*instr.operand(0), 0, frame, RowIndices(asked.starts, length, 1)));
  const Literal operand = AsMatrix(std::move(values), rows, length);
  const Literal* pointers[] = {&operand};
  Synthetic synthetic;
  HloInstruction* made =
      synthetic.Like(instr,
                     Shape::Tuple({Shape::Array(shape.element_type(), {rows, k}),
                                   Shape::Array(hlo::PrimitiveType::kS32, {rows, k})}),
                     pointers);
  ASSIGN_OR_RETURN(Literal top, RunHandler(ev, *made, pointers));
  return PickFromRows(top.tuple_elements()[leaf], asked.where, k);
}

// An op over the trailing `trailing` dims of its operands and result, the leading ones alike
// on all of them (fft: its transformed dims; cholesky and triangular-solve: the matrices):
// each asked element needs its whole block of every operand there; the executor's handler runs
// on the blocks, stacked as [rows, block...].
absl::StatusOr<Literal> PointOps::TrailingBlocks(PointEvaluator& ev, const HloInstruction& instr,
                                                 const Frame* frame,
                                                 absl::Span<const int64_t> indices,
                                                 int64_t trailing) {
  const int64_t lead = instr.shape().rank() - trailing;
  auto block = [&](const Shape& s) {
    std::vector<int64_t> dims(s.dimensions().begin() + lead, s.dimensions().end());
    int64_t size = 1;
    for (int64_t d : dims) size *= d;
    return std::make_pair(dims, size);
  };
  for (const HloInstruction* operand : instr.operands()) {
    if (lead < 0 || operand->shape().rank() != instr.shape().rank()) {
      return Unsupported(instr, "whose operands' ranks differ from its result's");
    }
  }
  const auto [out_dims, out_size] = block(instr.shape());
  std::vector<int64_t> rows_asked;
  std::vector<std::pair<int64_t, int64_t>> where(indices.size());
  absl::flat_hash_map<int64_t, int64_t> row_of;
  for (size_t e = 0; e < indices.size(); ++e) {
    const int64_t row = out_size == 0 ? 0 : indices[e] / out_size;
    auto [it, inserted] = row_of.try_emplace(row, static_cast<int64_t>(rows_asked.size()));
    if (inserted) rows_asked.push_back(row);
    where[e] = {it->second, out_size == 0 ? 0 : indices[e] % out_size};
  }
  const int64_t rows = static_cast<int64_t>(rows_asked.size());
  std::vector<Literal> inputs;
  for (const HloInstruction* operand : instr.operands()) {
    const auto [in_dims, in_size] = block(operand->shape());
    std::vector<int64_t> starts;
    for (int64_t row : rows_asked) starts.push_back(row * in_size);
    RETURN_IF_ERROR(ev.Reserve(rows * in_size, instr));
    ASSIGN_OR_RETURN(Literal values, ev.Get(*operand, 0, frame, RowIndices(starts, in_size, 1)));
    std::vector<int64_t> stacked = {rows};
    stacked.insert(stacked.end(), in_dims.begin(), in_dims.end());
    inputs.emplace_back(Shape::Array(values.shape().element_type(), stacked));
    *inputs.back().mutable_data() = std::move(*values.mutable_data());
  }
  std::vector<const Literal*> pointers;
  for (const Literal& input : inputs) pointers.push_back(&input);
  std::vector<int64_t> stacked = {rows};
  stacked.insert(stacked.end(), out_dims.begin(), out_dims.end());
  Synthetic synthetic;
  HloInstruction* made =
      synthetic.Like(instr, Shape::Array(instr.shape().element_type(), stacked), pointers);
  ASSIGN_OR_RETURN(Literal result, RunHandler(ev, *made, pointers));
  return PickFromRows(result, where, out_size);
}

namespace {

using Indices = absl::Span<const int64_t>;

// `count` copies of the integer `value` as an array of `type`.
Literal Repeated(hlo::PrimitiveType type, size_t count, int64_t value) {
  Literal out(Shape::Array(type, {static_cast<int64_t>(count)}));
  for (size_t i = 0; i < count; ++i) out.SetInt(static_cast<int64_t>(i), value);
  return out;
}

absl::StatusOr<Literal> ConstantElements(const HloInstruction& instr, int64_t leaf,
                                         Indices indices) {
  ASSIGN_OR_RETURN(const Shape* shape, points::FlatLeafShape(instr, leaf));
  const Literal& all = *instr.attrs().literal;
  const Literal& value = LeafOf(all, LeafIndices(all.shape()).at(leaf));
  const int width = hlo::ByteWidth(shape->element_type());
  Literal out(Shape::Array(shape->element_type(), {static_cast<int64_t>(indices.size())}));
  const bool splat = value.element_count() == 1;
  for (size_t i = 0; i < indices.size(); ++i) {
    points::SetBits(out, static_cast<int64_t>(i), width,
                    points::BitsAt(value, splat ? 0 : indices[i], width));
  }
  return out;
}

Literal IotaElements(const HloInstruction& instr, Indices indices) {
  const Shape& shape = instr.shape();
  Literal out(Shape::Array(shape.element_type(), {static_cast<int64_t>(indices.size())}));
  std::vector<int64_t> o(shape.rank());
  for (size_t i = 0; i < indices.size(); ++i) {
    points::Unravel(indices[i], shape.dimensions(), o.data());
    const int64_t v = o[instr.attrs().iota_dimension];
    if (hlo::IsFloatingPointType(shape.element_type())) {
      out.SetDouble(static_cast<int64_t>(i), static_cast<double>(v));
    } else {
      out.SetInt(static_cast<int64_t>(i), v);
    }
  }
  return out;
}

}  // namespace

PointOps::ComputeFn PointOps::HandlerOf(HloOpcode opcode) {
  using I = const HloInstruction&;
  using E = PointEvaluator&;
  // Elements that are the operand's own (the same leaf and index).
  constexpr ComputeFn kForward = [](E ev, I instr, int64_t leaf, const Frame* frame, Indices at) {
    return ev.Get(*instr.operand(0), leaf, frame, at);
  };
  constexpr ComputeFn kCalled = [](E ev, I instr, int64_t leaf, const Frame* frame, Indices at) {
    return ev.ComputeCalled(instr, leaf, frame, at);
  };
  constexpr ComputeFn kCollective = [](E ev, I instr, int64_t leaf, const Frame* frame,
                                       Indices at) {
    return Collective(ev, instr, leaf, frame, at);
  };
  if (HasSourceView(opcode)) return &SourceView;  // Each op with a strided view, alike.
  static constexpr std::pair<HloOpcode, ComputeFn> kTable[] = {
      {HloOpcode::kParameter,
       [](E ev, I instr, int64_t leaf, const Frame* frame, Indices at) {
         return ev.ComputeParameter(instr, leaf, frame, at);
       }},
      {HloOpcode::kWhile, kCalled},
      {HloOpcode::kCall, kCalled},
      {HloOpcode::kFusion, kCalled},
      {HloOpcode::kConditional, kCalled},
      {HloOpcode::kCopy, kForward},
      {HloOpcode::kOptimizationBarrier, kForward},
      {HloOpcode::kAddDependency, kForward},
      {HloOpcode::kBitcast,
       [](E ev, I instr, int64_t leaf, const Frame* frame, Indices at) -> absl::StatusOr<Literal> {
         if (instr.shape().element_type() != instr.operand(0)->shape().element_type()) {
           return Unsupported(instr, "changing the element type");
         }
         return ev.Get(*instr.operand(0), leaf, frame, at);
       }},
      {HloOpcode::kCustomCall,
       [](E ev, I instr, int64_t leaf, const Frame* frame, Indices at) -> absl::StatusOr<Literal> {
         if (IsManualConversion(instr)) return ManualConversion(ev, instr, leaf, frame, at);
         if (!IsIdentityCustomCall(instr)) {
           return Unsupported(instr, hlo::StrCat("\"", instr.attrs().custom_call_target, "\""));
         }
         return ev.Get(*instr.operand(0), leaf, frame, at);
       }},
      {HloOpcode::kGetTupleElement,
       [](E ev, I instr, int64_t leaf, const Frame* frame, Indices at) {
         const HloInstruction& tuple = *instr.operand(0);
         return ev.Get(tuple, points::LeafOffset(tuple.shape(), instr.tuple_index()) + leaf, frame,
                       at);
       }},
      {HloOpcode::kTuple,
       [](E ev, I instr, int64_t leaf, const Frame* frame, Indices at) -> absl::StatusOr<Literal> {
         for (const HloInstruction* element : instr.operands()) {
           const int64_t count = element->shape().leaf_count();
           if (leaf < count) return ev.Get(*element, leaf, frame, at);
           leaf -= count;
         }
         return absl::InternalError("tuple leaf out of range");
       }},
      {HloOpcode::kConstant, [](E, I instr, int64_t leaf, const Frame*,
                                Indices at) { return ConstantElements(instr, leaf, at); }},
      {HloOpcode::kIota,
       [](E, I instr, int64_t, const Frame*, Indices at) -> absl::StatusOr<Literal> {
         return IotaElements(instr, at);
       }},
      {HloOpcode::kPartitionId,
       [](E, I instr, int64_t, const Frame* frame, Indices at) -> absl::StatusOr<Literal> {
         if (frame->device < 0) return Unsupported(instr, "in the unpartitioned reference");
         return Repeated(instr.shape().element_type(), at.size(), frame->device);
       }},
      {HloOpcode::kReplicaId,
       [](E, I instr, int64_t, const Frame*, Indices at) -> absl::StatusOr<Literal> {
         return Repeated(instr.shape().element_type(), at.size(), 0);
       }},
      {HloOpcode::kGetDimensionSize,  // Static shapes: the dimension's size.
       [](E, I instr, int64_t, const Frame*, Indices at) -> absl::StatusOr<Literal> {
         return Repeated(instr.shape().element_type(), at.size(),
                         instr.operand(0)->shape().dimensions(instr.dimensions().at(0)));
       }},
      {HloOpcode::kDot, [](E ev, I instr, int64_t, const Frame* frame,
                           Indices at) { return Dot(ev, instr, frame, at); }},
      {HloOpcode::kReduce, [](E ev, I instr, int64_t leaf, const Frame* frame,
                              Indices at) { return Reduce(ev, instr, leaf, frame, at); }},
      {HloOpcode::kSort, [](E ev, I instr, int64_t leaf, const Frame* frame,
                            Indices at) { return Sort(ev, instr, leaf, frame, at); }},
      {HloOpcode::kTopK, [](E ev, I instr, int64_t leaf, const Frame* frame,
                            Indices at) { return TopK(ev, instr, leaf, frame, at); }},
      {HloOpcode::kFft,
       [](E ev, I instr, int64_t, const Frame* frame, Indices at) {
         return TrailingBlocks(ev, instr, frame, at,
                               static_cast<int64_t>(instr.attrs().fft_length.size()));
       }},
      {HloOpcode::kCholesky, [](E ev, I instr, int64_t, const Frame* frame,
                                Indices at) { return TrailingBlocks(ev, instr, frame, at, 2); }},
      {HloOpcode::kTriangularSolve,
       [](E ev, I instr, int64_t, const Frame* frame, Indices at) {
         return TrailingBlocks(ev, instr, frame, at, 2);
       }},
      {HloOpcode::kGather, [](E ev, I instr, int64_t, const Frame* frame,
                              Indices at) { return Gather(ev, instr, frame, at); }},
      {HloOpcode::kScatter, [](E ev, I instr, int64_t leaf, const Frame* frame,
                               Indices at) { return Scatter(ev, instr, leaf, frame, at); }},
      {HloOpcode::kConvolution, [](E ev, I instr, int64_t, const Frame* frame,
                                   Indices at) { return Convolution(ev, instr, frame, at); }},
      {HloOpcode::kReduceWindow, [](E ev, I instr, int64_t leaf, const Frame* frame,
                                    Indices at) { return WindowOp(ev, instr, leaf, frame, at); }},
      {HloOpcode::kSelectAndScatter,
       [](E ev, I instr, int64_t leaf, const Frame* frame, Indices at) {
         return WindowOp(ev, instr, leaf, frame, at);
       }},
      {HloOpcode::kAllReduce, kCollective},
      {HloOpcode::kReduceScatter, kCollective},
      {HloOpcode::kCollectiveBroadcast, kCollective},
      {HloOpcode::kAllGather, kCollective},
      {HloOpcode::kAllToAll, kCollective},
      {HloOpcode::kCollectivePermute, kCollective},
  };
  const ComputeFn* handler = FindInTable<ComputeFn>(kTable, opcode);
  return handler == nullptr ? nullptr : *handler;
}

std::optional<int64_t> PointOps::WholeRowDimension(const HloInstruction& instr, int64_t leaf) {
  using RowDimension = int64_t (*)(const HloInstruction& instr, int64_t leaf);
  static constexpr std::pair<HloOpcode, RowDimension> kTable[] = {
      {HloOpcode::kSort, [](const HloInstruction& i, int64_t) { return i.dimensions().at(0); }},
      {HloOpcode::kTopK,
       [](const HloInstruction& i, int64_t leaf) {
         return i.shape().tuple_shapes(leaf).rank() - 1;
       }},
  };
  const RowDimension* dimension = FindInTable<RowDimension>(kTable, instr.opcode());
  if (dimension == nullptr) return std::nullopt;
  return (*dimension)(instr, leaf);
}

absl::StatusOr<Literal> PointOps::Compute(PointEvaluator& ev, const HloInstruction& instr,
                                          int64_t leaf, const Frame* frame,
                                          absl::Span<const int64_t> indices) {
  if (ComputeFn handler = HandlerOf(instr.opcode())) {
    return handler(ev, instr, leaf, frame, indices);
  }
  bool handled = false;
  absl::StatusOr<Literal> moved = DataMovement(ev, instr, leaf, frame, indices, &handled);
  if (handled) return moved;
  if (IsPointElementwise(instr)) return Elementwise(ev, instr, frame, indices);
  return Unsupported(instr);
}

}  // namespace runtime
