// Window arithmetic shared by reduce-window, select-and-scatter (window_ops.cc) and convolution
// (convolution_ops.cc).
#ifndef RUNTIME_COMMON_WINDOW_GEOMETRY_H_
#define RUNTIME_COMMON_WINDOW_GEOMETRY_H_

#include <cstdint>
#include <vector>

#include "hlo/ir/hlo_attributes.h"

namespace runtime {

// Number of window positions along one dimension of size `input` (XLA's windowed output size):
// the input is base-dilated, padded (padding may be negative), and the window-dilated window
// slides over it with the stride.
inline int64_t WindowedOutputSize(const hlo::WindowDimension& w, int64_t input) {
  const int64_t dilated_input = input == 0 ? 0 : (input - 1) * w.base_dilation + 1;
  const int64_t padded = dilated_input + w.padding_low + w.padding_high;
  const int64_t dilated_window = w.size == 0 ? 0 : (w.size - 1) * w.window_dilation + 1;
  if (padded <= 0 || dilated_window > padded) return 0;
  return (padded - dilated_window) / w.stride + 1;
}

// For one dimension of size `input`: the input coordinate read by output position o and window
// position k, or -1 where that position falls on padding or a dilation hole.
inline int64_t WindowCoordinate(const hlo::WindowDimension& w, int64_t input, int64_t o,
                                int64_t k) {
  const int64_t p = o * w.stride + k * w.window_dilation - w.padding_low;
  if (p >= 0 && p % w.base_dilation == 0 && p / w.base_dilation < input) {
    return p / w.base_dilation;
  }
  return -1;
}

// WindowCoordinate for every output position o and window position k, at o * w.size + k.
inline std::vector<int64_t> WindowCoordinates(const hlo::WindowDimension& w, int64_t input,
                                              int64_t output) {
  std::vector<int64_t> coords(output * w.size, -1);
  for (int64_t o = 0; o < output; ++o) {
    for (int64_t k = 0; k < w.size; ++k) coords[o * w.size + k] = WindowCoordinate(w, input, o, k);
  }
  return coords;
}

}  // namespace runtime

#endif  // RUNTIME_COMMON_WINDOW_GEOMETRY_H_
