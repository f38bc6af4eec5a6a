// A job split into processes (collective_transport.h) computes the same bits as one process:
// two hubs joined by an in-memory transport run a loop of all-reduce, collective-permute and
// all-gather whose groups span both, and the results equal RunOnDevices' in one process. A
// process that never arrives becomes a timeout error naming it and the instruction.
#include "runtime/cpu/collective_transport.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/parser/hlo_parser.h"
#include "hlo/strings.h"
#include "runtime/cpu/multi_device_runner.h"

namespace runtime {
namespace {

using ::testing::HasSubstr;

constexpr char kModule[] = R"(
HloModule loop_collectives, num_partitions=4

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%cond (s: (s32[], f32[8])) -> pred[] {
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s: (s32[], f32[8])) -> (s32[], f32[8]) {
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %v = f32[8] get-tuple-element(%s), index=1
  %ar = f32[8] all-reduce(%v), channel_id=1, replica_groups={}, use_global_device_ids=true, to_apply=%add
  %cp = f32[8] collective-permute(%ar), channel_id=2, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  %ag = f32[16] all-gather(%cp), channel_id=3, replica_groups={{0,2},{1,3}}, dimensions={0}, use_global_device_ids=true
  %lo = f32[8] slice(%ag), slice={[0:8]}
  %hi = f32[8] slice(%ag), slice={[8:16]}
  %d = f32[8] subtract(%lo, %hi)
  %w = f32[8] multiply(%d, %v)
  %t = f32[8] tanh(%w)
  %u = f32[8] add(%t, %v)
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  ROOT %r = (s32[], f32[8]) tuple(%next, %u)
}

ENTRY %main {
  %x = f32[8] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[8]) tuple(%zero, %x)
  %loop = (s32[], f32[8]) while(%init), condition=%cond, body=%body
  ROOT %out = f32[8] get-tuple-element(%loop), index=1
}
)";

// Messages between the test's "processes", by (collective, leader, sender, receiver).
class Network {
 public:
  using Key = std::tuple<int64_t, int64_t, int64_t, int, int>;
  void Post(const Key& key, std::vector<uint8_t> bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    mail_[key] = std::move(bytes);
    cv_.notify_all();
  }
  std::optional<std::vector<uint8_t>> Take(const Key& key, double timeout_seconds) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                      [&] { return mail_.count(key) > 0; })) {
      return std::nullopt;
    }
    std::vector<uint8_t> bytes = std::move(mail_[key]);
    mail_.erase(key);
    return bytes;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, std::vector<uint8_t>> mail_;
};

class FakeTransport : public CollectiveTransport {
 public:
  FakeTransport(Network& network, int process, int64_t per_process, double timeout)
      : network_(network), process_(process), per_process_(per_process), timeout_(timeout) {}
  int process() const override { return process_; }
  int ProcessOf(int64_t device) const override { return static_cast<int>(device / per_process_); }
  absl::StatusOr<std::vector<std::vector<uint8_t>>> Exchange(
      const CollectiveKey& key, int64_t leader, std::string_view name, absl::Span<const int> peers,
      std::vector<uint8_t> payload, absl::Span<const size_t> expected_bytes) override {
    for (int peer : peers) {
      network_.Post({key.instruction_id, key.sequence, leader, process_, peer}, payload);
    }
    std::vector<std::vector<uint8_t>> out;
    for (size_t i = 0; i < peers.size(); ++i) {
      std::optional<std::vector<uint8_t>> got =
          network_.Take({key.instruction_id, key.sequence, leader, peers[i], process_}, timeout_);
      if (!got) {
        return absl::DeadlineExceededError(
            hlo::StrCat("collective ", name, ": process ", peers[i], " never sent"));
      }
      EXPECT_EQ(got->size(), expected_bytes[i]);
      out.push_back(*std::move(got));
    }
    return out;
  }

 private:
  Network& network_;
  const int process_;
  const int64_t per_process_;
  const double timeout_;
};

// Device d's argument: values that make a float sum depend on its order.
std::vector<std::vector<hlo::Literal>> Arguments(const hlo::HloModule& module, int64_t first,
                                                 int64_t count) {
  std::vector<std::vector<hlo::Literal>> args;
  for (int64_t d = first; d < first + count; ++d) {
    hlo::Literal x(module.entry_computation()->parameter_instruction(0)->shape());
    for (int64_t i = 0; i < x.element_count(); ++i) {
      x.SetDouble(i, std::sin(1.7 * d + 0.3 * i) * std::pow(10.0, (d + i) % 5 - 2));
    }
    args.push_back({});
    args.back().push_back(std::move(x));
  }
  return args;
}

// Runs `process`'s half of the four devices (two per process).
absl::StatusOr<std::vector<hlo::Literal>> RunHalf(const hlo::HloModule& module,
                                                  FakeTransport& transport) {
  MultiDeviceOptions options;
  options.num_partitions = 4;
  options.collective_timeout_seconds = 0.5;
  options.first_device = 2 * transport.process();
  options.local_devices = 2;
  options.transport = &transport;
  return RunOnDevices(module, Arguments(module, options.first_device, 2), options);
}

TEST(CollectiveTransportTest, TwoProcessesComputeTheSameBitsAsOne) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status();
  MultiDeviceOptions one;
  one.num_partitions = 4;
  absl::StatusOr<std::vector<hlo::Literal>> expected =
      RunOnDevices(**module, Arguments(**module, 0, 4), one);
  ASSERT_TRUE(expected.ok()) << expected.status();
  Network network;
  FakeTransport t0(network, 0, 2, 5.0), t1(network, 1, 2, 5.0);
  absl::StatusOr<std::vector<hlo::Literal>> r0 = absl::UnknownError(""), r1 = r0;
  std::thread other([&] { r1 = RunHalf(**module, t1); });
  r0 = RunHalf(**module, t0);
  other.join();
  ASSERT_TRUE(r0.ok()) << r0.status();
  ASSERT_TRUE(r1.ok()) << r1.status();
  EXPECT_EQ((*r0)[0].data(), (*expected)[0].data());
  EXPECT_EQ((*r0)[1].data(), (*expected)[1].data());
  EXPECT_EQ((*r1)[0].data(), (*expected)[2].data());
  EXPECT_EQ((*r1)[1].data(), (*expected)[3].data());
}

TEST(CollectiveTransportTest, AProcessThatNeverComesIsATimeoutNamingIt) {
  absl::StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status();
  Network network;
  FakeTransport t0(network, 0, 2, 0.3);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<hlo::Literal>> r0 = RunHalf(**module, t0);
  ASSERT_FALSE(r0.ok());
  EXPECT_THAT(std::string(r0.status().message()), HasSubstr("%ar: process 1 never sent"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace runtime
