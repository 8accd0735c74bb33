#!/usr/bin/env bash
# Installs what the build needs (Debian packages, when missing), configures
# build/ once and builds incrementally. Used by demo.sh and test.sh.
# NVFUSER_BUILD_TARGETS: build only these targets (test.sh's TSan build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${NVFUSER_PYTHON:-/usr/bin/python3}"
BUILD_DIR="${NVFUSER_BUILD_DIR:-$ROOT/build}"

PACKAGES="cmake ninja-build g++ libgtest-dev libbenchmark-dev libtorch-dev
python3-torch pybind11-dev python3-pybind11 python3-pytest python3-networkx
clang libclang-rt-14-dev"
if [ -z "${NVFUSER_SKIP_APT:-}" ] && command -v dpkg >/dev/null 2>&1; then
  missing=""
  for p in $PACKAGES; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "[setup] installing Debian packages:$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      --no-install-recommends $missing >/dev/null
  fi
fi

# The system g++ by default: on the GPU machine CXX names a wrapper compiler
# whose modules crash in libstdc++'s iostreams once loaded next to libtorch.
# NVFUSER_CXX overrides.
if [ -n "${NVFUSER_CXX:-}" ]; then
  export CXX="$NVFUSER_CXX"
elif [ -x /usr/bin/g++ ]; then
  export CXX=/usr/bin/g++
fi

if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  prefix="$("$PYTHON" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')"
  pybind="$("$PYTHON" -c 'import pybind11; print(pybind11.get_cmake_dir())' 2>/dev/null || true)"
  echo "[setup] configuring $BUILD_DIR for $PYTHON"
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPython_EXECUTABLE="$PYTHON" \
    -DCMAKE_PREFIX_PATH="$prefix;$pybind" ${NVFUSER_CMAKE_ARGS:-} >/dev/null
fi
echo "[setup] building ${NVFUSER_BUILD_TARGETS:-everything}"
cmake --build "$BUILD_DIR" ${NVFUSER_BUILD_TARGETS:+--target $NVFUSER_BUILD_TARGETS} \
  -- -j"$(nproc)"
