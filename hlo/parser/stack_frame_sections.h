// The stack-frame sections of XLA's HLO text, between the `HloModule` line and the first
// computation:
//   FileNames      N "file"                       (one line per entry)
//   FunctionNames  N "function"
//   FileLocations  N {file_name_id=I function_name_id=I line=I end_line=I column=I end_column=I}
//   StackFrames    N {file_location_id=I parent_frame_id=I}
// As in XLA's parser: all four sections in this order once `FileNames` is seen, entry labels N
// read and ignored, attributes in any order (commas optional) and all required, int32 values,
// and a frame's parent stored one below the text's value (the text's 1 is "no parent").
#ifndef HLO_PARSER_STACK_FRAME_SECTIONS_H_
#define HLO_PARSER_STACK_FRAME_SECTIONS_H_

#include "absl/status/statusor.h"
#include "hlo/ir/stack_frame_index.h"
#include "hlo/parser/text_cursor.h"

namespace hlo {

// Reads the sections into `index` when the cursor is at `FileNames` (and not at a computation
// of that name) and returns true; returns false, consuming nothing, when they are absent.
// Ids out of range are errors located at their entry.
absl::StatusOr<bool> ParseStackFrameSections(TextCursor& cursor, StackFrameIndex* index);

}  // namespace hlo

#endif  // HLO_PARSER_STACK_FRAME_SECTIONS_H_
