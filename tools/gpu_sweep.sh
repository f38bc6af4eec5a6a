#!/usr/bin/env bash
# tools/gpu_sweep.sh SPMD_RUN LIST OUT.tsv [JOBS] -- verifies each module of LIST with the CUDA
# backend against the CPU executor (spmd-run --backend=cuda --verify), JOBS at a time (default 4).
# LIST has lines `name<TAB>path<TAB>num_partitions` (the last may be empty), as
# ../shared/tools/xla-compare/make_corpus_list.py writes them. OUT.tsv gets one line per module:
# name, status (pass; fail: outputs that do not match, a CUDA, NCCL or internal error, or a crash;
# refused: any other located error, such as an op the executor does not support, a program over
# the limits or an input the partitioner refuses; timeout), and the last line of the output;
# OUT.tsv.logs/NAME.log keeps the whole output of each failure and timeout.
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
  elif [[ $rc -le 2 ]] && grep -q "is not supported\|above --max-" "$log"; then
    status=refused
  elif [[ $rc -gt 2 ]] || grep -qi "do not match\|cuda\|nccl\|internal" "$log"; then
    status=fail
  else status=refused; fi
  printf '%s\t%s\t%s\n' "$name" "$status" "$(tail -1 "$log" | tr '\t' ' ' | cut -c1-300)"
  if [[ $status == fail || $status == timeout ]]; then cp "$log" "$SWEEP_LOGS/$name.log"; fi
  rm -f "$log"
}
export -f one
export SWEEP_LOGS="$OUT.logs"  # The whole output of each failing module.
rm -rf "$SWEEP_LOGS" && mkdir -p "$SWEEP_LOGS"
: >"$OUT"
awk -F'\t' 'NF >= 2 {print $1 "\t" $2 "\t" $3}' "$LIST" |
  xargs -P "$JOBS" -d '\n' -I{} bash -c 'IFS=$'"'\t'"' read -r a b c <<<"{}"; one "$0" "$a" "$b" "$c"' \
    "$RUN" >>"$OUT"
awk -F'\t' '{n[$2]++} END {for (s in n) printf "%s %d  ", s, n[s]; print ""}' "$OUT"
