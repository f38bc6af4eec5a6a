// The one pass interface (docs/style.md, "Adopt" 3): a public non-virtual Run that wraps a
// protected virtual RunImpl returning whether the module changed.
#ifndef HLO_PASS_HLO_PASS_INTERFACE_H_
#define HLO_PASS_HLO_PASS_INTERFACE_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"

namespace hlo {

// A transformation of a whole module. Subclasses implement `name` and `RunImpl`; callers use
// `Run`. A pass must leave the module valid for the verifier (hlo/verifier) whenever it returns
// OK; when it returns an error the module may be partly transformed and should be discarded.
class HloModulePass {
 public:
  virtual ~HloModulePass();

  // A short, stable name (used in pipeline error messages and dump file names).
  virtual std::string_view name() const = 0;

  // Runs the pass on `module`. Returns whether the module changed. An error from RunImpl is
  // returned with "pass NAME: " prepended to its message (same status code).
  // REQUIRES: `module` is not null.
  absl::StatusOr<bool> Run(HloModule* module);

 protected:
  // The transformation itself. Called only through Run, with a non-null `module`.
  virtual absl::StatusOr<bool> RunImpl(HloModule* module) = 0;
};

}  // namespace hlo

#endif  // HLO_PASS_HLO_PASS_INTERFACE_H_
