// File and stdin input, format selection, and atomic output.
#include "hlo/io/module_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>

#include "hlo/parser/foreign_input.h"
#include "hlo/proto/hlo_proto_util.h"
#include "hlo/sdy/sdy_import.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

// Temp files of WriteFileAtomically in flight, removed by the handler of a signal that ends
// the process (SIGINT in a batch left `*.tmp.<pid>` files). Fixed slots of plain chars: the
// handler may only call async-signal-safe functions (unlink, nanosleep, raise).
//
// The handler runs on one thread while the others go on until the kernel ends them, so a temp
// file must never be created after the handler has looked: a writer marks its slot kCreating,
// then checks `dying`; the handler sets `dying`, then waits for every slot another thread is
// creating (sequentially consistent, so at least one of the two sees the other). A writer
// that sees `dying` creates nothing.
constexpr int kTempSlots = 256;
constexpr size_t kTempPathBytes = 4096;
enum TempState : int { kFree = 0, kRegistered = 1, kCreating = 2 };
std::atomic<int> temp_state[kTempSlots];
std::atomic<pid_t> temp_owner[kTempSlots];  // The writer's thread id.
char temp_paths[kTempSlots][kTempPathBytes];
std::atomic<bool> dying{false};

pid_t ThreadId() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// Waits (at most about a second, never forever) until no other thread is creating a temp file.
void WaitForCreators() {
  const pid_t self = ThreadId();
  const struct timespec tick = {0, 100 * 1000};
  for (int i = 0; i < kTempSlots; ++i) {
    for (int waited = 0;
         waited < 10000 && temp_state[i].load() == kCreating && temp_owner[i].load() != self;
         ++waited) {
      ::nanosleep(&tick, nullptr);
    }
  }
}

void RemoveTempsAndReraise(int signal) {
  dying.store(true);
  WaitForCreators();
  for (int i = 0; i < kTempSlots; ++i) {
    if (temp_state[i].load() != kFree) ::unlink(temp_paths[i]);
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void InstallTempCleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      // Only where nobody else handles the signal.
      if (::sigaction(signal, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
        std::signal(signal, &RemoveTempsAndReraise);
      }
    }
  });
}

// Registers `path` for removal on a fatal signal; returns its slot (-1: none free, or too long).
int ClaimTempSlot(const std::string& path) {
  InstallTempCleanup();
  if (path.size() >= kTempPathBytes) return -1;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  for (int i = 0; i < kTempSlots; ++i) {
    if (temp_state[i].load() != kFree) continue;
    std::memcpy(temp_paths[i], path.c_str(), path.size() + 1);
    temp_owner[i].store(ThreadId());
    temp_state[i].store(kRegistered);
    return i;
  }
  return -1;
}

void ReleaseTempSlot(int slot) {
  if (slot >= 0) temp_state[slot].store(kFree);
}

// Creates (truncates) the temp file of `slot` unless a fatal signal is being handled; -1 with
// errno set when it was not created.
int CreateTempFile(const std::string& tmp, int slot) {
  if (slot >= 0) temp_state[slot].store(kCreating);
  int fd = -1;
  if (dying.load()) {
    errno = EINTR;
  } else {
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  }
  if (slot >= 0) temp_state[slot].store(kRegistered);
  return fd;
}

// Writes all of `bytes` to `fd` and closes it; false (errno set) on any failure.
bool WriteAllAndClose(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return ::close(fd) == 0;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Text unless a control character other than blank space shows in the first 64 KiB: a
// serialized proto has them in its first bytes (field tags, lengths), and text never does.
bool LooksLikeText(std::string_view contents) {
  constexpr size_t kSniffBytes = 64 << 10;
  for (unsigned char c : contents.substr(0, kSniffBytes)) {
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') || c == 0x7f) {
      return false;
    }
  }
  return true;
}

// The proto reader's error, or what the input is when it is a format JAX gives by default.
absl::Status ProtoError(std::string_view display, std::string_view contents,
                        const absl::Status& status) {
  std::optional<NonHloInput> other = DescribeNonHloInput(contents);
  return absl::InvalidArgumentError(
      StrCat(display, ": error: ", other ? other->message : ToStd(status.message())));
}

}  // namespace

ModuleFormat FormatForPath(std::string_view path) {
  if (EndsWith(path, ".pb") || EndsWith(path, ".binpb")) return ModuleFormat::kProto;
  return ModuleFormat::kText;
}

absl::StatusOr<std::string> ReadInput(const std::string& path) {
  const std::string display = path == "-" ? "<stdin>" : path;
  int fd = STDIN_FILENO;
  if (path != "-") {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return absl::NotFoundError(StrCat(path, ": error: cannot open: ", std::strerror(errno)));
    }
  }
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    if (fd != STDIN_FILENO) ::close(fd);
    return absl::InvalidArgumentError(StrCat(display, ": error: is a directory, not a file"));
  }
  // Read in chunks up to the limit: a device such as /dev/zero never ends by itself.
  std::string contents;
  char buffer[1 << 16];
  absl::Status status = absl::OkStatus();
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      status = absl::DataLossError(StrCat(display, ": error: read failed: ", std::strerror(errno)));
      break;
    }
    if (contents.size() + static_cast<size_t>(n) > kMaxInputBytes) {
      status = absl::ResourceExhaustedError(StrCat(display, ": error: input is larger than ",
                                                   kMaxInputBytes >> 30,
                                                   " GiB, the most one module may take"));
      break;
    }
    contents.append(buffer, static_cast<size_t>(n));
  }
  if (fd != STDIN_FILENO) ::close(fd);
  if (!status.ok()) return status;
  return contents;
}

absl::StatusOr<ParsedModule> ParseModuleFile(const std::string& path, std::string_view contents) {
  const std::string display = path == "-" ? "<stdin>" : path;
  const bool text =
      path == "-" ? LooksLikeText(contents) : FormatForPath(path) == ModuleFormat::kText;
  ParsedModule parsed;
  if (text) {
    ASSIGN_OR_RETURN(parsed, ParseHloModuleWithLocations(contents, display));
  } else {
    absl::StatusOr<std::unique_ptr<HloModule>> module = ParseModuleProtoBytes(contents);
    if (!module.ok()) return ProtoError(display, contents, module.status());
    parsed.module = *std::move(module);
    parsed.filename = display;
  }
  if (absl::Status s = sdy::ImportShardy(parsed.module.get()); !s.ok()) {
    return absl::InvalidArgumentError(parsed.Locate(ToStd(s.message())));
  }
  return parsed;
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    // A device or pipe (e.g. /dev/null, /dev/stdout): no rename is possible; write in place.
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) return absl::DataLossError(StrCat(path, ": error: write failed"));
    return absl::OkStatus();
  }
  const std::string tmp = StrCat(path, ".tmp.", ::getpid());
  const int slot = ClaimTempSlot(tmp);
  struct Release {
    int slot;
    ~Release() { ReleaseTempSlot(slot); }
  } release{slot};
  const int fd = CreateTempFile(tmp, slot);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        StrCat(path, ": error: cannot write: ", std::strerror(errno)));
  }
  if (!WriteAllAndClose(fd, bytes)) {
    std::string reason = std::strerror(errno);
    std::remove(tmp.c_str());
    return absl::DataLossError(StrCat(path, ": error: write failed: ", reason));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    std::remove(tmp.c_str());
    return absl::PermissionDeniedError(StrCat(path, ": error: cannot rename into place: ", reason));
  }
  return absl::OkStatus();
}

}  // namespace hlo
