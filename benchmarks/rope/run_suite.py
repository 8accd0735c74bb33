"""RoPE benchmark suite (issue #6): every variant, forward and backward,
through our compiler under each forwarding policy (and horizontal fusion
off), PyTorch eager and torch.compile, at several sequence lengths.

    python3 benchmarks/rope/run_suite.py --out DIR [--quick] [--dry-run]

--quick: T=4096 only (fits one 10-minute device call). --dry-run: tiny
sizes on the CPU, wall-clock timing, no chart: checks the script itself.
Writes DIR/rope_suite.json, DIR/rope_suite.md and (on the GPU)
DIR/rope_suite.png.
"""

import argparse
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

from nvfuser import DataType, FusionDefinition  # noqa: E402
import variants as rv  # noqa: E402
from bench_utils import Timer, copy_bandwidth, count_kernels  # noqa: E402

POLICIES = {"off": ["input_forwarding"],
            "unary": ["extended_input_forwarding"],
            "extended": [],
            "off-no-hfusion": ["input_forwarding", "horizontal_fusion"],
            "extended-no-hfusion": ["horizontal_fusion"]}


def eager_callables(cfg, mode, fwd_inputs, bwd_inputs):
    """(fn, outputs-for-bytes) for eager; mode 'bwd' times the backward
    through autograd on the eager forward."""
    if mode == "fwd":
        return lambda: rv.eager_forward(cfg, *fwd_inputs)
    ins = [t.detach().clone().requires_grad_(t.is_floating_point())
           for t in fwd_inputs]
    n = rv.num_outputs(cfg)
    outs = rv.eager_forward(cfg, *ins)
    grads = bwd_inputs[:n]
    wrt = [t for t in ins if t.requires_grad]
    return lambda: torch.autograd.grad(outs[:n], wrt, grads, retain_graph=True)


def compiled_callable(cfg, mode, fwd_inputs, bwd_inputs):
    if not hasattr(torch, "compile"):
        return None, "torch.compile unavailable"
    # The backward is timed repeatedly on one graph (retain_graph), which
    # donated buffers forbid.
    torch._functorch.config.donated_buffer = False
    fwd = torch.compile(lambda *a: rv.eager_forward(cfg, *a))
    if mode == "fwd":
        return (lambda: fwd(*fwd_inputs)), None
    ins = [t.detach().clone().requires_grad_(t.is_floating_point())
           for t in fwd_inputs]
    n = rv.num_outputs(cfg)
    outs = fwd(*ins)
    wrt = [t for t in ins if t.requires_grad]
    return (lambda: torch.autograd.grad(outs[:n], wrt, bwd_inputs[:n],
                                        retain_graph=True)), None


def max_rel_error(outs, refs):
    return max(((o.double() - r.double()).abs().max() /
                r.double().abs().max().clamp_min(1e-12)).item()
               for o, r in zip(outs, refs))


def check_fp32(name, mode, dev):
    """Our outputs under every policy against eager (forward) or autograd
    in float64 (backward), fp32 at a small size: max relative error."""
    cfg = rv.small(name, 64)
    f32 = DataType.Float
    fwd = rv.forward_inputs(cfg, f32, dev)
    if mode == "fwd":
        inputs, refs = fwd, rv.eager_forward(cfg, *fwd)
    else:
        inputs = rv.backward_inputs(cfg, f32, dev, fwd=fwd)
        refs = rv.autograd_backward(cfg, inputs, fwd)
    errors = {}
    for policy, disable in POLICIES.items():
        with FusionDefinition() as fd:
            (rv.define_forward if mode == "fwd" else rv.define_backward)(
                fd, cfg, f32)
        outs = fd.execute(inputs, _disable_options=disable)
        errors["nvfuser-" + policy] = max_rel_error(outs, refs)
    if hasattr(torch, "compile"):  # against eager, same fp32 inputs
        try:
            bwd = rv.backward_inputs(cfg, f32, dev, fwd=fwd)
            comp, why = compiled_callable(cfg, mode, fwd, bwd)
            errors["torch.compile"] = (
                max_rel_error(comp(), eager_callables(cfg, mode, fwd, bwd)())
                if comp is not None else why)
        except Exception as e:  # an inductor failure is a result
            errors["torch.compile"] = "failed: %s" % (
                str(e).strip().splitlines() or ["?"])[0][:120]
    return errors


def run_one(name, mode, T, cuda, timer, copy_bw, dry):
    cfg = rv.small(name, T) if dry else rv.sized(name, T)
    dev = "cuda" if cuda else "cpu"
    dt = DataType.BFloat16
    fwd_inputs = rv.forward_inputs(cfg, dt, dev)
    bwd_inputs = rv.backward_inputs(cfg, dt, dev, fwd=fwd_inputs)
    inputs = fwd_inputs if mode == "fwd" else bwd_inputs
    define = rv.define_forward if mode == "fwd" else rv.define_backward
    row = dict(variant=name, mode=mode, T=T, results={},
               fp32_max_rel_error=check_fp32(name, mode, dev))
    for policy, disable in POLICIES.items():
        with FusionDefinition() as fd:
            define(fd, cfg, dt)
        t0 = time.perf_counter()
        outs = fd.execute(inputs, _disable_options=disable)
        if cuda:
            torch.cuda.synchronize()
        first_ms = (time.perf_counter() - t0) * 1e3
        seg = fd.last_segmentation()
        ms = timer(lambda: fd.execute(inputs, _disable_options=disable))
        minimal = rv.minimal_bytes(cfg, mode, inputs, outs)
        row["results"]["nvfuser-" + policy] = dict(
            segments=len(seg["groups"]), boundary_bytes=seg["boundary_bytes"],
            kernels=count_kernels(
                lambda: fd.execute(inputs, _disable_options=disable), cuda),
            ms=ms, gbps=minimal / ms / 1e6, frac=minimal / ms / 1e6 / copy_bw,
            first_call_ms=first_ms)
    eager = eager_callables(cfg, mode, fwd_inputs, bwd_inputs)
    ms = timer(eager)
    row["results"]["eager"] = dict(ms=ms, kernels=count_kernels(eager, cuda),
                                   gbps=minimal / ms / 1e6,
                                   frac=minimal / ms / 1e6 / copy_bw)
    try:
        t0 = time.perf_counter()
        comp, why = compiled_callable(cfg, mode, fwd_inputs, bwd_inputs)
        if comp is not None:
            comp()
    except Exception as e:  # an inductor failure is a result, not a crash
        comp, why = None, "torch.compile failed: %s" % (
            str(e).strip().splitlines() or ["?"])[0][:120]
    if comp is None:
        row["results"]["torch.compile"] = dict(unavailable=why)
    else:
        compile_ms = (time.perf_counter() - t0) * 1e3
        if mode == "fwd":  # bf16 at size, against eager
            row["bf16_max_rel_error_torch_compile"] = max_rel_error(
                comp(), eager())
        ms = timer(comp)
        row["results"]["torch.compile"] = dict(
            ms=ms, kernels=count_kernels(comp, cuda), compile_ms=compile_ms,
            gbps=minimal / ms / 1e6, frac=minimal / ms / 1e6 / copy_bw)
    ours = row["results"]["nvfuser-extended"]["ms"]
    comp_ms = row["results"]["torch.compile"].get("ms")
    row["speedup_vs_compile"] = comp_ms / ours if comp_ms else None
    row["speedup_vs_eager"] = row["results"]["eager"]["ms"] / ours
    return row


def markdown(rows, copy_bw):
    out = ["Copy bandwidth measured in this run: %.0f GB/s\n" % copy_bw]
    for mode in ("fwd", "bwd"):
        out.append("\n### %s\n" % mode)
        out.append("| variant | T | segments off/unary/ext, no-hf: off/ext | ours ms | of copy "
                   "BW | eager ms | torch.compile ms (kernels) | vs compile | "
                   "fp32 err |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            if r["mode"] != mode:
                continue
            res = r["results"]
            segs = "/".join(str(res["nvfuser-" + p]["segments"])
                            for p in ("off", "unary", "extended")) + \
                ", " + "/".join(str(res["nvfuser-" + p]["segments"])
                                for p in ("off-no-hfusion",
                                          "extended-no-hfusion"))
            ext = res["nvfuser-extended"]
            tc = res["torch.compile"]
            tcs = ("%.3f (%s)" % (tc["ms"], tc["kernels"]) if "ms" in tc
                   else tc["unavailable"])
            vs = ("%.2fx" % r["speedup_vs_compile"]
                  if r["speedup_vs_compile"] else "-")
            err = max(v for k, v in r["fp32_max_rel_error"].items()
                      if k.startswith("nvfuser-"))
            out.append("| %s | %d | %s | %.3f | %.1f%% | %.3f | %s | %s | "
                       "%.0e |" % (
                           r["variant"], r["T"], segs, ext["ms"],
                           100 * ext["frac"], res["eager"]["ms"], tcs, vs,
                           err))
    return "\n".join(out) + "\n"


def chart(rows, path):
    """Top: time per variant per executor (log scale), forward and
    backward. Bottom: our bandwidth as a share of copy bandwidth vs T."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 2, figsize=(15, 9))
    executors = [("nvfuser-extended", "ours"), ("eager", "eager"),
                 ("torch.compile", "torch.compile")]
    for col, mode in enumerate(("fwd", "bwd")):
        ax = axes[0][col]
        Tmax = max((r["T"] for r in rows if r["mode"] == mode), default=0)
        sel = sorted((r for r in rows if r["mode"] == mode and
                      r["T"] == Tmax), key=lambda r: r["variant"])
        width = 0.8 / len(executors)
        for k, (key, label) in enumerate(executors):
            ms = [r["results"][key].get("ms", float("nan")) for r in sel]
            ax.bar([i + k * width for i in range(len(sel))], ms, width,
                   label=label)
        ax.set_xticks([i + width for i in range(len(sel))])
        ax.set_xticklabels([r["variant"] for r in sel], rotation=30,
                           ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("ms (median, L2 flushed)")
        ax.set_title("RoPE %s at T=%d" % (mode, Tmax))
        ax.legend(fontsize=7)
        ax = axes[1][col]
        for name in sorted({r["variant"] for r in rows}):
            pts = sorted((r["T"], r["results"]["nvfuser-extended"]["frac"])
                         for r in rows
                         if r["variant"] == name and r["mode"] == mode)
            if pts:
                ax.plot([p[0] for p in pts], [100 * p[1] for p in pts],
                        marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 110)
        ax.set_title("RoPE %s: %% of copy bandwidth vs T (ours)" % mode)
        ax.set_xlabel("T")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default=".")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--chart-from", metavar="JSON",
                   help="only draw the chart of an earlier run's JSON")
    p.add_argument("--variants", default=",".join(sorted(rv.CONFIGS)))
    args = p.parse_args()
    if args.chart_from:
        with open(args.chart_from) as f:
            chart(json.load(f)["rows"],
                  os.path.join(args.out, "rope_suite.png"))
        return
    cuda = torch.cuda.is_available() and not args.dry_run
    timer = Timer(cuda, reps=20 if cuda else 2)
    copy_bw = copy_bandwidth(cuda, timer)
    ts = [8] if args.dry_run else (
        [4096] if args.quick else [1024, 4096, 8192, 16384, 32768])
    rows = []
    os.makedirs(args.out, exist_ok=True)

    def write(final):
        # Rewritten after every row: a run cut short keeps what it measured.
        with open(os.path.join(args.out, "rope_suite.json"), "w") as f:
            json.dump(dict(gpu=torch.cuda.get_device_name() if cuda else "cpu",
                           date=time.strftime("%Y-%m-%d"), copy_gbps=copy_bw,
                           complete=final, rows=rows), f, indent=1)
        md = markdown(rows, copy_bw)
        with open(os.path.join(args.out, "rope_suite.md"), "w") as f:
            f.write(md)
        return md

    for name in args.variants.split(","):
        for mode in ("fwd", "bwd"):
            for T in ts:
                row = run_one(name, mode, T, cuda, timer, copy_bw,
                              args.dry_run)
                rows.append(row)
                print("%-22s %s T=%-6d ours %.3f ms" % (
                    name, mode, T, row["results"]["nvfuser-extended"]["ms"]),
                    flush=True)
                write(False)
    print(write(True))
    if cuda:
        chart(rows, os.path.join(args.out, "rope_suite.png"))


if __name__ == "__main__":
    main()
