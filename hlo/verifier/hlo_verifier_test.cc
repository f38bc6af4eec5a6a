// Tests for the verifier: a valid module passes, and each check in the scope (hlo_verifier.cc)
// reports its finding with the instruction and computation it is about.
#include "hlo/verifier/hlo_verifier.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/sharding/hlo_sharding.h"
#include "hlo/sharding/tile_assignment.h"

namespace hlo {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using PT = PrimitiveType;

Shape F32(std::vector<int64_t> dims) { return Shape::Array(PT::kF32, dims); }

// Builds one computation by hand.
class Builder {
 public:
  explicit Builder(std::string name) : c_(std::make_unique<HloComputation>(std::move(name))) {}

  HloInstruction* Param(int64_t n, Shape shape, std::string name) {
    auto p = HloInstruction::Create(HloOpcode::kParameter, std::move(shape), {});
    p->mutable_attrs()->parameter_number = n;
    p->set_name(std::move(name));
    return c_->AddInstruction(std::move(p));
  }
  HloInstruction* Add(HloOpcode opcode, Shape shape, std::vector<HloInstruction*> operands,
                      std::string name) {
    auto instr = HloInstruction::Create(opcode, std::move(shape), operands);
    instr->set_name(std::move(name));
    return c_->AddInstruction(std::move(instr));
  }
  HloComputation* computation() { return c_.get(); }
  // Sets the root and moves the computation into `module`.
  HloComputation* Finish(HloModule* module, HloInstruction* root) {
    c_->set_root_instruction(root);
    return module->AddComputation(std::move(c_));
  }

 private:
  std::unique_ptr<HloComputation> c_;
};

// A scalar (f32, f32) -> f32 add computation named `name`.
HloComputation* AddReducer(HloModule* module, const std::string& name, int64_t num_params = 2) {
  Builder b(name);
  std::vector<HloInstruction*> params;
  for (int64_t i = 0; i < num_params; ++i) {
    params.push_back(b.Param(i, F32({}), name + ".p" + std::to_string(i)));
  }
  return b.Finish(module, b.Add(HloOpcode::kAdd, F32({}), {params[0], params[1]}, name + ".sum"));
}

// entry(p0: f32[4], p1: f32[4]) = add(p0, p1), optionally reduced with `reducer`.
class VerifierTest : public ::testing::Test {
 protected:
  VerifierTest() : module_("m") {}

  // Finishes the entry computation with `root`, sets it as the module's entry.
  void FinishEntry(Builder* b, HloInstruction* root) {
    module_.set_entry_computation(b->Finish(&module_, root));
  }

  // Verifies, expecting exactly one finding whose message contains `substring`.
  VerifierError ExpectOneError(const std::string& substring) {
    std::vector<VerifierError> errors;
    absl::Status status = VerifyModule(module_, &errors);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(substring));
    EXPECT_THAT(errors, SizeIs(1)) << status;
    if (errors.empty()) return {};
    EXPECT_THAT(errors[0].message, HasSubstr(substring));
    return errors[0];
  }

  HloModule module_;
};

TEST_F(VerifierTest, ValidModulePasses) {
  HloComputation* reducer = AddReducer(&module_, "sum");
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  HloInstruction* p1 = b.Param(1, F32({4}), "p1");
  HloInstruction* add = b.Add(HloOpcode::kAdd, F32({4}), {p0, p1}, "add");
  HloInstruction* zero = b.Add(HloOpcode::kConstant, F32({}), {}, "zero");
  zero->mutable_attrs()->literal = Literal(F32({}));
  HloInstruction* reduce = b.Add(HloOpcode::kReduce, F32({}), {add, zero}, "reduce");
  reduce->mutable_attrs()->dimensions = {0};
  reduce->AppendCalledComputation(reducer);
  HloInstruction* cc = b.Add(HloOpcode::kCustomCall, F32({7}), {reduce}, "trusted");
  FinishEntry(&b, cc);
  std::vector<VerifierError> errors;
  EXPECT_TRUE(VerifyModule(module_, &errors).ok());
  EXPECT_TRUE(errors.empty());
}

TEST_F(VerifierTest, ShapeMismatchNamesInstructionAndComputation) {
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  HloInstruction* add = b.Add(HloOpcode::kAdd, F32({5}), {p0, p0}, "add.3");
  FinishEntry(&b, add);
  VerifierError e =
      ExpectOneError("instruction %add.3: inferred shape f32[4] does not match declared f32[5]");
  EXPECT_EQ(e.instruction_name, "add.3");
  EXPECT_EQ(e.computation_name, "entry");
}

TEST_F(VerifierTest, InferenceErrorIsPrefixedWithInstruction) {
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  FinishEntry(&b, b.Add(HloOpcode::kAdd, F32({4}), {p0}, "bad"));
  ExpectOneError("instruction %bad: add: expected 2 operands, got 1");
}

// cholesky's and triangular-solve's attributes are read as written (hlo/ir/linalg_attributes.h):
// a value they do not name is a finding, not a default.
TEST_F(VerifierTest, LinearAlgebraAttributesAreChecked) {
  Builder b("entry");
  HloInstruction* a = b.Param(0, F32({4, 4}), "a");
  HloInstruction* rhs = b.Param(1, F32({4, 2}), "b");
  HloInstruction* solve = b.Add(HloOpcode::kTriangularSolve, F32({4, 2}), {a, rhs}, "x");
  solve->mutable_attrs()->raw_attributes = {{"left_side", "true"}, {"transpose_a", "SIDEWAYS"}};
  HloInstruction* chol = b.Add(HloOpcode::kCholesky, F32({4, 4}), {a}, "c");
  chol->mutable_attrs()->raw_attributes = {{"lower", "yes"}};
  FinishEntry(&b, b.Add(HloOpcode::kTuple, hlo::Shape::Tuple({F32({4, 2}), F32({4, 4})}),
                        {solve, chol}, "t"));
  std::vector<VerifierError> errors;
  absl::Status status = VerifyModule(module_, &errors);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("instruction %x: triangular-solve: transpose_a=SIDEWAYS is not "
                        "NO_TRANSPOSE, TRANSPOSE or ADJOINT"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("instruction %c: cholesky: lower=yes is not true or false"));
  EXPECT_THAT(errors, SizeIs(2));
}

TEST_F(VerifierTest, CalledComputationMustBeInModule) {
  Builder orphan("orphan");
  HloInstruction* x = orphan.Param(0, F32({}), "x");
  orphan.computation()->set_root_instruction(x);
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({}), "p0");
  HloInstruction* call = b.Add(HloOpcode::kCall, F32({}), {p0}, "call");
  call->AppendCalledComputation(orphan.computation());
  FinishEntry(&b, call);
  VerifierError e = ExpectOneError(
      "instruction %call: called computation %orphan is not in "
      "the module");
  EXPECT_EQ(e.instruction_name, "call");
}

TEST_F(VerifierTest, ReducerSignatureIsChecked) {
  HloComputation* reducer = AddReducer(&module_, "sum3", /*num_params=*/3);
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  HloInstruction* ar = b.Add(HloOpcode::kAllReduce, F32({4}), {p0}, "ar");
  ar->AppendCalledComputation(reducer);
  FinishEntry(&b, ar);
  ExpectOneError(
      "instruction %ar: all-reduce: reduction computation must take 2 parameters, "
      "takes 3");
}

TEST_F(VerifierTest, InstructionNamesMustBeUniqueInModule) {
  AddReducer(&module_, "sum");
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({}), "sum.p0");
  FinishEntry(&b, p0);
  VerifierError e =
      ExpectOneError("instruction %sum.p0: name is not unique (also used in computation %sum)");
  EXPECT_EQ(e.computation_name, "entry");
}

TEST_F(VerifierTest, ComputationNamesMustBeUnique) {
  AddReducer(&module_, "sum");
  Builder other("sum");
  HloInstruction* y = other.Param(0, F32({}), "y");
  other.Finish(&module_, y);
  Builder b("entry");
  FinishEntry(&b, b.Param(0, F32({}), "p0"));
  VerifierError e = ExpectOneError("computation %sum: name is not unique");
  EXPECT_EQ(e.instruction_name, "");
  EXPECT_EQ(e.computation_name, "sum");
}

TEST_F(VerifierTest, OperandCycleIsReported) {
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  HloInstruction* a = b.Add(HloOpcode::kNegate, F32({4}), {p0}, "a");
  HloInstruction* c = b.Add(HloOpcode::kNegate, F32({4}), {a}, "c");
  a->ReplaceOperandWith(0, c);
  FinishEntry(&b, c);
  ExpectOneError("is part of a cycle through %");
}

TEST_F(VerifierTest, ControlDependencyCycleIsReported) {
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  HloInstruction* a = b.Add(HloOpcode::kNegate, F32({4}), {p0}, "a");
  HloInstruction* c = b.Add(HloOpcode::kNegate, F32({4}), {a}, "c");
  a->AddControlPredecessor(c);
  FinishEntry(&b, c);
  ExpectOneError("is part of a cycle through %");
}

TEST_F(VerifierTest, ComputationNeedsRoot) {
  Builder b("entry");
  b.Param(0, F32({4}), "p0");
  FinishEntry(&b, nullptr);
  VerifierError e = ExpectOneError("computation %entry: has no root instruction");
  EXPECT_EQ(e.computation_name, "entry");
}

TEST_F(VerifierTest, RootMustBelongToComputation) {
  AddReducer(&module_, "sum");
  Builder b("entry");
  b.Param(0, F32({}), "p0");
  FinishEntry(&b, module_.GetComputation("sum")->root_instruction());
  ExpectOneError("computation %entry: root %sum.sum is not in the computation");
}

TEST_F(VerifierTest, ParameterNumbersWithGap) {
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  b.Param(2, F32({4}), "p2");
  FinishEntry(&b, p0);
  VerifierError e = ExpectOneError(
      "instruction %p2: parameter number 2 is out of range: the 2 parameters must be numbered "
      "0..1");
  EXPECT_EQ(e.instruction_name, "p2");
}

TEST_F(VerifierTest, DuplicateParameterNumbers) {
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  b.Param(0, F32({4}), "q0");
  FinishEntry(&b, p0);
  std::vector<VerifierError> errors;
  absl::Status status = VerifyModule(module_, &errors);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("instruction %q0: parameter number 0 is also used by %p0"));
}

TEST_F(VerifierTest, EntryMustBeSet) {
  Builder b("entry");
  b.Finish(&module_, b.Param(0, F32({}), "p0"));
  VerifierError e = ExpectOneError("module m: entry computation is not set");
  EXPECT_EQ(e.computation_name, "");
}

TEST_F(VerifierTest, OperandFromAnotherComputation) {
  HloComputation* reducer = AddReducer(&module_, "sum");
  Builder b("entry");
  HloInstruction* foreign = reducer->parameter_instruction(0);
  FinishEntry(&b, b.Add(HloOpcode::kNegate, F32({}), {foreign}, "neg"));
  ExpectOneError("instruction %neg: operand 0 %sum.p0 is not in computation %entry");
}

TEST_F(VerifierTest, ShardingIsValidated) {
  module_.mutable_config()->num_partitions = 4;
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4, 8}), "p0");
  absl::StatusOr<TileAssignment> ta = TileAssignment::Iota({2, 2});
  ASSERT_TRUE(ta.ok()) << ta.status();
  absl::StatusOr<HloSharding> tiled = HloSharding::Tile(*ta);
  ASSERT_TRUE(tiled.ok()) << tiled.status();
  p0->set_sharding(*tiled);
  HloInstruction* neg = b.Add(HloOpcode::kNegate, F32({4, 8}), {p0}, "neg");
  FinishEntry(&b, neg);
  EXPECT_TRUE(VerifyModule(module_).ok());

  module_.mutable_config()->num_partitions = 2;  // Devices 2 and 3 no longer exist.
  VerifierError e = ExpectOneError("instruction %p0: sharding {devices=[2,2]<=[4]} is invalid");
  EXPECT_EQ(e.instruction_name, "p0");
  module_.mutable_config()->num_partitions = 4;
  absl::StatusOr<TileAssignment> ta1 = TileAssignment::Iota({4});
  ASSERT_TRUE(ta1.ok());
  neg->set_sharding(*HloSharding::Tile(*ta1));  // Rank 1 tiling on a rank 2 value.
  ExpectOneError("instruction %neg: sharding {devices=[4]<=[4]} is invalid for f32[4,8]");
}

TEST_F(VerifierTest, EntryComputationLayoutMustMatch) {
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  FinishEntry(&b, p0);
  ProgramShape layout;
  layout.parameters = {Shape::ArrayWithLayout(PT::kF32, {4})};
  layout.result = F32({4});
  module_.mutable_config()->entry_computation_layout = layout;
  EXPECT_TRUE(VerifyModule(module_).ok());  // Layouts are ignored.
  module_.mutable_config()->entry_computation_layout->parameters = {F32({5})};
  ExpectOneError("entry_computation_layout parameter 0 is f32[5] but entry parameter 0 is f32[4]");
  module_.mutable_config()->entry_computation_layout->parameters = {F32({4}), F32({4})};
  ExpectOneError("entry_computation_layout has 2 parameters but entry computation %entry has 1");
}

TEST_F(VerifierTest, FusionSignature) {
  Builder fused("fused");
  HloInstruction* fp = fused.Param(0, F32({4}), "fused.p0");
  HloComputation* fc =
      fused.Finish(&module_, fused.Add(HloOpcode::kNegate, F32({4}), {fp}, "fused.neg"));
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  HloInstruction* fusion = b.Add(HloOpcode::kFusion, F32({4}), {p0}, "fusion");
  fusion->AppendCalledComputation(fc);
  FinishEntry(&b, fusion);
  EXPECT_TRUE(VerifyModule(module_).ok());
  *fusion->mutable_shape() = F32({3});
  ExpectOneError(
      "instruction %fusion: fused computation %fused returns f32[4] but the fusion "
      "is declared f32[3]");
}

TEST_F(VerifierTest, MalformedShapeAndMissingName) {
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  p0->mutable_shape()->set_dimension(0, -1);
  HloInstruction* neg = b.Add(HloOpcode::kNegate, F32({4}), {p0}, "");
  FinishEntry(&b, neg);
  std::vector<VerifierError> errors;
  absl::Status status = VerifyModule(module_, &errors);
  ASSERT_THAT(errors, SizeIs(3)) << status;
  EXPECT_EQ(errors[0].message, "instruction %p0: shape f32[-1] has negative dimension size -1");
  EXPECT_EQ(errors[1].message, "computation %entry: holds an unnamed negate instruction");
  EXPECT_THAT(errors[2].message, HasSubstr("inferred shape f32[-1] does not match"));
}

TEST_F(VerifierTest, CollectsAllErrorsInOrder) {
  Builder b("entry");
  HloInstruction* p0 = b.Param(0, F32({4}), "p0");
  HloInstruction* x = b.Add(HloOpcode::kNegate, F32({5}), {p0}, "x");
  HloInstruction* y = b.Add(HloOpcode::kExp, F32({6}), {p0}, "y");
  b.Finish(&module_, b.Add(HloOpcode::kTuple, Shape::Tuple({F32({5}), F32({6})}), {x, y}, "t"));
  std::vector<VerifierError> errors;
  absl::Status status = VerifyModule(module_, &errors);
  ASSERT_THAT(errors, SizeIs(3));
  EXPECT_EQ(errors[0].message, "module m: entry computation is not set");
  EXPECT_EQ(errors[1].instruction_name, "x");
  EXPECT_EQ(errors[2].instruction_name, "y");
  EXPECT_EQ(std::string(status.message()),
            errors[0].message + "\n" + errors[1].message + "\n" + errors[2].message);
}

}  // namespace
}  // namespace hlo
