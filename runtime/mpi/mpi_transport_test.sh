#!/usr/bin/env bash
# MpiTransport between two processes (runtime/mpi/mpi_transport_check.cc under mpirun -np 2).
set -uo pipefail
work=$(mktemp -d /tmp/spmd_mpi.XXXXXX)  # Open MPI's Unix sockets want a short path.
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_vader_single_copy_mechanism=none
# Bazel runs tests in PID namespaces, so two jobs can get the same mpirun pid and job id; their
# shared-memory segments (/dev/shm by default) would then collide. Keep them in $work.
export OMPI_MCA_btl_vader_backing_directory=$work
out=$(timeout 300 mpirun -np 2 --oversubscribe runtime/mpi/mpi_transport_check 2>&1)
status=$?
echo "$out"
[ "$status" -eq 0 ] || { echo "FAIL: exit $status"; exit 1; }
grep -q "sent 8 bytes of inputs, 16 expected" <<< "$out" || { echo "FAIL: no size error"; exit 1; }
echo PASS
