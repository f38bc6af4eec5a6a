// StackFrameIndex <-> xla::StackFrameIndexProto: the four tables copied entry for entry (ids
// keep XLA's 1-based meaning on both sides), names checked for UTF-8 on the way out and ids
// for range on the way in.
#include "hlo/proto/proto_internal.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {
namespace proto_internal {

absl::Status StackFrameIndexToProto(const StackFrameIndex& index,
                                    xla::StackFrameIndexProto* proto) {
  for (const std::string& name : index.file_names) {
    RETURN_IF_ERROR(CheckUtf8(name, "stack frame file name"));
    proto->add_file_names(name);
  }
  for (const std::string& name : index.function_names) {
    RETURN_IF_ERROR(CheckUtf8(name, "stack frame function name"));
    proto->add_function_names(name);
  }
  for (const StackFrameIndex::FileLocation& l : index.file_locations) {
    xla::StackFrameIndexProto::FileLocation* out = proto->add_file_locations();
    out->set_file_name_id(l.file_name_id);
    out->set_function_name_id(l.function_name_id);
    out->set_line(l.line);
    out->set_end_line(l.end_line);
    out->set_column(l.column);
    out->set_end_column(l.end_column);
  }
  for (const StackFrameIndex::StackFrame& f : index.stack_frames) {
    xla::StackFrameIndexProto::StackFrame* out = proto->add_stack_frames();
    out->set_file_location_id(f.file_location_id);
    out->set_parent_frame_id(f.parent_frame_id);
  }
  return absl::OkStatus();
}

absl::StatusOr<StackFrameIndex> StackFrameIndexFromProto(const xla::StackFrameIndexProto& proto) {
  StackFrameIndex index;
  index.file_names.assign(proto.file_names().begin(), proto.file_names().end());
  index.function_names.assign(proto.function_names().begin(), proto.function_names().end());
  for (const xla::StackFrameIndexProto::FileLocation& l : proto.file_locations()) {
    index.file_locations.push_back({l.file_name_id(), l.function_name_id(), l.line(), l.end_line(),
                                    l.column(), l.end_column()});
  }
  for (const xla::StackFrameIndexProto::StackFrame& f : proto.stack_frames()) {
    index.stack_frames.push_back({f.file_location_id(), f.parent_frame_id()});
  }
  absl::Status valid = ValidateStackFrameIndex(index);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(StrCat("stack_frame_index: ", valid.message()));
  }
  return index;
}

}  // namespace proto_internal
}  // namespace hlo
