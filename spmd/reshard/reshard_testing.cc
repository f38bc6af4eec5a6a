// Reshard test helpers; see the header.
#include "spmd/reshard/reshard_testing.h"

#include <random>

#include "hlo/sharding/shard_geometry.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace spmd {
namespace testing {

std::vector<std::string> TestShardings() {
  return {
      "{devices=[2,4]<=[8]}",
      "{devices=[4,2]<=[2,4]T(1,0)}",
      "{devices=[4,2]<=[8]}",
      "{devices=[8,1]<=[8]}",
      "{devices=[1,8]<=[8]}",
      "{devices=[8,1]<=[2,4]T(1,0)}",
      "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
      "{devices=[1,4,2]<=[8] last_tile_dim_replicate}",
      "{devices=[2,2,2]<=[2,2,2]T(2,1,0) last_tile_dim_replicate}",
      "{devices=[1,2,4]0,2,5,7,1,3,4,6 last_tile_dim_replicate}",
      "{replicated}",
      "{maximal device=3}",
      "{devices=[2,4]3,1,0,2,7,5,4,6}",
      "{devices=[4,2]5,0,3,6,1,7,2,4}",
      "{devices=[8,1]6,2,7,3,5,1,4,0}",
  };
}

std::vector<hlo::Shape> TestShapes() {
  return {hlo::Shape::Array(hlo::PrimitiveType::kF32, {16, 24}),
          hlo::Shape::Array(hlo::PrimitiveType::kF32, {15, 23}),
          hlo::Shape::Array(hlo::PrimitiveType::kF32, {10, 7})};
}

std::vector<ReshardCase> LargerMeshCases() {
  const hlo::Shape square = hlo::Shape::Array(hlo::PrimitiveType::kF32, {36, 20});
  const hlo::Shape cube = hlo::Shape::Array(hlo::PrimitiveType::kF32, {6, 10, 9});
  return {
      {"{devices=[8,8]<=[64]}", "{devices=[8,8]<=[8,8]T(1,0)}", square, 64},
      {"{devices=[64,1]<=[64]}", "{devices=[4,4,4]<=[64] last_tile_dim_replicate}", square, 64},
      {"{devices=[2,4,8]<=[64] last_tile_dim_replicate}", "{devices=[16,4]<=[4,16]T(1,0)}", square,
       64},
      {"{devices=[2,2,4]<=[16]}", "{devices=[4,2,2]<=[2,2,4]T(2,1,0)}", cube, 16},
      {"{devices=[1,4,4]<=[16]}", "{devices=[2,1,2,4]<=[16] last_tile_dim_replicate}", cube, 16},
      {"{maximal device=9}", "{devices=[4,1,4]<=[4,4]T(1,0)}", cube, 16},
  };
}

absl::StatusOr<ReshardModule> BuildReshardModule(const hlo::Shape& shape,
                                                 const hlo::HloSharding& from,
                                                 const hlo::HloSharding& to,
                                                 ReshardPlanner& planner, int64_t num_devices) {
  ReshardModule result;
  result.module = std::make_unique<hlo::HloModule>("reshard");
  result.module->mutable_config()->num_partitions = num_devices;
  result.module->mutable_config()->use_spmd_partitioning = true;
  hlo::HloComputation* entry =
      result.module->AddComputation(std::make_unique<hlo::HloComputation>("main"));
  result.module->set_entry_computation(entry);
  ASSIGN_OR_RETURN(hlo::Shape shard, hlo::PaddedShardShape(from, shape));
  hlo::HloInstruction* param =
      entry->AddInstruction(hlo::HloInstruction::Create(hlo::HloOpcode::kParameter, shard, {}));
  param->set_name("shard");
  ASSIGN_OR_RETURN(result.plan, planner.Plan(shape, from, to, num_devices));
  ChannelIdAllocator channel_ids;
  ReshardEmitter emitter(entry, &channel_ids);
  ASSIGN_OR_RETURN(hlo::HloInstruction * root, emitter.Emit(param, shape, *result.plan));
  entry->set_root_instruction(root);
  return result;
}

std::vector<double> RandomArray(const hlo::Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  std::vector<double> values(shape.num_elements());
  for (double& v : values) v = dist(rng);
  return values;
}

namespace {

// Calls f(local index, global linear index or -1 outside the data) for every element of the
// padded shard of `device`.
template <typename F>
void ForEachShardElement(const hlo::Shape& shape, const hlo::HloSharding& sharding, int64_t device,
                         F f) {
  const hlo::ShardRegion region = hlo::ShardRegionForDevice(sharding, shape, device).value();
  const hlo::Shape padded = hlo::PaddedShardShape(sharding, shape).value();
  const int64_t rank = shape.rank();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t local = 0; local < padded.num_elements(); ++local) {
    int64_t global = 0;
    for (int64_t d = 0; d < rank && global >= 0; ++d) {
      const int64_t at = region.offsets[d] + idx[d];
      global = at < region.limits[d] ? global * shape.dimensions(d) + at : -1;
    }
    f(local, global);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < padded.dimensions(d)) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

DenseArray ShardOf(const std::vector<double>& full, const hlo::Shape& shape,
                   const hlo::HloSharding& sharding, int64_t device) {
  DenseArray shard;
  shard.dims = hlo::PaddedShardShape(sharding, shape).value().dimensions();
  int64_t size = 1;
  for (int64_t d : shard.dims) size *= d;
  shard.data.assign(size, kPaddingSentinel);
  ForEachShardElement(shape, sharding, device, [&](int64_t local, int64_t global) {
    if (global >= 0) shard.data[local] = full[global];
  });
  return shard;
}

std::string CheckShard(const DenseArray& result, const std::vector<double>& full,
                       const hlo::Shape& shape, const hlo::HloSharding& sharding, int64_t device) {
  std::string error;
  ForEachShardElement(shape, sharding, device, [&](int64_t local, int64_t global) {
    if (global < 0 || !error.empty() || result.data[local] == full[global]) return;
    error = hlo::StrCat("device ", device, " local element ", local, ": got ", result.data[local],
                        ", expected ", full[global], " (global ", global, ")");
  });
  return error;
}

}  // namespace testing
}  // namespace spmd
