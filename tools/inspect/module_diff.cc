// Three text tables. The collectives are paired by what they serve and do, not by name or
// position (two partitioners name and order their collectives differently): the same source op
// and shape first, then the same shape and replica groups (compared as sets of devices), then
// the same shape, then the same source op; unpaired ones are listed as "A only" / "B only".
// The instruction table pairs by name, which both sides usually keep for the original module's
// instructions (parameters, dots, the root).
#include "tools/inspect/module_diff.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "hlo/strings.h"
#include "tools/inspect/text_table.h"

namespace tools {
namespace {

using Rows = std::vector<std::vector<std::string>>;

void AddMetric(const std::string& name, int64_t a, int64_t b, Rows* rows) {
  const int64_t delta = b - a;
  rows->push_back({name, hlo::StrCat(a), hlo::StrCat(b), hlo::StrCat(delta > 0 ? "+" : "", delta)});
}

std::string SummaryTable(const hlo::ModuleStats& a, const hlo::ModuleStats& b) {
  Rows rows = {{"", "A", "B", "B-A"}};
  AddMetric("partitions", a.num_partitions, b.num_partitions, &rows);
  AddMetric("instructions", a.instructions_after, b.instructions_after, &rows);
  AddMetric("flops per device", a.flops, b.flops, &rows);
  AddMetric("bytes received per device", a.comm_bytes, b.comm_bytes, &rows);
  AddMetric("peak memory per device", a.peak_memory_bytes, b.peak_memory_bytes, &rows);
  for (int k = 0; k < hlo::kNumCollectiveKinds; ++k) {
    const std::string kind(hlo::CollectiveKindName(static_cast<hlo::CollectiveKind>(k)));
    AddMetric(kind + " count", a.collectives[k].count, b.collectives[k].count, &rows);
    AddMetric(kind + " bytes", a.collectives[k].bytes, b.collectives[k].bytes, &rows);
  }
  return FormatTextTable(rows, "  ");
}

// A collective's communication pattern in a canonical form: the expanded replica groups
// (`[2,4]<=[8]` and `{{0,1,2,3},{4,5,6,7}}` read alike) in sorted order, each group's members
// sorted only for an all-reduce (elsewhere their order places the data), or the sorted
// source-target pairs of a collective-permute. Empty replica groups stay empty (all devices).
std::vector<std::vector<int64_t>> CanonicalGroups(const hlo::HloInstruction& instr) {
  const hlo::InstructionAttributes& a = instr.attrs();
  std::vector<std::vector<int64_t>> groups;
  if (!a.source_target_pairs.empty()) {
    for (const auto& [from, to] : a.source_target_pairs) groups.push_back({from, to});
  } else if (a.replica_groups) {
    groups = a.replica_groups->Expanded();
    if (instr.opcode() == hlo::HloOpcode::kAllReduce ||
        instr.opcode() == hlo::HloOpcode::kAllReduceStart) {
      for (std::vector<int64_t>& g : groups) std::sort(g.begin(), g.end());
    }
  }
  std::sort(groups.begin(), groups.end());
  return groups;
}

// How two collectives are paired, tried in this order: the same source op (metadata op_name),
// kind and per-device shape; the same kind, shape and groups; the same kind and shape; the same
// source op and kind. Within a level, in program order.
enum class PairLevel { kSourceShape, kShapeGroups, kShape, kSource };

bool Pairs(const hlo::CollectiveRecord& a, const hlo::CollectiveRecord& b, PairLevel level) {
  if (a.kind != b.kind) return false;
  const std::string& op_a = a.instr->attrs().metadata.op_name;
  const bool same_source = !op_a.empty() && op_a == b.instr->attrs().metadata.op_name;
  const bool same_shape = ShortShape(*a.output_shape) == ShortShape(*b.output_shape);
  switch (level) {
    case PairLevel::kSourceShape:
      return same_source && same_shape;
    case PairLevel::kShapeGroups:
      return same_shape && CanonicalGroups(*a.instr) == CanonicalGroups(*b.instr);
    case PairLevel::kShape:
      return same_shape;
    case PairLevel::kSource:
      return same_source;
  }
  return false;
}

}  // namespace

std::vector<int64_t> PairCollectives(const std::vector<hlo::CollectiveRecord>& a,
                                     const std::vector<hlo::CollectiveRecord>& b) {
  std::vector<int64_t> partner(a.size(), -1);
  std::vector<bool> taken(b.size(), false);
  for (PairLevel level :
       {PairLevel::kSourceShape, PairLevel::kShapeGroups, PairLevel::kShape, PairLevel::kSource}) {
    for (size_t i = 0; i < a.size(); ++i) {
      for (size_t j = 0; j < b.size() && partner[i] < 0; ++j) {
        if (taken[j] || !Pairs(a[i], b[j], level)) continue;
        partner[i] = static_cast<int64_t>(j);
        taken[j] = true;
      }
    }
  }
  return partner;
}

namespace {

std::vector<std::string> CollectiveCells(const hlo::CollectiveRecord* c) {
  if (c == nullptr) return {"", "", "", "", "", ""};
  return {std::string(hlo::CollectiveKindName(c->kind)),
          c->instr->name(),
          ShortShape(*c->output_shape),
          hlo::DescribeGroups(*c->instr),
          hlo::StrCat(c->executions),
          hlo::StrCat(c->bytes * c->executions)};
}

}  // namespace

std::string CompareCollectives(const hlo::CollectiveRecord* a, const hlo::CollectiveRecord* b) {
  if (a == nullptr || b == nullptr) return a == nullptr ? "B only" : "A only";
  const bool groups = CanonicalGroups(*a->instr) == CanonicalGroups(*b->instr);
  const int64_t bytes_a = a->bytes * a->executions, bytes_b = b->bytes * b->executions;
  if (groups && bytes_a == bytes_b) return "same";
  return hlo::StrCat(groups ? "same groups" : "other groups", bytes_a == bytes_b ? "" : ", bytes ",
                     bytes_a == bytes_b ? "" : (bytes_b > bytes_a ? "+" : ""),
                     bytes_a == bytes_b ? "" : hlo::StrCat(bytes_b - bytes_a));
}

namespace {

void AddPairRow(size_t n, const hlo::CollectiveRecord* a, const hlo::CollectiveRecord* b,
                Rows& rows) {
  std::vector<std::string> row = {hlo::StrCat(n)};
  for (std::string& cell : CollectiveCells(a)) row.push_back(std::move(cell));
  row.push_back("|");
  for (std::string& cell : CollectiveCells(b)) row.push_back(std::move(cell));
  row.push_back(CompareCollectives(a, b));
  rows.push_back(std::move(row));
}

std::string CollectivesSideBySide(const InspectedModule& a, const InspectedModule& b) {
  Rows rows = {{"#", "A kind", "A instruction", "A shape", "A groups", "A times", "A bytes", "|",
                "B kind", "B instruction", "B shape", "B groups", "B times", "B bytes", "B vs A"}};
  const std::vector<int64_t> partner = PairCollectives(a.collectives, b.collectives);
  std::vector<bool> paired(b.collectives.size(), false);
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    const hlo::CollectiveRecord* other = nullptr;
    if (partner[i] >= 0) {
      other = &b.collectives[partner[i]];
      paired[partner[i]] = true;
    }
    AddPairRow(rows.size(), &a.collectives[i], other, rows);
  }
  for (size_t j = 0; j < b.collectives.size(); ++j) {
    if (!paired[j]) AddPairRow(rows.size(), nullptr, &b.collectives[j], rows);
  }
  return rows.size() == 1 ? "  (none on either side)\n" : FormatTextTable(rows, "  ");
}

std::string ShapeDifferences(const hlo::HloModule& a, const hlo::HloModule& b) {
  if (a.entry_computation() == nullptr || b.entry_computation() == nullptr) return "  (none)\n";
  absl::flat_hash_map<std::string, const hlo::HloInstruction*> by_name;
  for (const auto& instr : b.entry_computation()->instructions())
    by_name[instr->name()] = instr.get();
  Rows rows = {{"instruction", "opcode", "A shape", "B shape"}};
  for (const auto& instr : a.entry_computation()->instructions()) {
    auto it = by_name.find(instr->name());
    if (it == by_name.end()) continue;
    const std::string shape_a = ShortShape(instr->shape());
    const std::string shape_b = ShortShape(it->second->shape());
    if (shape_a == shape_b) continue;
    rows.push_back(
        {instr->name(), std::string(hlo::HloOpcodeString(instr->opcode())), shape_a, shape_b});
  }
  return rows.size() == 1 ? "  (none)\n" : FormatTextTable(rows, "  ");
}

}  // namespace

std::string DiffReportText(const InspectedModule& a, const InspectedModule& b) {
  return hlo::StrCat(
      "A: ", a.stats.input, " (module ", a.stats.module_name, ")\nB: ", b.stats.input, " (module ",
      b.stats.module_name, ")\n\nstatistics\n", SummaryTable(a.stats, b.stats),
      "\ncollectives, paired (A in program order, then B only)\n", CollectivesSideBySide(a, b),
      "\nentry instructions in both whose per-device shapes differ\n",
      ShapeDifferences(*a.parsed.module, *b.parsed.module));
}

std::vector<std::string> DiffGrowth(const InspectedModule& a, const InspectedModule& b) {
  std::vector<std::string> grew;
  auto check = [&](const char* what, int64_t x, int64_t y) {
    if (y > x) grew.push_back(hlo::StrCat(what, " ", x, " -> ", y));
  };
  check("bytes received per device", a.stats.comm_bytes, b.stats.comm_bytes);
  check("flops per device", a.stats.flops, b.stats.flops);
  check("peak memory per device", a.stats.peak_memory_bytes, b.stats.peak_memory_bytes);
  return grew;
}

}  // namespace tools
