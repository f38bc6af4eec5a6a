#!/usr/bin/env bash
# spmd-inspect --html, loaded in headless Chromium (Debian's chromium package) at 1400 px wide:
# each page must log nothing to the console (no script error, no failed load), its script must
# run to the end (body[data-ready]), and the DOM must hold what the page promises:
#   1. an XLA dump: the collectives table with its 5 rows and the graph's 9 collective nodes;
#   2. the openxla/xla#4062 dot partitioned by us (shardings from the input, --original): the
#      summary in human units, no "not SPMD" warning, the graph with the index arithmetic
#      folded, the sharding grids (the [2,4] result: 8 blocks naming devices 0..7), the memory
#      chart;
#   3. a JAX train step partitioned by us (its graph, too large to read whole, opens on the
#      collective receiving the most bytes), and the diff of our partitioning against XLA's
#      (--diff A B --html): summary rows and paired collectives.
# Screenshots (--screenshot) go to $SHOTS_DIR when set (else the test's temporary directory).
# Skips, saying so, when chromium is not installed.
set -uo pipefail

inspect="tools/spmd-inspect"
partition="tools/spmd-partition"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed (apt-get install chromium); the HTML page was not loaded"
  exit 0
fi

work="${TEST_TMPDIR:-$(mktemp -d)}"
shots="${SHOTS_DIR:-$work}"
mkdir -p "$shots"
fail() { echo "FAIL: $*"; exit 1; }

# Chromium wants a writable home and profile; --enable-logging=stderr --v=0 prints every console
# message as `...:INFO:CONSOLE(...)] "message", source: ...`.
export HOME="$work/home"
mkdir -p "$HOME"
chrome() {  # chrome PAGE HEIGHT EXTRA_FLAGS... : runs the browser on PAGE at 1400 x HEIGHT
  local page="$1" height="$2"
  shift 2
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --user-data-dir="$work/profile" --enable-logging=stderr --v=0 \
    --hide-scrollbars --window-size=1400,"$height" --virtual-time-budget=3000 "$@" \
    "file://$page" 2> "$work/log.txt"
}
# load NAME HEIGHT: dumps the DOM of $work/NAME.html into $dom and screenshots it.
load() {
  local page="$work/$1.html"
  chrome "$page" "$2" --dump-dom > "$work/$1.dom" || { cat "$work/log.txt"; fail "chromium exited with $? on $1"; }
  if grep -q ":CONSOLE" "$work/log.txt"; then
    grep ":CONSOLE" "$work/log.txt"
    fail "$1: the page wrote to the console (see above)"
  fi
  dom="$(cat "$work/$1.dom")"
  grep -q '<body[^>]*data-ready="true"' <<< "$dom" || fail "$1: the page's script did not run to the end"
  chrome "$page" "$2" --screenshot="$shots/$1.png" > /dev/null || fail "chromium could not screenshot $1"
  [ "$(stat -c %s "$shots/$1.png")" -gt 10000 ] || fail "$1: the screenshot is (nearly) empty"
}
count() { grep -o "$1" <<< "$dom" | wc -l; }
has() { grep -q "$1" <<< "$dom" || fail "$2"; }

# 1. An XLA dump.
"$inspect" tests/testdata/inspect/xla_dump_spmd.hlo --html "$work/xla_dump.html" > /dev/null ||
  fail "spmd-inspect --html exited with $?"
load xla_dump 1600
has '<table id="collectives">' "no collectives table in the DOM"
[ "$(count '<tr data-node=')" -eq 5 ] || fail "expected 5 collective rows, found $(count '<tr data-node=')"
[ "$(count 'class="node collective"')" -eq 9 ] || fail "expected 9 collective graph nodes"

# 2. The #4062 dot, partitioned by us.
"$partition" examples/xla_4062_dot.hlo -o "$work/4062.spmd.hlo" 2> /dev/null || fail "spmd-partition #4062"
"$inspect" "$work/4062.spmd.hlo" --original examples/xla_4062_dot.hlo --html "$work/4062.html" \
  > /dev/null || fail "spmd-inspect --html #4062 exited with $?"
load 4062 2400
has '<section id="summary">' "#4062: no summary"
has 'id="summary-bytes"[^>]*><div class="value">[0-9.]* [KMG]iB<' "#4062: bytes received not in human units"
has 'id="summary-flops"[^>]*><div class="value">[0-9.]* [kMGTP]FLOP<' "#4062: FLOPs not in human units"
grep -q 'id="not-spmd"' <<< "$dom" && fail "#4062: warned that a partitioned module is not SPMD"
has '<section id="by-source">' "#4062: no 'where the bytes go'"
nodes=$(sed -n '/class="entry"/,/<\/svg>/p' <<< "$dom" | grep -c '<g class="node')
[ "$nodes" -gt 0 ] && [ "$nodes" -le 25 ] || fail "#4062: $nodes graph nodes drawn (index arithmetic not folded?)"
has 'receives [0-9.]* [KMG]iB' "#4062: no bytes on the collectives"
has '<section id="shardings">' "#4062: no sharding view"
# The result is {devices=[2,4]0,...,7}: its grid has one block per device.
for d in 0 1 2 3 4 5 6 7; do
  has "of f32\[8192,8192\]: devices $d\"" "#4062: no sharding block held by device $d"
done
has 'class="memory-chart"' "#4062: no memory chart"

# 3. A JAX train step: ours, and ours against XLA's.
jax="tests/testdata/jax"
"$partition" "$jax/train_step.gspmd.hlo" -o "$work/train_step.spmd.hlo" 2> /dev/null ||
  fail "spmd-partition train_step"
"$inspect" "$work/train_step.spmd.hlo" --original "$jax/train_step.gspmd.hlo" \
  --html "$work/train_step.html" > /dev/null || fail "spmd-inspect --html train_step exited with $?"
load train_step 2400
has 'id="summary-bytes"[^>]*><div class="value">[0-9.]* \(bytes\|[KMG]iB\)<' "train_step: no summary"
[ "$(count 'class="block"')" -ge 2 ] || fail "train_step: no sharding blocks"
# Too large to read whole at 1400 px: it opens at a readable scale on its largest collective.
has 'data-opened-on="' "train_step: the graph did not open on its largest collective"
has 'class="memory-chart"' "train_step: no memory chart"
"$inspect" --diff "$work/train_step.spmd.hlo" "$jax/train_step.xla_partitioned.txt" \
  --html "$work/train_step_diff.html" > /dev/null || fail "spmd-inspect --diff --html exited with $?"
load train_step_diff 2400
has '<table id="diff-summary">' "diff: no summary table"
has '<td>bytes received per device</td>' "diff: no bytes row"
pairs=$(count '<tr class="pair" data-compare="same')
[ "$pairs" -ge 1 ] || fail "diff: no collective of ours paired with one of XLA's with the same groups"
has 'id="a-shardings"' "diff: no shardings of A"
echo "PASS: 4 pages loaded without console messages; summary, graph, shardings, memory and diff found ($pairs pairs with equal groups); screenshots in $shots"
