#!/usr/bin/env bash
# spmd-inspect --html, loaded in headless Chromium (Debian's chromium package): the page must
# log nothing to the console (no script error, no failed load), its script must run to the end
# (body[data-ready]), and the DOM must hold the collectives table with its 5 rows and the program
# graph with its 9 collective nodes. Skips, saying so, when chromium is not installed.
set -uo pipefail

inspect="tools/spmd-inspect"
dump="tests/testdata/inspect/xla_dump_spmd.hlo"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed (apt-get install chromium); the HTML page was not loaded"
  exit 0
fi

work="${TEST_TMPDIR:-$(mktemp -d)}"
page="$work/report.html"
fail() { echo "FAIL: $*"; exit 1; }

"$inspect" "$dump" --html "$page" > /dev/null || fail "spmd-inspect --html exited with $?"

# Chromium wants a writable home and profile; --enable-logging=stderr --v=0 prints every console
# message as `...:INFO:CONSOLE(...)] "message", source: ...`.
export HOME="$work/home"
mkdir -p "$HOME"
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
  --no-first-run --user-data-dir="$work/profile" --enable-logging=stderr --v=0 \
  --virtual-time-budget=2000 --dump-dom "file://$page" > "$work/dom.html" 2> "$work/log.txt"
status=$?
[ "$status" -eq 0 ] || { cat "$work/log.txt"; fail "chromium exited with $status"; }

if grep -q ":CONSOLE" "$work/log.txt"; then
  grep ":CONSOLE" "$work/log.txt"
  fail "the page wrote to the console (see above)"
fi
dom="$(cat "$work/dom.html")"
count() { grep -o "$1" <<< "$dom" | wc -l; }
grep -q '<body[^>]*data-ready="true"' <<< "$dom" || fail "the page's script did not run to the end"
grep -q '<table id="collectives">' <<< "$dom" || fail "no collectives table in the DOM"
[ "$(count '<tr data-node=')" -eq 5 ] || fail "expected 5 collective rows, found $(count '<tr data-node=')"
[ "$(count 'class="node collective"')" -eq 9 ] || fail "expected 9 collective graph nodes"
grep -q '<svg id="program-graph"' <<< "$dom" || fail "no program graph"
echo "PASS: page loaded without console messages; collectives table and graph found"
