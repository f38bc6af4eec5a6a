// Seeds, mutants and runs of the partition fuzzer (partition_fuzz.h). The mutations live in
// partition_fuzz_mutate.cc and the check of one mutant in partition_fuzz_check.cc.
#include "tests/partition_fuzz.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hlo/analysis/module_stats.h"
#include "hlo/parser/hlo_parser.h"
#include "spmd/dot/dot_strategy.h"
#include "tests/random_module_generator.h"

namespace partition_fuzz {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> Split(const std::string& s, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(s);
  std::string part;
  while (std::getline(stream, part, separator)) parts.push_back(part);
  if (!s.empty() && s.back() == separator) parts.push_back("");
  return parts;
}

// `text` with num_partitions stated in its header: `devices` when positive, else 1 + the
// largest device id of its shardings. Empty when the text does not parse (useless as a seed:
// mutations rarely repair it).
std::string WithNumPartitions(const std::string& text, int64_t devices) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  if (!module.ok()) return "";
  if (text.find("num_partitions=") != std::string::npos) return text;
  if (devices <= 0) devices = std::max<int64_t>(1, hlo::MaxDeviceIdInShardings(**module) + 1);
  const size_t header = text.find("HloModule");
  if (header == std::string::npos) return "";
  size_t eol = text.find('\n', header);
  if (eol == std::string::npos) eol = text.size();
  std::string out = text;
  out.insert(eol, ", num_partitions=" + std::to_string(devices));
  return out;
}

// The cases of one corpus folder, in MANIFEST.tsv order.
void LoadCorpus(const fs::path& dir, const std::string& sub, int64_t max_bytes,
                std::vector<SeedModule>* seeds) {
  const std::string manifest = ReadText(dir / "MANIFEST.tsv");
  bool header = true;
  for (const std::string& line : Split(manifest, '\n')) {
    if (header || line.empty()) {
      header = false;
      continue;
    }
    const std::vector<std::string> fields = Split(line, '\t');
    if (fields.size() < 3) continue;
    const std::vector<std::string> flags = Split(fields[2], ',');
    auto has = [&](const char* flag) {
      return std::find(flags.begin(), flags.end(), flag) != flags.end();
    };
    if (has("rng") || has("io") || has("error")) continue;
    const fs::path path = dir / (fields[0] + ".hlo");
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec || static_cast<int64_t>(size) > max_bytes) continue;
    const int64_t devices = fields[1].empty() ? 0 : std::atoll(fields[1].c_str());
    std::string text = WithNumPartitions(ReadText(path), devices);
    if (!text.empty()) seeds->push_back({sub + "/" + fields[0], std::move(text), sub == "spmd"});
  }
}

// Every *.hlo directly in `dir`, sorted by name.
void LoadDirectory(const fs::path& dir, const std::string& prefix, std::vector<SeedModule>* seeds) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::string text = WithNumPartitions(ReadText(file), 0);
    if (!text.empty()) seeds->push_back({prefix + file.filename().string(), std::move(text)});
  }
}

// SplitMix64's finalizer: mutant streams of nearby (seed, index) pairs are unrelated.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// `s` with digits and %names elided, on one line, at most 110 characters.
std::string Normalize(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size() && s[i] != '\n' && out.size() < 110; ++i) {
    const char c = s[i];
    if (c == '%') {
      out += "%_";
      while (i + 1 < s.size() && (std::isalnum(static_cast<unsigned char>(s[i + 1])) ||
                                  s[i + 1] == '_' || s[i + 1] == '.' || s[i + 1] == '-')) {
        ++i;
      }
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      if (out.empty() || out.back() != 'N') out += 'N';
    } else {
      out += c;
    }
  }
  return out;
}

void Save(const fs::path& dir, const std::string& reproduce_env, Failure& failure) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string stem = "failure-" + failure.result.kind + "-" +
                           std::to_string(failure.mutant.run_seed) + "-" +
                           std::to_string(failure.mutant.index);
  const fs::path hlo = dir / (stem + ".hlo");
  std::ofstream(hlo, std::ios::binary) << failure.mutant.text;
  std::string passes;
  for (const std::string& p : failure.mutant.passes) passes += (passes.empty() ? "" : ",") + p;
  std::ofstream(dir / (stem + ".txt"), std::ios::binary)
      << failure.mutant.Describe() << "\npasses: " << passes << "\nkind: " << failure.result.kind
      << "\nphase: " << failure.result.phase << "\nsignature: " << failure.signature
      << "\nreproduce: PARTITION_FUZZ_SEED=" << failure.mutant.run_seed
      << " PARTITION_FUZZ_FIRST=" << failure.mutant.index << " PARTITION_FUZZ_MUTANTS=1 "
      << reproduce_env << " bazel-bin/tests/partition_fuzz_test --gtest_filter='*LongRun'"
      << "\n--- error ---\n"
      << failure.result.detail << "\n";
  failure.saved_path = hlo.string();
}

void PrintProgress(const Summary& s) {
  std::printf(
      "[%6.0f s] tried %lld, accepted %lld, partitioned %lld, verified %lld, failures %zu\n",
      s.seconds, static_cast<long long>(s.tried), static_cast<long long>(s.accepted),
      static_cast<long long>(s.partitioned), static_cast<long long>(s.verified), s.failures.size());
  std::fflush(stdout);
}

}  // namespace

std::vector<SeedModule> LoadSeeds(const SeedOptions& options) {
  std::vector<SeedModule> seeds;
  std::error_code ec;
  if (!options.corpus_dir.empty() && fs::is_directory(options.corpus_dir, ec)) {
    for (const std::string sub : {"spmd", "propagation"}) {
      LoadCorpus(options.corpus_dir / sub, sub, options.max_bytes, &seeds);
    }
  }
  if (!options.testdata_dir.empty()) {
    LoadDirectory(options.testdata_dir, "testdata/", &seeds);
    LoadDirectory(options.testdata_dir / "propagation", "testdata/propagation/", &seeds);
  }
  for (int64_t seed = 1; seed <= options.generated; ++seed) {
    const random_module::GeneratedModule generated =
        random_module::ModuleGenerator(static_cast<uint64_t>(seed)).Generate();
    if (generated.error.empty()) {
      seeds.push_back({"generated/" + std::to_string(seed), generated.text});
    }
  }
  return seeds;
}

std::string Mutant::Describe() const {
  std::string out = "run seed " + std::to_string(run_seed) + ", mutant " + std::to_string(index) +
                    " (of " + seed_name + "):";
  for (const std::string& m : mutations) out += " " + m + ";";
  if (mutations.empty()) out += " no mutation applied;";
  if (!dot_strategy.empty()) out += " dots forced to " + dot_strategy + ";";
  return out;
}

Mutant MakeMutant(const std::vector<SeedModule>& seeds, uint64_t run_seed, uint64_t index) {
  Random rng(Mix(Mix(run_seed) ^ index));
  const SeedModule& seed = seeds[rng.Int(0, static_cast<int64_t>(seeds.size()) - 1)];
  Mutant mutant;
  mutant.run_seed = run_seed;
  mutant.index = index;
  mutant.seed_name = seed.name;
  mutant.text = seed.text;
  // One to three mutations (the draws in separate statements: the order in which operands
  // of one expression are evaluated is unspecified, and the mutant must not depend on it).
  int count = 1;
  count += rng.Chance(0.4) ? 1 : 0;
  count += rng.Chance(0.15) ? 1 : 0;
  for (int k = 0; k < count; ++k) {
    std::string what = MutateOnce(mutant.text, rng);
    if (!what.empty()) mutant.mutations.push_back(std::move(what));
  }
  // A tenth of the modules with a dot force a dot strategy (windowed einsum, ...), which the
  // small modules here are otherwise too small for.
  if (mutant.text.find(" dot(") != std::string::npos && rng.Chance(0.1)) {
    mutant.dot_strategy = rng.Pick(spmd::DotStrategyFamilies());
  }
  if (seed.partition_only && rng.Chance(0.5)) {
    mutant.passes = {"partition", "cleanup"};
  } else {
    mutant.passes = {"propagate", "partition", "cleanup"};
  }
  return mutant;
}

std::string FailureSignature(const CheckResult& result) {
  std::string detail = result.detail;
  if (result.kind == "mismatch") return result.kind + ": " + detail.substr(0, detail.find('\n'));
  if (result.kind == "crash" || result.kind == "hang") {
    // The phase and the last line the child printed (an abort's message) tell crashes apart.
    const size_t output = detail.find("--- output ---\n");
    std::string last;
    if (output != std::string::npos) {
      std::string tail = detail.substr(output + 15);
      while (!tail.empty() && tail.back() == '\n') tail.pop_back();
      last = tail.substr(tail.rfind('\n') == std::string::npos ? 0 : tail.rfind('\n') + 1);
    }
    detail = detail.substr(0, detail.find('\n')) + " | " + last;
  }
  return result.kind + ": " + Normalize(detail);
}

void Summary::Add(const Mutant& mutant, const CheckResult& result) {
  ++tried;
  const bool timed_out =
      result.kind == "hang" || result.kind.find("time budget") != std::string::npos;
  if (result.seconds > slowest_seconds && !timed_out) {
    slowest_seconds = result.seconds;
    slowest = mutant.Describe();
  }
  switch (result.outcome) {
    case Outcome::kRejected:
      ++(result.kind == "parse" ? rejected_parse : rejected_verifier);
      return;
    case Outcome::kPartitionError:
      ++accepted;
      ++partition_errors;
      ++partition_error_kinds[result.kind + ": " + Normalize(result.detail).substr(0, 80)];
      return;
    case Outcome::kPartitioned:
      ++accepted;
      ++partitioned;
      ++skip_reasons[result.kind];
      return;
    case Outcome::kVerified:
    case Outcome::kNearMiss:
      ++accepted;
      ++partitioned;
      ++executed;
      ++(result.outcome == Outcome::kVerified ? verified : near_misses);
      if (result.outcome == Outcome::kNearMiss) {
        ++near_miss_kinds[result.kind];
        near_miss_first.try_emplace(result.kind, mutant.Describe());
      }
      return;
    case Outcome::kFailure:
      break;
  }
  // A failure counts where it happened: after the verifier accepted the mutant unless it
  // crashed or hung while parsing, after partitioning unless it did so in the passes.
  const bool parsed = !result.phase.empty() && result.phase != "parse";
  const bool partitioned_ok = parsed && result.phase != "partition";
  accepted += parsed ? 1 : 0;
  partitioned += partitioned_ok ? 1 : 0;
  executed += result.kind == "mismatch" ? 1 : 0;
  Failure failure{mutant, result, FailureSignature(result), ""};
  ++failure_signatures[failure.signature];
  failures.push_back(std::move(failure));
}

std::string Summary::ToString() const {
  std::ostringstream out;
  out << "mutants tried: " << tried << " in " << static_cast<int64_t>(seconds) << " s\n"
      << "  rejected by the parser: " << rejected_parse << "\n"
      << "  rejected by the verifier: " << rejected_verifier << "\n"
      << "  accepted by the verifier: " << accepted << "\n"
      << "  partitioning returned an error status: " << partition_errors << "\n"
      << "  partitioned: " << partitioned << "\n"
      << "  executed and compared (spmd-run --verify): " << executed << "\n"
      << "  verified (outputs match): " << verified << "\n"
      << "  near misses (numerical differences, not failures): " << near_misses << "\n"
      << "  failures: " << failures.size() << " (" << failure_signatures.size() << " distinct)\n";
  for (const auto& [signature, count] : failure_signatures) {
    out << "    " << count << " x " << signature << "\n";
  }
  for (const auto& [kind, count] : near_miss_kinds) {
    out << "    near miss: " << count << " x " << kind << " (first: " << near_miss_first.at(kind)
        << ")\n";
  }
  out << "slowest mutant: " << slowest_seconds << " s, " << slowest << "\n";
  out << "partitioned but not executed:\n";
  for (const auto& [reason, count] : skip_reasons) out << "  " << count << " x " << reason << "\n";
  std::vector<std::pair<int64_t, std::string>> errors;
  for (const auto& [kind, count] : partition_error_kinds) errors.push_back({count, kind});
  std::sort(errors.rbegin(), errors.rend());
  out << "most frequent partitioning errors (" << partition_error_kinds.size() << " kinds):\n";
  for (size_t k = 0; k < errors.size() && k < 12; ++k) {
    out << "  " << errors[k].first << " x " << errors[k].second << "\n";
  }
  return out.str();
}

Summary RunFuzz(const std::vector<SeedModule>& seeds, const FuzzOptions& options) {
  Summary summary;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  double next_progress = options.progress_seconds;
  std::map<std::string, int64_t> saved;
  for (uint64_t index = options.first_index;; ++index) {
    if (options.max_mutants > 0 && summary.tried >= options.max_mutants) break;
    if (options.max_seconds > 0 && elapsed() >= options.max_seconds) break;
    const Mutant mutant = MakeMutant(seeds, options.seed, index);
    const size_t failures = summary.failures.size();
    summary.Add(mutant, CheckMutantIsolated(mutant, options.check));
    if (summary.failures.size() > failures && !options.out_dir.empty()) {
      Failure& failure = summary.failures.back();
      if (++saved[failure.signature] <= options.max_saved_per_signature) {
        Save(options.out_dir, options.reproduce_env, failure);
      }
      std::printf("FAILURE %s\n  %s\n  %s\n", failure.signature.c_str(),
                  failure.mutant.Describe().c_str(),
                  failure.saved_path.empty() ? "(not saved: signature seen before)"
                                             : failure.saved_path.c_str());
    }
    summary.seconds = elapsed();
    if (options.progress_seconds > 0 && summary.seconds >= next_progress) {
      PrintProgress(summary);
      next_progress += options.progress_seconds;
    }
  }
  summary.seconds = elapsed();
  return summary;
}

}  // namespace partition_fuzz
