// Round-trips every module of the XLA test corpus (../shared/corpus/xla-tests, read at run time
// only; never copied into the project) through the proto form:
//   print(ParseModuleProtoBytes(SerializeModule(parse(text)))) == print(parse(text)),
// and the same through the plain HloModuleProto. Files the text parser rejects are counted and
// skipped (they are the parser's concern). Skips when the corpus is not there.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_printer.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/proto/hlo_proto_util.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

// ../shared/corpus/xla-tests beside the workspace, found through a runfile symlink; or
// $HLO_CORPUS_DIR. Empty when neither exists.
std::filesystem::path CorpusDir() {
  if (const char* dir = std::getenv("HLO_CORPUS_DIR")) return dir;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return {};
  std::error_code ec;
  std::filesystem::path build = std::filesystem::canonical(
      std::filesystem::path(srcdir) / workspace / "hlo/proto/BUILD.bazel", ec);
  if (ec) return {};
  std::filesystem::path corpus =
      build.parent_path().parent_path().parent_path().parent_path() / "shared/corpus/xla-tests";
  return std::filesystem::exists(corpus) ? corpus : std::filesystem::path();
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string Print(const HloModule& module) {
  std::string out;
  PrintModule(module, &out);
  return out;
}

// Empty when `text` round-trips; else what went wrong.
std::string RoundTripProblem(const HloModule& module) {
  const std::string printed = Print(module);
  absl::StatusOr<std::string> bytes = SerializeModuleOrError(module);
  if (!bytes.ok()) return StrCat("serialize: ", bytes.status().message());
  absl::StatusOr<std::unique_ptr<HloModule>> back = ParseModuleProtoBytes(*bytes);
  if (!back.ok()) return StrCat("parse bytes: ", back.status().message());
  if (Print(**back) != printed) return StrCat("WithConfig round trip differs:\n", Print(**back));
  absl::StatusOr<xla::HloModuleProto> plain = ModuleToProto(module);
  if (!plain.ok()) return StrCat("to proto: ", plain.status().message());
  absl::StatusOr<std::unique_ptr<HloModule>> from_plain = ModuleFromProto(*plain);
  if (!from_plain.ok()) return StrCat("from proto: ", from_plain.status().message());
  if (Print(**from_plain) != printed)
    return StrCat("plain round trip differs:\n", Print(**from_plain));
  return "";
}

// Counts the `spmdp::` markers of `module`'s instructions by name (how often XLA's fields alone
// would not have been enough).
void CountMarkers(const HloModule& module, std::map<std::string, int>* counts) {
  absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(module);
  if (!proto.ok()) return;
  for (const auto& c : proto->computations()) {
    for (const auto& instr : c.instructions()) {
      for (const auto& extra : instr.spmdp_extra_attributes()) {
        if (extra.name().rfind("spmdp::", 0) == 0) ++(*counts)[extra.name()];
      }
    }
  }
}

TEST(CorpusRoundTripTest, EveryParsedModuleRoundTripsThroughProto) {
  const std::filesystem::path dir = CorpusDir();
  if (dir.empty()) GTEST_SKIP() << "corpus not found";
  int files = 0, parsed = 0, failures = 0;
  std::map<std::string, int> markers;
  for (const auto& suite : std::filesystem::directory_iterator(dir)) {
    if (!suite.is_directory()) continue;
    for (const auto& entry : std::filesystem::directory_iterator(suite.path())) {
      if (entry.path().extension() != ".hlo") continue;
      ++files;
      absl::StatusOr<std::unique_ptr<HloModule>> module =
          ParseHloModule(ReadFile(entry.path()), entry.path().filename().string());
      if (!module.ok()) continue;
      ++parsed;
      CountMarkers(**module, &markers);
      const std::string problem = RoundTripProblem(**module);
      if (problem.empty()) continue;
      ++failures;
      ADD_FAILURE() << entry.path() << ": " << problem.substr(0, 3000) << "\noriginal:\n"
                    << Print(**module).substr(0, 3000);
    }
  }
  std::cout << "corpus: " << files << " files, " << parsed << " parsed, " << failures
            << " proto round-trip failures\n";
  for (const auto& [name, count] : markers)
    std::cout << "  marker " << name << ": " << count << "\n";
  EXPECT_GT(parsed, 0);
}

// Mutates the serialized form of every corpus module (bit flips, byte changes, cut and repeated
// ranges) and reads it back: whatever comes out must be an error or a module that prints.
TEST(CorpusRoundTripTest, MutatedCorpusProtosNeverCrash) {
  const std::filesystem::path dir = CorpusDir();
  if (dir.empty()) GTEST_SKIP() << "corpus not found";
  std::mt19937 rng(2024);
  int attempts = 0, accepted = 0;
  for (const auto& suite : std::filesystem::directory_iterator(dir)) {
    if (!suite.is_directory()) continue;
    for (const auto& entry : std::filesystem::directory_iterator(suite.path())) {
      if (entry.path().extension() != ".hlo") continue;
      absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(ReadFile(entry.path()));
      if (!module.ok()) continue;
      const std::string bytes = SerializeModule(**module);
      if (bytes.empty()) continue;
      for (int k = 0; k < 12; ++k) {
        std::string mutated = bytes;
        const size_t at = rng() % mutated.size();
        switch (rng() % 4) {
          case 0:
            mutated[at] ^= static_cast<char>(1 << (rng() % 8));
            break;
          case 1:
            mutated[at] = static_cast<char>(rng());
            break;
          case 2:
            mutated.erase(at, 1 + rng() % 16);
            break;
          case 3:
            mutated.insert(at, mutated.substr(rng() % mutated.size(), 1 + rng() % 16));
            break;
        }
        ++attempts;
        absl::StatusOr<std::unique_ptr<HloModule>> back = ParseModuleProtoBytes(mutated);
        if (!back.ok()) {
          EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
          continue;
        }
        ++accepted;
        Print(**back);
      }
    }
  }
  std::cout << "mutations: " << attempts << " tried, " << accepted << " still read as modules\n";
}

}  // namespace
}  // namespace hlo
