#!/usr/bin/env bash
# README command (a): install what is missing, build, and partition the bundled example (the
# openxla/xla#4062 dot) for 8 devices, printing the SPMD program, the reshard decisions and
# statistics.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
bazel build //tools:spmd-partition
bazel-bin/tools/spmd-partition --passes=partition,cleanup --explain --stats text \
  examples/xla_4062_dot.hlo
