#!/usr/bin/env bash
# Builds the HLO parser fuzzer outside Bazel with Debian's clang (libFuzzer + ASan + UBSan) and
# runs it for DURATION seconds (default 600) on a corpus seeded from ../shared/corpus.
#
#   fuzz/run_fuzzer.sh [DURATION]
#
# Everything it writes lives under fuzz-out/ (gitignored): obj/ (objects, rebuilt when a source
# or any hlo/ header is newer), corpus/ (seeds plus what the fuzzer finds), artifacts/
# (crash-*, timeout-*, oom-* inputs), fuzz.log (the full libFuzzer output). The seed corpus is
# copied at run time, never into the repository. Exit status: 0 if the run found nothing, 1 if it
# found a failing input.
set -euo pipefail

DURATION="${1:-600}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SEEDS="${HLO_SEED_CORPUS:-$ROOT/../shared/corpus/xla-tests}"
OUT="$ROOT/fuzz-out"
CXX="${CXX_FUZZ:-clang++}"
FLAGS=(-std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I"$ROOT" -DNDEBUG)
cd "$ROOT"

# --- Toolchain ---------------------------------------------------------------------------------
FUZZER_RT='/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a'
if ! command -v "$CXX" >/dev/null || ! compgen -G "$FUZZER_RT" >/dev/null; then
  echo "installing clang and libclang-rt-14-dev" >&2
  apt-get install -y clang libclang-rt-14-dev >&2
fi

# --- Build -------------------------------------------------------------------------------------
mkdir -p "$OUT/obj" "$OUT/corpus" "$OUT/artifacts"
SOURCES=()
for f in hlo/ir/*.cc hlo/sharding/*.cc hlo/parser/*.cc; do
  [[ "$f" == *_test.cc ]] || SOURCES+=("$f")
done
NEWEST_HEADER="$(find hlo -name '*.h' -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2)"

# Rebuilds a stale object. A source that does not compile (for example a file someone is still
# writing) is skipped with a warning: the library is linked as an archive, so only a file the
# fuzzer actually needs can break the link.
compile() {
  local src="$1" obj="$2"
  if ! "$CXX" "${FLAGS[@]}" -c "$src" -o "$obj" 2>"$obj.log"; then
    echo "warning: $src does not compile, skipped (see $obj.log)" >&2
    rm -f "$obj"
  fi
}
jobs_running=0
for src in "${SOURCES[@]}"; do
  obj="$OUT/obj/${src//\//_}.o"
  if [[ ! -f "$obj" || "$src" -nt "$obj" || "$NEWEST_HEADER" -nt "$obj" ]]; then
    compile "$src" "$obj" &
    jobs_running=$((jobs_running + 1))
    if (( jobs_running >= 2 )); then wait -n; jobs_running=$((jobs_running - 1)); fi
  fi
done
wait
OBJECTS=()
for src in "${SOURCES[@]}"; do
  obj="$OUT/obj/${src//\//_}.o"
  if [[ -f "$obj" ]]; then OBJECTS+=("$obj"); fi
done
rm -f "$OUT/libhlo_fuzz.a"
ar rcs "$OUT/libhlo_fuzz.a" "${OBJECTS[@]}"
ABSL_LIBS=$(ls /usr/lib/x86_64-linux-gnu/libabsl_*.so |
  sed 's|.*/lib\(absl_[a-z0-9_]*\)\.so$|-l\1|')
"$CXX" "${FLAGS[@]}" fuzz/hlo_parser_fuzzer.cc "$OUT/libhlo_fuzz.a" \
  -Wl,--start-group $ABSL_LIBS -Wl,--end-group -o "$OUT/hlo_parser_fuzzer"

# --- Corpus ------------------------------------------------------------------------------------
seeded=0
for f in "$SEEDS"/*/*.hlo; do
  [[ -f "$f" ]] || continue
  cp -n "$f" "$OUT/corpus/seed_$(basename "$(dirname "$f")")_$(basename "$f")"
  seeded=$((seeded + 1))
done
echo "seed files: $seeded; corpus entries: $(ls "$OUT/corpus" | wc -l)"

# --- Run ---------------------------------------------------------------------------------------
set +e
"$OUT/hlo_parser_fuzzer" "$OUT/corpus" -dict=fuzz/hlo.dict -max_total_time="$DURATION" \
  -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$OUT/artifacts/" \
  2>&1 | tee "$OUT/fuzz.log" |
  grep -E '^(#[0-9]+ +(INITED|DONE|pulse)|==[0-9]+==|SUMMARY|ROUND-TRIP|stat::)' 
rc=${PIPESTATUS[0]}
set -e
execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$OUT/fuzz.log" |
  grep -oE '[0-9]+$' || true)
if [[ -z "$execs" ]]; then
  execs=$(grep -oE '^#[0-9]+' "$OUT/fuzz.log" | tail -1 | tr -d '#')
fi
echo "executions: ${execs:-unknown}"
if [[ $rc -eq 0 ]]; then
  echo "result: no crash in ${DURATION}s"
  exit 0
fi
echo "result: FOUND A FAILING INPUT (crash, timeout or out-of-memory; libFuzzer exit $rc):"
grep -oE "Test unit written to .*" "$OUT/fuzz.log" | sed 's/Test unit written to /  /'
exit 1
