// Device groups: transpose the grouped dims to the minor end, then view the array as
// [num_groups, group_size]. TileAssignment::Transpose keeps iota forms whenever it can.
#include "hlo/sharding/device_groups.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hlo {

absl::StatusOr<TileAssignment> DeviceGroupsAlongDims(const TileAssignment& ta,
                                                     absl::Span<const int64_t> group_dims) {
  std::vector<bool> grouped(ta.rank(), false);
  int64_t group_size = 1;
  for (int64_t d : group_dims) {
    if (d < 0 || d >= ta.rank() || grouped[d]) {
      return absl::InvalidArgumentError(absl::StrCat("group dims (", absl::StrJoin(group_dims, ","),
                                                     ") must be distinct dims of tile assignment ",
                                                     ta.ToString()));
    }
    grouped[d] = true;
    group_size *= ta.dim(d);
  }
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < ta.rank(); ++d) {
    if (!grouped[d]) perm.push_back(d);
  }
  perm.insert(perm.end(), group_dims.begin(), group_dims.end());
  absl::StatusOr<TileAssignment> transposed = ta.Transpose(perm);
  if (!transposed.ok()) return transposed.status();
  const int64_t dims[] = {ta.num_devices() / group_size, group_size};
  return transposed->Reshape(dims);
}

std::vector<std::vector<int64_t>> GroupLists(const TileAssignment& groups) {
  const std::vector<int64_t> devices = groups.Devices();
  const int64_t size = groups.dim(1);
  std::vector<std::vector<int64_t>> lists;
  lists.reserve(groups.dim(0));
  for (auto it = devices.begin(); it != devices.end(); it += size) {
    lists.emplace_back(it, it + size);
  }
  return lists;
}

}  // namespace hlo
