#!/usr/bin/env bash
# Partitions every module of a corpus with the binaries in BIN_DIR and writes the programs and
# per-module statistics under OUT_DIR, so that two builds can be compared byte for byte:
#   scripts/corpus_snapshot.sh BIN_DIR OUT_DIR [CORPUS_DIR...]
#   diff -r OUT_A OUT_B        # programs, statistics (timings removed) and exit codes
# Default corpora: ../shared/corpus/{xla-tests/spmd,xla-tests/dot,xla-tests/propagation,jax,real}
# and tests/testdata/jax. The device count comes from each suite's .tsv when it names one.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 2 ]]; then
  echo "usage: $0 BIN_DIR OUT_DIR [CORPUS_DIR...]" >&2
  exit 2
fi
bin=$(cd "$1" && pwd)
out=$2
shift 2
corpora=("$@")
if [[ ${#corpora[@]} -eq 0 ]]; then
  corpora=(../shared/corpus/xla-tests/spmd ../shared/corpus/xla-tests/dot
           ../shared/corpus/xla-tests/propagation ../shared/corpus/jax ../shared/corpus/real
           tests/testdata/jax)
fi
mkdir -p "$out"
for corpus in "${corpora[@]}"; do
  name=$(basename "$corpus")
  dest="$out/$name"
  mkdir -p "$dest"
  tsv=$(ls "$corpus"/*.tsv 2>/dev/null | head -1 || true)
  for input in "$corpus"/*.hlo "$corpus"/*.pb; do
    [[ -e $input ]] || continue
    base=$(basename "$input")
    args=()
    if [[ -n $tsv ]]; then
      n=$(awk -F'\t' -v m="${base%.hlo}" '$1 == m { print $2 }' "$tsv")
      [[ -n $n ]] && args+=(--num-partitions "$n")
    fi
    set +e
    timeout 120 "$bin/spmd-partition" "${args[@]}" --stats json -o "$dest/$base.out" "$input" \
      2> "$dest/$base.err"
    echo "exit $?" >> "$dest/$base.err"
    set -e
    # Timings differ from run to run; everything else must not.
    sed -i -E 's/"time_ms": ?\{[^}]*\}/"time_ms":{}/' "$dest/$base.err"
  done
done
echo "snapshot of $(find "$out" -name '*.err' | wc -l) modules in $out"
