// The stack-frame index through HloModuleProto.stack_frame_index: XLA's field numbers, ids
// stored as XLA stores them (a parent of 0 is none), a module -> proto -> text round trip, and
// ids out of range refused on the way in.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/ir/hlo_printer.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/proto/hlo_proto_util.h"

namespace hlo {
namespace {

using ::testing::HasSubstr;

constexpr char kText[] = R"(HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%x), metadata={op_name="neg" stack_frame_id=2}
}
)";

// kText with two frames: f (line 10) called from <module> (line 18).
std::unique_ptr<HloModule> ModuleWithFrames() {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kText, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return nullptr;
  StackFrameIndex* index = (*m)->mutable_stack_frame_index();
  index->file_names = {"a.py"};
  index->function_names = {"<module>", "f"};
  index->file_locations = {{1, 1, 18, 18, 10, 39}, {1, 2, 10, 11, 8, 22}};
  index->stack_frames = {{1, 0}, {2, 1}};
  return *std::move(m);
}

TEST(StackFrameProtoTest, XlaFieldNumbers) {
  using Location = xla::StackFrameIndexProto::FileLocation;
  using Frame = xla::StackFrameIndexProto::StackFrame;
  const struct {
    const google::protobuf::Descriptor* message;
    const char* field;
    int number;
  } kFields[] = {
      {xla::HloModuleProto::descriptor(), "stack_frame_index", 17},
      {xla::OpMetadata::descriptor(), "stack_frame_id", 15},
      {xla::StackFrameIndexProto::descriptor(), "file_names", 1},
      {xla::StackFrameIndexProto::descriptor(), "function_names", 2},
      {xla::StackFrameIndexProto::descriptor(), "file_locations", 3},
      {xla::StackFrameIndexProto::descriptor(), "stack_frames", 4},
      {Location::descriptor(), "file_name_id", 1},
      {Location::descriptor(), "function_name_id", 2},
      {Location::descriptor(), "line", 3},
      {Location::descriptor(), "column", 4},
      {Location::descriptor(), "end_line", 5},
      {Location::descriptor(), "end_column", 6},
      {Frame::descriptor(), "file_location_id", 1},
      {Frame::descriptor(), "parent_frame_id", 2},
  };
  for (const auto& f : kFields) {
    const google::protobuf::FieldDescriptor* field = f.message->FindFieldByName(f.field);
    ASSERT_NE(field, nullptr) << f.field;
    EXPECT_EQ(field->number(), f.number) << f.field;
  }
}

TEST(StackFrameProtoTest, WrittenAsXlaStoresIt) {
  std::unique_ptr<HloModule> m = ModuleWithFrames();
  ASSERT_NE(m, nullptr);
  absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(*m);
  ASSERT_TRUE(proto.ok()) << proto.status().message();
  const xla::StackFrameIndexProto& index = proto->stack_frame_index();
  ASSERT_EQ(index.file_names_size(), 1);
  EXPECT_EQ(index.file_names(0), "a.py");
  ASSERT_EQ(index.function_names_size(), 2);
  ASSERT_EQ(index.file_locations_size(), 2);
  EXPECT_EQ(index.file_locations(1).function_name_id(), 2);
  EXPECT_EQ(index.file_locations(1).end_line(), 11);
  ASSERT_EQ(index.stack_frames_size(), 2);
  EXPECT_EQ(index.stack_frames(0).parent_frame_id(), 0);
  EXPECT_EQ(index.stack_frames(1).parent_frame_id(), 1);
  EXPECT_EQ(index.stack_frames(1).file_location_id(), 2);
}

TEST(StackFrameProtoTest, TextProtoTextRoundTrip) {
  std::unique_ptr<HloModule> m = ModuleWithFrames();
  ASSERT_NE(m, nullptr);
  std::string printed;
  PrintModule(*m, &printed);
  absl::StatusOr<std::unique_ptr<HloModule>> back = ParseModuleProtoBytes(SerializeModule(*m));
  ASSERT_TRUE(back.ok()) << back.status().message();
  std::string again;
  PrintModule(**back, &again);
  EXPECT_EQ(again, printed);
  EXPECT_NE(again.find("\nStackFrames\n1 {file_location_id=1 parent_frame_id=1}\n"
                       "2 {file_location_id=2 parent_frame_id=2}\n"),
            std::string::npos)
      << again;
}

TEST(StackFrameProtoTest, IdsOutOfRangeAreRefused) {
  std::unique_ptr<HloModule> m = ModuleWithFrames();
  ASSERT_NE(m, nullptr);
  absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(*m);
  ASSERT_TRUE(proto.ok()) << proto.status().message();
  xla::HloModuleProto bad_parent = *proto;
  bad_parent.mutable_stack_frame_index()->mutable_stack_frames(1)->set_parent_frame_id(3);
  absl::StatusOr<std::unique_ptr<HloModule>> read = ModuleFromProto(bad_parent);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(std::string(read.status().message()),
              HasSubstr("stack_frame_index: StackFrames entry 2: parent_frame_id=3 is not a "
                        "StackFrames entry (there are 2)"));
  xla::HloModuleProto bad_file = *proto;
  bad_file.mutable_stack_frame_index()->mutable_file_locations(0)->set_file_name_id(0);
  read = ModuleFromProto(bad_file);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(std::string(read.status().message()),
              HasSubstr("FileLocations entry 1: file_name_id=0 is not a FileNames entry"));
}

}  // namespace
}  // namespace hlo
