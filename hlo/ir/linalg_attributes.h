// What cholesky's and triangular-solve's attributes say, read in one place for shape inference,
// the executors and the partitioner. The parser keeps them verbatim (raw attributes):
//
//   cholesky(a), lower=true
//     a = l . l^H with l lower-triangular (lower=true) or a = u^H . u with u upper-triangular,
//     for the minor two dims of a (the others are batch dims); only that triangle of a is read.
//   triangular-solve(a, b), left_side=true, lower=true, unit_diagonal=false,
//                           transpose_a=NO_TRANSPOSE
//     solves op(a) . x = b (left_side) or x . op(a) = b, op(a) being a, its transpose or its
//     adjoint (TRANSPOSE, ADJOINT); a is lower- or upper-triangular and only that triangle is
//     read, its diagonal taken as ones when unit_diagonal.
// Absent flags are false and an absent transpose_a is NO_TRANSPOSE, as in XLA's text.
#ifndef HLO_IR_LINALG_ATTRIBUTES_H_
#define HLO_IR_LINALG_ATTRIBUTES_H_

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"

namespace hlo {

struct CholeskyAttributes {
  bool lower = false;
};

struct TriangularSolveAttributes {
  enum class Transpose { kNoTranspose, kTranspose, kAdjoint };
  bool left_side = false;
  bool lower = false;
  bool unit_diagonal = false;
  Transpose transpose_a = Transpose::kNoTranspose;
};

// The attributes; fails, naming the attribute and its value, for a flag other than true or
// false and a transpose_a other than NO_TRANSPOSE, TRANSPOSE or ADJOINT.
absl::StatusOr<CholeskyAttributes> ReadCholeskyAttributes(const HloInstruction& cholesky);
absl::StatusOr<TriangularSolveAttributes> ReadTriangularSolveAttributes(
    const HloInstruction& solve);

}  // namespace hlo

#endif  // HLO_IR_LINALG_ATTRIBUTES_H_
