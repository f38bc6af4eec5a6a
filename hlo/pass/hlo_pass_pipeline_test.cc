// Tests for HloModulePass::Run and HloPassPipeline: change reporting, ordering, the after-pass
// callback, error annotation, and verification before and after passes.
#include "hlo/pass/hlo_pass_pipeline.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/pass/hlo_pass_interface.h"

namespace hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Shape F32(std::vector<int64_t> dims) { return Shape::Array(PrimitiveType::kF32, dims); }

// entry(p0: f32[4]) = negate(p0), a valid module.
std::unique_ptr<HloModule> MakeModule() {
  auto module = std::make_unique<HloModule>("m");
  auto c = std::make_unique<HloComputation>("entry");
  auto p = HloInstruction::Create(HloOpcode::kParameter, F32({4}), {});
  p->set_name("p0");
  HloInstruction* p0 = c->AddInstruction(std::move(p));
  auto neg = HloInstruction::Create(HloOpcode::kNegate, F32({4}), {p0});
  neg->set_name("neg");
  c->set_root_instruction(c->AddInstruction(std::move(neg)));
  module->set_entry_computation(module->AddComputation(std::move(c)));
  return module;
}

// Records its runs in `log`; reports `changed`.
class LoggingPass : public HloModulePass {
 public:
  LoggingPass(std::string name, bool changed, std::vector<std::string>* log)
      : name_(std::move(name)), changed_(changed), log_(log) {}
  std::string_view name() const override { return name_; }
  void set_changed(bool changed) { changed_ = changed; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule*) override {
    log_->push_back("run " + name_);
    return changed_;
  }

 private:
  std::string name_;
  bool changed_;
  std::vector<std::string>* log_;
};

// Makes the root's declared shape wrong, which the verifier catches.
class BreakingPass : public HloModulePass {
 public:
  std::string_view name() const override { return "breaker"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule* module) override {
    *module->entry_computation()->root_instruction()->mutable_shape() = F32({5});
    return true;
  }
};

class FailingPass : public HloModulePass {
 public:
  std::string_view name() const override { return "failing"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule*) override {
    return absl::FailedPreconditionError("boom");
  }
};

TEST(HloModulePassTest, RunAnnotatesErrorsAndChecksModule) {
  FailingPass pass;
  std::unique_ptr<HloModule> module = MakeModule();
  absl::StatusOr<bool> result = pass.Run(module.get());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(result.status().message(), "pass failing: boom");
  absl::StatusOr<bool> null_result = pass.Run(nullptr);
  EXPECT_EQ(null_result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(null_result.status().message()),
              HasSubstr("RET_CHECK failure: module != nullptr"));
}

TEST(HloPassPipelineTest, RunsPassesInOrderAndOrsChanged) {
  std::vector<std::string> log;
  HloPassPipeline pipeline("pipe");
  pipeline.AddPass<LoggingPass>("a", false, &log);
  LoggingPass& b = pipeline.AddPass<LoggingPass>("b", false, &log);
  EXPECT_EQ(pipeline.num_passes(), 2);
  std::unique_ptr<HloModule> module = MakeModule();
  absl::StatusOr<bool> changed = pipeline.Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  b.set_changed(true);  // AddPass returned the owned pass for configuration.
  changed = pipeline.Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_THAT(log, ElementsAre("run a", "run b", "run a", "run b"));
}

TEST(HloPassPipelineTest, CallbackSeesEveryPass) {
  std::vector<std::string> log;
  HloPassPipeline pipeline("pipe");
  pipeline.AddPass<LoggingPass>("a", false, &log);
  pipeline.AddPass<LoggingPass>("b", true, &log);
  pipeline.set_after_pass_callback([&](std::string_view pass, const HloModule& module) {
    log.push_back("after " + std::string(pass) + " on " + module.name());
  });
  std::unique_ptr<HloModule> module = MakeModule();
  ASSERT_TRUE(pipeline.Run(module.get()).ok());
  EXPECT_THAT(log, ElementsAre("run a", "after a on m", "run b", "after b on m"));
}

TEST(HloPassPipelineTest, VerifierCatchesBrokenModuleAfterPass) {
  std::vector<std::string> log;
  HloPassPipeline pipeline("pipe");
  pipeline.set_verify_after_each_pass(true);
  pipeline.AddPass<BreakingPass>();
  pipeline.AddPass<LoggingPass>("never", false, &log);
  pipeline.set_after_pass_callback(
      [&](std::string_view pass, const HloModule&) { log.push_back(std::string(pass)); });
  std::unique_ptr<HloModule> module = MakeModule();
  absl::StatusOr<bool> result = pipeline.Run(module.get());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(result.status().message(),
            "pass pipe: verifier failed after pass 'breaker': instruction %neg: inferred shape "
            "f32[4] does not match declared f32[5]");
  // The callback ran before verification (so a dump shows the broken module); no later pass.
  EXPECT_THAT(log, ElementsAre("breaker"));
}

TEST(HloPassPipelineTest, VerificationCanBeTurnedOff) {
  HloPassPipeline pipeline("pipe");
  pipeline.set_verify_after_each_pass(false);
  EXPECT_FALSE(pipeline.verify_after_each_pass());
  pipeline.AddPass<BreakingPass>();
  std::unique_ptr<HloModule> module = MakeModule();
  absl::StatusOr<bool> result = pipeline.Run(module.get());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(*result);
}

TEST(HloPassPipelineTest, InvalidInputIsReportedBeforeTheFirstPass) {
  std::vector<std::string> log;
  HloPassPipeline pipeline("pipe");
  pipeline.set_verify_after_each_pass(true);
  pipeline.AddPass<LoggingPass>("a", true, &log);
  std::unique_ptr<HloModule> module = MakeModule();
  module->set_entry_computation(nullptr);
  absl::StatusOr<bool> result = pipeline.Run(module.get());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "pass pipe: module m: entry computation is not set");
  EXPECT_TRUE(log.empty());
}

TEST(HloPassPipelineTest, PassErrorStopsThePipeline) {
  std::vector<std::string> log;
  HloPassPipeline pipeline("pipe");
  pipeline.AddPass<FailingPass>();
  pipeline.AddPass<LoggingPass>("never", true, &log);
  std::unique_ptr<HloModule> module = MakeModule();
  absl::StatusOr<bool> result = pipeline.Run(module.get());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(result.status().message(), "pass pipe: pass failing: boom");
  EXPECT_TRUE(log.empty());
}

TEST(HloPassPipelineTest, PipelinesNest) {
  std::vector<std::string> log;
  HloPassPipeline outer("outer");
  outer.AddPass<LoggingPass>("first", false, &log);
  HloPassPipeline& inner = outer.AddPass<HloPassPipeline>("inner");
  inner.AddPass<LoggingPass>("nested", true, &log);
  std::unique_ptr<HloModule> module = MakeModule();
  absl::StatusOr<bool> changed = outer.Run(module.get());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_THAT(log, ElementsAre("run first", "run nested"));
}

TEST(HloPassPipelineTest, DefaultVerificationFollowsBuildMode) {
  HloPassPipeline pipeline("pipe");
#ifdef NDEBUG
  EXPECT_FALSE(pipeline.verify_after_each_pass());
#else
  EXPECT_TRUE(pipeline.verify_after_each_pass());
#endif
}

}  // namespace
}  // namespace hlo
