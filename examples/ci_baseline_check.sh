#!/usr/bin/env bash
# CI against a baseline: fail the job when a module's bytes received per device (or its FLOPs,
# or its peak memory) grow. A small corpus from tests/testdata is partitioned once and its JSON
# Lines kept as the baseline; the next run compares with `--baseline` and passes; then a worse
# dot strategy (standing in for a change to the partitioner that makes a plan worse) makes the
# one module with a dot receive more bytes, and the job fails naming that module and metric.
#
#   examples/ci_baseline_check.sh [WORK_DIR]      (after: bazel build //tools/...)
#
# In a pipeline the baseline is an artifact of the main branch's last run and each job is one
# `ci_step`. Modules are keyed by their path below the corpus folder, so the baseline holds
# whatever the folder is called on the runner. Exits 0 when the regression was detected, 1
# otherwise. BIN as in 4062_end_to_end.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN="${BIN:-bazel-bin/tools}"
WORK="${1:-$(mktemp -d)}"
rm -rf "$WORK/corpus" && mkdir -p "$WORK/corpus/dots"
cp tests/testdata/data_movement.hlo tests/testdata/uneven_reduce.hlo "$WORK/corpus/"
cp tests/testdata/xla_4062_dot_small.hlo "$WORK/corpus/dots/"

# One CI job: partition the corpus into WORK/NAME with its JSON Lines beside it, against the
# baseline when there is one (5% growth tolerated). Flags after NAME go to spmd-partition.
ci_step() {
  local name="$1" against=()
  shift
  [ -f "$WORK/baseline.jsonl" ] &&
    against=(--baseline "$WORK/baseline.jsonl" --baseline-tolerance 5)
  "$BIN/spmd-partition" -r "$WORK/corpus" -o "$WORK/$name" \
    --stats json --stats-file "$WORK/$name.jsonl" "${against[@]}" "$@"
}

echo "== 1. the main branch's run: its JSON Lines become the baseline"
rm -f "$WORK/baseline.jsonl"
ci_step main || { echo "FAIL: the corpus did not partition"; exit 1; }
cp "$WORK/main.jsonl" "$WORK/baseline.jsonl"

echo "== 2. a change that leaves the plans alone: the job passes"
ci_step unchanged || { echo "FAIL: an unchanged run failed against its own baseline"; exit 1; }

echo "== 3. a change that gathers the dot's operands: the job fails"
ci_step worse --dot-strategy replicated
status=$?
# The summary record (last line) says the same for scripts: what grew, by how much.
python3 - "$WORK/worse.jsonl" <<'PY'
import json, sys
summary = json.loads(open(sys.argv[1]).read().splitlines()[-1])["summary"]
for c in summary["baseline"]["changes"]:
    if c["regression"]:
        print(f'summary record: {c["key"]} {c["metric"]} {c["baseline"]:.0f} -> {c["current"]:.0f}')
PY
if [ "$status" -eq 1 ] && grep -q '"regression": true' "$WORK/worse.jsonl"; then
  echo "regression detected: the job fails (exit $status)"
  exit 0
fi
echo "FAIL: the regression went unnoticed (exit $status)"
exit 1
