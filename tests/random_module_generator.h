// The random module generator of random_partition_test: each seed gives a small f32 module, a
// chain of 2-6 ops (elementwise unary/binary, broadcast, transpose, reshape, reduce, dot,
// slice, pad, concatenate, reverse, dynamic-slice, dynamic-update-slice, select/compare, iota,
// convolution, reduce-window) over random shapes of rank 1-4 with dims 1-17, with random
// shardings on its parameters, intermediates and root, sometimes run as the computation of a
// call, the body of a while loop or a conditional's branch (random_module_text.cc writes the
// text). The generator computes every result shape itself (what shape inference gives), and
// generation depends only on the seed (mt19937_64, whose output the standard fixes, reduced by
// our own arithmetic).
#ifndef TESTS_RANDOM_MODULE_GENERATOR_H_
#define TESTS_RANDOM_MODULE_GENERATOR_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace random_module {

using Dims = std::vector<int64_t>;

// Results larger than this are rejected, so a case runs in milliseconds.
constexpr int64_t kMaxElements = 8192;

inline int64_t Elements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

inline std::string Join(const std::vector<int64_t>& values, const std::string& separator = ",") {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += separator;
    out += std::to_string(values[i]);
  }
  return out;
}

inline std::string ShapeText(const Dims& dims, const std::string& type = "f32") {
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

}  // namespace random_module

#endif  // TESTS_RANDOM_MODULE_GENERATOR_H_
