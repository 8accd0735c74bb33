"""RoPE kernel times of the suite's FusionDefinition, Inductor and our
backend through torch.compile (each a fresh compile), measured in
interleaved rounds under each L2 flush of bench_utils.FLUSH_MODES, in one
process:

    python3 benchmarks/rope/kernel_rounds.py [--variants a,b] [--modes fwd]
        [--rounds 5] [--json out.json]

Each round profiles every executor once (profiler kernel time, `--reps`
calls, the L2 flushed before each), starting one executor later than the
round before, so a drift of the GPU's clocks over the run does not favour
whichever executor always runs first. The table gives each executor's
median over the rounds with the range, and the ratios of the medians.
"""

import argparse
import json
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

import variants as rv  # noqa: E402
from bench_utils import FLUSH_MODES, profile_kernels  # noqa: E402
from profile_kernels import EXECUTORS, callable_for  # noqa: E402


def rounds_of(fns, rounds, reps, flush):
    """{executor: [kernel us per round]}, the executors' order rotated."""
    names = list(fns)
    us = {n: [] for n in names}
    for r in range(rounds):
        for k in range(len(names)):
            n = names[(r + k) % len(names)]
            us[n].append(profile_kernels(fns[n], reps, flush=flush)
                         ["kernel_ms"] * 1e3)
    return us


def cell(xs):
    return "%.1f [%.1f-%.1f]" % (statistics.median(xs), min(xs), max(xs))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variants", default=",".join(sorted(rv.CONFIGS)))
    p.add_argument("--modes", default="fwd,bwd")
    p.add_argument("--T", type=int, default=4096)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--flushes", default=",".join(FLUSH_MODES))
    p.add_argument("--json")
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("kernel_rounds.py needs a GPU")
    rows = []
    print("| case | flush | " + " | ".join("%s us" % e for e in EXECUTORS) +
          " | fd / inductor | nvfuser / inductor |")
    print("|---|---|" + "---|" * (len(EXECUTORS) + 2))
    for name in args.variants.split(","):
        cfg = rv.sized(name, args.T)
        fwd = rv.forward_inputs(cfg, device="cuda")
        bwd = rv.backward_inputs(cfg, device="cuda", fwd=fwd)
        for mode in args.modes.split(","):
            fns = {ex: callable_for(ex, cfg, mode, fwd, bwd)
                   for ex in EXECUTORS}
            for fn in fns.values():
                for _ in range(3):
                    fn()
            for flush in args.flushes.split(","):
                us = rounds_of(fns, args.rounds, args.reps, flush)
                med = {e: statistics.median(v) for e, v in us.items()}
                rows.append(dict(case="%s_%s" % (name, mode), flush=flush,
                                 us=us))
                print("| %s_%s | %s | %s | %.3f | %.3f |" % (
                    name, mode, flush,
                    " | ".join(cell(us[e]) for e in EXECUTORS),
                    med["fd"] / med["inductor"],
                    med["nvfuser"] / med["inductor"]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
