// ragged-dot(lhs, rhs, group_sizes), lhs_ragged_dims={r}[, rhs_group_dims={g}], computed as
// XLA's RaggedDotRewriter defines it: the ragged operand(s) are expanded to a dense operand with
// a leading group dimension in which group k keeps only its rows, and one ordinary dot follows.
//
// group_sizes has shape [B..., G]; its leading B dimensions index the ragged operand's leading
// dimensions. Group k of batch position b owns rows start <= i < end along r, where end is the
// cumulative sum of sizes 0..k and start the sum of sizes 0..k-1, both computed and compared in
// group_sizes' own integer type (so sums wrap as XLA's). Rows past the last group's end belong
// to no group; groups reaching past the dimension are cut at its end.
//
//   non-contracting  r is neither contracting nor batch; rhs dimension g indexes groups. Each
//                    lhs row is multiplied with its group's rhs slice; rows of no group give 0.
//                    dot(dense_lhs, rhs) contracting the group dimension with g.
//   contracting      r is a contracting dimension; the result gains a leading group dimension
//                    and group k contracts over its own range of r only (both operands masked).
//   batch            r is a batch dimension: an ordinary batched dot (group sizes only
//                    describe how batch rows are grouped).
// Example: lhs f32[3,1] {1,2,3}, rhs f32[2,1,1] {10, 100}, group_sizes {1, 1}, r = 0, g = 0
// -> {10, 200, 0} (row 2 lies past both groups).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/cpu/ops/dot_handlers.h"

namespace runtime {
namespace {

using hlo::DotDimensionNumbers;
using hlo::HloInstruction;
using hlo::Literal;
using hlo::Shape;

absl::Status Invalid(std::string message) {
  return absl::InvalidArgumentError(hlo::StrCat("ragged-dot: ", message));
}

// mask[(b * G + k) * rows + i]: whether row i belongs to group k at batch position b.
struct GroupMask {
  int64_t batches = 1;
  int64_t groups = 0;
  int64_t rows = 0;
  std::vector<uint8_t> mask;
  bool Has(int64_t b, int64_t k, int64_t i) const { return mask[(b * groups + k) * rows + i]; }
};

// The groups' row ranges in group_sizes' integer type: cumulative sums wrap at its width and
// compare signed or unsigned as the type does.
absl::StatusOr<GroupMask> MakeGroupMask(const Literal& sizes, int64_t rows) {
  const hlo::PrimitiveType type = sizes.shape().element_type();
  if (!hlo::IsIntegralType(type) || sizes.shape().rank() < 1) {
    return Invalid("group_sizes must be an integer array [batch..., groups]");
  }
  const int bits = 8 * hlo::ByteWidth(type);
  const bool is_signed = hlo::IsSignedIntegralType(type);
  auto wrap = [&](uint64_t v) -> uint64_t {  // Truncate to the type, keeping its sign.
    if (bits == 64) return v;
    v &= (uint64_t{1} << bits) - 1;
    if (is_signed && (v >> (bits - 1)) != 0) v |= ~uint64_t{0} << bits;
    return v;
  };
  auto less = [&](uint64_t a, uint64_t b) {
    return is_signed ? static_cast<int64_t>(a) < static_cast<int64_t>(b) : a < b;
  };
  GroupMask m;
  m.groups = sizes.shape().dimensions(sizes.shape().rank() - 1);
  m.batches = m.groups == 0 ? 0 : sizes.element_count() / m.groups;
  m.rows = rows;
  m.mask.assign(m.batches * m.groups * rows, 0);
  for (int64_t b = 0; b < m.batches; ++b) {
    uint64_t start = 0;
    for (int64_t k = 0; k < m.groups; ++k) {
      const int64_t at = b * m.groups + k;
      const uint64_t size = is_signed ? static_cast<uint64_t>(sizes.GetInt(at)) : sizes.GetUint(at);
      const uint64_t end = wrap(start + size);
      for (int64_t i = 0; i < rows; ++i) {
        const uint64_t row = wrap(static_cast<uint64_t>(i));
        m.mask[(b * m.groups + k) * rows + i] = !less(row, start) && less(row, end);
      }
      start = end;
    }
  }
  return m;
}

// `x` with a leading group dimension: [G, x dims...], group k holding x's elements whose row
// along `ragged` lies in group k (of the batch position given by x's leading dimensions), zero
// elsewhere.
absl::StatusOr<Literal> DenseByGroup(const Literal& x, const GroupMask& groups, int64_t ragged,
                                     int64_t batch_rank) {
  const Shape& shape = x.shape();
  if (ragged < batch_rank || ragged >= shape.rank()) {
    return Invalid(hlo::StrCat("ragged dimension ", ragged, " must follow group_sizes' ",
                               batch_rank, " batch dimension(s) in ", shape.ToString()));
  }
  int64_t inner = 1;  // Elements per batch position.
  for (int64_t d = batch_rank; d < shape.rank(); ++d) inner *= shape.dimensions(d);
  int64_t row_stride = 1;
  for (int64_t d = ragged + 1; d < shape.rank(); ++d) row_stride *= shape.dimensions(d);
  const int64_t n = x.element_count();
  if (inner != 0 && n / inner != groups.batches) {
    return Invalid(hlo::StrCat("group_sizes' batch dimensions do not match ", shape.ToString()));
  }
  std::vector<int64_t> dims = shape.dimensions();
  dims.insert(dims.begin(), groups.groups);
  Literal dense(Shape::Array(shape.element_type(), dims));
  const int64_t width = hlo::ByteWidth(shape.element_type());
  const uint8_t* src = x.data().data();
  uint8_t* dst = dense.mutable_data()->data();
  for (int64_t k = 0; k < groups.groups; ++k) {
    for (int64_t e = 0; e < n; ++e) {
      const int64_t row = (e / row_stride) % shape.dimensions(ragged);
      if (groups.Has(e / inner, k, row)) {
        std::memcpy(dst + (k * n + e) * width, src + e * width, width);
      }
    }
  }
  return dense;
}

std::vector<int64_t> Shifted(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(d + 1);
  return out;
}

// Runs dot(lhs, rhs) with `dn` into `instr`'s result shape.
absl::StatusOr<Literal> Dot(const HloInstruction& instr, const Literal& lhs, const Literal& rhs,
                            DotDimensionNumbers dn, Evaluator& evaluator) {
  auto dot = HloInstruction::Create(hlo::HloOpcode::kDot, instr.shape(), {});
  dot->mutable_attrs()->dot_dimension_numbers = std::move(dn);
  dot->mutable_attrs()->operand_precision = instr.attrs().operand_precision;
  dot->set_name(instr.name());
  const Literal* operands[] = {&lhs, &rhs};
  return HandleDotInstruction(*dot, operands, evaluator);
}

bool Contains(const std::vector<int64_t>& dims, int64_t d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

}  // namespace

absl::StatusOr<Literal> HandleRaggedDot(const HloInstruction& instr,
                                        absl::Span<const Literal* const> operands,
                                        Evaluator& evaluator) {
  if (operands.size() != 3) return Invalid("takes lhs, rhs and group_sizes");
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const Literal& sizes = *operands[2];
  const DotDimensionNumbers dn = instr.attrs().dot_dimension_numbers.value_or(DotDimensionNumbers{});
  ASSIGN_OR_RETURN(std::vector<int64_t> ragged,
                   hlo::RawDimsAttribute(instr, {"lhs_ragged_dims", "lhs_ragged_dimensions"}));
  ASSIGN_OR_RETURN(std::vector<int64_t> group,
                   hlo::RawDimsAttribute(instr, {"rhs_group_dims", "rhs_group_dimensions"}));
  if (ragged.size() != 1) return Invalid("needs exactly one lhs_ragged_dims entry");
  if (!lhs.shape().IsArray() || !rhs.shape().IsArray() || !sizes.shape().IsArray()) {
    return Invalid("operands must be arrays");
  }
  const int64_t r = ragged[0];
  const int64_t batch_rank = sizes.shape().rank() - 1;
  if (r < 0 || r >= lhs.shape().rank()) return Invalid("lhs ragged dimension out of range");
  if (Contains(dn.lhs_batch_dimensions, r)) return Dot(instr, lhs, rhs, dn, evaluator);
  ASSIGN_OR_RETURN(GroupMask groups, MakeGroupMask(sizes, lhs.shape().dimensions(r)));
  ASSIGN_OR_RETURN(Literal dense_lhs, DenseByGroup(lhs, groups, r, batch_rank));
  DotDimensionNumbers dense;
  dense.lhs_batch_dimensions = Shifted(dn.lhs_batch_dimensions);
  dense.lhs_contracting_dimensions = Shifted(dn.lhs_contracting_dimensions);
  const auto pos = std::find(dn.lhs_contracting_dimensions.begin(),
                             dn.lhs_contracting_dimensions.end(), r);
  if (pos == dn.lhs_contracting_dimensions.end()) {  // Non-contracting.
    if (group.size() != 1) return Invalid("non-contracting mode needs one rhs_group_dims entry");
    dense.lhs_contracting_dimensions.insert(dense.lhs_contracting_dimensions.begin(), 0);
    dense.rhs_contracting_dimensions = dn.rhs_contracting_dimensions;
    dense.rhs_contracting_dimensions.insert(dense.rhs_contracting_dimensions.begin(), group[0]);
    dense.rhs_batch_dimensions = dn.rhs_batch_dimensions;
    return Dot(instr, dense_lhs, rhs, std::move(dense), evaluator);
  }
  // Contracting: both operands masked, the group dimension becomes the leading batch dimension.
  const int64_t rhs_r = dn.rhs_contracting_dimensions[pos - dn.lhs_contracting_dimensions.begin()];
  if (rhs.shape().dimensions(rhs_r) != groups.rows) {
    return Invalid("the ragged contracting dimensions of lhs and rhs differ in size");
  }
  ASSIGN_OR_RETURN(Literal dense_rhs, DenseByGroup(rhs, groups, rhs_r, batch_rank));
  dense.lhs_batch_dimensions.insert(dense.lhs_batch_dimensions.begin(), 0);
  dense.rhs_batch_dimensions = Shifted(dn.rhs_batch_dimensions);
  dense.rhs_batch_dimensions.insert(dense.rhs_batch_dimensions.begin(), 0);
  dense.rhs_contracting_dimensions = Shifted(dn.rhs_contracting_dimensions);
  return Dot(instr, dense_lhs, dense_rhs, std::move(dense), evaluator);
}

}  // namespace runtime
