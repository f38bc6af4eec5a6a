#!/usr/bin/env bash
# The examples in examples/ still run as the user guide says: the #4062 walk-through verifies
# both SPMD programs, the CI step partitions a folder and reports no failure, the baseline CI
# example fails its job when one module's bytes grow, and the scanned MLP keeps one all-reduce
# per layer.
set -uo pipefail
export BIN=tools
work="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*"; exit 1; }

out="$(examples/4062_end_to_end.sh "$work/e2e" 2>&1)" || { echo "$out"; fail "4062_end_to_end.sh"; }
[ "$(grep -c '^verification passed' <<< "$out")" -eq 2 ] || { echo "$out"; fail "expected 2 verifications"; }
grep -q '^collectives: 2 instructions' <<< "$out" || { echo "$out"; fail "inspect table missing"; }
[ -s "$work/e2e/ours.html" ] && [ -s "$work/e2e/ours.dot" ] || fail "no HTML or Graphviz output"

mkdir -p "$work/modules/sub"
cp tests/testdata/matmul.hlo "$work/modules/"
cp tests/testdata/xla_4062_dot_small.hlo "$work/modules/sub/"
ci="$(examples/ci_partition_check.sh "$work/modules" "$work/artifacts" 2 2>&1)" || { echo "$ci"; fail "ci_partition_check.sh"; }
grep -q '^2 ok, 0 failed$' <<< "$ci" || { echo "$ci"; fail "no summary line"; }
[ -f "$work/artifacts/partitioned/sub/xla_4062_dot_small.hlo" ] || fail "no output for sub/"
[ "$(wc -l < "$work/artifacts/stats.jsonl")" -eq 3 ] || fail "expected 2 JSON lines and the summary"
# The baseline walk-through: the job fails when the dot module's bytes grow, naming it.
base="$(examples/ci_baseline_check.sh "$work/baseline" 2>&1)" || { echo "$base"; fail "ci_baseline_check.sh"; }
grep -q '^baseline: dots/xla_4062_dot_small.hlo: bytes received per device grew 2.0 KiB -> ' <<< "$base" ||
  { echo "$base"; fail "the regression is not named"; }
grep -q '^regression detected' <<< "$base" || { echo "$base"; fail "no regression detected"; }
[ "$(grep -c '3 modules compared; none grew by more than 5%' <<< "$base")" -eq 1 ] ||
  { echo "$base"; fail "the unchanged run should pass"; }
# The scanned MLP: one all-reduce per layer (4), no all-gather, and it verifies.
stats="$("$BIN/spmd-partition" examples/scan_mlp.hlo -o "$work/scan.hlo" --stats json 2>&1)" || { echo "$stats"; fail "scan_mlp partition"; }
grep -q '"all-gather": {"count": 0' <<< "$stats" || { echo "$stats"; fail "scan_mlp gathers"; }
grep -q '"all-reduce": {"count": 4,' <<< "$stats" || { echo "$stats"; fail "scan_mlp: expected 4 all-reduces"; }
"$BIN/spmd-run" --verify examples/scan_mlp.hlo > "$work/scan_verify.txt" 2>&1 || { cat "$work/scan_verify.txt"; fail "scan_mlp verify"; }
echo "PASS"
