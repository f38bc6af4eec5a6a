// What a scan's attributes say, read in one place for shape inference, the executors and the
// partitioner.
//
//   scan(inputs..., inits...), dimensions={d}, num_carries=c, is_reverse=true,
//        is_associative=true, to_apply=body
//
// walks dim d of the inputs (last to first when reversed); the body takes the inputs' slices
// at one position (dim d removed) and the carries, and returns that step's outputs and the
// new carries. The result stacks the outputs along d, then the final carries (the one output
// alone when there are no carries). `is_associative` says the body, read as a binary op on
// (slices, carries), is associative: the partitioner may scan blocks apart and combine them.
#ifndef HLO_IR_SCAN_ATTRIBUTES_H_
#define HLO_IR_SCAN_ATTRIBUTES_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_instruction.h"

namespace hlo {

struct ScanAttributes {
  int64_t dimension = 0;
  int64_t num_carries = 0;
  bool reverse = false;
  bool associative = false;
};

// The scan's attributes (num_carries is kept verbatim by the parser, a raw attribute). Fails,
// naming the attribute, when num_carries is missing or not an integer, or the scan does not
// have exactly one dimension. (Ranges against the operands are shape inference's to check.)
absl::StatusOr<ScanAttributes> ReadScanAttributes(const HloInstruction& scan);

}  // namespace hlo

#endif  // HLO_IR_SCAN_ATTRIBUTES_H_
