#!/usr/bin/env bash
# Sets up, builds, and runs every test: C++ (ctest) then Python (pytest).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${NVFUSER_PYTHON:-/usr/bin/python3}"
BUILD_DIR="${NVFUSER_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
echo "[test] C++ tests"
(cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)")
echo "[test] Python tests"
cd "$ROOT"
PYTHONPATH="$ROOT/python" "$PYTHON" -m pytest -q -rs tests/python "$@"
