// Collective records. With g the largest replica group and S the per-device buffer the contract
// names: all-gather S_out(g-1)/g, reduce-scatter S_in(g-1)/g, all-reduce 2S(g-1)/g, all-to-all
// S(g-1)/g, collective-permute S when some pair moves data between two different devices.
//
// Async starts carry their buffers in a tuple: `all-gather-start` is (operand, output),
// `collective-permute-start` (operand, output, u32[], u32[]) and a generic async-start
// ((operands...), output, context...). The output is therefore element 1 of a start's tuple;
// `all-reduce-start` has its result shape directly, like the synchronous all-reduce.
#include "hlo/analysis/collectives.h"

#include <algorithm>
#include <utility>

#include "hlo/analysis/executed_instructions.h"
#include "hlo/ir/hlo_printer.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

struct CollectiveOp {
  CollectiveKind kind;
  bool async_start;  // Output is element 1 of the instruction's tuple shape.
};

// The collectives the statistics count, by opcode; all-reduce-start's shape is its result, as
// for all-reduce.
constexpr std::pair<HloOpcode, CollectiveOp> kCollectives[] = {
    {HloOpcode::kAllGather, {CollectiveKind::kAllGather, false}},
    {HloOpcode::kAllGatherStart, {CollectiveKind::kAllGather, true}},
    {HloOpcode::kAllReduce, {CollectiveKind::kAllReduce, false}},
    {HloOpcode::kAllReduceStart, {CollectiveKind::kAllReduce, false}},
    {HloOpcode::kReduceScatter, {CollectiveKind::kReduceScatter, false}},
    {HloOpcode::kAllToAll, {CollectiveKind::kAllToAll, false}},
    {HloOpcode::kCollectivePermute, {CollectiveKind::kCollectivePermute, false}},
    {HloOpcode::kCollectivePermuteStart, {CollectiveKind::kCollectivePermute, true}},
};

std::optional<CollectiveOp> Classify(HloOpcode op) {
  for (const auto& [opcode, collective] : kCollectives) {
    if (opcode == op) return collective;
  }
  return std::nullopt;
}

std::optional<CollectiveOp> ClassifyInstruction(const HloInstruction& instr) {
  if (instr.opcode() != HloOpcode::kAsyncStart) return Classify(instr.opcode());
  if (!instr.attrs().async_wrapped_opcode) return std::nullopt;
  std::optional<CollectiveOp> op = Classify(*instr.attrs().async_wrapped_opcode);
  if (op) op->async_start = true;
  return op;
}

int64_t LargestGroup(const HloInstruction& instr, int64_t num_partitions) {
  const auto& groups = instr.attrs().replica_groups;
  if (!groups) return num_partitions;
  if (groups->iota) return groups->iota->num_devices_per_group;
  int64_t g = 0;
  for (const auto& group : groups->groups) g = std::max<int64_t>(g, group.size());
  return g == 0 ? num_partitions : g;
}

int64_t OperandBytes(const HloInstruction& instr) {
  int64_t total = 0;
  for (const HloInstruction* op : instr.operands()) total += op->shape().byte_size();
  return total;
}

const Shape& OutputShape(const HloInstruction& instr, bool async_start) {
  const Shape& shape = instr.shape();
  if (async_start && shape.IsTuple() && shape.tuple_shapes_size() >= 2) {
    return shape.tuple_shapes(1);
  }
  return shape;
}

bool MovesBetweenDevices(const HloInstruction& instr) {
  for (const auto& [source, target] : instr.attrs().source_target_pairs) {
    if (source != target) return true;
  }
  return false;
}

// S and the bytes one device receives.
std::pair<int64_t, int64_t> Bytes(const HloInstruction& instr, CollectiveOp op, int64_t g) {
  switch (op.kind) {
    case CollectiveKind::kCollectivePermute: {
      const int64_t s = instr.operand_count() > 0 ? instr.operand(0)->shape().byte_size() : 0;
      return {s, MovesBetweenDevices(instr) ? s : 0};
    }
    case CollectiveKind::kAllGather: {
      const int64_t s = OutputShape(instr, op.async_start).byte_size();
      return {s, s * (g - 1) / g};
    }
    case CollectiveKind::kAllReduce: {
      const int64_t s = OperandBytes(instr);
      return {s, 2 * s * (g - 1) / g};
    }
    default: {
      const int64_t s = OperandBytes(instr);
      return {s, s * (g - 1) / g};
    }
  }
}

}  // namespace

std::string_view CollectiveKindName(CollectiveKind kind) {
  static constexpr std::string_view kNames[kNumCollectiveKinds] = {
      "all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute"};
  return kNames[static_cast<int>(kind)];
}

std::optional<CollectiveRecord> DescribeCollective(const HloInstruction& instr,
                                                   int64_t num_partitions) {
  std::optional<CollectiveOp> op = ClassifyInstruction(instr);
  if (!op) return std::nullopt;
  CollectiveRecord record;
  record.instr = &instr;
  record.kind = op->kind;
  record.output_shape = &OutputShape(instr, op->async_start);
  record.group_size = std::max<int64_t>(1, LargestGroup(instr, num_partitions));
  std::tie(record.buffer_bytes, record.bytes) = Bytes(instr, *op, record.group_size);
  return record;
}

std::vector<CollectiveRecord> ListCollectives(const HloModule& module) {
  std::vector<CollectiveRecord> records;
  const int64_t num_partitions = module.config().num_partitions;
  ForEachExecutedInstruction(module, [&](const HloInstruction& instr, int64_t executions) {
    if (std::optional<CollectiveRecord> r = DescribeCollective(instr, num_partitions)) {
      r->executions = executions;
      records.push_back(*r);
    }
  });
  return records;
}

std::string DescribeGroups(const HloInstruction& instr) {
  const InstructionAttributes& a = instr.attrs();
  std::string out;
  if (!a.source_target_pairs.empty()) {
    out.push_back('{');
    for (size_t i = 0; i < a.source_target_pairs.size(); ++i) {
      StrAppend(&out, i ? ",{" : "{", a.source_target_pairs[i].first, ",",
                a.source_target_pairs[i].second, "}");
    }
    out.push_back('}');
    return out;
  }
  if (!a.replica_groups) return "{}";
  AppendReplicaGroups(*a.replica_groups, &out);
  return out;
}

}  // namespace hlo
