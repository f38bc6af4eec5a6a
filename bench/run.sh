#!/usr/bin/env bash
# Builds //bench:parse_print_bench with -c opt, runs it, and prints parse and print throughput
# in MB/s together with their ratios to the same-run baselines (memcpy and a byte-scan loop).
# Extra arguments go to the benchmark binary (for example --benchmark_repetitions=5).
#
#   bench/run.sh [BENCHMARK_FLAGS...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bazel build -c opt //bench:parse_print_bench
# Other builds may repoint the bazel-bin symlink at another configuration; ask for opt's.
BIN="$(bazel info -c opt bazel-bin 2>/dev/null)/bench/parse_print_bench"
JSON="$(mktemp /tmp/parse_print_bench.XXXXXX.json)"
trap 'rm -f "$JSON"' EXIT

"$BIN" --benchmark_out="$JSON" --benchmark_out_format=json "$@"

python3 - "$JSON" <<'PY'
import json, statistics, sys

runs = json.load(open(sys.argv[1]))["benchmarks"]
rates, medians = {}, {}
for run in runs:
    rate = run["bytes_per_second"] / 1e6
    if run.get("run_type") != "aggregate":
        rates.setdefault(run["run_name"], []).append(rate)
    elif run.get("aggregate_name") == "median":  # --benchmark_report_aggregates_only
        medians[run["run_name"]] = rate
# The median over repetitions (a single run without --benchmark_repetitions).
mbps = {name: statistics.median(values) for name, values in rates.items()}
for name, rate in medians.items():
    mbps.setdefault(name, rate)

print()
print("%-14s %12s" % ("benchmark", "MB/s"))
for name in ("BM_Parse", "BM_Print", "BM_Memcpy", "BM_ScanBytes"):
    if name in mbps:
        print("%-14s %12.4g" % (name, mbps[name]))
print()
for name in ("BM_Parse", "BM_Print"):
    if name not in mbps:
        continue
    ratios = ["%.4g x %s" % (mbps[name] / mbps[base], base[3:])
              for base in ("BM_Memcpy", "BM_ScanBytes") if base in mbps]
    print("%-9s = %s" % (name[3:], ", ".join(ratios)))
PY
