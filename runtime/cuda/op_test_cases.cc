// The op cases (see op_test_cases.h). Each body follows `HloModule m` and the `add` reducer.
#include "runtime/cuda/op_test_cases.h"

#include <iterator>

namespace runtime {
namespace cuda {
namespace {

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

const OpCase kCases[] = {
    {"elementwise", R"(
ENTRY e {
  x = f32[3,5] parameter(0)
  y = f32[3,5] parameter(1)
  a = f32[3,5] add(x, y)
  m = f32[3,5] multiply(a, x)
  d = f32[3,5] divide(m, y)
  t = f32[3,5] tanh(d)
  e2 = f32[3,5] exponential(x)
  mx = f32[3,5] maximum(t, e2)
  ROOT n = f32[3,5] negate(mx)
})"},
    {"compare_select_clamp_convert", R"(
ENTRY e {
  x = f32[4,6] parameter(0)
  y = f32[4,6] parameter(1)
  c = pred[4,6] compare(x, y), direction=LT
  s = f32[4,6] select(c, x, y)
  lo = f32[] constant(-0.5)
  hi = f32[] constant(0.5)
  k = f32[4,6] clamp(lo, s, hi)
  b = bf16[4,6] convert(k)
  i = s32[4,6] convert(x)
  f = f32[4,6] convert(b)
  ROOT t = (f32[4,6], s32[4,6], pred[4,6]) tuple(f, i, c)
})"},
    {"integers", R"(
ENTRY e {
  x = s32[16] parameter(0)
  y = s32[16] parameter(1)
  d = s32[16] divide(x, y)
  r = s32[16] remainder(x, y)
  a = s32[16] and(x, y)
  sh = s32[16] shift-right-arithmetic(x, y)
  ROOT t = (s32[16], s32[16], s32[16], s32[16]) tuple(d, r, a, sh)
})"},
    {"narrow_and_wide_types", R"(
ENTRY e {
  x = f32[24] parameter(0)
  h = f16[24] convert(x)
  hh = f16[24] multiply(h, h)
  b = bf16[24] convert(x)
  bs = bf16[24] sqrt(b)
  d = f64[24] convert(x)
  dl = f64[24] log-plus-one(d)
  u = u32[24] parameter(1)
  v = u32[24] parameter(2)
  uc = pred[24] compare(u, v), direction=GT
  us = u32[24] shift-right-logical(u, v)
  l = s64[24] parameter(3)
  m = s64[24] parameter(4)
  ld = s64[24] divide(l, m)
  lr = s64[24] remainder(l, m)
  n = s8[24] convert(x)
  ROOT t = (f16[24], bf16[24], f64[24], pred[24], u32[24], s64[24], s64[24], s8[24]) tuple(hh, bs, dl, uc, us, ld, lr, n)
})"},
    {"broadcast_transpose_reshape_iota", R"(
ENTRY e {
  x = f32[3] parameter(0)
  b = f32[2,3,4] broadcast(x), dimensions={1}
  t = f32[4,2,3] transpose(b), dimensions={2,0,1}
  r = f32[8,3] reshape(t)
  i = s32[8,3] iota(), iota_dimension=0
  f = f32[8,3] convert(i)
  ROOT a = f32[8,3] add(r, f)
})"},
    {"slices_pad_concat_reverse", R"(
ENTRY e {
  x = f32[6,8] parameter(0)
  s = f32[2,3] slice(x), slice={[1:5:2], [0:8:3]}
  z = f32[] constant(7)
  p = f32[5,8] pad(s, z), padding=1_2_0x-1_2_2
  c = f32[5,16] concatenate(p, p), dimensions={1}
  ROOT v = f32[5,16] reverse(c), dimensions={0,1}
})"},
    {"dynamic_slices", R"(
ENTRY e {
  x = f32[6,8] parameter(0)
  u = f32[2,3] parameter(1)
  i = s32[] constant(5)
  j = s32[] constant(2)
  ds = f32[2,3] dynamic-slice(x, i, j), dynamic_slice_sizes={2,3}
  a = f32[2,3] add(ds, u)
  ROOT dus = f32[6,8] dynamic-update-slice(x, a, j, i)
})"},
    {"in_place_updates", R"(
wcond {
  p = (s32[], f32[6,8], f32[6,8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(2)
  ROOT c = pred[] compare(i, n), direction=LT
}
wbody {
  p = (s32[], f32[6,8], f32[6,8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[6,8] get-tuple-element(p), index=1
  x = f32[6,8] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[6,8] multiply(v, x)
  ROOT t = (s32[], f32[6,8], f32[6,8]) tuple(i2, v2, x)
}
ENTRY e {
  x = f32[6,8] parameter(0)
  u = f32[2,3] parameter(1)
  i = s32[] constant(1)
  j = s32[] constant(4)
  n = f32[6,8] negate(x)
  d1 = f32[6,8] dynamic-update-slice(n, u, i, j)
  e = f32[6,8] sine(x)
  d2 = f32[6,8] dynamic-update-slice(e, u, j, i)
  m = f32[6,8] multiply(e, d2)
  idx = s32[2,1] constant({{5},{0}})
  v = f32[2,8] slice(d1), slice={[0:2], [0:8]}
  s = f32[6,8] scatter(d1, idx, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  zero = s32[] constant(0)
  init = (s32[], f32[6,8], f32[6,8]) tuple(zero, m, x)
  w = (s32[], f32[6,8], f32[6,8]) while(init), condition=wcond, body=wbody
  wv = f32[6,8] get-tuple-element(w), index=1
  wx = f32[6,8] get-tuple-element(w), index=2
  ROOT t = (f32[6,8], f32[6,8], f32[6,8], f32[6,8], f32[6,8]) tuple(s, wv, d2, wx, x)
})"},
    {"while_swaps_state", R"(
cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[4] get-tuple-element(p), index=1
  b = f32[4] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i2, b, a)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, x, y)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
})"},
    {"reduce", R"(
ENTRY e {
  x = f32[4,5,6] parameter(0)
  z = f32[] constant(0)
  r = f32[4,6] reduce(x, z), dimensions={1}, to_apply=add
  ROOT all = f32[] reduce(x, z), dimensions={0,1,2}, to_apply=add
})"},
    {"dot_plain_and_batched", R"(
ENTRY e {
  x = f32[4,6] parameter(0)
  y = f32[6,5] parameter(1)
  d = f32[4,5] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  a = f32[3,4,6] parameter(2)
  b = f32[3,5,6] parameter(3)
  bd = f32[3,4,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  p = f32[6,3,4] parameter(4)
  q = f32[5,3,6] parameter(5)
  pq = f32[3,4,5] dot(p, q), lhs_batch_dims={1}, lhs_contracting_dims={0}, rhs_batch_dims={1}, rhs_contracting_dims={2}
  ROOT t = (f32[4,5], f32[3,4,5], f32[3,4,5]) tuple(d, bd, pq)
})"},
    {"reduce_precision_and_bitcast_convert", R"(
ENTRY e {
  x = f32[6,8] parameter(0)
  big = f32[6,8] constant({{1e30, -1e30, 65504, 65520, 1e-30, -1e-8, 3.14159, 0},
    {inf, -inf, nan, -nan, 1.5, 2.5, 1.75, -1.25}, {0,0,0,0,0,0,0,0}, {0,0,0,0,0,0,0,0},
    {0,0,0,0,0,0,0,0}, {0,0,0,0,0,0,0,0}})
  v = f32[6,8] add(x, big)
  half = f32[6,8] reduce-precision(v), exponent_bits=5, mantissa_bits=10
  none = f32[6,8] reduce-precision(v), exponent_bits=3, mantissa_bits=0
  same = f32[6,8] reduce-precision(v), exponent_bits=8, mantissa_bits=23
  b = bf16[6,8] convert(v)
  b8 = bf16[6,8] reduce-precision(b), exponent_bits=5, mantissa_bits=2
  d = f64[6,8] convert(v)
  d32 = f64[6,8] reduce-precision(d), exponent_bits=8, mantissa_bits=23
  h = f16[6,8] convert(v)
  h4 = f16[6,8] reduce-precision(h), exponent_bits=4, mantissa_bits=3
  i = s32[6,8] bitcast-convert(half)
  u = u8[6,8,4] bitcast-convert(none)
  ROOT t = (f32[6,8], s32[6,8], u8[6,8,4], bf16[6,8], f64[6,8], f16[6,8]) tuple(same, i, u, b8, d32, h4)
})"},
    {"convolution_padded_strided_dilated", R"(
ENTRY e {
  x = f32[2,7,6,3] parameter(0)
  k = f32[3,2,3,4] parameter(1)
  same = f32[2,7,6,4] convolution(x, k), window={size=3x2 pad=1_1x0_1}, dim_labels=b01f_01io->b01f
  strided = f32[2,3,5,4] convolution(x, k), window={size=3x2 stride=2x1 pad=0_0x0_0 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f
  dilated = f32[2,13,5,4] convolution(x, k), window={size=3x2 pad=1_1x1_0 lhs_dilate=2x1 rhs_dilate=1x2 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[2,7,6,4], f32[2,3,5,4], f32[2,13,5,4]) tuple(same, strided, dilated)
})"},
    {"convolution_groups_and_layouts", R"(
ENTRY e {
  x = f32[4,6,5] parameter(0)
  k = f32[3,2,6] parameter(1)
  grouped = f32[4,6,3] convolution(x, k), window={size=3}, dim_labels=bf0_0io->bf0, feature_group_count=3
  y = f32[4,5,2] parameter(2)
  w = f32[5,2,4] parameter(3)
  batch_grouped = f32[2,1,4] convolution(y, w), window={size=5}, dim_labels=b0f_0io->b0f, batch_group_count=2
  h = bf16[2,8,3] parameter(4)
  v = bf16[3,4,3] parameter(5)
  narrow = f32[2,6,4] convolution(h, v), window={size=3}, dim_labels=b0f_0oi->b0f
  ROOT t = (f32[4,6,3], f32[2,1,4], f32[2,6,4]) tuple(grouped, batch_grouped, narrow)
})"},
    {"reduce_window", R"(
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
mn {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] minimum(a, b)
}
ENTRY e {
  x = f32[2,9,8,3] parameter(0)
  ninf = f32[] constant(-inf)
  pool = f32[2,5,4,3] reduce-window(x, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=mx
  z = f32[] constant(0)
  dilated = f32[2,15,7,3] reduce-window(x, z), window={size=1x3x2x1 pad=0_0x0_0x1_0x0_0 lhs_dilate=1x2x1x1 rhs_dilate=1x1x2x1}, to_apply=add
  i = s32[2,9,8,3] convert(x)
  big = s32[] constant(2147483647)
  smallest = s32[2,4,8,3] reduce-window(i, big), window={size=1x3x1x1 stride=1x2x1x1}, to_apply=mn
  ROOT t = (f32[2,5,4,3], f32[2,15,7,3], s32[2,4,8,3]) tuple(pool, dilated, smallest)
})"},
    {"select_and_scatter", R"(
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(b, a), direction=GT
}
geb {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
addb {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = f32[2,9,8,3] parameter(0)
  g = f32[2,5,4,3] parameter(1)
  z = f32[] constant(0)
  overlapping = f32[2,9,8,3] select-and-scatter(x, g, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, select=ge, scatter=add
  h = f32[2,4,8,3] parameter(2)
  mins = f32[2,9,8,3] select-and-scatter(x, h, z), window={size=1x3x1x1 stride=1x2x1x1}, select=lt, scatter=add
  xb = bf16[2,9,8,3] convert(x)
  gb = bf16[2,9,8,3] convert(x)
  zb = bf16[] constant(0)
  narrow = bf16[2,9,8,3] select-and-scatter(xb, gb, zb), window={size=1x3x3x1 pad=0_0x1_1x1_1x0_0}, select=geb, scatter=addb
  ROOT t = (f32[2,9,8,3], f32[2,9,8,3], bf16[2,9,8,3]) tuple(overlapping, mins, narrow)
})"},
    {"topk", R"(
ENTRY e {
  x = f32[3,2,9] parameter(0)
  special = f32[3,2,9] constant({{{nan, -nan, inf, -inf, 0, -0, 1, 1, -1}, {0,0,0,0,0,0,0,0,0}},
    {{0,0,0,0,0,0,0,0,0}, {0,0,0,0,0,0,0,0,0}}, {{0,0,0,0,0,0,0,0,0}, {0,0,0,0,0,0,0,0,0}}})
  v = f32[3,2,9] add(x, special)
  top = (f32[3,2,4], s32[3,2,4]) topk(v), k=4, largest=true
  bottom = (f32[3,2,9], s32[3,2,9]) topk(v), k=9, largest=false
  i = s32[3,2,9] convert(x)
  ties = (s32[3,2,3], s32[3,2,3]) topk(i), k=3, largest=true
  b = bf16[3,2,9] convert(v)
  call = (bf16[3,2,2], s32[3,2,2]) custom-call(b), custom_call_target="TopK"
  ROOT t = ((f32[3,2,4], s32[3,2,4]), (f32[3,2,9], s32[3,2,9]), (s32[3,2,3], s32[3,2,3]),
    (bf16[3,2,2], s32[3,2,2])) tuple(top, bottom, ties, call)
})"},
    {"dot_empty_contraction", R"(
ENTRY e {
  x = f32[4,0] parameter(0)
  y = f32[0,3] parameter(1)
  ROOT d = f32[4,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})"},
    {"dot_bf16", R"(
ENTRY e {
  x = bf16[8,16] parameter(0)
  y = bf16[16,4] parameter(1)
  ROOT d = f32[8,4] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})"},
    {"gather", R"(
ENTRY e {
  x = f32[5,4] parameter(0)
  i = s32[3,1] constant({{4},{0},{2}})
  ROOT g = f32[3,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
})"},
    {"scatter_add", R"(
ENTRY e {
  x = f32[5,4] parameter(0)
  i = s32[3,1] constant({{4},{0},{4}})
  u = f32[3,4] parameter(1)
  ROOT s = f32[5,4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})"},
    {"scan_forward_and_reverse", R"(
step {
  x = f32[3] parameter(0)
  h = f32[3] parameter(1)
  s = f32[3] add(x, h)
  n = f32[3] negate(s)
  ROOT t = (f32[3], f32[3]) tuple(n, s)
}
ENTRY e {
  x = f32[3,5] parameter(0)
  init = f32[3] parameter(1)
  f = (f32[3,5], f32[3]) scan(x, init), dimensions={1}, num_carries=1, to_apply=step
  r = (f32[3,5], f32[3]) scan(x, init), dimensions={1}, num_carries=1, is_reverse=true, to_apply=step
  fo = f32[3,5] get-tuple-element(f), index=0
  ro = f32[3,5] get-tuple-element(r), index=0
  rc = f32[3] get-tuple-element(r), index=1
  ROOT out = (f32[3,5], f32[3,5], f32[3]) tuple(fo, ro, rc)
})"},
    {"while_and_conditional", R"(
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v2 = f32[4] add(v, v)
  ROOT t = (s32[], f32[4]) tuple(i2, v2)
}
neg {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
same {
  a = f32[4] parameter(0)
  ROOT c = f32[4] copy(a)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  v = f32[4] get-tuple-element(w), index=1
  k = s32[] get-tuple-element(w), index=0
  three = s32[] constant(3)
  pr = pred[] compare(k, three), direction=EQ
  ROOT r = f32[4] conditional(pr, v, v), true_computation=neg, false_computation=same
})"},
};

}  // namespace

std::vector<OpCase> OpCases() { return std::vector<OpCase>(std::begin(kCases), std::end(kCases)); }

std::string OpCaseText(const OpCase& c) { return std::string("HloModule m\n") + kAdd + c.body; }

}  // namespace cuda
}  // namespace runtime
