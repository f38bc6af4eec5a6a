// Statistics of a (partitioned) module. Collective bytes follow the contract's formulas with g
// the largest replica group: all-gather S_out(g-1)/g, reduce-scatter S_in(g-1)/g, all-reduce
// 2S(g-1)/g, all-to-all S(g-1)/g, collective-permute S when some pair moves data between two
// different devices. Peak memory is the largest sum of live buffers along the entry
// computation's instruction order (a buffer lives from its definition to its last use;
// parameters and the root stay live throughout).
#include "hlo/analysis/module_stats.h"

#include <algorithm>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

constexpr const char* kCollectiveNames[kNumCollectiveKinds] = {
    "all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute"};

int64_t LargestGroup(const HloInstruction& instr, int64_t num_partitions) {
  const auto& groups = instr.attrs().replica_groups;
  if (!groups) return num_partitions;
  int64_t g = 0;
  if (groups->iota) return groups->iota->num_devices_per_group;
  for (const auto& group : groups->groups) g = std::max<int64_t>(g, group.size());
  return g == 0 ? num_partitions : g;
}

std::optional<CollectiveKind> KindOf(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart: return CollectiveKind::kAllGather;
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: return CollectiveKind::kAllReduce;
    case HloOpcode::kReduceScatter: return CollectiveKind::kReduceScatter;
    case HloOpcode::kAllToAll: return CollectiveKind::kAllToAll;
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: return CollectiveKind::kCollectivePermute;
    default: return std::nullopt;
  }
}

int64_t OperandBytes(const HloInstruction& instr) {
  int64_t total = 0;
  for (const HloInstruction* op : instr.operands()) total += op->shape().byte_size();
  return total;
}

int64_t CollectiveBytes(const HloInstruction& instr, CollectiveKind kind, int64_t num_partitions) {
  const int64_t g = LargestGroup(instr, num_partitions);
  if (kind == CollectiveKind::kCollectivePermute) {
    for (const auto& [source, target] : instr.attrs().source_target_pairs) {
      if (source != target) return OperandBytes(instr);
    }
    return 0;
  }
  if (g <= 1) return 0;
  switch (kind) {
    case CollectiveKind::kAllGather: return instr.shape().byte_size() * (g - 1) / g;
    case CollectiveKind::kReduceScatter: return OperandBytes(instr) * (g - 1) / g;
    case CollectiveKind::kAllReduce: return 2 * OperandBytes(instr) * (g - 1) / g;
    default: return OperandBytes(instr) * (g - 1) / g;
  }
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
  if (instr.opcode() == HloOpcode::kReduce) return OperandBytes(instr) / std::max(1, ByteWidth(shape.element_type()));
  return 0;
}

void Accumulate(const HloComputation& comp, int64_t num_partitions, ModuleStats* stats) {
  for (const auto& instr : comp.instructions()) {
    ++stats->instructions_after;
    stats->flops += Flops(*instr);
    if (std::optional<CollectiveKind> kind = KindOf(instr->opcode())) {
      CollectiveStats& c = stats->collectives[static_cast<int>(*kind)];
      ++c.count;
      int64_t bytes = CollectiveBytes(*instr, *kind, num_partitions);
      c.bytes += bytes;
      stats->comm_bytes += bytes;
    }
    // Reductions' to_apply bodies are per-element combiners, not separate work.
    if (instr->opcode() == HloOpcode::kCall || instr->opcode() == HloOpcode::kWhile ||
        instr->opcode() == HloOpcode::kConditional) {
      for (const HloComputation* callee : instr->called_computations()) {
        Accumulate(*callee, num_partitions, stats);
      }
    }
  }
}

int64_t PeakMemory(const HloComputation& comp) {
  const auto& instrs = comp.instructions();
  absl::flat_hash_map<const HloInstruction*, size_t> last_use;
  for (size_t i = 0; i < instrs.size(); ++i) {
    for (const HloInstruction* op : instrs[i]->operands()) last_use[op] = i;
  }
  int64_t live = 0, peak = 0;
  std::vector<std::vector<const HloInstruction*>> dies_after(instrs.size());
  for (size_t i = 0; i < instrs.size(); ++i) {
    const HloInstruction* instr = instrs[i].get();
    // get-tuple-element and tuple alias existing buffers rather than allocating.
    if (instr->opcode() != HloOpcode::kGetTupleElement && instr->opcode() != HloOpcode::kTuple) {
      live += instr->shape().byte_size();
      peak = std::max(peak, live);
      auto it = last_use.find(instr);
      bool pinned = instr->opcode() == HloOpcode::kParameter || instr == comp.root_instruction();
      size_t die = it == last_use.end() ? i : it->second;
      if (!pinned) dies_after[die].push_back(instr);
    }
    for (const HloInstruction* dead : dies_after[i]) live -= dead->shape().byte_size();
  }
  return peak;
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

}  // namespace

ModuleStats ComputeModuleStats(const HloModule& module) {
  ModuleStats stats;
  stats.num_partitions = module.config().num_partitions;
  if (module.entry_computation() != nullptr) {
    Accumulate(*module.entry_computation(), stats.num_partitions, &stats);
    stats.peak_memory_bytes = PeakMemory(*module.entry_computation());
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

namespace {

std::string JsonString(std::string_view s) {
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

std::string Fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", v);
  return buf;
}

}  // namespace

std::string StatsToJson(const ModuleStats& s) {
  std::string out = StrCat(
      "{\"module\": ", JsonString(s.module_name), ", \"input\": ", JsonString(s.input),
      ", \"num_partitions\": ", s.num_partitions, ", \"instructions\": {\"before\": ",
      s.instructions_before, ", \"after\": ", s.instructions_after, "}, \"time_ms\": {\"parse\": ",
      Fixed(s.time_ms_parse), ", \"propagation\": ", Fixed(s.time_ms_propagation),
      ", \"partition\": ", Fixed(s.time_ms_partition), ", \"total\": ", Fixed(s.time_ms_total),
      "}, \"per_device\": {\"flops\": ", s.flops, ", \"comm_bytes\": ", s.comm_bytes,
      ", \"peak_memory_bytes\": ", s.peak_memory_bytes, "}, \"collectives\": {");
  for (int k = 0; k < kNumCollectiveKinds; ++k) {
    if (k) out += ", ";
    StrAppend(&out, "\"", kCollectiveNames[k], "\": {\"count\": ", s.collectives[k].count,
              ", \"bytes\": ", s.collectives[k].bytes, "}");
  }
  StrAppend(&out, "}, \"full_rematerializations\": ", s.full_rematerializations,
            ", \"estimated_step_time_us\": ", Fixed(s.estimated_step_time_us), "}");
  return out;
}

std::string StatsToText(const ModuleStats& s) {
  std::string out = StrCat("module ", s.module_name, " (", s.input, "), ", s.num_partitions,
                           " partitions\n  instructions: ", s.instructions_before, " -> ",
                           s.instructions_after, "\n  per device: ", s.flops, " flops, ",
                           s.comm_bytes, " bytes received, peak memory ", s.peak_memory_bytes,
                           " bytes\n");
  for (int k = 0; k < kNumCollectiveKinds; ++k) {
    StrAppend(&out, "  ", kCollectiveNames[k], ": ", s.collectives[k].count, " (",
              s.collectives[k].bytes, " bytes)\n");
  }
  StrAppend(&out, "  full rematerializations: ", s.full_rematerializations,
            "\n  time: ", Fixed(s.time_ms_total), " ms\n");
  return out;
}

}  // namespace hlo
