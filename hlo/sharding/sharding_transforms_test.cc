// Transpose, reshape, partial replication and merging of shardings.
#include "hlo/sharding/sharding_transforms.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/sharding/shard_geometry.h"
#include "hlo/sharding/sharding_test_util.h"

namespace hlo {
namespace {

using ::testing::HasSubstr;

HloSharding P(const std::string& text) { return HloSharding::Parse(text).value(); }
Shape F32(std::vector<int64_t> dims) { return Shape::Array(PrimitiveType::kF32, dims); }

std::string Transposed(const std::string& s, std::vector<int64_t> perm) {
  absl::StatusOr<HloSharding> r = TransposeSharding(P(s), perm);
  return r.ok() ? r->ToString() : std::string(r.status().message());
}

std::string Reshaped(const std::string& s, std::vector<int64_t> from, std::vector<int64_t> to) {
  absl::StatusOr<HloSharding> r = ReshapeSharding(P(s), F32(from), F32(to));
  return r.ok() ? r->ToString() : std::string(r.status().message());
}

std::string ReshapedReplicating(const std::string& s, std::vector<int64_t> from,
                                std::vector<int64_t> to) {
  absl::StatusOr<HloSharding> r = ReshapeShardingReplicatingUnmapped(P(s), F32(from), F32(to));
  return r.ok() ? r->ToString() : std::string(r.status().message());
}

std::string Replicated(const std::string& s, std::vector<int64_t> dims) {
  absl::StatusOr<HloSharding> r = PartiallyReplicate(P(s), dims);
  return r.ok() ? r->ToString() : std::string(r.status().message());
}

std::string Merged(const std::string& a, const std::string& b) {
  absl::StatusOr<HloSharding> r = MergeShardings(P(a), P(b));
  return r.ok() ? r->ToString() : std::string(r.status().message());
}

TEST(TransposeShardingTest, PermutesDataDimsOnly) {
  EXPECT_EQ(Transposed("{devices=[4,2]<=[8]}", {1, 0}), "{devices=[2,4]<=[4,2]T(1,0)}");
  EXPECT_EQ(Transposed("{devices=[1,2,3]0,1,2,3,4,5}", {2, 0, 1}), "{devices=[3,1,2]0,3,1,4,2,5}");
  EXPECT_EQ(Transposed("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", {1, 0}),
            "{devices=[1,2,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(Transposed("{devices=[2,2,2]<=[8] last_tile_dims={manual}}", {1, 0}),
            "{devices=[2,2,2]<=[2,2,2]T(1,0,2) last_tile_dims={manual}}");
  EXPECT_EQ(Transposed("{replicated metadata={op_name=\"a\"}}", {1, 0}),
            "{replicated metadata={op_name=\"a\"}}");
  EXPECT_EQ(Transposed("{devices=[2,2]<=[4] shard_as 1}", {1, 0}), "{devices=[2,2]<=[2,2]T(1,0)}");
  EXPECT_THAT(Transposed("{devices=[2,2]<=[4]}", {0, 0}),
              HasSubstr("is not a permutation of the 2 data dims"));
}

// A transform that rebuilds a sharding keeps how its unreduced devices combine (max here):
// losing it would silently turn partial maxima into partial sums.
TEST(TransposeShardingTest, KeepsTheReductionOp) {
  const HloSharding max = P("{mesh['a'=2,'b'=2] [{'a'}, {}], unreduced=max{'b'}}");
  ASSERT_EQ(max.reduction_op(), ReductionOp::kMax);
  EXPECT_EQ(TransposeSharding(max, {1, 0})->reduction_op(), ReductionOp::kMax);
  EXPECT_EQ(ReshapeSharding(max, Shape::Array(PrimitiveType::kF32, {4, 6}),
                            Shape::Array(PrimitiveType::kF32, {4, 2, 3}))
                ->reduction_op(),
            ReductionOp::kMax);
  EXPECT_EQ(PartiallyReplicate(max, {0})->reduction_op(), ReductionOp::kMax);
}

TEST(ReshapeShardingTest, KeepsElementsOnTheirDevices) {
  EXPECT_EQ(Reshaped("{devices=[2,1]<=[2]}", {4, 6}, {24}), "{devices=[2]<=[2]}");
  EXPECT_EQ(Reshaped("{devices=[2,3]<=[6]}", {4, 6}, {2, 2, 6}), "{devices=[2,1,3]<=[6]}");
  EXPECT_EQ(Reshaped("{devices=[4]<=[4]}", {8}, {2, 4}), "{devices=[2,2]<=[4]}");
  EXPECT_EQ(Reshaped("{devices=[2]<=[2]}", {8}, {4, 2}), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(Reshaped("{devices=[2,2]<=[4]}", {2, 6}, {12}), "{devices=[4]<=[4]}");
  EXPECT_EQ(Reshaped("{devices=[1,2]0,1}", {1, 6}, {6}), "{devices=[2]0,1}");
  EXPECT_EQ(Reshaped("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", {4, 3}, {2, 2, 3}),
            "{devices=[2,1,1,2]<=[4] last_tile_dim_replicate}");
  // An uneven dim that maps 1:1 keeps its tiling.
  EXPECT_EQ(Reshaped("{devices=[4,1]<=[4]}", {10, 7}, {10, 7, 1}), "{devices=[4,1,1]<=[4]}");
  EXPECT_EQ(Reshaped("{replicated}", {4}, {2, 2}), "{replicated}");
}

TEST(ReshapeShardingTest, SaysWhyWhenImpossible) {
  EXPECT_THAT(Reshaped("{devices=[1,2]<=[2]}", {4, 6}, {24}),
              HasSubstr("the tiles of source dimension 1 would fall on a minor part of target "
                        "dimension 0"));
  EXPECT_THAT(Reshaped("{devices=[4]<=[4]}", {10}, {2, 5}),
              HasSubstr("source dimension 0 (size 10) is split 4 ways unevenly"));
  EXPECT_THAT(Reshaped("{devices=[4]<=[4]}", {12}, {3, 4}),
              HasSubstr("target dimension 0 (size 3) cuts source dimension 0"));
  EXPECT_THAT(Reshaped("{devices=[2,1]<=[2]}", {1, 4}, {4}),
              HasSubstr("source dimension 0 has size 1 but is split 2 ways"));
}

TEST(PartiallyReplicateTest, MovesTilesIntoTheReplicationGroup) {
  EXPECT_EQ(Replicated("{devices=[2,2]<=[4]}", {1}),
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(Replicated("{devices=[2,2]<=[4]}", {0}),
            "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(Replicated("{devices=[2,2]<=[4]}", {0, 1}), "{replicated}");
  EXPECT_EQ(Replicated("{devices=[2,2,2]<=[8] last_tile_dim_replicate}", {0}),
            "{devices=[1,2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}");
  EXPECT_EQ(Replicated("{devices=[2,2,2]<=[8] last_tile_dims={manual}}", {0}),
            "{devices=[1,2,2,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}");
  EXPECT_EQ(Replicated("{devices=[2,1]3,1}", {1}), "{devices=[2,1]3,1}");
  EXPECT_THAT(Replicated("{devices=[2,2]<=[4]}", {2}), HasSubstr("are not distinct data dims"));
}

std::string WholeInGroups(const std::string& s, int64_t rank) {
  absl::StatusOr<HloSharding> r = WholeInManualSubgroups(P(s), rank);
  return r.ok() ? r->ToString() : std::string(r.status().message());
}

TEST(WholeInManualSubgroupsTest, KeepsTheGroupsAndFoldsTheTilesIntoReplication) {
  // Groups {0,2} and {1,3} (manual index = device % 2), any rank.
  EXPECT_EQ(WholeInGroups("{devices=[2,1,2]<=[4] last_tile_dims={manual}}", 0),
            "{devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual, replicated}}");
  EXPECT_EQ(WholeInGroups("{devices=[2,1,2]<=[4] last_tile_dims={manual}}", 3),
            "{devices=[1,1,1,2,2]<=[2,2]T(1,0) last_tile_dims={manual, replicated}}");
  // Already whole: only the rank changes.
  EXPECT_EQ(WholeInGroups("{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}", 1),
            "{devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}");
  EXPECT_THAT(WholeInGroups("{devices=[2,2]<=[4]}", 2), HasSubstr("has no manual subgroup"));
}

std::string Conversion(const std::string& s, std::vector<int64_t> global,
                       std::vector<int64_t> local, std::vector<int64_t> open) {
  absl::StatusOr<HloSharding> r =
      ManualConversionSharding(P(s), Shape::Array(PrimitiveType::kF32, global),
                               Shape::Array(PrimitiveType::kF32, local), open);
  return r.ok() ? r->ToString() : std::string(r.status().message());
}

TEST(ManualConversionShardingTest, ReplicatesOpenDimsAlongWhichTheManualValueIsWhole) {
  // Dim 0 is the manual split; propagation split open dim 1 too.
  EXPECT_EQ(Conversion("{devices=[2,2,1,2]0,1,4,5,2,3,6,7 last_tile_dim_replicate}", {6, 3, 8},
                       {3, 3, 8}, {1, 2}),
            "{devices=[2,1,1,4]0,1,4,5,2,3,6,7 last_tile_dim_replicate}");
  // A dim the device's value is split along keeps its tiles.
  EXPECT_EQ(
      Conversion("{devices=[2,2,1,2]<=[8] last_tile_dim_replicate}", {6, 4, 8}, {3, 2, 8}, {1, 2}),
      "{devices=[2,2,1,2]<=[8] last_tile_dim_replicate}");
  // A closed dim is never changed, whatever its tiles (the shapes then disagree: an error for
  // the caller to report).
  EXPECT_EQ(
      Conversion("{devices=[2,2,1,2]<=[8] last_tile_dim_replicate}", {6, 3, 8}, {3, 3, 8}, {2}),
      "{devices=[2,2,1,2]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(Conversion("{replicated}", {6, 3, 8}, {6, 3, 8}, {0, 1, 2}), "{replicated}");
}

std::string Moved(const std::string& s, int64_t from, int64_t to) {
  absl::StatusOr<HloSharding> r = MoveTileDim(P(s), from, to);
  return r.ok() ? r->ToString() : std::string(r.status().message());
}

TEST(MoveTileDimTest, MovesTilesIntoTheMinorPartOfAnotherDim) {
  EXPECT_EQ(Moved("{devices=[2,1,4]<=[8]}", 2, 1), "{devices=[2,4,1]<=[8]}");
  // Moving to a major dim: device d of row r lands next to its row mates.
  EXPECT_EQ(Moved("{devices=[2,2]<=[4]}", 0, 1), "{devices=[1,4]<=[2,2]T(1,0)}");
  EXPECT_EQ(Moved("{devices=[1,2,2]<=[4] last_tile_dim_replicate}", 1, 0),
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(Moved("{devices=[4,4,4]<=[64]}", 2, 1), "{devices=[4,16,1]<=[64]}");
  EXPECT_THAT(Moved("{devices=[2,2]<=[4]}", 1, 1), HasSubstr("cannot move"));
  EXPECT_THAT(Moved("{replicated}", 0, 1), HasSubstr("cannot move"));
}

TEST(MirrorTilesTest, ReversesTheDevicesAlongEachDim) {
  auto mirrored = [](const std::string& s, const std::vector<int64_t>& dims) {
    absl::StatusOr<HloSharding> r = MirrorTiles(P(s), dims);
    return r.ok() ? r->ToString() : std::string(r.status().message());
  };
  EXPECT_EQ(mirrored("{devices=[2,4]<=[8]}", {1}), "{devices=[2,4]3,2,1,0,7,6,5,4}");
  EXPECT_EQ(mirrored("{devices=[2,4]3,2,1,0,7,6,5,4}", {1}), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(mirrored("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", {0, 1}),
            "{devices=[2,1,2]2,3,0,1 last_tile_dim_replicate}");
  EXPECT_EQ(mirrored("{devices=[1,4]<=[4]}", {0}), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(mirrored("{replicated}", {0}), "{replicated}");
  EXPECT_THAT(mirrored("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", {2}),
              HasSubstr("cannot mirror"));
}

TEST(SplitAmongGroupsTest, EachGroupScattersItsTile) {
  using Groups = std::vector<std::vector<int64_t>>;
  auto split = [](const std::string& held, int64_t rank, int64_t dim, const Groups& groups) {
    absl::StatusOr<HloSharding> r = SplitAmongGroups(P(held), rank, dim, groups);
    return r.ok() ? r->ToString() : std::string(r.status().message());
  };
  const std::string pairs = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}";
  EXPECT_EQ(split(pairs, 2, 1, {{0, 1}, {2, 3}}), "{devices=[2,2]<=[4]}");
  EXPECT_EQ(split(pairs, 2, 0, {{0, 1}, {2, 3}}), "{devices=[4,1]<=[4]}");
  // A group's order is the blocks' order.
  EXPECT_EQ(split(pairs, 2, 1, {{1, 0}, {3, 2}}), "{devices=[2,2]1,0,3,2}");
  // Two groups share each tile of a replicated value: they take its replica slots in turn.
  EXPECT_EQ(split("{replicated}", 2, 0, {{0, 2}, {1, 3}}),
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  EXPECT_THAT(split(pairs, 2, 1, {{0, 2}, {1, 3}}), HasSubstr("spans two tiles"));
  EXPECT_THAT(split(pairs, 2, 1, {{0, 1, 2, 3}}), HasSubstr("does not divide"));
  EXPECT_THAT(split(pairs, 2, 1, {{0, 1}}), HasSubstr("device 2 is in no group"));
  EXPECT_THAT(split(pairs, 2, 2, {{0, 1}, {2, 3}}), HasSubstr("not a data dim"));
  EXPECT_THAT(split("{devices=[2,2]<=[4] last_tile_dims={manual}}", 1, 0, {{0, 1}, {2, 3}}),
              HasSubstr("only replication"));
}

TEST(OperandShardingFromResultTest, MappedDimsKeepTilesTheRestReplicate) {
  auto operand = [](const std::string& result, int64_t rank, std::vector<int64_t> dim_map) {
    absl::StatusOr<HloSharding> r = OperandShardingFromResult(P(result), rank, dim_map);
    return r.ok() ? r->ToString() : std::string(r.status().message());
  };
  // Transpose: operand dim i is result dim dim_map[i].
  EXPECT_EQ(operand("{devices=[2,4]<=[8]}", 2, {1, 0}), "{devices=[4,2]<=[2,4]T(1,0)}");
  // Broadcast: result dim 0 has no operand dim, so its 2 tiles become replication.
  EXPECT_EQ(operand("{devices=[2,4]<=[8]}", 2, {1, -1}),
            "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(operand("{devices=[2,1]<=[2]}", 2, {1}), "{replicated}");
  // A manual subgroup stays the manual subgroup.
  EXPECT_EQ(operand("{devices=[2,2]<=[4] last_tile_dims={manual}}", 1, {0}),
            "{devices=[2,2]<=[4] last_tile_dims={manual}}");
  EXPECT_EQ(operand("{replicated}", 2, {0}), "{replicated}");
  EXPECT_THAT(operand("{devices=[2,2]<=[4]}", 2, {0, 0}), HasSubstr("bad dimension map"));
  EXPECT_THAT(operand("{devices=[2,2]<=[4] last_tile_dims={unreduced}}", 1, {0}),
              HasSubstr("cannot derive"));
}

TEST(MergeShardingsTest, CombinesCompatiblePartialShardings) {
  EXPECT_EQ(Merged("{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
                   "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"),
            "{devices=[2,2]<=[4]}");
  EXPECT_EQ(Merged("{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
                   "{devices=[1,2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}"),
            "{devices=[2,2,2]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(Merged("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
                   "{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}"),
            "{devices=[2,2]0,1,2,3}");
  EXPECT_EQ(Merged("{replicated}", "{devices=[2]0,1}"), "{devices=[2]0,1}");
  EXPECT_EQ(Merged("{devices=[2]0,1}", "{unknown}"), "{devices=[2]0,1}");
  EXPECT_EQ(Merged("{{replicated}, {devices=[2]0,1}}", "{{devices=[2]1,0}, {replicated}}"),
            "{{devices=[2]1,0}, {devices=[2]0,1}}");
}

TEST(MergeShardingsTest, SaysWhyWhenIncompatible) {
  EXPECT_THAT(Merged("{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
                     "{devices=[1,2,2]<=[4] last_tile_dim_replicate}"),
              HasSubstr("the merged tiles are not held by equally many devices"));
  EXPECT_THAT(Merged("{devices=[2]0,1}", "{devices=[2]1,0}"),
              HasSubstr("device 0 is in tile 0 of dimension 0 in one and tile 1 in the other"));
  EXPECT_THAT(Merged("{devices=[2,1,2]<=[4] last_tile_dim_replicate}", "{devices=[4,1]<=[4]}"),
              HasSubstr("dimension 0 is split 2 ways in one and 4 ways in the other"));
  EXPECT_THAT(Merged("{maximal device=0}", "{maximal device=1}"),
              HasSubstr("they place the value differently"));
  EXPECT_THAT(Merged("{devices=[2,2]<=[4] last_tile_dims={manual}}", "{devices=[2,2]<=[4]}"),
              HasSubstr("they are not manual in the same groups"));
}

TEST(MergeShardingsTest, AValueWholeInItsManualGroupsTakesTheirSplit) {
  const std::string whole = "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}";
  const std::string split = "{devices=[2,1,4]<=[8] last_tile_dims={manual}}";
  EXPECT_EQ(Merged(whole, split), split);
  EXPECT_EQ(Merged(split, whole), split);
  // Other manual groups (devices sharing d / 2, not d % 4) or two splits do not merge.
  EXPECT_THAT(Merged("{devices=[1,1,4,2]<=[8] last_tile_dims={manual, replicated}}", split),
              HasSubstr("not manual in the same groups"));
  EXPECT_THAT(Merged(split, "{devices=[1,2,4]<=[2,4]T(0,1) last_tile_dims={manual}}"),
              HasSubstr("both split"));
}

// ---- Property tests: every element stays on the devices that held it -----------------------

using sharding_test::ForEachElement;
using sharding_test::Holders;
using sharding_test::RandomShardingCase;
using sharding_test::ShardingCase;

TEST(TransposeShardingTest, RandomCasesKeepElementsOnTheirDevices) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    ShardingCase c = RandomShardingCase(rng, /*allow_partial=*/true);
    std::vector<int64_t> perm(c.shape.rank());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int64_t> dims;
    for (int64_t p : perm) dims.push_back(c.shape.dimensions(p));
    const Shape target = F32(dims);
    HloSharding t = TransposeSharding(c.sharding, perm).value();
    SCOPED_TRACE(c.sharding.ToString() + " -> " + t.ToString());
    ForEachElement(c.shape.dimensions(), [&](int64_t, absl::Span<const int64_t> index) {
      std::vector<int64_t> moved;
      for (int64_t p : perm) moved.push_back(index[p]);
      ASSERT_EQ(Holders(c.sharding, c.shape, c.num_devices, index),
                Holders(t, target, c.num_devices, moved));
    });
  }
}

// A random reshape of `dims`: merge two neighbours, split one dim, or add a size-1 dim.
std::vector<int64_t> RandomReshape(std::vector<int64_t> dims, std::mt19937& rng) {
  for (int step = 0; step < 2; ++step) {
    const size_t i = rng() % dims.size();
    switch (rng() % 3) {
      case 0:
        if (i + 1 < dims.size()) {
          dims[i] *= dims[i + 1];
          dims.erase(dims.begin() + i + 1);
        }
        break;
      case 1:
        for (int64_t f : {2, 3}) {
          if (dims[i] % f == 0 && dims[i] > f) {
            dims[i] /= f;
            dims.insert(dims.begin() + i, f);
            break;
          }
        }
        break;
      default:
        dims.insert(dims.begin() + i, 1);
    }
  }
  return dims;
}

using Devices = std::set<int64_t>;

// Calls `check` with the devices holding each element of `c.shape` under `c.sharding`, and
// those holding it in `target`'s layout (the same row-major position) under `reshaped`.
void ForEachReshapedElement(const ShardingCase& c, const Shape& target, const HloSharding& reshaped,
                            absl::FunctionRef<void(const Devices&, const Devices&)> check) {
  std::vector<std::vector<int64_t>> target_index;
  ForEachElement(target.dimensions(), [&](int64_t, absl::Span<const int64_t> index) {
    target_index.emplace_back(index.begin(), index.end());
  });
  ForEachElement(c.shape.dimensions(), [&](int64_t linear, absl::Span<const int64_t> index) {
    check(Holders(c.sharding, c.shape, c.num_devices, index),
          Holders(reshaped, target, c.num_devices, target_index[linear]));
  });
}

TEST(ReshapeShardingTest, RandomCasesKeepElementsOnTheirDevices) {
  std::mt19937 rng(5);
  int reshaped = 0;
  for (int trial = 0; trial < 600; ++trial) {
    ShardingCase c = RandomShardingCase(rng, /*allow_partial=*/true);
    const Shape target = F32(RandomReshape(c.shape.dimensions(), rng));
    absl::StatusOr<HloSharding> r = ReshapeSharding(c.sharding, c.shape, target);
    if (!r.ok()) continue;
    ++reshaped;
    SCOPED_TRACE(c.sharding.ToString() + " on " + c.shape.ToString() + " -> " + r->ToString() +
                 " on " + target.ToString());
    ForEachReshapedElement(c, target, *r, [](const Devices& before, const Devices& after) {
      ASSERT_EQ(before, after);
    });
  }
  EXPECT_GT(reshaped, 200);
}

TEST(ReshapeShardingTest, MergesAdjacentUntiledFactors) {
  // [6,4] -> [4,6] regroups untiled elements only; dim 2's tiles map 1:1.
  EXPECT_EQ(Reshaped("{devices=[1,1,2]<=[2]}", {6, 4, 2}, {4, 6, 2}), "{devices=[1,1,2]<=[2]}");
  // Rows 0-1 of [4,6] are rows 0-2 of [6,4].
  EXPECT_EQ(Reshaped("{devices=[2,1]<=[2]}", {4, 6}, {6, 4}), "{devices=[2,1]<=[2]}");
}

TEST(ReshapeShardingReplicatingUnmappedTest, KeepsTheDimsThatMap) {
  // The MoE dispatch reshape: the token dim's tiles land on a minor part of the merged dim,
  // the expert dim keeps its 4 tiles.
  EXPECT_EQ(ReshapedReplicating("{devices=[1,2,4]<=[8]}", {2, 64, 8}, {128, 8}),
            "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(ReshapedReplicating("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", {128, 8},
                                {2, 64, 8}),
            "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  // What maps exactly is unchanged.
  EXPECT_EQ(ReshapedReplicating("{devices=[2,3]<=[6]}", {4, 6}, {2, 2, 6}),
            "{devices=[2,1,3]<=[6]}");
  EXPECT_EQ(ReshapedReplicating("{devices=[1,2]<=[2]}", {4, 6}, {24}), "{replicated}");
  EXPECT_EQ(ReshapedReplicating("{devices=[2,2]<=[4]}", {4, 6}, {24}),
            "{devices=[2,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(ReshapedReplicating("{devices=[2,1]<=[2]}", {1, 4}, {4}), "{replicated}");
  EXPECT_THAT(ReshapedReplicating("{devices=[2]<=[2]}", {4}, {5}), HasSubstr("cannot reshape"));
}

TEST(ReshapeShardingReplicatingUnmappedTest, RandomCasesKeepElementsOnTheirDevicesAndMore) {
  std::mt19937 rng(7);
  int partial = 0;
  for (int trial = 0; trial < 600; ++trial) {
    ShardingCase c = RandomShardingCase(rng, /*allow_partial=*/true);
    const Shape target = F32(RandomReshape(c.shape.dimensions(), rng));
    if (c.shape.num_elements() == 0) continue;
    absl::StatusOr<HloSharding> r = ReshapeShardingReplicatingUnmapped(c.sharding, c.shape, target);
    ASSERT_TRUE(r.ok()) << r.status().message();
    if (!ReshapeSharding(c.sharding, c.shape, target).ok() && r->IsTiled()) ++partial;
    SCOPED_TRACE(c.sharding.ToString() + " on " + c.shape.ToString() + " -> " + r->ToString() +
                 " on " + target.ToString());
    ForEachReshapedElement(c, target, *r, [](const Devices& before, const Devices& after) {
      ASSERT_TRUE(std::includes(after.begin(), after.end(), before.begin(), before.end()));
    });
  }
  EXPECT_GT(partial, 20);
}

TEST(PartiallyReplicateTest, RandomCasesWidenRegionsAlongReplicatedDims) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    ShardingCase c = RandomShardingCase(rng, /*allow_partial=*/true);
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < c.shape.rank(); ++d) {
      if (rng() % 2) dims.push_back(d);
    }
    HloSharding r = PartiallyReplicate(c.sharding, dims).value();
    SCOPED_TRACE(c.sharding.ToString() + " -> " + r.ToString());
    for (int64_t device = 0; device < c.num_devices; ++device) {
      ShardRegion before = ShardRegionForDevice(c.sharding, c.shape, device).value();
      ShardRegion after = ShardRegionForDevice(r, c.shape, device).value();
      for (int64_t d : dims) {
        before.offsets[d] = 0;
        before.limits[d] = c.shape.dimensions(d);
      }
      ASSERT_EQ(before, after) << "device " << device;
    }
  }
}

TEST(MergeShardingsTest, RandomSplitsMergeBack) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    ShardingCase c = RandomShardingCase(rng, /*allow_partial=*/true);
    std::vector<int64_t> in_a, in_b;
    for (int64_t d = 0; d < c.shape.rank(); ++d) (rng() % 2 ? in_a : in_b).push_back(d);
    HloSharding a = PartiallyReplicate(c.sharding, in_b).value();
    HloSharding b = PartiallyReplicate(c.sharding, in_a).value();
    absl::StatusOr<HloSharding> merged = MergeShardings(a, b);
    ASSERT_TRUE(merged.ok()) << a.ToString() << " + " << b.ToString() << ": " << merged.status();
    EXPECT_EQ(*merged, c.sharding)
        << a.ToString() << " + " << b.ToString() << " = " << merged->ToString();
  }
}

}  // namespace
}  // namespace hlo
