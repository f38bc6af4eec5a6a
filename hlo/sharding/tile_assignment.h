// The array of device ids behind a tiled sharding.
//
// A TileAssignment is an N-dimensional array whose element at a tile index is the device that
// holds that tile. It is stored in one of two forms and prints back in the form it was given:
//
//   - iota:     `[4,2]<=[8]`, `[3,4]<=[2,2,3]T(2,1,0)`: the devices 0..N-1 laid out in row-major
//               order over `reshape_dims`, transposed by `transpose_perm`, then reshaped to
//               `dims`. Iota forms are kept canonical (no size-1 reshape dims, no two reshape
//               dims that stay adjacent and in order under the permutation), as XLA does.
//   - explicit: `[2,1,2]2,3,5,7`: the devices listed in row-major order.
//
// Equality and hashing are by meaning: an explicit list and an iota form of the same array
// compare and hash equal. Copies are cheap (explicit lists are shared, immutable).
#ifndef HLO_SHARDING_TILE_ASSIGNMENT_H_
#define HLO_SHARDING_TILE_ASSIGNMENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace hlo {

class TileAssignment {
 public:
  // The largest number of devices a tile assignment may hold.
  static constexpr int64_t kMaxDevices = int64_t{1} << 16;

  // `[dims]<=[N]` where N is the product of `dims`.
  // Fails when `dims` is empty, has an entry below 1, or its product exceeds kMaxDevices.
  static absl::StatusOr<TileAssignment> Iota(absl::Span<const int64_t> dims);

  // `[dims]<=[reshape_dims]T(transpose_perm)`. An empty `transpose_perm` means the identity.
  // Fails unless the products of `dims` and `reshape_dims` are equal, every size is at least 1,
  // and `transpose_perm` is a permutation of 0..reshape_dims.size()-1.
  static absl::StatusOr<TileAssignment> Iota(absl::Span<const int64_t> dims,
                                             absl::Span<const int64_t> reshape_dims,
                                             absl::Span<const int64_t> transpose_perm);

  // `[dims]d0,d1,...`: `devices` in row-major order over `dims`.
  // Fails unless the product of `dims` equals `devices.size()` and the devices are distinct and
  // non-negative.
  static absl::StatusOr<TileAssignment> Explicit(absl::Span<const int64_t> dims,
                                                 absl::Span<const int64_t> devices);

  // The single-device assignment `[1]<=[1]`.
  TileAssignment();

  // Whether this assignment is in iota form.
  bool is_iota() const { return explicit_devices_ == nullptr; }
  // The shape of the array.
  absl::Span<const int64_t> dims() const { return dims_; }
  // The number of array dimensions (at least 1).
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  // Size of dimension `i`. REQUIRES: 0 <= i < rank().
  int64_t dim(int64_t i) const { return dims_[i]; }
  // The number of devices (the product of dims()).
  int64_t num_devices() const { return num_devices_; }
  // The iota reshape dims; empty for an explicit assignment.
  absl::Span<const int64_t> iota_reshape_dims() const { return reshape_dims_; }
  // The iota transpose permutation (same length as iota_reshape_dims()); empty when explicit.
  absl::Span<const int64_t> iota_transpose_perm() const { return transpose_perm_; }

  // The device at `tile_index`. REQUIRES: tile_index.size() == rank(), each entry in range.
  int64_t device(absl::Span<const int64_t> tile_index) const;
  // The device at row-major position `linear_index`. REQUIRES: 0 <= linear_index < num_devices().
  int64_t device_at(int64_t linear_index) const;
  // All devices in row-major order.
  std::vector<int64_t> Devices() const;
  // The tile index holding `device`, or nullopt when the device is not in the array.
  std::optional<std::vector<int64_t>> TileIndexOf(int64_t device) const;
  // The largest device id in the array.
  int64_t MaxDevice() const;
  // Calls `f(tile_index, device)` for every element, in row-major order.
  void ForEach(absl::FunctionRef<void(absl::Span<const int64_t>, int64_t)> f) const;

  // The array with its dimensions permuted: result dim i is this dim `perm[i]`. An iota form
  // stays iota whenever the result is expressible as one, otherwise it becomes explicit.
  // Fails unless `perm` is a permutation of 0..rank()-1.
  absl::StatusOr<TileAssignment> Transpose(absl::Span<const int64_t> perm) const;
  // The same devices in the same row-major order, viewed with shape `new_dims`.
  // Fails unless the product of `new_dims` equals num_devices().
  absl::StatusOr<TileAssignment> Reshape(absl::Span<const int64_t> new_dims) const;
  // The canonical iota form of this array, or nullopt when it has none (the devices are not
  // 0..N-1 arranged as a transposed iota). Returns *this when already iota.
  std::optional<TileAssignment> ToIota() const;
  // The same array in explicit form.
  TileAssignment ToExplicit() const;

  // `[dims]<=[reshape]` / `[dims]<=[reshape]T(perm)` / `[dims]d0,d1,...`.
  std::string ToString() const;
  void AppendTo(std::string* out) const;

  friend bool operator==(const TileAssignment& a, const TileAssignment& b);
  friend bool operator!=(const TileAssignment& a, const TileAssignment& b) { return !(a == b); }

  // Hashes the dims and the first kHashedDevices devices in row-major order, so that equal
  // arrays in iota and explicit form hash alike, without walking a large mesh (arrays that
  // differ only further on are told apart by operator==).
  static constexpr int64_t kHashedDevices = 16;
  template <typename H>
  friend H AbslHashValue(H h, const TileAssignment& t) {
    h = H::combine_contiguous(std::move(h), t.dims_.data(), t.dims_.size());
    const int64_t n = t.num_devices_ < kHashedDevices ? t.num_devices_ : kHashedDevices;
    for (int64_t i = 0; i < n; ++i) {
      h = H::combine(std::move(h),
                     t.is_iota() ? t.IotaDeviceAt(i) : (*t.explicit_devices_)[i]);
    }
    return h;
  }

 private:
  // Dimension lists are short (rarely over 6 entries): kept inline, so copying a sharding does
  // not allocate.
  using DimVector = absl::InlinedVector<int64_t, 6>;

  TileAssignment(absl::Span<const int64_t> dims, absl::Span<const int64_t> reshape_dims,
                 absl::Span<const int64_t> transpose_perm);
  TileAssignment(absl::Span<const int64_t> dims,
                 std::shared_ptr<const std::vector<int64_t>> devices);
  // Calls `f` with an iota assignment's devices in row-major order. REQUIRES: is_iota().
  void ForEachIotaDevice(absl::FunctionRef<void(int64_t)> f) const;

  // For an iota form: the device at position `linear_index` of the transposed iota.
  int64_t IotaDeviceAt(int64_t linear_index) const;
  absl::StatusOr<TileAssignment> TransposeIota(absl::Span<const int64_t> perm) const;

  DimVector dims_;
  int64_t num_devices_ = 1;
  // Iota form (when explicit_devices_ is null).
  DimVector reshape_dims_;
  DimVector transpose_perm_;
  // Explicit form.
  std::shared_ptr<const std::vector<int64_t>> explicit_devices_;
};

// One factor of the common refinement of an iota assignment's reshape dims and its tile dims:
// a run of `size` consecutive digits that belongs to reshape dim `reshape_dim` and to tile dim
// `tile_dim`. Within one reshape dim (and within one tile dim) factors are major to minor.
struct IotaFactor {
  int64_t size;
  int64_t reshape_dim;
  int64_t tile_dim;
};

// The factors of an iota `ta` in row-major order over its tile dims (size-1 dims omitted), or
// nullopt when `ta` is explicit or a tile dim cuts a reshape dim at a non-dividing point (for
// example `[4,3]<=[6,2]T(1,0)`: no factor of 6 ends where tile dim 0 does).
std::optional<std::vector<IotaFactor>> RefineIota(const TileAssignment& ta);

}  // namespace hlo

#endif  // HLO_SHARDING_TILE_ASSIGNMENT_H_
