"""What torch.compile hands our backend for RoPE variants, and what each
backend's kernels cost: for every variant and mode, the regions'
FusionDefinitions as runnable repro scripts (to replay on the CPU, where
the emulator and NVFUSER_DUMP=cuda_kernel show what we generate) and the
profiler's kernel breakdown (name, us per call, launches per call) for
the suite's own FusionDefinition, eager, inductor and our backend (each a
fresh compile).

    python3 benchmarks/rope/dump_compiled.py --out DIR [--variants a,b]
        [--modes fwd,bwd] [--T 4096]
    python3 benchmarks/rope/dump_compiled.py --summary DIR_OR_TGZ

Writes DIR/<variant>_<mode>_region<k>.py, DIR/<variant>_<mode>_fd.py (the
suite's FusionDefinition) and DIR/kernels.json, and prints
the breakdown; --summary prints a table of kernel time (us) and kernel
count per executor from a kernels.json (in a directory or a tarball).
"""

import argparse
import json
import os
import sys
import tarfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

from nvfuser import DataType, FusionDefinition  # noqa: E402
from nvfuser.fx import FusionRegion  # noqa: E402
import variants as rv  # noqa: E402
from bench_utils import kernel_breakdown, sanity_warnings  # noqa: E402
from run_suite import compiled_callable, eager_callables  # noqa: E402


def _record_regions():
    """Every FusionRegion built from now on, in order."""
    made = []
    init = FusionRegion.__init__

    def recording_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)
    FusionRegion.__init__ = recording_init
    return made


EXECUTORS = ("ours (FusionDefinition)", "eager", "inductor", "nvfuser")


def _load_report(path):
    if os.path.isdir(path):
        with open(os.path.join(path, "kernels.json")) as f:
            return json.load(f)
    with tarfile.open(path) as tar:
        name = [m for m in tar.getnames() if m.endswith("kernels.json")][0]
        return json.load(tar.extractfile(name))


# The kernels a compiled backend generates itself; any other kernel in its
# run is ATen's, launched outside the compiled graph (AOTAutograd's
# handling of an output that aliases an input, a copy of a gradient).
OWN_KERNELS = {"inductor": ("triton_",), "nvfuser": ("nvfuser_",)}


def outside_graph_notes(case, by):
    """A NOTE per case whose compiled runs launch ATen kernels, with their
    time: the same for every backend, it is not the backends' work."""
    parts = []
    for ex, prefixes in OWN_KERNELS.items():
        rows = by.get(ex)
        if not isinstance(rows, list):
            continue
        aten = [r for r in rows if not r[0].startswith(prefixes)]
        if aten:
            parts.append("%s %.1f us in %d" % (
                ex, sum(r[1] for r in aten), sum(r[2] for r in aten)))
    if not parts:
        return []
    return ["NOTE (%s): ATen kernels outside the compiled graph: %s" % (
        case, "; ".join(parts))]


def summary_table(report):
    """Markdown: per case, each executor's kernel us (kernels), and ours
    (FusionDefinition and torch.compile) over inductor; then a NOTE for
    each case whose compiled runs launch ATen kernels outside the graph,
    and a WARNING for each compiled backend that launched as many kernels
    as eager (it fell back to eager)."""
    lines = ["| case | FusionDefinition | eager | inductor | torch.compile "
             "nvfuser | FD / inductor | nvfuser / inductor |",
             "|---|---|---|---|---|---|---|"]
    warnings = []
    notes = []
    for case, by in report.items():
        us = {}
        cells = []
        for ex in EXECUTORS:
            rows = by.get(ex)
            if isinstance(rows, list):
                us[ex] = sum(r[1] for r in rows)
                cells.append("%.1f (%d)" % (us[ex], sum(r[2] for r in rows)))
            else:
                cells.append(str(rows))
        ind = us.get("inductor")
        ratios = ["%.2f" % (us[ex] / ind) if ind and ex in us else "-"
                  for ex in (EXECUTORS[0], EXECUTORS[3])]
        lines.append("| %s | %s | %s |" % (case, " | ".join(cells),
                                           " | ".join(ratios)))
        # Kernel counts only: against eager's time a RoPE's fused kernel
        # is 10-30x faster, legitimately.
        counts = {ex: {"ms": us[ex], "kernels": sum(r[2] for r in by[ex])}
                  for ex in us}
        warnings += sanity_warnings(counts, ("inductor", "nvfuser"),
                                    min_ratio=0, label=" (%s)" % case)
        notes += outside_graph_notes(case, by)
    return "\n".join(lines + notes + warnings)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--summary", help="print the table of a kernels.json")
    p.add_argument("--out")
    p.add_argument("--variants", default=",".join(sorted(rv.CONFIGS)))
    p.add_argument("--modes", default="bwd")
    p.add_argument("--T", type=int, default=4096)
    args = p.parse_args()
    if args.summary:
        print(summary_table(_load_report(args.summary)))
        return
    if not args.out:
        p.error("--out is required")
    os.makedirs(args.out, exist_ok=True)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    regions = _record_regions()
    breakdown = kernel_breakdown if dev == "cuda" else (
        lambda fn: (fn(), "no GPU: not profiled")[1])
    report = {}
    for name in args.variants.split(","):
        cfg = rv.sized(name, args.T) if dev == "cuda" else rv.small(name)
        fwd = rv.forward_inputs(cfg, DataType.BFloat16, dev)
        bwd = rv.backward_inputs(cfg, DataType.BFloat16, dev, fwd=fwd)
        for mode in args.modes.split(","):
            key = "%s_%s" % (name, mode)
            with FusionDefinition() as fd:
                (rv.define_forward if mode == "fwd" else rv.define_backward)(
                    fd, cfg, DataType.BFloat16)
            ins = fwd if mode == "fwd" else bwd
            with open(os.path.join(args.out, key + "_fd.py"), "w") as f:
                f.write("# %s, %s, T=%d: the suite's FusionDefinition\n%r\n"
                        % (name, mode, cfg["T"], fd))
            report[key] = {
                "ours (FusionDefinition)": breakdown(lambda: fd.execute(ins)),
                "eager": breakdown(eager_callables(cfg, mode, fwd, bwd))}
            for backend in ("inductor", "nvfuser"):
                first = len(regions)
                fn, why = compiled_callable(cfg, mode, fwd, bwd, backend)
                if fn is None:
                    report[key][backend] = why
                    continue
                fn()
                report[key][backend] = breakdown(fn)
                for k, region in enumerate(regions[first:]):
                    path = os.path.join(args.out, "%s_region%d.py" % (key, k))
                    with open(path, "w") as f:
                        f.write("# %s, %s, T=%d: region %d of the graph\n"
                                "# %s\n%r\n" % (
                                    name, mode, cfg["T"], k,
                                    " ".join(str(n.target) for n in
                                             region.eager.graph.nodes
                                             if n.op == "call_function"),
                                    region.fd))
            for backend, rows in report[key].items():
                print("## %s %s" % (key, backend))
                for row in rows if isinstance(rows, list) else [rows]:
                    print("   ", row)
    with open(os.path.join(args.out, "kernels.json"), "w") as f:
        json.dump(report, f, indent=1, default=str)
    print(summary_table(report))


if __name__ == "__main__":
    main()
