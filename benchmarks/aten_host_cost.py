"""Host time per call of a few ATen ops on this machine: the yardstick for
NVFUSER_DUMP=host_time's per-segment times (a matmul segment against
F.linear's own host cost, a pointwise launch against a tiny add's). Each op
runs N times without a sync inside the loop; the table gives microseconds
per call. GPU only (the CPU runs the ops themselves).

    python3 benchmarks/aten_host_cost.py [--json out.json]
"""

import argparse
import json
import time

import torch
import torch.nn.functional as F


def host_us(fn, calls):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    us = (time.perf_counter() - t0) / calls * 1e6
    torch.cuda.synchronize()
    return us


def cases():
    d, bf = "cuda", torch.bfloat16
    x = torch.randn(2, 2048, 2048, device=d, dtype=bf)
    w = torch.randn(2048, 2048, device=d, dtype=bf)
    q = torch.randn(2, 16, 2048, 128, device=d, dtype=bf)
    k = torch.randn(2, 4, 2048, 128, device=d, dtype=bf)
    s = torch.randn(64, device=d)
    # (name, fn, calls): few calls of the long kernels, so the launch
    # queue never fills and blocks the host.
    return [
        ("F.linear [2, 2048, 2048] x [2048, 2048] bf16",
         lambda: F.linear(x, w), 100),
        ("GQA SDPA [2, 16|4, 2048, 128] causal bf16",
         lambda: F.scaled_dot_product_attention(q, k, k, is_causal=True,
                                                enable_gqa=True), 30),
        ("add of 64 floats", lambda: s + s, 1000),
        ("torch.empty(64)", lambda: torch.empty(64, device=d), 1000),
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json")
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("aten_host_cost: needs a CUDA GPU (the CPU runs the ops "
              "themselves); nothing measured")
        return
    rows = [(name, host_us(fn, n)) for name, fn, n in cases()]
    print("| op | host us per call |\n|---|---|")
    for name, us in rows:
        print("| %s | %.1f |" % (name, us))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(),
                       "rows": [dict(op=n, host_us=us) for n, us in rows]},
                      f, indent=1)


if __name__ == "__main__":
    main()
