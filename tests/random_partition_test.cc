// A randomized differential test of the partitioner. Each seed generates a small f32 module: a
// chain of 2-6 ops (elementwise unary/binary, broadcast, transpose, reshape, reduce, dot,
// slice, pad, concatenate, reverse, dynamic-slice, dynamic-update-slice, select/compare, iota,
// convolution, reduce-window) over random shapes of rank 1-4 with dims 1-17, so that shards are
// often uneven, with random shardings on its parameters, intermediates and root: tiled over 2,
// 4 or 8 devices in iota, transposed-iota or explicit device order, partially replicated,
// replicated or maximal, and often the sharding of the op's operand. A fifth of the chains run
// as the computation of a `call`, three tenths as the body of a two-trip while loop whose
// state holds the parameters and the result (its sharding mostly annotated with theirs), and a
// fifth as the true branch of a conditional on a random pred (the false branch gives zeros),
// so called computations are partitioned with random parameter and state shardings. The test checks that the
// partitioned program is valid HLO and computes what the unpartitioned module computes on
// random inputs (runtime::VerifyAgainst, two input seeds). About 40% of the cases leave most
// intermediates unannotated and run sharding propagation first, as `spmd-partition` does; half
// of the cases with a dot force one dot strategy family on it (where the family applies).
//
// The generator computes every result shape itself (what shape inference gives) and the test
// verifies the module before partitioning, so an invalid module is reported as a generator
// bug, not a partitioner bug. Generation depends only on the seed (mt19937_64, whose output
// the standard fixes, reduced by our own arithmetic), so a case is reproduced by its name:
//   bazel-bin/tests/random_partition_test --gtest_filter='*seed_17'
// prints the module in the failure's trace. For exploration, RANDOM_PARTITION_SEEDS=FIRST-LAST
// runs other seeds and RANDOM_PARTITION_DUMP_DIR=DIR writes each module to DIR/seed_N.hlo
// (for `spmd-run --verify`).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/transforms/dead_code_elimination.h"
#include "hlo/verifier/hlo_verifier.h"
#include "runtime/cpu/verify.h"
#include "spmd/partitioner/spmd_partitioner.h"
#include "spmd/propagation/sharding_propagation.h"

namespace {

using Dims = std::vector<int64_t>;

// Results larger than this are rejected, so a case runs in milliseconds.
constexpr int64_t kMaxElements = 8192;

// Looser than the f32 default (rtol 1e-4, atol 1e-5 scaled by the result's magnitude): a chain
// of dots over iotas builds intermediates in the thousands that a reduce or dot may cancel
// down to a result near 1, so a reordered sum is off by ~1e-4 there. A partitioning bug
// (a wrong halo, shard or mask) is off by the values' own size.
constexpr runtime::Tolerance kTolerance = {/*rtol=*/1e-3, /*atol=*/1e-3};

int64_t Elements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string Join(const std::vector<int64_t>& values, const std::string& separator = ",") {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += separator;
    out += std::to_string(values[i]);
  }
  return out;
}

std::string ShapeText(const Dims& dims, const std::string& type = "f32") {
  return type + "[" + Join(dims) + "]";
}

// Deterministic draws: mt19937_64's sequence is fixed by the standard, and the reductions
// below are ours (the standard distributions differ between library implementations).
class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  // Uniform in [lo, hi].
  int64_t Int(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(engine_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(double p) { return static_cast<double>(engine_() >> 11) * 0x1.0p-53 < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& values) {
    return values[Int(0, static_cast<int64_t>(values.size()) - 1)];
  }
  // A uniformly random permutation of 0..n-1 (Fisher-Yates).
  std::vector<int64_t> Permutation(int64_t n) {
    std::vector<int64_t> p(n);
    for (int64_t i = 0; i < n; ++i) p[i] = i;
    for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[Int(0, i)]);
    return p;
  }
  // A random subset of 0..n-1 with `k` elements, ascending.
  std::vector<int64_t> Subset(int64_t n, int64_t k) {
    std::vector<int64_t> p = Permutation(n);
    p.resize(k);
    std::sort(p.begin(), p.end());
    return p;
  }

 private:
  std::mt19937_64 engine_;
};

// An f32 array value of the entry computation.
struct Value {
  std::string name;
  Dims dims;
  std::string sharding;  // Its annotation; empty: none.
};

// Window dims for convolution and reduce-window, whose text WindowText writes.
struct WindowDim {
  int64_t size = 1, stride = 1, lo = 0, hi = 0, lhs_dilate = 1, rhs_dilate = 1;
};

struct GeneratedModule {
  std::string text;
  int64_t devices = 0;
  bool propagate = false;    // Run sharding propagation before partitioning.
  std::string dot_strategy;  // Non-empty: force every dot to this strategy family.
  std::string error;         // A generator bug: a result with a dim of size 0.
};

class ModuleGenerator {
 public:
  explicit ModuleGenerator(uint64_t seed) : seed_(seed), rng_(seed) {}
  GeneratedModule Generate();

 private:
  struct Instruction {
    std::string name, shape, expression, sharding;  // `sharding` empty: none.
  };
  enum class Op {
    kUnary,
    kBinary,
    kBroadcast,
    kTranspose,
    kReshape,
    kReduce,
    kDot,
    kSlice,
    kPad,
    kConcatenate,
    kReverse,
    kDynamicSlice,
    kDynamicUpdateSlice,
    kSelect,
    kConvolution,
    kReduceWindow,
    kCount
  };

  // Shardings.
  std::string Sharding(const Dims& dims);
  std::string TiledSharding(const Dims& dims);
  std::string DeviceOrder();
  std::string IntermediateSharding(const Dims& dims);
  std::string OperandSharding(const Dims& dims);

  // Leaves and emission.
  Value Emit(const Dims& dims, const std::string& expression, const std::string& sharding,
             const std::string& type = "f32");
  Value Parameter(const Dims& dims);
  std::string ScalarParameter(const std::string& type = "f32");
  std::string Constant(const std::string& type, const std::string& literal);
  Value Leaf(const Dims& dims);
  Value SameShapeOperand(const Dims& dims);
  Dims RandomDims(int64_t rank, int64_t max_elements);
  std::string Reducer(bool max);
  std::string ReduceInit(bool max);

  // Ops: each returns the result, or nothing when it does not apply to `x`.
  std::optional<Value> Apply(Op op, const Value& x);
  std::optional<Value> Unary(const Value& x);
  std::optional<Value> Binary(const Value& x);
  std::optional<Value> Broadcast(const Value& x);
  std::optional<Value> Transpose(const Value& x);
  std::optional<Value> Reshape(const Value& x);
  std::optional<Value> Reduce(const Value& x);
  std::optional<Value> Dot(const Value& x);
  std::optional<Value> Slice(const Value& x);
  std::optional<Value> Pad(const Value& x);
  std::optional<Value> Concatenate(const Value& x);
  std::optional<Value> Reverse(const Value& x);
  std::optional<Value> DynamicSlice(const Value& x);
  std::optional<Value> DynamicUpdateSlice(const Value& x);
  std::optional<Value> Select(const Value& x);
  std::optional<Value> Convolution(const Value& x);
  std::optional<Value> ReduceWindow(const Value& x);
  std::string ConstantIndices(const Dims& dims, const Dims& sizes);
  WindowDim RandomWindowDim(int64_t size, int64_t lo_min, double stride_chance);
  int64_t Divisor(int64_t n);

  std::string Text(const std::string& root_sharding) const;
  // The reducer computations the ops used.
  std::string Reducers() const;
  // Instruction `i` as a line of text, with `sharding` and, for a parameter inside a called
  // computation, the parameter read from element `k+1` of the loop state instead.
  std::string Line(const Instruction& instr, bool root, const std::string& sharding,
                   int64_t state_offset = -1) const;
  // The chain as the computation a call (kCall), a two-trip while loop (kWhile) or the true
  // branch of a conditional (kConditional) runs.
  std::string CallText(const std::string& root_sharding) const;
  std::string WhileText(const std::string& root_sharding) const;
  std::string ConditionalText(const std::string& root_sharding) const;
  // The entry's copies of the parameters (named e_<name>), their names joined by ", ", and
  // their shardings joined by ", " ({replicated} where none).
  std::string EntryParameters(std::string* names, std::string* shardings) const;
  // The parameters, in number order.
  std::vector<const Instruction*> Parameters() const;

  uint64_t seed_;
  Random rng_;
  // Draws for the control-flow wrapper come from their own stream, so the chain a seed
  // generates does not depend on them.
  Random wrap_rng_{seed_ * 0x9E3779B97F4A7C15ULL + 1};
  enum class Wrap { kNone, kCall, kWhile, kConditional } wrap_ = Wrap::kNone;
  bool annotate_loop_ = true;
  int64_t devices_ = 2;
  bool propagate_ = false;
  std::vector<Instruction> instructions_;
  std::vector<Value> values_;  // Every f32 array value, for reuse as an operand.
  Value operand_;              // The operand of the op being generated.
  int64_t next_id_ = 0;
  int64_t next_parameter_ = 0;
  std::string error_;
  bool uses_dot_ = false;
  bool uses_add_ = false;
  bool uses_max_ = false;
};

// ---- Shardings --------------------------------------------------------------------------------

std::string ModuleGenerator::Sharding(const Dims& dims) {
  const double p = static_cast<double>(rng_.Int(0, 999)) / 1000;
  if (p < 0.1 || (dims.empty() && p >= 0.16)) return "{replicated}";
  if (p < 0.16) return "{maximal device=" + std::to_string(rng_.Int(0, devices_ - 1)) + "}";
  return TiledSharding(dims);
}

// The devices split over the dimensions (mostly those of size 2 or more) and, sometimes, a
// replicated last tile dimension.
std::string ModuleGenerator::TiledSharding(const Dims& dims) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  Dims tiles(rank, 1);
  int64_t replicas = 1;
  for (int64_t left = devices_; left > 1; left /= 2) {
    if (rng_.Chance(0.2)) {
      replicas *= 2;
      continue;
    }
    int64_t dim = rng_.Int(0, rank - 1);
    if (dims[dim] < 2) dim = rng_.Int(0, rank - 1);
    tiles[dim] *= 2;
  }
  if (replicas == devices_ && rng_.Chance(0.5)) return "{replicated}";
  if (replicas > 1) tiles.push_back(replicas);
  return "{devices=[" + Join(tiles) + "]" + DeviceOrder() +
         (replicas > 1 ? " last_tile_dim_replicate}" : "}");
}

// Iota, transposed iota, or an explicit random device list.
std::string ModuleGenerator::DeviceOrder() {
  const int64_t kind = rng_.Int(0, 2);
  if (kind == 0 || (kind == 1 && devices_ == 2)) return "<=[" + std::to_string(devices_) + "]";
  if (kind == 1) {
    if (devices_ == 4) return "<=[2,2]T(1,0)";
    const std::vector<std::string> eight = {"<=[2,4]T(1,0)",     "<=[4,2]T(1,0)",
                                            "<=[2,2,2]T(2,1,0)", "<=[2,2,2]T(1,0,2)",
                                            "<=[2,2,2]T(0,2,1)", "<=[2,2,2]T(2,0,1)"};
    return rng_.Pick(eight);
  }
  return Join(rng_.Permutation(devices_));
}

// Intermediates are annotated often, or seldom when propagation fills in the rest.
std::string ModuleGenerator::IntermediateSharding(const Dims& dims) {
  return rng_.Chance(propagate_ ? 0.3 : 0.7) ? OperandSharding(dims) : "";
}

// Often the sharding of the operand the current op reads (where the ranks agree), as a
// program annotated with care would have it and as the handlers' local paths (halos, padded
// shards, masks) need; otherwise a random one.
std::string ModuleGenerator::OperandSharding(const Dims& dims) {
  if (!operand_.sharding.empty() && operand_.dims.size() == dims.size() && rng_.Chance(0.4)) {
    return operand_.sharding;
  }
  return Sharding(dims);
}

// ---- Leaves -----------------------------------------------------------------------------------

Value ModuleGenerator::Emit(const Dims& dims, const std::string& expression,
                            const std::string& sharding, const std::string& type) {
  Value v{"v" + std::to_string(next_id_++), dims, sharding};
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
    error_ += v.name + " has shape " + ShapeText(dims, type) + "; ";
  }
  instructions_.push_back({v.name, ShapeText(dims, type), expression, sharding});
  if (type == "f32" && !dims.empty()) values_.push_back(v);
  return v;
}

Value ModuleGenerator::Parameter(const Dims& dims) {
  const std::string sharding = rng_.Chance(0.9) ? OperandSharding(dims) : "";
  return Emit(dims, "parameter(" + std::to_string(next_parameter_++) + ")", sharding);
}

std::string ModuleGenerator::ScalarParameter(const std::string& type) {
  return Emit({}, "parameter(" + std::to_string(next_parameter_++) + ")", "{replicated}", type)
      .name;
}

std::string ModuleGenerator::Constant(const std::string& type, const std::string& literal) {
  Value v{"c" + std::to_string(next_id_++), {}};
  instructions_.push_back({v.name, type + "[]", "constant(" + literal + ")", ""});
  return v.name;
}

// A parameter, mostly, or an iota.
Value ModuleGenerator::Leaf(const Dims& dims) {
  if (rng_.Chance(0.85)) return Parameter(dims);
  const int64_t dim = rng_.Int(0, static_cast<int64_t>(dims.size()) - 1);
  return Emit(dims, "iota(), iota_dimension=" + std::to_string(dim), IntermediateSharding(dims));
}

// A second operand of the shape `dims`: an earlier value, a leaf, or a broadcast scalar.
Value ModuleGenerator::SameShapeOperand(const Dims& dims) {
  std::vector<Value> same;
  for (const Value& v : values_) {
    if (v.dims == dims) same.push_back(v);
  }
  const int64_t kind = rng_.Int(0, 9);
  if (kind < 4 && !same.empty()) return rng_.Pick(same);
  if (kind == 9) {
    const std::string c = Constant("f32", rng_.Pick(std::vector<std::string>{"0.5", "-2", "0"}));
    return Emit(dims, "broadcast(" + c + "), dimensions={}", IntermediateSharding(dims));
  }
  return Leaf(dims);
}

// Dims 1-17 of `rank`, redrawn until they hold at most `max_elements`.
Dims ModuleGenerator::RandomDims(int64_t rank, int64_t max_elements) {
  Dims dims(rank);
  do {
    for (int64_t& d : dims) d = rng_.Chance(0.1) ? 1 : rng_.Int(1, 17);
  } while (Elements(dims) > max_elements);
  return dims;
}

std::string ModuleGenerator::Reducer(bool max) {
  (max ? uses_max_ : uses_add_) = true;
  return max ? "max" : "add";
}

// The reducer's identity, or sometimes a scalar parameter or another constant, which a
// partitioned reduction must count once.
std::string ModuleGenerator::ReduceInit(bool max) {
  if (rng_.Chance(0.15)) return ScalarParameter();
  if (rng_.Chance(0.1)) return Constant("f32", max ? "0" : "1.5");
  return Constant("f32", max ? "-inf" : "0");
}

// ---- Ops --------------------------------------------------------------------------------------

std::optional<Value> ModuleGenerator::Apply(Op op, const Value& x) {
  operand_ = x;
  switch (op) {
    case Op::kUnary:
      return Unary(x);
    case Op::kBinary:
      return Binary(x);
    case Op::kBroadcast:
      return Broadcast(x);
    case Op::kTranspose:
      return Transpose(x);
    case Op::kReshape:
      return Reshape(x);
    case Op::kReduce:
      return Reduce(x);
    case Op::kDot:
      return Dot(x);
    case Op::kSlice:
      return Slice(x);
    case Op::kPad:
      return Pad(x);
    case Op::kConcatenate:
      return Concatenate(x);
    case Op::kReverse:
      return Reverse(x);
    case Op::kDynamicSlice:
      return DynamicSlice(x);
    case Op::kDynamicUpdateSlice:
      return DynamicUpdateSlice(x);
    case Op::kSelect:
      return Select(x);
    case Op::kConvolution:
      return Convolution(x);
    case Op::kReduceWindow:
      return ReduceWindow(x);
    case Op::kCount:
      break;
  }
  return std::nullopt;
}

// No sine or cosine: a full reduction over iotas reaches 1e4-1e5, where a reordered sum's
// rounding (~1e-2) would show undamped in a result of size 1.
std::optional<Value> ModuleGenerator::Unary(const Value& x) {
  const std::string op = rng_.Pick(std::vector<std::string>{"negate", "abs", "tanh", "logistic"});
  return Emit(x.dims, op + "(" + x.name + ")", IntermediateSharding(x.dims));
}

std::optional<Value> ModuleGenerator::Binary(const Value& x) {
  const std::string op =
      rng_.Pick(std::vector<std::string>{"add", "subtract", "multiply", "maximum", "minimum"});
  const Value y = SameShapeOperand(x.dims);
  const bool swap = rng_.Chance(0.5);
  return Emit(x.dims, op + "(" + (swap ? y : x).name + ", " + (swap ? x : y).name + ")",
              IntermediateSharding(x.dims));
}

// Operand dims keep their order among 1-3 new dims of size 1-6.
std::optional<Value> ModuleGenerator::Broadcast(const Value& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  if (rank >= 4) return std::nullopt;
  const int64_t out_rank = rng_.Int(rank + 1, 4);
  const std::vector<int64_t> positions = rng_.Subset(out_rank, rank);
  Dims out(out_rank, 0);
  for (int64_t i = 0; i < rank; ++i) out[positions[i]] = x.dims[i];
  for (int64_t& d : out) {
    if (d == 0) d = rng_.Int(1, 6);
  }
  if (Elements(out) > kMaxElements) return std::nullopt;
  return Emit(out, "broadcast(" + x.name + "), dimensions={" + Join(positions) + "}",
              IntermediateSharding(out));
}

std::optional<Value> ModuleGenerator::Transpose(const Value& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  if (rank < 2) return std::nullopt;
  std::vector<int64_t> perm = rng_.Permutation(rank);
  if (std::is_sorted(perm.begin(), perm.end())) std::swap(perm[0], perm[rank - 1]);
  Dims out(rank);
  for (int64_t i = 0; i < rank; ++i) out[i] = x.dims[perm[i]];
  return Emit(out, "transpose(" + x.name + "), dimensions={" + Join(perm) + "}",
              IntermediateSharding(out));
}

// Merges two adjacent dims, splits one, or refactors the element count at random.
std::optional<Value> ModuleGenerator::Reshape(const Value& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  Dims out = x.dims;
  const int64_t kind = rng_.Int(0, 2);
  if (kind == 0 && rank >= 2) {
    const int64_t i = rng_.Int(0, rank - 2);
    out[i] *= out[i + 1];
    out.erase(out.begin() + i + 1);
  } else if (kind == 1 && rank < 4) {
    const int64_t i = rng_.Int(0, rank - 1);
    const int64_t a = rng_.Chance(0.2) ? 1 : Divisor(out[i]);
    out[i] /= a;
    out.insert(out.begin() + i, a);
  } else {
    int64_t n = Elements(x.dims);
    std::vector<int64_t> primes;
    for (int64_t p = 2; p * p <= n; ++p) {
      for (; n % p == 0; n /= p) primes.push_back(p);
    }
    if (n > 1) primes.push_back(n);
    out.assign(rng_.Int(1, 4), 1);
    for (int64_t p : primes) out[rng_.Int(0, static_cast<int64_t>(out.size()) - 1)] *= p;
  }
  if (out == x.dims) return std::nullopt;
  return Emit(out, "reshape(" + x.name + ")", IntermediateSharding(out));
}

// Add or max over a random non-empty proper subset of the dims, or over all of them (the scalar
// is then broadcast back to x's shape).
std::optional<Value> ModuleGenerator::Reduce(const Value& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const bool to_scalar = rank == 1 || rng_.Chance(0.15);
  const std::vector<int64_t> reduced = rng_.Subset(rank, to_scalar ? rank : rng_.Int(1, rank - 1));
  Dims out;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(reduced.begin(), reduced.end(), i) == reduced.end()) out.push_back(x.dims[i]);
  }
  const bool max = rng_.Chance(0.4);
  const std::string init = ReduceInit(max);
  const Value result = Emit(out,
                            "reduce(" + x.name + ", " + init + "), dimensions={" + Join(reduced) +
                                "}, to_apply=" + Reducer(max),
                            IntermediateSharding(out));
  if (!to_scalar) return result;
  return Emit(x.dims, "broadcast(" + result.name + "), dimensions={}",
              IntermediateSharding(x.dims));
}

// Each of x's dims becomes a batch, contracting or free dim; the other operand is a new
// parameter holding the matching batch and contracting dims (in random order) and 0-2 free
// dims. x is the lhs or the rhs.
std::optional<Value> ModuleGenerator::Dot(const Value& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> batch, contracting, x_free;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t role = rng_.Int(0, 5);
    (role == 0 ? batch : role <= 2 ? contracting : x_free).push_back(i);
  }
  const int64_t y_free_count = rng_.Int(0, 2);
  const int64_t out_rank = static_cast<int64_t>(batch.size() + x_free.size()) + y_free_count;
  if (out_rank < 1 || out_rank > 4 || batch.size() + contracting.size() + y_free_count == 0) {
    return std::nullopt;
  }
  // The other operand's dims: batch, contracting, free (-1), then permuted.
  std::vector<int64_t> y_source = batch;
  y_source.insert(y_source.end(), contracting.begin(), contracting.end());
  for (int64_t i = 0; i < y_free_count; ++i) y_source.push_back(-1);
  const std::vector<int64_t> y_order = rng_.Permutation(static_cast<int64_t>(y_source.size()));
  Dims y_dims;
  std::vector<int64_t> y_position(y_source.size());  // y dim of each y_source entry.
  Dims y_free_dims;
  for (int64_t j = 0; j < static_cast<int64_t>(y_order.size()); ++j) {
    const int64_t source = y_source[y_order[j]];
    y_position[y_order[j]] = j;
    y_dims.push_back(source >= 0 ? x.dims[source] : rng_.Int(1, 12));
    if (source < 0) y_free_dims.push_back(y_dims.back());
  }
  if (Elements(y_dims) > kMaxElements) return std::nullopt;
  // Batch and contracting pairs are listed in a random order.
  auto pairs = [&](const std::vector<int64_t>& x_dims, size_t offset, std::vector<int64_t>* xs,
                   std::vector<int64_t>* ys) {
    for (int64_t k : rng_.Permutation(static_cast<int64_t>(x_dims.size()))) {
      xs->push_back(x_dims[k]);
      ys->push_back(y_position[offset + k]);
    }
  };
  std::vector<int64_t> xb, yb, xc, yc;
  pairs(batch, 0, &xb, &yb);
  pairs(contracting, batch.size(), &xc, &yc);
  const bool x_is_lhs = rng_.Chance(0.5);
  Dims out;
  for (int64_t d : xb) out.push_back(x.dims[d]);
  Dims x_free_dims;
  for (int64_t d : x_free) x_free_dims.push_back(x.dims[d]);
  const Dims& lhs_free = x_is_lhs ? x_free_dims : y_free_dims;
  const Dims& rhs_free = x_is_lhs ? y_free_dims : x_free_dims;
  out.insert(out.end(), lhs_free.begin(), lhs_free.end());
  out.insert(out.end(), rhs_free.begin(), rhs_free.end());
  if (Elements(out) > kMaxElements) return std::nullopt;
  const Value y = Parameter(y_dims);
  std::string expression = "dot(" + (x_is_lhs ? x : y).name + ", " + (x_is_lhs ? y : x).name + ")";
  auto attribute = [&](const std::string& name, const std::vector<int64_t>& dims) {
    if (!dims.empty()) expression += ", " + name + "={" + Join(dims) + "}";
  };
  uses_dot_ = true;
  attribute("lhs_batch_dims", x_is_lhs ? xb : yb);
  attribute("lhs_contracting_dims", x_is_lhs ? xc : yc);
  attribute("rhs_batch_dims", x_is_lhs ? yb : xb);
  attribute("rhs_contracting_dims", x_is_lhs ? yc : xc);
  return Emit(out, expression, IntermediateSharding(out));
}

// Random [start:limit:stride] per dim, some dims whole.
std::optional<Value> ModuleGenerator::Slice(const Value& x) {
  Dims out;
  std::vector<std::string> ranges;
  for (int64_t d : x.dims) {
    int64_t start = 0, limit = d, stride = 1;
    if (rng_.Chance(0.6)) {
      start = rng_.Int(0, d - 1);
      limit = rng_.Int(start + 1, d);
      stride = rng_.Chance(0.35) ? rng_.Int(2, 3) : 1;
    }
    out.push_back((limit - start + stride - 1) / stride);
    ranges.push_back("[" + std::to_string(start) + ":" + std::to_string(limit) +
                     (stride > 1 ? ":" + std::to_string(stride) : "") + "]");
  }
  if (out == x.dims) return std::nullopt;
  std::string slice;
  for (size_t i = 0; i < ranges.size(); ++i) slice += (i > 0 ? ", " : "") + ranges[i];
  return Emit(out, "slice(" + x.name + "), slice={" + slice + "}", IntermediateSharding(out));
}

// Edge padding in [-2, 3] (negative removes elements) and sometimes interior padding.
std::optional<Value> ModuleGenerator::Pad(const Value& x) {
  Dims out;
  std::vector<std::string> config;
  for (int64_t d : x.dims) {
    int64_t lo = 0, hi = 0, interior = 0;
    if (rng_.Chance(0.7)) {
      lo = rng_.Int(-2, 3);
      hi = rng_.Int(-2, 3);
      interior = rng_.Chance(0.25) ? rng_.Int(1, 2) : 0;
      if (d + (d - 1) * interior + lo + hi < 1) lo = hi = 0;
    }
    out.push_back(d + (d - 1) * interior + lo + hi);
    config.push_back(std::to_string(lo) + "_" + std::to_string(hi) +
                     (interior > 0 ? "_" + std::to_string(interior) : ""));
  }
  if (Elements(out) > kMaxElements) return std::nullopt;
  std::string padding;
  for (size_t i = 0; i < config.size(); ++i) padding += (i > 0 ? "x" : "") + config[i];
  const std::string value =
      rng_.Chance(0.25) ? ScalarParameter() : Constant("f32", rng_.Chance(0.5) ? "0" : "1.5");
  return Emit(out, "pad(" + x.name + ", " + value + "), padding=" + padding,
              IntermediateSharding(out));
}

// x among 1-2 other operands that differ only along the concatenated dim.
std::optional<Value> ModuleGenerator::Concatenate(const Value& x) {
  const int64_t dim = rng_.Int(0, static_cast<int64_t>(x.dims.size()) - 1);
  Dims sizes(rng_.Int(1, 2));
  Dims out = x.dims;
  for (int64_t& size : sizes) {
    size = rng_.Int(1, 8);
    out[dim] += size;
  }
  if (Elements(out) > kMaxElements) return std::nullopt;
  std::vector<std::string> names = {x.name};
  for (int64_t size : sizes) {
    Dims dims = x.dims;
    dims[dim] = size;
    names.push_back(SameShapeOperand(dims).name);
  }
  const int64_t x_position = rng_.Int(0, static_cast<int64_t>(names.size()) - 1);
  std::swap(names[0], names[x_position]);
  std::string operands;
  for (size_t i = 0; i < names.size(); ++i) operands += (i > 0 ? ", " : "") + names[i];
  return Emit(out, "concatenate(" + operands + "), dimensions={" + std::to_string(dim) + "}",
              IntermediateSharding(out));
}

std::optional<Value> ModuleGenerator::Reverse(const Value& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const std::vector<int64_t> dims = rng_.Subset(rank, rng_.Int(1, rank));
  return Emit(x.dims, "reverse(" + x.name + "), dimensions={" + Join(dims) + "}",
              IntermediateSharding(x.dims));
}

// ", i0, i1, ..." : s32 constant start indices for a window of `sizes` in `dims`, sometimes
// out of range (the op clamps them).
std::string ModuleGenerator::ConstantIndices(const Dims& dims, const Dims& sizes) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t room = dims[i] - sizes[i];
    const int64_t index = rng_.Chance(0.15) ? rng_.Int(-2, room + 2) : rng_.Int(0, room);
    out +=
        ", " + (rng_.Chance(0.1) ? ScalarParameter("s32") : Constant("s32", std::to_string(index)));
  }
  return out;
}

std::optional<Value> ModuleGenerator::DynamicSlice(const Value& x) {
  Dims sizes;
  for (int64_t d : x.dims) sizes.push_back(rng_.Chance(0.3) ? d : rng_.Int(1, d));
  const std::string indices = ConstantIndices(x.dims, sizes);
  return Emit(sizes,
              "dynamic-slice(" + x.name + indices + "), dynamic_slice_sizes={" + Join(sizes) + "}",
              IntermediateSharding(sizes));
}

std::optional<Value> ModuleGenerator::DynamicUpdateSlice(const Value& x) {
  Dims sizes;
  for (int64_t d : x.dims) sizes.push_back(rng_.Chance(0.3) ? d : rng_.Int(1, d));
  const Value update = SameShapeOperand(sizes);
  const std::string indices = ConstantIndices(x.dims, sizes);
  return Emit(x.dims, "dynamic-update-slice(" + x.name + ", " + update.name + indices + ")",
              IntermediateSharding(x.dims));
}

// select(compare(x, y), a, b) with x among a and b.
std::optional<Value> ModuleGenerator::Select(const Value& x) {
  const Value y = SameShapeOperand(x.dims);
  const std::string direction = rng_.Pick(std::vector<std::string>{"GT", "LT", "GE", "LE"});
  const Value predicate =
      Emit(x.dims, "compare(" + x.name + ", " + y.name + "), direction=" + direction,
           IntermediateSharding(x.dims), "pred");
  const Value other = rng_.Chance(0.5) ? y : SameShapeOperand(x.dims);
  const bool swap = rng_.Chance(0.5);
  return Emit(x.dims,
              "select(" + predicate.name + ", " + (swap ? other : x).name + ", " +
                  (swap ? x : other).name + ")",
              IntermediateSharding(x.dims));
}

// The output size of window dim `w` over `n` elements; 0 when the window does not fit.
int64_t WindowOutput(int64_t n, const WindowDim& w) {
  const int64_t padded = (n - 1) * w.lhs_dilate + 1 + w.lo + w.hi;
  const int64_t window = (w.size - 1) * w.rhs_dilate + 1;
  return padded < window ? 0 : (padded - window) / w.stride + 1;
}

// The smallest input that window dim `w` fits.
int64_t WindowMinInput(const WindowDim& w) {
  const int64_t window = (w.size - 1) * w.rhs_dilate + 1;
  const int64_t need = window - 1 - w.lo - w.hi;  // (n - 1) * lhs_dilate >= need
  return need <= 0 ? 1 : (need + w.lhs_dilate - 1) / w.lhs_dilate + 1;
}

std::string WindowText(const std::vector<WindowDim>& window) {
  auto field = [&](const std::string& name, auto value, auto is_default) {
    std::string values;
    bool all_default = name != "size";
    for (size_t i = 0; i < window.size(); ++i) {
      values += (i > 0 ? "x" : "") + value(window[i]);
      all_default &= is_default(window[i]);
    }
    return all_default ? std::string() : " " + name + "=" + values;
  };
  auto number = [](int64_t WindowDim::*member) {
    return [member](const WindowDim& w) { return std::to_string(w.*member); };
  };
  auto is_one = [](int64_t WindowDim::*member) {
    return [member](const WindowDim& w) { return w.*member == 1; };
  };
  const std::string text =
      field("size", number(&WindowDim::size), is_one(&WindowDim::size)) +
      field("stride", number(&WindowDim::stride), is_one(&WindowDim::stride)) +
      field(
          "pad",
          [](const WindowDim& w) { return std::to_string(w.lo) + "_" + std::to_string(w.hi); },
          [](const WindowDim& w) { return w.lo == 0 && w.hi == 0; }) +
      field("lhs_dilate", number(&WindowDim::lhs_dilate), is_one(&WindowDim::lhs_dilate)) +
      field("rhs_dilate", number(&WindowDim::rhs_dilate), is_one(&WindowDim::rhs_dilate));
  return text.substr(1);
}

// Stride 1-3, padding in [lo_min, 2] (negative removes elements), dilations of 2 now and then;
// the size is the caller's.
WindowDim ModuleGenerator::RandomWindowDim(int64_t size, int64_t lo_min, double stride_chance) {
  WindowDim w;
  w.size = size;
  w.stride = rng_.Chance(stride_chance) ? rng_.Int(2, 3) : 1;
  w.lo = rng_.Chance(0.5) ? rng_.Int(lo_min, 2) : 0;
  w.hi = rng_.Chance(0.5) ? rng_.Int(lo_min, 2) : 0;
  w.rhs_dilate = rng_.Chance(0.15) ? 2 : 1;
  w.lhs_dilate = rng_.Chance(0.07) ? 2 : 1;
  return w;
}

// A random divisor of `n` above 1, or 1 when there is none.
int64_t ModuleGenerator::Divisor(int64_t n) {
  std::vector<int64_t> divisors;
  for (int64_t g = 2; g <= n; ++g) {
    if (n % g == 0) divisors.push_back(g);
  }
  return divisors.empty() ? 1 : rng_.Pick(divisors);
}

// A 1-D (rank 3) or 2-D (rank 4) convolution with x as the input (or, sometimes, the kernel)
// and a new parameter as the other operand: dims labelled in random orders, random
// size/stride/padding/dilation, sometimes feature groups.
std::optional<Value> ModuleGenerator::Convolution(const Value& x) {
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  if (rank < 3) return std::nullopt;
  const int64_t spatial = rank - 2;
  // Label positions: role r (0 = batch / input feature, 1 = feature / output feature, 2+ =
  // spatial) sits at position perm[r].
  const std::vector<int64_t> in = rng_.Permutation(rank), kernel = rng_.Permutation(rank),
                             out_perm = rng_.Permutation(rank);
  const bool x_is_input = rng_.Chance(0.7);
  const bool grouped = rng_.Chance(0.25);
  int64_t batch, features, groups, out_features;
  std::vector<int64_t> n(spatial);
  std::vector<WindowDim> window(spatial);
  if (x_is_input) {
    batch = x.dims[in[0]];
    features = x.dims[in[1]];
    groups = grouped ? Divisor(features) : 1;
    out_features = groups > 1 ? groups * rng_.Int(1, 2) : rng_.Int(1, 8);
    for (int64_t s = 0; s < spatial; ++s) {
      n[s] = x.dims[in[2 + s]];
      window[s] = RandomWindowDim(rng_.Int(1, 4), -1, 0.3);
    }
  } else {
    out_features = x.dims[kernel[1]];
    groups = grouped ? Divisor(out_features) : 1;
    features = x.dims[kernel[0]] * groups;
    batch = rng_.Int(1, 4);
    for (int64_t s = 0; s < spatial; ++s) {
      window[s] = RandomWindowDim(x.dims[kernel[2 + s]], -1, 0.3);
      n[s] = WindowMinInput(window[s]) + rng_.Int(0, 8);
    }
  }
  Dims input_dims(rank), kernel_dims(rank), out(rank);
  input_dims[in[0]] = batch;
  input_dims[in[1]] = features;
  kernel_dims[kernel[0]] = features / groups;
  kernel_dims[kernel[1]] = out_features;
  out[out_perm[0]] = batch;
  out[out_perm[1]] = out_features;
  for (int64_t s = 0; s < spatial; ++s) {
    input_dims[in[2 + s]] = n[s];
    kernel_dims[kernel[2 + s]] = window[s].size;
    out[out_perm[2 + s]] = WindowOutput(n[s], window[s]);
    if (out[out_perm[2 + s]] == 0) return std::nullopt;
  }
  for (const Dims* dims : {&input_dims, &kernel_dims, &out}) {
    if (Elements(*dims) > kMaxElements) return std::nullopt;
  }
  auto labels = [&](const std::vector<int64_t>& perm, char first, char second) {
    std::string s(rank, '?');
    s[perm[0]] = first;
    s[perm[1]] = second;
    for (int64_t i = 0; i < spatial; ++i) s[perm[2 + i]] = static_cast<char>('0' + i);
    return s;
  };
  const Value other = Parameter(x_is_input ? kernel_dims : input_dims);
  const Value& lhs = x_is_input ? x : other;
  const Value& rhs = x_is_input ? other : x;
  return Emit(out,
              "convolution(" + lhs.name + ", " + rhs.name + "), window={" + WindowText(window) +
                  "}, dim_labels=" + labels(in, 'b', 'f') + "_" + labels(kernel, 'i', 'o') + "->" +
                  labels(out_perm, 'b', 'f') +
                  (groups > 1 ? ", feature_group_count=" + std::to_string(groups) : ""),
              IntermediateSharding(out));
}

// Add or max over a window of size 1-4 per dim, random stride, padding and dilations.
std::optional<Value> ModuleGenerator::ReduceWindow(const Value& x) {
  std::vector<WindowDim> window;
  Dims out;
  for (int64_t n : x.dims) {
    WindowDim w = RandomWindowDim(rng_.Chance(0.3) ? 1 : rng_.Int(1, 4), -1, 0.4);
    if (WindowOutput(n, w) == 0) w.size = w.rhs_dilate = 1;
    if (WindowOutput(n, w) == 0) w.lo = w.hi = 0;
    window.push_back(w);
    out.push_back(WindowOutput(n, w));
  }
  if (Elements(out) > kMaxElements) return std::nullopt;
  const bool max = rng_.Chance(0.5);
  const std::string init = ReduceInit(max);
  return Emit(out,
              "reduce-window(" + x.name + ", " + init + "), window={" + WindowText(window) +
                  "}, to_apply=" + Reducer(max),
              IntermediateSharding(out));
}

// ---- The module -------------------------------------------------------------------------------

GeneratedModule ModuleGenerator::Generate() {
  devices_ = rng_.Pick(std::vector<int64_t>{2, 4, 8});
  propagate_ = rng_.Chance(0.4);
  Value current = Leaf(RandomDims(rng_.Int(1, 4), kMaxElements / 2));
  const int64_t ops = rng_.Int(2, 6);
  for (int64_t i = 0; i < ops; ++i) {
    for (int attempt = 0; attempt < 50; ++attempt) {
      const Value& x = rng_.Chance(0.7) ? current : rng_.Pick(values_);
      const auto op = static_cast<Op>(rng_.Int(0, static_cast<int64_t>(Op::kCount) - 1));
      std::optional<Value> result = Apply(op, Value(x));
      if (result.has_value()) {
        current = *result;
        break;
      }
    }
  }
  // The last value is the root; make it so if a rejected op emitted leaves after it.
  if (instructions_.back().name != current.name) {
    current = Emit(current.dims, "copy(" + current.name + ")", "");
  }
  const std::string root_sharding = rng_.Chance(0.85) ? OperandSharding(current.dims) : "";
  // Half the modules with a dot force one strategy family on their dots.
  std::string dot_strategy;
  if (uses_dot_ && rng_.Chance(0.5)) {
    dot_strategy = rng_.Pick(std::vector<std::string>{
        "operands", "result", "lhs", "rhs", "result+lhs", "result+rhs", "replicated", "windowed-ag",
        "windowed-ag-bidir", "windowed-rs", "windowed-rs-bidir"});
  }
  const int64_t wrap = wrap_rng_.Int(0, 9);
  wrap_ = wrap < 2   ? Wrap::kCall
          : wrap < 5 ? Wrap::kWhile
          : wrap < 7 ? Wrap::kConditional
                     : Wrap::kNone;
  annotate_loop_ = wrap_rng_.Chance(0.7);
  // Propagation refuses a loop body placed on two different single devices (XLA's rule).
  std::set<std::string> maximal;
  for (const Instruction& instr : instructions_) {
    if (instr.sharding.rfind("{maximal", 0) == 0) maximal.insert(instr.sharding);
  }
  if (root_sharding.rfind("{maximal", 0) == 0) maximal.insert(root_sharding);
  if (wrap_ == Wrap::kWhile && propagate_ && maximal.size() > 1) wrap_ = Wrap::kNone;
  const std::string text = wrap_ == Wrap::kCall          ? CallText(root_sharding)
                           : wrap_ == Wrap::kWhile       ? WhileText(root_sharding)
                           : wrap_ == Wrap::kConditional ? ConditionalText(root_sharding)
                                                         : Text(root_sharding);
  return {text, devices_, propagate_, dot_strategy, error_};
}

std::string ModuleGenerator::Reducers() const {
  std::string text;
  for (const auto& [used, name, op] :
       {std::tuple{uses_add_, "add", "add"}, std::tuple{uses_max_, "max", "maximum"}}) {
    if (!used) continue;
    const std::string n = name;
    text += n + " {\n  " + n + "_a = f32[] parameter(0)\n  " + n +
            "_b = f32[] parameter(1)\n  ROOT " + n + "_r = f32[] " + op + "(" + n + "_a, " + n +
            "_b)\n}\n\n";
  }
  return text;
}

std::string ModuleGenerator::Line(const Instruction& instr, bool root, const std::string& sharding,
                                  int64_t state_offset) const {
  std::string expression = instr.expression;
  if (state_offset >= 0 && expression.rfind("parameter(", 0) == 0) {
    const int64_t k = std::stoll(expression.substr(10));
    expression = "get-tuple-element(state), index=" + std::to_string(k + state_offset);
  }
  return std::string("  ") + (root ? "ROOT " : "") + instr.name + " = " + instr.shape + " " +
         expression + (sharding.empty() ? "" : ", sharding=" + sharding) + "\n";
}

std::vector<const ModuleGenerator::Instruction*> ModuleGenerator::Parameters() const {
  std::vector<const Instruction*> params(next_parameter_, nullptr);
  for (const Instruction& instr : instructions_) {
    if (instr.expression.rfind("parameter(", 0) == 0) {
      params[std::stoll(instr.expression.substr(10))] = &instr;
    }
  }
  return params;
}

std::string ModuleGenerator::CallText(const std::string& root_sharding) const {
  std::string text = "HloModule random_" + std::to_string(seed_) +
                     ", num_partitions=" + std::to_string(devices_) + "\n\n" + Reducers();
  text += "inner {\n";
  for (size_t i = 0; i < instructions_.size(); ++i) {
    const bool root = i + 1 == instructions_.size();
    text += Line(instructions_[i], root, root ? root_sharding : instructions_[i].sharding);
  }
  std::string args, shardings;
  text += "}\n\nENTRY main {\n" + EntryParameters(&args, &shardings);
  return text + "  ROOT result = " + instructions_.back().shape + " call(" + args +
         "), to_apply=inner" + (root_sharding.empty() ? "" : ", sharding=" + root_sharding) +
         "\n}\n";
}

std::string ModuleGenerator::EntryParameters(std::string* names, std::string* shardings) const {
  std::string text;
  for (const Instruction* param : Parameters()) {
    text += "  e_" + param->name + " = " + param->shape + " " + param->expression +
            (param->sharding.empty() ? "" : ", sharding=" + param->sharding) + "\n";
    *names += (names->empty() ? "e_" : ", e_") + param->name;
    *shardings += (shardings->empty() ? "" : ", ") +
                  (param->sharding.empty() ? std::string("{replicated}") : param->sharding);
  }
  return text;
}

std::string ModuleGenerator::ConditionalText(const std::string& root_sharding) const {
  const std::vector<const Instruction*> params = Parameters();
  const Instruction& last = instructions_.back();
  std::string state = "(";
  for (size_t i = 0; i < params.size(); ++i) state += (i ? ", " : "") + params[i]->shape;
  state += ")";
  std::string text = "HloModule random_" + std::to_string(seed_) +
                     ", num_partitions=" + std::to_string(devices_) + "\n\n" + Reducers();
  // True branch: the chain on the parameters in the tuple; false branch: zeros.
  text += "then_branch {\n  state = " + state + " parameter(0)\n";
  for (size_t i = 0; i < instructions_.size(); ++i) {
    const bool root = i + 1 == instructions_.size();
    text += Line(instructions_[i], root, root ? root_sharding : instructions_[i].sharding, 0);
  }
  text += "}\n\nelse_branch {\n  other = " + state + " parameter(0)\n";
  text += "  zero_fill = f32[] constant(0)\n";
  text += "  ROOT zeros = " + last.shape + " broadcast(zero_fill), dimensions={}\n}\n\n";
  std::string args, shardings;
  text += "ENTRY main {\n" + EntryParameters(&args, &shardings);
  text += "  take = pred[] parameter(" + std::to_string(params.size()) + "), sharding={replicated}\n";
  text += "  operands = " + state + " tuple(" + args + ")\n";
  return text + "  ROOT result = " + last.shape +
         " conditional(take, operands, operands), true_computation=then_branch, "
         "false_computation=else_branch" +
         (root_sharding.empty() ? "" : ", sharding=" + root_sharding) + "\n}\n";
}

std::string ModuleGenerator::WhileText(const std::string& root_sharding) const {
  const std::vector<const Instruction*> params = Parameters();
  const Instruction& last = instructions_.back();
  std::string state = "(s32[]";
  for (const Instruction* param : params) state += ", " + param->shape;
  state += ", " + last.shape + ")";
  std::string text = "HloModule random_" + std::to_string(seed_) +
                     ", num_partitions=" + std::to_string(devices_) + "\n\n" + Reducers();
  // Body: the chain on the parameters held in the state; the result goes to the last element.
  text += "body {\n  state = " + state + " parameter(0)\n";
  text += "  trip = s32[] get-tuple-element(state), index=0\n";
  for (const Instruction& instr : instructions_) {
    const bool root = &instr == &last;
    text += Line(instr, false, root ? root_sharding : instr.sharding, 1);
  }
  text += "  one = s32[] constant(1)\n  next = s32[] add(trip, one)\n";
  text += "  ROOT next_state = " + state + " tuple(next";
  for (const Instruction* param : params) text += ", " + param->name;
  text += ", " + last.name + ")\n}\n\n";
  text += "cond {\n  cstate = " + state + " parameter(0)\n";
  text += "  ctrip = s32[] get-tuple-element(cstate), index=0\n  limit = s32[] constant(2)\n";
  text += "  ROOT more = pred[] compare(ctrip, limit), direction=LT\n}\n\n";
  std::string args, shardings;
  text += "ENTRY main {\n" + EntryParameters(&args, &shardings);
  const std::string init = "zero" + (args.empty() ? "" : ", " + args);
  const std::string loop_sharding =
      "{{replicated}" + (shardings.empty() ? "" : ", " + shardings) + ", " +
      (root_sharding.empty() ? std::string("{replicated}") : root_sharding) + "}";
  text += "  zero = s32[] constant(0)\n  fill = f32[] constant(0)\n";
  text += "  init_result = " + last.shape + " broadcast(fill), dimensions={}\n";
  text += "  init = " + state + " tuple(" + init + ", init_result)\n";
  // Mostly the loop is annotated with its state's shardings; otherwise unannotated (replicated,
  // or whatever propagation gives it).
  text += "  loop = " + state + " while(init), condition=cond, body=body" +
          (annotate_loop_ ? ", sharding=" + loop_sharding : "") + "\n";
  return text + "  ROOT result = " + last.shape + " get-tuple-element(loop), index=" +
         std::to_string(params.size() + 1) +
         (root_sharding.empty() ? "" : ", sharding=" + root_sharding) + "\n}\n";
}

std::string ModuleGenerator::Text(const std::string& root_sharding) const {
  std::string text = "HloModule random_" + std::to_string(seed_) +
                     ", num_partitions=" + std::to_string(devices_) + "\n\n" + Reducers();
  text += "ENTRY main {\n";
  for (size_t i = 0; i < instructions_.size(); ++i) {
    const bool root = i + 1 == instructions_.size();
    text += Line(instructions_[i], root, root ? root_sharding : instructions_[i].sharding);
  }
  return text + "}\n";
}

// ---- The test ---------------------------------------------------------------------------------

// Seeds 1..kCases, or the range in RANDOM_PARTITION_SEEDS. Every committed seed passes; a
// seed that starts failing is a partitioner bug (minimise its module and fix the partitioner)
// unless the trace says "generator bug".
constexpr uint64_t kCases = 1000;

std::vector<uint64_t> Seeds() {
  uint64_t first = 1, last = kCases;
  if (const char* range = std::getenv("RANDOM_PARTITION_SEEDS")) {
    const std::string s = range;
    const size_t dash = s.find('-');
    first = std::stoull(s.substr(0, dash));
    last = dash == std::string::npos ? first : std::stoull(s.substr(dash + 1));
  }
  std::vector<uint64_t> seeds;
  for (uint64_t seed = first; seed <= last; ++seed) seeds.push_back(seed);
  return seeds;
}

struct PartitionedModule {
  std::unique_ptr<hlo::HloModule> spmd;
  std::string explain;
};

// The partition pass and dead-code cleanup on a fresh parse of `text`.
absl::StatusOr<PartitionedModule> PartitionText(const std::string& text,
                                                const spmd::PartitionerOptions& options) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  spmd::SpmdPartitioner partitioner(options);
  absl::StatusOr<bool> ran = partitioner.Run(module->get());
  if (!ran.ok()) return ran.status();
  hlo::DeadCodeElimination cleanup;
  ran = cleanup.Run(module->get());
  if (!ran.ok()) return ran.status();
  PartitionedModule out{*std::move(module), ""};
  for (const std::string& line : partitioner.log().lines) out.explain += line + "\n";
  return out;
}

// Partitions `text` with every dot forced to `dot_strategy` (when not empty), or with the
// partitioner's own choice where the forced strategy does not apply (a refusal, not a bug).
absl::StatusOr<PartitionedModule> PartitionWithDotStrategy(const std::string& text,
                                                           const std::string& dot_strategy) {
  spmd::PartitionerOptions options;
  options.dot.forced_family = dot_strategy;
  absl::StatusOr<PartitionedModule> p = PartitionText(text, options);
  if (!dot_strategy.empty() && !p.ok() &&
      p.status().message().find("does not apply to this dot") != std::string_view::npos) {
    options.dot.forced_family.clear();
    p = PartitionText(text, options);
  }
  return p;
}

// The module of `text`, verified: a failure is a generator bug.
absl::StatusOr<std::unique_ptr<hlo::HloModule>> ParseValid(const std::string& text) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  if (absl::Status valid = hlo::VerifyModule(**module); !valid.ok()) return valid;
  return module;
}

class RandomPartitionTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(RandomPartitionTest, PartitionedProgramMatchesTheOriginal) {
  const GeneratedModule generated = ModuleGenerator(GetParam()).Generate();
  SCOPED_TRACE("seed " + std::to_string(GetParam()) + (generated.propagate ? " (propagated)" : "") +
               (generated.dot_strategy.empty() ? "" : " (dots: " + generated.dot_strategy + ")") +
               ":\n" + generated.text);
  if (const char* dir = std::getenv("RANDOM_PARTITION_DUMP_DIR")) {
    std::ofstream(std::string(dir) + "/seed_" + std::to_string(GetParam()) + ".hlo")
        << generated.text;
  }
  ASSERT_EQ(generated.error, "") << "generator bug";
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> original = ParseValid(generated.text);
  ASSERT_TRUE(original.ok()) << "generator bug: " << original.status();
  std::string text = generated.text;
  if (generated.propagate) {
    spmd::ShardingPropagation propagation;
    absl::StatusOr<bool> ran = propagation.Run(original->get());
    ASSERT_TRUE(ran.ok()) << "propagation failed: " << ran.status();
    text = (*original)->ToString();
  }
  absl::StatusOr<PartitionedModule> p = PartitionWithDotStrategy(text, generated.dot_strategy);
  ASSERT_TRUE(p.ok()) << "partitioning failed: " << p.status();
  const absl::Status spmd_valid = hlo::VerifyModule(*p->spmd);
  ASSERT_TRUE(spmd_valid.ok()) << "the partitioned module is invalid: " << spmd_valid << "\n"
                               << p->spmd->ToString();
  for (uint64_t seed : {1, 2}) {
    runtime::VerifyOptions options;
    options.seed = seed;
    options.num_partitions = generated.devices;
    options.tolerance = kTolerance;
    absl::StatusOr<runtime::VerifyResult> result =
        runtime::VerifyAgainst(**original, *p->spmd, options);
    ASSERT_TRUE(result.ok()) << result.status() << "\n" << p->spmd->ToString();
    EXPECT_TRUE(result->ok()) << result->ToString() << "\n" << p->spmd->ToString() << p->explain;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomPartitionTest, ::testing::ValuesIn(Seeds()),
                         [](const ::testing::TestParamInfo<uint64_t>& info) {
                           return "seed_" + std::to_string(info.param);
                         });

}  // namespace
