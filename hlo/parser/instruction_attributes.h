// Parsing of the `, name=value` attributes that follow an instruction's operand list.
#ifndef HLO_PARSER_INSTRUCTION_ATTRIBUTES_H_
#define HLO_PARSER_INSTRUCTION_ATTRIBUTES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hlo/ir/hlo_instruction.h"
#include "hlo/parser/text_cursor.h"

namespace hlo {

// A name in the text that is resolved once the whole computation (or module) is read.
struct NameRef {
  std::string name;
  size_t offset = 0;                // Where the name appears, for error messages.
  std::vector<int64_t> gte_path;    // `%t#0#1` compact get-tuple-element indices.
};

// An instruction whose operands, control predecessors and called computations are still names.
struct PendingInstruction {
  std::unique_ptr<HloInstruction> instr;
  size_t offset = 0;
  bool is_root = false;
  std::vector<NameRef> operands;
  std::vector<NameRef> control_predecessors;
  // Called computations by slot (see HloInstruction::called_computations); empty names are
  // slots not given.
  std::vector<NameRef> called;
};

// Parses the value of attribute `name` (the cursor is just after `=`) into `pending`.
// `name_offset` locates the attribute name for "unknown attribute" errors.
absl::Status ParseInstructionAttribute(TextCursor& cursor, std::string_view name,
                                       size_t name_offset, PendingInstruction* pending);

// `{key=value ...}` metadata, shared with the module header.
absl::Status ParseMetadata(TextCursor& cursor, OpMetadata* metadata);
// `{key=value,...}` frontend attributes; values are quoted strings or braced text.
absl::Status ParseFrontendAttributes(TextCursor& cursor, FrontendAttributes* attrs);

}  // namespace hlo

#endif  // HLO_PARSER_INSTRUCTION_ATTRIBUTES_H_
