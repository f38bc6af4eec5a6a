// NumPy `.npy` files for literals: what `spmd-run --inputs/--outputs` read and write.
//
// Files are written as format version 1.0 (2.0 when the header needs it), little-endian,
// C order, with numpy's own descr for every standard type:
//   pred |b1   s8 |i1   s16 <i2   s32 <i4   s64 <i8   u8 |u1   u16 <u2   u32 <u4   u64 <u8
//   f16 <f2    f32 <f4  f64 <f8   c64 <c8   c128 <c16
// NumPy has no bf16 or f8 type: bf16 is written as `<u2` and the f8 types as `|u1`, holding the
// raw bits (in numpy: `np.load(f).view(ml_dtypes.bfloat16)`). Reading accepts versions 1.0, 2.0
// and 3.0, big-endian descrs (byte-swapped on load), and, for an expected bf16/f8 value, the
// raw-bits descr or ml_dtypes' `<V2`/`|V1`. Fortran-order files are rejected.
#ifndef RUNTIME_CPU_NPY_H_
#define RUNTIME_CPU_NPY_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/ir/literal.h"

namespace runtime {

// The bytes of a `.npy` file holding array literal `literal`. Fails for tuples and for element
// types without a descr (s4, u4, ...).
absl::StatusOr<std::string> EncodeNpy(const hlo::Literal& literal);

// Decodes `.npy` bytes into a literal of the file's own type (bf16/f8 come back as u16/u8).
// `name` names the file in errors.
absl::StatusOr<hlo::Literal> DecodeNpy(std::string_view bytes, std::string_view name);

// As DecodeNpy, but the result has `expected`'s element type and dimensions: the file's
// type must be that type, or its raw-bits stand-in for bf16/f8; otherwise an error naming the
// file, the expected shape and what it holds.
absl::StatusOr<hlo::Literal> DecodeNpyAs(std::string_view bytes, std::string_view name,
                                         const hlo::Shape& expected);

// File versions of the above. WriteNpy writes atomically (temp file + rename).
absl::Status WriteNpy(const std::string& path, const hlo::Literal& literal);
absl::StatusOr<hlo::Literal> ReadNpy(const std::string& path);
absl::StatusOr<hlo::Literal> ReadNpyAs(const std::string& path, const hlo::Shape& expected);

}  // namespace runtime

#endif  // RUNTIME_CPU_NPY_H_
