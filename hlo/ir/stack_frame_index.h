// The module's source-location index, XLA's StackFrameIndexProto: four flat tables (file names,
// function names, file locations, stack frames) that instructions reference through
// `metadata={... stack_frame_id=N}`. As in XLA, every id is the 1-based position of an entry in
// its table and 0 means "none" (only a frame's parent may be none).
//
// In HLO text the tables are the sections `FileNames`, `FunctionNames`, `FileLocations` and
// `StackFrames` between the `HloModule` line and the first computation; XLA writes a frame's
// parent there one above its id (`parent_frame_id=1` is "no parent"), and so do we.
#ifndef HLO_IR_STACK_FRAME_INDEX_H_
#define HLO_IR_STACK_FRAME_INDEX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace hlo {

struct StackFrameIndex {
  struct FileLocation {
    int32_t file_name_id = 0;      // Into file_names.
    int32_t function_name_id = 0;  // Into function_names.
    int32_t line = 0;
    int32_t end_line = 0;
    int32_t column = 0;
    int32_t end_column = 0;
  };
  struct StackFrame {
    int32_t file_location_id = 0;  // Into file_locations.
    int32_t parent_frame_id = 0;   // Into stack_frames; 0: the outermost frame.
  };

  std::vector<std::string> file_names;
  std::vector<std::string> function_names;
  std::vector<FileLocation> file_locations;
  std::vector<StackFrame> stack_frames;

  bool empty() const {
    return file_names.empty() && function_names.empty() && file_locations.empty() &&
           stack_frames.empty();
  }
};

// How a message shows a frame's parent id: as stored (the proto) or as the text writes it (+1).
enum class ParentIdForm { kStored, kText };

// What is wrong with file location `i` (0-based), e.g. "FileLocations entry 2: file_name_id=4
// is not a FileNames entry (there are 3)"; nullopt when its ids are in range.
std::optional<std::string> FileLocationProblem(const StackFrameIndex& index, size_t i);
// Likewise for stack frame `i`: its file_location_id, and its parent (0 or a frame).
std::optional<std::string> StackFrameProblem(const StackFrameIndex& index, size_t i,
                                             ParentIdForm form = ParentIdForm::kStored);
// OK, or InvalidArgument with the first problem above. Duplicate entries and parent cycles are
// accepted (XLA's parser accepts them; ResolveStackFrame stops at a repeated frame).
absl::Status ValidateStackFrameIndex(const StackFrameIndex& index);

// The text sections (`FileNames` ... `StackFrames`, each with a blank line before it), as XLA
// prints them; nothing when there are no file names (XLA's rule).
void AppendStackFrameIndex(const StackFrameIndex& index, std::string* out);

// One frame of a call chain.
struct ResolvedFrame {
  std::string file;
  std::string function;
  int32_t line = 0;
  int32_t column = 0;
  std::string Location() const;  // "FILE:LINE".
};
// The frames of `stack_frame_id`, innermost first, following parents; empty for 0 or an id
// that is not a frame. Stops at a frame already listed or one whose ids are out of range.
std::vector<ResolvedFrame> ResolveStackFrame(const StackFrameIndex& index, int64_t stack_frame_id);
// The chain as "FILE:LINE <- FILE:LINE ..." (innermost first); "" when there is none.
std::string FormatStackFrame(const StackFrameIndex& index, int64_t stack_frame_id);

}  // namespace hlo

#endif  // HLO_IR_STACK_FRAME_INDEX_H_
