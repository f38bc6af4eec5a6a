#!/usr/bin/env bash
# The openxla/xla#4062 dot, end to end: partition it, read the partitioner's decisions, inspect
# the result (text, HTML, Graphviz), compare it with what XLA produced, and check numerically
# that both SPMD programs compute what the unpartitioned module computes.
#
#   examples/4062_end_to_end.sh [OUT_DIR]      (after: bazel build //tools/...)
#
# BIN names the folder holding the programs (default: bazel-bin/tools).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${BIN:-bazel-bin/tools}"
OUT="${1:-$(mktemp -d)}"
mkdir -p "$OUT"

echo "== 1. partition the full-size module (f32[8192,8192]) for 8 devices, with the decision log"
"$BIN/spmd-partition" --passes=partition,cleanup --explain --stats text \
  examples/xla_4062_dot.hlo -o "$OUT/xla_4062_dot.spmd.hlo"

echo "== 2. inspect our result: statistics, every collective, peak memory; HTML and Graphviz"
"$BIN/spmd-inspect" "$OUT/xla_4062_dot.spmd.hlo" --html "$OUT/ours.html" --dot "$OUT/ours.dot"

echo "== 3. the same case at f32[64,64]: ours against XLA's partitioning (a post-SPMD dump)"
"$BIN/spmd-partition" --passes=partition,cleanup tests/testdata/xla_4062_dot_small.hlo \
  -o "$OUT/small.spmd.hlo"
"$BIN/spmd-inspect" --diff "$OUT/small.spmd.hlo" examples/xla_4062_dot_small_xla_spmd.hlo

echo "== 4. run both SPMD programs on 8 simulated devices against the unpartitioned module"
# The full-size dot is ~1.1 TFLOP on one CPU, beyond spmd-run's default limit; the small copy
# has the same shardings.
"$BIN/spmd-run" --verify --passes=partition,cleanup tests/testdata/xla_4062_dot_small.hlo
"$BIN/spmd-run" --verify --against examples/xla_4062_dot_small_xla_spmd.hlo \
  tests/testdata/xla_4062_dot_small.hlo

echo "== outputs in $OUT (open ours.html in a browser; dot -Tsvg ours.dot > ours.svg)"
