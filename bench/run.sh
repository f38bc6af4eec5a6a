#!/usr/bin/env bash
# Builds the benchmarks with -c opt, runs them, and prints each figure as a ratio to a baseline
# measured in the same run:
#   parse_print_bench    parse and print throughput in MB/s, and their ratios to memcpy and a
#                        byte-scan loop;
#   executor_dot_bench   the executor's f32 1024^3 dot as a fraction of Eigen's GEMM rate;
#   gemm_bench           the dispatched f32 GEMM (AVX2/AVX-512 where the CPU has them) over the
#                        generic build, on one thread and on idle cores, 512^3 and 2048^3;
#   executor_bench       an elementwise chain and an 8-device all-gather as fractions of memcpy
#                        bandwidth (bytes touched per second), then, in a fresh process
#                        (--memory), peak resident memory against 2 x live set + 100 MiB;
#   reshard_bench        128-device reshard searches from a random device order over the same
#                        from an iota order;
#   partition_bench      the partition pass on 10k/30k/100k-instruction MLP stacks: instructions
#                        per second, peak memory, and time over a plain walk of the module;
#   propagation_bench    the propagate pass on a 100k-instruction MLP stack, over a plain walk;
#   call sites           spmd-partition on the MaxText train step called from 8 and 16 call
#                        sites (bench/call_sites.py; needs ../shared/corpus): CPU time ratio.
# Extra arguments go to every benchmark binary (for example --benchmark_repetitions=5).
# The machine is shared: absolute rates move with its load, the same-run ratios much less.
#
#   bench/run.sh [BENCHMARK_FLAGS...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bazel build -c opt //bench:parse_print_bench //bench:executor_dot_bench //bench:executor_bench \
  //tools:spmd-partition \
  //bench:gemm_bench //bench:partition_bench //bench:propagation_bench //bench:reshard_bench
# Other builds may repoint the bazel-bin symlink at another configuration; ask for opt's.
BIN_DIR="$(bazel info -c opt bazel-bin 2>/dev/null)/bench"
BIN="$BIN_DIR/parse_print_bench"
JSON="$(mktemp /tmp/parse_print_bench.XXXXXX.json)"
EXEC_JSON="$(mktemp /tmp/executor_bench.XXXXXX.json)"
EXEC_LOG="$(mktemp /tmp/executor_bench.XXXXXX.log)"
trap 'rm -f "$JSON" "$EXEC_JSON" "$EXEC_LOG"' EXIT

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

# ---- Executor benchmarks: ratio counters (medians over repetitions) -----------------------------

# Runs an executor benchmark binary quietly (its output only on failure), results to EXEC_JSON.
run_quietly() {
  "$@" --benchmark_out="$EXEC_JSON" --benchmark_out_format=json >"$EXEC_LOG" 2>&1 ||
    { cat "$EXEC_LOG"; exit 1; }
}

print_ratio_counters() {
  python3 - "$1" <<'PY'
import json, statistics, sys

runs = json.load(open(sys.argv[1]))["benchmarks"]
values, medians = {}, {}  # (benchmark, counter) -> values per repetition / median aggregate
for run in runs:
    aggregate = run.get("run_type") == "aggregate"
    if aggregate and run.get("aggregate_name") != "median":
        continue
    # The benchmark and its arguments, without options such as min_time:2.000 or real_time.
    name = "/".join(part for part in run["run_name"].split("/")
                    if ":" not in part and part != "real_time")
    for key, value in run.items():
        if key.endswith("ratio") or key.startswith("ratio_") or key == "executor_vs_eigen":
            if aggregate:  # Only these with --benchmark_report_aggregates_only.
                medians[(name, key)] = value
            else:
                values.setdefault((name, key), []).append(value)
figures = {k: statistics.median(v) for k, v in values.items()}
for k, v in medians.items():
    figures.setdefault(k, v)
for (name, key), value in figures.items():
    print("%-22s %-18s %.3f" % (name, key, value))
PY
}

echo
echo "== executor_dot_bench (target: executor_vs_eigen >= 0.80)"
run_quietly "$BIN_DIR/executor_dot_bench" --benchmark_filter=BM_DotRatio "$@"
print_ratio_counters "$EXEC_JSON"

echo
echo "== gemm_bench (dispatched_ratio, cores_ratio: speedups over the generic build)"
run_quietly "$BIN_DIR/gemm_bench" --benchmark_filter=BM_GemmRatio "$@"
print_ratio_counters "$EXEC_JSON"

echo
echo "== executor_bench (targets: elementwise >= 0.25, all-gather >= 0.30 of memcpy bandwidth)"
run_quietly "$BIN_DIR/executor_bench" --benchmark_filter='Ratio' "$@"
print_ratio_counters "$EXEC_JSON"

echo
echo "== executor_bench --memory (target: peak RSS <= 2 x live set + 100 MiB)"
"$BIN_DIR/executor_bench" --memory

echo
echo "== reshard_bench (random_over_iota_ratio: 128-device searches from a random device order)"
run_quietly "$BIN_DIR/reshard_bench" "$@"
print_ratio_counters "$EXEC_JSON"

echo
echo "== partition_bench (targets: 100k instructions under 2 s, linear growth, peak under 1 GiB)"
"$BIN_DIR/partition_bench" "$@" 2>&1 | grep -E "^BM_|^Benchmark"

echo
echo "== propagation_bench (target: 100k instructions under 1 s)"
"$BIN_DIR/propagation_bench" "$@" 2>&1 | grep -E "^BM_|^Benchmark"

echo
echo "== call sites (target: the MaxText step called from 16 sites takes <= 2.2 x the time of 8)"
MAXTEXT="$ROOT/../shared/corpus/real/nv_maxtext_1n1g_jit_train_step_before_optimization.hlo"
if [[ -f "$MAXTEXT" ]]; then
  SITES_DIR="$(mktemp -d /tmp/call_sites.XXXXXX)"
  for n in 8 16; do
    python3 bench/call_sites.py "$MAXTEXT" "$n" > "$SITES_DIR/c$n.hlo"
    /usr/bin/time -f "%U" -o "$SITES_DIR/t$n" \
      "$(bazel info -c opt bazel-bin 2>/dev/null)/tools/spmd-partition" "$SITES_DIR/c$n.hlo" \
      -o /dev/null
  done
  python3 -c "import sys; a, b = (float(open(f).read().split()[-1]) for f in sys.argv[1:]); \
print(f'8 sites {a:.2f} s, 16 sites {b:.2f} s of CPU: ratio {b / max(a, 1e-9):.2f}')" \
    "$SITES_DIR/t8" "$SITES_DIR/t16"
  rm -rf "$SITES_DIR"
else
  echo "skipped: $MAXTEXT not found"
fi
