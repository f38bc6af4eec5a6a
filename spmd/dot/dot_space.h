// The iteration space of a dot and shardings of it.
//
// A dot C[b.., m.., n..] = sum_k A[b.., m.., k..] · B[b.., k.., n..] iterates over one space
// whose dims are, in this order: batch dims, LHS free (non-contracting) dims, RHS free dims,
// contracting dims. Every dot strategy is a tiling of that space (a "space sharding": one tile
// dim per space dim plus a trailing replication dim). Projecting it onto an operand's dims
// gives the sharding the operand must have; projecting it onto the result's dims gives the
// local dot's result tiling, where tiles of contracting dims become partial sums pending over
// the devices that differ only in those dims. Lifting an operand's sharding into the space
// (the other dims untiled) gives the strategy that keeps that operand where it is.
//
//   dot(f32[64,128] a, f32[128,32] b), contracting {1}x{0}: space [m=64, n=32, k=128]
//   a {devices=[2,2]<=[4]}  lifts to  {devices=[2,1,2]<=[4]}            (m:2, k:2)
//   projected on the result:          {devices=[2,1,2]<=[4] last_tile_dim_replicate}
//                                     with sums pending over groups [2,2]<=[4]
#ifndef SPMD_DOT_DOT_SPACE_H_
#define SPMD_DOT_DOT_SPACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_attributes.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/hlo_sharding.h"

namespace spmd {

enum class DotDimKind { kBatch, kLhsFree, kRhsFree, kContracting };

struct DotSpaceDim {
  DotDimKind kind = DotDimKind::kBatch;
  int64_t lhs = -1;     // The LHS dim, or -1.
  int64_t rhs = -1;     // The RHS dim, or -1.
  int64_t result = -1;  // The result dim, or -1 (contracting dims).
  int64_t size = 0;
};

class DotSpace {
 public:
  // Fails when the dimension numbers do not fit the shapes.
  static absl::StatusOr<DotSpace> Make(const hlo::Shape& lhs, const hlo::Shape& rhs,
                                       const hlo::DotDimensionNumbers& dnums);

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const DotSpaceDim& dim(int64_t i) const { return dims_[i]; }
  // For each dim of the operand / result, its space dim.
  const std::vector<int64_t>& lhs_to_space() const { return lhs_to_space_; }
  const std::vector<int64_t>& rhs_to_space() const { return rhs_to_space_; }
  const std::vector<int64_t>& result_to_space() const { return result_to_space_; }
  std::vector<int64_t> ContractingDims() const;
  // "m" style names for explanations: b0.., m0.., n0.., k0...
  std::string DimName(int64_t i) const;

  // The space sharding that keeps an operand (or the result) sharded as `sharding`, given
  // that operand's map to space dims. Fails for maximal, manual or other non-tile shardings.
  absl::StatusOr<hlo::HloSharding> Lift(const hlo::HloSharding& sharding,
                                        const std::vector<int64_t>& to_space) const;
  // The sharding of the operand (or result) whose dims map to `to_space`: space dims it lacks
  // become replication.
  absl::StatusOr<hlo::HloSharding> Project(const hlo::HloSharding& space,
                                           const std::vector<int64_t>& to_space) const;
  // The devices over which the local results of `space` hold partial sums (the devices that
  // differ only in contracting tiles), ordered by contracting tile (row-major); empty when
  // no contracting dim is tiled.
  absl::StatusOr<std::vector<std::vector<int64_t>>> PendingSumGroups(
      const hlo::HloSharding& space) const;
  // Tiles of each space dim (1 for untiled) and the replication count, for any sharding of
  // the space (replicated included).
  std::vector<int64_t> TileCounts(const hlo::HloSharding& space) const;
  // `space` with its assignment as rank()+1 dims (the last replication, possibly 1).
  absl::StatusOr<hlo::TileAssignment> FullAssignment(const hlo::HloSharding& space,
                                                     int64_t num_devices) const;
  // Short form of a space sharding for explanations, e.g. "m:4 n:2" or "replicated".
  std::string Describe(const hlo::HloSharding& space) const;

 private:
  std::vector<DotSpaceDim> dims_;
  std::vector<int64_t> lhs_to_space_, rhs_to_space_, result_to_space_;
};

}  // namespace spmd

#endif  // SPMD_DOT_DOT_SPACE_H_
