"""GPU benchmark of generated pointwise kernels (run on the device).

Measures, in one run: the copy bandwidth of torch, a bf16 elementwise fusion
over 1 GiB, a transposing one (tiled and strided, against torch's
transposing copy), RoPE forward fusions (Hugging Face and LitGPT, T=4096) against
their minimal bytes, the host overhead of a second execute on tiny tensors,
and the first-call time (segment + generate + NVRTC + launch).

    python3 benchmarks/pointwise_bench.py [--json PATH]
"""

import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "rope"))
sys.path.insert(0, os.path.dirname(__file__))

from nvfuser import DataType, FusionDefinition  # noqa: E402
from nvfuser.fusion_definition import _current_stream  # noqa: E402
import rope_fusions as rf  # noqa: E402
from bench_utils import Timer, kernel_time_ms, nbytes  # noqa: E402


def per_call_us(fn, calls):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def copy_bandwidth(dev, gpu_time_ms):
    """torch's copy of 1 GiB of bf16 (bytes read + written): GB/s."""
    n = (1 << 30) // 2
    x = torch.randn(n, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    ms = gpu_time_ms(lambda: y.copy_(x))
    copy_bw = nbytes([x, y]) / ms / 1e6
    return copy_bw, dict(name="torch copy 1 GiB bf16", ms=ms, gbps=copy_bw,
                         frac=1.0)


def elementwise_rows(dev, gpu_time_ms, copy_bw):
    """Elementwise bf16 over 1 GiB, with 32- and 64-bit indices."""
    x = torch.randn((1 << 30) // 2, device=dev, dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.cast(fd.ops.add(fd.ops.mul(t, 2.0), 1.0),
                                  DataType.BFloat16))
    out = fd.execute([x])[0]
    torch.testing.assert_close(out, (x.float() * 2 + 1).bfloat16())
    ms = gpu_time_ms(lambda: fd.execute([x]))
    bw = nbytes([x, out]) / ms / 1e6
    kms, _ = kernel_time_ms(lambda: fd.execute([x]))
    rows = [dict(name="elementwise x*2+1 bf16 1 GiB", ms=ms, gbps=bw,
                 frac=bw / copy_bw, kernel_ms=kms)]
    ms = gpu_time_ms(lambda: fd.execute([x], _enable_options=["int64_index"]))
    bw = nbytes([x, out]) / ms / 1e6
    rows.append(dict(name="  same, NVFUSER_ENABLE=int64_index", ms=ms,
                     gbps=bw, frac=bw / copy_bw))
    return rows


def transpose_rows(dev, gpu_time_ms, copy_bw):
    """A transposing x * 2 (bf16 [8, 4096, 4096] -> [8, 4096, 4096] with the
    last two dims swapped): shared-memory tiles, the same kernel reading
    strided (NVFUSER_DISABLE=transpose_tiles), and torch's transposing
    copy alone (no multiply)."""
    x = torch.randn(8, 4096, 4096, device=dev, dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        t = fd.ops.permute(t, dims=[0, 2, 1])
        fd.add_output(fd.ops.cast(fd.ops.mul(t, 2.0), DataType.BFloat16))
    out = fd.execute([x])[0]
    torch.testing.assert_close(out, (x.permute(0, 2, 1).float() * 2)
                               .bfloat16())
    assert "nvf_tile0" in fd.last_cuda_code()[0]
    rows = []
    for label, disable in (("tiles", []), ("strided", ["transpose_tiles"])):
        run = (lambda d=disable: fd.execute([x], _disable_options=d))
        ms = gpu_time_ms(run)
        bw = nbytes([x, out]) / ms / 1e6
        kms, _ = kernel_time_ms(run)
        rows.append(dict(name="transpose x*2 bf16 256 MiB, " + label, ms=ms,
                         gbps=bw, frac=bw / copy_bw, kernel_ms=kms))
    y = torch.empty_like(out)
    ms = gpu_time_ms(lambda: y.copy_(x.transpose(1, 2)))
    bw = nbytes([x, y]) / ms / 1e6
    rows.append(dict(name="  torch transposing copy, same size", ms=ms,
                     gbps=bw, frac=bw / copy_bw))
    return rows


def rope_rows(dev, gpu_time_ms, copy_bw):
    """The HF and LitGPT RoPE forwards at T=4096 against eager."""
    cfg = dict(B=2, T=4096, H=32, G=8, D=128)
    rows = []
    for name in ("hf_forward", "litgpt_forward"):
        define, make, eager = rf.VARIANTS[name]
        inputs = make(cfg, device=dev)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with FusionDefinition() as fd:
            define(fd, cfg)
        outs = fd.execute(inputs)
        torch.cuda.synchronize()
        first = (time.perf_counter() - t0) * 1e3
        for o, r in zip(outs, eager(cfg, *inputs)):
            torch.testing.assert_close(o, r, rtol=1e-2, atol=1e-2)
        ms = gpu_time_ms(lambda: fd.execute(inputs))
        eager_ms = gpu_time_ms(lambda: eager(cfg, *inputs))
        minimal = nbytes(inputs) + nbytes(outs)
        seg = fd.last_segmentation()
        bw = minimal / ms / 1e6
        kms, names = kernel_time_ms(lambda: fd.execute(inputs))
        rows.append(dict(name=name + " T=4096", ms=ms, gbps=bw,
                         frac=bw / copy_bw, eager_ms=eager_ms,
                         first_call_ms=first, segments=len(seg["groups"]),
                         kernels=len(fd.last_cuda_code()), kernel_ms=kms,
                         profiled=";".join(names)))
    return rows


def host_overhead(dev):
    """Host time of a second execute(): one kernel on tiny tensors, and
    where it goes (argument checks in Python, the current stream, C++)."""
    a = torch.randn(16, device=dev)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.neg(fd.from_pytorch(a)))
    calls = 2000
    overhead_us = per_call_us(lambda: fd.execute([a]), calls)
    prepared = fd._prepare_execute([a], None, None, None)
    stream = _current_stream(prepared[0])
    split_us = {name: per_call_us(fn, calls) for name, fn in (
        ("checks", lambda: fd._prepare_execute([a], None, None, None)),
        ("stream", lambda: _current_stream(prepared[0])),
        ("cpp", lambda: fd._fusion.execute(*prepared, stream)))}
    return overhead_us, split_us


def print_table(rows, overhead_us, split_us):
    print("\n| benchmark | ms | GB/s | of copy BW | extra |")
    print("|---|---|---|---|---|")
    for r in rows:
        extra = ", ".join("%s=%s" % (k, ("%.3f" % v) if isinstance(v, float)
                                     else v)
                          for k, v in r.items()
                          if k not in ("name", "ms", "gbps", "frac"))
        print("| %s | %.4f | %.0f | %.1f%% | %s |" %
              (r["name"], r["ms"], r["gbps"], 100 * r["frac"], extra))
    print("host overhead per execute (tiny tensor): %.1f us (checks %.1f, "
          "stream %.1f, C++ %.1f)" % (overhead_us, split_us["checks"],
                                      split_us["stream"], split_us["cpp"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", default="pointwise_bench.json")
    args = parser.parse_args()
    dev = "cuda"
    gpu_time_ms = Timer(True, 20)  # median of 20, L2 flushed before each
    copy_bw, copy_row = copy_bandwidth(dev, gpu_time_ms)
    rows = [copy_row]
    for section in (elementwise_rows, transpose_rows, rope_rows):
        rows += section(dev, gpu_time_ms, copy_bw)
    overhead_us, split_us = host_overhead(dev)
    rows.append(dict(name="execute() tiny tensor, per call", ms=overhead_us /
                     1e3, gbps=0.0, frac=0.0))
    print_table(rows, overhead_us, split_us)
    with open(args.json, "w") as f:
        json.dump(dict(gpu=torch.cuda.get_device_name(), rows=rows,
                       overhead_us=overhead_us, overhead_split_us=split_us),
                  f, indent=2)
    print("wrote", args.json)


if __name__ == "__main__":
    main()
