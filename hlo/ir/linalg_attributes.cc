#include "hlo/ir/linalg_attributes.h"

#include <string_view>

#include "hlo/strings.h"

namespace hlo {
namespace {

absl::Status BadValue(const HloInstruction& instr, const RawAttribute& raw,
                      std::string_view expected) {
  return absl::InvalidArgumentError(StrCat(HloOpcodeString(instr.opcode()), ": ", raw.name, "=",
                                           raw.value, " is not ", expected));
}

absl::Status ReadFlag(const HloInstruction& instr, const RawAttribute& raw, bool* flag) {
  if (raw.value != "true" && raw.value != "false") return BadValue(instr, raw, "true or false");
  *flag = raw.value == "true";
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CholeskyAttributes> ReadCholeskyAttributes(const HloInstruction& cholesky) {
  CholeskyAttributes out;
  for (const RawAttribute& raw : cholesky.attrs().raw_attributes) {
    if (raw.name == "lower") {
      absl::Status read = ReadFlag(cholesky, raw, &out.lower);
      if (!read.ok()) return read;
    }
  }
  return out;
}

absl::StatusOr<TriangularSolveAttributes> ReadTriangularSolveAttributes(
    const HloInstruction& solve) {
  using Transpose = TriangularSolveAttributes::Transpose;
  TriangularSolveAttributes out;
  for (const RawAttribute& raw : solve.attrs().raw_attributes) {
    absl::Status read = absl::OkStatus();
    if (raw.name == "left_side") read = ReadFlag(solve, raw, &out.left_side);
    if (raw.name == "lower") read = ReadFlag(solve, raw, &out.lower);
    if (raw.name == "unit_diagonal") read = ReadFlag(solve, raw, &out.unit_diagonal);
    if (raw.name == "transpose_a") {
      if (raw.value == "NO_TRANSPOSE") {
        out.transpose_a = Transpose::kNoTranspose;
      } else if (raw.value == "TRANSPOSE") {
        out.transpose_a = Transpose::kTranspose;
      } else if (raw.value == "ADJOINT") {
        out.transpose_a = Transpose::kAdjoint;
      } else {
        read = BadValue(solve, raw, "NO_TRANSPOSE, TRANSPOSE or ADJOINT");
      }
    }
    if (!read.ok()) return read;
  }
  return out;
}

}  // namespace hlo
