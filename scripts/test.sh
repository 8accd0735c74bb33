#!/usr/bin/env bash
# Sets up, builds, and runs every test: C++ (ctest, including 500 fuzzed
# fusions), the core tests again under AddressSanitizer+UBSan, then Python
# (pytest). NVFUSER_SKIP_SANITIZE=1 skips the sanitizer build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${NVFUSER_PYTHON:-/usr/bin/python3}"
BUILD_DIR="${NVFUSER_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
echo "[test] C++ tests"
(cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)")
if [ -z "${NVFUSER_SKIP_SANITIZE:-}" ]; then
  echo "[test] core tests under AddressSanitizer + UndefinedBehaviorSanitizer"
  ASAN_DIR="$BUILD_DIR-asan"
  if [ ! -f "$ASAN_DIR/CMakeCache.txt" ]; then
    cmake -S "$ROOT" -B "$ASAN_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DNVFUSER_BUILD_RUNTIME=OFF -DNVFUSER_SANITIZE=ON >/dev/null
  fi
  cmake --build "$ASAN_DIR" --target test_core -- -j"$(nproc)"
  "$ASAN_DIR/test_core" --gtest_brief=1
fi
echo "[test] Python tests"
cd "$ROOT"
PYTHONPATH="$ROOT/python" "$PYTHON" -m pytest -q -rs tests/python "$@"
