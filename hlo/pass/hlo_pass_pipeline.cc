// HloPassPipeline::RunImpl: verify the input, then for each pass run it, report it to the
// after-pass callback and verify its output.
#include "hlo/pass/hlo_pass_pipeline.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "hlo/verifier/hlo_verifier.h"

namespace hlo {

HloPassPipeline::HloPassPipeline(std::string name) : name_(std::move(name)) {}

HloPassPipeline::~HloPassPipeline() = default;

absl::StatusOr<bool> HloPassPipeline::RunImpl(HloModule* module) {
  if (verify_after_each_pass_ && !passes_.empty()) RETURN_IF_ERROR(VerifyModule(*module));
  bool changed = false;
  pass_times_ms_.clear();
  for (const std::unique_ptr<HloModulePass>& pass : passes_) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> ran = pass->Run(module);
    pass_times_ms_.emplace_back(
        std::string(pass->name()),
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    if (!ran.ok()) return ran.status();
    const bool pass_changed = *ran;
    changed = changed || pass_changed;
    if (after_pass_callback_) after_pass_callback_(pass->name(), *module);
    if (!verify_after_each_pass_) continue;
    absl::Status verified = VerifyModule(*module);
    if (!verified.ok()) {
      const std::string_view pass_name = pass->name();
      return absl::InternalError(absl::StrCat("verifier failed after pass '",
                                              absl::string_view(pass_name.data(), pass_name.size()),
                                              "': ", verified.message()));
    }
  }
  return changed;
}

}  // namespace hlo
