"""Runs each RoPE variant once per mode and executor on the GPU between
cudaProfilerStart and cudaProfilerStop, for a kernel profiler to attach to
(Nsight Compute; an NVTX range would miss the backward's kernels, which
autograd launches from its own thread):

    ncu --clock-control none --profile-from-start off \\
        --section SpeedOfLight --section Occupancy --section LaunchStats \\
        python3 benchmarks/rope/profile_kernels.py \\
        --variants phi_3_5_mini_litgpt --modes bwd --executors fd,nvfuser

Executors: fd (the suite's FusionDefinition), inductor and nvfuser
(torch.compile, a fresh compile each). Warm-up calls (compiles, Inductor's
autotuning) run outside it, so only the measured call's kernels are
profiled, in the order printed ("profiled VARIANT MODE EXECUTOR").
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

from nvfuser import DataType, FusionDefinition  # noqa: E402
import variants as rv  # noqa: E402
from run_suite import compiled_callable  # noqa: E402

EXECUTORS = ("fd", "inductor", "nvfuser")


def fusion_callable(cfg, mode, fwd, bwd):
    with FusionDefinition() as fd:
        (rv.define_forward if mode == "fwd" else rv.define_backward)(
            fd, cfg, DataType.BFloat16)
    ins = fwd if mode == "fwd" else bwd
    return lambda: fd.execute(ins)


def callable_for(executor, cfg, mode, fwd, bwd):
    if executor == "fd":
        return fusion_callable(cfg, mode, fwd, bwd)
    fn, why = compiled_callable(cfg, mode, fwd, bwd, executor)
    if fn is None:
        raise SystemExit("%s: %s" % (executor, why))
    return fn


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variants", default=",".join(sorted(rv.CONFIGS)))
    p.add_argument("--modes", default="fwd,bwd")
    p.add_argument("--executors", default="fd")
    p.add_argument("--T", type=int, default=4096)
    args = p.parse_args()
    for ex in args.executors.split(","):
        if ex not in EXECUTORS:
            p.error("unknown executor %r (one of %s)" % (ex, EXECUTORS))
    for name in args.variants.split(","):
        cfg = rv.sized(name, args.T)
        fwd = rv.forward_inputs(cfg, DataType.BFloat16, "cuda")
        bwd = rv.backward_inputs(cfg, DataType.BFloat16, "cuda", fwd=fwd)
        for mode in args.modes.split(","):
            for ex in args.executors.split(","):
                fn = callable_for(ex, cfg, mode, fwd, bwd)
                fn()
                fn()
                torch.cuda.synchronize()
                torch.cuda.profiler.start()
                fn()
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
                print("profiled", name, mode, ex, flush=True)


if __name__ == "__main__":
    main()
