// gMock matchers over HloInstruction, for tests that check a program's structure (opcode,
// shape, sharding, operands, attributes) rather than substrings of its printed text:
//
//   EXPECT_THAT(root, op::AllGather(op::Parameter()));                 // opcode and operands
//   EXPECT_THAT(root, AllOf(op::Slice(), HasShape("f32[15,23]")));
//   EXPECT_THAT(instr, Operand(1, HasOpcode(HloOpcode::kReshape)));
//   EXPECT_THAT(param, HasSharding("{devices=[2,1]<=[2]}"));
//
// op::X(m0, m1, ...) matches an instruction of opcode kX whose operands match m0, m1, ... (as
// many operands as matchers); op::X() matches any operands. Shapes compare by their text
// without layout, shardings by value (HloSharding's ==, metadata ignored). A failed match says
// which operand (and which of its operands, and so on) differs and prints the instruction.
#ifndef HLO_TESTING_HLO_MATCHERS_H_
#define HLO_TESTING_HLO_MATCHERS_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/ir/hlo_module.h"

namespace hlo {

// What gMock prints for an instruction in a failure: its text (not an address).
void PrintTo(const HloInstruction* instr, std::ostream* os);
inline void PrintTo(HloInstruction* instr, std::ostream* os) {
  PrintTo(static_cast<const HloInstruction*>(instr), os);
}

namespace testing {

using InstructionMatcher = ::testing::Matcher<const HloInstruction*>;

// `opcode`, and when `operands` is non-empty, exactly that many operands matching them in order.
InstructionMatcher Op(HloOpcode opcode, std::vector<InstructionMatcher> operands = {});

InstructionMatcher HasOpcode(HloOpcode opcode);
// The shape's text without layout, e.g. "f32[4,8]" or "(f32[2], s32[])".
InstructionMatcher HasShape(std::string_view text);
// The instruction has a sharding equal to the parsed `text` (e.g. "{devices=[2,4]<=[8]}").
InstructionMatcher HasSharding(std::string_view text);
InstructionMatcher HasNoSharding();
// Operand `i` exists and matches `m`.
InstructionMatcher Operand(int64_t i, InstructionMatcher m);
// attrs().dimensions (all-gather, all-to-all, transpose, broadcast, reduce, ...).
InstructionMatcher HasDimensions(std::vector<int64_t> dimensions);
// The replica groups, compared as explicit device lists (iota and explicit forms alike).
InstructionMatcher HasReplicaGroups(std::vector<std::vector<int64_t>> groups);
// A custom-call to `target`.
InstructionMatcher HasCustomCallTarget(std::string_view target);
// A constant whose literal holds exactly `values` (compared as integers, in order).
InstructionMatcher HasIntValues(std::vector<int64_t> values);

// The computation's instructions in insertion order, for container matchers:
//   EXPECT_THAT(Instructions(*entry), Contains(op::AllToAll()).Times(1));
std::vector<const HloInstruction*> Instructions(const HloComputation& computation);
// Every computation's instructions (loop bodies, branches, reducers included).
std::vector<const HloInstruction*> Instructions(const HloModule& module);
// The instruction named `name` in `computation`, or null.
const HloInstruction* FindInstruction(const HloComputation& computation, std::string_view name);

namespace op {

#define HLO_MATCHERS_OPCODE(Name)                                                     \
  template <typename... M>                                                            \
  InstructionMatcher Name(M... operands) {                                            \
    return ::hlo::testing::Op(HloOpcode::k##Name, {InstructionMatcher(operands)...}); \
  }
HLO_MATCHERS_OPCODE(Add)
HLO_MATCHERS_OPCODE(AllGather)
HLO_MATCHERS_OPCODE(AllReduce)
HLO_MATCHERS_OPCODE(AllToAll)
HLO_MATCHERS_OPCODE(And)
HLO_MATCHERS_OPCODE(Broadcast)
HLO_MATCHERS_OPCODE(Clamp)
HLO_MATCHERS_OPCODE(CollectivePermute)
HLO_MATCHERS_OPCODE(Compare)
HLO_MATCHERS_OPCODE(Concatenate)
HLO_MATCHERS_OPCODE(Constant)
HLO_MATCHERS_OPCODE(Convert)
HLO_MATCHERS_OPCODE(Convolution)
HLO_MATCHERS_OPCODE(Copy)
HLO_MATCHERS_OPCODE(CustomCall)
HLO_MATCHERS_OPCODE(Divide)
HLO_MATCHERS_OPCODE(Dot)
HLO_MATCHERS_OPCODE(DynamicSlice)
HLO_MATCHERS_OPCODE(DynamicUpdateSlice)
HLO_MATCHERS_OPCODE(Gather)
HLO_MATCHERS_OPCODE(GetTupleElement)
HLO_MATCHERS_OPCODE(Iota)
HLO_MATCHERS_OPCODE(Maximum)
HLO_MATCHERS_OPCODE(Minimum)
HLO_MATCHERS_OPCODE(Multiply)
HLO_MATCHERS_OPCODE(Negate)
HLO_MATCHERS_OPCODE(Pad)
HLO_MATCHERS_OPCODE(Parameter)
HLO_MATCHERS_OPCODE(PartitionId)
HLO_MATCHERS_OPCODE(Reduce)
HLO_MATCHERS_OPCODE(ReduceScatter)
HLO_MATCHERS_OPCODE(ReduceWindow)
HLO_MATCHERS_OPCODE(Reshape)
HLO_MATCHERS_OPCODE(Reverse)
HLO_MATCHERS_OPCODE(Scan)
HLO_MATCHERS_OPCODE(Scatter)
HLO_MATCHERS_OPCODE(Select)
HLO_MATCHERS_OPCODE(Slice)
HLO_MATCHERS_OPCODE(Sort)
HLO_MATCHERS_OPCODE(Subtract)
HLO_MATCHERS_OPCODE(Transpose)
HLO_MATCHERS_OPCODE(Tuple)
HLO_MATCHERS_OPCODE(While)
#undef HLO_MATCHERS_OPCODE

}  // namespace op
}  // namespace testing
}  // namespace hlo

#endif  // HLO_TESTING_HLO_MATCHERS_H_
