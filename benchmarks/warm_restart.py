"""Warm restart: the same FusionDefinitions executed by two fresh processes
sharing the automatic-serialization workspace (the on-disk kernel cache).
Prints, per process, the first execute's wall time and the NVRTC compiles
and disk hits it needed; writes JSON.

    python3 benchmarks/warm_restart.py [--json out.json]

On a machine without a GPU the kernels are compiled with cuda_code_for (what
execute would compile)."""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r"""
import json, sys, time
sys.path.insert(0, %(python)r)
import torch
import nvfuser
from nvfuser import DataType, FusionCache, FusionDefinition
FusionCache.get(load_from_default_workspace=True)
cuda = torch.cuda.is_available()
dev = "cuda" if cuda else "cpu"
x = torch.randn(4096, 4096, dtype=torch.bfloat16, device=dev)
w = torch.randn(4096, dtype=torch.bfloat16, device=dev)
defs = []
with FusionDefinition() as rms:  # RMSNorm forward
    t, g = rms.from_pytorch(x), rms.from_pytorch(w)
    f = rms.ops.cast(t, DataType.Float)
    v = rms.ops.sum(rms.ops.mul(f, f), [1], keepdim=True)
    r = rms.ops.rsqrt(rms.ops.add(rms.ops.div(v, 4096.0), 1e-6))
    y = rms.ops.mul(rms.ops.mul(f, r), rms.ops.cast(g, DataType.Float))
    rms.add_output(rms.ops.cast(y, DataType.BFloat16))
defs.append(rms)
with FusionDefinition() as soft:  # softmax and a column sum
    t = soft.from_pytorch(x)
    f = soft.ops.cast(t, DataType.Float)
    e = soft.ops.exp(soft.ops.sub(f, soft.ops.max(f, [1], keepdim=True)))
    soft.add_output(soft.ops.cast(
        soft.ops.div(e, soft.ops.sum(e, [1], keepdim=True)), DataType.BFloat16))
    soft.add_output(soft.ops.sum(f, [0]))
defs.append(soft)
inputs = [[x, w], [x]]
t0 = time.perf_counter()
for fd, ins in zip(defs, inputs):
    if cuda:
        fd.execute(ins)
    else:
        fd.cuda_code_for(ins, "sm_90")
if cuda:
    torch.cuda.synchronize()
ms = (time.perf_counter() - t0) * 1e3
print(json.dumps(dict(first_execute_ms=ms, device=dev,
                      **nvfuser.kernel_compile_stats())))
"""


def run_child(home):
    env = dict(os.environ, XDG_CACHE_HOME=home)
    env.pop("NVFUSER_CACHE_DIR", None)
    out = subprocess.run(
        [sys.executable, "-c", CHILD % {"python": os.path.join(ROOT, "python")}],
        env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", default=None)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as home:
        rows = [dict(process=name, **run_child(home))
                for name in ("cold (empty workspace)", "warm (restarted)")]
    print("| process | device | first execute ms | NVRTC compiles | "
          "disk hits |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %.1f | %d | %d |" % (
            r["process"], r["device"], r["first_execute_ms"],
            r["nvrtc_compiles"], r["disk_hits"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
