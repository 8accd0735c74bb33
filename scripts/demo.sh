#!/usr/bin/env bash
# Sets up, builds, and runs the demo: a RoPE fusion checked against PyTorch
# (on the GPU when there is one, else on the CPU).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${NVFUSER_PYTHON:-/usr/bin/python3}"
"$ROOT/scripts/setup.sh"
PYTHONPATH="$ROOT/python" "$PYTHON" "$ROOT/examples/rope_demo.py" "$@"
