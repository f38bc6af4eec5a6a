// TileAssignment: validation, canonical iota forms, device lookup, transpose and reshape.
//
// An iota assignment `[dims]<=[R]T(P)` is evaluated without materializing it: the row-major
// position L over `dims` is the same position in the transposed array, whose axes (in traversal
// order) are R[P[0]], R[P[1]], ...; the digits of L over those axes, weighted by the row-major
// strides of R, sum to the device id.
//
// Canonicalization (as in XLA) repeatedly drops size-1 reshape dims and merges reshape dims r,
// r+1 that appear next to each other, in order, in P:  [3,4,5] => [60];  [1,3,1,4,1,5]
// T(4,3,2,5,1,0) => [3,20]T(1,0).
//
// Transposing an iota refines its reshape dims against its tile dims (RefineIota); each tile
// dim is then a run of whole factors, and permuting the runs is a new transpose of the refined
// iota. When no refinement exists the result is materialized as an explicit list.
//
// ToIota recovers an iota form from an explicit list: it peels axes off the flat list from the
// minor end (each the longest run of a constant stride), checks that the strides form a mixed
// radix over 0..N-1, then verifies the whole list against the candidate.
#include "hlo/sharding/tile_assignment.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hlo {
namespace {

absl::StatusOr<int64_t> CheckedProduct(absl::Span<const int64_t> dims, const char* what) {
  if (dims.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must not be empty"));
  }
  int64_t product = 1;
  for (int64_t d : dims) {
    if (d < 1) {
      return absl::InvalidArgumentError(absl::StrCat(what, " [", absl::StrJoin(dims, ","),
                                                     "] has a dimension of size ", d,
                                                     "; every size must be at least 1"));
    }
    if (product > TileAssignment::kMaxDevices / d) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " [", absl::StrJoin(dims, ","), "] holds more than ",
                       TileAssignment::kMaxDevices, " devices"));
    }
    product *= d;
  }
  return product;
}

absl::Status CheckPermutation(absl::Span<const int64_t> perm, int64_t n, const char* what) {
  std::vector<bool> seen(n, false);
  bool ok = static_cast<int64_t>(perm.size()) == n;
  for (int64_t p : perm) {
    if (!ok || p < 0 || p >= n || seen[p]) {
      ok = false;
      break;
    }
    seen[p] = true;
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " (", absl::StrJoin(perm, ","), ") is not a permutation of 0..", n - 1));
}

// Row-major strides of `dims` (inline storage: no allocation for usual ranks).
absl::InlinedVector<int64_t, 6> Strides(absl::Span<const int64_t> dims) {
  absl::InlinedVector<int64_t, 6> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

// Drops size-1 reshape dims and merges reshape dims that stay adjacent and in order.
void CanonicalizeIota(std::vector<int64_t>* reshape, std::vector<int64_t>* perm) {
  while (true) {
    // Remove size-1 dims.
    std::vector<int64_t> old_to_new(reshape->size(), -1);
    std::vector<int64_t> new_reshape;
    for (size_t i = 0; i < reshape->size(); ++i) {
      if ((*reshape)[i] != 1) {
        old_to_new[i] = static_cast<int64_t>(new_reshape.size());
        new_reshape.push_back((*reshape)[i]);
      }
    }
    std::vector<int64_t> new_perm;
    for (int64_t p : *perm) {
      if (old_to_new[p] >= 0) new_perm.push_back(old_to_new[p]);
    }
    *reshape = std::move(new_reshape);
    *perm = std::move(new_perm);
    // Merge the first mergeable pair, then repeat.
    bool merged = false;
    for (size_t k = 0; k + 1 < perm->size(); ++k) {
      if ((*perm)[k + 1] == (*perm)[k] + 1) {
        (*reshape)[(*perm)[k]] *= (*reshape)[(*perm)[k + 1]];
        (*reshape)[(*perm)[k + 1]] = 1;
        merged = true;
        break;
      }
    }
    if (!merged) break;
  }
  if (reshape->empty()) {
    *reshape = {1};
    *perm = {0};
  }
}

// Advances a row-major multi-index; returns false after the last index.
bool NextIndex(std::vector<int64_t>* index, absl::Span<const int64_t> dims) {
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    if (++(*index)[i] < dims[i]) return true;
    (*index)[i] = 0;
  }
  return false;
}

// One axis found by ToIota: `size` digits, consecutive ones `stride` apart in device id.
struct StridedAxis {
  int64_t size;
  int64_t stride;
};

// Peels strided axes off `devices` from the minor end; empty when the list is not strided.
std::vector<StridedAxis> PeelStridedAxes(const std::vector<int64_t>& devices) {
  const int64_t n = static_cast<int64_t>(devices.size());
  std::vector<StridedAxis> axes;  // Minor to major.
  int64_t block = 1;
  while (block < n) {
    const int64_t stride = devices[block] - devices[0];
    if (stride <= 0) return {};
    int64_t run = 1;
    while (block * (run + 1) <= n && devices[block * run] == devices[0] + run * stride) ++run;
    while (run > 1 && n % (block * run) != 0) --run;
    if (run < 2) return {};
    axes.push_back({run, stride});
    block *= run;
  }
  return axes;
}

}  // namespace

TileAssignment::TileAssignment() : dims_{1}, reshape_dims_{1}, transpose_perm_{0} {}

TileAssignment::TileAssignment(absl::Span<const int64_t> dims,
                               absl::Span<const int64_t> reshape_dims,
                               absl::Span<const int64_t> transpose_perm)
    : dims_(dims.begin(), dims.end()),
      reshape_dims_(reshape_dims.begin(), reshape_dims.end()),
      transpose_perm_(transpose_perm.begin(), transpose_perm.end()) {
  num_devices_ = 1;
  for (int64_t d : dims_) num_devices_ *= d;
}

TileAssignment::TileAssignment(absl::Span<const int64_t> dims,
                               std::shared_ptr<const std::vector<int64_t>> devices)
    : dims_(dims.begin(), dims.end()), explicit_devices_(std::move(devices)) {
  num_devices_ = static_cast<int64_t>(explicit_devices_->size());
}

absl::StatusOr<TileAssignment> TileAssignment::Iota(absl::Span<const int64_t> dims) {
  absl::StatusOr<int64_t> n = CheckedProduct(dims, "tile assignment dimensions");
  if (!n.ok()) return n.status();
  return TileAssignment(std::vector<int64_t>(dims.begin(), dims.end()), {*n}, {0});
}

absl::StatusOr<TileAssignment> TileAssignment::Iota(absl::Span<const int64_t> dims,
                                                    absl::Span<const int64_t> reshape_dims,
                                                    absl::Span<const int64_t> transpose_perm) {
  absl::StatusOr<int64_t> n = CheckedProduct(dims, "tile assignment dimensions");
  if (!n.ok()) return n.status();
  absl::StatusOr<int64_t> m = CheckedProduct(reshape_dims, "iota reshape dimensions");
  if (!m.ok()) return m.status();
  if (*n != *m) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tile assignment dimensions [", absl::StrJoin(dims, ","), "] hold ", *n,
        " devices but iota reshape dimensions [", absl::StrJoin(reshape_dims, ","), "] hold ", *m));
  }
  std::vector<int64_t> perm(transpose_perm.begin(), transpose_perm.end());
  if (perm.empty()) {
    perm.resize(reshape_dims.size());
    std::iota(perm.begin(), perm.end(), 0);
  }
  absl::Status status = CheckPermutation(perm, static_cast<int64_t>(reshape_dims.size()),
                                         "iota transpose permutation");
  if (!status.ok()) return status;
  std::vector<int64_t> reshape(reshape_dims.begin(), reshape_dims.end());
  CanonicalizeIota(&reshape, &perm);
  return TileAssignment(std::vector<int64_t>(dims.begin(), dims.end()), std::move(reshape),
                        std::move(perm));
}

absl::StatusOr<TileAssignment> TileAssignment::Explicit(absl::Span<const int64_t> dims,
                                                        absl::Span<const int64_t> devices) {
  absl::StatusOr<int64_t> n = CheckedProduct(dims, "tile assignment dimensions");
  if (!n.ok()) return n.status();
  if (*n != static_cast<int64_t>(devices.size())) {
    return absl::InvalidArgumentError(absl::StrCat("tile assignment dimensions [",
                                                   absl::StrJoin(dims, ","), "] hold ", *n,
                                                   " devices but ", devices.size(), " are listed"));
  }
  std::vector<int64_t> sorted(devices.begin(), devices.end());
  std::sort(sorted.begin(), sorted.end());
  if (sorted.front() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("device ", sorted.front(), " in tile assignment is negative"));
  }
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] == sorted[i - 1]) {
      return absl::InvalidArgumentError(
          absl::StrCat("device ", sorted[i], " appears more than once in tile assignment"));
    }
  }
  return TileAssignment(
      std::vector<int64_t>(dims.begin(), dims.end()),
      std::make_shared<const std::vector<int64_t>>(devices.begin(), devices.end()));
}

int64_t TileAssignment::IotaDeviceAt(int64_t linear_index) const {
  const int64_t r = static_cast<int64_t>(reshape_dims_.size());
  // Row-major strides of the reshape dims, computed inline to avoid allocation.
  int64_t device = 0;
  for (int64_t k = r - 1; k >= 0; --k) {
    const int64_t axis = transpose_perm_[k];
    const int64_t digit = linear_index % reshape_dims_[axis];
    linear_index /= reshape_dims_[axis];
    int64_t stride = 1;
    for (int64_t j = axis + 1; j < r; ++j) stride *= reshape_dims_[j];
    device += digit * stride;
  }
  return device;
}

int64_t TileAssignment::device_at(int64_t linear_index) const {
  if (!is_iota()) return (*explicit_devices_)[linear_index];
  return IotaDeviceAt(linear_index);
}

int64_t TileAssignment::device(absl::Span<const int64_t> tile_index) const {
  int64_t linear = 0;
  for (size_t i = 0; i < dims_.size(); ++i) linear = linear * dims_[i] + tile_index[i];
  return device_at(linear);
}

void TileAssignment::ForEachIotaDevice(absl::FunctionRef<void(int64_t)> f) const {
  // Walk the transposed iota with a mixed-radix counter.
  DimVector axes, axis_strides;
  const auto strides = Strides(reshape_dims_);
  for (int64_t p : transpose_perm_) {
    axes.push_back(reshape_dims_[p]);
    axis_strides.push_back(strides[p]);
  }
  DimVector index(axes.size(), 0);
  int64_t device = 0;
  for (int64_t n = 0; n < num_devices_; ++n) {
    f(device);
    for (int64_t k = static_cast<int64_t>(axes.size()) - 1; k >= 0; --k) {
      if (++index[k] < axes[k]) {
        device += axis_strides[k];
        break;
      }
      index[k] = 0;
      device -= (axes[k] - 1) * axis_strides[k];
    }
  }
}

std::vector<int64_t> TileAssignment::Devices() const {
  if (!is_iota()) return *explicit_devices_;
  std::vector<int64_t> devices;
  devices.reserve(num_devices_);
  ForEachIotaDevice([&devices](int64_t device) { devices.push_back(device); });
  return devices;
}

std::optional<std::vector<int64_t>> TileAssignment::TileIndexOf(int64_t device) const {
  int64_t linear = -1;
  if (is_iota()) {
    if (device < 0 || device >= num_devices_) return std::nullopt;
    // Digits of `device` over the reshape dims, re-read in transposed order.
    const auto strides = Strides(reshape_dims_);
    linear = 0;
    for (int64_t p : transpose_perm_) {
      linear = linear * reshape_dims_[p] + (device / strides[p]) % reshape_dims_[p];
    }
  } else {
    auto it = std::find(explicit_devices_->begin(), explicit_devices_->end(), device);
    if (it == explicit_devices_->end()) return std::nullopt;
    linear = it - explicit_devices_->begin();
  }
  std::vector<int64_t> index(dims_.size());
  for (int64_t i = rank() - 1; i >= 0; --i) {
    index[i] = linear % dims_[i];
    linear /= dims_[i];
  }
  return index;
}

int64_t TileAssignment::MaxDevice() const {
  if (is_iota()) return num_devices_ - 1;
  return *std::max_element(explicit_devices_->begin(), explicit_devices_->end());
}

void TileAssignment::ForEach(absl::FunctionRef<void(absl::Span<const int64_t>, int64_t)> f) const {
  const std::vector<int64_t> devices = Devices();
  std::vector<int64_t> index(dims_.size(), 0);
  for (int64_t n = 0; n < num_devices_; ++n) {
    f(index, devices[n]);
    NextIndex(&index, dims_);
  }
}

std::optional<std::vector<IotaFactor>> RefineIota(const TileAssignment& ta) {
  if (!ta.is_iota()) return std::nullopt;
  absl::Span<const int64_t> reshape = ta.iota_reshape_dims();
  absl::Span<const int64_t> perm = ta.iota_transpose_perm();
  absl::Span<const int64_t> dims = ta.dims();
  std::vector<IotaFactor> factors;
  size_t a = 0;  // Transposed axis.
  size_t t = 0;  // Tile dim.
  auto skip_ones = [&] {
    while (a < perm.size() && reshape[perm[a]] == 1) ++a;
    while (t < dims.size() && dims[t] == 1) ++t;
  };
  skip_ones();
  int64_t rem_a = a < perm.size() ? reshape[perm[a]] : 1;
  int64_t rem_t = t < dims.size() ? dims[t] : 1;
  while (a < perm.size() && t < dims.size()) {
    const int64_t size = std::min(rem_a, rem_t);
    if (std::max(rem_a, rem_t) % size != 0) return std::nullopt;
    factors.push_back({size, perm[a], static_cast<int64_t>(t)});
    rem_a /= size;
    rem_t /= size;
    if (rem_a == 1) {
      ++a;
      while (a < perm.size() && reshape[perm[a]] == 1) ++a;
      rem_a = a < perm.size() ? reshape[perm[a]] : 1;
    }
    if (rem_t == 1) {
      ++t;
      while (t < dims.size() && dims[t] == 1) ++t;
      rem_t = t < dims.size() ? dims[t] : 1;
    }
  }
  return factors;
}

absl::StatusOr<TileAssignment> TileAssignment::TransposeIota(absl::Span<const int64_t> perm) const {
  std::vector<int64_t> new_dims;
  for (int64_t p : perm) new_dims.push_back(dims_[p]);
  std::optional<std::vector<IotaFactor>> factors = RefineIota(*this);
  if (!factors.has_value()) {
    return ToExplicit().Transpose(perm);
  }
  // Number the factors reshape-dim-major: that order is the refined reshape dims.
  std::vector<int64_t> new_index(factors->size());
  std::vector<int64_t> new_reshape;
  for (int64_t r = 0; r < static_cast<int64_t>(reshape_dims_.size()); ++r) {
    for (size_t f = 0; f < factors->size(); ++f) {
      if ((*factors)[f].reshape_dim != r) continue;
      new_index[f] = static_cast<int64_t>(new_reshape.size());
      new_reshape.push_back((*factors)[f].size);
    }
  }
  // The new traversal visits the old tile dims in `perm` order.
  std::vector<int64_t> new_perm;
  for (int64_t p : perm) {
    for (size_t f = 0; f < factors->size(); ++f) {
      if ((*factors)[f].tile_dim == p) new_perm.push_back(new_index[f]);
    }
  }
  if (new_reshape.empty()) return Iota(new_dims);
  return Iota(new_dims, new_reshape, new_perm);
}

absl::StatusOr<TileAssignment> TileAssignment::Transpose(absl::Span<const int64_t> perm) const {
  absl::Status status = CheckPermutation(perm, rank(), "tile assignment transpose permutation");
  if (!status.ok()) return status;
  bool identity = true;
  for (size_t i = 0; i < perm.size() && identity; ++i) identity = perm[i] == static_cast<int64_t>(i);
  if (identity) return *this;
  std::vector<int64_t> new_dims;
  for (int64_t p : perm) new_dims.push_back(dims_[p]);
  // Dims of size 1 may move anywhere: when the others keep their order, the devices keep
  // their row-major order and the transpose is a reshape.
  int64_t last = -1;
  bool order_kept = true;
  for (size_t i = 0; i < perm.size() && order_kept; ++i) {
    if (dims_[perm[i]] == 1) continue;
    order_kept = perm[i] > last;
    last = perm[i];
  }
  if (order_kept) return Reshape(new_dims);
  if (is_iota()) return TransposeIota(perm);
  const auto strides = Strides(dims_);
  std::vector<int64_t> devices;
  devices.reserve(num_devices_);
  std::vector<int64_t> index(new_dims.size(), 0);
  for (int64_t n = 0; n < num_devices_; ++n) {
    int64_t linear = 0;
    for (size_t i = 0; i < perm.size(); ++i) linear += index[i] * strides[perm[i]];
    devices.push_back((*explicit_devices_)[linear]);
    NextIndex(&index, new_dims);
  }
  return TileAssignment(std::move(new_dims),
                        std::make_shared<const std::vector<int64_t>>(std::move(devices)));
}

absl::StatusOr<TileAssignment> TileAssignment::Reshape(absl::Span<const int64_t> new_dims) const {
  absl::StatusOr<int64_t> n = CheckedProduct(new_dims, "reshaped tile assignment dimensions");
  if (!n.ok()) return n.status();
  if (*n != num_devices_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot reshape tile assignment [", absl::StrJoin(dims_, ","), "] of ", num_devices_,
        " devices to [", absl::StrJoin(new_dims, ","), "] (", *n, " devices)"));
  }
  if (is_iota()) return TileAssignment(new_dims, reshape_dims_, transpose_perm_);
  return TileAssignment(new_dims, explicit_devices_);
}

std::optional<TileAssignment> TileAssignment::ToIota() const {
  if (is_iota()) return *this;
  const std::vector<int64_t>& devices = *explicit_devices_;
  if (num_devices_ == 1) {
    if (devices[0] != 0) return std::nullopt;
    return TileAssignment(dims_, {1}, {0});
  }
  std::vector<StridedAxis> axes = PeelStridedAxes(devices);
  if (axes.empty() || devices[0] != 0) return std::nullopt;
  // Reshape dims are the axes by decreasing stride; they must form a mixed radix.
  std::vector<int64_t> order(axes.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t x, int64_t y) { return axes[x].stride > axes[y].stride; });
  std::vector<int64_t> reshape;
  std::vector<int64_t> reshape_index_of_axis(axes.size());
  int64_t expected_stride = num_devices_;
  for (int64_t axis : order) {
    expected_stride /= axes[axis].size;
    if (axes[axis].stride != expected_stride) return std::nullopt;
    reshape_index_of_axis[axis] = static_cast<int64_t>(reshape.size());
    reshape.push_back(axes[axis].size);
  }
  // Traversal order is major to minor: the axes were found minor first.
  std::vector<int64_t> perm;
  for (int64_t k = static_cast<int64_t>(axes.size()) - 1; k >= 0; --k) {
    perm.push_back(reshape_index_of_axis[k]);
  }
  absl::StatusOr<TileAssignment> candidate = Iota(dims_, reshape, perm);
  if (!candidate.ok() || candidate->Devices() != devices) return std::nullopt;
  return *std::move(candidate);
}

TileAssignment TileAssignment::ToExplicit() const {
  if (!is_iota()) return *this;
  return TileAssignment(dims_, std::make_shared<const std::vector<int64_t>>(Devices()));
}

void TileAssignment::AppendTo(std::string* out) const {
  out->push_back('[');
  absl::StrAppend(out, absl::StrJoin(dims_, ","));
  out->push_back(']');
  if (is_iota()) {
    absl::StrAppend(out, "<=[", absl::StrJoin(reshape_dims_, ","), "]");
    bool identity = true;
    for (size_t i = 0; i < transpose_perm_.size(); ++i) {
      identity = identity && transpose_perm_[i] == static_cast<int64_t>(i);
    }
    if (!identity) absl::StrAppend(out, "T(", absl::StrJoin(transpose_perm_, ","), ")");
    return;
  }
  absl::StrAppend(out, absl::StrJoin(*explicit_devices_, ","));
}

std::string TileAssignment::ToString() const {
  std::string out;
  AppendTo(&out);
  return out;
}

bool operator==(const TileAssignment& a, const TileAssignment& b) {
  if (a.dims_ != b.dims_) return false;
  if (a.is_iota() && b.is_iota() && a.reshape_dims_ == b.reshape_dims_ &&
      a.transpose_perm_ == b.transpose_perm_) {
    return true;
  }
  if (!a.is_iota() && !b.is_iota()) {
    return a.explicit_devices_ == b.explicit_devices_ ||
           *a.explicit_devices_ == *b.explicit_devices_;
  }
  return a.Devices() == b.Devices();
}

}  // namespace hlo
