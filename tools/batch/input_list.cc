// Expansion is a single pass over the arguments; @LIST lines are expanded like arguments
// (directories included) but may not name further lists. Directory listings are sorted so the
// order, and hence every output, is the same on every file system.
#include "tools/batch/input_list.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "hlo/strings.h"

namespace tools {
namespace {

namespace fs = std::filesystem;

bool IsModuleFile(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".hlo" || ext == ".txt" || ext == ".pb" || ext == ".binpb";
}

std::string StemOf(const fs::path& relative) {
  fs::path p = relative;
  p.replace_extension();
  return p.generic_string();
}

// A named file's key: normalised, and relative to the current directory when inside it.
std::string KeyOf(const std::string& arg) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(arg, ec).lexically_normal();
  const fs::path cwd = fs::current_path(ec);
  if (!ec) {
    const fs::path relative = absolute.lexically_relative(cwd);
    if (!relative.empty() && *relative.begin() != "..") return relative.generic_string();
  }
  return absolute.generic_string();
}

absl::Status AddDirectory(const std::string& dir, bool recursive, InputList* list) {
  std::vector<fs::path> found;
  std::error_code ec;
  auto consider = [&](const fs::directory_entry& entry) {
    std::error_code type_ec;
    // A link to nothing is kept: reading it fails with its name (it was skipped, exit 0).
    const bool dangling = entry.is_symlink(type_ec) && !fs::exists(entry.path(), type_ec);
    if ((entry.is_regular_file(type_ec) || dangling) && IsModuleFile(entry.path())) {
      found.push_back(entry.path());
    }
  };
  if (recursive) {
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      consider(*it);
    }
  } else {
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) consider(*it);
  }
  if (ec)
    return absl::InvalidArgumentError(
        hlo::StrCat(dir, ": error: cannot list directory: ", ec.message()));
  if (found.empty()) {
    return absl::InvalidArgumentError(
        hlo::StrCat(dir, ": error: no .hlo, .txt, .pb or .binpb files",
                    recursive ? "" : " (--recursive also searches subdirectories)"));
  }
  std::sort(found.begin(), found.end());
  // `dir` normalised without a trailing separator, so `d/`, `./d` and `x/../d` give one key.
  const fs::path base = (fs::path(dir) / "x").lexically_normal().parent_path();
  for (const fs::path& path : found) {
    const fs::path relative = path.lexically_normal().lexically_relative(base);
    list->inputs.push_back({path.string(), StemOf(relative), relative.generic_string()});
  }
  return absl::OkStatus();
}

absl::Status AddArgument(const std::string& arg, bool recursive, InputList* list) {
  if (arg == "-") {
    list->inputs.push_back({arg, "stdin", "-"});
    return absl::OkStatus();
  }
  std::error_code ec;
  if (fs::is_directory(arg, ec)) {
    list->batch = true;
    return AddDirectory(arg, recursive, list);
  }
  list->inputs.push_back({arg, StemOf(fs::path(arg).filename()), KeyOf(arg)});
  return absl::OkStatus();
}

absl::Status AddList(const std::string& list_path, bool recursive, InputList* list) {
  std::ifstream in(list_path);
  if (!in)
    return absl::InvalidArgumentError(hlo::StrCat(list_path, ": error: cannot read input list"));
  list->batch = true;
  const size_t before = list->inputs.size();
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    const size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos || line[begin] == '#') continue;
    const std::string arg = line.substr(begin, line.find_last_not_of(" \t\r") + 1 - begin);
    if (arg[0] == '@') {
      return absl::InvalidArgumentError(hlo::StrCat(list_path, ":", line_no,
                                                    ":1: error: an input list cannot name "
                                                    "another list"));
    }
    if (absl::Status s = AddArgument(arg, recursive, list); !s.ok()) return s;
  }
  if (list->inputs.size() == before) {
    return absl::InvalidArgumentError(
        hlo::StrCat(list_path, ": error: the input list names no inputs"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<InputList> ExpandInputs(const std::vector<std::string>& args, bool recursive) {
  InputList list;
  for (const std::string& arg : args) {
    absl::Status s = arg.size() > 1 && arg[0] == '@' ? AddList(arg.substr(1), recursive, &list)
                                                     : AddArgument(arg, recursive, &list);
    if (!s.ok()) return s;
  }
  list.batch = list.batch || list.inputs.size() > 1;
  return list;
}

absl::Status CheckDistinctOutputs(const InputList& list) {
  absl::flat_hash_map<std::string, const BatchInput*> seen;
  for (const BatchInput& input : list.inputs) {
    auto [it, inserted] = seen.emplace(input.relative_stem, &input);
    if (!inserted) {
      return absl::InvalidArgumentError(
          hlo::StrCat(input.path, ": error: its output would overwrite that of ", it->second->path,
                      " ('", input.relative_stem, "'); give inputs distinct names"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDistinctKeys(const InputList& list) {
  absl::flat_hash_map<std::string, const BatchInput*> seen;
  for (const BatchInput& input : list.inputs) {
    auto [it, inserted] = seen.emplace(input.key, &input);
    if (!inserted) {
      return absl::InvalidArgumentError(hlo::StrCat(
          input.path, ": error: its key '", input.key, "' is also that of ", it->second->path,
          "; a baseline cannot tell them apart (give the directories' files distinct paths)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace tools
