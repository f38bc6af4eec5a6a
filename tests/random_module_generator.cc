// The random module generator: shardings, leaves, ops and the chain (see the header).
#include "tests/random_module_generator.h"

#include <set>
#include <tuple>

namespace random_module {

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

namespace {

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

}  // namespace

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

}  // namespace random_module
