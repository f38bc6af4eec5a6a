// Device groups along tile dims, and the mesh view of tile assignments.
#include "hlo/sharding/device_groups.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/sharding/mesh_view.h"

namespace hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Groups = std::vector<std::vector<int64_t>>;

TileAssignment Iota(std::vector<int64_t> dims, std::vector<int64_t> reshape = {},
                    std::vector<int64_t> perm = {}) {
  if (reshape.empty()) return TileAssignment::Iota(dims).value();
  return TileAssignment::Iota(dims, reshape, perm).value();
}

TEST(DeviceGroupsTest, AlongOneDim) {
  TileAssignment minor = DeviceGroupsAlongDims(Iota({2, 4}), {1}).value();
  EXPECT_EQ(minor.ToString(), "[2,4]<=[8]");
  EXPECT_EQ(GroupLists(minor), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  TileAssignment major = DeviceGroupsAlongDims(Iota({2, 4}), {0}).value();
  EXPECT_EQ(major.ToString(), "[4,2]<=[2,4]T(1,0)");
  EXPECT_EQ(GroupLists(major), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

TEST(DeviceGroupsTest, AlongSeveralDimsInTheOrderGiven) {
  TileAssignment ta = Iota({2, 2, 2});
  EXPECT_EQ(GroupLists(DeviceGroupsAlongDims(ta, {0, 2}).value()),
            (Groups{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(GroupLists(DeviceGroupsAlongDims(ta, {2, 0}).value()),
            (Groups{{0, 4, 1, 5}, {2, 6, 3, 7}}));
  EXPECT_EQ(DeviceGroupsAlongDims(ta, {2, 0}).value().ToString(), "[2,4]<=[2,4]T(1,0)");
  EXPECT_EQ(GroupLists(DeviceGroupsAlongDims(ta, {}).value()).size(), 8);
  EXPECT_EQ(GroupLists(DeviceGroupsAlongDims(ta, {0, 1, 2}).value()),
            (Groups{{0, 1, 2, 3, 4, 5, 6, 7}}));
}

TEST(DeviceGroupsTest, ExplicitAssignmentsGiveExplicitGroups) {
  TileAssignment ta = TileAssignment::Explicit({2, 2}, {3, 1, 0, 2}).value();
  TileAssignment groups = DeviceGroupsAlongDims(ta, {0}).value();
  EXPECT_FALSE(groups.is_iota());
  EXPECT_EQ(GroupLists(groups), (Groups{{3, 0}, {1, 2}}));
  // An explicit list that is secretly iota can be converted by the caller.
  TileAssignment secret = TileAssignment::Explicit({2, 2}, {0, 1, 2, 3}).value();
  EXPECT_EQ(DeviceGroupsAlongDims(secret, {0}).value().ToIota()->ToString(), "[2,2]<=[2,2]T(1,0)");
}

TEST(DeviceGroupsTest, RejectsBadDims) {
  EXPECT_THAT(std::string(DeviceGroupsAlongDims(Iota({2, 2}), {1, 1}).status().message()),
              HasSubstr("must be distinct dims"));
  EXPECT_FALSE(DeviceGroupsAlongDims(Iota({2, 2}), {2}).ok());
}

TEST(MeshViewTest, StridedMeshOfTransposedIota) {
  MeshView mesh = MeshView::Of(Iota({2, 4}, {4, 2}, {1, 0}));
  ASSERT_TRUE(mesh.is_strided());
  EXPECT_EQ(mesh.ToString(), "mesh{a0=4@2 a1=2@1; tile_dims=[{a1},{a0}]}");
  EXPECT_THAT(mesh.AxesOfTileDim(0), ElementsAre(1));
  EXPECT_EQ(mesh.DeviceGroupsAlong({0}).value(), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(mesh.DeviceGroupsAlong({1}).value(), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(mesh.Device({3, 1}), 7);
}

TEST(MeshViewTest, TileDimSpanningSeveralAxes) {
  // [4,2]<=[2,2,2]T(0,2,1): tile dim 0 spans reshape dims 0 and 2; dim 1 is reshape dim 1.
  MeshView mesh = MeshView::Of(Iota({4, 2}, {2, 2, 2}, {0, 2, 1}));
  ASSERT_TRUE(mesh.is_strided());
  EXPECT_EQ(mesh.ToString(), "mesh{a0=2@4 a1=2@2 a2=2@1; tile_dims=[{a0,a2},{a1}]}");
  EXPECT_EQ(mesh.DeviceGroupsAlong({1}).value(), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
}

TEST(MeshViewTest, SplitsReshapeDimsAtTileBoundaries) {
  MeshView mesh = MeshView::Of(Iota({2, 4}));
  EXPECT_EQ(mesh.ToString(), "mesh{a0=2@4 a1=4@1; tile_dims=[{a0},{a1}]}");
}

TEST(MeshViewTest, ExplicitIotaListIsStrided) {
  MeshView mesh = MeshView::Of(TileAssignment::Explicit({2, 4}, {0, 2, 4, 6, 1, 3, 5, 7}).value());
  EXPECT_TRUE(mesh.is_strided());
  EXPECT_EQ(mesh.ToString(), "mesh{a0=4@2 a1=2@1; tile_dims=[{a1},{a0}]}");
}

TEST(MeshViewTest, IrregularListHasOneAxisPerTileDim) {
  MeshView mesh = MeshView::Of(TileAssignment::Explicit({2, 1, 2}, {3, 0, 2, 1}).value());
  EXPECT_FALSE(mesh.is_strided());
  EXPECT_EQ(mesh.ToString(), "mesh{a0=2 a1=2; tile_dims=[{a0},{},{a1}]}");
  EXPECT_EQ(mesh.DeviceGroupsAlong({0}).value(), (Groups{{3, 2}, {0, 1}}));
  EXPECT_FALSE(mesh.DeviceGroupsAlong({2}).ok());
}

}  // namespace
}  // namespace hlo
