// File and stdin input, format selection, and atomic output.
#include "hlo/io/module_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "hlo/proto/hlo_proto_util.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool LooksLikeText(std::string_view contents) {
  size_t i = contents.find_first_not_of(" \t\r\n");
  while (i != std::string_view::npos && contents.substr(i, 2) == "//") {
    size_t eol = contents.find('\n', i);
    if (eol == std::string_view::npos) return false;
    i = contents.find_first_not_of(" \t\r\n", eol);
  }
  return i != std::string_view::npos && contents.substr(i, 9) == "HloModule";
}

}  // namespace

ModuleFormat FormatForPath(std::string_view path) {
  if (EndsWith(path, ".pb") || EndsWith(path, ".binpb")) return ModuleFormat::kProto;
  return ModuleFormat::kText;
}

absl::StatusOr<std::string> ReadInput(const std::string& path) {
  if (path == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    return buffer.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(StrCat(path, ": error: cannot open: ", std::strerror(errno)));
  }
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::DataLossError(StrCat(path, ": error: read failed"));
  return contents;
}

absl::StatusOr<ParsedModule> ParseModuleFile(const std::string& path, std::string_view contents) {
  const std::string display = path == "-" ? "<stdin>" : path;
  const bool text = path == "-" ? LooksLikeText(contents) : FormatForPath(path) == ModuleFormat::kText;
  if (text) return ParseHloModuleWithLocations(contents, display);
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseModuleProtoBytes(contents);
  if (!module.ok()) {
    return absl::InvalidArgumentError(
        StrCat(display, ": error: ", ToStd(module.status().message())));
  }
  ParsedModule parsed;
  parsed.module = *std::move(module);
  parsed.filename = display;
  return parsed;
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    // A device or pipe (e.g. /dev/null, /dev/stdout): no rename is possible; write in place.
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) return absl::DataLossError(StrCat(path, ": error: write failed"));
    return absl::OkStatus();
  }
  const std::string tmp = StrCat(path, ".tmp.", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::PermissionDeniedError(
          StrCat(path, ": error: cannot write: ", std::strerror(errno)));
    }
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::DataLossError(StrCat(path, ": error: write failed"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    std::remove(tmp.c_str());
    return absl::PermissionDeniedError(StrCat(path, ": error: cannot rename into place: ", reason));
  }
  return absl::OkStatus();
}

}  // namespace hlo
