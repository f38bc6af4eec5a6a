// Run under `mpirun -np 2` by mpi_transport_test.sh: exchanges through MpiTransport and checks
// what each rank gets back. Prints "ok" per check on rank 0 and exits non-zero on a failure.
//   1. Equal sizes: each rank receives exactly the other's bytes.
//   2. A payload over 1 GiB travels in pieces (MpiSession::PostPieces) and arrives whole.
//   3. A peer whose inputs are shorter than expected (the processes disagree on a shape) is an
//      error naming the byte counts on the rank that expected more -- MPI itself would accept
//      a shorter message into the larger buffer and leave the rest as it was.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/mpi/mpi_session.h"
#include "runtime/mpi/mpi_transport.h"

namespace {

using runtime::CollectiveKey;
using runtime::mpi::MpiSession;
using runtime::mpi::MpiTransport;

int Fail(const char* what) {
  std::fprintf(stderr, "FAIL: %s\n", what);
  return 1;
}

std::vector<uint8_t> Pattern(size_t n, int rank) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 7 + rank * 31);
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<std::unique_ptr<MpiSession>> session = MpiSession::Init(&argc, &argv);
  if (!session.ok() || (*session)->size() != 2) return Fail("needs mpirun -np 2");
  const int rank = (*session)->rank();
  const int peer[1] = {1 - rank};
  MpiTransport transport(**session, /*num_devices=*/2, /*devices_per_process=*/1,
                         /*timeout_seconds=*/60);
  // 1 and 2: the other rank's pattern comes back, byte for byte.
  for (size_t n : {size_t{40}, (size_t{1} << 30) + 17}) {
    const size_t expected[1] = {n};
    absl::StatusOr<std::vector<std::vector<uint8_t>>> got =
        transport.Exchange(CollectiveKey{1, static_cast<int64_t>(n % 1000)}, 0, "%check", peer,
                           Pattern(n, rank), expected);
    if (!got.ok() || got->size() != 1 || (*got)[0] != Pattern(n, 1 - rank)) {
      return Fail("the peer's bytes did not arrive whole");
    }
    if (rank == 0) std::printf("ok: %zu bytes\n", n);
  }
  // 3: rank 1 sends 8 bytes where rank 0 expects 16; rank 0 sends the 16 rank 1 expects.
  const size_t expected[1] = {16};
  absl::StatusOr<std::vector<std::vector<uint8_t>>> got = transport.Exchange(
      CollectiveKey{2, 0}, 0, "%short", peer, Pattern(rank == 0 ? 16 : 8, rank), expected);
  if (rank == 0) {
    if (got.ok()) return Fail("a short peer payload was accepted");
    std::printf("ok: %s\n", std::string(got.status().message()).c_str());
  } else if (!got.ok()) {
    return Fail("rank 1 should receive rank 0's 16 bytes");
  }
  return 0;
}
