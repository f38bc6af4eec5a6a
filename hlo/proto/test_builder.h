// Small helpers for the hlo/proto tests: building modules by hand through the IR API and
// checking the print round trip through every proto path.
#ifndef HLO_PROTO_TEST_BUILDER_H_
#define HLO_PROTO_TEST_BUILDER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/ir/hlo_printer.h"
#include "hlo/proto/hlo_proto_util.h"

namespace hlo {
namespace testing {

inline Shape F32(std::vector<int64_t> dims) {
  return Shape::ArrayWithLayout(PrimitiveType::kF32, dims);
}
inline Shape S32(std::vector<int64_t> dims) {
  return Shape::ArrayWithLayout(PrimitiveType::kS32, dims);
}
inline Shape Pred(std::vector<int64_t> dims) {
  return Shape::ArrayWithLayout(PrimitiveType::kPred, dims);
}

// Appends instructions to one computation; `set` fills the attributes.
class ComputationBuilder {
 public:
  explicit ComputationBuilder(std::string name)
      : computation_(std::make_unique<HloComputation>(std::move(name))) {}

  HloInstruction* Add(std::string name, HloOpcode opcode, Shape shape,
                      std::vector<HloInstruction*> operands = {},
                      const std::function<void(InstructionAttributes*)>& set = nullptr) {
    std::unique_ptr<HloInstruction> instr =
        HloInstruction::Create(opcode, std::move(shape), operands);
    instr->set_name(std::move(name));
    if (set) set(instr->mutable_attrs());
    return computation_->AddInstruction(std::move(instr));
  }
  HloInstruction* Parameter(int64_t number, std::string name, Shape shape) {
    return Add(std::move(name), HloOpcode::kParameter, std::move(shape), {},
               [&](InstructionAttributes* a) { a->parameter_number = number; });
  }
  HloInstruction* Scalar(std::string name, float value) {
    return Add(std::move(name), HloOpcode::kConstant, F32({}), {}, [&](InstructionAttributes* a) {
      Literal literal(F32({}));
      literal.SetDouble(0, value);
      a->literal = std::move(literal);
    });
  }
  // Sets the root and hands the computation to `module`.
  HloComputation* Finish(HloModule* module, HloInstruction* root) {
    computation_->set_root_instruction(root);
    return module->AddComputation(std::move(computation_));
  }
  HloComputation* computation() { return computation_.get(); }

 private:
  std::unique_ptr<HloComputation> computation_;
};

// `(f32[], f32[]) -> f32[]` adding its parameters.
inline HloComputation* AddScalarAdder(HloModule* module, std::string name) {
  ComputationBuilder b(std::move(name));
  HloInstruction* x = b.Parameter(0, "x", F32({}));
  HloInstruction* y = b.Parameter(1, "y", F32({}));
  return b.Finish(module, b.Add("sum", HloOpcode::kAdd, F32({}), {x, y}));
}

inline std::string Print(const HloModule& module) {
  std::string out;
  PrintModule(module, &out);
  return out;
}

// Checks print(FromProto(ToProto(m))) == print(m) through the plain, WithConfig and byte paths.
inline void ExpectRoundTrip(const HloModule& module) {
  const std::string want = Print(module);
  absl::StatusOr<xla::HloModuleProto> plain = ModuleToProto(module);
  ASSERT_TRUE(plain.ok()) << plain.status();
  absl::StatusOr<std::unique_ptr<HloModule>> from_plain = ModuleFromProto(*plain);
  ASSERT_TRUE(from_plain.ok()) << from_plain.status();
  EXPECT_EQ(Print(**from_plain), want);
  absl::StatusOr<xla::HloModuleProtoWithConfig> with_config = ModuleToProtoWithConfig(module);
  ASSERT_TRUE(with_config.ok()) << with_config.status();
  absl::StatusOr<std::unique_ptr<HloModule>> from_config = ModuleFromProtoWithConfig(*with_config);
  ASSERT_TRUE(from_config.ok()) << from_config.status();
  EXPECT_EQ(Print(**from_config), want);
  const std::string bytes = SerializeModule(module);
  ASSERT_FALSE(bytes.empty());
  absl::StatusOr<std::unique_ptr<HloModule>> from_bytes = ParseModuleProtoBytes(bytes);
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status();
  EXPECT_EQ(Print(**from_bytes), want);
  // A second trip is a fixpoint too.
  EXPECT_EQ(Print(**ParseModuleProtoBytes(SerializeModule(**from_bytes))), want);
}

}  // namespace testing
}  // namespace hlo

#endif  // HLO_PROTO_TEST_BUILDER_H_
