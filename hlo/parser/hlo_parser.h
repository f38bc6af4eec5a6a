// Parser for XLA's HLO text format.
//
// Accepts what XLA prints and JAX dumps: `%name` and bare names, typed (`f32[2] %x`) and untyped
// operands, layouts, comments, `ROOT`/`ENTRY` (defaulting to the last instruction / last
// computation), constants, and the attribute set listed in attribute_table.cc. Errors are
// InvalidArgument statuses whose message is `FILE:LINE:COL: error: MESSAGE`, naming the
// offending token. The parser checks syntax and name resolution only; run the verifier for
// semantic checks.
#ifndef HLO_PARSER_HLO_PARSER_H_
#define HLO_PARSER_HLO_PARSER_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"

namespace hlo {

// A parsed module plus where each instruction was defined, so that later errors (verifier,
// partitioner) can be reported as FILE:LINE:COL.
struct ParsedModule {
  std::unique_ptr<HloModule> module;
  // "line:col" of each instruction's name, keyed by instruction.
  absl::flat_hash_map<const HloInstruction*, std::pair<int64_t, int64_t>> locations;
  // "line:col" of each instruction's name, keyed by that name: still valid after passes have
  // removed or replaced instructions (Locate reads it).
  absl::flat_hash_map<std::string, std::pair<int64_t, int64_t>> instruction_positions;
  // "line:col" of each header attribute (`entry_computation_layout`, ...), keyed by its name.
  absl::flat_hash_map<std::string, std::pair<int64_t, int64_t>> header_attributes;
  std::string filename;

  // `FILE:LINE:COL: error: message` for `instr`; without an instruction, at the first header
  // attribute the message names (a module-level finding such as an entry_computation_layout
  // mismatch); else `FILE: error: message`.
  std::string FormatError(const HloInstruction* instr, std::string_view message) const;
  // `message` placed at the first instruction it names (`%name`) that this file defines, else
  // as FormatError(nullptr, ...); a message that already names its place passes through.
  std::string Locate(std::string_view message) const;
  // The position of instruction `name` of this file, if it defines one.
  std::optional<std::pair<int64_t, int64_t>> PositionOf(std::string_view name) const;
};

absl::StatusOr<ParsedModule> ParseHloModuleWithLocations(std::string_view text,
                                                         std::string_view filename);
absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                          std::string_view filename = "<input>");

}  // namespace hlo

#endif  // HLO_PARSER_HLO_PARSER_H_
