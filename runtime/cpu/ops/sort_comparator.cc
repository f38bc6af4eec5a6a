// Splitting a sort comparator into one-side keys and a per-pair boolean program (see the
// header). Create classifies the comparator's instructions by side, clones the one-side
// instructions that the mixed ones read into a computation over whole arrays ("sort_keys": a
// scalar constant becomes a broadcast, parameter 2k and 2k+1 both become operand k), runs it
// once, and turns the mixed instructions into nodes that read those arrays at the left or right
// element.
#include "runtime/cpu/ops/sort_comparator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"
#include "runtime/common/opcode_table.h"
#include "runtime/cpu/element_types.h"
#include "runtime/cpu/ops/compare_keys.h"

namespace runtime {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

// Which comparator parameters an instruction depends on; the join of two sides is their `|`.
enum Side : uint8_t { kNone = 0, kLeft = 1, kRight = 2, kMixed = 3 };

using SideMap = absl::flat_hash_map<const HloInstruction*, Side>;

bool IsScalar(const Shape& shape) { return shape.IsArray() && shape.rank() == 0; }

// Opcodes whose scalar form computes the same per element as their array form.
bool IsElementwise(HloOpcode op) {
  return IsOneOf(op, {HloOpcode::kCompare, HloOpcode::kSelect, HloOpcode::kClamp,
                      HloOpcode::kConvert, HloOpcode::kBitcastConvert}) ||
         hlo::IsElementwiseUnary(op) || hlo::IsElementwiseBinary(op);
}

// Opcodes the per-pair program evaluates (on pred values); defined with the node kinds below.
bool IsProgramOp(HloOpcode op);

// The side of every instruction of `comparator`, or nullopt when one is outside the supported
// forms or the parameters do not match `operands`.
std::optional<SideMap> ClassifySides(const HloComputation& comparator,
                                     absl::Span<const Literal* const> operands) {
  SideMap sides;
  for (const HloInstruction* instr : comparator.MakeInstructionPostOrder()) {
    if (!IsScalar(instr->shape())) return std::nullopt;
    Side side = kNone;
    if (instr->opcode() == HloOpcode::kParameter) {
      const int64_t p = instr->parameter_number();
      if (p < 0 || p / 2 >= static_cast<int64_t>(operands.size()) ||
          instr->shape().element_type() != operands[p / 2]->shape().element_type()) {
        return std::nullopt;
      }
      side = p % 2 == 0 ? kLeft : kRight;
    } else if (instr->opcode() == HloOpcode::kConstant) {
      if (!instr->attrs().literal.has_value()) return std::nullopt;
    } else {
      for (const HloInstruction* op : instr->operands()) {
        side = static_cast<Side>(side | sides.at(op));
      }
      const bool supported = side == kMixed ? IsProgramOp(instr->opcode()) &&
                                                  instr->shape().element_type() == PrimitiveType::kPred
                                            : IsElementwise(instr->opcode());
      if (!supported || instr->operand_count() == 0) return std::nullopt;
    }
    sides[instr] = side;
  }
  return sides;
}

// The one-side instructions whose per-element values the program reads: operands of mixed
// instructions, and the root when it is not mixed. In first-use order, each once.
std::vector<const HloInstruction*> KeyInstructions(const HloComputation& comparator,
                                                   const SideMap& sides) {
  std::vector<const HloInstruction*> keys;
  auto add = [&](const HloInstruction* instr) {
    if (sides.at(instr) == kMixed) return;
    for (const HloInstruction* k : keys) {
      if (k == instr) return;
    }
    keys.push_back(instr);
  };
  for (const HloInstruction* instr : comparator.MakeInstructionPostOrder()) {
    if (sides.at(instr) != kMixed) continue;
    for (const HloInstruction* op : instr->operands()) add(op);
  }
  add(comparator.root_instruction());
  return keys;
}

// Builds "sort_keys": the `keys` instructions (and what they read) over arrays of `dims`,
// returning a tuple of them. Its parameter k is operand k.
std::unique_ptr<HloComputation> BuildKeyComputation(absl::Span<const HloInstruction* const> keys,
                                                    absl::Span<const Literal* const> operands) {
  auto computation = std::make_unique<HloComputation>("sort_keys");
  const std::vector<int64_t>& dims = operands[0]->shape().dimensions();
  auto add = [&](HloOpcode op, PrimitiveType type, std::vector<HloInstruction*> args,
                 const hlo::InstructionAttributes& attrs, const std::string& name) {
    auto instr = HloInstruction::Create(op, Shape::Array(type, dims), args);
    *instr->mutable_attrs() = attrs;
    instr->set_name(name);
    return computation->AddInstruction(std::move(instr));
  };
  std::vector<HloInstruction*> params;
  for (size_t k = 0; k < operands.size(); ++k) {
    hlo::InstructionAttributes attrs;
    attrs.parameter_number = static_cast<int64_t>(k);
    params.push_back(add(HloOpcode::kParameter, operands[k]->shape().element_type(), {}, attrs,
                         hlo::StrCat("operand.", k)));
  }
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> clones;
  std::function<HloInstruction*(const HloInstruction*)> clone = [&](const HloInstruction* instr) {
    auto it = clones.find(instr);
    if (it != clones.end()) return it->second;
    const PrimitiveType type = instr->shape().element_type();
    HloInstruction* result = nullptr;
    if (instr->opcode() == HloOpcode::kParameter) {
      result = params[instr->parameter_number() / 2];
    } else if (instr->opcode() == HloOpcode::kConstant) {
      auto scalar = HloInstruction::Create(HloOpcode::kConstant, instr->shape(), {});
      scalar->mutable_attrs()->literal = instr->attrs().literal;
      scalar->set_name(instr->name());
      HloInstruction* constant = computation->AddInstruction(std::move(scalar));
      result = add(HloOpcode::kBroadcast, type, {constant}, {}, instr->name() + ".broadcast");
    } else {
      std::vector<HloInstruction*> args;
      for (const HloInstruction* op : instr->operands()) args.push_back(clone(op));
      result = add(instr->opcode(), type, std::move(args), instr->attrs(), instr->name());
    }
    clones[instr] = result;
    return result;
  };
  std::vector<HloInstruction*> tuple_args;
  std::vector<Shape> tuple_shapes;
  for (const HloInstruction* key : keys) {
    tuple_args.push_back(clone(key));
    tuple_shapes.push_back(tuple_args.back()->shape());
  }
  auto tuple =
      HloInstruction::Create(HloOpcode::kTuple, Shape::Tuple(std::move(tuple_shapes)), tuple_args);
  tuple->set_name("keys");
  computation->set_root_instruction(computation->AddInstruction(std::move(tuple)));
  return computation;
}

// An order-preserving code of key `k`: codes compare as the keys do, equal codes for equal
// keys. False for keys outside a total preorder (NaN under FLOAT, complex values).
template <typename K>
bool OrderCode(K k, uint64_t& code) {
  if constexpr (std::is_integral_v<K>) {
    code = std::is_signed_v<K>
               ? static_cast<uint64_t>(static_cast<int64_t>(k)) ^ (uint64_t{1} << 63)
               : static_cast<uint64_t>(k);
    return true;
  } else if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(k)) return false;
    const double d = k == 0 ? 0.0 : static_cast<double>(k);  // -0 == +0.
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    code = (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
    return true;
  } else {
    return false;
  }
}

// A typed comparison of two key arrays, one read at the left element and one at the right.
class PairCompare {
 public:
  virtual ~PairCompare() = default;
  virtual bool Eval(int64_t a, int64_t b) const = 0;
  // Whether both arrays hold the same values (the same function of the two sides).
  virtual bool SameArrays() const = 0;
  // Writes the order codes of elements base + j*stride (j < length) of the arrays into `out`;
  // false when a key has no order code. REQUIRES: SameArrays().
  virtual bool Encode(int64_t base, int64_t stride, int64_t length, uint64_t* out) const = 0;
  virtual bool x_left() const = 0;
};

template <typename T, typename Key>
class TypedPairCompare : public PairCompare {
 public:
  TypedPairCompare(const Literal& x, bool x_left, const Literal& y, bool y_left,
                   hlo::ComparisonDirection direction, Key key)
      : x_literal_(x), y_literal_(y), x_(Data<T>(x)), y_(Data<T>(y)), x_left_(x_left),
        y_left_(y_left), direction_(direction), key_(key) {}

  bool Eval(int64_t a, int64_t b) const override {
    return CompareKeys(direction_, key_(x_, x_left_ ? a : b), key_(y_, y_left_ ? a : b));
  }

  bool SameArrays() const override { return x_literal_.data() == y_literal_.data(); }

  bool Encode(int64_t base, int64_t stride, int64_t length, uint64_t* out) const override {
    for (int64_t j = 0; j < length; ++j) {
      if (!OrderCode(key_(x_, base + j * stride), out[j])) return false;
    }
    return true;
  }

  bool x_left() const override { return x_left_; }

 private:
  const Literal& x_literal_;
  const Literal& y_literal_;
  const T* x_;
  const T* y_;
  bool x_left_;
  bool y_left_;
  hlo::ComparisonDirection direction_;
  Key key_;
};

}  // namespace

// One mixed instruction, or a pred key read at the left or right element.
struct SortComparator::Node {
  enum class Kind { kKey, kPairCompare, kCompare, kSelect, kAnd, kOr, kXor, kNot };
  Kind kind = Kind::kKey;
  int64_t operands[3] = {0, 0, 0};  // Slots of the operand nodes.
  const uint8_t* key = nullptr;     // kKey: the pred array.
  bool left = true;                 // kKey: read at the left element (else the right).
  hlo::ComparisonDirection direction = hlo::ComparisonDirection::kEq;  // k(Pair)Compare.
  std::unique_ptr<PairCompare> pair;                                    // kPairCompare.
  int64_t order_key = -1;  // kPairCompare: the pair's entry in Program::order_keys.
};

namespace {

// The per-pair program's node kind of each opcode it evaluates besides compare (whose kind,
// kCompare or kPairCompare, depends on its operands).
constexpr std::pair<HloOpcode, SortComparator::Node::Kind> kProgramKinds[] = {
    {HloOpcode::kSelect, SortComparator::Node::Kind::kSelect},
    {HloOpcode::kAnd, SortComparator::Node::Kind::kAnd},
    {HloOpcode::kOr, SortComparator::Node::Kind::kOr},
    {HloOpcode::kXor, SortComparator::Node::Kind::kXor},
    {HloOpcode::kNot, SortComparator::Node::Kind::kNot},
};

bool IsProgramOp(HloOpcode op) {
  return op == HloOpcode::kCompare ||
         FindInTable<SortComparator::Node::Kind>(kProgramKinds, op) != nullptr;
}

}  // namespace

struct SortComparator::Program {
  // A pair of key instructions compared with comparison type `type`.
  struct OrderKey {
    const HloInstruction* x;
    const HloInstruction* y;
    hlo::ComparisonType type;
  };
  // One key of a lexicographic order: elements sort by `pair`'s array, descending or ascending.
  struct LexKey {
    const PairCompare* pair = nullptr;
    bool descending = false;
  };

  Literal keys;  // The tuple "sort_keys" computed.
  std::vector<Node> nodes;
  // The distinct (unordered) pairs of key instructions that kPairCompare nodes compare, with
  // their comparison type.
  std::vector<OrderKey> order_keys;
  // When the comparator is a lexicographic order on order keys: its keys, most significant
  // first. Empty otherwise.
  std::vector<LexKey> lex;
};

namespace {

using Node = SortComparator::Node;
using OrderKey = SortComparator::Program::OrderKey;
using LexKey = SortComparator::Program::LexKey;

// Builds the program's nodes from the mixed instructions; `keys`/`key_values` are the one-side
// instructions and their arrays. Nullopt when a mixed instruction has an unsupported form.
class ProgramBuilder {
 public:
  ProgramBuilder(const SideMap& sides, absl::Span<const HloInstruction* const> keys,
                 SortComparator::Program& program)
      : sides_(sides), keys_(keys), key_values_(program.keys), nodes_(program.nodes),
        order_keys_(program.order_keys) {}

  // The slot of `instr`'s value, adding its node (and its operands') on first use.
  std::optional<int64_t> SlotOf(const HloInstruction* instr) {
    auto it = slots_.find(instr);
    if (it != slots_.end()) return it->second;
    std::optional<Node> node =
        sides_.at(instr) == kMixed ? MixedNode(*instr) : KeyNode(*instr);
    if (!node.has_value()) return std::nullopt;
    nodes_.push_back(*std::move(node));
    const int64_t slot = static_cast<int64_t>(nodes_.size()) - 1;
    slots_[instr] = slot;
    return slot;
  }

 private:
  // The array computed for key instruction `instr`; null if it is not one.
  const Literal* KeyValue(const HloInstruction& instr) const {
    for (size_t k = 0; k < keys_.size(); ++k) {
      if (keys_[k] == &instr) return &key_values_.tuple_elements()[k];
    }
    return nullptr;
  }

  std::optional<Node> KeyNode(const HloInstruction& instr) const {
    const Literal* values = KeyValue(instr);
    if (values == nullptr || instr.shape().element_type() != PrimitiveType::kPred) {
      return std::nullopt;
    }
    Node node;
    node.kind = Node::Kind::kKey;
    node.key = Data<uint8_t>(*values);
    node.left = sides_.at(&instr) != kRight;
    return node;
  }

  std::optional<Node> MixedNode(const HloInstruction& instr) {
    if (instr.opcode() == HloOpcode::kCompare) return CompareNode(instr);
    const Node::Kind* kind = FindInTable<Node::Kind>(kProgramKinds, instr.opcode());
    if (kind == nullptr) return std::nullopt;
    Node node;
    node.kind = *kind;
    if (!ReadOperands(instr, node)) return std::nullopt;
    return node;
  }

  // Fills node.operands with the slots of instr's (pred) operands.
  bool ReadOperands(const HloInstruction& instr, Node& node) {
    if (instr.operand_count() > 3) return false;
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      if (instr.operand(i)->shape().element_type() != PrimitiveType::kPred) return false;
      std::optional<int64_t> slot = SlotOf(instr.operand(i));
      if (!slot.has_value()) return false;
      node.operands[i] = *slot;
    }
    return true;
  }

  std::optional<Node> CompareNode(const HloInstruction& instr) {
    const HloInstruction& x = *instr.operand(0);
    const HloInstruction& y = *instr.operand(1);
    const PrimitiveType type = x.shape().element_type();
    const hlo::ComparisonDirection direction = instr.attrs().comparison_direction;
    const hlo::ComparisonType comparison = instr.attrs().comparison_type;
    if (y.shape().element_type() != type) return std::nullopt;
    Node node;
    node.direction = direction;
    if (sides_.at(&x) == kMixed || sides_.at(&y) == kMixed) {
      // Pred against pred: 0/1 order the same under every integer comparison type.
      node.kind = Node::Kind::kCompare;
      absl::Status valid = WithCompareKey<uint8_t>(direction, comparison, type,
                                                   [](auto) { return absl::OkStatus(); });
      if (!valid.ok() || !ReadOperands(instr, node)) return std::nullopt;
      return node;
    }
    node.kind = Node::Kind::kPairCompare;
    const Literal* xs = KeyValue(x);
    const Literal* ys = KeyValue(y);
    if (xs == nullptr || ys == nullptr) return std::nullopt;
    const bool x_left = sides_.at(&x) != kRight;
    const bool y_left = sides_.at(&y) != kRight;
    absl::Status status = DispatchArrayType(type, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      return WithCompareKey<T>(direction, comparison, type, [&](auto key) {
        node.pair = std::make_unique<TypedPairCompare<T, decltype(key)>>(*xs, x_left, *ys, y_left,
                                                                          direction, key);
        return absl::OkStatus();
      });
    });
    if (!status.ok()) return std::nullopt;
    node.order_key = OrderKeyOf({&x, &y, comparison});
    return node;
  }

  int64_t OrderKeyOf(const OrderKey& key) {
    for (size_t k = 0; k < order_keys_.size(); ++k) {
      const OrderKey& o = order_keys_[k];
      if (o.type == key.type &&
          ((o.x == key.x && o.y == key.y) || (o.x == key.y && o.y == key.x))) {
        return static_cast<int64_t>(k);
      }
    }
    order_keys_.push_back(key);
    return static_cast<int64_t>(order_keys_.size()) - 1;
  }

  const SideMap& sides_;
  absl::Span<const HloInstruction* const> keys_;
  const Literal& key_values_;
  std::vector<Node>& nodes_;
  std::vector<OrderKey>& order_keys_;
  absl::flat_hash_map<const HloInstruction*, int64_t> slots_;
};

// Runs `nodes` on `v` (one slot per node) and returns the last node's value; `pair_value(n)`
// and `key_value(n)` give the values of the kPairCompare and kKey nodes.
template <typename PairValue, typename KeyValue>
bool RunNodes(const std::vector<Node>& nodes, uint8_t* v, PairValue pair_value,
              KeyValue key_value) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const int64_t* o = n.operands;
    switch (n.kind) {
      case Node::Kind::kKey:
        v[i] = key_value(n);
        break;
      case Node::Kind::kPairCompare:
        v[i] = pair_value(n);
        break;
      case Node::Kind::kCompare:
        v[i] = CompareKeys(n.direction, v[o[0]], v[o[1]]);
        break;
      case Node::Kind::kSelect:
        v[i] = v[o[0]] ? v[o[1]] : v[o[2]];
        break;
      case Node::Kind::kAnd:
        v[i] = v[o[0]] & v[o[1]];
        break;
      case Node::Kind::kOr:
        v[i] = v[o[0]] | v[o[1]];
        break;
      case Node::Kind::kXor:
        v[i] = v[o[0]] ^ v[o[1]];
        break;
      case Node::Kind::kNot:
        v[i] = !v[o[0]];
        break;
    }
  }
  return v[nodes.size() - 1] != 0;
}

// The comparator's truth table over order-key outcomes: entry sum_k (t_k + 1) * 3^k is its
// value when order key k of the left element compares to the right one's as t_k (-1 less,
// 0 equal, 1 greater). Nullopt when the program reads a pred key directly (no outcome of
// order keys determines it) or has too many order keys.
std::optional<std::vector<uint8_t>> TruthTable(const SortComparator::Program& program) {
  constexpr int64_t kMaxOrderKeys = 5;
  const int64_t m = static_cast<int64_t>(program.order_keys.size());
  if (m == 0 || m > kMaxOrderKeys) return std::nullopt;
  for (const Node& n : program.nodes) {
    if (n.kind == Node::Kind::kKey) return std::nullopt;
  }
  int64_t count = 1;
  for (int64_t k = 0; k < m; ++k) count *= 3;
  std::vector<uint8_t> table(count);
  std::vector<uint8_t> slots(program.nodes.size());
  std::vector<int> t(m);
  for (int64_t index = 0; index < count; ++index) {
    for (int64_t k = 0, rest = index; k < m; ++k, rest /= 3) t[k] = static_cast<int>(rest % 3) - 1;
    table[index] = RunNodes(
        program.nodes, slots.data(),
        [&](const Node& n) {
          const int outcome = n.pair->x_left() ? t[n.order_key] : -t[n.order_key];
          return CompareKeys(n.direction, outcome, 0);
        },
        [](const Node&) { return false; });
  }
  return table;
}

// The order keys (most significant first, with their directions) of a lexicographic order that
// `table` (TruthTable) is, or nullopt. Greedy: among the outcomes where the keys chosen so far
// are equal, the next key is one whose every unequal outcome decides the table by itself; the
// table must be false once all chosen keys are equal (a strict order).
std::optional<std::vector<std::pair<int64_t, bool>>> LexicographicKeys(
    const std::vector<uint8_t>& table, int64_t m) {
  std::vector<std::pair<int64_t, bool>> chosen;
  std::vector<bool> fixed(m, false);
  auto outcome = [](int64_t index, int64_t k) {
    for (int64_t i = 0; i < k; ++i) index /= 3;
    return static_cast<int>(index % 3) - 1;
  };
  auto in_region = [&](int64_t index) {
    for (int64_t k = 0; k < m; ++k) {
      if (fixed[k] && outcome(index, k) != 0) return false;
    }
    return true;
  };
  const int64_t count = static_cast<int64_t>(table.size());
  while (true) {
    bool any_true = false;
    for (int64_t i = 0; i < count; ++i) any_true |= in_region(i) && table[i];
    if (!any_true) return chosen;
    bool found = false;
    for (int64_t k = 0; k < m && !found; ++k) {
      for (bool descending : {false, true}) {
        if (fixed[k]) break;
        const int first = descending ? 1 : -1;  // The outcome that puts the left element first.
        bool decides = true;
        for (int64_t i = 0; i < count && decides; ++i) {
          const int o = outcome(i, k);
          if (in_region(i) && o != 0) decides = table[i] == (o == first);
        }
        if (decides) {
          chosen.emplace_back(k, descending);
          fixed[k] = true;
          found = true;
          break;
        }
      }
    }
    if (!found) return std::nullopt;
  }
}

// The program's lexicographic keys, or empty when it is not such an order on keys whose two
// sides hold the same array.
std::vector<LexKey> FindLexicographicOrder(const SortComparator::Program& program) {
  std::vector<const PairCompare*> representative(program.order_keys.size(), nullptr);
  for (const Node& n : program.nodes) {
    if (n.kind != Node::Kind::kPairCompare) continue;
    if (!n.pair->SameArrays()) return {};
    representative[n.order_key] = n.pair.get();
  }
  std::optional<std::vector<uint8_t>> table = TruthTable(program);
  if (!table.has_value()) return {};
  std::optional<std::vector<std::pair<int64_t, bool>>> keys =
      LexicographicKeys(*table, static_cast<int64_t>(program.order_keys.size()));
  if (!keys.has_value()) return {};
  std::vector<LexKey> lex;
  for (const auto& [k, descending] : *keys) lex.push_back({representative[k], descending});
  return lex;
}

}  // namespace

SortComparator::SortComparator(std::unique_ptr<Program> program)
    : program_(std::move(program)), slots_(program_->nodes.size()) {}

SortComparator::~SortComparator() = default;

absl::StatusOr<std::unique_ptr<SortComparator>> SortComparator::Create(
    const HloComputation& comparator, absl::Span<const Literal* const> operands,
    Evaluator& evaluator) {
  if (operands.empty() || comparator.root_instruction() == nullptr ||
      comparator.num_parameters() != 2 * static_cast<int64_t>(operands.size()) ||
      comparator.root_instruction()->shape().element_type() != PrimitiveType::kPred) {
    return nullptr;
  }
  for (const Literal* op : operands) {
    if (!op->shape().IsArray() || op->shape().dimensions() != operands[0]->shape().dimensions()) {
      return nullptr;
    }
  }
  std::optional<SideMap> sides = ClassifySides(comparator, operands);
  if (!sides.has_value()) return nullptr;
  const std::vector<const HloInstruction*> keys = KeyInstructions(comparator, *sides);
  std::unique_ptr<HloComputation> key_computation = BuildKeyComputation(keys, operands);
  auto program = std::make_unique<Program>();
  ASSIGN_OR_RETURN(program->keys, evaluator.Call(*key_computation, operands));
  ProgramBuilder builder(*sides, keys, *program);
  std::optional<int64_t> root = builder.SlotOf(comparator.root_instruction());
  // The root is built last, so its slot is the last one.
  if (!root.has_value() || *root + 1 != static_cast<int64_t>(program->nodes.size())) {
    return nullptr;
  }
  program->lex = FindLexicographicOrder(*program);
  return std::unique_ptr<SortComparator>(new SortComparator(std::move(program)));
}

bool SortComparator::Compare(int64_t a, int64_t b) {
  return RunNodes(
      program_->nodes, slots_.data(), [&](const Node& n) { return n.pair->Eval(a, b); },
      [&](const Node& n) { return n.key[n.left ? a : b] != 0; });
}

bool SortComparator::is_lexicographic() const { return !program_->lex.empty(); }

bool SortComparator::SortRowByKeys(int64_t base, int64_t stride, std::vector<int64_t>& perm) {
  const std::vector<LexKey>& lex = program_->lex;
  const int64_t length = static_cast<int64_t>(perm.size());
  const int64_t m = static_cast<int64_t>(lex.size());
  if (m == 0) return false;
  codes_.resize(m * length);
  for (int64_t k = 0; k < m; ++k) {
    uint64_t* column = codes_.data() + k * length;
    if (!lex[k].pair->Encode(base, stride, length, column)) return false;
    if (lex[k].descending) {
      for (int64_t j = 0; j < length; ++j) column[j] = ~column[j];
    }
  }
  std::iota(perm.begin(), perm.end(), 0);
  if (perm.size() >= kRadixMinLength) {
    // Least significant key first: each stable pass keeps the order of the keys after it.
    for (int64_t k = m - 1; k >= 0; --k) {
      StableRadixSortByCode(absl::MakeConstSpan(codes_.data() + k * length, length), perm,
                            scratch_);
    }
    return true;
  }
  const uint64_t* codes = codes_.data();
  std::stable_sort(perm.begin(), perm.end(), [codes, m, length](int64_t a, int64_t b) {
    for (int64_t k = 0; k < m; ++k) {
      const uint64_t x = codes[k * length + a];
      const uint64_t y = codes[k * length + b];
      if (x != y) return x < y;
    }
    return false;
  });
  return true;
}

}  // namespace runtime
