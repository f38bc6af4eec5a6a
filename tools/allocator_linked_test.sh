#!/usr/bin/env bash
# The partitioning tools must run on TCMalloc (third_party/tcmalloc.BUILD): their passes are
# allocation-bound, and an as-needed link would silently drop a library nothing calls by name.
# spmd-run must not: the CPU executor tunes glibc's malloc (runtime/cpu/host_malloc.h).
set -euo pipefail
status=0
# readelf's output is read whole before grep looks at it: `readelf | grep -q` under pipefail
# fails whenever grep exits at its match before readelf has written everything (SIGPIPE).
for bin in tools/spmd-partition tools/spmd-inspect; do
  if ! grep -q 'NEEDED.*libtcmalloc_minimal' <<<"$(readelf -d "$bin")"; then
    echo "FAIL: $bin is not linked against libtcmalloc_minimal" >&2
    status=1
  fi
done
if grep -q 'NEEDED.*tcmalloc' <<<"$(readelf -d tools/spmd-run)"; then
  echo "FAIL: spmd-run links TCMalloc, but its executor tunes glibc's malloc" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "allocators as intended"
exit "$status"
