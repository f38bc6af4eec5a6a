#include "hlo/sharding/manual_conversion.h"

#include <map>
#include <optional>
#include <vector>

#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

// A sharding's data tiles, device by device.
struct DeviceTiles {
  std::vector<int64_t> counts;                    // Tiles along each data dim.
  std::map<int64_t, std::vector<int64_t>> index;  // Device -> its tile's index.
};

// `s`'s tiles of a rank-`rank` array on devices 0..num_devices-1 ({replicated}: one tile).
absl::StatusOr<DeviceTiles> TilesOf(const HloSharding& s, int64_t rank, int64_t num_devices) {
  DeviceTiles tiles;
  tiles.counts.assign(rank, 1);
  if (s.IsReplicated()) {
    for (int64_t d = 0; d < num_devices; ++d) tiles.index[d].assign(rank, 0);
    return tiles;
  }
  if (!s.IsTiled() || s.TiledDataRank() != rank) {
    return absl::InvalidArgumentError(
        StrCat(s.ToStringWithoutMetadata(), " is not a tiling of a rank-", rank, " array"));
  }
  for (int64_t k = 0; k < rank; ++k) tiles.counts[k] = s.tile_assignment().dim(k);
  s.tile_assignment().ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    tiles.index[device].assign(index.begin(), index.begin() + rank);
  });
  if (static_cast<int64_t>(tiles.index.size()) != num_devices) {
    return absl::InvalidArgumentError(StrCat(
        s.ToStringWithoutMetadata(), " does not place the value on all ", num_devices, " devices"));
  }
  return tiles;
}

// Each device's manual group under `groups` (its index along the manual subgroup dim).
absl::StatusOr<std::map<int64_t, int64_t>> ManualGroups(const HloSharding& groups) {
  if (!groups.HasManualSubgroup()) {
    return absl::InvalidArgumentError(
        StrCat(groups.ToStringWithoutMetadata(), " has no manual subgroup"));
  }
  std::map<int64_t, int64_t> group;
  const int64_t manual = groups.SubgroupManualDim();
  groups.tile_assignment().ForEach(
      [&](absl::Span<const int64_t> index, int64_t device) { group[device] = index[manual]; });
  return group;
}

// Each manual group must hold one tile of the structure: its devices share their tile.
absl::Status CheckGroupsHoldOneTile(const std::map<int64_t, int64_t>& group,
                                    const DeviceTiles& structure) {
  std::map<int64_t, const std::vector<int64_t>*> tile_of_group;
  for (const auto& [device, g] : group) {
    auto it = structure.index.find(device);
    if (it == structure.index.end()) {
      return absl::InvalidArgumentError(StrCat("device ", device, " has no tile of the value"));
    }
    auto [first, inserted] = tile_of_group.emplace(g, &it->second);
    if (!inserted && *first->second != it->second) {
      return absl::InvalidArgumentError(
          StrCat("the devices of manual group ", g, " hold different tiles of the global value"));
    }
  }
  return absl::OkStatus();
}

// Splitting the structure's tiles of dim k `split[k]` ways further, into `total[k]` tiles in
// all, must cut each into whole tiles of the finer split: a structure tile (a manual value,
// padded to s = ceil(n / (total / split))) split `split` ways gives pieces of
// g = ceil(n / total), and every structure tile but a lone one starts on a piece boundary
// (s % g == 0); so padding only ever ends the last tile.
absl::Status CheckEven(const Shape& shape, const std::vector<int64_t>& total,
                       const std::vector<int64_t>& split) {
  auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  for (size_t k = 0; k < split.size(); ++k) {
    if (split[k] <= 1) continue;
    const int64_t n = shape.dimensions(k), coarse = total[k] / split[k];
    const int64_t s = ceil_div(n, coarse), g = ceil_div(n, total[k]);
    if (ceil_div(s, split[k]) != g || (coarse > 1 && s % g != 0)) {
      return absl::InvalidArgumentError(StrCat("the ", coarse, " tiles of dimension ", k, " of ",
                                               shape.ToString(false), " are not each ", split[k],
                                               " of its ", total[k], " tiles"));
    }
  }
  return absl::OkStatus();
}

// The sharding with tiles `counts` (then `manual_count` manual groups, when there is a `group`
// map) that puts each device at its `index` (and its group); replicas fill the last dim.
absl::StatusOr<HloSharding> Build(const std::vector<int64_t>& counts,
                                  const std::map<int64_t, std::vector<int64_t>>& index,
                                  const std::map<int64_t, int64_t>* group, int64_t manual_count) {
  int64_t tiles = 1;
  for (int64_t c : counts) tiles *= c;
  if (group != nullptr) tiles *= manual_count;
  std::vector<std::vector<int64_t>> holders(tiles);
  for (const auto& [device, at] : index) {
    int64_t linear = 0;
    for (size_t k = 0; k < counts.size(); ++k) linear = linear * counts[k] + at[k];
    if (group != nullptr) linear = linear * manual_count + group->at(device);
    holders[linear].push_back(device);
  }
  const int64_t replicas = static_cast<int64_t>(index.size()) / tiles;
  std::vector<int64_t> devices;
  for (const std::vector<int64_t>& tile : holders) {
    if (static_cast<int64_t>(tile.size()) != replicas) {
      return absl::InvalidArgumentError("the tiles would not be held by equally many devices");
    }
    devices.insert(devices.end(), tile.begin(), tile.end());
  }
  std::vector<int64_t> dims = counts;
  std::vector<OpShardingType> types;
  if (group != nullptr) {
    dims.push_back(manual_count);
    types.push_back(OpShardingType::kManual);
  }
  if (replicas > 1) {
    dims.push_back(replicas);
    types.push_back(OpShardingType::kReplicated);
  }
  ASSIGN_OR_RETURN(TileAssignment ta, TileAssignment::Explicit(dims, devices));
  if (std::optional<TileAssignment> iota = ta.ToIota()) ta = *std::move(iota);
  if (tiles == 1 && group == nullptr) return HloSharding::Replicate();
  if (types.empty()) return HloSharding::Tile(std::move(ta));
  return HloSharding::Subgroup(std::move(ta), types);
}

// What both maps read: each device's manual group (under `groups`), its tile of `tiled` and
// its tile of `structure`, every group inside one tile of the structure.
struct Sides {
  std::map<int64_t, int64_t> group;
  DeviceTiles tiles;
  DeviceTiles outer;
};

absl::StatusOr<Sides> ReadSides(const HloSharding& tiled, const HloSharding& structure,
                                const HloSharding& groups, int64_t rank) {
  Sides sides;
  ASSIGN_OR_RETURN(sides.group, ManualGroups(groups));
  const int64_t num_devices = static_cast<int64_t>(sides.group.size());
  ASSIGN_OR_RETURN(sides.tiles, TilesOf(tiled, rank, num_devices));
  ASSIGN_OR_RETURN(sides.outer, TilesOf(structure, rank, num_devices));
  RETURN_IF_ERROR(CheckGroupsHoldOneTile(sides.group, sides.outer));
  return sides;
}

}  // namespace

absl::StatusOr<HloSharding> GlobalFromLocal(const HloSharding& local, const HloSharding& structure,
                                            const Shape& global_shape) {
  const int64_t rank = global_shape.rank();
  ASSIGN_OR_RETURN(const Sides sides, ReadSides(local, structure, local, rank));
  const DeviceTiles& inside = sides.tiles;
  const DeviceTiles& outer = sides.outer;
  std::vector<int64_t> counts(rank);
  for (int64_t k = 0; k < rank; ++k) counts[k] = outer.counts[k] * inside.counts[k];
  RETURN_IF_ERROR(CheckEven(global_shape, counts, inside.counts));
  std::map<int64_t, std::vector<int64_t>> index;
  for (const auto& [device, at] : inside.index) {
    std::vector<int64_t>& tile = index[device];
    for (int64_t k = 0; k < rank; ++k) {
      tile.push_back(outer.index.at(device)[k] * inside.counts[k] + at[k]);
    }
  }
  return Build(counts, index, nullptr, 0);
}

absl::StatusOr<HloSharding> LocalFromGlobal(const HloSharding& global, const HloSharding& structure,
                                            const HloSharding& groups, const Shape& global_shape) {
  const int64_t rank = global_shape.rank();
  ASSIGN_OR_RETURN(const Sides sides, ReadSides(global, structure, groups, rank));
  const DeviceTiles& tiles = sides.tiles;
  const DeviceTiles& outer = sides.outer;
  std::vector<int64_t> counts(rank);
  for (int64_t k = 0; k < rank; ++k) {
    if (tiles.counts[k] % outer.counts[k] != 0) {
      return absl::InvalidArgumentError(
          StrCat(global.ToStringWithoutMetadata(), " does not split the tiles of ",
                 structure.ToStringWithoutMetadata(), " along dimension ", k));
    }
    counts[k] = tiles.counts[k] / outer.counts[k];
  }
  RETURN_IF_ERROR(CheckEven(global_shape, tiles.counts, counts));
  std::map<int64_t, std::vector<int64_t>> index;
  for (const auto& [device, at] : tiles.index) {
    std::vector<int64_t>& tile = index[device];
    for (int64_t k = 0; k < rank; ++k) {
      if (at[k] / counts[k] != outer.index.at(device)[k]) {
        return absl::InvalidArgumentError(
            StrCat("device ", device, "'s tile of ", global.ToStringWithoutMetadata(),
                   " lies outside its tile of ", structure.ToStringWithoutMetadata()));
      }
      tile.push_back(at[k] % counts[k]);
    }
  }
  int64_t manual_count = groups.tile_assignment().dim(groups.SubgroupManualDim());
  return Build(counts, index, &sides.group, manual_count);
}

absl::StatusOr<HloSharding> StructureFromGlobal(const HloSharding& global, const HloSharding& local,
                                                const Shape& global_shape) {
  const int64_t rank = global_shape.rank();
  ASSIGN_OR_RETURN(const Sides sides, ReadSides(global, HloSharding::Replicate(), local, rank));
  const DeviceTiles& tiles = sides.tiles;
  ASSIGN_OR_RETURN(const DeviceTiles inside,
                   TilesOf(local, rank, static_cast<int64_t>(sides.group.size())));
  std::vector<int64_t> counts(rank);
  for (int64_t k = 0; k < rank; ++k) {
    if (tiles.counts[k] % inside.counts[k] != 0) {
      return absl::InvalidArgumentError(
          StrCat(global.ToStringWithoutMetadata(), " does not split dimension ", k, " as ",
                 local.ToStringWithoutMetadata(), " splits the manual values"));
    }
    counts[k] = tiles.counts[k] / inside.counts[k];
  }
  RETURN_IF_ERROR(CheckEven(global_shape, tiles.counts, inside.counts));
  std::map<int64_t, std::vector<int64_t>> index;
  for (const auto& [device, at] : tiles.index) {
    std::vector<int64_t>& tile = index[device];
    for (int64_t k = 0; k < rank; ++k) {
      if (at[k] % inside.counts[k] != inside.index.at(device)[k]) {
        return absl::InvalidArgumentError(
            StrCat("device ", device, "'s tile of ", global.ToStringWithoutMetadata(),
                   " is not its tile of ", local.ToStringWithoutMetadata()));
      }
      tile.push_back(at[k] / inside.counts[k]);
    }
  }
  ASSIGN_OR_RETURN(HloSharding structure, Build(counts, index, nullptr, 0));
  // Each manual group must hold one tile of it.
  ASSIGN_OR_RETURN(const DeviceTiles outer,
                   TilesOf(structure, rank, static_cast<int64_t>(sides.group.size())));
  RETURN_IF_ERROR(CheckGroupsHoldOneTile(sides.group, outer));
  return structure;
}

}  // namespace hlo
