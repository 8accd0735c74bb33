"""GPU benchmark of the embedding's weight gradient, bf16: ATen's
aten.embedding_dense_backward (a bf16 fill of the whole gradient, a radix
sort of the ids, per-segment sums), ours (nvfuser::embedding_dense_backward:
Float atomics into one row per id, csrc/runtime/embedding_backward.h)
and Inductor's (torch.compile of a function calling the ATen operator:
Float zeros, atomic scatter-add, cast). Each timed by bench_utils.measure
(event median with the L2 flushed; kernel time and kernels per call from
the profiler), with its largest difference from ATen's result and the
memory one call allocates above its inputs (peak MB, output included).
Ids are uniform, or skewed: half of them one id (a padding or BOS token),
where atomics on one row contend. Prints a
Markdown table and writes JSON. On a machine without a GPU it says so and
exits 0.

    python3 benchmarks/embedding_backward_bench.py [--json PATH] [--reps N]
"""

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

import nvfuser  # noqa: E402,F401 (registers torch.ops.nvfuser)
from bench_utils import (error_info, fmt_measure, fresh_compile,  # noqa: E402
                         measure)

# (vocab, hidden, ids): Llama's train step of model_bench (ids [2, 2048]),
# and Llama 3's vocabulary and hidden size with twice the ids.
SIZES = [(32000, 2048, 4096), (128256, 4096, 8192)]
ATEN = torch.ops.aten.embedding_dense_backward.default


def _inductor(vocab):
    def factory():
        def f(grad, ids):
            return torch.ops.aten.embedding_dense_backward(grad, ids, vocab,
                                                           -1, False)
        return f
    return fresh_compile(factory, "inductor")


def _implementations(vocab):
    """name -> fn(grad, ids); Inductor compiles on its first call."""
    ours = torch.ops.nvfuser.embedding_dense_backward.default
    impls = {"ATen": lambda g, i: ATEN(g, i, vocab, -1, False),
             "ours": lambda g, i: ours(g, i, vocab, -1, False)}
    if hasattr(torch, "compile"):
        impls["Inductor"] = _inductor(vocab)
    return impls


def _ids(vocab, n_ids, skewed):
    ids = torch.randint(0, vocab, (2, n_ids // 2), device="cuda")
    if skewed:
        ids[:, ::2] = 0
    return ids


def _peak_mb(fn):
    """MB one call allocates above what was allocated before it."""
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - before) / 2**20


def _bench_size(vocab, hidden, n_ids, skewed, reps):
    torch.manual_seed(0)
    grad = torch.randn(2, n_ids // 2, hidden, device="cuda",
                       dtype=torch.bfloat16)
    ids = _ids(vocab, n_ids, skewed)
    want = ATEN(grad, ids, vocab, -1, False).float()
    rows = []
    for name, fn in _implementations(vocab).items():
        row = dict(size="%d x %d, %d %s ids" % (
            vocab, hidden, n_ids, "skewed" if skewed else "uniform"),
            impl=name)
        try:
            got = fn(grad, ids).float()
            row["max_abs_diff"] = (got - want).abs().max().item()
            del got
            row["peak_mb"] = _peak_mb(lambda: fn(grad, ids))
            row.update(measure(lambda: fn(grad, ids), reps=reps))
        except Exception as e:  # noqa: BLE001 (a row says what failed)
            row.update(error_info(e))
        rows.append(row)
        torch.cuda.empty_cache()  # the larger size needs the memory
    return rows


def _table(rows):
    lines = ["| size | implementation | ms (kernel ms, kernels) | "
             "peak MB | max abs diff vs ATen |", "|---|---|---|---|---|"]
    for r in rows:
        diff, peak = r.get("max_abs_diff"), r.get("peak_mb")
        lines.append("| %s | %s | %s | %s | %s |" % (
            r["size"], r["impl"], fmt_measure(r, digits=4),
            "-" if peak is None else "%.0f" % peak,
            "-" if diff is None else "%.3g" % diff))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--json", default="embedding_backward_bench.json")
    p.add_argument("--reps", type=int, default=50)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("embedding_backward_bench: no CUDA GPU, nothing to measure")
        return
    rows = []
    for vocab, hidden, n_ids in SIZES:
        for skewed in (False, True):
            rows += _bench_size(vocab, hidden, n_ids, skewed, args.reps)
    print("\n%s, torch %s, bf16\n" % (torch.cuda.get_device_name(),
                                       torch.__version__))
    print(_table(rows))
    with open(args.json, "w") as f:
        json.dump(dict(gpu=torch.cuda.get_device_name(),
                       torch=torch.__version__, rows=rows), f, indent=2)
    print("wrote", args.json)


if __name__ == "__main__":
    main()
