#include "hlo/analysis/constant_dims.h"

#include <algorithm>
#include <utility>

#include "hlo/ir/shape.h"

namespace hlo {
namespace {

using Dims = std::vector<int64_t>;

Dims AllDims(int64_t rank) {
  Dims all(rank);
  for (int64_t d = 0; d < rank; ++d) all[d] = d;
  return all;
}

Dims Intersect(const Dims& a, const Dims& b) {
  Dims both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return both;
}

bool Contains(const Dims& dims, int64_t d) {
  return std::binary_search(dims.begin(), dims.end(), d);
}

Dims ReshapeConstantDims(const Shape& source, const Dims& constant, const Shape& target) {
  const std::vector<int64_t>& in = source.dimensions();
  const std::vector<int64_t>& out = target.dimensions();
  const Dims in_stride = RowMajorStrides(in), out_stride = RowMajorStrides(out);
  auto keeps = [&](int64_t d) { return in[d] == 1 || Contains(constant, d); };
  Dims result;
  for (int64_t j = 0; j < static_cast<int64_t>(out.size()); ++j) {
    if (out[j] == 1) {
      result.push_back(j);
      continue;
    }
    const int64_t lo = out_stride[j], hi = out_stride[j] * out[j];
    // The source dims whose digits overlap j's, then the whole run of constant dims around them.
    int64_t first = -1, last = -1;
    bool ok = true;
    for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
      if (in[d] == 1 || !(in_stride[d] < hi && lo < in_stride[d] * in[d])) continue;
      ok = ok && keeps(d);
      if (first < 0) first = d;
      last = d;
    }
    if (!ok || first < 0) continue;
    while (first > 0 && keeps(first - 1)) --first;
    while (last + 1 < static_cast<int64_t>(in.size()) && keeps(last + 1)) ++last;
    const int64_t run_lo = in_stride[last], run_hi = in_stride[first] * in[first];
    if (lo % run_lo == 0 && run_hi % hi == 0) result.push_back(j);
  }
  return result;
}

// Whether `instr`'s answer is read from its operands' (the ops Compute looks through).
bool LooksThrough(HloOpcode op) {
  return op == HloOpcode::kBroadcast || op == HloOpcode::kSlice || op == HloOpcode::kTranspose ||
         op == HloOpcode::kReshape || IsElementwiseOpcode(op);
}

// `instr`'s answer from its operands' answers, which `memo` holds.
Dims Compute(const HloInstruction& instr, const ConstantDimsMemo& memo) {
  const Shape& shape = instr.shape();
  if (!shape.IsArray()) return {};
  const int64_t rank = shape.rank();
  if (rank == 0) return {};
  const HloOpcode op = instr.opcode();
  if (op == HloOpcode::kIota) {
    Dims dims = AllDims(rank);
    dims.erase(dims.begin() + instr.attrs().iota_dimension);
    return dims;
  }
  auto of = [&](int64_t i) -> Dims {
    const HloInstruction& operand = *instr.operand(i);
    if (!operand.shape().IsArray()) return {};
    if (operand.shape().rank() == 0) return AllDims(rank);
    return memo.at(&operand);
  };
  if (op == HloOpcode::kBroadcast) {
    const Dims& kept = instr.dimensions();
    const Dims operand = of(0);
    Dims dims;
    for (int64_t d = 0; d < rank; ++d) {
      auto it = std::find(kept.begin(), kept.end(), d);
      if (it == kept.end() || Contains(operand, it - kept.begin())) dims.push_back(d);
    }
    return dims;
  }
  if (IsElementwiseOpcode(op)) {
    Dims dims = AllDims(rank);
    for (int64_t i = 0; i < instr.operand_count() && !dims.empty(); ++i) {
      dims = Intersect(dims, of(i));
    }
    return dims;
  }
  if (op == HloOpcode::kSlice) return of(0);
  if (op == HloOpcode::kTranspose) {
    const Dims operand = of(0);
    Dims dims;
    for (int64_t d = 0; d < rank; ++d) {
      if (Contains(operand, instr.dimensions()[d])) dims.push_back(d);
    }
    return dims;
  }
  if (op == HloOpcode::kReshape) {
    return ReshapeConstantDims(instr.operand(0)->shape(), of(0), shape);
  }
  return {};
}

}  // namespace

Dims ConstantAlongDims(const HloInstruction& instr) {
  ConstantDimsMemo memo;
  return ConstantAlongDims(instr, memo);
}

const Dims& ConstantAlongDims(const HloInstruction& instr, ConstantDimsMemo& memo) {
  // Post order over the operands looked through, with an explicit stack: a chain of thousands
  // of elementwise ops needs no deep recursion.
  std::vector<std::pair<const HloInstruction*, bool>> stack = {{&instr, false}};
  while (!stack.empty()) {
    auto [current, expanded] = stack.back();
    if (memo.contains(current)) {
      stack.pop_back();
      continue;
    }
    if (expanded || !LooksThrough(current->opcode())) {
      memo.try_emplace(current, Compute(*current, memo));
      stack.pop_back();
      continue;
    }
    stack.back().second = true;
    for (const HloInstruction* operand : current->operands()) {
      const Shape& s = operand->shape();
      if (s.IsArray() && s.rank() > 0 && !memo.contains(operand)) stack.push_back({operand, false});
    }
  }
  return memo.at(&instr);
}

}  // namespace hlo
