// HLO text printer. The output is the canonical form that hlo/parser reads back:
// print(parse(print(m))) == print(m). Names are printed with `%`, operands without their shapes,
// attributes in a fixed order.
#ifndef HLO_IR_HLO_PRINTER_H_
#define HLO_IR_HLO_PRINTER_H_

#include <string>
#include <string_view>

#include "hlo/ir/hlo_module.h"

namespace hlo {

// Appends the whole module, ending with a newline.
void PrintModule(const HloModule& module, std::string* out);
// Appends one computation (header line, instructions, closing brace), no trailing newline.
void PrintComputation(const HloComputation& computation, bool is_entry, std::string* out);
// Appends one instruction without indentation, `ROOT` prefix or newline.
void PrintInstruction(const HloInstruction& instr, std::string* out);

// `"..."` with backslash escapes for quotes, backslashes and control characters.
void AppendQuoted(std::string_view text, std::string* out);
// `{op_type="..." op_name="..." source_line=N ...}`: the fields that are set, in a fixed order.
void AppendOpMetadata(const OpMetadata& metadata, std::string* out);
// `{a,b,c}`.
void AppendBracedInts(const std::vector<int64_t>& values, std::string* out);
// The text of a program shape `(f32[2]{0}, s32[])->f32[]`.
void AppendProgramShape(const ProgramShape& shape, std::string* out);
// `{{0,1},{2,3}}` or `[2,2]<=[4]` (the iota form when that is how the groups are held).
void AppendReplicaGroups(const ReplicaGroups& groups, std::string* out);
// dim_labels text such as `b01f_01io->b01f`.
std::string ConvolutionDimensionNumbersToString(const ConvolutionDimensionNumbers& dnums);

}  // namespace hlo

#endif  // HLO_IR_HLO_PRINTER_H_
