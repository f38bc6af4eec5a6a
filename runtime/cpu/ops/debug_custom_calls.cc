// Host-side custom-calls with no effect on values:
//
//   xla.debug.Log  side-effecting logging; the executor logs nothing. Its value is its operand
//                  when the declared shape is the operand's, else the empty value of the
//                  declared shape (e.g. `()`).
//   GetRngSeed     the seed of the program's random number generator: a scalar integer. The
//                  executor returns the fixed value kRngSeed on every device, so partitioned
//                  and unpartitioned runs (and repeated runs) agree.
#include "hlo/strings.h"
#include "runtime/cpu/ops/custom_call_handlers.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;

absl::StatusOr<Literal> HandleDebugLog(const HloInstruction& instr,
                                       absl::Span<const Literal* const> operands, Evaluator&) {
  if (operands.size() == 1 && operands[0]->shape().Compatible(instr.shape())) {
    return *operands[0];
  }
  const hlo::Shape& shape = instr.shape();
  if ((shape.IsTuple() && shape.tuple_shapes().empty()) || shape.IsToken()) return Literal(shape);
  return absl::InvalidArgumentError(
      hlo::StrCat("custom-call \"xla.debug.Log\" returns ", shape.ToString(),
                  ", which is neither its operand's shape nor ()"));
}

absl::StatusOr<Literal> HandleGetRngSeed(const HloInstruction& instr,
                                         absl::Span<const Literal* const> operands, Evaluator&) {
  const hlo::Shape& shape = instr.shape();
  if (!operands.empty() || !shape.IsArray() || shape.rank() != 0 ||
      !hlo::IsIntegralType(shape.element_type())) {
    return absl::InvalidArgumentError(
        hlo::StrCat("custom-call \"GetRngSeed\" takes no operands and returns an integer "
                    "scalar, not ", shape.ToString()));
  }
  Literal seed(shape);
  seed.SetInt(0, kRngSeed);
  return seed;
}

}  // namespace

CustomCallHandler FindDebugCustomCallHandler(std::string_view target) {
  if (target == "xla.debug.Log") return &HandleDebugLog;
  if (target == "GetRngSeed") return &HandleGetRngSeed;
  return nullptr;
}

}  // namespace runtime
