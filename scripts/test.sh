#!/usr/bin/env bash
# Sets up, builds, and runs every test: C++ (ctest, including 500 fuzzed
# fusions), the core tests again under AddressSanitizer+UBSan built by
# Clang (a second compiler: code that depends on the unspecified order of
# a call's arguments behaves differently there), the threaded tests under
# ThreadSanitizer, then Python (pytest). NVFUSER_SKIP_SANITIZE=1 skips both
# sanitizer builds.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${NVFUSER_PYTHON:-/usr/bin/python3}"
BUILD_DIR="${NVFUSER_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
echo "[test] C++ tests"
(cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)")
if [ -z "${NVFUSER_SKIP_SANITIZE:-}" ]; then
  # Clang where it links a sanitized program (setup.sh installs it and its
  # sanitizer runtime); g++ otherwise, said aloud.
  ASAN_CXX=/usr/bin/clang++
  ASAN_DIR="$BUILD_DIR-asan-clang"
  if ! { [ -x "$ASAN_CXX" ] && echo 'int main() { return 0; }' |
         "$ASAN_CXX" -x c++ -fsanitize=address,undefined - \
           -o "${TMPDIR:-/tmp}/nvfuser-clang-check" >/dev/null 2>&1; }; then
    echo "[test] clang++ cannot link a sanitized program here: the sanitizer build uses g++ (argument-order dependence goes unchecked)"
    ASAN_CXX=/usr/bin/g++
    ASAN_DIR="$BUILD_DIR-asan"
  fi
  echo "[test] core tests under AddressSanitizer + UndefinedBehaviorSanitizer ($ASAN_CXX)"
  if [ ! -f "$ASAN_DIR/CMakeCache.txt" ]; then
    cmake -S "$ROOT" -B "$ASAN_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER="$ASAN_CXX" \
      -DNVFUSER_BUILD_RUNTIME=OFF -DNVFUSER_SANITIZE=ON >/dev/null
  fi
  cmake --build "$ASAN_DIR" --target test_core -- -j"$(nproc)"
  "$ASAN_DIR/test_core" --gtest_brief=1

  echo "[test] threaded tests under ThreadSanitizer"
  # Only what test_threads needs (core, compiler, runtime), instrumented.
  # libtorch, libgomp and NVRTC are not: races inside them stay invisible,
  # and no suppressions are needed for them (the test keeps ATen on one
  # OpenMP thread). halt_on_error: the first report fails the step.
  NVFUSER_SKIP_APT=1 NVFUSER_BUILD_DIR="$BUILD_DIR-tsan" \
    NVFUSER_BUILD_TARGETS=test_threads \
    NVFUSER_CMAKE_ARGS="${NVFUSER_CMAKE_ARGS:-} \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNVFUSER_SANITIZE_THREAD=ON" \
    "$ROOT/scripts/setup.sh"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
    "$BUILD_DIR-tsan/test_threads" --gtest_brief=1
fi
echo "[test] Python tests"
cd "$ROOT"
PYTHONPATH="$ROOT/python" "$PYTHON" -m pytest -q -rs tests/python "$@"
