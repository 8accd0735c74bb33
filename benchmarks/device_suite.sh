#!/usr/bin/env bash
# One call on a GPU machine: build, GPU tests, demo and the benchmarks, each
# step under its own time limit (a hung step costs its limit, not the
# session), results under OUT_DIR (default ./device_out).
#
#   OUT_DIR=$OUT bash benchmarks/device_suite.sh [step ...]
#
# Steps (default: all, in this order): tests fx_tests demo pointwise norm
# embedding fx_backend rope rope_kernels rope_ncu rope_rounds region_ab warm host_cost
# model fuzz dist. host_cost: ATen's own host time per op on this machine
# (benchmarks/aten_host_cost.py), the yardstick for NVFUSER_DUMP=host_time.
# embedding: the embedding backward's weight gradient, ATen's, ours
# (nvfuser::embedding_dense_backward) and Inductor's.
# fuzz: fuzz_fusions --device cuda (FUZZ_COUNT, FUZZ_SEED). fx_backend:
# FX_CASES picks cases (e.g. llama_rms_norm,layer_norm). dist:
# examples/distributed_train.py with
# 2 ranks (DDP and FSDP2; nvfuser with --check, eager, inductor) over gloo
# on one GPU (--share-gpu), or NCCL when the machine has two (DIST_ARGS
# adds flags). Setup (apt skipped, python3 on PATH) always runs
# first. The model step (benchmarks/model_bench.py, one child process per
# model) runs MODEL_BENCH_ARGS, default "--models llama,qwen2,mistral
# --dynamic"; e.g. MODEL_BENCH_ARGS="--models qwen3,gemma2,phi3,olmo2,granite"
# in a second call. It starts no model after 420 s, so its table is complete
# up to there.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_DIR="${OUT_DIR:-$ROOT/device_out}"
mkdir -p "$OUT_DIR"
cd "$ROOT"
export NVFUSER_SKIP_APT=1 NVFUSER_SKIP_SANITIZE=1
# The device image has no GoogleTest: the C++ tests are built on the CPU.
export NVFUSER_CMAKE_ARGS="${NVFUSER_CMAKE_ARGS:--DNVFUSER_BUILD_TESTS=OFF}"
export NVFUSER_PYTHON="${NVFUSER_PYTHON:-python3}"
export PYTHONPATH="$ROOT/python"
PY="$NVFUSER_PYTHON"

# step NAME LIMIT_S COMMAND...: runs it, keeps its log, prints its tail.
step() {
  local name="$1" limit="$2"
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$OUT_DIR/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc=$rc ($((SECONDS - t0)) s)$([ $rc -eq 124 ] && echo ', TIMED OUT')"
  return $rc
}

step setup 300 bash scripts/setup.sh || {
  tail -n 20 "$OUT_DIR/setup.log"
  exit 1
}

want() { [ $# -eq 0 ] || [[ " $* " == *" $STEP "* ]]; }
ARGS=("$@")
for STEP in tests fx_tests demo pointwise norm embedding fx_backend rope rope_kernels rope_ncu rope_rounds region_ab warm host_cost model fuzz dist; do
  want "${ARGS[@]}" || continue
  case "$STEP" in
    tests)
      # With the CPU tests that mean more on the device's newer torch:
      # the operator's meta kernel under fake tensors, library fragments.
      step tests 240 "$PY" -m pytest -q -rs tests/python/test_gpu.py \
        tests/python/test_embedding_backward_op.py \
        tests/python/test_aten_call.py
      tail -n 2 "$OUT_DIR/tests.log" ;;
    fx_tests)
      step fx_tests 180 "$PY" -m pytest -q -p no:logging tests/python/test_fx.py \
        tests/python/test_fx_decompositions.py
      grep -E "^FAILED|passed|failed" "$OUT_DIR/fx_tests.log" | tail -n 4 ;;
    demo)
      step demo 120 bash scripts/demo.sh
      tail -n 4 "$OUT_DIR/demo.log" ;;
    pointwise)
      step pointwise 240 "$PY" benchmarks/pointwise_bench.py \
        --json "$OUT_DIR/pointwise.json"
      grep -E "^\||host overhead" "$OUT_DIR/pointwise.log" ;;
    norm)
      step norm 180 "$PY" benchmarks/norm_bench.py --json "$OUT_DIR/norm.json"
      grep -E "^\|" "$OUT_DIR/norm.log" ;;
    embedding)
      step embedding 180 "$PY" benchmarks/embedding_backward_bench.py \
        --json "$OUT_DIR/embedding.json"
      grep -E "^\|" "$OUT_DIR/embedding.log" ;;
    fx_backend)
      # shellcheck disable=SC2086  # FX_CASES: --cases A,B or nothing
      step fx_backend 300 "$PY" benchmarks/fx_backend_bench.py --kernels \
        ${FX_CASES:+--cases "$FX_CASES"} --json "$OUT_DIR/fx_backend.json"
      grep -E "^\||^  (nvfuser|inductor)" "$OUT_DIR/fx_backend.log" ;;
    rope)
      # shellcheck disable=SC2086  # ROPE_VARIANTS: --variants A,B or nothing
      step rope 500 "$PY" benchmarks/rope/run_suite.py --quick \
        ${ROPE_VARIANTS:+--variants "$ROPE_VARIANTS"} --out "$OUT_DIR/rope"
      grep -E "^\||^###|^WARNING" "$OUT_DIR/rope/rope_suite.md" | tail -n 60 ;;
    rope_ncu)
      # Nsight Compute on one measured call per RoPE variant and executor
      # (NCU_VARIANTS, NCU_MODES, NCU_EXECUTORS); hardware counters need
      # the Firecracker runtime (H200.md), so a failure here is reported,
      # not fatal. NCU_EXTRA adds ncu flags (e.g. --metrics breakdown:...).
      # shellcheck disable=SC2086  # NCU_EXTRA is a list of flags
      step rope_ncu 300 ncu --clock-control none --profile-from-start off \
        --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section Occupancy \
        --section LaunchStats --section WarpStateStats ${NCU_EXTRA:-} \
        "$PY" benchmarks/rope/profile_kernels.py \
        --variants "${NCU_VARIANTS:-llama_2_7b_litgpt}" \
        --modes "${NCU_MODES:-bwd}" \
        --executors "${NCU_EXECUTORS:-fd,inductor,nvfuser}"
      grep -E "profiled|==ERR|Duration|DRAM Throughput|Registers Per|Achieved Occ" \
        "$OUT_DIR/rope_ncu.log" | head -n 80 ;;
    rope_kernels)
      # Per-kernel breakdown of every RoPE variant for our FusionDefinition,
      # eager, inductor and our backend, and the regions torch.compile
      # hands us as repro scripts (one tarball: few files come back).
      step rope_kernels 400 "$PY" benchmarks/rope/dump_compiled.py \
        --modes "${ROPE_MODES:-fwd,bwd}" ${ROPE_VARIANTS:+--variants "$ROPE_VARIANTS"} \
        --out "$OUT_DIR/rope_kernels"
      tar -czf "$OUT_DIR/rope_kernels.tgz" -C "$OUT_DIR" rope_kernels &&
        rm -rf "$OUT_DIR/rope_kernels"
      "$PY" benchmarks/rope/dump_compiled.py --summary "$OUT_DIR/rope_kernels.tgz" ;;
    rope_rounds)
      # RoPE kernel times in interleaved rounds under each L2 flush
      # (benchmarks/rope/kernel_rounds.py; ROUNDS_VARIANTS, ROUNDS_MODES).
      step rope_rounds 400 "$PY" benchmarks/rope/kernel_rounds.py \
        ${ROUNDS_VARIANTS:+--variants "$ROUNDS_VARIANTS"} \
        --modes "${ROUNDS_MODES:-fwd,bwd}" --json "$OUT_DIR/rope_rounds.json"
      grep -E "^\|" "$OUT_DIR/rope_rounds.log" ;;
    region_ab)
      # NVFUSER_* settings A/B on the regions rope_kernels saved (run it in
      # the same call): AB_CONFIGS holds --config NAME=VAR=VALUE;... flags
      # (no spaces), AB_MATCH picks the regions (comma-separated
      # substrings, any).
      # shellcheck disable=SC2086  # AB_CONFIGS is a list of flags
      step region_ab "${AB_LIMIT_S:-300}" "$PY" benchmarks/region_ab.py \
        "$OUT_DIR/rope_kernels.tgz" --match "${AB_MATCH:-_bwd_region}" \
        --config base= ${AB_CONFIGS:-} --json "$OUT_DIR/region_ab.json"
      grep -E "^\|" "$OUT_DIR/region_ab.log" ;;
    warm)
      step warm 200 "$PY" benchmarks/warm_restart.py --json "$OUT_DIR/warm.json"
      grep -E "^\|" "$OUT_DIR/warm.log" ;;
    host_cost)
      step host_cost 60 "$PY" benchmarks/aten_host_cost.py \
        --json "$OUT_DIR/host_cost.json"
      grep -E "^\|" "$OUT_DIR/host_cost.log" ;;
    model)
      # shellcheck disable=SC2086  # MODEL_BENCH_ARGS is a list of flags
      step model 480 "$PY" benchmarks/model_bench.py --isolate --budget-s 420 \
        ${MODEL_BENCH_ARGS:---models llama,qwen2,mistral --dynamic} \
        --md "$OUT_DIR/model_bench.md" --json "$OUT_DIR/model_bench.json"
      # The Markdown is rewritten after every model: complete up to a
      # timeout.
      grep -E "^\||^WARNING" "$OUT_DIR/model_bench.md" 2>/dev/null ||
        tail -n 20 "$OUT_DIR/model.log" ;;
    fuzz)
      # fuzz_fusions needs no GoogleTest: configured into the build here,
      # so a failure costs this step only. FUZZ_COUNT fusions from
      # FUZZ_SEED, every kernel run on the GPU against ATen on the GPU.
      BUILD_DIR="${NVFUSER_BUILD_DIR:-$ROOT/build}"
      step fuzz_build 300 bash -c "cmake -DNVFUSER_BUILD_FUZZ=ON '$BUILD_DIR' \
        >/dev/null && cmake --build '$BUILD_DIR' --target fuzz_fusions \
        -- -j$(nproc)" &&
        step fuzz 300 "$BUILD_DIR/fuzz_fusions" --device cuda \
          --count "${FUZZ_COUNT:-200}" --seed "${FUZZ_SEED:-0}"
      grep -E "^FAIL|^fuzzed|error" "$OUT_DIR/fuzz_build.log" \
        "$OUT_DIR/fuzz.log" 2>/dev/null | tail -n 20 ;;
    dist)
      ngpu=$("$PY" -c 'import torch; print(torch.cuda.device_count())')
      comm="--dist-backend nccl"
      [ "$ngpu" -ge 2 ] || comm="--dist-backend gloo --share-gpu"
      for run in "ddp nvfuser --check" "ddp eager" "ddp inductor" \
        "fsdp2 nvfuser --check" "fsdp2 eager"; do
        set -- $run
        name="dist_$1_$2"
        # shellcheck disable=SC2086  # flags lists
        step "$name" 180 "$PY" -m torch.distributed.run --nproc-per-node 2 \
          examples/distributed_train.py --mode "$1" --backend "$2" \
          --steps 10 $comm ${3:-} ${DIST_ARGS:-}
        grep -E "^step|loss|ms|error|Error|eager" "$OUT_DIR/$name.log" |
          tail -n 16
      done ;;
  esac
done
