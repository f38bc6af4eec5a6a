#!/usr/bin/env bash
# README command (b): install what is missing, build everything, run every test, and end with
# the line `N passed, N failed` (N counts test targets; a target that fails to build counts as
# failed). Exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh || exit 1
log=$(mktemp)
bazel test //... --test_summary=short --test_output=errors 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -cE '^//\S+\s+(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//\S+\s+(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD|INCOMPLETE)' "$log")
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1  # The build itself failed before any test ran.
fi
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
