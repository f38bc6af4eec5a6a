// Typed attribute values of HLO instructions. Each struct mirrors the XLA proto message of the
// same name (field for field where we keep it), so proto conversion is a direct copy.
#ifndef HLO_IR_HLO_ATTRIBUTES_H_
#define HLO_IR_HLO_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hlo/ir/shape.h"

namespace hlo {

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  bool operator==(const DotDimensionNumbers& o) const {
    return lhs_contracting_dimensions == o.lhs_contracting_dimensions &&
           rhs_contracting_dimensions == o.rhs_contracting_dimensions &&
           lhs_batch_dimensions == o.lhs_batch_dimensions &&
           rhs_batch_dimensions == o.rhs_batch_dimensions;
  }
};

// Convolution layout, printed as dim_labels `b01f_01io->b01f`.
struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
};

struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;
  int64_t base_dilation = 1;
  bool window_reversal = false;
};

struct Window {
  std::vector<WindowDimension> dimensions;
};

// What a convolution's window dim is when the convolution is an einsum in disguise (XLA's
// dot-as-convolution), given the input's and the kernel's length along it:
//   kBatch:      input and kernel position o meet at output o (lengths n: size = base
//                dilation = n, stride or window dilation max(1, n-1), no padding);
//   kKernelFree: kernel position o reaches output o from a one-element input (kernel length n:
//                size n, padding n-1 on both sides, reversed, stride 1, no dilation);
//   kWindow:     anything else (a real window).
// Either kind splits like a batch dim (the input too for kBatch), each device's window rebuilt
// for its positions (ConvolutionEinsumWindow).
enum class ConvolutionEinsumDim { kWindow, kBatch, kKernelFree };
ConvolutionEinsumDim ConvolutionEinsumDimOf(const WindowDimension& w, int64_t input_size,
                                            int64_t kernel_size);
// The window dim of that kind over `n` positions (each device's n/t of them).
WindowDimension ConvolutionEinsumWindow(const WindowDimension& w, ConvolutionEinsumDim kind,
                                        int64_t n);

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
};

struct SliceDimension {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
};

struct PaddingDimension {
  int64_t edge_padding_low = 0;
  int64_t edge_padding_high = 0;
  int64_t interior_padding = 0;
};

struct PaddingConfig {
  std::vector<PaddingDimension> dimensions;
};

// replica_groups: either an explicit list `{{0,1},{2,3}}` or the iota form
// `[num_groups,group_size]<=[reshape_dims]T(perm)`.
struct IotaReplicaGroupList {
  int64_t num_replica_groups = 0;
  int64_t num_devices_per_group = 0;
  std::vector<int64_t> iota_reshape_dims;
  std::vector<int64_t> iota_transpose_perm;
};

struct ReplicaGroups {
  std::vector<std::vector<int64_t>> groups;  // Explicit form; empty when `iota` is set.
  std::optional<IotaReplicaGroupList> iota;
  // The explicit groups, expanding the iota form.
  std::vector<std::vector<int64_t>> Expanded() const;
};

enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
enum class ComparisonType { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned, kPartialOrder };

enum class Precision { kDefault = 0, kHigh = 1, kHighest = 2 };

enum class RandomDistribution { kInvalid = 0, kUniform = 1, kNormal = 2 };

enum class FftType { kFft = 0, kIfft = 1, kRfft = 2, kIrfft = 3 };

// Source location and provenance of an instruction: `metadata={op_type="Dot" ...}`.
struct OpMetadata {
  std::string op_type;
  std::string op_name;
  std::string source_file;
  int64_t source_line = 0;
  int64_t source_end_line = 0;
  int64_t source_column = 0;
  int64_t source_end_column = 0;
  std::string deduplicated_name;
  int64_t stack_frame_id = 0;
  std::vector<std::string> profile_type;
  bool scheduling_name_set = false;
  std::string scheduling_name;
  bool empty() const {
    return op_type.empty() && op_name.empty() && source_file.empty() && source_line == 0 &&
           source_end_line == 0 && source_column == 0 && source_end_column == 0 &&
           deduplicated_name.empty() && stack_frame_id == 0 && profile_type.empty() &&
           scheduling_name.empty();
  }
};

// An attribute kept verbatim: XLA attributes whose meaning no pass here depends on (for
// example `origin`, `statistics`, `schedule`). The value is the exact text after `name=`.
struct RawAttribute {
  std::string name;
  std::string value;
};

// Ordered string map printed as `{key=value,...}`.
using FrontendAttributes = std::vector<std::pair<std::string, std::string>>;

std::string_view ComparisonDirectionString(ComparisonDirection d);
std::optional<ComparisonDirection> StringToComparisonDirection(std::string_view s);
std::string_view ComparisonTypeString(ComparisonType t);
std::optional<ComparisonType> StringToComparisonType(std::string_view s);
std::string_view PrecisionString(Precision p);
std::optional<Precision> StringToPrecision(std::string_view s);
std::string_view RandomDistributionString(RandomDistribution d);
std::optional<RandomDistribution> StringToRandomDistribution(std::string_view s);
std::string_view FftTypeString(FftType t);
std::optional<FftType> StringToFftType(std::string_view s);

}  // namespace hlo

#endif  // HLO_IR_HLO_ATTRIBUTES_H_
