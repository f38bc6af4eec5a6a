// The fuzzer's mutations. Each works on the HLO text, so that what the parser and the verifier
// accept is part of what is tested, and each returns false when it does not apply to the text
// (no sharding to rewrite, no constant to change, ...):
//   reshard     rewrite (or add) one sharding annotation: a fresh tiling over the module's
//               devices (iota, transposed iota or explicit order, with a replicated or manual
//               subgroup), a perturbed one (two devices swapped, a tile dim changed,
//               last_tile_dim_replicate toggled), replicated, maximal or manual;
//   strip       remove the shardings of some instructions (propagation then chooses them);
//   opcode      swap an elementwise opcode for another of the same arity, or a compare's
//               direction;
//   resize      change one dimension size everywhere it occurs (shapes stay consistent, so
//               shards become uneven), or in one shape only;
//   attribute   perturb a number of `dimensions={...}`, slice, padding, window, dot and
//               gather/scatter dimension numbers and the like;
//   line        bypass an instruction (its users read one of its operands), duplicate one
//               (some users read the copy) or drop one;
//   partitions  change num_partitions in the header;
//   groups      rewrite replica_groups or source_target_pairs;
//   constant    change a number of a constant.
// Draws come only from the Random passed in, so a mutant depends only on its seed; two draws
// are never operands of one call or operator (their order would be unspecified).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/partition_fuzz.h"
#include "tests/partition_fuzz_text.h"

namespace partition_fuzz {
namespace {

// ---- reshard, strip ---------------------------------------------------------------------------

// `count` devices in a random order: iota, transposed iota or an explicit list (drawn from
// `devices` ids when count < devices).
std::string DeviceOrder(Random& rng, int64_t count, int64_t devices) {
  const int64_t form = rng.Int(0, 2);
  if (form == 0 || count == 1) return "<=[" + std::to_string(count) + "]";
  if (form == 1) {
    const int64_t a = rng.Pick(Divisors(count));
    return "<=[" + std::to_string(a) + "," + std::to_string(count / a) + "]T(1,0)";
  }
  std::vector<int64_t> ids = rng.Permutation(std::max(count, devices));
  ids.resize(count);
  return Join(ids);
}

// A tiled sharding of a rank-`rank` value over `devices` devices. `subgroup`: "" (none),
// "replicate" or "manual" (an extra last tile dim).
std::string RandomTiled(Random& rng, int64_t rank, int64_t devices, const std::string& subgroup) {
  const int64_t slots = rank + (subgroup.empty() ? 0 : 1);
  if (slots == 0) return "{replicated}";
  // Now and then only a subset of the devices, or a tile count that is not a device count.
  int64_t total = rng.Chance(0.08) ? rng.Pick(Divisors(devices)) : devices;
  std::vector<int64_t> tile(slots, 1);
  for (int64_t p : PrimeFactors(total)) tile[rng.Int(0, slots - 1)] *= p;
  if (rng.Chance(0.04)) ++tile[rng.Int(0, slots - 1)];
  total = 1;
  for (int64_t t : tile) total *= t;
  std::string out = "{devices=[" + Join(tile) + "]" + DeviceOrder(rng, total, devices);
  if (subgroup == "replicate") out += " last_tile_dim_replicate";
  if (subgroup == "manual") out += " last_tile_dims={manual}";
  return out + "}";
}

// `old` (a `{devices=[...]...}` sharding) changed a little, or "" when it is not tiled.
std::string PerturbTiled(Random& rng, const std::string& old, int64_t devices) {
  if (old.rfind("{devices=[", 0) != 0) return "";
  const size_t close = old.find(']');
  if (close == kNone) return "";
  std::vector<int64_t> tile;
  for (const std::string& t : SplitTopLevel(old.substr(10, close - 10))) {
    tile.push_back(std::atoll(t.c_str()));
  }
  size_t order_end = old.find_first_of(" }", close);
  if (order_end == kNone) return "";
  std::string order = old.substr(close + 1, order_end - close - 1);
  std::string rest = old.substr(order_end);
  const size_t meta = rest.find(" metadata=");
  if (meta != kNone) rest = rest.substr(0, meta) + "}";
  switch (rng.Int(0, 3)) {
    case 0: {  // Swap two devices (an iota order becomes an explicit permutation).
      int64_t total = 1;
      for (int64_t t : tile) total *= t;
      std::vector<int64_t> ids;
      if (order.rfind("<=", 0) == 0) {
        ids = rng.Permutation(total);
      } else {
        for (const std::string& d : SplitTopLevel(order)) ids.push_back(std::atoll(d.c_str()));
        if (ids.size() > 1) {
          const int64_t a = rng.Int(0, ids.size() - 1);
          const int64_t b = rng.Int(0, ids.size() - 1);
          std::swap(ids[a], ids[b]);
        }
      }
      order = Join(ids);
      break;
    }
    case 1: {  // Move a factor of two between tile dims.
      const int64_t from = rng.Int(0, tile.size() - 1), to = rng.Int(0, tile.size() - 1);
      if (tile[from] % 2 == 0 && from != to) {
        tile[from] /= 2;
        tile[to] *= 2;
      } else {
        std::swap(tile[from], tile[to]);
      }
      break;
    }
    case 2:  // Toggle the replicated subgroup.
      if (rest.find(" last_tile_dim_replicate") != kNone) {
        rest.erase(rest.find(" last_tile_dim_replicate"), 24);
      } else {
        rest.insert(0, " last_tile_dim_replicate");
      }
      break;
    default: {  // One tile dim doubled (the device count then doubles too).
      tile[rng.Int(0, tile.size() - 1)] *= 2;
      int64_t total = 1;
      for (int64_t t : tile) total *= t;
      order = "<=[" + std::to_string(total) + "]";
      break;
    }
  }
  return "{devices=[" + Join(tile) + "]" + order + rest;
}

std::string NewSharding(Random& rng, int64_t rank, int64_t devices, const std::string& old) {
  const int64_t r = rng.Int(0, 99);
  if (r < 40) {
    const int64_t subgroup = rng.Int(0, 9);
    return RandomTiled(rng, rank, devices,
                       subgroup < 6   ? ""
                       : subgroup < 9 ? "replicate"
                                      : "manual");
  }
  if (r < 65) {
    const std::string perturbed = PerturbTiled(rng, old, devices);
    if (!perturbed.empty()) return perturbed;
    return RandomTiled(rng, rank, devices, "");
  }
  if (r < 77) return "{replicated}";
  if (r < 88) {
    return "{maximal device=" + std::to_string(rng.Int(0, devices - (rng.Chance(0.1) ? 0 : 1))) +
           "}";
  }
  return "{manual}";
}

// A new sharding in place of `old`, for an instruction whose array leaves have ranks `ranks`
// (a tuple sharding gets one leaf's replaced).
std::string ReplaceSharding(Random& rng, const std::string& old, const std::vector<int64_t>& ranks,
                            int64_t devices) {
  if (old.rfind("{{", 0) != 0) {
    return NewSharding(rng, ranks.size() == 1 ? ranks[0] : rng.Int(1, 3), devices, old);
  }
  // A tuple sharding: replace one leaf's.
  std::vector<std::string> leaves = SplitTopLevel(old.substr(1, old.size() - 2));
  const int64_t k = rng.Int(0, leaves.size() - 1);
  const int64_t rank = ranks.size() == leaves.size() ? ranks[k] : rng.Int(1, 3);
  leaves[k] = NewSharding(rng, rank, devices, Trim(leaves[k]));
  std::string out = "{";
  for (size_t i = 0; i < leaves.size(); ++i) out += (i ? ", " : "") + Trim(leaves[i]);
  return out + "}";
}

bool Reshard(std::string& text, Random& rng, std::string* what) {
  const int64_t devices = NumPartitions(text);
  std::vector<Instr> bare;
  for (const Instr& in : Instructions(text)) {
    if (text.substr(in.begin, in.end - in.begin).find("sharding=") == kNone) bare.push_back(in);
  }
  if (!bare.empty() && rng.Chance(0.2)) {  // Annotate an instruction that has no sharding.
    const Instr& in = rng.Pick(bare);
    const std::vector<int64_t> ranks = LeafRanks(in.shape(text));
    if (ranks.size() != 1) return false;
    const std::string s = NewSharding(rng, ranks[0], devices, "");
    text.insert(in.end, ", sharding=" + s);
    *what = "reshard: annotate %" + in.name + " with " + Brief(s);
    return true;
  }
  const std::vector<size_t> starts = FindAll(text, "sharding={");
  if (starts.empty()) return false;
  const size_t open = rng.Pick(starts) + 9;
  const size_t close = MatchClose(text, open);
  if (close == kNone) return false;
  const std::string old = text.substr(open, close - open + 1);
  const std::optional<Instr> in = InstrAt(text, open);
  const std::vector<int64_t> ranks = in ? LeafRanks(in->shape(text)) : std::vector<int64_t>{};
  const std::string replacement = ReplaceSharding(rng, old, ranks, devices);
  text.replace(open, old.size(), replacement);
  *what = "reshard %" + (in ? in->name : std::string("?")) + ": " + Brief(old) + " -> " +
          Brief(replacement);
  return true;
}

bool StripShardings(std::string& text, Random& rng, std::string* what) {
  std::vector<Instr> annotated;
  for (const Instr& in : Instructions(text)) {
    const std::string line = text.substr(in.begin, in.end - in.begin);
    if (line.find("sharding={") != kNone && in.opcode(text) != "parameter" &&
        (!in.root || rng.Chance(0.3))) {
      annotated.push_back(in);
    }
  }
  if (annotated.empty()) return false;
  std::vector<std::string> names;
  const int64_t must = rng.Int(0, annotated.size() - 1);
  // Back to front, so the positions of the lines not yet edited stay valid.
  for (int64_t k = annotated.size() - 1; k >= 0; --k) {
    if (k != must && !rng.Chance(0.5)) continue;
    const Instr& in = annotated[k];
    const size_t open = text.find("sharding={", in.begin) + 9;
    const size_t comma = text.rfind(',', open);
    const size_t close = MatchClose(text, open);
    if (close == kNone || close > in.end || comma == kNone || comma < in.args_end) continue;
    text.erase(comma, close + 1 - comma);
    names.push_back("%" + in.name);
  }
  *what = "strip shardings of " + std::to_string(names.size()) + " instruction(s), e.g. " +
          (names.empty() ? "none" : names.front());
  return !names.empty();
}

// ---- opcode -----------------------------------------------------------------------------------

const std::vector<std::string>& UnaryOps() {
  static const auto* ops = new std::vector<std::string>{"abs",
                                                        "negate",
                                                        "exponential",
                                                        "log",
                                                        "sqrt",
                                                        "rsqrt",
                                                        "tanh",
                                                        "sine",
                                                        "cosine",
                                                        "floor",
                                                        "ceil",
                                                        "sign",
                                                        "logistic",
                                                        "exponential-minus-one",
                                                        "log-plus-one",
                                                        "cbrt",
                                                        "round-nearest-even",
                                                        "round-nearest-afz",
                                                        "copy",
                                                        "not",
                                                        "is-finite",
                                                        "popcnt",
                                                        "count-leading-zeros",
                                                        "tan",
                                                        "erf"};
  return *ops;
}

const std::vector<std::string>& BinaryOps() {
  static const auto* ops = new std::vector<std::string>{"add",
                                                        "subtract",
                                                        "multiply",
                                                        "divide",
                                                        "maximum",
                                                        "minimum",
                                                        "power",
                                                        "remainder",
                                                        "atan2",
                                                        "and",
                                                        "or",
                                                        "xor",
                                                        "shift-left",
                                                        "shift-right-logical",
                                                        "shift-right-arithmetic"};
  return *ops;
}

// The ones every float module accepts, drawn more often.
const std::vector<std::string>& CommonOps(bool binary) {
  static const auto* unary = new std::vector<std::string>{
      "abs", "negate", "exponential", "log", "sqrt", "tanh", "sine", "floor", "sign", "copy"};
  static const auto* binary_ops = new std::vector<std::string>{
      "add", "subtract", "multiply", "divide", "maximum", "minimum", "power"};
  return binary ? *binary_ops : *unary;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool SwapOpcode(std::string& text, Random& rng, std::string* what) {
  std::vector<Instr> candidates;
  for (const Instr& in : Instructions(text)) {
    const std::string op = in.opcode(text);
    if (Contains(UnaryOps(), op) || Contains(BinaryOps(), op) || op == "compare") {
      candidates.push_back(in);
    }
  }
  if (candidates.empty()) return false;
  const Instr& in = rng.Pick(candidates);
  const std::string op = in.opcode(text);
  if (op == "compare") {
    const size_t at = text.find("direction=", in.args_end);
    if (at == kNone || at > in.end) return false;
    const size_t end = text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ", at + 10);
    const std::string old = text.substr(at + 10, end - at - 10);
    const std::string next = rng.Pick(std::vector<std::string>{"EQ", "NE", "LT", "LE", "GT", "GE"});
    text.replace(at + 10, old.size(), next);
    *what = "opcode %" + in.name + ": direction " + old + " -> " + next;
    return true;
  }
  const bool binary = Contains(BinaryOps(), op);
  const std::string next =
      rng.Chance(0.7) ? rng.Pick(CommonOps(binary)) : rng.Pick(binary ? BinaryOps() : UnaryOps());
  if (next == op) return false;
  text.replace(in.opcode_begin, op.size(), next);
  *what = "opcode %" + in.name + ": " + op + " -> " + next;
  return true;
}

// ---- resize -----------------------------------------------------------------------------------

// A dimension size inside a shape's brackets: [begin, end) of its digits.
struct DimToken {
  size_t begin, end;
  int64_t value;
};

// The dimension sizes of every array shape in the text (`f32[8,2]`, `s32[4]`, ...).
std::vector<DimToken> DimTokens(const std::string& text) {
  static const auto* types = new std::vector<std::string>{
      "pred", "s4",  "s8",   "s16", "s32", "s64", "u4",   "u8",       "u16",   "u32",
      "u64",  "f16", "bf16", "f32", "f64", "c64", "c128", "f8e4m3fn", "f8e5m2"};
  std::vector<DimToken> dims;
  for (size_t open = text.find('['); open != kNone; open = text.find('[', open + 1)) {
    size_t type_begin = open;
    while (type_begin > 0 && std::isalnum(static_cast<unsigned char>(text[type_begin - 1]))) {
      --type_begin;
    }
    if (!Contains(*types, text.substr(type_begin, open - type_begin))) continue;
    const size_t close = text.find(']', open);
    if (close == kNone) break;
    size_t i = open + 1;
    while (i < close) {
      const size_t end = std::min(text.find(',', i), close);
      const std::string token = text.substr(i, end - i);
      if (!token.empty() && std::all_of(token.begin(), token.end(), ::isdigit)) {
        dims.push_back({i, end, std::atoll(token.c_str())});
      }
      i = end + 1;
    }
  }
  return dims;
}

bool Resize(std::string& text, Random& rng, std::string* what) {
  std::vector<DimToken> dims = DimTokens(text);
  if (dims.empty()) return false;
  const int64_t old = rng.Pick(dims).value;
  std::vector<int64_t> choices = {old + 1, old * 2, 1, 3, 5, 7, 12};
  if (old > 1) choices.push_back(old - 1);
  if (old > 1) choices.push_back(old / 2);
  const int64_t next = rng.Pick(choices);
  if (next == old) return false;
  const bool everywhere = rng.Chance(0.7);
  const size_t only = rng.Int(0, dims.size() - 1);
  int changed = 0;
  for (int64_t k = dims.size() - 1; k >= 0; --k) {
    if (dims[k].value != old || (!everywhere && dims[k].begin != dims[only].begin)) continue;
    text.replace(dims[k].begin, dims[k].end - dims[k].begin, std::to_string(next));
    ++changed;
  }
  if (changed == 0) {  // `only` held another size: change that one.
    text.replace(dims[only].begin, dims[only].end - dims[only].begin, std::to_string(next));
    changed = 1;
  }
  *what = "resize " + std::to_string(old) + " -> " + std::to_string(next) + " in " +
          std::to_string(changed) + " place(s)";
  return true;
}

// ---- attribute --------------------------------------------------------------------------------

// The span of an attribute's value starting at `begin`: a bracketed group, or up to the next
// comma, space or closing bracket.
size_t ValueEnd(const std::string& text, size_t begin) {
  if (begin < text.size() && (text[begin] == '{' || text[begin] == '[')) {
    const size_t close = MatchClose(text, begin);
    return close == kNone ? kNone : close + 1;
  }
  const size_t end = text.find_first_of(", })\n", begin);
  return end == kNone ? text.size() : end;
}

bool PerturbAttribute(std::string& text, Random& rng, std::string* what) {
  static const auto* names = new std::vector<std::string>{"dimensions",
                                                          "slice",
                                                          "padding",
                                                          "window",
                                                          "lhs_contracting_dims",
                                                          "rhs_contracting_dims",
                                                          "lhs_batch_dims",
                                                          "rhs_batch_dims",
                                                          "dynamic_slice_sizes",
                                                          "slice_sizes",
                                                          "offset_dims",
                                                          "collapsed_slice_dims",
                                                          "start_index_map",
                                                          "index_vector_dim",
                                                          "iota_dimension",
                                                          "update_window_dims",
                                                          "inserted_window_dims",
                                                          "scatter_dims_to_operand_dims",
                                                          "feature_group_count",
                                                          "batch_group_count",
                                                          "split_dimension",
                                                          "concat_dimension",
                                                          "k"};
  std::vector<std::pair<size_t, std::string>> sites;  // Value start, attribute name.
  for (const std::string& name : *names) {
    for (size_t at : FindAll(text, " " + name + "=")) sites.push_back({at + name.size() + 2, name});
  }
  if (sites.empty()) return false;
  const auto& [begin, name] = rng.Pick(sites);
  const size_t end = ValueEnd(text, begin);
  if (end == kNone) return false;
  const std::string old = text.substr(begin, end - begin);
  std::string value = old;
  if (name == "dimensions" && value.size() > 2 && value[0] == '{' && rng.Chance(0.4)) {
    std::vector<std::string> items = SplitTopLevel(value.substr(1, value.size() - 2));
    if (rng.Chance(0.5) && items.size() > 1) {
      items.erase(items.begin() + rng.Int(0, items.size() - 1));
    } else {
      for (int64_t i = items.size() - 1; i > 0; --i) std::swap(items[i], items[rng.Int(0, i)]);
    }
    value = "{";
    for (size_t i = 0; i < items.size(); ++i) value += (i ? "," : "") + items[i];
    value += "}";
  } else {
    std::vector<std::pair<size_t, size_t>> numbers;  // Digit runs.
    for (size_t i = 0; i < value.size();) {
      if (!std::isdigit(static_cast<unsigned char>(value[i]))) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < value.size() && std::isdigit(static_cast<unsigned char>(value[j]))) ++j;
      // Skip the digits of a name such as b01f or T(...)'s dims: only standalone numbers.
      if (i == 0 || !std::isalpha(static_cast<unsigned char>(value[i - 1]))) {
        numbers.push_back({i, j});
      }
      i = j;
    }
    if (numbers.empty()) return false;
    const auto [nb, ne] = rng.Pick(numbers);
    const int64_t v = std::atoll(value.substr(nb, ne - nb).c_str());
    const int64_t next =
        rng.Pick(std::vector<int64_t>{v + 1, v > 0 ? v - 1 : 2, 0, 1, 2 * v, rng.Int(0, 4)});
    value.replace(nb, ne - nb, std::to_string(next));
  }
  if (value == old) return false;
  text.replace(begin, old.size(), value);
  const std::optional<Instr> in = InstrAt(text, begin);
  *what = "attribute " + name + " of %" + (in ? in->name : std::string("?")) + ": " + Brief(old) +
          " -> " + Brief(value);
  return true;
}

// ---- line -------------------------------------------------------------------------------------

bool IsLeafOpcode(const std::string& op) {
  return op == "parameter" || op == "constant" || op == "iota" || op == "partition-id" ||
         op == "replica-id" || op == "after-all";
}

// Removes `in`'s line (users then read `operand`, or nothing when it is empty).
void RemoveLine(std::string& text, const Instr& in, const std::string& operand) {
  const std::string name = in.name;
  text.erase(in.begin, std::min(text.size(), in.end + 1) - in.begin);
  if (!operand.empty()) ReplaceOperand(text, name, operand, 0, [] { return true; });
}

bool EditLine(std::string& text, Random& rng, std::string* what) {
  std::vector<Instr> instrs = Instructions(text);
  std::vector<Instr> inner;  // Neither a parameter nor a root.
  for (const Instr& in : instrs) {
    if (!in.root && in.opcode(text) != "parameter") inner.push_back(in);
  }
  const int64_t r = rng.Int(0, 99);
  if (r < 50) {  // Bypass.
    std::vector<Instr> candidates;
    for (const Instr& in : inner) {
      if (!IsLeafOpcode(in.opcode(text)) && !OperandNames(text, in).empty()) {
        candidates.push_back(in);
      }
    }
    if (candidates.empty()) return false;
    const Instr& in = rng.Pick(candidates);
    const std::vector<std::string> operands = OperandNames(text, in);
    const std::string operand = rng.Chance(0.7) ? operands[0] : rng.Pick(operands);
    RemoveLine(text, in, operand);
    *what = "line: bypass %" + in.name + " (users read %" + operand + ")";
    return true;
  }
  if (r < 85) {  // Duplicate: the copy follows the original, and some later uses read it.
    std::vector<Instr> candidates;
    for (const Instr& in : instrs) {
      if (in.opcode(text) != "parameter") candidates.push_back(in);
    }
    if (candidates.empty()) return false;
    const Instr& in = rng.Pick(candidates);
    std::string copy = text.substr(in.begin, in.end - in.begin);
    if (in.root) copy.erase(copy.find("ROOT "), 5);
    const std::string new_name = in.name + ".fz";
    copy.replace(copy.find(in.name), in.name.size(), new_name);
    const size_t after = std::min(text.size(), in.end + 1);
    text.insert(after, copy + (in.end < text.size() ? "\n" : ""));
    const int used = ReplaceOperand(text, in.name, new_name, after + copy.size(),
                                    [&] { return rng.Chance(0.5); });
    *what = "line: duplicate %" + in.name + " (" + std::to_string(used) + " use(s) read the copy)";
    return true;
  }
  if (inner.empty()) return false;  // Drop.
  const Instr& in = rng.Pick(inner);
  RemoveLine(text, in, "");
  *what = "line: drop %" + in.name;
  return true;
}

// ---- partitions, groups, constant -------------------------------------------------------------

bool ChangeNumPartitions(std::string& text, Random& rng, std::string* what) {
  const size_t header = text.find("HloModule");
  if (header == kNone) return false;
  const int64_t old = NumPartitions(text);
  const int64_t next = rng.Pick(std::vector<int64_t>{1, 2, 3, 4, 6, 8, 16});
  if (next == old) return false;
  const size_t at = text.find("num_partitions=");
  if (at != kNone) {
    const size_t end = text.find_first_not_of("0123456789", at + 15);
    text.replace(at + 15, end - at - 15, std::to_string(next));
  } else {
    const size_t eol = text.find('\n', header);
    text.insert(eol == kNone ? text.size() : eol, ", num_partitions=" + std::to_string(next));
  }
  *what = "partitions: num_partitions " + std::to_string(old) + " -> " + std::to_string(next);
  return true;
}

// Random replica groups over `devices` devices.
std::string RandomGroups(Random& rng, int64_t devices) {
  const int64_t r = rng.Int(0, 9);
  if (r == 0) return "{}";
  const int64_t size = rng.Pick(Divisors(devices));
  if (r < 3) {
    return "[" + std::to_string(devices / size) + "," + std::to_string(size) + "]<=[" +
           std::to_string(devices) + "]";
  }
  std::vector<int64_t> ids = rng.Chance(0.5) ? rng.Permutation(devices) : std::vector<int64_t>();
  if (ids.empty()) {
    for (int64_t d = 0; d < devices; ++d) ids.push_back(d);
  }
  if (r == 9 && ids.size() > 1) ids.pop_back();  // A device in no group.
  std::string out = "{";
  for (size_t g = 0; g * size < ids.size(); ++g) {
    const size_t end = std::min(ids.size(), (g + 1) * size);
    out += (g ? ",{" : "{") +
           Join(std::vector<int64_t>(ids.begin() + g * size, ids.begin() + end)) + "}";
  }
  return out + "}";
}

// The end of the iota replica groups `[2,2]<=[4]` or `[2,2]<=[2,2]T(1,0)` starting at `begin`.
size_t IotaEnd(const std::string& text, size_t begin) {
  size_t end = MatchClose(text, begin);
  if (end == kNone || text.compare(end + 1, 3, "<=[") != 0) return kNone;
  end = MatchClose(text, end + 3);
  if (end == kNone) return kNone;
  if (text.compare(end + 1, 2, "T(") == 0) end = MatchClose(text, end + 2);
  return end == kNone ? kNone : end + 1;
}

bool ChangeGroups(std::string& text, Random& rng, std::string* what) {
  std::vector<std::pair<size_t, bool>> sites;  // Value start; true for source_target_pairs.
  for (size_t at : FindAll(text, "replica_groups=")) sites.push_back({at + 15, false});
  for (size_t at : FindAll(text, "source_target_pairs=")) sites.push_back({at + 20, true});
  if (sites.empty()) return false;
  const auto [begin, pairs] = rng.Pick(sites);
  size_t end = ValueEnd(text, begin);
  if (end == kNone) return false;
  if (!pairs && text[begin] == '[') end = IotaEnd(text, begin);
  if (end == kNone) return false;
  const std::string old = text.substr(begin, end - begin);
  const int64_t devices = NumPartitions(text);
  std::string value;
  if (pairs) {
    const std::vector<int64_t> perm = rng.Permutation(devices);
    value = "{";
    for (int64_t d = 0; d < devices; ++d) {
      if (d > 0 && rng.Chance(0.3)) continue;
      value +=
          (value.size() > 1 ? ",{" : "{") + std::to_string(d) + "," + std::to_string(perm[d]) + "}";
    }
    value += "}";
  } else {
    value = RandomGroups(rng, devices);
  }
  text.replace(begin, old.size(), value);
  *what = std::string(pairs ? "groups: source_target_pairs " : "groups: replica_groups ") +
          Brief(old) + " -> " + Brief(value);
  return true;
}

bool ChangeConstant(std::string& text, Random& rng, std::string* what) {
  std::vector<Instr> constants;
  for (const Instr& in : Instructions(text)) {
    if (in.opcode(text) == "constant") constants.push_back(in);
  }
  if (constants.empty()) return false;
  const Instr& in = rng.Pick(constants);
  // Number tokens (and true/false) inside the parentheses.
  std::vector<std::pair<size_t, size_t>> tokens;
  for (size_t i = in.args_begin; i < in.args_end;) {
    const char c = text[i];
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-') {
      size_t j = i + 1;
      while (j < in.args_end && (std::isalnum(static_cast<unsigned char>(text[j])) ||
                                 text[j] == '.' || text[j] == '-' || text[j] == '+')) {
        ++j;
      }
      tokens.push_back({i, j});
      i = j;
    } else {
      ++i;
    }
  }
  if (tokens.empty()) return false;
  const auto [b, e] = rng.Pick(tokens);
  const std::string old = text.substr(b, e - b);
  const std::string type = in.shape(text);
  std::string next;
  if (old == "true" || old == "false") {
    next = old == "true" ? "false" : "true";
  } else if (type[0] == 'f' || type.rfind("bf", 0) == 0 || type[0] == 'c') {
    next = rng.Pick(std::vector<std::string>{"0", "1", "-1", "0.5", "-" + old, "1e+30", "1e-30",
                                             "inf", "nan", "3"});
  } else {
    const int64_t v = std::atoll(old.c_str());
    next =
        std::to_string(rng.Pick(std::vector<int64_t>{0, 1, -1, v + 1, v - 1, 2 * v, 100, 1000000}));
  }
  if (next == old) return false;
  text.replace(b, old.size(), next);
  *what = "constant %" + in.name + ": " + old + " -> " + next;
  return true;
}

using MutationFn = bool (*)(std::string&, Random&, std::string*);

struct Kind {
  MutationFn fn;
  int weight;
};

const std::vector<Kind>& Kinds() {
  static const auto* kinds = new std::vector<Kind>{
      {&Reshard, 30},          {&StripShardings, 6}, {&SwapOpcode, 14},         {&Resize, 12},
      {&PerturbAttribute, 12}, {&EditLine, 9},       {&ChangeNumPartitions, 5}, {&ChangeGroups, 5},
      {&ChangeConstant, 7}};
  return *kinds;
}

}  // namespace

// A scan's `is_associative=true` is the program's promise about its body, which the
// partitioner trusts (a split scan dim runs as a prefix over blocks). An edit that may change
// what a body computes drops the promise rather than make a program that breaks it.
std::string KeepPromises(std::string& text, MutationFn fn, std::string what) {
  if (fn != &SwapOpcode && fn != &EditLine && fn != &ChangeConstant) return what;
  const std::string promise = "is_associative=true";
  bool dropped = false;
  for (size_t at = text.find(promise); at != kNone; at = text.find(promise, at)) {
    text.replace(at, promise.size(), "is_associative=false");
    dropped = true;
  }
  return dropped ? what + "; is_associative dropped" : what;
}

std::string MutateOnce(std::string& text, Random& rng) {
  int total = 0;
  for (const Kind& kind : Kinds()) total += kind.weight;
  for (int attempt = 0; attempt < 12; ++attempt) {
    int64_t draw = rng.Int(0, total - 1);
    for (const Kind& kind : Kinds()) {
      if (draw < kind.weight) {
        std::string what;
        if (kind.fn(text, rng, &what)) return KeepPromises(text, kind.fn, what);
        break;
      }
      draw -= kind.weight;
    }
  }
  return "";
}

}  // namespace partition_fuzz
