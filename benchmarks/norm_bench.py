"""GPU benchmark of generated reduction kernels (issue #5), run on the device:
softmax, RMS norm and layer norm over [16384, 4096] bf16 (one block per
row), a column sum over [65536, 1024] bf16 and a norm's weight gradient
(column sums of a product, cast to bf16) over [16384, 4096] bf16 (split
sums), each against torch's copy bandwidth of the same bytes in the same
run. Prints a table and writes JSON.

    python3 benchmarks/norm_bench.py [--json PATH] [--rows R --cols C]
                                     [--cases softmax,column]
"""

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

from nvfuser import DataType, FusionDefinition  # noqa: E402
from bench_utils import (Timer, copy_bandwidth, count_kernels,  # noqa: E402
                         kernel_time_ms, nbytes)

BF16 = DataType.BFloat16
F32 = DataType.Float


def softmax(x):
    R, K = x.shape
    with FusionDefinition() as fd:
        t = fd.ops.cast(fd.from_pytorch(x), F32)
        m = fd.ops.broadcast_in_dim(fd.ops.max(t, [1]), [R, K], [0])
        e = fd.ops.exp(fd.ops.sub(t, m))
        s = fd.ops.broadcast_in_dim(fd.ops.sum(e, [1]), [R, K], [0])
        fd.add_output(fd.ops.cast(fd.ops.div(e, s), BF16))
    return fd, [x], lambda: torch.softmax(x.float(), 1).bfloat16()


def rms_norm(x, w):
    R, K = x.shape
    with FusionDefinition() as fd:
        tx = fd.from_pytorch(x)
        tw = fd.from_pytorch(w)
        xf = fd.ops.cast(tx, F32)
        ms = fd.ops.mean(fd.ops.mul(xf, xf), [1])
        inv = fd.ops.rsqrt(fd.ops.add(ms, 1e-6))
        y = fd.ops.mul(xf, fd.ops.broadcast_in_dim(inv, [R, K], [0]))
        y = fd.ops.mul(y, fd.ops.broadcast_in_dim(tw, [R, K], [1]))
        fd.add_output(fd.ops.cast(y, BF16))

    def eager():
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(1, keepdim=True) + 1e-6)
                * w.float()).bfloat16()
    return fd, [x, w], eager


def layer_norm(x, w, b):
    R, K = x.shape
    with FusionDefinition() as fd:
        tx = fd.from_pytorch(x)
        tw = fd.from_pytorch(w)
        tb = fd.from_pytorch(b)
        xf = fd.ops.cast(tx, F32)
        var, mean = fd.ops.var_mean(xf, [1], correction=0)
        inv = fd.ops.rsqrt(fd.ops.add(var, 1e-5))
        y = fd.ops.mul(fd.ops.sub(xf, fd.ops.broadcast_in_dim(mean, [R, K],
                                                              [0])),
                       fd.ops.broadcast_in_dim(inv, [R, K], [0]))
        y = fd.ops.add(fd.ops.mul(y, fd.ops.broadcast_in_dim(tw, [R, K], [1])),
                       fd.ops.broadcast_in_dim(tb, [R, K], [1]))
        fd.add_output(fd.ops.cast(y, BF16))
    return fd, [x, w, b], lambda: torch.nn.functional.layer_norm(
        x.float(), (K,), w.float(), b.float()).bfloat16()


def weight_grad(g, xn):
    """A norm's weight gradient: the column sums of grad * normalized x,
    cast back to bf16 (one split-sum kernel)."""
    with FusionDefinition() as fd:
        p = fd.ops.mul(fd.ops.cast(fd.from_pytorch(g), F32),
                       fd.ops.cast(fd.from_pytorch(xn), F32))
        fd.add_output(fd.ops.cast(fd.ops.sum(p, [0]), BF16))
    return fd, [g, xn], lambda: (g.float() * xn.float()).sum(0).bfloat16()


def column_sum(x):
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.sum(fd.from_pytorch(x), [0]))
    return fd, [x], lambda: x.float().sum(0)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--json", default="norm_bench.json")
    p.add_argument("--rows", type=int, default=16384)
    p.add_argument("--cols", type=int, default=4096)
    p.add_argument("--cases", default="",
                   help="comma-separated name prefixes (softmax,rms_norm,"
                   "layer_norm,column,weight); default all")
    args = p.parse_args()
    timer = Timer(True, 20)
    copy_bw = copy_bandwidth(True, timer)
    R, K = args.rows, args.cols
    dev = "cuda"
    x = torch.randn(R, K, device=dev, dtype=torch.bfloat16)
    w = torch.randn(K, device=dev, dtype=torch.bfloat16)
    b = torch.randn(K, device=dev, dtype=torch.bfloat16)
    cases = [("softmax [%d, %d] bf16" % (R, K), softmax(x)),
             ("rms_norm [%d, %d] bf16" % (R, K), rms_norm(x, w)),
             ("layer_norm [%d, %d] bf16" % (R, K), layer_norm(x, w, b)),
             ("column sum [65536, 1024] bf16", column_sum(
                 torch.randn(65536, 1024, device=dev, dtype=torch.bfloat16))),
             ("weight grad [%d, %d] bf16" % (R, K), weight_grad(
                 torch.randn(R, K, device=dev, dtype=torch.bfloat16), x))]
    if args.cases:
        cases = [c for c in cases
                 if any(c[0].startswith(p) for p in args.cases.split(","))]
    rows = []
    for name, (fd, inputs, eager) in cases:
        out = fd.execute(inputs)[0]
        ref = eager()
        err = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
        ms = timer(lambda: fd.execute(inputs))
        minimal = nbytes(inputs) + nbytes([out])
        bw = minimal / ms / 1e6
        seg = fd.last_segmentation()
        rows.append(dict(name=name, ms=ms, gbps=bw, frac=bw / copy_bw,
                         rel_err=err, segments=len(seg["groups"]),
                         schedulers=[g["scheduler"] for g in seg["groups"]],
                         kernels=count_kernels(lambda: fd.execute(inputs),
                                               True),
                         kernel_ms=kernel_time_ms(
                             lambda: fd.execute(inputs))[0],
                         eager_ms=timer(eager)))
    print("\ncopy bandwidth: %.0f GB/s\n" % copy_bw)
    print("| benchmark | ms | GB/s | of copy BW | kernels | kernel ms | "
          "eager ms | rel. error |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %.4f | %.0f | %.1f%% | %d | %.4f | %.4f | %.1e |" % (
            r["name"], r["ms"], r["gbps"], 100 * r["frac"], r["kernels"],
            r["kernel_ms"], r["eager_ms"], r["rel_err"]))
    with open(args.json, "w") as f:
        json.dump(dict(gpu=torch.cuda.get_device_name(), copy_gbps=copy_bw,
                       rows=rows), f, indent=2)
    print("wrote", args.json)


if __name__ == "__main__":
    main()
