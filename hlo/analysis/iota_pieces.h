// Parts of an integer array that hold their own coordinate along a dimension: an iota (or a
// constant equal to one), a 1-D iota broadcast along that dimension, or such an operand of a
// concatenate. Index arrays of
// gathers and scatters are built so (jnp.take_along_axis: the batch positions as an iota beside
// the computed indices); the partitioner splits the operand dims they address like batch dims,
// and the modular verifier keeps those parts when it draws a random stand-in for the value.
//
//   i = s32[8,6,2] concatenate(broadcast(s32[8] iota()), dimensions={0}), p), dimensions={2}
//     => {concat_dim 2, [0, 1), dim 0}: i[a, b, 0] == a
#ifndef HLO_ANALYSIS_IOTA_PIECES_H_
#define HLO_ANALYSIS_IOTA_PIECES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/ir/hlo_instruction.h"

namespace hlo {

// The elements of a value whose coordinate along `concat_dim` is in [begin, end) (every
// element when concat_dim is -1) hold their coordinate along `dim`.
struct IotaPiece {
  int64_t concat_dim = -1;
  int64_t begin = 0;
  int64_t end = 0;
  int64_t dim = 0;
};

// Whether every element of `value` (an integer array) is its coordinate along `dim`: an iota
// along it, an integer constant holding those values (dim of size > 1, at most 65536
// elements), or a 1-D one of either broadcast along it.
bool IsIotaAlong(const HloInstruction& value, int64_t dim);

// The iota pieces of `value`: itself when it is an iota along some dim, else the operands of a
// concatenate that are iotas along a dim other than the concatenated one. Empty otherwise.
std::vector<IotaPiece> IotaPieces(const HloInstruction& value);

// The value an iota piece of `pieces` gives the element at `coordinates`, or nullopt when no
// piece covers it.
std::optional<int64_t> IotaValueAt(const std::vector<IotaPiece>& pieces,
                                   const std::vector<int64_t>& coordinates);

}  // namespace hlo

#endif  // HLO_ANALYSIS_IOTA_PIECES_H_
