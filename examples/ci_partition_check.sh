#!/usr/bin/env bash
# A CI job step: partition every module under a folder, keep the outputs and one JSON line of
# statistics per module as build artifacts, and fail the job when any module fails.
#
#   examples/ci_partition_check.sh MODULES_DIR ARTIFACTS_DIR [JOBS]
#
# spmd-partition prints one `PATH:LINE:COL: error: ...` line per failed module and ends with
# `N ok, N failed`; it exits 1 when any failed, 2 on a usage error. The JSON Lines end with a
# summary record; a failed module's record has its error's kind, file, line and column.
# To fail the job when a module got worse, see ci_baseline_check.sh. Outputs are byte-identical
# whatever JOBS is, so artifacts can be diffed between runs. BIN as in 4062_end_to_end.sh.
set -uo pipefail
BIN="${BIN:-bazel-bin/tools}"
MODULES="${1:?usage: ci_partition_check.sh MODULES_DIR ARTIFACTS_DIR [JOBS]}"
ARTIFACTS="${2:?usage: ci_partition_check.sh MODULES_DIR ARTIFACTS_DIR [JOBS]}"
JOBS="${3:-$(nproc)}"
mkdir -p "$ARTIFACTS"

"$BIN/spmd-partition" --recursive -j "$JOBS" --passes=partition,cleanup \
  "$MODULES" -o "$ARTIFACTS/partitioned" \
  --stats json --stats-file "$ARTIFACTS/stats.jsonl" 2> "$ARTIFACTS/errors.txt"
status=$?
cat "$ARTIFACTS/errors.txt"

# The five modules that receive the most bytes per device, from the JSON Lines.
python3 - "$ARTIFACTS/stats.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
summary = rows.pop()["summary"]  # The last record sums the run up.
print(f'{summary["modules"]} modules, {summary["failed"]} failed {summary["failures_by_kind"]}')
ok = [r for r in rows if "error" not in r]
for r in sorted(ok, key=lambda r: -r["per_device"]["comm_bytes"])[:5]:
    print(f'{r["per_device"]["comm_bytes"]:>12} bytes/device  {r["key"]}')
PY
exit "$status"
