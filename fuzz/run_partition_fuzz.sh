#!/usr/bin/env bash
# Runs the partition fuzzer (tests/partition_fuzz.h) for SECONDS seconds (default 1800): seeded
# structured mutations of ../shared/corpus/xla-tests/{spmd,propagation}, tests/testdata and
# generated modules, each parsed, verified, partitioned and checked like `spmd-run --verify`
# in a forked child. Crashes, hangs (over PARTITION_FUZZ_TIMEOUT s, default 20) and mismatches
# are failures.
#
#   fuzz/run_partition_fuzz.sh [SECONDS]
#
# Environment: PARTITION_FUZZ_SEED (run seed, default: the current time, printed),
# PARTITION_FUZZ_FIRST (first mutant index), PARTITION_FUZZ_TIMEOUT, PARTITION_FUZZ_GENERATED
# (generated seed modules, default 200), HLO_CORPUS_DIR (default ../shared/corpus/xla-tests).
#
# It builds //tests:partition_fuzz_test and runs that binary's LongRun case. Everything it
# writes lives under fuzz-out/partition/ (gitignored): failure-KIND-SEED-INDEX.hlo (the mutant)
# and .txt (mutations, phase, error) for up to three mutants per distinct failure, and
# fuzz.log (the whole output, ending with the summary). A mutant is reproduced by
#   PARTITION_FUZZ_SEED=SEED PARTITION_FUZZ_FIRST=INDEX PARTITION_FUZZ_MUTANTS=1 \
#     bazel-bin/tests/partition_fuzz_test --gtest_filter='*LongRun'
# Exit status: 0 if the run found no failure, 1 otherwise.
set -euo pipefail

SECONDS_TO_RUN="${1:-1800}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/fuzz-out/partition"
cd "$ROOT"

bazel build //tests:partition_fuzz_test >&2
mkdir -p "$OUT"
export PARTITION_FUZZ_SECONDS="$SECONDS_TO_RUN"
export PARTITION_FUZZ_SEED="${PARTITION_FUZZ_SEED:-$(date +%s)}"
export PARTITION_FUZZ_OUT="$OUT"
export PARTITION_FUZZ_TESTDATA="$ROOT/tests/testdata"
export HLO_CORPUS_DIR="${HLO_CORPUS_DIR:-$ROOT/../shared/corpus/xla-tests}"
if [[ ! -d "$HLO_CORPUS_DIR" ]]; then
  echo "no corpus at $HLO_CORPUS_DIR: seeds are tests/testdata and generated modules only" >&2
fi
echo "run seed $PARTITION_FUZZ_SEED, ${SECONDS_TO_RUN}s; output in $OUT"

set +e
bazel-bin/tests/partition_fuzz_test --gtest_filter='*LongRun' 2>&1 | tee "$OUT/fuzz.log" |
  grep --line-buffered -E '^(\[ *[0-9]+ s\]|FAILURE|  run seed|  /|  \(not saved)'
status=${PIPESTATUS[0]}
set -e
# The summary: from SUMMARY up to gtest's own lines.
awk '/^SUMMARY$/ { show = 1; next } /^(tests\/|\[)/ { show = 0 } show' "$OUT/fuzz.log"
if [[ $status -eq 0 ]]; then
  echo "result: no failure in ${SECONDS_TO_RUN}s"
  exit 0
fi
echo "result: FAILURES FOUND (see $OUT/failure-*.txt)"
exit 1
