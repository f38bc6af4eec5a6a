// Range checks, XLA's text form and call-chain resolution of the stack-frame index. An id is
// checked against the size of the table it names; the checks are what StackFrames::FromProto
// in XLA requires (XLA also refuses duplicate entries, which its own printer never writes and
// which are harmless here).
#include "hlo/ir/stack_frame_index.h"

#include "absl/container/flat_hash_set.h"
#include "hlo/ir/hlo_printer.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

// "SECTION entry N: FIELD=ID is not a TABLE entry (there are K)" when ID is outside [1, K].
std::optional<std::string> IdProblem(std::string_view section, size_t entry, std::string_view field,
                                     int64_t shown_id, int64_t id, std::string_view table,
                                     size_t count) {
  if (id >= 1 && static_cast<size_t>(id) <= count) return std::nullopt;
  return StrCat(section, " entry ", entry + 1, ": ", field, "=", shown_id, " is not a ", table,
                " entry (there ", count == 1 ? "is " : "are ", count, ")");
}

}  // namespace

std::optional<std::string> FileLocationProblem(const StackFrameIndex& index, size_t i) {
  const StackFrameIndex::FileLocation& loc = index.file_locations[i];
  if (auto problem = IdProblem("FileLocations", i, "file_name_id", loc.file_name_id,
                               loc.file_name_id, "FileNames", index.file_names.size())) {
    return problem;
  }
  return IdProblem("FileLocations", i, "function_name_id", loc.function_name_id,
                   loc.function_name_id, "FunctionNames", index.function_names.size());
}

std::optional<std::string> StackFrameProblem(const StackFrameIndex& index, size_t i,
                                             ParentIdForm form) {
  const StackFrameIndex::StackFrame& frame = index.stack_frames[i];
  if (auto problem =
          IdProblem("StackFrames", i, "file_location_id", frame.file_location_id,
                    frame.file_location_id, "FileLocations", index.file_locations.size())) {
    return problem;
  }
  if (frame.parent_frame_id == 0) return std::nullopt;
  const int64_t shown = int64_t{frame.parent_frame_id} + (form == ParentIdForm::kText ? 1 : 0);
  return IdProblem("StackFrames", i, "parent_frame_id", shown, frame.parent_frame_id, "StackFrames",
                   index.stack_frames.size());
}

absl::Status ValidateStackFrameIndex(const StackFrameIndex& index) {
  for (size_t i = 0; i < index.file_locations.size(); ++i) {
    if (auto problem = FileLocationProblem(index, i)) return absl::InvalidArgumentError(*problem);
  }
  for (size_t i = 0; i < index.stack_frames.size(); ++i) {
    if (auto problem = StackFrameProblem(index, i)) return absl::InvalidArgumentError(*problem);
  }
  return absl::OkStatus();
}

namespace {

void AppendNames(std::string_view title, const std::vector<std::string>& names, std::string* out) {
  StrAppend(out, "\n", title, "\n");
  for (size_t i = 0; i < names.size(); ++i) {
    StrAppend(out, i + 1, " ");
    AppendQuoted(names[i], out);
    out->push_back('\n');
  }
}

}  // namespace

void AppendStackFrameIndex(const StackFrameIndex& index, std::string* out) {
  if (index.file_names.empty()) return;
  AppendNames("FileNames", index.file_names, out);
  AppendNames("FunctionNames", index.function_names, out);
  out->append("\nFileLocations\n");
  for (size_t i = 0; i < index.file_locations.size(); ++i) {
    const StackFrameIndex::FileLocation& l = index.file_locations[i];
    StrAppend(out, i + 1, " {file_name_id=", l.file_name_id,
              " function_name_id=", l.function_name_id, " line=", l.line, " end_line=", l.end_line,
              " column=", l.column, " end_column=", l.end_column, "}\n");
  }
  out->append("\nStackFrames\n");
  for (size_t i = 0; i < index.stack_frames.size(); ++i) {
    const StackFrameIndex::StackFrame& f = index.stack_frames[i];
    StrAppend(out, i + 1, " {file_location_id=", f.file_location_id,
              " parent_frame_id=", int64_t{f.parent_frame_id} + 1, "}\n");
  }
}

std::string ResolvedFrame::Location() const { return StrCat(file, ":", line); }

namespace {

// Frame `id` (1-based) resolved, or nullopt when it or the ids it holds are out of range.
std::optional<ResolvedFrame> Resolve(const StackFrameIndex& index, int64_t id) {
  auto in = [](int64_t id, size_t size) { return id >= 1 && static_cast<size_t>(id) <= size; };
  if (!in(id, index.stack_frames.size())) return std::nullopt;
  const int64_t location_id = index.stack_frames[id - 1].file_location_id;
  if (!in(location_id, index.file_locations.size())) return std::nullopt;
  const StackFrameIndex::FileLocation& loc = index.file_locations[location_id - 1];
  if (!in(loc.file_name_id, index.file_names.size()) ||
      !in(loc.function_name_id, index.function_names.size())) {
    return std::nullopt;
  }
  return ResolvedFrame{index.file_names[loc.file_name_id - 1],
                       index.function_names[loc.function_name_id - 1], loc.line, loc.column};
}

}  // namespace

std::vector<ResolvedFrame> ResolveStackFrame(const StackFrameIndex& index, int64_t stack_frame_id) {
  std::vector<ResolvedFrame> frames;
  absl::flat_hash_set<int64_t> seen;
  for (int64_t id = stack_frame_id; id != 0 && seen.insert(id).second;
       id = index.stack_frames[id - 1].parent_frame_id) {
    std::optional<ResolvedFrame> frame = Resolve(index, id);
    if (!frame) break;
    frames.push_back(std::move(*frame));
  }
  return frames;
}

std::string FormatStackFrame(const StackFrameIndex& index, int64_t stack_frame_id) {
  std::string out;
  for (const ResolvedFrame& frame : ResolveStackFrame(index, stack_frame_id)) {
    if (!out.empty()) out.append(" <- ");
    out.append(frame.Location());
  }
  return out;
}

}  // namespace hlo
