"""RoPE benchmark suite (issue #6): every variant, forward and backward,
through our compiler under each forwarding policy (and horizontal fusion
off), PyTorch eager, and torch.compile with inductor and with our backend
(backend="nvfuser"), at several sequence lengths.

    python3 benchmarks/rope/run_suite.py --out DIR [--quick] [--dry-run]
        [--variants a,b] [--backends inductor,nvfuser] [--fp32-compiled]

Every executor is timed by bench_utils.measure: CUDA-event median (L2
flushed), GPU kernel time and kernel count from the profiler. Each compiled
case is a fresh compile (bench_utils.fresh_compile: dynamo reset, new
function): one lambda compiled for every variant in one process used to hit
dynamo's recompile limit and time eager under the torch.compile label
(issue 16). A WARNING in the table flags a compiled backend that launches
as many kernels as eager, runs in under a tenth of our time, or beats the
copy bandwidth.

--quick: T=4096 only (fits one 10-minute device call). --dry-run: tiny
sizes on the CPU, wall-clock timing, no chart: checks the script itself.
--fp32-compiled: the compiled backends' fp32 check too (a compile each).
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
from bench_utils import (Timer, copy_bandwidth, error_info,  # noqa: E402
                         fmt_measure, fresh_compile, measure,
                         sanity_warnings)

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
    ins, wrt = rv.requiring_grad(cfg, fwd_inputs)
    n = rv.num_outputs(cfg)
    outs = rv.eager_forward(cfg, *ins)
    grads = bwd_inputs[:n]
    return lambda: torch.autograd.grad(outs[:n], wrt, grads, retain_graph=True)


# Compiled executors: result key -> torch.compile backend.
COMPILED = {"inductor": "inductor", "fx-nvfuser": "nvfuser"}


def _no_donated_buffers():
    # The backward is timed repeatedly on one graph (retain_graph), which
    # donated buffers forbid.
    try:
        import torch._functorch.config as fconfig
        fconfig.donated_buffer = False
    except (ImportError, AttributeError):
        pass


def compiled_callable(cfg, mode, fwd_inputs, bwd_inputs, backend):
    """(fn, None) timing the compiled forward, or the compiled backward
    (autograd on the compiled forward), or (None, why). A fresh compile:
    dynamo reset and a new function, whatever ran before."""
    if not hasattr(torch, "compile"):
        return None, "torch.compile unavailable"
    _no_donated_buffers()
    fwd = fresh_compile(lambda: (lambda *a: rv.eager_forward(cfg, *a)),
                        backend)
    if mode == "fwd":
        return (lambda: fwd(*fwd_inputs)), None
    ins, wrt = rv.requiring_grad(cfg, fwd_inputs)
    n = rv.num_outputs(cfg)
    outs = fwd(*ins)
    return (lambda: torch.autograd.grad(outs[:n], wrt, bwd_inputs[:n],
                                        retain_graph=True)), None


def max_rel_error(outs, refs):
    return max(((o.double() - r.double()).abs().max() /
                r.double().abs().max().clamp_min(1e-12)).item()
               for o, r in zip(outs, refs))


def _first_line(e):
    return error_info(e)["error"][:160]


def check_fp32(name, mode, dev, backends=()):
    """Our outputs under every policy against eager (forward) or autograd
    in float64 (backward), fp32 at a small size: max relative error; with
    backends, those compiled backends against eager too."""
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
    for key in backends:  # against eager, same fp32 inputs
        try:
            bwd = rv.backward_inputs(cfg, f32, dev, fwd=fwd)
            comp, why = compiled_callable(cfg, mode, fwd, bwd, COMPILED[key])
            errors[key] = (
                max_rel_error(comp(), eager_callables(cfg, mode, fwd, bwd)())
                if comp is not None else why)
        except Exception as e:  # a compiler failure is a result
            errors[key] = "failed: %s" % _first_line(e)
    return errors


def run_one(name, mode, T, cuda, timer, copy_bw, dry, backends=(),
            fp32_compiled=False):
    cfg = rv.small(name, T) if dry else rv.sized(name, T)
    dev = "cuda" if cuda else "cpu"
    dt = DataType.BFloat16
    reps = timer.reps
    fwd_inputs = rv.forward_inputs(cfg, dt, dev)
    bwd_inputs = rv.backward_inputs(cfg, dt, dev, fwd=fwd_inputs)
    inputs = fwd_inputs if mode == "fwd" else bwd_inputs
    define = rv.define_forward if mode == "fwd" else rv.define_backward
    row = dict(variant=name, mode=mode, T=T, results={},
               fp32_max_rel_error=check_fp32(
                   name, mode, dev, backends if fp32_compiled else ()))
    minimal = None

    def bandwidth(res):
        res["gbps"] = minimal / res["ms"] / 1e6
        res["frac"] = res["gbps"] / copy_bw
        return res

    for policy, disable in POLICIES.items():
        with FusionDefinition() as fd:
            define(fd, cfg, dt)
        t0 = time.perf_counter()
        outs = fd.execute(inputs, _disable_options=disable)
        if cuda:
            torch.cuda.synchronize()
        first_ms = (time.perf_counter() - t0) * 1e3
        seg = fd.last_segmentation()
        minimal = rv.minimal_bytes(cfg, mode, inputs, outs)
        res = measure(lambda: fd.execute(inputs, _disable_options=disable),
                      reps=reps, cuda=cuda)
        res.update(segments=len(seg["groups"]),
                   boundary_bytes=seg["boundary_bytes"],
                   first_call_ms=first_ms)
        row["results"]["nvfuser-" + policy] = bandwidth(res)
    eager = eager_callables(cfg, mode, fwd_inputs, bwd_inputs)
    row["results"]["eager"] = bandwidth(measure(eager, reps=reps, cuda=cuda))
    eager_out = eager()
    for key in backends:
        try:
            t0 = time.perf_counter()
            comp, why = compiled_callable(cfg, mode, fwd_inputs, bwd_inputs,
                                          COMPILED[key])
            if comp is None:
                row["results"][key] = dict(unavailable=why)
                continue
            out = comp()
            if cuda:
                torch.cuda.synchronize()
            compile_ms = (time.perf_counter() - t0) * 1e3
            res = measure(comp, reps=reps, cuda=cuda)
            res.update(compile_ms=compile_ms,
                       bf16_max_rel_error=max_rel_error(out, eager_out))
            row["results"][key] = bandwidth(res)
        except Exception as e:  # a compiler failure is a result, not a crash
            info = error_info(e)
            row["results"][key] = dict(unavailable="%s failed: %s" % (
                key, info["error"][:120]), traceback=info["traceback"])
    res = row["results"]
    ours = res["nvfuser-extended"]
    ind = res.get("inductor", {})
    row["speedup_vs_inductor"] = (ind["ms"] / ours["ms"]
                                  if ind.get("ms") else None)
    row["kernel_speedup_vs_inductor"] = (
        ind["kernel_ms"] / ours["kernel_ms"]
        if ind.get("kernel_ms") and ours.get("kernel_ms") else None)
    row["speedup_vs_eager"] = res["eager"]["ms"] / ours["ms"]
    # Kernel counts against eager's; times against ours (a fused RoPE is
    # legitimately 10x+ faster than eager's, so eager is no time baseline
    # here); nothing moves the minimal bytes faster than a copy does.
    row["warnings"] = sanity_warnings(res, list(backends), count_ref="eager",
                                      time_ref="nvfuser-extended")
    for key, r in res.items():
        if r.get("frac") is not None and r["frac"] > 1.1 and not dry:
            row["warnings"].append(
                "WARNING: %s moves the minimal bytes at %.0f%% of copy "
                "bandwidth: impossible, the measurement is wrong" % (
                    key, 100 * r["frac"]))
    return row


def _cell(res, key):
    r = res.get(key)
    if r is None:
        return "-"
    return fmt_measure(r).replace("|", "/").replace("\n", " ")


def _ratio(x):
    return "%.2fx" % x if x else "-"


def markdown(rows, copy_bw, backends=tuple(COMPILED)):
    out = ["Copy bandwidth measured in this run: %.0f GB/s\n" % copy_bw,
           "Times: ms per call, CUDA-event median with L2 flushed "
           "(kernel ms from the profiler, kernels per call); each compiled "
           "case is a fresh compile. vs inductor: inductor's time over "
           "ours, event / kernel.\n"]
    for mode in ("fwd", "bwd"):
        out.append("\n### %s\n" % mode)
        out.append("| variant | T | segments off/unary/ext, no-hf: off/ext | "
                   "ours ms (kernel ms, kernels) | of copy BW | eager | " +
                   " | ".join("%s" % (k if k != "fx-nvfuser" else
                                      "torch.compile nvfuser")
                              for k in backends) +
                   " | vs inductor | fp32 err |")
        out.append("|---|---|---|---|---|---|" + "---|" * len(backends) +
                   "---|---|")
        for r in rows:
            if r["mode"] != mode:
                continue
            if "error" in r:
                out.append("| %s | %d | ERROR %s |" % (
                    r["variant"], r["T"], r["error"][:160].replace("|", "/")))
                continue
            res = r["results"]
            segs = "/".join(str(res["nvfuser-" + p]["segments"])
                            for p in ("off", "unary", "extended")) + \
                ", " + "/".join(str(res["nvfuser-" + p]["segments"])
                                for p in ("off-no-hfusion",
                                          "extended-no-hfusion"))
            ext = res["nvfuser-extended"]
            err = max(v for k, v in r["fp32_max_rel_error"].items()
                      if k.startswith("nvfuser-"))
            vs = "%s / %s" % (_ratio(r.get("speedup_vs_inductor")),
                              _ratio(r.get("kernel_speedup_vs_inductor")))
            out.append("| %s | %d | %s | %s | %.1f%% | %s | %s | %s | %.0e |"
                       % (r["variant"], r["T"], segs, fmt_measure(ext),
                          100 * ext["frac"], _cell(res, "eager"),
                          " | ".join(_cell(res, k) for k in backends), vs,
                          err))
        for r in rows:
            if r["mode"] == mode:
                for w in r.get("warnings", []):
                    out.append("\n%s (%s %s T=%d)" % (w, r["variant"], mode,
                                                      r["T"]))
    return "\n".join(out) + "\n"


def chart(rows, path):
    """Top: time per variant per executor (log scale), forward and
    backward. Bottom: our bandwidth as a share of copy bandwidth vs T."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in rows if "error" not in r]
    fig, axes = plt.subplots(2, 2, figsize=(15, 9))
    executors = [("nvfuser-extended", "ours"), ("eager", "eager"),
                 ("inductor", "torch.compile (inductor)"),
                 ("fx-nvfuser", "torch.compile (nvfuser)")]
    for col, mode in enumerate(("fwd", "bwd")):
        ax = axes[0][col]
        Tmax = max((r["T"] for r in rows if r["mode"] == mode), default=0)
        sel = sorted((r for r in rows if r["mode"] == mode and
                      r["T"] == Tmax), key=lambda r: r["variant"])
        width = 0.8 / len(executors)
        for k, (key, label) in enumerate(executors):
            ms = [r["results"].get(key, {}).get("ms") or float("nan")
                  for r in sel]
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
    p.add_argument("--backends", default="inductor,nvfuser",
                   help="torch.compile backends to compare: inductor, "
                        "nvfuser (ours through the FX backend); '' for none")
    p.add_argument("--fp32-compiled", action="store_true",
                   help="fp32 check of the compiled backends too")
    p.add_argument("--reps", type=int, default=None,
                   help="timed reps per executor (20 on the GPU)")
    args = p.parse_args()
    backends = []
    for b in filter(None, args.backends.split(",")):
        key = {"nvfuser": "fx-nvfuser"}.get(b, b)
        if key not in COMPILED:
            p.error("unknown backend %r (inductor, nvfuser)" % b)
        backends.append(key)
    if args.chart_from:
        with open(args.chart_from) as f:
            chart(json.load(f)["rows"],
                  os.path.join(args.out, "rope_suite.png"))
        return
    cuda = torch.cuda.is_available() and not args.dry_run
    timer = Timer(cuda, reps=args.reps or (20 if cuda else 2))
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
        md = markdown(rows, copy_bw, backends)
        with open(os.path.join(args.out, "rope_suite.md"), "w") as f:
            f.write(md)
        return md

    for name in args.variants.split(","):
        for mode in ("fwd", "bwd"):
            for T in ts:
                try:
                    row = run_one(name, mode, T, cuda, timer, copy_bw,
                                  args.dry_run, backends, args.fp32_compiled)
                    msg = "ours %.3f ms" % (
                        row["results"]["nvfuser-extended"]["ms"])
                except Exception as e:  # one case's failure is a result
                    if args.dry_run:
                        raise  # CI checks the script: fail loudly there
                    row = dict(variant=name, mode=mode, T=T, **error_info(e))
                    msg = "ERROR " + row["error"]
                rows.append(row)
                print("%-22s %s T=%-6d %s" % (name, mode, T, msg), flush=True)
                for w in row.get("warnings", []):
                    print("  " + w, flush=True)
                write(False)
    print(write(True))
    if cuda:
        try:
            chart(rows, os.path.join(args.out, "rope_suite.png"))
        except Exception as e:  # no matplotlib: the tables are the result
            print("no chart:", error_info(e)["error"])


if __name__ == "__main__":
    main()
