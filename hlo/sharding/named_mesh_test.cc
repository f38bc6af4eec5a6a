// NamedMesh and the named-sharding conversion through the C++ API (the text form is tested in
// hlo_sharding_parser_test.cc).
#include "hlo/sharding/named_mesh.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hlo {
namespace {

NamedMesh Mesh(std::vector<MeshAxis> axes) {
  return NamedMesh::Create(std::move(axes), {}).value();
}

MeshAxisRef Axis(int64_t axis) { return MeshAxisRef{axis, std::nullopt}; }
MeshAxisRef Sub(int64_t axis, int64_t pre, int64_t size) {
  return MeshAxisRef{axis, MeshAxisRef::SubAxis{pre, size}};
}

std::string Convert(const NamedMesh& mesh, const NamedShardingAxes& axes) {
  absl::StatusOr<HloSharding> s = NamedShardingToHloSharding(mesh, axes);
  if (!s.ok()) return std::string(s.status().message());
  return s->ToString();
}

TEST(NamedMeshTest, CreateValidates) {
  EXPECT_EQ(NamedMesh::Create({}, {}).status().message(), "a mesh needs at least one axis");
  EXPECT_EQ(NamedMesh::Create({{"x", 2}, {"x", 2}}, {}).status().message(),
            "mesh axis 'x' appears twice");
  EXPECT_EQ(NamedMesh::Create({{"x", 0}}, {}).status().message(),
            "mesh axis 'x' has size 0; sizes are at least 1");
  EXPECT_EQ(
      NamedMesh::Create({{"x", 2}, {"y", 2}}, TileAssignment::Iota({4}).value()).status().message(),
      "mesh device array [4]<=[4] does not have the mesh axis sizes as dims");
  NamedMesh mesh = Mesh({{"x", 2}, {"y", 3}});
  EXPECT_EQ(mesh.devices().ToString(), "[2,3]<=[6]");
  EXPECT_EQ(mesh.FindAxis("y"), 1);
  EXPECT_EQ(mesh.FindAxis("z"), std::nullopt);
}

TEST(NamedMeshTest, AxisRefs) {
  NamedMesh mesh = Mesh({{"x", 8}, {"y", 2}});
  EXPECT_EQ(MeshAxisRefName(mesh, Axis(1)), "'y'");
  EXPECT_EQ(MeshAxisRefName(mesh, Sub(0, 2, 4)), "'x':(2)4");
  EXPECT_TRUE(ValidateMeshAxisRef(mesh, Sub(0, 2, 4)).ok());
  EXPECT_EQ(ValidateMeshAxisRef(mesh, Axis(2)).message(),
            "mesh axis index 2 is out of range [0, 2)");
  EXPECT_FALSE(ValidateMeshAxisRef(mesh, Sub(0, 4, 4)).ok());
  EXPECT_FALSE(ValidateMeshAxisRef(mesh, Sub(1, 1, 2)).ok());  // The whole of y.
  EXPECT_TRUE(CheckMeshAxisRefsDisjoint(mesh, Sub(0, 1, 2), Sub(0, 4, 2)).ok());
  EXPECT_TRUE(CheckMeshAxisRefsDisjoint(mesh, Sub(0, 4, 2), Sub(0, 1, 4)).ok());
  EXPECT_TRUE(CheckMeshAxisRefsDisjoint(mesh, Axis(0), Axis(1)).ok());
  EXPECT_EQ(CheckMeshAxisRefsDisjoint(mesh, Sub(0, 2, 4), Sub(0, 1, 4)).message(),
            "sub-axes 'x':(2)4 and 'x':(1)4 overlap");
  EXPECT_EQ(CheckMeshAxisRefsDisjoint(mesh, Sub(0, 2, 2), Axis(0)).message(),
            "mesh axis 'x' is used twice ('x':(2)2 and 'x')");
}

TEST(NamedMeshTest, Conversion) {
  NamedMesh mesh = Mesh({{"x", 2}, {"y", 2}});
  EXPECT_EQ(Convert(mesh, {{{Axis(0), Axis(1)}, {}}, {}, {}, {}}), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(Convert(mesh, {{{Axis(1)}, {}}, {}, {}, {}}),
            "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(Convert(mesh, {{{Axis(0)}, {}}, {}, {}, {Axis(1)}}),
            "{devices=[2,1,2]<=[4] last_tile_dims={manual}}");
  EXPECT_EQ(Convert(mesh, {{}, {}, {Axis(1), Axis(0)}, {}}), "{unreduced}");
  EXPECT_EQ(Convert(mesh, {{{Axis(0)}, {Axis(0)}}, {}, {}, {}}),
            "mesh axis 'x' is used twice ('x' and 'x')");
  // Size-1 axes hold no piece; a mesh of them is one device.
  EXPECT_EQ(Convert(Mesh({{"x", 1}, {"y", 4}}), {{{Axis(1)}, {Axis(0)}}, {}, {}, {}}),
            "{devices=[4,1]<=[4]}");
  EXPECT_EQ(Convert(Mesh({{"x", 1}}), {{{Axis(0)}}, {}, {}, {}}), "{replicated}");
}

TEST(NamedMeshTest, ExplicitDeviceOrder) {
  NamedMesh mesh =
      NamedMesh::Create({{"a", 2}, {"b", 2}, {"c", 2}},
                        TileAssignment::Explicit({2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7}).value())
          .value();
  // XLA's MeshWithDeviceList case: dim 0 by c, dim 1 by a then b.
  absl::StatusOr<HloSharding> s =
      NamedShardingToHloSharding(mesh, {{{Axis(2)}, {Axis(0), Axis(1)}}, {}, {}, {}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ToString(), "{devices=[2,4]0,4,1,5,2,6,3,7}");
}

TEST(NamedMeshTest, MeshAxesReplicaGroups) {
  using Groups = std::vector<std::vector<int64_t>>;
  NamedMesh mesh = Mesh({{"x", 2}, {"y", 2}});
  EXPECT_EQ(MeshAxesReplicaGroups(mesh, {Axis(1)}).value(), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(MeshAxesReplicaGroups(mesh, {Axis(0)}).value(), (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(MeshAxesReplicaGroups(mesh, {Axis(1), Axis(0)}).value(), (Groups{{0, 2, 1, 3}}));
  EXPECT_EQ(MeshAxesReplicaGroups(mesh, {}).value(), (Groups{{0}, {1}, {2}, {3}}));
  // x=8, group over the middle bit: devices 4b0+2b1+b2 with b1 varying.
  EXPECT_EQ(MeshAxesReplicaGroups(Mesh({{"x", 8}}), {Sub(0, 2, 2)}).value(),
            (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(MeshAxesReplicaGroups(mesh, {Axis(0), Axis(0)}).status().message(),
            "mesh axis 'x' is used twice ('x' and 'x')");
}

TEST(NamedMeshTest, ParseMeshAxesReplicaGroups) {
  size_t consumed = 0;
  const std::string text = " mesh['a'=2,'b'=2] {'a'}, to_apply=add";
  absl::StatusOr<std::vector<std::vector<int64_t>>> groups =
      ParseMeshAxesReplicaGroups(text, &consumed);
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_EQ(*groups, (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(text.substr(consumed), ", to_apply=add");
  EXPECT_EQ(ParseMeshAxesReplicaGroups("mesh['a'=2] [{'a'}]", &consumed).status().message(),
            "offset 12: expected '{' to start a list of mesh axes, got '['");
}

}  // namespace
}  // namespace hlo
