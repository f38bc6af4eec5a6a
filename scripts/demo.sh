#!/usr/bin/env bash
# README command (a): install what is missing, build, and run spmd-partition on the bundled
# example (the openxla/xla#4062 dot). It parses, verifies and prints the module with statistics.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
bazel build //tools:spmd-partition
bazel-bin/tools/spmd-partition --passes=none --stats text examples/xla_4062_dot.hlo
