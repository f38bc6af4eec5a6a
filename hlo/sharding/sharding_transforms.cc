// Sharding transforms. All of them work on the tile assignment and rebuild the sharding with
// the validating factories, so results come out canonical.
//
// Reshape splits each tiled source dim of size s into k tiles into two factors, [k tiled,
// s/k untiled] (k must divide s unless the dim maps 1:1 onto a target dim of equal size), then
// pours these factors, major first, into the target dims of the same group (a minimal run of
// source and target dims with equal products). A target dim is tileable iff its tiled factors
// come before its untiled ones; its tile count is their product. The tiled factors keep their
// order, so the new tile assignment is the old one reshaped.
//   f32[4,6] {devices=[2,3]<=[6]} -> f32[2,2,6]: factors [2t,2][3t,2] -> dims [2t][2][3t,2]
//   => {devices=[2,1,3]<=[6]}
//
// Partial replication transposes the replicated dims next to the replication subgroup and
// merges them into it. Merge maps each device to its tile in both inputs and regroups.
#include "hlo/sharding/sharding_transforms.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/status_macros.h"

namespace hlo {
namespace {

// A tiled sharding like `like` (same subgroup kinds and metadata) over `ta`.
absl::StatusOr<HloSharding> RebuildTiled(const HloSharding& like, TileAssignment ta) {
  if (like.replicate_on_last_tile_dim())
    return HloSharding::PartialTile(std::move(ta), like.metadata());
  if (!like.subgroup_types().empty()) {
    ASSIGN_OR_RETURN(HloSharding rebuilt,
                     HloSharding::Subgroup(std::move(ta), like.subgroup_types(), like.metadata()));
    return rebuilt.WithReductionOpOf(like);
  }
  return HloSharding::Tile(std::move(ta), like.metadata());
}

absl::Status NotForTuples(const HloSharding& sharding, const char* what) {
  return absl::InvalidArgumentError(absl::StrCat(what, " of tuple sharding ",
                                                 sharding.ToStringWithoutMetadata(),
                                                 " is not defined; apply it per element"));
}

// One factor of a reshape group (see the file comment).
struct Factor {
  int64_t size;
  bool tiled;
  int64_t source_dim;
};

// Appends an untiled factor, merged into an untiled one before it (adjacent untiled factors
// are one contiguous run of elements, which any target dim may cut).
void PushUntiled(std::deque<Factor>& factors, int64_t size, int64_t source_dim) {
  if (size == 1) return;
  if (!factors.empty() && !factors.back().tiled) {
    factors.back().size *= size;
  } else {
    factors.push_back({size, false, source_dim});
  }
}

// The source dim to replicate when group [src_begin, src_end) fails at `failed`: that factor's
// dim when it is tiled, else the group's minor-most tiled dim.
int64_t Blame(const Factor& failed, absl::Span<const int64_t> tiles, int64_t src_begin,
              int64_t src_end) {
  if (failed.tiled) return failed.source_dim;
  for (int64_t k = src_end - 1; k >= src_begin; --k) {
    if (tiles[k] > 1) return k;
  }
  return -1;
}

// Tile counts of target dims [dst_begin, dst_end) from source dims [src_begin, src_end), whose
// sizes have equal products. On failure `*blame` is the source dim whose tiles are at fault.
absl::Status ReshapeGroup(absl::Span<const int64_t> src, absl::Span<const int64_t> tiles,
                          int64_t src_begin, int64_t src_end, absl::Span<const int64_t> dst,
                          int64_t dst_begin, int64_t dst_end, std::vector<int64_t>* new_tiles,
                          int64_t* blame) {
  std::deque<Factor> factors;
  for (int64_t k = src_begin; k < src_end; ++k) {
    if (tiles[k] == 1) {
      PushUntiled(factors, src[k], k);
      continue;
    }
    if (src[k] % tiles[k] != 0) {
      *blame = k;
      return absl::InvalidArgumentError(
          absl::StrCat("source dimension ", k, " (size ", src[k], ") is split ", tiles[k],
                       " ways unevenly, and the reshape splits or merges it"));
    }
    factors.push_back({tiles[k], true, k});
    PushUntiled(factors, src[k] / tiles[k], k);
  }
  for (int64_t j = dst_begin; j < dst_end; ++j) {
    int64_t rem = dst[j];
    int64_t count = 1;
    bool seen_untiled = false;
    while (rem > 1) {
      Factor& f = factors.front();
      const int64_t piece = std::min(f.size, rem);
      if (std::max(f.size, rem) % piece != 0) {
        *blame = Blame(f, tiles, src_begin, src_end);
        return absl::InvalidArgumentError(
            absl::StrCat("target dimension ", j, " (size ", dst[j], ") cuts source dimension ",
                         f.source_dim, " (size ", src[f.source_dim], ", ", tiles[f.source_dim],
                         " tiles) at a point that is not a tile boundary"));
      }
      if (f.tiled && seen_untiled) {
        *blame = f.source_dim;
        return absl::InvalidArgumentError(absl::StrCat(
            "the tiles of source dimension ", f.source_dim, " would fall on a minor part of ",
            "target dimension ", j, " (size ", dst[j], "), which no tiling expresses"));
      }
      if (f.tiled) count *= piece;
      seen_untiled = seen_untiled || !f.tiled;
      rem /= piece;
      f.size /= piece;
      if (f.size == 1) factors.pop_front();
    }
    (*new_tiles)[j] = count;
  }
  return absl::OkStatus();
}

// Tile counts of the target dims of a reshape from `src` (tiled `tiles` ways) to `dst`. On
// failure `*blame` is the source dim whose tiles are at fault (-1 if none is).
absl::StatusOr<std::vector<int64_t>> ReshapeTileCounts(absl::Span<const int64_t> src,
                                                       absl::Span<const int64_t> tiles,
                                                       absl::Span<const int64_t> dst,
                                                       int64_t* blame) {
  const int64_t n = static_cast<int64_t>(src.size());
  const int64_t m = static_cast<int64_t>(dst.size());
  std::vector<int64_t> new_tiles(m, 1);
  int64_t i = 0;
  int64_t j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && src[i] == dst[j]) {
      new_tiles[j++] = tiles[i++];
    } else if (i < n && src[i] == 1) {
      if (tiles[i] != 1) {
        *blame = i;
        return absl::InvalidArgumentError(absl::StrCat("source dimension ", i,
                                                       " has size 1 but is split ", tiles[i],
                                                       " ways, and the reshape removes it"));
      }
      ++i;
    } else if (j < m && dst[j] == 1) {
      ++j;
    } else {
      if (i >= n || j >= m) return absl::InternalError("reshape dimension products differ");
      int64_t i2 = i + 1;
      int64_t j2 = j + 1;
      int64_t ps = src[i];
      int64_t pd = dst[j];
      while (ps != pd) {
        if (ps < pd && i2 < n) {
          ps *= src[i2++];
        } else if (ps > pd && j2 < m) {
          pd *= dst[j2++];
        } else {
          return absl::InternalError("reshape dimension products differ");
        }
      }
      absl::Status status = ReshapeGroup(src, tiles, i, i2, dst, j, j2, &new_tiles, blame);
      if (!status.ok()) return status;
      i = i2;
      j = j2;
    }
  }
  return new_tiles;
}

// Each device's data tile index under a tiled sharding.
absl::flat_hash_map<int64_t, std::vector<int64_t>> DataIndexByDevice(const HloSharding& s) {
  absl::flat_hash_map<int64_t, std::vector<int64_t>> result;
  const int64_t data_rank = s.TiledDataRank();
  s.tile_assignment().ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    result[device].assign(index.begin(), index.begin() + data_rank);
  });
  return result;
}

absl::Status MergeError(const HloSharding& a, const HloSharding& b, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("cannot merge ", a.ToStringWithoutMetadata(),
                                                 " and ", b.ToStringWithoutMetadata(), ": ", why));
}

// The merged data tile counts of two tiled shardings of equal data rank.
absl::StatusOr<std::vector<int64_t>> MergedTileCounts(const HloSharding& a, const HloSharding& b) {
  std::vector<int64_t> counts(a.TiledDataRank());
  for (int64_t i = 0; i < a.TiledDataRank(); ++i) {
    const int64_t ka = a.tile_assignment().dim(i);
    const int64_t kb = b.tile_assignment().dim(i);
    if (ka > 1 && kb > 1 && ka != kb) {
      return MergeError(a, b,
                        absl::StrCat("dimension ", i, " is split ", ka, " ways in one and ", kb,
                                     " ways in the other"));
    }
    counts[i] = std::max(ka, kb);
  }
  return counts;
}

absl::StatusOr<HloSharding> MergeTiled(const HloSharding& a, const HloSharding& b) {
  if (a.SubgroupManualDim() >= 0 || b.SubgroupManualDim() >= 0 ||
      (a.NumSubgroupDims() > 0 && a.SubgroupReplicationDim() < 0) ||
      (b.NumSubgroupDims() > 0 && b.SubgroupReplicationDim() < 0) || a.NumSubgroupDims() > 1 ||
      b.NumSubgroupDims() > 1) {
    return MergeError(a, b, "only tiled and partially replicated shardings merge");
  }
  if (a.TiledDataRank() != b.TiledDataRank()) return MergeError(a, b, "ranks differ");
  absl::StatusOr<std::vector<int64_t>> counts = MergedTileCounts(a, b);
  if (!counts.ok()) return counts.status();
  const auto index_a = DataIndexByDevice(a);
  const auto index_b = DataIndexByDevice(b);
  int64_t num_tiles = 1;
  for (int64_t c : *counts) num_tiles *= c;
  const int64_t num_devices = a.tile_assignment().num_devices();
  if (num_devices != b.tile_assignment().num_devices() || num_devices % num_tiles != 0) {
    return MergeError(a, b, "they use different numbers of devices");
  }
  const int64_t per_tile = num_devices / num_tiles;
  std::vector<std::vector<int64_t>> tiles(num_tiles);
  // Visit devices in increasing order: hash-map order varies between runs, and both the result's
  // device order and the error message must not.
  std::vector<int64_t> devices_a;
  devices_a.reserve(index_a.size());
  for (const auto& entry : index_a) devices_a.push_back(entry.first);
  std::sort(devices_a.begin(), devices_a.end());
  for (int64_t device : devices_a) {
    const auto& ia = index_a.at(device);
    auto it = index_b.find(device);
    if (it == index_b.end())
      return MergeError(a, b, absl::StrCat("device ", device, " is only in one"));
    int64_t linear = 0;
    for (size_t i = 0; i < ia.size(); ++i) {
      const bool in_a = a.tile_assignment().dim(i) > 1;
      const bool in_b = b.tile_assignment().dim(i) > 1;
      if (in_a && in_b && ia[i] != it->second[i]) {
        return MergeError(a, b,
                          absl::StrCat("device ", device, " is in tile ", ia[i], " of dimension ",
                                       i, " in one and tile ", it->second[i], " in the other"));
      }
      linear = linear * (*counts)[i] + (in_a ? ia[i] : it->second[i]);
    }
    tiles[linear].push_back(device);
  }
  std::vector<int64_t> devices;
  for (std::vector<int64_t>& tile : tiles) {
    if (static_cast<int64_t>(tile.size()) != per_tile) {
      return MergeError(a, b, "the merged tiles are not held by equally many devices");
    }
    std::sort(tile.begin(), tile.end());
    devices.insert(devices.end(), tile.begin(), tile.end());
  }
  std::vector<int64_t> dims = *counts;
  dims.push_back(per_tile);
  absl::StatusOr<TileAssignment> ta = TileAssignment::Explicit(dims, devices);
  if (!ta.ok()) return ta.status();
  if (a.tile_assignment().is_iota() && b.tile_assignment().is_iota()) {
    if (std::optional<TileAssignment> iota = ta->ToIota()) ta = *std::move(iota);
  }
  return HloSharding::PartialTile(*std::move(ta), a.metadata());
}

// The sets of devices that share a manual index, sorted.
std::vector<std::vector<int64_t>> ManualGroupSets(const HloSharding& s) {
  std::map<int64_t, std::vector<int64_t>> by_index;
  const int64_t manual = s.SubgroupManualDim();
  s.tile_assignment().ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    by_index[index[manual]].push_back(device);
  });
  std::vector<std::vector<int64_t>> sets;
  for (auto& [index, devices] : by_index) {
    std::sort(devices.begin(), devices.end());
    sets.push_back(std::move(devices));
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

bool WholeInItsGroups(const HloSharding& s) {
  for (int64_t d = 0; d < s.TiledDataRank(); ++d) {
    if (s.tile_assignment().dim(d) > 1) return false;
  }
  return true;
}

// Two shardings with the same manual groups, one of them whole inside each group: the other.
absl::StatusOr<HloSharding> MergeInManualGroups(const HloSharding& a, const HloSharding& b) {
  if (!a.HasManualSubgroup() || !b.HasManualSubgroup() ||
      ManualGroupSets(a) != ManualGroupSets(b)) {
    return MergeError(a, b, "they are not manual in the same groups");
  }
  if (WholeInItsGroups(a)) return b.WithShardGroup({});
  if (WholeInItsGroups(b)) return a.WithShardGroup({});
  return MergeError(a, b, "both split the values inside their manual groups");
}

}  // namespace

absl::StatusOr<HloSharding> TransposeSharding(const HloSharding& sharding,
                                              absl::Span<const int64_t> perm) {
  if (sharding.IsTuple()) return NotForTuples(sharding, "transpose");
  if (!sharding.IsTiled()) return sharding.WithShardGroup({});
  const int64_t data_rank = sharding.TiledDataRank();
  std::vector<bool> seen(data_rank, false);
  bool ok = static_cast<int64_t>(perm.size()) == data_rank;
  for (int64_t p : perm) {
    ok = ok && p >= 0 && p < data_rank && !seen[p];
    if (ok) seen[p] = true;
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transpose permutation (", absl::StrJoin(perm, ","), ") is not a permutation of the ",
        data_rank, " data dims of ", sharding.ToStringWithoutMetadata()));
  }
  std::vector<int64_t> full(perm.begin(), perm.end());
  for (int64_t d = data_rank; d < sharding.tile_assignment().rank(); ++d) full.push_back(d);
  absl::StatusOr<TileAssignment> ta = sharding.tile_assignment().Transpose(full);
  if (!ta.ok()) return ta.status();
  return RebuildTiled(sharding, *std::move(ta));
}

namespace {

// ReshapeSharding; on failure `*blame` is the source dim whose tiles are at fault (-1 if none).
absl::StatusOr<HloSharding> ReshapeShardingBlaming(const HloSharding& sharding, const Shape& source,
                                                   const Shape& target, int64_t* blame) {
  *blame = -1;
  if (sharding.IsTuple()) return NotForTuples(sharding, "reshape");
  if (!sharding.IsTiled()) return sharding.WithShardGroup({});
  if (!source.IsArray() || !target.IsArray() || source.num_elements() != target.num_elements()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot reshape ", source.ToString(false), " to ", target.ToString(false)));
  }
  if (sharding.TiledDataRank() != source.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("sharding ", sharding.ToStringWithoutMetadata(),
                                                   " does not fit shape ", source.ToString(false)));
  }
  const TileAssignment& ta = sharding.tile_assignment();
  absl::Span<const int64_t> tiles = ta.dims().subspan(0, source.rank());
  if (source.num_elements() == 0 && source.dimensions() != target.dimensions()) {
    return absl::InvalidArgumentError("cannot reshape a sharding across zero-sized dimensions");
  }
  absl::StatusOr<std::vector<int64_t>> new_tiles =
      ReshapeTileCounts(source.dimensions(), tiles, target.dimensions(), blame);
  if (!new_tiles.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sharding ", sharding.ToStringWithoutMetadata(), " of ", source.ToString(false),
        " has no equivalent on ", target.ToString(false), ": ", new_tiles.status().message()));
  }
  std::vector<int64_t> dims = *std::move(new_tiles);
  dims.insert(dims.end(), ta.dims().begin() + source.rank(), ta.dims().end());
  if (dims.empty()) return HloSharding::Replicate(sharding.metadata());
  absl::StatusOr<TileAssignment> reshaped = ta.Reshape(dims);
  if (!reshaped.ok()) return reshaped.status();
  return RebuildTiled(sharding, *std::move(reshaped));
}

}  // namespace

absl::StatusOr<HloSharding> ReshapeSharding(const HloSharding& sharding, const Shape& source,
                                            const Shape& target) {
  int64_t blame = -1;
  return ReshapeShardingBlaming(sharding, source, target, &blame);
}

absl::StatusOr<HloSharding> ReshapeShardingReplicatingUnmapped(const HloSharding& sharding,
                                                               const Shape& source,
                                                               const Shape& target) {
  HloSharding current = sharding;
  int64_t blame = -1;
  absl::StatusOr<HloSharding> result = ReshapeShardingBlaming(current, source, target, &blame);
  // Each retry replicates one more tiled dim, so at most rank retries.
  while (!result.ok() && blame >= 0) {
    absl::StatusOr<HloSharding> fewer = PartiallyReplicate(current, {blame});
    if (!fewer.ok()) return result.status();
    current = *std::move(fewer);
    result = ReshapeShardingBlaming(current, source, target, &blame);
  }
  return result;
}

absl::StatusOr<HloSharding> PartiallyReplicate(const HloSharding& sharding,
                                               absl::Span<const int64_t> dims) {
  if (sharding.IsTuple()) return NotForTuples(sharding, "partial replication");
  if (!sharding.IsTiled()) return sharding.WithShardGroup({});
  const TileAssignment& ta = sharding.tile_assignment();
  const int64_t data_rank = sharding.TiledDataRank();
  std::vector<bool> moved(data_rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= data_rank || moved[d]) {
      return absl::InvalidArgumentError(absl::StrCat("dims (", absl::StrJoin(dims, ","),
                                                     ") are not distinct data dims of ",
                                                     sharding.ToStringWithoutMetadata()));
    }
    moved[d] = true;
  }
  // New layout: data dims (moved ones become 1), other subgroups, then one replicated dim.
  std::vector<int64_t> perm;
  std::vector<int64_t> new_dims;
  for (int64_t d = 0; d < data_rank; ++d) {
    if (!moved[d]) perm.push_back(d);
    new_dims.push_back(moved[d] ? 1 : ta.dim(d));
  }
  std::vector<OpShardingType> types;
  const int64_t replication_dim = sharding.SubgroupReplicationDim();
  for (int64_t d = data_rank; d < ta.rank(); ++d) {
    if (d == replication_dim) continue;
    perm.push_back(d);
    new_dims.push_back(ta.dim(d));
    types.push_back(sharding.subgroup_types()[d - data_rank]);
  }
  int64_t replicas = 1;
  for (int64_t d = 0; d < data_rank; ++d) {
    if (!moved[d]) continue;
    perm.push_back(d);
    replicas *= ta.dim(d);
  }
  if (replication_dim >= 0) {
    perm.push_back(replication_dim);
    replicas *= ta.dim(replication_dim);
  }
  new_dims.push_back(replicas);
  types.push_back(OpShardingType::kReplicated);
  absl::StatusOr<TileAssignment> transposed = ta.Transpose(perm);
  if (!transposed.ok()) return transposed.status();
  absl::StatusOr<TileAssignment> reshaped = transposed->Reshape(new_dims);
  if (!reshaped.ok()) return reshaped.status();
  ASSIGN_OR_RETURN(HloSharding rebuilt,
                   HloSharding::Subgroup(*std::move(reshaped), types, sharding.metadata()));
  return rebuilt.WithReductionOpOf(sharding);
}

absl::StatusOr<HloSharding> WithTileAssignment(const HloSharding& like, TileAssignment tiles) {
  std::vector<OpShardingType> types = like.subgroup_types();
  if (like.replicate_on_last_tile_dim()) types = {OpShardingType::kReplicated};
  ASSIGN_OR_RETURN(HloSharding rebuilt,
                   HloSharding::Subgroup(std::move(tiles), types, like.metadata()));
  return rebuilt.WithReductionOpOf(like);
}

absl::StatusOr<HloSharding> MirrorTiles(const HloSharding& sharding,
                                        const std::vector<int64_t>& dims) {
  if (!sharding.IsTiled()) return sharding;
  const TileAssignment& ta = sharding.tile_assignment();
  bool moves = false;
  for (int64_t d : dims) {
    if (d < 0 || d >= sharding.TiledDataRank()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot mirror dimension ", d, " of ", sharding.ToString()));
    }
    moves = moves || ta.dim(d) > 1;
  }
  if (!moves) return sharding;
  std::vector<int64_t> devices;
  devices.reserve(ta.num_devices());
  ta.ForEach([&](absl::Span<const int64_t> index, int64_t) {
    std::vector<int64_t> mirrored(index.begin(), index.end());
    for (int64_t d : dims) mirrored[d] = ta.dim(d) - 1 - index[d];
    devices.push_back(ta.device(mirrored));
  });
  const std::vector<int64_t> shape(ta.dims().begin(), ta.dims().end());
  ASSIGN_OR_RETURN(TileAssignment out, TileAssignment::Explicit(shape, devices));
  if (std::optional<TileAssignment> iota = out.ToIota()) out = *std::move(iota);
  return WithTileAssignment(sharding, std::move(out));
}

absl::StatusOr<HloSharding> MoveTileDim(const HloSharding& sharding, int64_t from, int64_t to) {
  if (sharding.IsTuple()) return NotForTuples(sharding, "moving a tile dim");
  const int64_t data_rank = sharding.IsTiled() ? sharding.TiledDataRank() : 0;
  if (from < 0 || to < 0 || from >= data_rank || to >= data_rank || from == to) {
    return absl::InvalidArgumentError(absl::StrCat("cannot move the tiles of dim ", from,
                                                   " into dim ", to, " of ",
                                                   sharding.ToStringWithoutMetadata()));
  }
  const TileAssignment& ta = sharding.tile_assignment();
  // Transpose `from` to just after `to`; merging the two is then a reshape.
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < ta.rank(); ++d) {
    if (d == from) continue;
    perm.push_back(d);
    if (d == to) perm.push_back(from);
  }
  std::vector<int64_t> new_dims(ta.dims().begin(), ta.dims().end());
  new_dims[to] *= new_dims[from];
  new_dims[from] = 1;
  absl::StatusOr<TileAssignment> transposed = ta.Transpose(perm);
  if (!transposed.ok()) return transposed.status();
  absl::StatusOr<TileAssignment> reshaped = transposed->Reshape(new_dims);
  if (!reshaped.ok()) return reshaped.status();
  return WithTileAssignment(sharding, *std::move(reshaped));
}

absl::StatusOr<HloSharding> SplitAmongGroups(const HloSharding& held, int64_t rank, int64_t dim,
                                             const std::vector<std::vector<int64_t>>& groups) {
  auto fail = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("cannot split dim ", dim, " of ",
                                                   held.ToStringWithoutMetadata(),
                                                   " among the groups: ", why));
  };
  if (groups.empty() || groups[0].empty()) return fail("no groups");
  if (dim < 0 || dim >= rank) return fail("not a data dim");
  const int64_t k = static_cast<int64_t>(groups[0].size());
  absl::flat_hash_map<int64_t, std::pair<int64_t, int64_t>> where;  // device -> (group, index)
  int64_t devices = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (static_cast<int64_t>(groups[g].size()) != k) return fail("groups differ in size");
    for (size_t i = 0; i < groups[g].size(); ++i) {
      where[groups[g][i]] = {static_cast<int64_t>(g), static_cast<int64_t>(i)};
      ++devices;
    }
  }
  TileAssignment ta;
  if (held.IsReplicated()) {
    std::vector<int64_t> dims(rank, 1);
    dims.push_back(devices);
    ASSIGN_OR_RETURN(ta, TileAssignment::Iota(dims));
  } else if (held.IsTiled() && held.TiledDataRank() == rank &&
             (held.NumSubgroupDims() == 0 ||
              (held.NumSubgroupDims() == 1 && held.SubgroupReplicationDim() == rank))) {
    ta = held.tile_assignment();
  } else {
    return fail("not replicated or tiled with only replication");
  }
  const int64_t replicas = ta.rank() > rank ? ta.dim(rank) : 1;
  if (replicas % k != 0) return fail("the group size does not divide the replication");
  std::vector<int64_t> dims(ta.dims().begin(), ta.dims().begin() + rank);
  dims[dim] *= k;
  if (replicas / k > 1) dims.push_back(replicas / k);
  std::vector<int64_t> placed(ta.num_devices(), -1);
  std::vector<int64_t> group_tile(groups.size(), -1);  // Linear index of each group's tile.
  std::vector<int64_t> group_slot(groups.size(), -1);
  std::vector<int64_t> next_slot(ta.num_devices() / replicas, 0);
  absl::Status status = absl::OkStatus();
  ta.ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    auto it = where.find(device);
    if (!status.ok()) return;
    if (it == where.end()) {
      status = fail(absl::StrCat("device ", device, " is in no group"));
      return;
    }
    const auto [g, i] = it->second;
    int64_t tile = 0;
    for (int64_t d = 0; d < rank; ++d) tile = tile * ta.dim(d) + index[d];
    if (group_tile[g] < 0) {
      group_tile[g] = tile;
      group_slot[g] = next_slot[tile]++;
    } else if (group_tile[g] != tile) {
      status = fail(absl::StrCat("group ", g, " spans two tiles"));
      return;
    }
    int64_t linear = 0;
    for (int64_t d = 0; d < rank; ++d) {
      linear = linear * dims[d] + (d == dim ? index[d] * k + i : index[d]);
    }
    if (replicas / k > 1) linear = linear * (replicas / k) + group_slot[g];
    placed[linear] = device;
  });
  RETURN_IF_ERROR(status);
  ASSIGN_OR_RETURN(TileAssignment split, TileAssignment::Explicit(dims, placed));
  if (std::optional<TileAssignment> iota = split.ToIota()) split = *std::move(iota);
  if (replicas / k > 1) return HloSharding::PartialTile(std::move(split), held.metadata());
  return HloSharding::Tile(std::move(split), held.metadata());
}

absl::StatusOr<HloSharding> MergeShardings(const HloSharding& a, const HloSharding& b) {
  using Kind = HloSharding::Kind;
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_elements().size() != b.tuple_elements().size()) {
      return MergeError(a, b, "a tuple sharding merges only with a tuple of the same size");
    }
    std::vector<HloSharding> elements;
    for (size_t i = 0; i < a.tuple_elements().size(); ++i) {
      absl::StatusOr<HloSharding> e = MergeShardings(a.tuple_elements()[i], b.tuple_elements()[i]);
      if (!e.ok()) return e.status();
      elements.push_back(*std::move(e));
    }
    return HloSharding::Tuple(std::move(elements));
  }
  if (a == b || b.kind() == Kind::kReplicated || b.kind() == Kind::kUnknown) {
    return a.WithShardGroup({});
  }
  if (a.kind() == Kind::kReplicated || a.kind() == Kind::kUnknown) return b.WithShardGroup({});
  if (!a.IsTiled() || !b.IsTiled()) return MergeError(a, b, "they place the value differently");
  if (a.HasManualSubgroup() || b.HasManualSubgroup()) return MergeInManualGroups(a, b);
  return MergeTiled(a, b);
}

absl::StatusOr<HloSharding> WholeInManualSubgroups(const HloSharding& sharding, int64_t rank) {
  if (!sharding.HasManualSubgroup()) {
    return absl::InvalidArgumentError(absl::StrCat(sharding.ToStringWithoutMetadata(),
                                                   " has no manual subgroup"));
  }
  std::vector<int64_t> data_dims(sharding.TiledDataRank());
  for (int64_t d = 0; d < sharding.TiledDataRank(); ++d) data_dims[d] = d;
  absl::StatusOr<HloSharding> whole = PartiallyReplicate(sharding, data_dims);
  if (!whole.ok()) return whole.status();
  const TileAssignment& ta = whole->tile_assignment();
  std::vector<int64_t> dims(rank, 1);
  for (int64_t d = whole->TiledDataRank(); d < ta.rank(); ++d) dims.push_back(ta.dim(d));
  absl::StatusOr<TileAssignment> reshaped = ta.Reshape(dims);
  if (!reshaped.ok()) return reshaped.status();
  return WithTileAssignment(*whole, *std::move(reshaped));
}

absl::StatusOr<HloSharding> ManualConversionSharding(const HloSharding& global,
                                                     const Shape& global_shape,
                                                     const Shape& device_shape,
                                                     absl::Span<const int64_t> open_dims) {
  if (!global.IsTiled() || !global_shape.IsArray() || !device_shape.IsArray() ||
      global_shape.rank() != device_shape.rank()) {
    return global;
  }
  std::vector<int64_t> whole;
  for (int64_t d : open_dims) {
    if (d >= 0 && d < global.TiledDataRank() &&
        device_shape.dimensions(d) == global_shape.dimensions(d) &&
        global.tile_assignment().dim(d) > 1) {
      whole.push_back(d);
    }
  }
  std::sort(whole.begin(), whole.end());
  whole.erase(std::unique(whole.begin(), whole.end()), whole.end());
  if (whole.empty()) return global;
  return PartiallyReplicate(global, whole);
}

absl::StatusOr<HloSharding> OperandShardingFromResult(const HloSharding& result,
                                                      int64_t result_rank,
                                                      const std::vector<int64_t>& dim_map) {
  if (result.IsReplicated() || result.kind() == HloSharding::Kind::kMaximal) return result;
  bool supported = result.IsTiled();
  if (supported) {
    for (OpShardingType t : result.subgroup_types()) {
      supported = supported && t != OpShardingType::kUnreduced;
    }
  }
  if (!supported) {
    return absl::UnimplementedError(
        absl::StrCat("cannot derive an operand sharding from ", result.ToString()));
  }
  const TileAssignment& ta = result.tile_assignment();
  const int64_t data_rank = result.TiledDataRank();
  const int64_t manual_dim = result.SubgroupManualDim();
  // Order the tile dims: mapped result dims in operand order, the manual subgroup (kept as
  // is), then the unmapped data dims and the existing replication dim (together they become
  // the replication subgroup).
  std::vector<int64_t> perm;
  perm.reserve(ta.rank());
  std::vector<bool> used(ta.rank(), false);
  std::vector<int64_t> new_dims;
  new_dims.reserve(dim_map.size() + 2);
  for (int64_t r : dim_map) {
    if (r >= 0) {
      if (r >= result_rank || r >= data_rank || used[r]) {
        return absl::InvalidArgumentError("bad dimension map for operand sharding");
      }
      perm.push_back(r);
      used[r] = true;
      new_dims.push_back(ta.dim(r));
    } else {
      new_dims.push_back(1);
    }
  }
  std::vector<OpShardingType> types;
  if (manual_dim >= 0) {
    perm.push_back(manual_dim);
    used[manual_dim] = true;
    new_dims.push_back(ta.dim(manual_dim));
    types.push_back(OpShardingType::kManual);
  }
  int64_t replication = 1;
  for (int64_t t = 0; t < ta.rank(); ++t) {
    if (!used[t]) {
      perm.push_back(t);
      replication *= ta.dim(t);
    }
  }
  ASSIGN_OR_RETURN(TileAssignment transposed, ta.Transpose(perm));
  if (replication > 1) {
    new_dims.push_back(replication);
    types.push_back(OpShardingType::kReplicated);
  }
  ASSIGN_OR_RETURN(TileAssignment reshaped, transposed.Reshape(new_dims));
  if (types.empty()) {
    const bool all_one =
        std::all_of(new_dims.begin(), new_dims.end(), [](int64_t d) { return d == 1; });
    if (all_one) return HloSharding::Replicate();
    return HloSharding::Tile(std::move(reshaped));
  }
  return HloSharding::Subgroup(std::move(reshaped), types);
}

}  // namespace hlo
