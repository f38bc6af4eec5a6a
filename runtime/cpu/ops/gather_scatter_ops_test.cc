// Tests of gather and scatter: the operation-semantics examples, index clamping (gather),
// skipped out-of-bounds windows (scatter), batching dimensions, variadic scatter, the typed and
// the per-element combiner paths, and random cases against per-element reference loops written
// here from the spec's formulas (reading the dimension numbers from the parsed instruction).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlo/ir/hlo_computation.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/parser/hlo_parser.h"
#include "runtime/cpu/evaluator.h"

namespace runtime {
namespace {

using hlo::HloInstruction;
using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;
using V = std::vector<int64_t>;

absl::StatusOr<Literal> RunText(const std::string& text, std::vector<Literal> args = {}) {
  auto module = hlo::ParseHloModule(text);
  if (!module.ok()) return module.status();
  return Evaluator(**module, {}).RunEntry(std::move(args));
}

V Ints(const Literal& l) {
  V v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetInt(i));
  return v;
}

V RunInts(const std::string& text) {
  absl::StatusOr<Literal> r = RunText(text);
  EXPECT_TRUE(r.ok()) << r.status().ToString() << "\n" << text;
  return r.ok() ? Ints(*r) : V{};
}

int64_t Linear(const V& dims, const V& index) {
  int64_t i = 0;
  for (size_t d = 0; d < dims.size(); ++d) i = i * dims[d] + index[d];
  return i;
}

bool Next(const V& dims, V& index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

bool Contains(const V& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The start index of batch position `batch` (indices coordinates without index_vector_dim):
// result[d] for every operand dimension, from the index vector and the batching pairs.
V FullStart(const Literal& indices, int64_t ivd, const V& batch, const V& index_map,
            const V& operand_batching, const V& indices_batching, int64_t operand_rank) {
  V start(operand_rank, 0);
  const V& idims = indices.shape().dimensions();
  const int64_t vector_size = ivd == static_cast<int64_t>(idims.size()) ? 1 : idims[ivd];
  for (int64_t k = 0; k < vector_size; ++k) {
    V at = batch;
    if (ivd < static_cast<int64_t>(idims.size())) at.insert(at.begin() + ivd, k);
    start[index_map[k]] = indices.GetInt(Linear(idims, at));
  }
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    const int64_t d = indices_batching[i];
    start[operand_batching[i]] = batch[d < ivd ? d : d - 1];
  }
  return start;
}

// Gather per output element, as the spec defines it.
V ReferenceGather(const HloInstruction& gather, const Literal& operand, const Literal& indices) {
  const hlo::GatherDimensionNumbers& dn = *gather.attrs().gather_dimension_numbers;
  const V& slice = gather.attrs().gather_slice_sizes;
  const V& od = gather.shape().dimensions();
  const V& opd = operand.shape().dimensions();
  V out(gather.shape().num_elements());
  V o(od.size(), 0);
  do {
    V batch, offsets;
    for (int64_t d = 0; d < static_cast<int64_t>(od.size()); ++d) {
      (Contains(dn.offset_dims, d) ? offsets : batch).push_back(o[d]);
    }
    V start = FullStart(indices, dn.index_vector_dim, batch, dn.start_index_map,
                        dn.operand_batching_dims, dn.start_indices_batching_dims, opd.size());
    V at(opd.size());
    size_t k = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(opd.size()); ++d) {
      int64_t s = start[d];
      if (Contains(dn.start_index_map, d)) s = std::clamp<int64_t>(s, 0, opd[d] - slice[d]);
      const bool walks =
          !Contains(dn.collapsed_slice_dims, d) && !Contains(dn.operand_batching_dims, d);
      at[d] = s + (walks ? offsets[k++] : 0);
    }
    out[Linear(od, o)] = operand.GetInt(Linear(opd, at));
  } while (Next(od, o));
  return out;
}

// Scatter-add per update element; windows not fully inside the operand are skipped.
V ReferenceScatterAdd(const HloInstruction& scatter, const Literal& operand, const Literal& indices,
                      const Literal& updates) {
  const hlo::ScatterDimensionNumbers& dn = *scatter.attrs().scatter_dimension_numbers;
  const V& ud = updates.shape().dimensions();
  const V& opd = operand.shape().dimensions();
  V out = Ints(operand);
  V u(ud.size(), 0);
  do {
    V batch, window;
    for (int64_t d = 0; d < static_cast<int64_t>(ud.size()); ++d) {
      (Contains(dn.update_window_dims, d) ? window : batch).push_back(u[d]);
    }
    V start = FullStart(indices, dn.index_vector_dim, batch, dn.scatter_dims_to_operand_dims,
                        dn.input_batching_dims, dn.scatter_indices_batching_dims, opd.size());
    V at(opd.size());
    bool fits = true;
    size_t k = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(opd.size()); ++d) {
      const bool walks =
          !Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d);
      const int64_t extent = walks ? ud[dn.update_window_dims[k]] : 1;
      fits = fits && start[d] >= 0 && start[d] + extent <= opd[d];
      at[d] = start[d] + (walks ? window[k++] : 0);
    }
    if (fits) out[Linear(opd, at)] += updates.GetInt(Linear(ud, u));
  } while (Next(ud, u));
  return out;
}

const char kMatrix[] = "x = s32[3,3] constant({ {1, 2, 3}, {4, 5, 6}, {7, 8, 9} })\n";

std::string Entry(const std::string& body, const std::string& computations = "") {
  return "HloModule m\n" + computations + "ENTRY e {\n" + body + "\n}\n";
}

TEST(GatherTest, RowsColumnsAndClamping) {
  EXPECT_EQ(RunInts(Entry(std::string(kMatrix) +
                          "i = s32[2] constant({0, 2})\n"
                          "ROOT g = s32[2,3] gather(x, i), offset_dims={1}, "
                          "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                          "slice_sizes={1,3}")),
            (V{1, 2, 3, 7, 8, 9}));
  EXPECT_EQ(RunInts(Entry(std::string(kMatrix) +
                          "i = s32[2] constant({0, 2})\n"
                          "ROOT g = s32[3,2] gather(x, i), offset_dims={0}, "
                          "collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, "
                          "slice_sizes={3,1}")),
            (V{1, 3, 4, 6, 7, 9}));
  // Starts are clamped so that the 2x2 slice stays inside: (5,-1) -> (1,0).
  EXPECT_EQ(RunInts(Entry(std::string(kMatrix) +
                          "i = s64[1,2] constant({ {5, -1} })\n"
                          "ROOT g = s32[1,2,2] gather(x, i), offset_dims={1,2}, "
                          "collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, "
                          "slice_sizes={2,2}")),
            (V{4, 5, 7, 8}));
}

TEST(GatherTest, BatchingDimensions) {
  // out[b, j, :] = x[b, i[b, j], :].
  EXPECT_EQ(RunInts(Entry("x = s32[2,3,2] constant({ { {0, 1}, {2, 3}, {4, 5} }, "
                          "{ {6, 7}, {8, 9}, {10, 11} } })\n"
                          "i = s32[2,2,1] constant({ { {2}, {0} }, { {1}, {1} } })\n"
                          "ROOT g = s32[2,2,2] gather(x, i), offset_dims={2}, "
                          "collapsed_slice_dims={1}, start_index_map={1}, "
                          "operand_batching_dims={0}, start_indices_batching_dims={0}, "
                          "index_vector_dim=2, slice_sizes={1,1,2}")),
            (V{4, 5, 0, 1, 8, 9, 8, 9}));
}

TEST(GatherTest, InvalidDimensionNumbersAreErrors) {
  // A collapsed dimension must have slice size 1.
  EXPECT_FALSE(RunText(Entry(std::string(kMatrix) +
                             "i = s32[2] constant({0, 1})\n"
                             "ROOT g = s32[2,3] gather(x, i), offset_dims={1}, "
                             "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
                             "slice_sizes={2,3}"))
                   .ok());
  // Paired batching dimensions must have equal sizes (3 in the operand, 2 in the indices).
  EXPECT_FALSE(RunText(Entry(std::string(kMatrix) +
                             "i = s32[2,1] constant({ {0}, {1} })\n"
                             "ROOT g = s32[2] gather(x, i), offset_dims={}, "
                             "collapsed_slice_dims={1}, start_index_map={1}, "
                             "operand_batching_dims={0}, start_indices_batching_dims={0}, "
                             "index_vector_dim=1, slice_sizes={1,1}"))
                   .ok());
}

// Parses `text`, fills its parameters with random integers in [lo, hi), runs it, and returns
// the module (for the reference), the arguments and the result.
struct RandomRun {
  std::unique_ptr<hlo::HloModule> module;
  std::vector<Literal> args;
  Literal result;
};

RandomRun RunRandom(const std::string& text, int64_t lo, int64_t hi, int seed) {
  RandomRun r;
  auto module = hlo::ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return r;
  r.module = *std::move(module);
  std::mt19937 rng(seed);
  for (const HloInstruction* p : r.module->entry_computation()->parameter_instructions()) {
    Literal l(p->shape());
    for (int64_t i = 0; i < l.element_count(); ++i) l.SetInt(i, lo + rng() % (hi - lo));
    r.args.push_back(std::move(l));
  }
  absl::StatusOr<Literal> result = Evaluator(*r.module, {}).RunEntry(r.args);
  EXPECT_TRUE(result.ok()) << result.status().ToString() << "\n" << text;
  if (result.ok()) r.result = *std::move(result);
  return r;
}

TEST(GatherTest, RandomAgainstReference) {
  const char* cases[] = {
      // Embedding lookup with out-of-range ids (clamped).
      "x = s32[10,4] parameter(0)\ni = s32[6] parameter(1)\nROOT g = s32[6,4] gather(x, i), "
      "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
      "slice_sizes={1,4}",
      // Index vector in the middle, window dims interleaved with batch dims.
      "x = s32[5,6,7] parameter(0)\ni = s32[3,2,4] parameter(1)\n"
      "ROOT g = s32[2,3,3,4] gather(x, i), offset_dims={0,2}, collapsed_slice_dims={1}, "
      "start_index_map={2,1}, index_vector_dim=1, slice_sizes={2,1,3}",
      // Batching dims not leading, implicit index vector.
      "x = s32[4,3,5] parameter(0)\ni = s32[2,4] parameter(1)\n"
      "ROOT g = s32[2,4,3] gather(x, i), offset_dims={2}, collapsed_slice_dims={2}, "
      "start_index_map={2}, operand_batching_dims={0}, start_indices_batching_dims={1}, "
      "index_vector_dim=2, slice_sizes={1,3,1}",
      // index_vector_dim before the indices batching dimension.
      "x = s32[4,3,5] parameter(0)\ni = s32[1,4] parameter(1)\n"
      "ROOT g = s32[4,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={2}, "
      "start_index_map={2}, operand_batching_dims={0}, start_indices_batching_dims={1}, "
      "index_vector_dim=0, slice_sizes={1,3,1}",
  };
  int seed = 0;
  for (const char* body : cases) {
    RandomRun r = RunRandom(Entry(body), -3, 12, ++seed);
    ASSERT_NE(r.module, nullptr);
    const HloInstruction& g = *r.module->entry_computation()->root_instruction();
    EXPECT_EQ(Ints(r.result), ReferenceGather(g, r.args[0], r.args[1])) << body;
  }
}

const char kBodies[] = R"(
add { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT r = s32[] add(a, b) }
sub { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT r = s32[] subtract(a, b) }
assign { a = s32[] parameter(0)  ROOT b = s32[] parameter(1) }
)";

std::string RowScatter(const std::string& indices, const std::string& updates,
                       const std::string& body) {
  return Entry("x = s32[3,3] constant({ {1, 1, 1}, {1, 1, 1}, {1, 1, 1} })\n" + indices + "\n" +
                   updates +
                   "\nROOT s = s32[3,3] scatter(x, i, u), update_window_dims={1}, "
                   "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                   "index_vector_dim=1, to_apply=" +
                   body,
               kBodies);
}

TEST(ScatterTest, AddAssignAndCallPaths) {
  const std::string u = "u = s32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })";
  EXPECT_EQ(RunInts(RowScatter("i = s32[2] constant({0, 2})", u, "add")),
            (V{2, 3, 4, 1, 1, 1, 5, 6, 7}));
  // Duplicates accumulate in order: 1 + 1 + 4 ...; assign keeps the last.
  EXPECT_EQ(RunInts(RowScatter("i = s32[2] constant({1, 1})", u, "add")),
            (V{1, 1, 1, 6, 8, 10, 1, 1, 1}));
  EXPECT_EQ(RunInts(RowScatter("i = s32[2] constant({1, 1})", u, "assign")),
            (V{1, 1, 1, 4, 5, 6, 1, 1, 1}));
  // subtract is called per element with (current, update): 1 - 1 - 4 ...
  EXPECT_EQ(RunInts(RowScatter("i = s32[2] constant({1, 1})", u, "sub")),
            (V{1, 1, 1, -4, -6, -8, 1, 1, 1}));
}

TEST(ScatterTest, WindowsOutsideTheOperandAreSkippedWhole) {
  const std::string u = "u = s32[3,3] constant({ {1, 2, 3}, {4, 5, 6}, {7, 8, 9} })";
  EXPECT_EQ(RunInts(RowScatter("i = s32[3] constant({-1, 2, 3})", u, "add")),
            (V{1, 1, 1, 1, 1, 1, 5, 6, 7}));
  // A 2x2 window at (2, 0) would hang off the bottom: nothing is written.
  EXPECT_EQ(RunInts(Entry("x = s32[3,3] constant({ {1, 1, 1}, {1, 1, 1}, {1, 1, 1} })\n"
                          "i = s32[2,2] constant({ {2, 0}, {0, 1} })\n"
                          "u = s32[2,2,2] constant({ { {9, 9}, {9, 9} }, { {1, 2}, {3, 4} } })\n"
                          "ROOT s = s32[3,3] scatter(x, i, u), update_window_dims={1,2}, "
                          "inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, "
                          "index_vector_dim=1, to_apply=add",
                          kBodies)),
            (V{1, 2, 3, 1, 4, 5, 1, 1, 1}));
}

TEST(ScatterTest, VariadicWithTupleCombiner) {
  const std::string text = R"(HloModule m
addmax {
  a0 = f32[] parameter(0)  a1 = s32[] parameter(1)  b0 = f32[] parameter(2)  b1 = s32[] parameter(3)
  s = f32[] add(a0, b0)
  m = s32[] maximum(a1, b1)
  ROOT t = (f32[], s32[]) tuple(s, m)
}
ENTRY e {
  x = f32[4] constant({0, 0, 0, 0})
  y = s32[4] constant({5, 5, 5, 5})
  i = s32[3,1] constant({ {3}, {0}, {3} })
  u = f32[3] constant({1, 2, 3})
  v = s32[3] constant({7, 1, 9})
  ROOT s = (f32[4], s32[4]) scatter(x, y, i, u, v), update_window_dims={},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
      to_apply=addmax
})";
  absl::StatusOr<Literal> r = RunText(text);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->tuple_elements().size(), 2u);
  EXPECT_EQ(Ints(r->tuple_elements()[0]), (V{2, 0, 0, 4}));
  EXPECT_EQ(Ints(r->tuple_elements()[1]), (V{5, 5, 5, 9}));
}

TEST(ScatterTest, RandomAddAgainstReference) {
  const char* cases[] = {
      "x = s32[6,4] parameter(0)\ni = s32[8] parameter(1)\nu = s32[8,4] parameter(2)\n"
      "ROOT s = s32[6,4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
      "x = s32[5,6,4] parameter(0)\ni = s32[3,2,2] parameter(1)\nu = s32[2,3,2,3] parameter(2)\n"
      "ROOT s = s32[5,6,4] scatter(x, i, u), update_window_dims={0,3}, "
      "inserted_window_dims={1}, scatter_dims_to_operand_dims={2,1}, index_vector_dim=1, "
      "to_apply=add",
      "x = s32[3,4,5] parameter(0)\ni = s32[4,3] parameter(1)\nu = s32[4,3,3] parameter(2)\n"
      "ROOT s = s32[3,4,5] scatter(x, i, u), update_window_dims={1}, "
      "inserted_window_dims={2}, scatter_dims_to_operand_dims={2}, input_batching_dims={1}, "
      "scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=add",
      "x = s32[3,4,5] parameter(0)\ni = s32[1,4,2] parameter(1)\nu = s32[4,2,3] parameter(2)\n"
      "ROOT s = s32[3,4,5] scatter(x, i, u), update_window_dims={2}, "
      "inserted_window_dims={2}, scatter_dims_to_operand_dims={2}, input_batching_dims={1}, "
      "scatter_indices_batching_dims={1}, index_vector_dim=0, to_apply=add",
  };
  int seed = 50;
  for (const char* body : cases) {
    RandomRun r = RunRandom(Entry(body, kBodies), -2, 7, ++seed);
    ASSERT_NE(r.module, nullptr);
    const HloInstruction& s = *r.module->entry_computation()->root_instruction();
    EXPECT_EQ(Ints(r.result), ReferenceScatterAdd(s, r.args[0], r.args[1], r.args[2])) << body;
  }
}

TEST(ScatterTest, MismatchedUpdatesAreAnError) {
  EXPECT_FALSE(
      RunText(RowScatter("i = s32[2] constant({0, 2})",
                         "u = s32[3,3] constant({ {1, 2, 3}, {4, 5, 6}, {7, 8, 9} })", "add"))
          .ok());
}

}  // namespace
}  // namespace runtime
