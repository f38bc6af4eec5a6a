#!/usr/bin/env bash
# tools/gpu_bundle.sh DIR -- builds (-c opt) what tools/gpu_check.sh runs and copies it into DIR,
# laid out like bazel-bin (DIR/tools/spmd-run, DIR/runtime/cuda/{cuda_bench,*_test}), with the
# shared libraries they need in DIR/lib, except the C/C++ runtime and the CUDA libraries (cuBLAS,
# NCCL, cudart), which the GPU machine has. For a GPU machine without Bazel:
#   tools/gpu_bundle.sh .gpu && (on the GPU machine) SPMD_PREBUILT=.gpu tools/gpu_check.sh
# DIR should be ignored by git (e.g. listed in .git/info/exclude).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -eq 1 ]] || { echo "usage: tools/gpu_bundle.sh DIR" >&2; exit 2; }
DIR=$1
BAZEL=${BAZEL:-bazel}
TESTS=(executor_test collectives_test buffer_plan_test collective_grouping_test
  nccl_collectives_test nccl_id_file_test gpu_test)

targets=(//tools:spmd-run //runtime/cuda:cuda_bench)
for t in "${TESTS[@]}"; do targets+=("//runtime/cuda:$t"); done
"$BAZEL" build -c opt "${targets[@]}"
BIN=$("$BAZEL" info -c opt bazel-bin)

rm -rf "$DIR"
mkdir -p "$DIR/tools" "$DIR/runtime/cuda" "$DIR/lib"
cp "$BIN/tools/spmd-run" "$DIR/tools/"
cp "$BIN/runtime/cuda/cuda_bench" "$DIR/runtime/cuda/"
for t in "${TESTS[@]}"; do cp "$BIN/runtime/cuda/$t" "$DIR/runtime/cuda/"; done
chmod -R u+w "$DIR"

# The libraries, found from the originals (the tests find ours through a relative rpath), except
# those the machine is expected to have: the C and C++ runtime and the CUDA toolkit's.
system='^(linux-vdso|ld-linux|libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so'
cuda='^lib(cublas|cublasLt|nccl|cudart|cuda)\.so'
for f in "$BIN/tools/spmd-run" "$BIN/runtime/cuda/cuda_bench" "${TESTS[@]/#/$BIN/runtime/cuda/}"; do
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ $name =~ $system || $name =~ $cuda ]] && continue
  cp -L "$path" "$DIR/lib/$name"
done
git describe --always --dirty >"$DIR/COMMIT"
echo "gpu_bundle: $(du -sh "$DIR" | cut -f1) in $DIR (commit $(cat "$DIR/COMMIT"))"
