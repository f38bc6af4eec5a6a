// The inputs of one spmd-partition call: command-line arguments expanded into a list of
// modules. An argument is a module file, `-` (stdin), a directory (its .hlo, .txt, .pb and
// .binpb files; with `recursive` also those in subdirectories), or `@LIST` (a file naming one
// argument per line; blank lines and lines starting with '#' are skipped).
#ifndef TOOLS_BATCH_INPUT_LIST_H_
#define TOOLS_BATCH_INPUT_LIST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tools {

struct BatchInput {
  std::string path;  // What to read ("-" for stdin).
  // Where its outputs go, relative to the output or dump directory, without extension:
  // the file's stem, or for a file found in a directory its path below that directory
  // (`sub/model` for DIR/sub/model.hlo). "stdin" for "-".
  std::string relative_stem;
  // The stable key that names it in statistics and baselines, whatever was typed: for a file
  // found in a directory its path below that directory (`sub/model.hlo`); for a file named
  // directly its lexically normalised path, relative to the current directory when inside it
  // (`./x/../m.hlo` and `$PWD/m.hlo` are both `m.hlo`); "-" for stdin.
  std::string key;
};

struct InputList {
  std::vector<BatchInput> inputs;  // In argument order; a directory's files sorted by path.
  bool batch = false;              // Several inputs, or any directory or @LIST argument.
};

// Expands `args`. Errors (exit code 2 in the caller) are `PATH: error: ...` for an unreadable
// list or directory, a directory without modules, a list without inputs, or a nested @LIST.
absl::StatusOr<InputList> ExpandInputs(const std::vector<std::string>& args, bool recursive);

// The first two inputs that would write the same output (same relative_stem), as an error
// naming both; OK when all differ.
absl::Status CheckDistinctOutputs(const InputList& list);

// The first two inputs with the same key, as an error naming both; OK when all differ.
absl::Status CheckDistinctKeys(const InputList& list);

}  // namespace tools

#endif  // TOOLS_BATCH_INPUT_LIST_H_
