#!/usr/bin/env bash
# tools/gpu_check.sh -- the CUDA executor's check on a machine with an NVIDIA GPU (H100/H200,
# sm_90), in under 8 minutes:
#   1. builds spmd-run, the CUDA tests and cuda_bench;
#   2. runs the CUDA tests (//runtime/cuda/...; gpu_test needs the GPU);
#   3. verifies examples with the CUDA backend against the CPU executor with 1, 2 and 8 logical
#      devices on one GPU (CUDA_VISIBLE_DEVICES=0: collectives by device-to-device copies);
#   4. runs a program using every collective over NCCL at world size 1 (the multi-process
#      launch path: RANK/WORLD_SIZE/LOCAL_RANK and an id file) and compares its outputs with
#      the CPU executor's, bit for bit; then (with 2 GPUs) every collective between 2 processes
#      started by mpirun (spmd-run --mpi: the ncclUniqueId sent over MPI), also bit for bit;
#   5. benchmarks an 8192^3 bf16 dot against cuBLAS in the same run (target >= 90%) and the
#      all-reduce bus bandwidth (NCCL over all GPUs; copies among 8 logical devices);
# and prints a table last. Exit status 0 when every check passes.
# Environment: BAZEL (default bazel), BAZEL_OUTPUT_BASE (default /tmp/bazel-ob-gpucheck),
# DOT_SIZE (8192), DOT_TARGET_PCT (90). SPMD_PREBUILT=DIR runs the binaries tools/gpu_bundle.sh
# put in DIR instead of building (for a GPU machine without Bazel); it finds cuBLAS, NCCL and
# cudart on the machine (the CUDA toolkit's lib64, or pip's nvidia packages). Without a GPU, SPMD_CUDA_DEVICE=host dry-runs the
# plumbing (steps 3 pass on the host device; the GPU-only checks fail, saying why).
set -uo pipefail
cd "$(dirname "$0")/.."

BAZEL=${BAZEL:-bazel}
OB=${BAZEL_OUTPUT_BASE:-/tmp/bazel-ob-gpucheck}
DOT_SIZE=${DOT_SIZE:-8192}
DOT_TARGET_PCT=${DOT_TARGET_PCT:-90}
WORK=$(mktemp -d /tmp/gpu_check.XXXXXX)
START=$(date +%s)
ROWS=()
FAILED=0

row() {  # row CHECK RESULT DETAIL
  ROWS+=("$(printf '%-44s %-5s %s' "$1" "$2" "$3")")
  [[ $2 == FAIL ]] && FAILED=1
  echo "== $1: $2 $3"
}

step() {  # step SECONDS LOGNAME COMMAND... -> exit status; output in $WORK/LOGNAME.log
  local limit=$1 name=$2
  shift 2
  timeout "$limit" "$@" >"$WORK/$name.log" 2>&1
}

BZ=("$BAZEL" --output_base="$OB")
cuda_lib_dirs() {  # the folders holding the CUDA libraries the binaries link, ':'-separated
  local lib dirs=()
  for lib in libcublasLt.so.13 libcublas.so.13 libnccl.so.2 libcudart.so.13; do
    dirs+=("$(dirname "$(find /usr/local/cuda*/ /usr/lib /opt /usr/local/lib -name "$lib" \
      2>/dev/null | head -1)")")
  done
  printf '%s\n' "${dirs[@]}" | awk '!seen[$0]++ && $0 != "."' | paste -sd:
}
if [[ -n ${SPMD_PREBUILT:-} ]]; then
  BIN=$(cd "$SPMD_PREBUILT" && pwd)
  export LD_LIBRARY_PATH="$BIN/lib:$(cuda_lib_dirs)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "gpu_check: prebuilt binaries of commit $(cat "$BIN/COMMIT"); LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  if "$BIN/tools/spmd-run" --help >"$WORK/build.log" 2>&1; then
    row "prebuilt binaries (commit $(cat "$BIN/COMMIT"))" PASS "they load"
  else
    row "prebuilt binaries (commit $(cat "$BIN/COMMIT"))" FAIL "$(tail -1 "$WORK/build.log")"
  fi
elif ! command -v "$BAZEL" >/dev/null; then
  echo "gpu_check: '$BAZEL' not found: install Bazel 4.2.3 (Debian: bazel-bootstrap) or set BAZEL" >&2
  exit 1
fi

# ---- 1. Build ----------------------------------------------------------------------------------
if [[ -n ${SPMD_PREBUILT:-} ]]; then
  :
elif step 300 build "${BZ[@]}" build --symlink_prefix=/ //tools:spmd-run //runtime/cuda:cuda_bench \
    //runtime/cuda/...; then
  row "build (nvcc sm_90, spmd-run, cuda_bench)" PASS ""
else
  row "build (nvcc sm_90, spmd-run, cuda_bench)" FAIL "see $WORK/build.log"
  tail -30 "$WORK/build.log"
fi
[[ -n ${SPMD_PREBUILT:-} ]] || BIN=$("${BZ[@]}" info --symlink_prefix=/ bazel-bin 2>/dev/null)
RUN="$BIN/tools/spmd-run"

# ---- 2. CUDA tests -------------------------------------------------------------------------------
# Runs each test binary of the bundle ($1: the bundle, $2: a scratch folder); fails if any fails.
PREBUILT_TESTS='status=0
for t in "$1"/runtime/cuda/*_test; do
  if TEST_TMPDIR="$2" "$t"; then echo "//runtime/cuda:${t##*/} PASSED in bundle"
  else echo "//runtime/cuda:${t##*/} FAILED"; status=1; fi
done
exit $status'
if [[ -n ${SPMD_PREBUILT:-} ]]; then
  tests_cmd=(bash -c "$PREBUILT_TESTS" _ "$BIN" "$WORK")
else
  tests_cmd=("${BZ[@]}" test --symlink_prefix=/ --test_output=all //runtime/cuda/...)
fi
if step 240 tests "${tests_cmd[@]}"; then
  skipped=$(grep -c 'SKIPPED \] GpuTest\..* ms)' "$WORK/tests.log")
  if [[ $skipped -gt 0 ]]; then
    row "CUDA tests (//runtime/cuda/...)" FAIL "gpu_test skipped $skipped cases: $(grep -m1 'no usable GPU' "$WORK/tests.log")"
  else
    row "CUDA tests (//runtime/cuda/...)" PASS "$(grep -c ' PASSED in ' "$WORK/tests.log") targets passed, gpu_test ran on the GPU"
  fi
else
  row "CUDA tests (//runtime/cuda/...)" FAIL "$(grep -E '^\[  FAILED  \]|FAILED$' "$WORK/tests.log" | head -3 | paste -sd' ')"
fi

# ---- 3. Examples: CUDA vs CPU with 1, 2 and 8 logical devices on GPU 0 ---------------------------
verify() {  # verify N LABEL ARGS...
  local n=$1 label=$2 log
  shift 2
  log="verify_${n}_${label//[^A-Za-z0-9_]/_}"
  if CUDA_VISIBLE_DEVICES=0 step 120 "$log" "$RUN" --backend=cuda --verify \
      --num-partitions "$n" "$@"; then
    row "verify $label ($n device$([[ $n == 1 ]] || echo s))" PASS \
      "$(grep -o 'max abs error [^,]*' "$WORK/$log.log" | head -1)"
  else
    row "verify $label ($n device$([[ $n == 1 ]] || echo s))" FAIL "$(tail -1 "$WORK/$log.log")"
  fi
}
verify 1 ops_1dev runtime/cuda/testdata/ops_1dev.hlo
verify 1 reductions_1dev runtime/cuda/testdata/reductions_1dev.hlo
verify 2 softmax_2dev runtime/cuda/testdata/softmax_2dev.hlo
verify 8 matmul tests/testdata/matmul.hlo
verify 8 uneven_reduce tests/testdata/uneven_reduce.hlo
verify 8 xla_4062_dot_small tests/testdata/xla_4062_dot_small.hlo
verify 8 "matmul_spmd (hand-written)" --against tests/testdata/matmul_spmd.hlo tests/testdata/matmul.hlo
verify 8 "XLA's SPMD of 4062 dot" --against examples/xla_4062_dot_small_xla_spmd.hlo \
  tests/testdata/xla_4062_dot_small.hlo

# ---- 4. NCCL at world size 1 (the multi-process path) ---------------------------------------------
rm -f "$WORK/nccl_id"
if step 60 cpu_ws1 "$RUN" --backend=cpu --partitioned --seed 3 --outputs "$WORK/cpu_ws1" \
      runtime/cuda/testdata/allreduce_1dev.hlo &&
   RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 SPMD_NCCL_ID_FILE="$WORK/nccl_id" CUDA_VISIBLE_DEVICES=0 \
     step 120 nccl_ws1 "$RUN" --backend=cuda --partitioned --seed 3 --outputs "$WORK/nccl_ws1" \
      runtime/cuda/testdata/allreduce_1dev.hlo &&
   cmp -s "$WORK/cpu_ws1/output.npy" "$WORK/nccl_ws1/output.npy"; then
  row "NCCL world size 1 (5 collectives)" PASS "outputs identical to the CPU executor's"
else
  row "NCCL world size 1 (5 collectives)" FAIL "see $WORK/nccl_ws1.log"
fi

# ---- 4b. Two processes over NCCL, the ncclUniqueId sent over MPI (needs 2 GPUs and mpirun) -------
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if ! command -v mpirun >/dev/null; then
  row "NCCL 2 processes over MPI" FAIL "no mpirun (scripts/install_deps.sh installs openmpi-bin)"
elif [[ ${gpus:-0} -lt 2 ]]; then
  row "NCCL 2 processes over MPI" INFO "skipped: ${gpus:-0} GPU(s); one GPU per process needs 2"
elif step 60 cpu_np2 "$RUN" --backend=cpu --partitioned --seed 3 --outputs "$WORK/cpu_np2" \
      runtime/cuda/testdata/collectives_2dev.hlo &&
   OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 step 120 nccl_np2 \
     mpirun -np 2 --oversubscribe "$RUN" --backend=cuda --mpi --partitioned --seed 3 \
      --outputs "$WORK/nccl_np2" runtime/cuda/testdata/collectives_2dev.hlo &&
   cmp -s "$WORK/cpu_np2/device_0/output.npy" "$WORK/nccl_np2/device_0/output.npy" &&
   cmp -s "$WORK/cpu_np2/device_1/output.npy" "$WORK/nccl_np2/device_1/output.npy"; then
  row "NCCL 2 processes over MPI (5 collectives)" PASS "outputs identical to the CPU executor's"
else
  row "NCCL 2 processes over MPI (5 collectives)" FAIL "see $WORK/nccl_np2.log"
fi

# ---- 5. Benchmarks --------------------------------------------------------------------------------
if step 180 bench "$BIN/runtime/cuda/cuda_bench" --dot-size "$DOT_SIZE"; then
  read -r ours theirs pct < <(awk '/^dot:/ {print $5, $7, $9}' "$WORK/bench.log")
  verdict=$(awk -v p="$pct" -v t="$DOT_TARGET_PCT" 'BEGIN {print (p >= t) ? "PASS" : "FAIL"}')
  row "dot bf16 ${DOT_SIZE}^3 (target >= ${DOT_TARGET_PCT}% of cuBLAS)" "$verdict" \
    "$ours TFLOP/s = $pct% of cuBLAS's $theirs TFLOP/s"
  row "all-reduce over NCCL" INFO "$(awk '/^allreduce_nccl:/ {print $2 " MiB, " $5 " GPU(s): algbw " $7 " GB/s, busbw " $9 " GB/s"}' "$WORK/bench.log")"
  row "all-reduce by copies (8 logical on GPU 0)" INFO "$(awk '/^allreduce_copies:/ {print $2 " MiB each: algbw " $7 " GB/s, busbw " $9 " GB/s"}' "$WORK/bench.log")"
else
  row "benchmarks (cuda_bench)" FAIL "$(tail -1 "$WORK/bench.log")"
fi

# ---- Table ---------------------------------------------------------------------------------------
echo
printf '%-44s %-5s %s\n' "check" "" "detail"
printf '%s\n' "${ROWS[@]}"
printf '%-44s %-5s %s\n' "total time" "" "$(( $(date +%s) - START )) s (logs in $WORK)"
exit $FAILED
