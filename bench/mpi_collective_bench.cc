// All-reduce and all-gather bandwidth over MPI between the processes of one job (mpirun -np 4
// on one machine: Open MPI's shared-memory transport), each as a fraction of the memcpy
// bandwidth rank 0 measures in the same run, so the figure survives the machine's load.
//
// Bandwidths are bus bandwidths in the nccl-tests sense: the bytes each rank must move per
// second -- all-reduce of S bytes: 2 (n-1)/n x S / t; all-gather of an S-byte result:
// (n-1)/n x S / t -- against memcpy of S bytes (read S + write S) over its time. These use
// MPI's own collectives (MPI_Allreduce / MPI_Allgather); spmd-run's program collectives do not
// (their reduction order must be the in-process executor's), so they are a bound on what the
// transport can give, not spmd-run's rate.
//
//   mpirun -np 4 bazel-bin/bench/mpi_collective_bench [MAX_MIB]    (bench/mpi_bench.sh)
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

// The fastest of enough repetitions to fill about 0.3 s (at least 3), in seconds; every rank
// runs `op` the same number of times (rank 0 decides).
double BestTime(const std::function<void()>& op) {
  op();  // Warm up: page faults, MPI's connection set-up.
  double best = 1e30, spent = 0;
  int reps = 0;
  while (true) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    op();
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best = std::min(best, t);
    spent += t;
    int more = ++reps < 3 || spent < 0.3;
    MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!more) return best;
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const size_t max_mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  if (rank == 0) {
    std::printf("%d processes; bus bandwidth in GB/s and as a fraction of memcpy's\n", n);
    std::printf("%10s %10s %12s %8s %12s %8s\n", "bytes", "memcpy", "all-reduce", "frac",
                "all-gather", "frac");
  }
  for (size_t mib = 1; mib <= max_mib; mib *= 4) {
    const size_t bytes = mib << 20;
    const size_t floats = bytes / sizeof(float);
    std::vector<float> in(floats, 1.0f), out(floats, 0.0f);
    double memcpy_s = 0;
    if (rank == 0) {
      // Alone: the others wait at the barrier inside BestTime's broadcast loop.
      memcpy_s = 1e30;
      for (int r = 0; r < 10; ++r) {
        const auto start = std::chrono::steady_clock::now();
        std::memcpy(out.data(), in.data(), bytes);
        memcpy_s = std::min(
            memcpy_s,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
    const double allreduce_s = BestTime([&] {
      MPI_Allreduce(in.data(), out.data(), static_cast<int>(floats), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    });
    const int chunk = static_cast<int>(floats / n);
    const double allgather_s = BestTime([&] {
      MPI_Allgather(in.data(), chunk, MPI_FLOAT, out.data(), chunk, MPI_FLOAT, MPI_COMM_WORLD);
    });
    if (rank == 0) {
      const double gathered = static_cast<double>(chunk) * n * sizeof(float);
      const double memcpy_bw = 2.0 * bytes / memcpy_s / 1e9;  // Read and write.
      const double ar_bw = 2.0 * (n - 1) / n * bytes / allreduce_s / 1e9;
      const double ag_bw = (n - 1.0) / n * gathered / allgather_s / 1e9;
      std::printf("%10zu %10.2f %12.2f %8.3f %12.2f %8.3f\n", bytes, memcpy_bw, ar_bw,
                  ar_bw / memcpy_bw, ag_bw, ag_bw / memcpy_bw);
    }
  }
  MPI_Finalize();
  return 0;
}
