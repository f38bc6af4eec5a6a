// HloModulePass::Run: argument check and error annotation around RunImpl.
#include "hlo/pass/hlo_pass_interface.h"

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"

namespace hlo {

HloModulePass::~HloModulePass() = default;

absl::StatusOr<bool> HloModulePass::Run(HloModule* module) {
  RET_CHECK(module != nullptr);
  absl::StatusOr<bool> changed = RunImpl(module);
  if (changed.ok()) return changed;
  const std::string_view pass = name();
  return absl::Status(changed.status().code(),
                      absl::StrCat("pass ", absl::string_view(pass.data(), pass.size()), ": ",
                                   changed.status().message()));
}

}  // namespace hlo
