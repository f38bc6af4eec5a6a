// The opcode table's invariants: names round-trip, kNumHloOpcodes counts the rows, and the
// traits consumers rely on are present where they must be.
#include "hlo/ir/hlo_opcode.h"

#include "gtest/gtest.h"

namespace hlo {
namespace {

TEST(HloOpcodeTest, NamesRoundTripAndCountTheTable) {
  EXPECT_EQ(kNumHloOpcodes, static_cast<int>(HloOpcode::kXor) + 1);  // kXor is the last row.
  for (int i = 0; i < kNumHloOpcodes; ++i) {
    const HloOpcode op = static_cast<HloOpcode>(i);
    EXPECT_EQ(StringToHloOpcode(HloOpcodeString(op)), op) << HloOpcodeString(op);
  }
  EXPECT_EQ(StringToHloOpcode("no-such-op"), std::nullopt);
}

TEST(HloOpcodeTest, EveryElementwiseOpcodeHasElementTypesAndReducersAreBinary) {
  for (int i = 0; i < kNumHloOpcodes; ++i) {
    const HloOpcode op = static_cast<HloOpcode>(i);
    if (IsElementwiseUnary(op) || IsElementwiseBinary(op)) {
      EXPECT_NE(ElementwiseTypes(op), op_traits::kNoTypes) << HloOpcodeString(op);
      EXPECT_NE(ElementTypesName(ElementwiseTypes(op)), "another") << HloOpcodeString(op);
    }
    if (HasOpcodeFlag(op, op_traits::kReducer)) {
      EXPECT_TRUE(IsElementwiseBinary(op)) << HloOpcodeString(op);
    }
  }
}

TEST(HloOpcodeTest, ElementTypeClasses) {
  EXPECT_TRUE(IsOfElementTypes(PrimitiveType::kBF16, ElementwiseTypes(HloOpcode::kExp)));
  EXPECT_FALSE(IsOfElementTypes(PrimitiveType::kS32, ElementwiseTypes(HloOpcode::kExp)));
  EXPECT_TRUE(IsOfElementTypes(PrimitiveType::kPred, ElementwiseTypes(HloOpcode::kAnd)));
  EXPECT_FALSE(IsOfElementTypes(PrimitiveType::kU8, ElementwiseTypes(HloOpcode::kSign)));
  EXPECT_TRUE(IsOfElementTypes(PrimitiveType::kF64, ElementwiseTypes(HloOpcode::kComplex)));
  EXPECT_FALSE(IsOfElementTypes(PrimitiveType::kF16, ElementwiseTypes(HloOpcode::kComplex)));
}

TEST(HloOpcodeTest, Flags) {
  EXPECT_TRUE(HasOpcodeFlag(HloOpcode::kCopy, op_traits::kForwardsOperand));
  EXPECT_TRUE(HasOpcodeFlag(HloOpcode::kOptimizationBarrier, op_traits::kForwardsOperand));
  EXPECT_FALSE(HasOpcodeFlag(HloOpcode::kReshape, op_traits::kForwardsOperand));
  EXPECT_TRUE(HasOpcodeFlag(HloOpcode::kInfeed, op_traits::kSideEffect));
  EXPECT_FALSE(HasOpcodeFlag(HloOpcode::kAdd, op_traits::kSideEffect));
}

}  // namespace
}  // namespace hlo
