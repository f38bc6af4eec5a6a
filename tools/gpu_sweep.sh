#!/usr/bin/env bash
# tools/gpu_sweep.sh SPMD_RUN LIST OUT.tsv [JOBS] -- verifies each module of LIST with the CUDA
# backend against the CPU executor (spmd-run --backend=cuda --verify), JOBS at a time (default 4).
# LIST has lines `name<TAB>path<TAB>num_partitions` (the last may be empty), as
# ../shared/tools/xla-compare/make_corpus_list.py writes them. OUT.tsv gets one line per module:
# name, status (pass, refused: a located refusal such as an op the executor does not support or
# a program over the limits, fail: anything else, timeout), and the last line of the output.
# SWEEP_TIMEOUT: seconds per module (default 300). Without a GPU, SPMD_CUDA_DEVICE=host runs the same executor on the host device, so a GPU
# sweep's failures can be told apart from the host's.
set -uo pipefail
[[ $# -ge 3 ]] || { echo "usage: tools/gpu_sweep.sh SPMD_RUN LIST OUT.tsv [JOBS]" >&2; exit 2; }
RUN=$1 LIST=$2 OUT=$3 JOBS=${4:-4}

one() {  # one RUN NAME PATH PARTITIONS -> a TSV line
  local run=$1 name=$2 path=$3 n=$4 log rc status
  log=$(mktemp)
  timeout "${SWEEP_TIMEOUT:-300}" "$run" --backend=cuda --verify ${n:+--num-partitions "$n"} "$path" >"$log" 2>&1
  rc=$?
  if [[ $rc == 0 ]]; then status=pass
  elif [[ $rc == 124 ]]; then status=timeout
  elif grep -q "not supported\|is not supported by the CUDA executor\|over the execution limits\|unsupported\|above --max-gflop\|above --max-memory" "$log"; then
    status=refused
  else status=fail; fi
  printf '%s\t%s\t%s\n' "$name" "$status" "$(tail -1 "$log" | tr '\t' ' ' | cut -c1-300)"
  rm -f "$log"
}
export -f one
: >"$OUT"
awk -F'\t' 'NF >= 2 {print $1 "\t" $2 "\t" $3}' "$LIST" |
  xargs -P "$JOBS" -d '\n' -I{} bash -c 'IFS=$'"'\t'"' read -r a b c <<<"{}"; one "$0" "$a" "$b" "$c"' \
    "$RUN" >>"$OUT"
awk -F'\t' '{n[$2]++} END {for (s in n) printf "%s %d  ", s, n[s]; print ""}' "$OUT"
