// Inputs that are not HLO but are what JAX hands out by default (StableHLO/MLIR text, MLIR
// bytecode) are refused with a message that says what they are and how to export HLO; other
// text keeps the parser's own message.
#include "hlo/parser/foreign_input.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"

namespace hlo {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ParseError(std::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "m.mlir");
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : std::string(m.status().message());
}

constexpr char kStableHlo[] =
    "module @jit_mlp attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n"
    "  func.func public @main(%arg0: tensor<64x256xf32>) -> tensor<64x256xf32> {\n"
    "    return %arg0 : tensor<64x256xf32>\n  }\n}\n";

TEST(ForeignInputTest, StableHloTextIsNamedWithTheWayToHlo) {
  const std::string message = ParseError(kStableHlo);
  EXPECT_THAT(message, StartsWith("m.mlir:1:1: error: this is StableHLO/MLIR text (it starts "
                                  "with 'module @jit_mlp attributes {mhlo.num_partitions = ...'), "
                                  "not HLO; "));
  EXPECT_THAT(message, HasSubstr("jax.jit(f).lower(...).as_text(dialect=\"hlo\")"));
  EXPECT_THAT(message, HasSubstr(".compiler_ir(\"hlo\").as_hlo_text()"));
  EXPECT_THAT(message, HasSubstr(".compiler_ir(\"hlo\").as_serialized_hlo_module_proto()"));
}

TEST(ForeignInputTest, OtherMlirBeginnings) {
  EXPECT_THAT(ParseError("#loc1 = loc(\"x\")\nmodule @jit_f {\n}\n"),
              StartsWith("m.mlir:1:1: error: this is StableHLO/MLIR text (it starts with "
                         "'#loc1 = loc(\"x\")'), not HLO"));
  EXPECT_THAT(ParseError("// a comment\n\n  func.func @main() {\n}\n"),
              StartsWith("m.mlir:3:3: error: this is StableHLO/MLIR text (it starts with "
                         "'func.func @main() {')"));
  EXPECT_THAT(ParseError("\"builtin.module\"() ({\n}) : () -> ()\n"),
              StartsWith("m.mlir:1:1: error: this is StableHLO/MLIR text"));
  EXPECT_THAT(ParseError(std::string("ML\xefR\x00\x01", 6)),
              StartsWith("m.mlir:1:1: error: this is MLIR bytecode (serialized StableHLO), not "
                         "HLO; "));
}

TEST(ForeignInputTest, OtherTextKeepsTheParsersMessage) {
  EXPECT_EQ(ParseError("Module m\n"), "m.mlir:1:1: error: expected 'HloModule', found 'Module'");
  EXPECT_EQ(ParseError("modules are here\n"),
            "m.mlir:1:1: error: expected 'HloModule', found 'modules'");
  EXPECT_FALSE(DescribeNonHloInput("HloModule m\nENTRY e {}\n").has_value());
}

}  // namespace
}  // namespace hlo
