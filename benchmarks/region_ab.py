"""A/B of NVFUSER_* settings on saved fusions: each repro script (a
`def nvfuser_fusion...(fd)` as dump_compiled.py and print(fd) write them)
runs under every configuration in its own process (the options are read
once per process), on the same random inputs; the table gives the
profiler's kernel us per call (kernels per call) and each configuration's
largest difference from the first one's outputs.

    python3 benchmarks/region_ab.py FILE_OR_TGZ... \\
        --config base= --config everywhere=NVFUSER_ENABLE=predicated_loads_everywhere \\
        [--match bwd_region1,fwd_fd] [--json out.json]

A configuration is NAME=ASSIGNMENTS, assignments separated by ';'
(NVFUSER_ENABLE=a,b;NVFUSER_DISABLE=c). Inputs are contiguous; integer
inputs are zeros. Without a GPU the kernels are not timed (ATen on the CPU
runs them) and the table shows '-'.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

DTYPES = {"BFloat16": "bfloat16", "Float": "float32", "Half": "float16",
          "Double": "float64", "Int": "int64", "Int32": "int32",
          "Bool": "bool"}


def _matches(name, match):
    """Whether name holds one of match's comma-separated substrings."""
    return any(m in name for m in match.split(","))


def read_scripts(paths, match):
    """[(name, source)] of the repro scripts in files and tarballs."""
    found = []
    for p in paths:
        if p.endswith((".tgz", ".tar.gz")):
            with tarfile.open(p) as tar:
                for m in sorted(tar.getnames()):
                    if m.endswith(".py") and _matches(m, match):
                        found.append((os.path.basename(m)[:-3],
                                      tar.extractfile(m).read().decode()))
        elif _matches(p, match):
            with open(p) as f:
                found.append((os.path.basename(p)[:-3], f.read()))
    return found


def parse_config(text):
    name, _, rest = text.partition("=")
    env = {}
    for a in filter(None, rest.split(";")):
        k, _, v = a.partition("=")
        if not k.startswith("NVFUSER_"):
            raise SystemExit("config %r: %r is not an NVFUSER_ variable"
                             % (name, k))
        env[k] = v
    return name, env


def inputs_for(source, device):
    import torch
    ins = []
    gen = torch.Generator(device="cpu").manual_seed(0)
    for shape, dt in re.findall(
            r"define_tensor\(shape=\[([^\]]*)\].*?dtype=DataType\.(\w+)",
            source):
        dims = [int(x) for x in shape.split(",") if x.strip()]
        dtype = getattr(torch, DTYPES[dt])
        if dtype.is_floating_point:
            t = torch.randn(dims, generator=gen).to(dtype)
        else:
            t = torch.zeros(dims, dtype=dtype)
        ins.append(t.to(device))
    return ins


def fusion_from_script(source):
    """The FusionDefinition a repro script's `nvfuser_fusion...(fd)`
    function defines (nvfuser must be importable)."""
    from nvfuser import DataType, FusionDefinition
    ns = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(source, ns)
    define = [v for k, v in ns.items() if k.startswith("nvfuser_fusion")]
    with FusionDefinition() as fd:
        define[0](fd)
    return fd


def child(scripts, out_dir):
    """Runs every script once per process; writes results.json and each
    script's outputs to out_dir."""
    import torch
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    sys.path.insert(0, HERE)
    from bench_utils import profile_kernels
    cuda = torch.cuda.is_available()
    res = {}
    for name, source in scripts:
        fd = fusion_from_script(source)
        ins = inputs_for(source, "cuda" if cuda else "cpu")
        outs = fd.execute(ins)
        torch.save([o.cpu() for o in outs],
                   os.path.join(out_dir, name + ".pt"))
        if cuda:
            p = profile_kernels(lambda: fd.execute(ins), reps=20, names=True)
            # Per kernel too: which of a fusion's kernels a setting moved.
            res[name] = [p["kernel_ms"] * 1e3, p["kernels"],
                         [round(v[0], 1) for v in p["by_name"].values()]]
        else:
            res[name] = None
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(res, f)


def max_diff(a_dir, b_dir, name):
    import torch
    a = torch.load(os.path.join(a_dir, name + ".pt"))
    b = torch.load(os.path.join(b_dir, name + ".pt"))
    return max((x.double() - y.double()).abs().max().item() if x.numel()
               else 0.0 for x, y in zip(a, b))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--config", action="append", default=[])
    p.add_argument("--match", default="",
                   help="substrings of the names, comma-separated (any)")
    p.add_argument("--json")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    scripts = read_scripts(args.files, args.match)
    if args.child:
        return child(scripts, args.child)
    if not scripts:
        p.error("no repro scripts in %s matching %r" % (args.files,
                                                        args.match))
    configs = [parse_config(c) for c in args.config or ["default="]]
    tmp = tempfile.mkdtemp(prefix="region_ab_")
    results = {}
    for name, env in configs:
        d = os.path.join(tmp, name)
        os.makedirs(d)
        full = dict(os.environ, **env)
        cmd = [sys.executable, os.path.abspath(__file__), *args.files,
               "--match", args.match, "--child", d]
        r = subprocess.run(cmd, env=full, capture_output=True, text=True)
        if r.returncode != 0:
            results[name] = "failed: " + (r.stderr.strip().splitlines()
                                          or ["?"])[-1]
            continue
        with open(os.path.join(d, "results.json")) as f:
            results[name] = json.load(f)
    names = [c[0] for c in configs]
    base = os.path.join(tmp, names[0])
    print("| fusion | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    table = {}
    for script, _ in scripts:
        cells = []
        for n in names:
            r = results[n]
            if isinstance(r, str):
                cells.append(r[:60])
                continue
            us = r[script]
            diff = max_diff(base, os.path.join(tmp, n), script)
            per_kernel = (" [%s]" % " + ".join("%.1f" % k for k in us[2])
                          if us and len(us) > 2 and len(us[2]) > 1 else "")
            cells.append(("%.1f (%s)" % tuple(us[:2]) if us else "-") +
                         per_kernel +
                         ("" if diff == 0 else " diff %.3g" % diff))
            table.setdefault(script, {})[n] = {"us": us, "max_diff": diff}
        print("| %s | %s |" % (script, " | ".join(cells)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"configs": dict(configs), "results": table}, f,
                      indent=1)


if __name__ == "__main__":
    main()
