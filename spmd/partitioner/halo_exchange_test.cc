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

// XLA's LargeLeftPadOnSliceHaloExchange: slice [12271:12272] of 12272 split 2 ways. Block 0's
// window is the last element of block 1's shard: only that element travels, not the 6136
// between (left < 0: the range starts past the device's own shard).
TEST(HaloGeometryTest, WindowsBeyondTheOwnShardSkipTheShardsBetween) {
  HaloGeometry g = ComputeHaloGeometry(Dim(2, 12272, 1, 1, 1, -12271, 0));
  EXPECT_EQ(g.valid_blocks, 1);
  EXPECT_EQ(g.starts[0], 12271);
  EXPECT_EQ(g.left, -12271);
  EXPECT_EQ(g.right, 6136);
  EXPECT_EQ(HaloElements(g), 1);
  EXPECT_EQ(g.pad_low, 0);
  EXPECT_EQ(g.pad_high, 0);
}

TEST(HaloGeometryTest, BaseDilationIsNotSplittable) {
  hlo::WindowDimension w;
  w.size = 3;
  EXPECT_TRUE(SplittableWindow(w));
  w.base_dilation = 2;
  EXPECT_FALSE(SplittableWindow(w));
}

// XLA's ConvolutionLhsTiledRhsTiledWindowDilateNegativeRhsPadding: a dilated kernel of 28
// spanning the input of 56 (M = 1); each kernel block reads inside its own input shard.
TEST(KernelBlockGeometryTest, KernelSpanningTheInputNeedsNoHalo) {
  HaloGeometry g = KernelBlockGeometry(Dim(2, 56, 1, 28, 1, 0, -1, /*dilation=*/2));
  EXPECT_EQ(g.out_shard, 14);
  EXPECT_EQ(g.valid_blocks, 2);
  EXPECT_EQ(g.needed, 27);
  EXPECT_EQ(g.starts, (std::vector<int64_t>{0, 28}));
  EXPECT_EQ(HaloElements(g), 0);
}

// ...WindowDilate: kernel 112 dilated 2 over an input of 224 padded 3/2, M = 7: block 0 reads
// [-3, 114) (2 past its shard), block 1 [109, 226) (3 before its shard, 2 past the input).
TEST(KernelBlockGeometryTest, PaddedDilatedKernelBlocksReadSmallHalos) {
  HaloGeometry g = KernelBlockGeometry(Dim(2, 224, 7, 112, 1, 3, 2, /*dilation=*/2));
  EXPECT_EQ(g.out_shard, 56);
  EXPECT_EQ(g.needed, 117);
  EXPECT_EQ(g.starts, (std::vector<int64_t>{-3, 109}));
  EXPECT_EQ(g.left, 3);
  EXPECT_EQ(g.right, 2);
  // Block 0's positions before 0 fall in the left halo it receives nothing into (zeros), block
  // 1's past the input in the right one: no extra padding.
  EXPECT_EQ(g.pad_low, 0);
  EXPECT_EQ(g.pad_high, 0);
}

// An uneven kernel of 9 in 4 blocks of 3: the last block holds padding only.
TEST(KernelBlockGeometryTest, PaddingOnlyBlocksAreNotValid) {
  HaloGeometry g = KernelBlockGeometry(Dim(4, 16, 8, 9, 1, 0, 0));
  EXPECT_EQ(g.out_shard, 3);
  EXPECT_EQ(g.valid_blocks, 3);
  EXPECT_EQ(g.needed, 10);
}

}  // namespace
}  // namespace spmd
