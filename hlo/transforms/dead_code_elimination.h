// Dead code elimination: removes instructions whose values nothing uses (keeping parameters,
// roots and side-effecting instructions) and computations nothing calls. May run anywhere;
// the partitioner's `cleanup` stage runs it last.
//
//   %a = f32[] negate(%p)      <- unused
//   ROOT %b = f32[] add(%p, %p)
//   -> only %p and %b remain.
#ifndef HLO_TRANSFORMS_DEAD_CODE_ELIMINATION_H_
#define HLO_TRANSFORMS_DEAD_CODE_ELIMINATION_H_

#include "hlo/pass/hlo_pass_interface.h"

namespace hlo {

class DeadCodeElimination : public HloModulePass {
 public:
  std::string_view name() const override { return "cleanup"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule* module) override;
};

}  // namespace hlo

#endif  // HLO_TRANSFORMS_DEAD_CODE_ELIMINATION_H_
