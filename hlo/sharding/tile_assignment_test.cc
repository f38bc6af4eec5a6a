#include "hlo/sharding/tile_assignment.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TileAssignment Iota(std::vector<int64_t> dims, std::vector<int64_t> reshape = {},
                    std::vector<int64_t> perm = {}) {
  if (reshape.empty()) return TileAssignment::Iota(dims).value();
  return TileAssignment::Iota(dims, reshape, perm).value();
}

TileAssignment Explicit(std::vector<int64_t> dims, std::vector<int64_t> devices) {
  return TileAssignment::Explicit(dims, devices).value();
}

TEST(TileAssignmentTest, IotaPrintsAndEnumerates) {
  TileAssignment ta = Iota({4, 2});
  EXPECT_TRUE(ta.is_iota());
  EXPECT_EQ(ta.ToString(), "[4,2]<=[8]");
  EXPECT_EQ(ta.num_devices(), 8);
  EXPECT_EQ(ta.rank(), 2);
  EXPECT_THAT(ta.Devices(), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(ta.device({2, 1}), 5);
}

TEST(TileAssignmentTest, TransposedIota) {
  TileAssignment ta = Iota({3, 4}, {2, 2, 3}, {2, 1, 0});
  EXPECT_EQ(ta.ToString(), "[3,4]<=[2,2,3]T(2,1,0)");
  // iota [2,2,3] transposed (2,1,0) -> shape [3,2,2]; element (c,b,a) = a*6 + b*3 + c.
  EXPECT_THAT(ta.Devices(), ElementsAre(0, 6, 3, 9, 1, 7, 4, 10, 2, 8, 5, 11));
  EXPECT_EQ(ta.device({1, 1}), 7);
  EXPECT_EQ(ta.device_at(11), 11);
}

TEST(TileAssignmentTest, IotaIsCanonicalized) {
  EXPECT_EQ(Iota({1, 2, 2}, {2, 2}, {}).ToString(), "[1,2,2]<=[4]");
  EXPECT_EQ(Iota({4}, {1, 4, 1}, {2, 1, 0}).ToString(), "[4]<=[4]");
  EXPECT_EQ(Iota({60}, {3, 4, 5}, {1, 2, 0}).ToString(), "[60]<=[3,20]T(1,0)");
  EXPECT_EQ(Iota({60}, {1, 3, 1, 4, 1, 5}, {4, 3, 2, 5, 1, 0}).ToString(), "[60]<=[3,20]T(1,0)");
  EXPECT_EQ(Iota({1}, {1}, {0}).ToString(), "[1]<=[1]");
}

TEST(TileAssignmentTest, ExplicitPrintsBack) {
  TileAssignment ta = Explicit({2, 1, 2}, {2, 3, 5, 7});
  EXPECT_FALSE(ta.is_iota());
  EXPECT_EQ(ta.ToString(), "[2,1,2]2,3,5,7");
  EXPECT_EQ(ta.device({1, 0, 0}), 5);
  EXPECT_EQ(ta.MaxDevice(), 7);
  EXPECT_THAT(ta.TileIndexOf(5).value(), ElementsAre(1, 0, 0));
  EXPECT_FALSE(ta.TileIndexOf(4).has_value());
}

TEST(TileAssignmentTest, FactoriesRejectBadInput) {
  auto message = [](const absl::StatusOr<TileAssignment>& s) {
    return std::string(s.status().message());
  };
  EXPECT_THAT(message(TileAssignment::Explicit({2, 2}, {0, 1, 2})),
              HasSubstr("hold 4 devices but 3 are listed"));
  EXPECT_THAT(message(TileAssignment::Explicit({2, 2}, {0, 1, 2, 1})),
              HasSubstr("device 1 appears more than once"));
  EXPECT_THAT(message(TileAssignment::Explicit({2}, {-1, 0})), HasSubstr("negative"));
  EXPECT_THAT(message(TileAssignment::Iota({2, 0})), HasSubstr("dimension of size 0"));
  EXPECT_THAT(message(TileAssignment::Iota({})), HasSubstr("must not be empty"));
  EXPECT_THAT(message(TileAssignment::Iota({4}, {2, 3}, {})),
              HasSubstr("hold 4 devices but iota reshape dimensions [2,3] hold 6"));
  EXPECT_THAT(message(TileAssignment::Iota({4}, {2, 2}, {0, 0})),
              HasSubstr("(0,0) is not a permutation of 0..1"));
  EXPECT_THAT(message(TileAssignment::Iota({4}, {2, 2}, {0})), HasSubstr("not a permutation"));
  EXPECT_THAT(message(TileAssignment::Iota({int64_t{1} << 20, int64_t{1} << 20})),
              HasSubstr("more than 65536 devices"));
  EXPECT_THAT(message(TileAssignment::Iota({2, 1, int64_t{1} << 30})),
              HasSubstr("more than 65536 devices"));
}

TEST(TileAssignmentTest, EqualityAndHashAreByMeaning) {
  TileAssignment iota = Iota({1, 2, 4}, {4, 2}, {1, 0});
  TileAssignment list = Explicit({1, 2, 4}, {0, 2, 4, 6, 1, 3, 5, 7});
  EXPECT_EQ(iota, list);
  EXPECT_EQ(absl::HashOf(iota), absl::HashOf(list));
  EXPECT_NE(iota, Explicit({2, 4}, {0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_NE(iota, Iota({1, 2, 4}));
  absl::flat_hash_set<TileAssignment> set = {iota, list, Iota({8})};
  EXPECT_EQ(set.size(), 2);
}

TEST(TileAssignmentTest, TransposeKeepsIotaForm) {
  TileAssignment t = Iota({4, 2}).Transpose({1, 0}).value();
  EXPECT_TRUE(t.is_iota());
  EXPECT_EQ(t.ToString(), "[2,4]<=[4,2]T(1,0)");
  EXPECT_EQ(t, Explicit({2, 4}, {0, 2, 4, 6, 1, 3, 5, 7}));
  // Transposing back restores the original.
  EXPECT_EQ(t.Transpose({1, 0}).value().ToString(), "[4,2]<=[8]");
}

TEST(TileAssignmentTest, TransposeOfExplicit) {
  TileAssignment t = Explicit({2, 3}, {5, 4, 3, 2, 1, 0}).Transpose({1, 0}).value();
  EXPECT_FALSE(t.is_iota());
  EXPECT_EQ(t.ToString(), "[3,2]5,2,4,1,3,0");
}

TEST(TileAssignmentTest, TransposeOfIotaThatHasNoIotaResult) {
  // [4,3]<=[6,2]T(1,0): tile dim 0 ends inside reshape dim 0 at a non-dividing point.
  TileAssignment ta = Iota({4, 3}, {6, 2}, {1, 0});
  TileAssignment t = ta.Transpose({1, 0}).value();
  EXPECT_EQ(t, ta.ToExplicit().Transpose({1, 0}).value());
}

TEST(TileAssignmentTest, TransposeRejectsBadPermutation) {
  EXPECT_THAT(std::string(Iota({2, 2}).Transpose({0}).status().message()),
              HasSubstr("not a permutation"));
}

TEST(TileAssignmentTest, Reshape) {
  TileAssignment r = Iota({2, 4}, {4, 2}, {1, 0}).Reshape({2, 2, 2}).value();
  EXPECT_EQ(r.ToString(), "[2,2,2]<=[4,2]T(1,0)");
  EXPECT_EQ(Explicit({4}, {3, 2, 1, 0}).Reshape({2, 2}).value().ToString(), "[2,2]3,2,1,0");
  EXPECT_THAT(std::string(Iota({4}).Reshape({3}).status().message()),
              HasSubstr("cannot reshape tile assignment [4] of 4 devices to [3]"));
}

TEST(TileAssignmentTest, ToIotaRecoversCanonicalForm) {
  EXPECT_EQ(Explicit({2, 4}, {0, 2, 4, 6, 1, 3, 5, 7}).ToIota()->ToString(), "[2,4]<=[4,2]T(1,0)");
  EXPECT_EQ(Explicit({4}, {0, 1, 2, 3}).ToIota()->ToString(), "[4]<=[4]");
  EXPECT_FALSE(Explicit({4}, {0, 1, 3, 2}).ToIota().has_value());
  EXPECT_FALSE(Explicit({2}, {1, 2}).ToIota().has_value());
  EXPECT_EQ(Explicit({3, 4}, Iota({3, 4}, {2, 2, 3}, {2, 1, 0}).Devices()).ToIota()->ToString(),
            "[3,4]<=[2,2,3]T(2,1,0)");
}

TEST(TileAssignmentTest, ForEachVisitsRowMajor) {
  std::vector<std::vector<int64_t>> indices;
  std::vector<int64_t> devices;
  Explicit({2, 2}, {3, 1, 2, 0}).ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    indices.emplace_back(index.begin(), index.end());
    devices.push_back(device);
  });
  EXPECT_THAT(devices, ElementsAre(3, 1, 2, 0));
  EXPECT_THAT(indices[2], ElementsAre(1, 0));
}

TEST(TileAssignmentTest, TileIndexOfIota) {
  TileAssignment ta = Iota({3, 4}, {2, 2, 3}, {2, 1, 0});
  for (int64_t d = 0; d < 12; ++d) {
    std::vector<int64_t> index = ta.TileIndexOf(d).value();
    EXPECT_EQ(ta.device(index), d);
  }
  EXPECT_FALSE(ta.TileIndexOf(12).has_value());
}

// Moving size-1 dims (while the others keep their order) is a reshape: every device stays at
// its transposed index, checked element by element against the definition, for iota and
// explicit assignments, and the iota form prints as the canonical one.
TEST(TileAssignmentTest, TransposeMovingUnitDimsKeepsEveryDevice) {
  const TileAssignment iota = Iota({2, 1, 3, 1}, {3, 2}, {1, 0});
  const TileAssignment explicit_ta = Explicit({2, 1, 3, 1}, {5, 0, 4, 2, 3, 1});
  for (const TileAssignment& ta : {iota, explicit_ta}) {
    for (const std::vector<int64_t>& perm : std::vector<std::vector<int64_t>>{
             {1, 0, 2, 3}, {0, 3, 2, 1}, {3, 1, 0, 2}, {1, 3, 0, 2}, {2, 1, 0, 3}}) {
      const TileAssignment t = ta.Transpose(perm).value();
      for (int64_t i = 0; i < 2; ++i) {
        for (int64_t j = 0; j < 3; ++j) {
          const std::vector<int64_t> old_index = {i, 0, j, 0};
          std::vector<int64_t> new_index(4);
          for (int64_t k = 0; k < 4; ++k) new_index[k] = old_index[perm[k]];
          EXPECT_EQ(t.device(new_index), ta.device(old_index)) << ta.ToString();
        }
      }
    }
  }
  EXPECT_EQ(iota.Transpose({1, 3, 0, 2}).value().ToString(), "[1,1,2,3]<=[3,2]T(1,0)");
}

// Random iota forms: transposes and reshapes agree with the materialized explicit array, and
// the explicit array's recovered iota form equals the original.
TEST(TileAssignmentTest, RandomIotaAgreesWithExplicit) {
  std::mt19937 rng(7);
  const std::vector<int64_t> sizes = {1, 2, 3, 4, 6};
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<int64_t> reshape(1 + rng() % 4);
    for (int64_t& d : reshape) d = sizes[rng() % sizes.size()];
    std::vector<int64_t> perm(reshape.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    // Tile dims: a random factorization of the transposed axes (split some axes in two).
    std::vector<int64_t> dims;
    for (int64_t p : perm) {
      const int64_t d = reshape[p];
      if (d == 4 && rng() % 2) {
        dims.push_back(2);
        dims.push_back(2);
      } else if (d == 6 && rng() % 2) {
        dims.push_back(3);
        dims.push_back(2);
      } else {
        dims.push_back(d);
      }
    }
    if (rng() % 3 == 0) dims.insert(dims.begin() + rng() % (dims.size() + 1), 1);
    TileAssignment ta = Iota(dims, reshape, perm);
    TileAssignment ex = ta.ToExplicit();
    ASSERT_EQ(ta, ex);
    ASSERT_EQ(absl::HashOf(ta), absl::HashOf(ex));
    ASSERT_EQ(ex.ToIota().value().ToString(), ta.ToString()) << ex.ToString();
    std::vector<int64_t> tperm(dims.size());
    std::iota(tperm.begin(), tperm.end(), 0);
    std::shuffle(tperm.begin(), tperm.end(), rng);
    TileAssignment t = ta.Transpose(tperm).value();
    ASSERT_EQ(t, ex.Transpose(tperm).value()) << ta.ToString();
    ASSERT_TRUE(t.is_iota()) << ta.ToString();
  }
}

}  // namespace
}  // namespace hlo
