#!/usr/bin/env bash
# Installs the Debian packages the build needs, if any is missing. Idempotent and quiet when
# everything is present. CUDA 13 is expected under /usr/local/cuda (preinstalled).
set -euo pipefail
# chromium: //tests:inspect_html_chromium_test loads spmd-inspect's HTML page headless.
# libopenmpi-dev, openmpi-bin: spmd-run --mpi (runtime/mpi) and its mpirun tests.
# libgoogle-perftools-dev: TCMalloc, linked into spmd-partition and spmd-inspect
#   (third_party/tcmalloc.BUILD).
packages=(bazel-bootstrap libabsl-dev libprotobuf-dev protobuf-compiler libcli11-dev libgtest-dev
          libeigen3-dev libbenchmark-dev chromium libopenmpi-dev openmpi-bin
          libgoogle-perftools-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
