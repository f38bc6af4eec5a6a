// dot with general dimension numbers; RegisterDotOps also adds convolution
// (convolution_ops.cc).
//
// A dot's result dimensions are [batch..., lhs free..., rhs free...], so viewed as dense
// row-major storage it is [B, M, N] with B, M, N the products of those dimension groups. The
// lhs is brought to [B, M, K] (batch dims in the order listed, free dims ascending, contracting
// dims in the order listed) and the rhs to [B, K, N]; then each batch is one GEMM
// (matmul_kernels.h). An operand already stored in that order, or with its M/N and K groups
// swapped (a transposed matrix), is handed to Eigen in place when its element type is the
// compute type; otherwise it is transposed and converted into a compute buffer once. Likewise
// the result is written in place when its element type is the compute type.
//
// Example: f32[8,64,32] x f32[8,16,32], lhs_batch={0}, lhs_contracting={2}, rhs_batch={0},
// rhs_contracting={2} -> f32[8,64,16]: the lhs is [B,M,K] as stored, the rhs is [B,N,K] =
// column-major [B,K,N]; eight 64x32x16 GEMMs run with no copies.
#include <cstdint>
#include <numeric>
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/strided_index.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/op_registry.h"
#include "runtime/cpu/ops/dot_handlers.h"
#include "runtime/cpu/ops/matmul_kernels.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

absl::Status InvalidArgument(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

// One operand's dimension groups, and its dimension orders for the [B, rows, K]-style views.
struct OperandGroups {
  std::vector<int64_t> batch, free, contracting;
  // batch + free + contracting, and batch + contracting + free.
  std::vector<int64_t> free_major, contracting_major;
};

absl::StatusOr<OperandGroups> GroupDimensions(const Shape& shape, const std::vector<int64_t>& batch,
                                              const std::vector<int64_t>& contracting) {
  OperandGroups g{batch, {}, contracting, {}, {}};
  std::vector<bool> used(shape.rank(), false);
  for (const std::vector<int64_t>* list : {&batch, &contracting}) {
    for (int64_t d : *list) {
      if (d < 0 || d >= shape.rank() || used[d]) {
        return InvalidArgument(hlo::StrCat("dot dimension ", d, " of ", shape.ToString(),
                                           " is out of range or used twice"));
      }
      used[d] = true;
    }
  }
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (!used[d]) g.free.push_back(d);
  }
  for (const auto* part : {&g.batch, &g.free, &g.contracting}) {
    g.free_major.insert(g.free_major.end(), part->begin(), part->end());
  }
  for (const auto* part : {&g.batch, &g.contracting, &g.free}) {
    g.contracting_major.insert(g.contracting_major.end(), part->begin(), part->end());
  }
  return g;
}

int64_t SizeOf(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape.dimensions(d);
  return n;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

struct DotPlan {
  OperandGroups lhs, rhs;
  int64_t batch = 1, m = 1, k = 1, n = 1;
};

absl::StatusOr<DotPlan> PlanDot(const HloInstruction& instr, const Shape& lhs, const Shape& rhs) {
  if (!lhs.IsArray() || !rhs.IsArray() || !instr.shape().IsArray()) {
    return InvalidArgument("dot needs array operands and an array result");
  }
  // No dimension numbers at all means none of either kind: an outer product.
  const hlo::DotDimensionNumbers dn =
      instr.attrs().dot_dimension_numbers.value_or(hlo::DotDimensionNumbers{});
  DotPlan plan;
  ASSIGN_OR_RETURN(plan.lhs,
                   GroupDimensions(lhs, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions));
  ASSIGN_OR_RETURN(plan.rhs,
                   GroupDimensions(rhs, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions));
  std::vector<int64_t> expected;
  if (plan.lhs.batch.size() != plan.rhs.batch.size() ||
      plan.lhs.contracting.size() != plan.rhs.contracting.size()) {
    return InvalidArgument("dot: lhs and rhs must list as many batch and contracting dimensions");
  }
  for (size_t i = 0; i < plan.lhs.batch.size(); ++i) {
    expected.push_back(lhs.dimensions(plan.lhs.batch[i]));
    if (expected.back() != rhs.dimensions(plan.rhs.batch[i])) {
      return InvalidArgument("dot: batch dimension sizes differ");
    }
  }
  for (size_t i = 0; i < plan.lhs.contracting.size(); ++i) {
    if (lhs.dimensions(plan.lhs.contracting[i]) != rhs.dimensions(plan.rhs.contracting[i])) {
      return InvalidArgument("dot: contracting dimension sizes differ");
    }
  }
  for (int64_t d : plan.lhs.free) expected.push_back(lhs.dimensions(d));
  for (int64_t d : plan.rhs.free) expected.push_back(rhs.dimensions(d));
  if (expected != instr.shape().dimensions()) {
    return InvalidArgument(hlo::StrCat("dot result ", instr.shape().ToString(),
                                       " does not match the operands' batch and free dimensions"));
  }
  plan.batch = SizeOf(lhs, plan.lhs.batch);
  plan.m = SizeOf(lhs, plan.lhs.free);
  plan.k = SizeOf(lhs, plan.lhs.contracting);
  plan.n = SizeOf(rhs, plan.rhs.free);
  return plan;
}

// A dense [B, rows, cols] view of one operand in compute type C: in place, or packed.
template <typename C>
struct MatrixOperand {
  const C* data = nullptr;
  bool col_major = false;  // Stored as [B, cols, rows].
  std::vector<C> storage;
};

// `row_major_order` gives [B, rows, cols]; `col_major_order` gives [B, cols, rows].
template <typename C>
absl::Status PrepareOperand(const Literal& literal, PrimitiveType compute_type,
                            const std::vector<int64_t>& row_major_order,
                            const std::vector<int64_t>& col_major_order, MatrixOperand<C>& out) {
  if (literal.shape().element_type() == compute_type) {
    if (IsIdentity(row_major_order) || IsIdentity(col_major_order)) {
      out.data = Data<C>(literal);
      out.col_major = !IsIdentity(row_major_order);
      return absl::OkStatus();
    }
  }
  out.storage.resize(literal.element_count());
  RETURN_IF_ERROR(PackOperand<C>(literal, row_major_order, out.storage.data()));
  out.data = out.storage.data();
  return absl::OkStatus();
}

template <typename C>
absl::Status RunDot(const DotPlan& plan, const Literal& lhs, const Literal& rhs,
                    PrimitiveType compute_type, Literal& out) {
  MatrixOperand<C> a, b;
  RETURN_IF_ERROR(
      PrepareOperand(lhs, compute_type, plan.lhs.free_major, plan.lhs.contracting_major, a));
  RETURN_IF_ERROR(
      PrepareOperand(rhs, compute_type, plan.rhs.contracting_major, plan.rhs.free_major, b));
  const bool in_place = out.shape().element_type() == compute_type;
  std::vector<C> storage;
  if (!in_place) storage.resize(out.element_count());
  C* c = in_place ? MutableData<C>(out) : storage.data();
  const int64_t m = plan.m, k = plan.k, n = plan.n;
  for (int64_t i = 0; i < plan.batch; ++i) {
    Gemm<C>(a.data + i * m * k, a.col_major, b.data + i * k * n, b.col_major, c + i * m * n, m, k,
            n);
  }
  if (!in_place) RETURN_IF_ERROR(StoreResult<C>(c, out));
  return absl::OkStatus();
}

absl::StatusOr<Literal> HandleDot(const HloInstruction& instr,
                                  absl::Span<const Literal* const> operands, Evaluator&) {
  if (operands.size() != 2) return InvalidArgument("dot takes two operands");
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  ASSIGN_OR_RETURN(DotPlan plan, PlanDot(instr, lhs.shape(), rhs.shape()));
  ASSIGN_OR_RETURN(PrimitiveType compute,
                   MatmulComputeType(lhs.shape().element_type(), rhs.shape().element_type(),
                                     instr.shape().element_type()));
  Literal out(instr.shape());
  RETURN_IF_ERROR(DispatchComputeType(compute, [&](auto tag) -> absl::Status {
    using C = typename decltype(tag)::type;
    return RunDot<C>(plan, lhs, rhs, compute, out);
  }));
  return out;
}

}  // namespace

absl::StatusOr<Literal> HandleDotInstruction(const HloInstruction& instr,
                                             absl::Span<const Literal* const> operands,
                                             Evaluator& evaluator) {
  return HandleDot(instr, operands, evaluator);
}

void RegisterDotOps(OpTable& table) {
  table[hlo::HloOpcode::kDot] = &HandleDot;
  table[hlo::HloOpcode::kConvolution] = &HandleConvolution;
  table[hlo::HloOpcode::kFft] = &HandleFft;
  table[hlo::HloOpcode::kRaggedDot] = &HandleRaggedDot;
  table[hlo::HloOpcode::kCholesky] = &HandleCholesky;
  table[hlo::HloOpcode::kTriangularSolve] = &HandleTriangularSolve;
}

}  // namespace runtime
