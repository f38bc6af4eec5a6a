// The candidate orders of memory_order.h. Buffers and their aliases are peak_memory.h's, so an
// order is judged by the model that reports it.
#include "hlo/transforms/memory_order.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <queue>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "hlo/analysis/peak_memory.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/status_macros.h"

namespace hlo {
namespace {

// Whether `instr` has a side effect, itself or in a computation it calls (a while whose body
// outfeeds; a parameter's flag means nothing here); `memo` caches computations.
bool HasSideEffectDeep(const HloInstruction& instr,
                       absl::flat_hash_map<const HloComputation*, bool>& memo) {
  if (instr.opcode() == HloOpcode::kParameter) return false;
  if (HasSideEffect(instr)) return true;
  for (const HloComputation* callee : instr.called_computations()) {
    auto it = memo.find(callee);
    if (it == memo.end()) {
      const bool effect =
          std::any_of(callee->instructions().begin(), callee->instructions().end(),
                      [&](const auto& inner) { return HasSideEffectDeep(*inner, memo); });
      it = memo.emplace(callee, effect).first;
    }
    if (it->second) return true;
  }
  return false;
}

// A computation's instructions and buffers, each named by its position in the current order.
struct Graph {
  explicit Graph(const HloComputation& comp);
  void AddEdge(size_t from, size_t to) {
    successors[from].push_back(to);
    predecessors[to].push_back(from);
  }

  std::vector<HloInstruction*> instrs;
  size_t root = 0;
  std::vector<int64_t> bytes;                   // Allocated by each instruction.
  std::vector<std::vector<size_t>> reads;       // Buffers each instruction's operands alias.
  std::vector<std::vector<size_t>> readers;     // Instructions reading each buffer.
  std::vector<bool> pinned;                     // Parameters and the root's buffers.
  std::vector<std::vector<size_t>> successors;  // Operand, control and side-effect edges.
  std::vector<std::vector<size_t>> predecessors;
};

Graph::Graph(const HloComputation& comp) {
  absl::flat_hash_map<const HloInstruction*, size_t> position;
  for (const auto& instr : comp.instructions()) {
    position[instr.get()] = instrs.size();
    instrs.push_back(instr.get());
  }
  const size_t n = instrs.size();
  root = position.at(comp.root_instruction());
  const std::vector<std::vector<size_t>> sets = AliasedBuffers(comp);
  bytes.resize(n);
  reads.resize(n);
  readers.resize(n);
  pinned.assign(n, false);
  successors.resize(n);
  predecessors.resize(n);
  std::optional<size_t> last_effect;
  absl::flat_hash_map<const HloComputation*, bool> effects;
  for (size_t i = 0; i < n; ++i) {
    const HloInstruction& instr = *instrs[i];
    bytes[i] = AllocatedBytes(instr);
    if (instr.opcode() == HloOpcode::kParameter) pinned[i] = true;
    for (const HloInstruction* op : instr.operands()) {
      const size_t from = position.at(op);
      AddEdge(from, i);
      reads[i].insert(reads[i].end(), sets[from].begin(), sets[from].end());
    }
    for (const HloInstruction* pred : instr.control_predecessors()) AddEdge(position.at(pred), i);
    if (HasSideEffectDeep(instr, effects)) {
      if (last_effect) AddEdge(*last_effect, i);
      last_effect = i;
    }
    std::sort(reads[i].begin(), reads[i].end());
    reads[i].erase(std::unique(reads[i].begin(), reads[i].end()), reads[i].end());
    for (size_t b : reads[i]) readers[b].push_back(i);
  }
  for (size_t b : sets[root]) pinned[b] = true;
}

// Greedy list order: of the ready instructions, the one that frees the most bytes less the
// bytes it allocates, ties to the earliest; parameters first, the root last.
class ListOrder {
 public:
  explicit ListOrder(const Graph& g)
      : g_(g),
        waiting_(g.instrs.size()),
        version_(g.instrs.size(), 0),
        placed_(g.instrs.size(), false) {
    for (size_t b = 0; b < g.instrs.size(); ++b) unread_.push_back(g.readers[b].size());
    for (size_t i = 0; i < g.instrs.size(); ++i) waiting_[i] = g.predecessors[i].size();
  }
  std::vector<size_t> Run();

 private:
  int64_t Priority(size_t i) const {
    int64_t freed = 0;
    for (size_t b : g_.reads[i]) {
      if (!g_.pinned[b] && unread_[b] == 1) freed += g_.bytes[b];
    }
    return freed - g_.bytes[i];
  }
  void Push(size_t i) {
    if (placed_[i] || waiting_[i] != 0 || i == g_.root) return;
    ready_.emplace(Priority(i), -static_cast<int64_t>(i), version_[i], i);
  }
  void Place(size_t i);

  const Graph& g_;
  std::vector<size_t> unread_;   // Readers of each buffer not placed yet.
  std::vector<size_t> waiting_;  // Predecessors of each instruction not placed yet.
  std::vector<int64_t> version_;
  std::vector<bool> placed_;
  std::vector<size_t> order_;
  // (priority, -position, version, position): the highest priority, then the earliest, first.
  std::priority_queue<std::tuple<int64_t, int64_t, int64_t, size_t>> ready_;
};

void ListOrder::Place(size_t i) {
  placed_[i] = true;
  order_.push_back(i);
  for (size_t b : g_.reads[i]) {
    if (--unread_[b] != 1 || g_.pinned[b]) continue;
    // The one reader left now frees the buffer: its priority rises.
    for (size_t r : g_.readers[b]) {
      if (placed_[r]) continue;
      ++version_[r];
      Push(r);
    }
  }
  for (size_t s : g_.successors[i]) {
    if (--waiting_[s] == 0) Push(s);
  }
}

std::vector<size_t> ListOrder::Run() {
  for (size_t i = 0; i < g_.instrs.size(); ++i) {
    if (g_.instrs[i]->opcode() == HloOpcode::kParameter) Place(i);
  }
  for (size_t i = 0; i < g_.instrs.size(); ++i) Push(i);
  while (!ready_.empty()) {
    const auto [priority, negative_position, version, i] = ready_.top();
    ready_.pop();
    if (placed_[i] || version != version_[i]) continue;
    Place(i);
  }
  if (!placed_[g_.root] && waiting_[g_.root] == 0) Place(g_.root);
  return order_;
}

// Buffers read by more instructions than this are never counted as freed by one of them, and an
// instruction reading one is not moved down: the scans stay linear in the readers.
constexpr size_t kMaxScannedReaders = 256;

// The current order improved by local moves. Moving x up from p to q makes x's buffer live
// from q and the buffers x was the last reader of die sooner (after x, or after their other
// readers where x passes them): the move goes only so far up that the bytes dead by every place
// passed outweigh x's, and to a place whose instruction allocated at least x's bytes (x's own
// place then holds no more than that instruction's did). Moving x down to just before z raises x's
// own place to what was live before z plus what x frees: taken only when z allocates at least that.
// So no place's live bytes exceed the old maximum over the range, and the peak never grows.
class LocalMoves {
 public:
  explicit LocalMoves(const Graph& g) : g_(g), order_(g.instrs.size()), pos_(g.instrs.size()) {
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = pos_[i] = i;
  }
  std::vector<size_t> Run() {
    for (size_t i = 0; i < order_.size(); ++i) Hoist(i);
    for (size_t i = order_.size(); i-- > 0;) Sink(i);
    return order_;
  }

 private:
  // The buffers `x` is the last reader of (that die after it): the latest place of each one's
  // other readers (0 for none) and its bytes.
  std::vector<std::pair<size_t, int64_t>> Freed(size_t x) const {
    std::vector<std::pair<size_t, int64_t>> freed;
    for (size_t b : g_.reads[x]) {
      if (g_.pinned[b] || g_.readers[b].size() > kMaxScannedReaders) continue;
      size_t latest = 0;
      bool last = true;
      for (size_t r : g_.readers[b]) {
        if (r == x) continue;
        if (pos_[r] > pos_[x]) last = false;
        latest = std::max(latest, pos_[r]);
      }
      if (last) freed.emplace_back(latest, g_.bytes[b]);
    }
    return freed;
  }
  bool Movable(size_t x) const {
    return g_.instrs[x]->opcode() != HloOpcode::kParameter && x != g_.root;
  }
  void Hoist(size_t x);
  void Sink(size_t x);
  void Move(size_t from, size_t to);

  const Graph& g_;
  std::vector<size_t> order_;  // Instruction at each place.
  std::vector<size_t> pos_;    // Place of each instruction.
};

void LocalMoves::Move(size_t from, size_t to) {
  if (from > to) {
    std::rotate(order_.begin() + to, order_.begin() + from, order_.begin() + from + 1);
  } else {
    std::rotate(order_.begin() + from, order_.begin() + from + 1, order_.begin() + to + 1);
  }
  for (size_t p = std::min(from, to); p <= std::max(from, to); ++p) pos_[order_[p]] = p;
}

void LocalMoves::Hoist(size_t x) {
  if (!Movable(x)) return;
  // A freed buffer whose other readers x moves above dies after the last of them instead, still
  // sooner. Far enough up that the buffers dead by each place passed outweigh x's own bytes:
  // past the other readers of the first buffers that do, and after every predecessor.
  std::vector<std::pair<size_t, int64_t>> freed = Freed(x);
  std::sort(freed.begin(), freed.end());
  std::optional<size_t> to;
  int64_t dead = 0;
  for (const auto& [latest, bytes] : freed) {
    dead += bytes;
    if (dead > g_.bytes[x]) {
      to = latest + 1;
      break;
    }
  }
  if (!to) return;
  for (size_t p : g_.predecessors[x]) *to = std::max(*to, pos_[p] + 1);
  while (*to < pos_[x] && g_.bytes[order_[*to]] < g_.bytes[x]) ++*to;
  if (*to < pos_[x]) Move(pos_[x], *to);
}

void LocalMoves::Sink(size_t x) {
  if (!Movable(x) || g_.successors[x].empty()) return;
  int64_t freed = 0;
  for (const auto& [latest, bytes] : Freed(x)) freed += bytes;
  if (g_.bytes[x] <= freed) return;
  // Just before the first successor and the next reader of anything x reads.
  size_t before = order_.size();
  for (size_t s : g_.successors[x]) before = std::min(before, pos_[s]);
  for (size_t b : g_.reads[x]) {
    if (g_.readers[b].size() > kMaxScannedReaders) return;
    for (size_t r : g_.readers[b]) {
      if (pos_[r] > pos_[x]) before = std::min(before, pos_[r]);
    }
  }
  while (before > pos_[x] + 1 && g_.bytes[order_[before]] < freed) --before;
  if (before > pos_[x] + 1) Move(pos_[x], before - 1);
}

bool IsScheduled(const HloModule& module) {
  for (const RawAttribute& attr : module.raw_attributes()) {
    if (attr.name == "is_scheduled") return attr.value == "true";
  }
  return false;
}

// Async starts and dones are placed for overlap, which the memory model does not see.
bool HasAsyncPairs(const HloComputation& comp) {
  for (const auto& instr : comp.instructions()) {
    if (IsAsyncStartOpcode(instr->opcode()) || IsAsyncDoneOpcode(instr->opcode())) return true;
  }
  return false;
}

std::vector<HloInstruction*> Instructions(const Graph& g, const std::vector<size_t>& order) {
  std::vector<HloInstruction*> instrs;
  for (size_t i : order) instrs.push_back(g.instrs[i]);
  return instrs;
}

}  // namespace

std::vector<HloInstruction*> MemoryAwareOrder(const HloComputation& comp) {
  const Graph g(comp);
  std::vector<HloInstruction*> order = Instructions(g, ListOrder(g).Run());
  if (order.size() == comp.instructions().size()) return order;
  // A cycle (which the verifier rejects) leaves instructions unplaced: keep the order given.
  return g.instrs;
}

std::vector<HloInstruction*> LocallyImprovedOrder(const HloComputation& comp) {
  const Graph g(comp);
  return Instructions(g, LocalMoves(g).Run());
}

absl::StatusOr<bool> MemoryOrder::RunImpl(HloModule* module) {
  reordered_.clear();
  if (IsScheduled(*module)) return false;
  for (const auto& owned : module->computations()) {
    HloComputation* comp = owned.get();
    if (comp->instruction_count() < 3 || HasAsyncPairs(*comp)) continue;
    std::vector<HloInstruction*> given;
    for (const auto& instr : comp->instructions()) given.push_back(instr.get());
    const std::vector<HloInstruction*> local = LocallyImprovedOrder(*comp);
    const std::vector<HloInstruction*> list = MemoryAwareOrder(*comp);
    RETURN_IF_ERROR(comp->ReorderInstructions(list));
    const std::vector<HloInstruction*> list_local = LocallyImprovedOrder(*comp);
    const std::pair<const char*, const std::vector<HloInstruction*>*> candidates[] = {
        {"local moves", &local},
        {"list order", &list},
        {"list order and local moves", &list_local}};
    RETURN_IF_ERROR(comp->ReorderInstructions(given));
    const int64_t peak_before = ComputePeakMemory(*comp).bytes;
    Reordered best{comp->name(), peak_before, peak_before, ""};
    const std::vector<HloInstruction*>* best_order = &given;
    for (const auto& [name, candidate] : candidates) {
      if (*candidate == given) continue;
      RETURN_IF_ERROR(comp->ReorderInstructions(*candidate));
      const int64_t peak = ComputePeakMemory(*comp).bytes;
      if (peak < best.peak_after) {
        best.peak_after = peak;
        best.order = name;
        best_order = candidate;
      }
    }
    RETURN_IF_ERROR(comp->ReorderInstructions(*best_order));
    if (best_order != &given) reordered_.push_back(std::move(best));
  }
  return !reordered_.empty();
}

}  // namespace hlo
