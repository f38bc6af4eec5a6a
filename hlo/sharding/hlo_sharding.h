// HloSharding: how one HLO value is laid out over devices.
//
// One value type with one Kind:
//   kReplicated  `{replicated}`            every device holds the whole value.
//   kMaximal     `{maximal device=3}`      one device holds (and computes) the whole value.
//   kManual      `{manual}`                already partitioned by the user; left alone.
//   kUnknown     `{unknown}`               a placeholder any other sharding may overwrite.
//   kUnreduced   `{unreduced}`             every device holds a partial sum of the value.
//   kTiled       `{devices=[2,2]<=[4]}`    split into tiles by a TileAssignment, optionally with
//                trailing subgroup dims: `last_tile_dim_replicate` (one replicated subgroup
//                dim) or `last_tile_dims={manual, replicated, ...}`.
//   kTuple       `{{replicated}, {devices=[2]0,1}}`  one leaf sharding per array leaf of a
//                tuple shape, flattened in order.
// Leaves may carry metadata (`metadata={op_name="a"}`) and a shard group (`shard_as 0`,
// `shard_like 1`).
//
// Factories validate and canonicalize exactly as XLA does, so each placement has one
// representation (besides the iota/explicit choice, which is kept for printing):
//   - PartialTile sorts the devices of each replication group; a replication dim of size 1
//     becomes a plain tiling and one spanning every device becomes `{replicated}`.
//   - Subgroup drops size-1 subgroup dims, merges dims of the same type and orders the types
//     manual, unreduced, replicated; a lone replicated subgroup becomes
//     `last_tile_dim_replicate`, and a subgroup with no data tiling becomes {manual},
//     {replicated} or {unreduced}.
// Equality and hashing are by meaning: metadata is ignored (as in XLA), and an iota tile
// assignment equals the explicit list of the same devices.
//
// Parse also accepts XLA's named-mesh form (`{mesh['x'=2,'y'=2] [{'x'}, {}]}`, see
// named_mesh.h) and converts it to the equivalent sharding above; the named form is not kept, so
// ToString prints the tile-assignment form.
//
// Unreduced devices combine their partial values by a ReductionOp: sum (the default), max or
// min (Shardy's `unreduced=max{'x'}`). The tile-assignment form has no word for max and min;
// as XLA does, it carries them as a metadata entry `op_type="sdy::reduction_op" op_name="MAX"`,
// which the parser (and proto conversion) takes back out of the metadata.
#ifndef HLO_SHARDING_HLO_SHARDING_H_
#define HLO_SHARDING_HLO_SHARDING_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/shape.h"
#include "hlo/sharding/tile_assignment.h"

namespace hlo {

// xla_data.proto's OpSharding.Type, value for value. Used for subgroup types (only
// kReplicated, kManual and kUnreduced are valid there) and by proto conversion.
enum class OpShardingType : int {
  kReplicated = 0,
  kMaximal = 1,
  kTuple = 2,
  kOther = 3,
  kManual = 4,
  kUnknown = 5,
  kUnreduced = 6,
};

// How the devices of an unreduced group combine into the value (Shardy's and XLA's
// ReductionOp, value for value).
enum class ReductionOp : int { kSum = 0, kMax = 1, kMin = 2 };

// "sum", "max" or "min".
std::string_view ReductionOpName(ReductionOp op);

// The text name of a subgroup type: "replicated", "manual", "unreduced" (others: "other").
std::string_view SubgroupTypeName(OpShardingType type);

// `shard_as N` / `shard_like N`: values in one group must (as) or should (like) be sharded
// alike. Mirrors OpSharding's is_shard_group / shard_group_id / shard_group_type.
struct ShardGroup {
  enum class Kind { kNone, kAs, kLike };
  Kind kind = Kind::kNone;
  int64_t id = -1;  // Meaningful when kind != kNone; then at least 0.

  static ShardGroup As(int64_t id) { return {Kind::kAs, id}; }
  static ShardGroup Like(int64_t id) { return {Kind::kLike, id}; }
  bool is_set() const { return kind != Kind::kNone; }
  friend bool operator==(const ShardGroup& a, const ShardGroup& b) {
    return a.kind == b.kind && (a.kind == Kind::kNone || a.id == b.id);
  }
  friend bool operator!=(const ShardGroup& a, const ShardGroup& b) { return !(a == b); }
};

class HloSharding {
 public:
  enum class Kind { kReplicated, kMaximal, kManual, kUnknown, kUnreduced, kTiled, kTuple };

  // One OpMetadata entry in its HLO text form without the braces, e.g. `op_name="a"` or
  // `op_type="Dot" op_name="x" source_line=3`; tokens are separated by single spaces.
  using Metadata = std::vector<std::string>;

  // ---- Factories ---------------------------------------------------------------------------
  static HloSharding Replicate(Metadata metadata = {});
  static HloSharding Manual(Metadata metadata = {});
  static HloSharding Unknown(Metadata metadata = {});
  static HloSharding Unreduced(Metadata metadata = {});
  // `{maximal device=N}`. Fails when `device` is negative.
  static absl::StatusOr<HloSharding> Maximal(int64_t device, Metadata metadata = {});
  // A plain tiling: one tile per device, rank = tile_assignment.rank().
  // Fails when the assignment has a single device (use Maximal or Replicate).
  static absl::StatusOr<HloSharding> Tile(TileAssignment tile_assignment, Metadata metadata = {});
  // Tiling whose last dim replicates (`last_tile_dim_replicate`), canonicalized as described
  // in the file comment; may therefore return a Replicate or Tile sharding.
  static absl::StatusOr<HloSharding> PartialTile(TileAssignment tile_assignment,
                                                 Metadata metadata = {});
  // Tiling whose last `subgroup_types.size()` dims are subgroups of the given types
  // (kReplicated, kManual or kUnreduced), canonicalized as described in the file comment.
  // Fails for other types or when there are more subgroup types than dims.
  static absl::StatusOr<HloSharding> Subgroup(TileAssignment tile_assignment,
                                              absl::Span<const OpShardingType> subgroup_types,
                                              Metadata metadata = {});
  // A tuple sharding from flattened leaf shardings. Fails when an element is itself a tuple.
  static absl::StatusOr<HloSharding> Tuple(std::vector<HloSharding> elements);
  // As above, also checking that there is one element per leaf of `tuple_shape`.
  static absl::StatusOr<HloSharding> Tuple(const Shape& tuple_shape,
                                           std::vector<HloSharding> elements);
  // `leaf` repeated for every leaf of `tuple_shape`. REQUIRES: leaf is not a tuple.
  static HloSharding SingleTuple(const Shape& tuple_shape, const HloSharding& leaf);

  // ---- Text --------------------------------------------------------------------------------
  // Parses one whole sharding `{...}` (surrounding whitespace allowed), the named-mesh form
  // included (converted; see the file comment). On failure the message is `offset N: ...` with N
  // the byte offset into `text` of the offending token.
  static absl::StatusOr<HloSharding> Parse(std::string_view text);
  // Parses one sharding at the start of `text` (leading whitespace allowed) and sets
  // `*consumed` to the offset just past its closing brace. Errors as for Parse.
  static absl::StatusOr<HloSharding> ParsePrefix(std::string_view text, size_t* consumed);
  // The XLA text form; Parse(ToString()) reproduces this sharding and its metadata.
  std::string ToString() const;
  void AppendTo(std::string* out) const;
  // As ToString, without metadata.
  std::string ToStringWithoutMetadata() const;

  // ---- Accessors ---------------------------------------------------------------------------
  Kind kind() const { return kind_; }
  // The OpSharding.Type of this sharding (kOther for kTiled).
  OpShardingType proto_type() const;
  bool IsTuple() const { return kind_ == Kind::kTuple; }
  bool IsTiled() const { return kind_ == Kind::kTiled; }
  // Whether this leaf (or every element of this tuple) is replicated / manual / unknown.
  bool IsReplicated() const;
  bool IsManual() const;
  bool IsUnknown() const;
  // Whether no leaf is split into tiles (replicated, maximal, manual, unknown, unreduced).
  bool IsTileMaximal() const;

  // The device array. REQUIRES: IsTiled().
  const TileAssignment& tile_assignment() const { return tile_assignment_; }
  // Whether the last tile dim is a replication subgroup. False unless IsTiled().
  bool replicate_on_last_tile_dim() const { return replicate_on_last_tile_dim_; }
  // Types of the trailing subgroup dims (`last_tile_dims`); empty unless IsTiled().
  const std::vector<OpShardingType>& subgroup_types() const { return subgroup_types_; }
  // The flattened leaf shardings. Empty unless IsTuple().
  const std::vector<HloSharding>& tuple_elements() const {
    return tuple_elements_ != nullptr ? *tuple_elements_ : NoElements();
  }
  // The tuple elements of a tuple, else this sharding alone.
  absl::Span<const HloSharding> Leaves() const {
    return kind_ == Kind::kTuple ? absl::Span<const HloSharding>(tuple_elements())
                                 : absl::Span<const HloSharding>(this, 1);
  }
  // Metadata entries (see Metadata); always empty on a tuple (elements carry their own).
  const Metadata& metadata() const { return metadata_ != nullptr ? *metadata_ : NoMetadata(); }
  // The shard group; text prints it for leaves only.
  const ShardGroup& shard_group() const { return shard_group_; }
  // How unreduced devices combine: kSum unless this leaf has unreduced devices that say
  // otherwise (see WithReductionOp).
  ReductionOp reduction_op() const { return reduction_op_; }
  // The device of a maximal sharding. REQUIRES: kind() == Kind::kMaximal.
  int64_t maximal_device() const { return maximal_device_; }

  // Tiled: number of leading tile dims that split data (rank minus subgroup dims).
  // Other leaves: 0. REQUIRES: !IsTuple().
  int64_t TiledDataRank() const;
  // How many tiles tile dim `dim` has: 1 unless tiled. REQUIRES: dim < tile rank when tiled.
  int64_t TilesAlong(int64_t dim) const {
    return kind_ == Kind::kTiled ? tile_assignment_.dim(dim) : 1;
  }
  // Number of trailing subgroup dims (1 for last_tile_dim_replicate). 0 unless tiled.
  int64_t NumSubgroupDims() const;
  // Index of the replicated subgroup dim of a tiled sharding, or -1 when there is none.
  int64_t SubgroupReplicationDim() const;
  // Index of the manual subgroup dim of a tiled sharding, or -1 when there is none.
  int64_t SubgroupManualDim() const;
  // Whether this is a tiling with a manual subgroup dim (manual along some mesh axes only).
  bool HasManualSubgroup() const { return IsTiled() && SubgroupManualDim() >= 0; }
  // Whether `device` holds part of this value (always true for replicated, manual, unknown,
  // unreduced).
  bool UsesDevice(int64_t device) const;
  // The single device holding the whole value (maximal, or a tuple all on one device).
  std::optional<int64_t> UniqueDevice() const;

  // ---- Derived values ----------------------------------------------------------------------
  // This sharding with `metadata` (on a tuple: on every element).
  HloSharding WithMetadata(Metadata metadata) const;
  HloSharding WithoutMetadata() const { return WithMetadata({}); }
  // This leaf with its unreduced devices combining by `op`. Fails for a tuple, and for an op
  // other than kSum on a leaf without unreduced devices.
  absl::StatusOr<HloSharding> WithReductionOp(ReductionOp op) const;
  // This sharding with `like`'s reduction op when this one has unreduced devices (for
  // transforms that rebuild a sharding from another's tile assignment); else unchanged.
  HloSharding WithReductionOpOf(const HloSharding& like) const;
  // The metadata entries as printed: metadata() plus, for max or min, the entry naming the op.
  Metadata PrintedMetadata() const;
  // This sharding (a leaf) with the reduction-op metadata entry, if any, taken out of its
  // metadata and applied (WithReductionOp). Fails when the entry names an unknown op or the
  // leaf has no unreduced devices.
  absl::StatusOr<HloSharding> TakeReductionOpFromMetadata() const;
  // This sharding in shard group `group`.
  HloSharding WithShardGroup(ShardGroup group) const;
  // For a tuple `shape` and a non-tuple sharding: the sharding repeated for every leaf (what
  // XLA's parser does with `(f32[], f32[]) parameter(0), sharding={replicated}`); else *this.
  HloSharding NormalizeTupleSharding(const Shape& shape) const;

  // Checks this sharding against a value of `shape` on `num_devices` devices: tiled data rank
  // equals the shape's rank, devices are below `num_devices`, a tuple has one element per leaf
  // (an empty tuple may have zero or one). Token shapes accept any sharding. A non-tuple
  // sharding on a tuple shape is checked against every leaf.
  absl::Status Validate(const Shape& shape, int64_t num_devices) const;

  friend bool operator==(const HloSharding& a, const HloSharding& b);
  friend bool operator!=(const HloSharding& a, const HloSharding& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const HloSharding& s) {
    h = H::combine(std::move(h), static_cast<int>(s.kind_), static_cast<int>(s.shard_group_.kind),
                   s.shard_group_.is_set() ? s.shard_group_.id : -1,
                   static_cast<int>(s.reduction_op_));
    switch (s.kind_) {
      case Kind::kMaximal:
        return H::combine(std::move(h), s.maximal_device_);
      case Kind::kTiled:
        h = H::combine(std::move(h), s.tile_assignment_, s.replicate_on_last_tile_dim_);
        for (OpShardingType t : s.subgroup_types_)
          h = H::combine(std::move(h), static_cast<int>(t));
        return h;
      case Kind::kTuple:
        for (const HloSharding& e : s.tuple_elements()) h = H::combine(std::move(h), e);
        return H::combine(std::move(h), s.tuple_elements().size());
      default:
        return h;
    }
  }

 private:
  explicit HloSharding(Kind kind) : kind_(kind) {}
  void AppendLeaf(std::string* out, bool include_metadata) const;
  void AppendImpl(std::string* out, bool include_metadata) const;
  absl::Status ValidateLeaf(const Shape& shape, int64_t num_devices) const;
  static const std::vector<HloSharding>& NoElements();
  static const Metadata& NoMetadata();
  // Null when empty; shared between copies, never changed once shared.
  static std::shared_ptr<const Metadata> Share(Metadata metadata);

  Kind kind_ = Kind::kReplicated;
  TileAssignment tile_assignment_;
  bool replicate_on_last_tile_dim_ = false;
  std::vector<OpShardingType> subgroup_types_;
  // Immutable once built and shared between copies (null when empty): copying a sharding,
  // which the passes do for nearly every instruction, copies no leaves and no strings.
  std::shared_ptr<const std::vector<HloSharding>> tuple_elements_;
  std::shared_ptr<const Metadata> metadata_;
  ShardGroup shard_group_;
  int64_t maximal_device_ = -1;
  ReductionOp reduction_op_ = ReductionOp::kSum;
};

}  // namespace hlo

#endif  // HLO_SHARDING_HLO_SHARDING_H_
