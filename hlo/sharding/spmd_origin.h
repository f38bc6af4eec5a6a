// Where each value of an SPMD program comes from: the correspondence the partitioner knows and
// the program text does not say.
//
// For every instruction I of a computation it partitions, the partitioner records which
// instruction of the SPMD program holds I's value on each device, and the sharding that value
// is laid out by (a device holds the padded shard of I's full value); a value the partitioner
// computes again in another layout (spmd/partitioner/rebuild.h) gets a record there too, when
// the rebuild made a new instruction (one that returns an existing instruction, e.g. a marker
// rebuilt as its operand, leaves that instruction to its own record). For
// every partitioned computation it also records the instruction it returns and the sharding the
// caller receives it in. Names identify instructions, so the records survive printing and
// parsing; a record naming an instruction that later passes removed (dead code) describes
// nothing and is skipped, and one naming an instruction common-subexpression elimination merged
// into an earlier one is pointed at that one by the driver (several records may then name one
// instruction; modular verification cuts it once, with the first record's values).
//
// Modular verification (runtime/cpu/modular_verify.h) reads them: each original instruction's
// partitioned form is checked on its own, its operands cut to random values laid out by their
// records.
#ifndef HLO_SHARDING_SPMD_ORIGIN_H_
#define HLO_SHARDING_SPMD_ORIGIN_H_

#include <string>

#include "hlo/sharding/hlo_sharding.h"

namespace hlo {

struct SpmdOrigin {
  enum class Kind {
    kValue,   // `instruction` holds `original_instruction`'s value.
    kReturn,  // `instruction` is what `computation` returns: `original_instruction` (the
              // original root) laid out as `sharding`, the layout its caller receives.
  };
  Kind kind = Kind::kValue;
  std::string computation;  // In the SPMD program.
  std::string instruction;
  std::string original_computation;  // In the unpartitioned module.
  std::string original_instruction;
  HloSharding sharding = HloSharding::Replicate();  // Tuple values: a tuple sharding.
};

}  // namespace hlo

#endif  // HLO_SHARDING_SPMD_ORIGIN_H_
