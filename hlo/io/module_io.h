// Reading modules from files (HLO text or serialized HloModuleProto, chosen by extension or,
// for stdin, by content) and writing outputs atomically.
#ifndef HLO_IO_MODULE_IO_H_
#define HLO_IO_MODULE_IO_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/parser/hlo_parser.h"

namespace hlo {

enum class ModuleFormat { kText, kProto };

// The format of `path`: .pb/.binpb are protos, .hlo/.txt and anything else text.
ModuleFormat FormatForPath(std::string_view path);

// The most ReadInput reads (2 GiB, protobuf's own limit for one message).
inline constexpr size_t kMaxInputBytes = size_t{2} << 30;

// Reads the whole file, or stdin for "-". Errors name the path: a directory, a read error, or
// more than kMaxInputBytes (an endless device such as /dev/zero stops there).
absl::StatusOr<std::string> ReadInput(const std::string& path);

// Parses `contents` read from `path`. Text errors are `PATH:LINE:COL: error: ...`; proto
// errors `PATH: error: ...`. For "-" the format is sniffed: bytes with control characters are
// a proto, anything else text (so text that is not HLO gets the parser's message). StableHLO/
// MLIR text or bytecode is refused as such, also in a proto-named file. Instruction locations
// are recorded for text input only.
absl::StatusOr<ParsedModule> ParseModuleFile(const std::string& path, std::string_view contents);

// Writes `bytes` to a temporary file beside `path` and renames it over `path`, so a reader
// never sees a partial file and a failure leaves no file behind.
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace hlo

#endif  // HLO_IO_MODULE_IO_H_
