#include "spmd/partitioner/halo_exchange.h"

#include "gtest/gtest.h"

namespace spmd {
namespace {

WindowedDim Dim(int64_t tiles, int64_t n, int64_t m, int64_t size, int64_t stride, int64_t lo,
                int64_t hi, int64_t dilation = 1) {
  WindowedDim wd;
  wd.tiles = tiles;
  wd.input_size = n;
  wd.output_size = m;
  wd.window.size = size;
  wd.window.stride = stride;
  wd.window.padding_low = lo;
  wd.window.padding_high = hi;
  wd.window.window_dilation = dilation;
  return wd;
}

TEST(HaloGeometryTest, SamePaddedWindowNeedsOneElementEachSide) {
  HaloGeometry g = ComputeHaloGeometry(Dim(4, 16, 16, 3, 1, 1, 1));
  EXPECT_EQ(g.shard, 4);
  EXPECT_EQ(g.out_shard, 4);
  EXPECT_EQ(g.needed, 6);
  EXPECT_EQ(g.left, 1);
  EXPECT_EQ(g.right, 1);
  EXPECT_EQ(g.starts, (std::vector<int64_t>{-1, 3, 7, 11}));
  EXPECT_EQ(HaloElements(g), 2);
  EXPECT_EQ(GatherElements(g, 4), 12);
}

TEST(HaloGeometryTest, StrideShiftsBlocksFasterThanShards) {
  // 16 -> 8 outputs with stride 2: block i reads from 4i - 1; shards start at 4i.
  HaloGeometry g = ComputeHaloGeometry(Dim(4, 16, 8, 3, 2, 1, 1));
  EXPECT_EQ(g.out_shard, 2);
  EXPECT_EQ(g.needed, 5);
  EXPECT_EQ(g.left, 1);
  EXPECT_EQ(g.right, 0);
}

TEST(HaloGeometryTest, DilationWidensTheWindow) {
  HaloGeometry g = ComputeHaloGeometry(Dim(2, 8, 8, 3, 1, 2, 2, /*dilation=*/2));
  EXPECT_EQ(g.needed, 8);
  EXPECT_EQ(g.left, 2);
  EXPECT_EQ(g.right, 2);
}

TEST(HaloGeometryTest, BlocksBeyondTheOutputAreIgnored) {
  // 5 outputs in blocks of 2 over 4 devices: block 3 computes only padding, so its window
  // (which would start at 6) does not widen the halo.
  HaloGeometry g = ComputeHaloGeometry(Dim(4, 8, 5, 4, 1, 0, 0));
  EXPECT_EQ(g.out_shard, 2);
  EXPECT_EQ(g.needed, 5);
  EXPECT_EQ(g.left, 0);
  EXPECT_EQ(g.right, 3);
}

TEST(HaloGeometryTest, BaseDilationIsNotSplittable) {
  hlo::WindowDimension w;
  w.size = 3;
  EXPECT_TRUE(SplittableWindow(w));
  w.base_dilation = 2;
  EXPECT_FALSE(SplittableWindow(w));
}

}  // namespace
}  // namespace spmd
