// HloPassPipeline: runs a sequence of passes, optionally verifying the module around them.
#ifndef HLO_PASS_HLO_PASS_PIPELINE_H_
#define HLO_PASS_HLO_PASS_PIPELINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/hlo_module.h"
#include "hlo/pass/hlo_pass_interface.h"

namespace hlo {

// A pass made of passes, run in the order they were added. Pipelines nest (a pipeline is a
// pass). Run returns whether any pass changed the module and stops at the first error.
//
// With verification on (the default in builds without NDEBUG, i.e. tests and debug builds),
// the module is verified with VerifyModule before the first pass and after every pass. A module
// that fails before the first pass yields the verifier's InvalidArgument error; one that fails
// after pass P yields an Internal error "verifier failed after pass 'P': ..." (a pass broke it).
class HloPassPipeline : public HloModulePass {
 public:
  // Called after each pass (whether or not it changed the module), before that pass's
  // verification, so that a dump taken here (--dump-dir) shows a module that fails it.
  using AfterPassCallback =
      std::function<void(std::string_view pass_name, const HloModule& module)>;

  explicit HloPassPipeline(std::string name);
  ~HloPassPipeline() override;

  std::string_view name() const override { return name_; }

  // Constructs a `T(args...)`, appends it and returns it for further configuration. The
  // pipeline owns the pass. REQUIRES: T derives from HloModulePass.
  template <typename T, typename... Args>
  T& AddPass(Args&&... args) {
    static_assert(std::is_base_of_v<HloModulePass, T>, "T must derive from HloModulePass");
    auto pass = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }

  int64_t num_passes() const { return static_cast<int64_t>(passes_.size()); }

  // Whether to run the verifier before the first pass and after every pass.
  void set_verify_after_each_pass(bool verify) { verify_after_each_pass_ = verify; }
  bool verify_after_each_pass() const { return verify_after_each_pass_; }

  // Installs `callback` (replacing any previous one); an empty function removes it.
  void set_after_pass_callback(AfterPassCallback callback) {
    after_pass_callback_ = std::move(callback);
  }

  // Wall time of each pass of the last Run (verification excluded), in the order they ran.
  const std::vector<std::pair<std::string, double>>& pass_times_ms() const {
    return pass_times_ms_;
  }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule* module) override;

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloModulePass>> passes_;
#ifdef NDEBUG
  bool verify_after_each_pass_ = false;
#else
  bool verify_after_each_pass_ = true;
#endif
  AfterPassCallback after_pass_callback_;
  std::vector<std::pair<std::string, double>> pass_times_ms_;
};

}  // namespace hlo

#endif  // HLO_PASS_HLO_PASS_PIPELINE_H_
