#!/usr/bin/env bash
# All-reduce and all-gather bandwidth over MPI between 4 local processes as fractions of memcpy
# bandwidth measured in the same run (bench/mpi_collective_bench.cc says how each is counted).
#   bench/mpi_bench.sh [PROCESSES=4] [MAX_MIB=64]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bazel build -c opt //bench:mpi_collective_bench
BIN="$(bazel info -c opt bazel-bin 2>/dev/null)/bench/mpi_collective_bench"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
mpirun -np "${1:-4}" --oversubscribe "$BIN" "${2:-64}"
