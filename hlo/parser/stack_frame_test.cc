// The stack-frame sections XLA's dumps carry between the `HloModule` line and the first
// computation (FileNames, FunctionNames, FileLocations, StackFrames): parsed into the module's
// StackFrameIndex with XLA's id conventions, printed back in XLA's form (a fixpoint), checked
// for ids out of range with located errors, and resolved to "file:line" chains.
#include "gtest/gtest.h"
#include "hlo/ir/hlo_printer.h"
#include "hlo/ir/stack_frame_index.h"
#include "hlo/parser/hlo_parser.h"

namespace hlo {
namespace {

constexpr char kHeader[] = "HloModule jit_mlp, num_partitions=8\n";
constexpr char kSections[] = R"(
FileNames
1 "jax_examples/mlp.py"

FunctionNames
1 "<module>"
2 "mlp"

FileLocations
1 {file_name_id=1 function_name_id=1 line=18 end_line=18 column=10 end_column=39}
2 {file_name_id=1 function_name_id=2 line=10 end_line=10 column=8 end_column=22}
3 {file_name_id=1 function_name_id=2 line=11 end_line=11 column=8 end_column=84}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=2}
)";
constexpr char kBody[] = R"(
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%x), metadata={op_name="jit(mlp)/neg" stack_frame_id=3}
}
)";

std::string Text(std::string_view sections = kSections) {
  return std::string(kHeader) + std::string(sections) + kBody;
}

std::string Print(const HloModule& m) {
  std::string out;
  PrintModule(m, &out);
  return out;
}

std::string ParseError(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "t.hlo");
  EXPECT_FALSE(m.ok()) << Print(**m);
  return m.ok() ? "" : std::string(m.status().message());
}

TEST(StackFrameSectionsTest, ParsedWithXlaIds) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(Text(), "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const StackFrameIndex& index = (*m)->stack_frame_index();
  EXPECT_EQ(index.file_names, std::vector<std::string>{"jax_examples/mlp.py"});
  EXPECT_EQ(index.function_names, (std::vector<std::string>{"<module>", "mlp"}));
  ASSERT_EQ(index.file_locations.size(), 3u);
  const StackFrameIndex::FileLocation& loc = index.file_locations[2];
  EXPECT_EQ(loc.file_name_id, 1);
  EXPECT_EQ(loc.function_name_id, 2);
  EXPECT_EQ(loc.line, 11);
  EXPECT_EQ(loc.end_line, 11);
  EXPECT_EQ(loc.column, 8);
  EXPECT_EQ(loc.end_column, 84);
  // The text writes a parent one above the proto's value (XLA's printer adds 1): `1` is none.
  ASSERT_EQ(index.stack_frames.size(), 3u);
  EXPECT_EQ(index.stack_frames[0].parent_frame_id, 0);
  EXPECT_EQ(index.stack_frames[1].parent_frame_id, 1);
  EXPECT_EQ(index.stack_frames[2].parent_frame_id, 1);
  EXPECT_EQ(index.stack_frames[2].file_location_id, 3);
}

TEST(StackFrameSectionsTest, PrintedBackInXlaFormAsAFixpoint) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(Text(), "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const std::string printed = Print(**m);
  EXPECT_NE(printed.find(kSections), std::string::npos) << printed;
  absl::StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(printed, "p.hlo");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(Print(**again), printed);
}

TEST(StackFrameSectionsTest, NamesWithEscapesAndOctalRoundTrip) {
  // XLA writes names with absl::CEscape: quotes, backslashes and bytes >= 0x80 as octal.
  std::string sections = kSections;
  sections.replace(sections.find("\"mlp\""), 5, R"("m\"l\\p \303\251")");
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(Text(sections), "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->stack_frame_index().function_names[1], "m\"l\\p \xc3\xa9");
  absl::StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(Print(**m), "p.hlo");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)->stack_frame_index().function_names[1], "m\"l\\p \xc3\xa9");
}

TEST(StackFrameSectionsTest, AttributesInAnyOrderWithCommas) {
  std::string sections = kSections;
  const std::string old = "2 {file_location_id=2 parent_frame_id=2}";
  sections.replace(sections.find(old), old.size(), "2 {parent_frame_id=2, file_location_id=2}");
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(Text(sections), "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->stack_frame_index().stack_frames[1].file_location_id, 2);
}

TEST(StackFrameSectionsTest, AComputationNamedFileNamesIsStillAComputation) {
  absl::StatusOr<std::unique_ptr<HloModule>> m =
      ParseHloModule("HloModule m\nFileNames {\n  ROOT p = f32[] parameter(0)\n}\n", "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->entry_computation()->name(), "FileNames");
  EXPECT_TRUE((*m)->stack_frame_index().empty());
}

std::string Replace(std::string text, std::string_view old, std::string_view replacement) {
  size_t at = text.find(old);
  EXPECT_NE(at, std::string::npos) << old;
  if (at != std::string::npos) text.replace(at, old.size(), replacement);
  return text;
}

TEST(StackFrameSectionsTest, IdsOutOfRangeAreLocatedErrors) {
  // Line 12 is FileLocations entry 2, line 17 StackFrames entry 2 (the header is line 1).
  EXPECT_EQ(ParseError(Replace(Text(), "2 {file_name_id=1", "2 {file_name_id=2")),
            "t.hlo:12:1: error: FileLocations entry 2: file_name_id=2 is not a FileNames entry "
            "(there is 1)");
  EXPECT_EQ(ParseError(Replace(Text(), "function_name_id=2 line=10", "function_name_id=0 line=10")),
            "t.hlo:12:1: error: FileLocations entry 2: function_name_id=0 is not a FunctionNames "
            "entry (there are 2)");
  EXPECT_EQ(ParseError(Replace(Text(), "2 {file_location_id=2", "2 {file_location_id=7")),
            "t.hlo:17:1: error: StackFrames entry 2: file_location_id=7 is not a FileLocations "
            "entry (there are 3)");
  EXPECT_EQ(ParseError(Replace(Text(), "2 {file_location_id=2 parent_frame_id=2}",
                               "2 {file_location_id=2 parent_frame_id=5}")),
            "t.hlo:17:1: error: StackFrames entry 2: parent_frame_id=5 is not a StackFrames entry "
            "(there are 3)");
  EXPECT_EQ(ParseError(Replace(Text(), "2 {file_location_id=2 parent_frame_id=2}",
                               "2 {file_location_id=2 parent_frame_id=0}")),
            "t.hlo:17:1: error: StackFrames entry 2: parent_frame_id=0 is not a StackFrames entry "
            "(there are 3)");
}

TEST(StackFrameSectionsTest, MalformedSectionsAreLocatedErrors) {
  EXPECT_EQ(ParseError(Replace(Text(), "FunctionNames", "FunctionName")),
            "t.hlo:6:1: error: expected 'FunctionNames' after the FileNames section, found "
            "'FunctionName'");
  const std::string no_frames(kSections, std::string_view(kSections).find("StackFrames"));
  EXPECT_EQ(ParseError(Text(no_frames)),
            "t.hlo:16:1: error: expected 'StackFrames' after the FileLocations section, found "
            "'ENTRY'");
  EXPECT_EQ(ParseError(Replace(Text(), " end_column=84}", "}")),
            "t.hlo:13:3: error: FileLocations entry 3: end_column is missing");
  EXPECT_EQ(ParseError(Replace(Text(), "line=18", "line=18 lines=2")),
            "t.hlo:11:46: error: unknown FileLocations attribute 'lines'");
  EXPECT_EQ(ParseError(Replace(Text(), "line=18", "line=18 line=2")),
            "t.hlo:11:46: error: FileLocations attribute 'line' given twice");
  EXPECT_EQ(ParseError(Replace(Text(), "line=18", "line=99999999999")),
            "t.hlo:11:43: error: line=99999999999 is out of the int32 range");
  EXPECT_EQ(ParseError(Replace(Text(), "1 \"jax_examples/mlp.py\"", "1 jax_examples")),
            "t.hlo:4:3: error: expected a quoted string for a file name, found 'jax_examples'");
}

TEST(StackFrameSectionsTest, ResolvedToAFileLineChain) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(Text(), "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const StackFrameIndex& index = (*m)->stack_frame_index();
  const int64_t id = (*m)->entry_computation()->root_instruction()->attrs().metadata.stack_frame_id;
  EXPECT_EQ(FormatStackFrame(index, id), "jax_examples/mlp.py:11 <- jax_examples/mlp.py:18");
  std::vector<ResolvedFrame> frames = ResolveStackFrame(index, id);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].function, "mlp");
  EXPECT_EQ(frames[0].column, 8);
  EXPECT_EQ(frames[1].function, "<module>");
  EXPECT_EQ(FormatStackFrame(index, 0), "");
  EXPECT_EQ(FormatStackFrame(index, 4), "");  // Not a frame.
}

TEST(StackFrameSectionsTest, ResolvingACycleStops) {
  StackFrameIndex index;
  index.file_names = {"a.py"};
  index.function_names = {"f"};
  index.file_locations = {{1, 1, 5, 5, 1, 2}};
  index.stack_frames = {{1, 2}, {1, 1}};  // 1 -> 2 -> 1: valid ids, but a loop.
  EXPECT_TRUE(ValidateStackFrameIndex(index).ok());
  EXPECT_EQ(FormatStackFrame(index, 1), "a.py:5 <- a.py:5");
}

}  // namespace
}  // namespace hlo
