// Statistics of a (partitioned) module: one walk over the executed instructions
// (executed_instructions.h) sums FLOPs and the collectives' received bytes (collectives.h, the
// contract's formulas), each multiplied by the static trip counts of enclosing loops; peak
// memory is the entry computation's (peak_memory.h).
#include "hlo/analysis/module_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/analysis/executed_instructions.h"
#include "hlo/analysis/peak_memory.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

int64_t OperandBytes(const HloInstruction& instr) {
  int64_t total = 0;
  for (const HloInstruction* op : instr.operands()) total += op->shape().byte_size();
  return total;
}

int64_t Flops(const HloInstruction& instr) {
  const Shape& shape = instr.shape();
  if (!shape.IsArray()) return 0;
  const InstructionAttributes& a = instr.attrs();
  if (instr.opcode() == HloOpcode::kDot && a.dot_dimension_numbers) {
    int64_t contracted = 1;
    for (int64_t d : a.dot_dimension_numbers->lhs_contracting_dimensions) {
      contracted *= instr.operand(0)->shape().dimensions(d);
    }
    return 2 * shape.num_elements() * contracted;
  }
  if (instr.opcode() == HloOpcode::kConvolution && a.convolution_dimension_numbers) {
    const Shape& kernel = instr.operand(1)->shape();
    const auto& d = *a.convolution_dimension_numbers;
    int64_t per_output = kernel.dimensions(d.kernel_input_feature_dimension);
    for (int64_t s : d.kernel_spatial_dimensions) per_output *= kernel.dimensions(s);
    return 2 * shape.num_elements() * per_output;
  }
  if (IsElementwiseUnary(instr.opcode()) || IsElementwiseBinary(instr.opcode())) {
    return shape.num_elements();
  }
  if (instr.opcode() == HloOpcode::kReduce)
    return OperandBytes(instr) / std::max(1, ByteWidth(shape.element_type()));
  return 0;
}

void MaxDevice(const HloSharding& s, int64_t* max_id) {
  if (s.IsTuple()) {
    for (const HloSharding& e : s.tuple_elements()) MaxDevice(e, max_id);
  } else if (s.kind() == HloSharding::Kind::kMaximal) {
    *max_id = std::max(*max_id, s.maximal_device());
  } else if (s.IsTiled()) {
    *max_id = std::max(*max_id, s.tile_assignment().MaxDevice());
  }
}

// Each while body, and each computation a body calls (kCall, transitively: JAX's closed_call
// inside a fori_loop), mapped to the body whose iterations run it; the call instruction that
// runs each such callee.
struct LoopComputations {
  absl::flat_hash_map<const HloComputation*, const HloComputation*> body_of;
  absl::flat_hash_map<const HloComputation*, const HloInstruction*> call_site;
};

LoopComputations FindLoopComputations(const HloModule& module) {
  LoopComputations loops;
  std::vector<std::pair<const HloComputation*, const HloComputation*>> stack;
  for (const auto& computation : module.computations()) {
    for (const auto& instr : computation->instructions()) {
      if (instr->opcode() == HloOpcode::kWhile) stack.push_back({instr->while_body(), nullptr});
    }
  }
  while (!stack.empty()) {
    auto [computation, body] = stack.back();
    stack.pop_back();
    if (!loops.body_of.try_emplace(computation, body == nullptr ? computation : body).second) {
      continue;
    }
    for (const auto& instr : computation->instructions()) {
      if (instr->opcode() != HloOpcode::kCall || instr->called_computations().size() != 1) continue;
      const HloComputation* callee = instr->called_computations()[0];
      loops.call_site.try_emplace(callee, instr.get());
      stack.push_back({callee, loops.body_of.at(computation)});
    }
  }
  return loops;
}

// Whether only later iterations read `value`: every use is its computation's root tuple, and
// that computation is a while body, or a computation called from one whose call's result in
// those positions is, in turn, read only by later iterations.
bool OnlyLaterIterationsRead(const HloInstruction* value, const LoopComputations& loops) {
  const HloInstruction* root = value->parent()->root_instruction();
  if (value == root || root->opcode() != HloOpcode::kTuple || value->users().empty()) return false;
  for (const HloInstruction* user : value->users()) {
    if (user != root) return false;
  }
  const auto body = loops.body_of.find(value->parent());
  if (body == loops.body_of.end()) return false;
  if (body->second == value->parent()) return true;
  const auto call = loops.call_site.find(value->parent());
  if (call == loops.call_site.end() || call->second->users().empty()) return false;
  bool read = false;
  for (const HloInstruction* user : call->second->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
    if (root->operand(user->attrs().tuple_index) != value) continue;  // Another element.
    if (!OnlyLaterIterationsRead(user, loops)) return false;
    read = true;
  }
  return read;
}

// The instruction holding the collective `instr`'s value: its async pair's -done half, or itself.
const HloInstruction* CollectiveValue(const HloInstruction& instr) {
  if (instr.users().size() == 1 && IsAsyncDoneOpcode(instr.users()[0]->opcode())) {
    return instr.users()[0];
  }
  return &instr;
}

// Every instruction `value` reads, transitively, within its computation.
absl::flat_hash_set<const HloInstruction*> Ancestors(const HloInstruction* value) {
  absl::flat_hash_set<const HloInstruction*> seen;
  std::vector<const HloInstruction*> stack(value->operands().begin(), value->operands().end());
  while (!stack.empty()) {
    const HloInstruction* at = stack.back();
    stack.pop_back();
    if (!seen.insert(at).second) continue;
    stack.insert(stack.end(), at->operands().begin(), at->operands().end());
  }
  return seen;
}

// The instructions of the while body `body` that read, transitively, one of the loop-state
// positions `fed` (a use of the whole state tuple other than a get-tuple-element reads them all).
absl::flat_hash_set<const HloInstruction*> ReadersOfPositions(
    const HloComputation& body, const absl::flat_hash_set<int64_t>& fed) {
  absl::flat_hash_set<const HloInstruction*> readers;
  for (const auto& instr : body.instructions()) {  // Operands before users.
    bool reads = false;
    for (const HloInstruction* operand : instr->operands()) {
      if (operand->opcode() == HloOpcode::kParameter) {
        reads |= instr->opcode() != HloOpcode::kGetTupleElement ||
                 fed.contains(instr->attrs().tuple_index);
      }
      reads |= readers.contains(operand);
    }
    if (reads) readers.insert(instr.get());
  }
  return readers;
}

// The part of a loop's per-iteration `work` (instruction, FLOPs) that can run while each of
// `carried` (collectives only later iterations read) is in flight: an instruction of the
// collective's own computation that the collective does not read (they run side by side), or,
// for a collective of the body itself, one that does not read the loop-state positions the
// collective feeds (the next iteration's work overlaps this iteration's collective, as in a
// reduce-scatter windowed loop). Work elsewhere is not counted.
int64_t OverlappableFlops(const std::vector<std::pair<const HloInstruction*, int64_t>>& work,
                          const std::vector<const HloInstruction*>& carried,
                          const LoopComputations& loops) {
  struct Guard {
    const HloComputation* computation;
    absl::flat_hash_set<const HloInstruction*> ancestors;
    std::optional<absl::flat_hash_set<const HloInstruction*>> readers;
  };
  std::vector<Guard> guards;
  for (const HloInstruction* c : carried) {
    Guard g{c->parent(), Ancestors(c), std::nullopt};
    if (loops.body_of.at(c->parent()) == c->parent()) {
      const HloInstruction* value = CollectiveValue(*c);
      absl::flat_hash_set<int64_t> fed;
      const HloInstruction* root = c->parent()->root_instruction();
      for (int64_t k = 0; k < root->operand_count(); ++k) {
        if (root->operand(k) == value) fed.insert(k);
      }
      g.readers = ReadersOfPositions(*c->parent(), fed);
    }
    guards.push_back(std::move(g));
  }
  int64_t flops = 0;
  for (const auto& [instr, f] : work) {
    bool overlaps = f > 0;
    for (const Guard& g : guards) {
      overlaps = overlaps && instr->parent() == g.computation &&
                 (!g.ancestors.contains(instr) || (g.readers && !g.readers->contains(instr)));
    }
    if (overlaps) flops += f;
  }
  return flops;
}

}  // namespace

ModuleStats ComputeModuleStats(const HloModule& module) {
  ModuleStats stats;
  stats.num_partitions = module.config().num_partitions;
  const LoopComputations loop_computations = FindLoopComputations(module);
  // Per (body, executions): one call site's work per iteration, and its carried collectives.
  struct LoopWork {
    LoopOverlap overlap;
    std::vector<std::pair<const HloInstruction*, int64_t>> work;
    std::vector<const HloInstruction*> carried;
  };
  std::map<std::pair<const HloComputation*, int64_t>, LoopWork> loops;
  ForEachExecutedInstruction(module, [&](const HloInstruction& instr, int64_t executions) {
    ++stats.instructions_after;
    const int64_t flops = Flops(instr);
    stats.flops += flops * executions;
    LoopWork* loop = nullptr;
    if (const auto body = loop_computations.body_of.find(instr.parent());
        body != loop_computations.body_of.end()) {
      loop = &loops[{body->second, executions}];
      loop->overlap.iterations = executions;
      if (flops > 0) loop->work.push_back({&instr, flops});
    }
    if (std::optional<CollectiveRecord> r = DescribeCollective(instr, stats.num_partitions)) {
      CollectiveStats& c = stats.collectives[static_cast<int>(r->kind)];
      c.count += executions;
      c.bytes += r->bytes * executions;
      stats.comm_bytes += r->bytes * executions;
      if (loop != nullptr && OnlyLaterIterationsRead(CollectiveValue(instr), loop_computations)) {
        ++loop->overlap.carried_collectives;
        loop->overlap.carried_bytes += r->bytes;
        loop->carried.push_back(&instr);
      }
    }
  });
  for (auto& [key, loop] : loops) {
    if (loop.carried.empty()) continue;
    loop.overlap.flops = OverlappableFlops(loop.work, loop.carried, loop_computations);
    stats.loop_overlaps.push_back(loop.overlap);
  }
  if (module.entry_computation() != nullptr) {
    stats.peak_memory_bytes = ComputePeakMemory(*module.entry_computation()).bytes;
  }
  return stats;
}

int64_t MaxDeviceIdInShardings(const HloModule& module) {
  int64_t max_id = -1;
  for (const auto& comp : module.computations()) {
    for (const auto& instr : comp->instructions()) {
      if (instr->has_sharding()) MaxDevice(instr->sharding(), &max_id);
    }
  }
  return max_id;
}

std::string JsonQuoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

namespace {

// A JSON number with 3 decimals; JSON has no inf or nan, so those are null.
std::string Fixed(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", v);
  return buf;
}

}  // namespace

std::string StatsToJson(const ModuleStats& s) {
  std::string out = StrCat(
      "{\"module\": ", JsonQuoted(s.module_name), ", \"input\": ", JsonQuoted(s.input),
      s.key.empty() ? "" : StrCat(", \"key\": ", JsonQuoted(s.key)),
      ", \"num_partitions\": ", s.num_partitions,
      ", \"instructions\": {\"before\": ", s.instructions_before,
      ", \"after\": ", s.instructions_after, "}, \"time_ms\": {\"parse\": ", Fixed(s.time_ms_parse),
      ", \"propagation\": ", Fixed(s.time_ms_propagation),
      ", \"partition\": ", Fixed(s.time_ms_partition), ", \"total\": ", Fixed(s.time_ms_total),
      "}, \"per_device\": {\"flops\": ", s.flops, ", \"comm_bytes\": ", s.comm_bytes,
      ", \"peak_memory_bytes\": ", s.peak_memory_bytes, "}, \"collectives\": {");
  for (int k = 0; k < kNumCollectiveKinds; ++k) {
    if (k) out += ", ";
    StrAppend(&out, "\"", CollectiveKindName(static_cast<CollectiveKind>(k)),
              "\": {\"count\": ", s.collectives[k].count, ", \"bytes\": ", s.collectives[k].bytes,
              "}");
  }
  StrAppend(&out, "}, \"full_rematerializations\": ", s.full_rematerializations,
            ", \"replicated_fallbacks\": {\"count\": ", s.replicated_fallbacks,
            ", \"bytes\": ", s.replicated_fallback_bytes, "}",
            ", \"estimated_step_time_us\": ", Fixed(s.estimated_step_time_us), "}");
  return out;
}

std::string StatsToText(const ModuleStats& s) {
  std::string out =
      StrCat("module ", s.module_name, " (", s.input, "), ", s.num_partitions,
             " partitions\n  instructions: ", s.instructions_before, " -> ", s.instructions_after,
             "\n  per device: ", HumanFlops(s.flops), ", ", HumanBytes(s.comm_bytes),
             " received, peak memory ", HumanBytes(s.peak_memory_bytes), "\n");
  for (int k = 0; k < kNumCollectiveKinds; ++k) {
    StrAppend(&out, "  ", CollectiveKindName(static_cast<CollectiveKind>(k)), ": ",
              s.collectives[k].count, " (", HumanBytes(s.collectives[k].bytes), ")\n");
  }
  StrAppend(&out, "  full rematerializations: ", s.full_rematerializations,
            "\n  replicated fallbacks: ", s.replicated_fallbacks, " (",
            HumanBytes(s.replicated_fallback_bytes), " computed whole per device)",
            "\n  time: ", Fixed(s.time_ms_total), " ms\n");
  return out;
}

namespace {

// `v` scaled by `step` until below it, with one decimal and the unit of that power.
std::string Scaled(double v, double step, const char* const* units, int count, const char* plain) {
  if (!std::isfinite(v)) return "?";
  if (std::fabs(v) < step) return StrCat(static_cast<int64_t>(v), " ", plain);
  int i = 0;
  while (std::fabs(v) >= step && i + 1 < count) {
    v /= step;
    ++i;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[i]);
  return buf;
}

}  // namespace

std::string HumanBytes(double bytes) {
  static const char* const kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  return Scaled(bytes, 1024, kUnits, 7, "bytes");
}

std::string HumanFlops(double flops) {
  static const char* const kUnits[] = {"FLOP",  "kFLOP", "MFLOP", "GFLOP",
                                       "TFLOP", "PFLOP", "EFLOP"};
  return Scaled(flops, 1000, kUnits, 7, "FLOP");
}

}  // namespace hlo
