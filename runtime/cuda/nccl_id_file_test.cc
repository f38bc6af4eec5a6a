// The ncclUniqueId file: written atomically by rank 0, read back whole by the others, and a
// clear timeout when it never appears.
#include "runtime/cuda/nccl_id_file.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace runtime {
namespace cuda {
namespace {

std::string TempPath(const char* name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(NcclIdFileTest, RoundTripsWhileReaderWaits) {
  const std::string path = TempPath("nccl_id_roundtrip");
  NcclUniqueId id;
  for (int i = 0; i < 128; ++i) id.bytes[i] = static_cast<char>(i * 7);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(WriteNcclIdFile(path, id).ok());
  });
  absl::StatusOr<NcclUniqueId> read = ReadNcclIdFile(path, 10);
  writer.join();
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(std::memcmp(read->bytes, id.bytes, 128), 0);
}

TEST(NcclIdFileTest, TimesOutWithAClearMessage) {
  absl::StatusOr<NcclUniqueId> read = ReadNcclIdFile(TempPath("never_written"), 0.1);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(read.status().message()), ::testing::HasSubstr("is rank 0 running"));
}

}  // namespace
}  // namespace cuda
}  // namespace runtime
