// CopyBox: validate, merge the trailing dimensions that are copied whole into one run of
// bytes, then walk the remaining outer dimensions with an odometer and memcpy each run.
#include "runtime/cpu/box_copy.h"

#include <cstring>
#include <vector>

#include "hlo/strings.h"
#include "runtime/cpu/ops/strided_copy.h"

namespace runtime {
namespace {

absl::Status CheckBox(const hlo::Shape& shape, absl::Span<const int64_t> offsets,
                      absl::Span<const int64_t> sizes, std::string_view role) {
  if (static_cast<int64_t>(offsets.size()) != shape.rank() ||
      static_cast<int64_t>(sizes.size()) != shape.rank()) {
    return absl::InvalidArgumentError(hlo::StrCat("box copy: ", role, " rank ", shape.rank(),
                                                  " does not match the box rank ", sizes.size()));
  }
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (offsets[i] < 0 || sizes[i] < 0 || offsets[i] + sizes[i] > shape.dimensions(i)) {
      return absl::InvalidArgumentError(hlo::StrCat(
          "box copy: dimension ", i, " of the box [", offsets[i], ", ", offsets[i] + sizes[i],
          ") is outside the ", role, " ", shape.ToString(false)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CopyBox(const hlo::Literal& src, absl::Span<const int64_t> src_offsets,
                     hlo::Literal& dst, absl::Span<const int64_t> dst_offsets,
                     absl::Span<const int64_t> sizes) {
  const hlo::Shape& ss = src.shape();
  const hlo::Shape& ds = dst.shape();
  if (!ss.IsArray() || !ds.IsArray() || ss.element_type() != ds.element_type()) {
    return absl::InvalidArgumentError(
        hlo::StrCat("box copy: cannot copy from ", ss.ToString(false), " to ", ds.ToString(false)));
  }
  if (absl::Status s = CheckBox(ss, src_offsets, sizes, "source"); !s.ok()) return s;
  if (absl::Status s = CheckBox(ds, dst_offsets, sizes, "destination"); !s.ok()) return s;
  const int64_t rank = ss.rank();
  const int64_t width = hlo::ByteWidth(ss.element_type());
  for (int64_t s : sizes) {
    if (s == 0) return absl::OkStatus();
  }
  const uint8_t* from = src.data().data();
  uint8_t* to = dst.mutable_data()->data();
  if (rank == 0) {
    std::memcpy(to, from, width);
    return absl::OkStatus();
  }
  // Dimension `inner` and everything after it form one contiguous run.
  int64_t inner = rank - 1;
  int64_t run = sizes[inner];
  while (inner > 0 && sizes[inner] == ss.dimensions(inner) &&
         sizes[inner] == ds.dimensions(inner)) {
    --inner;
    run *= sizes[inner];
  }
  const std::vector<int64_t> src_strides = RowMajorByteStrides(ss.dimensions(), 1);
  const std::vector<int64_t> dst_strides = RowMajorByteStrides(ds.dimensions(), 1);
  std::vector<int64_t> index(inner, 0);  // Odometer over dimensions [0, inner).
  while (true) {
    int64_t s = src_offsets[inner] * src_strides[inner];
    int64_t d = dst_offsets[inner] * dst_strides[inner];
    for (int64_t i = 0; i < inner; ++i) {
      s += (src_offsets[i] + index[i]) * src_strides[i];
      d += (dst_offsets[i] + index[i]) * dst_strides[i];
    }
    std::memcpy(to + d * width, from + s * width, run * width);
    int64_t i = inner - 1;
    for (; i >= 0; --i) {
      if (++index[i] < sizes[i]) break;
      index[i] = 0;
    }
    if (i < 0) break;
  }
  return absl::OkStatus();
}

}  // namespace runtime
