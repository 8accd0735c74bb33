"""Runs each RoPE variant's fusion once per mode on the GPU, for a kernel
profiler to attach to (Nsight Compute):

    ncu --section SpeedOfLight --section Occupancy --section LaunchStats \\
        -k regex:nvfuser python3 benchmarks/rope/profile_kernels.py \\
        --variants phi_3_5_mini_litgpt --modes fwd,bwd

Warm-up calls compile the kernels first; NVTX-free, so ncu's -k filter
picks our kernels by name and --launch-skip skips the warm-up launches.
"""

import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

from nvfuser import DataType, FusionDefinition  # noqa: E402
import variants as rv  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--variants", default=",".join(sorted(rv.CONFIGS)))
    p.add_argument("--modes", default="fwd,bwd")
    p.add_argument("--T", type=int, default=4096)
    args = p.parse_args()
    dt = DataType.BFloat16
    for name in args.variants.split(","):
        cfg = rv.sized(name, args.T)
        fwd = rv.forward_inputs(cfg, dt, "cuda")
        for mode in args.modes.split(","):
            ins = fwd if mode == "fwd" else rv.backward_inputs(
                cfg, dt, "cuda", fwd=fwd)
            with FusionDefinition() as fd:
                (rv.define_forward if mode == "fwd" else rv.define_backward)(
                    fd, cfg, dt)
            fd.execute(ins)
            torch.cuda.synchronize()
            print("profiled", name, mode, flush=True)


if __name__ == "__main__":
    main()
