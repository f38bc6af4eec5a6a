// Called-computation ids in XLA's order. XLA's HloInstructionProto lists a while's computations
// as [body, condition] (HloInstruction::kBodyComputationIndex = 0); every other opcode lists
// them in the order its text names them (to_apply; true/false or the branches; select/scatter;
// calls; called_computations). A module JAX exported as HloModuleProto must read as the same
// program as its text form, and a module written here must give XLA's order.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/ir/hlo_printer.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/proto/hlo_proto_util.h"

namespace hlo {
namespace {

using ::testing::HasSubstr;

std::string ReadTestData(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  std::string path = "hlo/proto/testdata/" + name;
  if (srcdir != nullptr && workspace != nullptr) {
    path = std::string(srcdir) + "/" + workspace + "/" + path;
  }
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The module printed without what its text form from JAX leaves out (metadata, stack frames).
std::string PrintProgram(HloModule& module) {
  *module.mutable_stack_frame_index() = {};
  for (const auto& c : module.computations()) {
    for (const auto& instr : c->instructions()) instr->mutable_attrs()->metadata = {};
  }
  std::string out;
  PrintModule(module, &out);
  return out;
}

TEST(CalledComputationsTest, JaxScanAndCondProtoReadsAsItsText) {
  absl::StatusOr<std::unique_ptr<HloModule>> from_proto =
      ParseModuleProtoBytes(ReadTestData("jax_scan_cond.pb"));
  ASSERT_TRUE(from_proto.ok()) << from_proto.status().message();
  absl::StatusOr<std::unique_ptr<HloModule>> from_text =
      ParseHloModule(ReadTestData("jax_scan_cond.hlo"), "jax_scan_cond.hlo");
  ASSERT_TRUE(from_text.ok()) << from_text.status().message();
  const std::string program = PrintProgram(**from_text);
  EXPECT_THAT(program, HasSubstr("condition=%region_1.5, body=%region_0.4"));
  EXPECT_THAT(program, HasSubstr("branch_computations={%region_3.7, %region_4.8}"));
  EXPECT_EQ(PrintProgram(**from_proto), program);
}

// The text form of the JAX module, written by ModuleToProto.
absl::StatusOr<xla::HloModuleProto> TextModuleAsProto() {
  absl::StatusOr<std::unique_ptr<HloModule>> m =
      ParseHloModule(ReadTestData("jax_scan_cond.hlo"), "jax_scan_cond.hlo");
  if (!m.ok()) return m.status();
  return ModuleToProto(**m);
}

TEST(CalledComputationsTest, WhileIsWrittenBodyFirst) {
  absl::StatusOr<xla::HloModuleProto> proto = TextModuleAsProto();
  ASSERT_TRUE(proto.ok()) << proto.status().message();
  absl::flat_hash_map<int64_t, std::string> names;
  for (const xla::HloComputationProto& c : proto->computations()) names[c.id()] = c.name();
  int whiles = 0;
  for (const xla::HloComputationProto& c : proto->computations()) {
    for (const xla::HloInstructionProto& i : c.instructions()) {
      if (i.opcode() != "while") continue;
      ++whiles;
      ASSERT_EQ(i.called_computation_ids_size(), 2);
      EXPECT_EQ(names[i.called_computation_ids(0)], "region_0.4");  // body
      EXPECT_EQ(names[i.called_computation_ids(1)], "region_1.5");  // condition
    }
  }
  EXPECT_EQ(whiles, 1);
}

// Counts XLA's CreateFromProto insists on, by opcode.
TEST(CalledComputationsTest, WrongCountsAreRefused) {
  absl::StatusOr<xla::HloModuleProto> proto = TextModuleAsProto();
  ASSERT_TRUE(proto.ok()) << proto.status().message();
  auto first = [](xla::HloModuleProto& p, const char* opcode) -> xla::HloInstructionProto* {
    for (xla::HloComputationProto& c : *p.mutable_computations()) {
      for (xla::HloInstructionProto& i : *c.mutable_instructions()) {
        if (i.opcode() == opcode) return &i;
      }
    }
    return nullptr;
  };
  const struct {
    const char* opcode;
    const char* message;
  } kCases[] = {{"call", "call must call 1 computation, calls 2"},
                {"reduce", "reduce must call 1 computation, calls 2"},
                {"while", "while must call 2 computations, calls 3"},
                {"conditional", "conditional with 3 branch computations needs 4 operands, has 3"}};
  for (const auto& c : kCases) {
    xla::HloModuleProto bad = *proto;
    xla::HloInstructionProto* instr = first(bad, c.opcode);
    ASSERT_NE(instr, nullptr) << c.opcode;
    instr->add_called_computation_ids(instr->called_computation_ids(0));
    absl::StatusOr<std::unique_ptr<HloModule>> read = ModuleFromProto(bad);
    ASSERT_FALSE(read.ok()) << c.opcode;
    EXPECT_THAT(std::string(read.status().message()), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace hlo
