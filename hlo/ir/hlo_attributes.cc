// Names of the small attribute enums, and replica-group expansion.
#include "hlo/ir/hlo_attributes.h"

#include <numeric>

namespace hlo {
namespace {

template <typename Enum, size_t N>
std::optional<Enum> Lookup(const std::string_view (&names)[N], std::string_view s) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

constexpr std::string_view kDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
constexpr std::string_view kComparisonTypes[] = {"",       "FLOAT",    "TOTALORDER",
                                                 "SIGNED", "UNSIGNED", "PARTIALORDER"};
constexpr std::string_view kPrecisions[] = {"DEFAULT", "HIGH", "HIGHEST"};
constexpr std::string_view kDistributions[] = {"rng_invalid", "rng_uniform", "rng_normal"};
constexpr std::string_view kFftTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

}  // namespace

std::string_view ComparisonDirectionString(ComparisonDirection d) {
  return kDirections[static_cast<int>(d)];
}
std::optional<ComparisonDirection> StringToComparisonDirection(std::string_view s) {
  return Lookup<ComparisonDirection>(kDirections, s);
}
std::string_view ComparisonTypeString(ComparisonType t) {
  return kComparisonTypes[static_cast<int>(t)];
}
std::optional<ComparisonType> StringToComparisonType(std::string_view s) {
  if (s.empty()) return std::nullopt;
  return Lookup<ComparisonType>(kComparisonTypes, s);
}
std::string_view PrecisionString(Precision p) { return kPrecisions[static_cast<int>(p)]; }
std::optional<Precision> StringToPrecision(std::string_view s) {
  return Lookup<Precision>(kPrecisions, s);
}
std::string_view RandomDistributionString(RandomDistribution d) {
  return kDistributions[static_cast<int>(d)];
}
std::optional<RandomDistribution> StringToRandomDistribution(std::string_view s) {
  return Lookup<RandomDistribution>(kDistributions, s);
}
std::string_view FftTypeString(FftType t) { return kFftTypes[static_cast<int>(t)]; }
std::optional<FftType> StringToFftType(std::string_view s) {
  return Lookup<FftType>(kFftTypes, s);
}

std::vector<std::vector<int64_t>> ReplicaGroups::Expanded() const {
  if (!iota) return groups;
  // Device ids are iota(product(reshape_dims)) reshaped, transposed by perm, then read in
  // row-major order and cut into groups.
  const std::vector<int64_t>& dims = iota->iota_reshape_dims;
  const std::vector<int64_t>& perm = iota->iota_transpose_perm;
  const int64_t rank = static_cast<int64_t>(dims.size());
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> tdims(rank), tstrides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t src = perm.empty() ? i : perm[i];
    tdims[i] = dims[src];
    tstrides[i] = strides[src];
  }
  const int64_t total = iota->num_replica_groups * iota->num_devices_per_group;
  std::vector<int64_t> flat;
  flat.reserve(total);
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t id = 0;
    for (int64_t i = 0; i < rank; ++i) id += index[i] * tstrides[i];
    flat.push_back(id);
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (++index[i] < tdims[i]) break;
      index[i] = 0;
    }
  }
  std::vector<std::vector<int64_t>> out(iota->num_replica_groups);
  for (int64_t g = 0; g < iota->num_replica_groups; ++g) {
    out[g].assign(flat.begin() + g * iota->num_devices_per_group,
                  flat.begin() + (g + 1) * iota->num_devices_per_group);
  }
  return out;
}

ConvolutionEinsumDim ConvolutionEinsumDimOf(const WindowDimension& w, int64_t input_size,
                                            int64_t kernel_size) {
  const int64_t n = kernel_size;
  const int64_t step = n > 1 ? n - 1 : 1;
  if (input_size == n && w.size == n && w.base_dilation == n && w.padding_low == 0 &&
      w.padding_high == 0 && !w.window_reversal &&
      ((w.stride == step && w.window_dilation == 1) ||
       (w.window_dilation == step && w.stride == 1))) {
    return ConvolutionEinsumDim::kBatch;
  }
  if (input_size == 1 && n > 1 && w.size == n && w.padding_low == n - 1 &&
      w.padding_high == n - 1 && w.window_reversal && w.stride == 1 && w.window_dilation == 1 &&
      w.base_dilation == 1) {
    return ConvolutionEinsumDim::kKernelFree;
  }
  return ConvolutionEinsumDim::kWindow;
}

WindowDimension ConvolutionEinsumWindow(const WindowDimension& w, ConvolutionEinsumDim kind,
                                        int64_t n) {
  WindowDimension local = w;
  const int64_t step = n > 1 ? n - 1 : 1;
  local.size = n;
  if (kind == ConvolutionEinsumDim::kBatch) {
    const bool strided = w.window_dilation == 1;
    local.base_dilation = n;
    local.stride = strided ? step : 1;
    local.window_dilation = strided ? 1 : step;
  } else if (kind == ConvolutionEinsumDim::kKernelFree) {
    local.padding_low = n - 1;
    local.padding_high = n - 1;
  }
  return local;
}

}  // namespace hlo
