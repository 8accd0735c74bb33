"""torch.compile(backend="nvfuser") against the default backend (inductor)
on unmodified Hugging Face transformers code (issue #8), run on the device:
the rotary embedding module computing cos/sin from position ids,
apply_rotary_pos_emb and repeat_kv for Llama-3-8B, Qwen2.5-7B and
Mistral-7B shapes, LlamaRMSNorm and torch.nn.LayerNorm; forward and
forward+backward, checked against eager. Prints a table (with the
backward's kernel time: fwd+bwd less fwd) and writes JSON.

    python3 benchmarks/fx_backend_bench.py [--json PATH] [--T 4096]
        [--cases a,b] [--kernels] [--reps 20]

Every case is a fresh compile (bench_utils.fresh_compile) and every time
comes from bench_utils.measure (event ms, kernel ms, kernels); eager is
measured too, and a WARNING line flags a compiled backend that launches as
many kernels as eager or runs in under a tenth of eager's time.
"""

import argparse
import importlib
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import nvfuser  # noqa: E402,F401  (registers backend="nvfuser")
from nvfuser.fx import partition  # noqa: E402
from bench_utils import (dynamo_stats, error_info,  # noqa: E402
                         fresh_compile, kernel_breakdown, measure,
                         sanity_warnings)

BACKENDS = ("nvfuser", "inductor", "eager")

MODELS = {  # name: (module, config class, hidden, heads, kv heads, theta)
    "llama_3_8b": ("llama", "LlamaConfig", 4096, 32, 8, 500000.0),
    "qwen2_5_7b": ("qwen2", "Qwen2Config", 3584, 28, 4, 1000000.0),
    "mistral_7b": ("mistral", "MistralConfig", 4096, 32, 8, 10000.0),
}


class RopeBlock(torch.nn.Module):
    """The attention prologue of a transformers model, verbatim calls."""

    def __init__(self, name):
        super().__init__()
        mod, cfg_name, hidden, heads, kv, theta = MODELS[name]
        m = importlib.import_module("transformers.models.%s.modeling_%s" %
                                    (mod, mod))
        cfg = getattr(importlib.import_module("transformers"), cfg_name)(
            hidden_size=hidden, num_attention_heads=heads,
            num_key_value_heads=kv, rope_theta=theta)
        prefix = {"llama": "Llama", "qwen2": "Qwen2", "mistral": "Mistral"}[mod]
        self.rope = getattr(m, prefix + "RotaryEmbedding")(config=cfg)
        self.apply_rope = m.apply_rotary_pos_emb
        self.repeat_kv = m.repeat_kv
        self.h, self.g, self.d = heads, kv, hidden // heads

    def forward(self, q, k, v, position_ids):
        b, t = q.shape[0], q.shape[1]
        q = q.view(b, t, self.h, self.d).transpose(1, 2)
        k = k.view(b, t, self.g, self.d).transpose(1, 2)
        v = v.view(b, t, self.g, self.d).transpose(1, 2)
        cos, sin = self.rope(v, position_ids)
        q, k = self.apply_rope(q, k, cos, sin)
        n = self.h // self.g
        return q, self.repeat_kv(k, n), self.repeat_kv(v, n)


def rope_case(name, T):
    _, _, hidden, heads, kv, _ = MODELS[name]
    d = hidden // heads
    block = RopeBlock(name).cuda()

    def inputs():
        bf = dict(device="cuda", dtype=torch.bfloat16, requires_grad=True)
        return [torch.randn(1, T, heads * d, **bf),
                torch.randn(1, T, kv * d, **bf),
                torch.randn(1, T, kv * d, **bf),
                torch.arange(T, device="cuda")[None]]
    return block, inputs


def rms_case(T):
    from transformers.models.llama.modeling_llama import LlamaRMSNorm
    norm = LlamaRMSNorm(4096).cuda().to(torch.bfloat16)

    def inputs():
        return [torch.randn(4, T, 4096, device="cuda", dtype=torch.bfloat16,
                            requires_grad=True)]
    return norm, inputs


def layer_norm_case(T):
    norm = torch.nn.LayerNorm(4096).cuda().to(torch.bfloat16)

    def inputs():
        return [torch.randn(4, T, 4096, device="cuda", dtype=torch.bfloat16,
                            requires_grad=True)]
    return norm, inputs


NORMS = {"llama_rms_norm": rms_case, "layer_norm": layer_norm_case}


def run(module, make_inputs, backend, reps, kernels=False):
    partition.COMPILED_GRAPHS.clear()
    compiled = fresh_compile(lambda: module, backend)  # resets dynamo
    ins = make_inputs()
    outs = compiled(*ins)
    outs = outs if isinstance(outs, tuple) else (outs,)
    ref_ins = [t.detach().clone().requires_grad_(t.requires_grad)
               for t in ins]
    ref = module(*ref_ins)
    ref = ref if isinstance(ref, tuple) else (ref,)
    fwd_err = max(((o.float() - r.float()).abs().max() /
                   r.float().abs().max().clamp_min(1e-6)).item()
                  for o, r in zip(outs, ref))
    grads_out = [torch.randn_like(o) for o in outs]
    torch.autograd.backward(outs, grads_out)
    torch.autograd.backward(ref, grads_out)
    bwd_err = max(((a.grad.float() - b.grad.float()).abs().max() /
                   b.grad.float().abs().max().clamp_min(1e-6)).item()
                  for a, b in zip(ins, ref_ins) if a.grad is not None)
    breaks = dynamo_stats()["graph_breaks"] if backend != "eager" else 0

    def fwd():
        with torch.no_grad():
            compiled(*ins)

    def fwd_bwd():
        for t in ins:
            t.grad = None
        o = compiled(*ins)
        o = o if isinstance(o, tuple) else (o,)
        torch.autograd.backward(o, grads_out)
    f = measure(fwd, reps=reps, host=True)
    fb = measure(fwd_bwd, reps=reps, host=True)
    res = dict(fwd_ms=f["ms"], fwd_kernels=f["kernels"],
               fwd_kernel_ms=f["kernel_ms"], fwd_host_ms=f["host_ms"],
               fwd_bwd_ms=fb["ms"], fwd_bwd_kernels=fb["kernels"],
               fwd_bwd_kernel_ms=fb["kernel_ms"],
               fwd_bwd_host_ms=fb["host_ms"],
               fwd_rel_err=fwd_err, bwd_rel_err=bwd_err, graph_breaks=breaks)
    if backend == "nvfuser":
        res["graphs"] = list(partition.COMPILED_GRAPHS)
    if kernels:
        res["fwd_breakdown"] = kernel_breakdown(fwd)
        res["fwd_bwd_breakdown"] = kernel_breakdown(fwd_bwd)
    return res


def warnings_of(row):
    """sanity_warnings for the forward and forward+backward of one row."""
    out = []
    for part in ("fwd", "fwd_bwd"):
        res = {b: dict(ms=row[b].get(part + "_ms"),
                       kernels=row[b].get(part + "_kernels"))
               for b in BACKENDS if "error" not in row[b]}
        out += sanity_warnings(res, ["nvfuser", "inductor"],
                               label=" [%s %s]" % (row["name"], part))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--json", default="fx_backend_bench.json")
    p.add_argument("--T", type=int, default=4096)
    p.add_argument("--cases", default=",".join(list(MODELS) + list(NORMS)))
    p.add_argument("--kernels", action="store_true",
                   help="print each backend's fwd+bwd kernels with GPU times")
    p.add_argument("--reps", type=int, default=20)
    args = p.parse_args()
    wanted = args.cases.split(",")
    cases = [(n, *rope_case(n, args.T)) for n in MODELS if n in wanted]
    cases += [(n, *make(args.T)) for n, make in NORMS.items() if n in wanted]
    rows = []
    for name, module, make in cases:
        row = dict(name=name)
        for backend in BACKENDS:
            try:
                row[backend] = run(module, make, backend, args.reps,
                                   args.kernels)
            except Exception as e:  # a failure is a result, not a crash
                row[backend] = error_info(e)
        row["warnings"] = warnings_of(row)
        rows.append(row)
        for backend in ("nvfuser", "inductor"):
            for part in ("fwd", "fwd_bwd"):
                for k, us, n in row[backend].get(part + "_breakdown", []):
                    print("  %-8s %-7s %8.1f us x%-4g %s" % (
                        backend, part, us, n, k[:90]))
        print(name, json.dumps({b: {k: v for k, v in row[b].items()
                                    if k not in ("graphs", "traceback",
                                                 "fwd_breakdown",
                                                 "fwd_bwd_breakdown")}
                                for b in BACKENDS}),
              flush=True)
    print("\n| module | ours fwd ms (kernels) | inductor fwd ms (kernels) | "
          "ours fwd+bwd ms (kernels) | inductor fwd+bwd ms (kernels) | "
          "max rel err fwd/bwd | graph breaks |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        a, b = r["nvfuser"], r["inductor"]
        if "error" in a or "error" in b:
            print("| %s | %s | %s |  |  |  |  |" % (
                r["name"], a.get("error", ""), b.get("error", "")))
            continue
        # Kernel counts are per call (profiler over several calls).
        print("| %s | %.3f (%s) | %.3f (%s) | %.3f (%s) | %.3f (%s) | "
              "%.1e / %.1e | %d |" % (
                  r["name"], a["fwd_ms"], a["fwd_kernels"], b["fwd_ms"],
                  b["fwd_kernels"], a["fwd_bwd_ms"], a["fwd_bwd_kernels"],
                  b["fwd_bwd_ms"], b["fwd_bwd_kernels"], a["fwd_rel_err"],
                  a["bwd_rel_err"], a["graph_breaks"]))
    # Where the time goes: GPU time of the kernels alone, and the host's
    # time per call (close to the event time: host-bound).
    # bwd kernels: fwd+bwd's kernel time less the forward's.
    print("\n| module | backend | fwd ms: event / kernels / host | "
          "fwd+bwd ms: event / kernels / host | bwd kernel ms |")
    print("|---|---|---|---|---|")
    for r in rows:
        for b in BACKENDS:
            x = r[b]
            if "error" not in x:
                print("| %s | %s | %.3f / %.3f / %.3f | %.3f / %.3f / %.3f | "
                      "%.3f |" % (
                          r["name"], b, x["fwd_ms"], x["fwd_kernel_ms"],
                          x["fwd_host_ms"], x["fwd_bwd_ms"],
                          x["fwd_bwd_kernel_ms"], x["fwd_bwd_host_ms"],
                          x["fwd_bwd_kernel_ms"] - x["fwd_kernel_ms"]))
    for r in rows:
        for w in r["warnings"]:
            print(w)
    for r in rows:
        for g in r["nvfuser"].get("graphs", []):
            if g["unsupported"]:
                print("%s: eager nodes %s" % (r["name"], g["unsupported"]))
    with open(args.json, "w") as f:
        json.dump(dict(gpu=torch.cuda.get_device_name(), T=args.T, rows=rows),
                  f, indent=1)
    print("wrote", args.json)


if __name__ == "__main__":
    main()
