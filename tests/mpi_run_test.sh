#!/usr/bin/env bash
# spmd-run across MPI processes (mpirun, Open MPI) computes the in-process executor's bits:
# the #4062 example, the Megatron MLPs, a windowed-einsum loop and a while loop with
# collectives inside each run with -np 4 (one or two devices per process) and -np 8 with two
# devices per process (16 devices), and every output .npy equals the in-process run's byte for
# byte (cmp). One --verify under mpirun checks rank 0's reference path too.
# With --per-process-io every rank reads its own devices' arguments (drawn from the seed, or
# --inputs files: device_<d>/ and shared ones) and writes its own devices' results: the same
# files, the same bytes; an unreadable input names its rank and leaves no outputs; --verify is
# refused with it.
set -uo pipefail
RUN=tools/spmd-run
PARTITION=tools/spmd-partition
T=tests/testdata
# Open MPI's session directory holds Unix sockets: keep its path short (not under Bazel's).
work=$(mktemp -d /tmp/spmd_mpi.XXXXXX)
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_vader_single_copy_mechanism=none
# Bazel runs tests in PID namespaces, so two jobs can get the same mpirun pid and job id; their
# shared-memory segments (/dev/shm by default) would then collide. Keep them in $work.
export OMPI_MCA_btl_vader_backing_directory=$work
fail() { echo "FAIL: $*"; exit 1; }
cases=0

# same NAME NP K ARGS...: the outputs of `spmd-run ARGS` in one process and under
# `mpirun -np NP` with K devices per process (and $MPI_FLAGS) are the same files with the same
# bytes, and no staged file is left.
MPI_FLAGS=""
same() {
  local name=$1 np=$2 k=$3
  shift 3
  "$RUN" "$@" --outputs "$work/$name.one" > "$work/$name.one.log" 2>&1 ||
    { cat "$work/$name.one.log"; fail "$name: in-process run"; }
  # shellcheck disable=SC2086
  mpirun -np "$np" --oversubscribe "$RUN" --mpi --devices-per-process "$k" $MPI_FLAGS "$@" \
    --outputs "$work/$name.mpi" > "$work/$name.mpi.log" 2>&1 ||
    { cat "$work/$name.mpi.log"; fail "$name: mpirun -np $np"; }
  local files
  files=$(cd "$work/$name.one" && find . -name '*.npy' | sort)
  [ -n "$files" ] || fail "$name: no outputs"
  [ "$files" = "$(cd "$work/$name.mpi" && find . -name '*.npy' | sort)" ] ||
    fail "$name: the MPI run wrote other files"
  [ -z "$(find "$work/$name.mpi" -name '*.staged')" ] || fail "$name: staged files left behind"
  for f in $files; do
    cmp -s "$work/$name.one/$f" "$work/$name.mpi/$f" || fail "$name: $f differs from the in-process result"
  done
  cases=$((cases + 1))
}

"$PARTITION" --dot-strategy windowed-ag-bidir "$T/mpi/windowed_dot_4.hlo" > "$work/windowed_4.hlo" ||
  fail "partitioning windowed_dot_4"
"$PARTITION" --dot-strategy windowed-ag-bidir "$T/mpi/windowed_dot_16.hlo" > "$work/windowed_16.hlo" ||
  fail "partitioning windowed_dot_16"
grep -q 'while(' "$work/windowed_4.hlo" && grep -q 'collective-permute(' "$work/windowed_4.hlo" ||
  fail "windowed_dot_4 has no windowed-einsum loop"

same 4062_np4 4 2 "$T/xla_4062_dot_small.hlo" --seed 3
same megatron_np4 4 1 "$T/propagation/megatron_mlp_2x2.hlo" --seed 4
same windowed_np4 4 1 --partitioned "$work/windowed_4.hlo" --seed 5
same while_np4 4 1 --partitioned "$T/mpi/while_collectives_4.hlo" --seed 6
same 4062_np8 8 2 "$T/mpi/xla_4062_dot_16.hlo" --seed 7
same megatron_np8 8 2 "$T/mpi/megatron_mlp_4x4.hlo" --seed 8
same windowed_np8 8 2 --partitioned "$work/windowed_16.hlo" --seed 9
same while_np8 8 2 --partitioned "$T/mpi/while_collectives_16.hlo" --seed 10

# Per-process I/O: arguments drawn on each rank from the seed (devices d depend only on the seed
# and d), and read from files: device_<d>/param_0.npy for devices 0-2, the shared param_0.npy
# for device 3 (the files are an earlier run's f32[64] results, the program's argument shape).
MPI_FLAGS=--per-process-io
same pp_4062_np4 4 2 "$T/xla_4062_dot_small.hlo" --seed 3
same pp_megatron_np8 8 2 "$T/mpi/megatron_mlp_4x4.hlo" --seed 8
same pp_windowed_np4 4 1 --partitioned "$work/windowed_4.hlo" --seed 5
in="$work/pp_inputs"
for d in 0 1 2; do
  mkdir -p "$in/device_$d" && cp "$work/while_np4.one/device_$d/output.npy" "$in/device_$d/param_0.npy"
done
cp "$work/while_np4.one/device_3/output.npy" "$in/param_0.npy"
same pp_while_files_np4 4 1 --partitioned "$T/mpi/while_collectives_4.hlo" --inputs "$in"
"$RUN" --partitioned "$T/mpi/while_collectives_4.hlo" --outputs "$work/while_seed0" > /dev/null ||
  fail "while_collectives_4 on seed 0"
for d in 0 3; do
  cmp -s "$work/pp_while_files_np4.mpi/device_$d/output.npy" "$work/while_seed0/device_$d/output.npy" &&
    fail "pp_while_files_np4: device $d's --inputs file was not read"
done
MPI_FLAGS=""

# Without --outputs every rank prints its own devices' results.
out=$(mpirun -np 4 --oversubscribe "$RUN" --mpi --per-process-io --partitioned \
  "$T/mpi/while_collectives_4.hlo" 2>&1) || { echo "$out"; fail "--per-process-io printing"; }
for d in 0 1 2 3; do
  [ "$(grep -c "^device $d output: f32\[64\]" <<< "$out")" -eq 1 ] ||
    { echo "$out"; fail "device $d's result is not printed once"; }
done

# An input only rank 2's devices read is missing: the error names the file and rank 2, the
# job exits 1 without aborting, and no process writes an output.
rm "$in/device_2/param_0.npy"
rm -rf "$work/pp_missing"
out=$(mpirun -np 4 --oversubscribe "$RUN" --mpi --per-process-io --partitioned --inputs "$in" \
  --outputs "$work/pp_missing" "$T/mpi/while_collectives_4.hlo" 2>&1)
rc=$?
[ "$rc" -eq 1 ] || { echo "$out"; fail "a missing input: exit code $rc, not 1"; }
grep -q "device_2/param_0.npy: error: .*(rank 2 of 4)" <<< "$out" ||
  { echo "$out"; fail "a missing input: no error naming the file and rank 2"; }
grep -q "MPI_ABORT" <<< "$out" && { echo "$out"; fail "a missing input aborted the job"; }
[ -z "$(find "$work/pp_missing" -type f 2>/dev/null)" ] ||
  { find "$work/pp_missing"; fail "a missing input left outputs"; }

# --verify compares on rank 0, which would hold everything: refused as a usage error.
out=$(mpirun -np 2 --oversubscribe "$RUN" --mpi --per-process-io --verify \
  "$T/propagation/megatron_mlp_2x2.hlo" 2>&1)
rc=$?
[ "$rc" -eq 2 ] || { echo "$out"; fail "--verify --per-process-io: exit code $rc, not 2"; }
grep -q -- "--per-process-io" <<< "$out" || { echo "$out"; fail "the refusal does not name --per-process-io"; }

out=$(mpirun -np 4 --oversubscribe "$RUN" --mpi --verify "$T/propagation/megatron_mlp_2x2.hlo" 2>&1) ||
  { echo "$out"; fail "--verify under mpirun"; }
grep -q '^verification passed' <<< "$out" || { echo "$out"; fail "no verdict from rank 0"; }
[ "$(grep -c '^verification passed' <<< "$out")" -eq 1 ] || { echo "$out"; fail "more than rank 0 reported"; }
echo "PASS: $cases programs equal bit for bit across processes, and --verify passes"
