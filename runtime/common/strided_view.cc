// The views are built from row-major strides of the operand (strided_index.h): a source view
// picks, scales or negates them; a placement records per-dimension ranges and derives both
// sides' views from them.
#include "runtime/common/strided_view.h"

#include <algorithm>

#include "runtime/common/strided_index.h"

namespace runtime {
namespace {

using hlo::HloOpcode;

int64_t Dot(absl::Span<const int64_t> a, absl::Span<const int64_t> b) {
  int64_t sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace

int64_t StridedView::At(const int64_t* index) const {
  int64_t at = offset;
  for (size_t d = 0; d < strides.size(); ++d) at += index[d] * strides[d];
  return at;
}

StridedView TransposeView(absl::Span<const int64_t> dims, absl::Span<const int64_t> perm) {
  const std::vector<int64_t> in_strides = RowMajorStrides(dims);
  StridedView view;
  for (int64_t p : perm) {
    view.sizes.push_back(dims[p]);
    view.strides.push_back(in_strides[p]);
  }
  return view;
}

StridedView BroadcastView(const hlo::Shape& operand, const hlo::Shape& result,
                          absl::Span<const int64_t> dims) {
  const std::vector<int64_t> in_strides = RowMajorStrides(operand.dimensions());
  StridedView view{0, std::vector<int64_t>(result.rank(), 0), result.dimensions()};
  for (size_t i = 0; i < dims.size(); ++i) {
    if (operand.dimensions(i) != 1) view.strides[dims[i]] = in_strides[i];
  }
  return view;
}

StridedView SliceView(const hlo::Shape& operand, const hlo::Shape& result,
                      absl::Span<const hlo::SliceDimension> slices) {
  StridedView view{0, RowMajorStrides(operand.dimensions()), result.dimensions()};
  for (size_t d = 0; d < slices.size(); ++d) {
    view.offset += slices[d].start * view.strides[d];
    view.strides[d] *= slices[d].stride;
  }
  return view;
}

StridedView ReverseView(const hlo::Shape& operand, absl::Span<const int64_t> dims) {
  StridedView view{0, RowMajorStrides(operand.dimensions()), operand.dimensions()};
  for (int64_t d : dims) {
    if (operand.dimensions(d) == 0) continue;
    view.offset += (operand.dimensions(d) - 1) * view.strides[d];
    view.strides[d] = -view.strides[d];
  }
  return view;
}

StridedView WindowView(const hlo::Shape& operand, absl::Span<const int64_t> starts,
                       absl::Span<const int64_t> sizes) {
  StridedView view{0, RowMajorStrides(operand.dimensions()),
                   std::vector<int64_t>(sizes.begin(), sizes.end())};
  view.offset = Dot(starts, view.strides);
  return view;
}

StridedView ReshapeView(const hlo::Shape& result) {
  return StridedView{0, RowMajorStrides(result.dimensions()), result.dimensions()};
}

namespace {

using ViewFn = StridedView (*)(const hlo::HloInstruction&);

// Each op whose result reads operand 0 through a view fixed by its attributes and shapes. A new
// data-movement op of this kind adds its line here; every executor and the point evaluator
// then run it (they register one handler for every opcode HasSourceView accepts).
constexpr std::pair<HloOpcode, ViewFn> kViews[] = {
    {HloOpcode::kTranspose,
     [](const hlo::HloInstruction& i) {
       return TransposeView(i.operand(0)->shape().dimensions(), i.dimensions());
     }},
    {HloOpcode::kBroadcast,
     [](const hlo::HloInstruction& i) {
       return BroadcastView(i.operand(0)->shape(), i.shape(), i.dimensions());
     }},
    {HloOpcode::kSlice,
     [](const hlo::HloInstruction& i) {
       return SliceView(i.operand(0)->shape(), i.shape(), i.attrs().slice_dimensions);
     }},
    {HloOpcode::kReverse,
     [](const hlo::HloInstruction& i) {
       return ReverseView(i.operand(0)->shape(), i.dimensions());
     }},
    {HloOpcode::kReshape, [](const hlo::HloInstruction& i) { return ReshapeView(i.shape()); }},
};

const ViewFn* FindView(HloOpcode opcode) {
  for (const auto& [op, view] : kViews) {
    if (op == opcode) return &view;
  }
  return nullptr;
}

}  // namespace

std::optional<StridedView> SourceViewOf(const hlo::HloInstruction& instr) {
  const ViewFn* view = FindView(instr.opcode());
  if (view == nullptr) return std::nullopt;
  return (*view)(instr);
}

bool HasSourceView(HloOpcode opcode) { return FindView(opcode) != nullptr; }

std::vector<HloOpcode> SourceViewOpcodes() {
  std::vector<HloOpcode> opcodes;
  for (const auto& entry : kViews) opcodes.push_back(entry.first);
  return opcodes;
}

std::vector<int64_t> ClampStarts(absl::Span<const int64_t> raw, absl::Span<const int64_t> full,
                                 absl::Span<const int64_t> window) {
  std::vector<int64_t> starts(raw.size());
  for (size_t d = 0; d < raw.size(); ++d) {
    starts[d] = std::clamp<int64_t>(raw[d], 0, full[d] - window[d]);
  }
  return starts;
}

bool Placement::empty() const {
  return std::any_of(count.begin(), count.end(), [](int64_t c) { return c <= 0; });
}

StridedView Placement::OperandView(const hlo::Shape& operand) const {
  StridedView view{0, RowMajorStrides(operand.dimensions()), count};
  view.offset = Dot(first, view.strides);
  return view;
}

StridedView Placement::ResultView(const hlo::Shape& result) const {
  StridedView view{0, RowMajorStrides(result.dimensions()), count};
  view.offset = Dot(position, view.strides);
  for (size_t d = 0; d < step.size(); ++d) view.strides[d] *= step[d];
  return view;
}

bool Placement::Find(const int64_t* index, int64_t* operand_index) const {
  for (size_t d = 0; d < position.size(); ++d) {
    const int64_t x = index[d] - position[d];
    if (x < 0 || x % step[d] != 0 || x / step[d] >= count[d]) return false;
    operand_index[d] = first[d] + x / step[d];
  }
  return true;
}

Placement PadPlacement(const hlo::Shape& operand, const hlo::Shape& result,
                       const hlo::PaddingConfig& config) {
  Placement p;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const hlo::PaddingDimension& pad = config.dimensions[d];
    const int64_t step = pad.interior_padding + 1;
    const int64_t low = pad.edge_padding_low;
    const int64_t begin = low >= 0 ? 0 : (-low + step - 1) / step;
    const int64_t last_position = result.dimensions(d) - 1 - low;
    const int64_t end =
        last_position < 0 ? 0 : std::min(operand.dimensions(d), last_position / step + 1);
    p.first.push_back(begin);
    p.position.push_back(low + begin * step);
    p.step.push_back(step);
    p.count.push_back(std::max<int64_t>(end - begin, 0));
  }
  return p;
}

std::vector<Placement> ConcatenatePlacements(absl::Span<const hlo::Shape* const> operands,
                                             int64_t dim) {
  std::vector<Placement> out;
  int64_t at = 0;
  for (const hlo::Shape* shape : operands) {
    std::vector<int64_t> position(shape->rank(), 0);
    position[dim] = at;
    out.push_back(Placement{std::vector<int64_t>(shape->rank(), 0), std::move(position),
                            std::vector<int64_t>(shape->rank(), 1), shape->dimensions()});
    at += shape->dimensions(dim);
  }
  return out;
}

Placement UpdatePlacement(const hlo::Shape& update, absl::Span<const int64_t> starts) {
  return Placement{std::vector<int64_t>(update.rank(), 0),
                   std::vector<int64_t>(starts.begin(), starts.end()),
                   std::vector<int64_t>(update.rank(), 1), update.dimensions()};
}

}  // namespace runtime
