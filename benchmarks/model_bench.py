"""Real models through torch.compile (issue 15): transformers' own causal-LM
classes built from configs (random weights, offline, no hub), one train step
and one inference forward through eager, torch.compile (inductor) and
torch.compile(backend="nvfuser").

    python3 benchmarks/model_bench.py [--models llama,qwen2,mistral]
        [--backends eager,inductor,nvfuser] [--quick] [--dynamic]
        [--breakdown N] [--layers 2 --hidden 2048 --seq 2048 --batch 2 ...]
        [--md PATH] [--json PATH] [--isolate] [--budget-s S] [--list]

Per model, in one process (one child process per model with --isolate, so
a crash takes out that model only), for each backend: a dynamo reset, a
fresh copy of the same initial weights and a fresh compile
(bench_utils.fresh_compile); then

- first call s: the first train step, compile included. Train step:
  grads set to None, ``loss = model(input_ids=ids, labels=ids).loss;
  loss.backward()``;
- train ms / infer ms: bench_utils.measure (CUDA-event median over --reps
  after --warmup calls, L2 flushed; kernel ms and kernels per call from the
  profiler). The inference forward (``model(input_ids=ids)`` under
  torch.no_grad) goes through the same compiled module: grad mode is
  guarded, so dynamo compiles it once more (its first call is in the JSON);
- graph breaks and graphs compiled (dynamo's counters, train + inference);
- loss relative difference and the worst per-parameter gradient relative L2
  difference ||g - g_eager|| / ||g_eager|| against eager's first step (the
  eager row shows eager's own run-to-run difference: a second eager step);
- with --dynamic, the compiled model (default: nvfuser only) then runs a
  train step at batch+1 and seq/2: whether it ran, whether dynamo compiled
  new graphs and whether they have symbolic shapes (automatic dynamic
  shapes) or are a static recompile;
- for nvfuser, which ATen ops ran in eager and why (a hook on
  nvfuser.fx.backend.compile_graph reads each compiled graph; partition.
  COMPILED_GRAPHS where the hook is not possible), and regions that fell
  back to their eager graph at run time (FusionRegion.fallbacks).

Writes a Markdown table (--md, default benchmarks/results/model_bench.md)
and JSON (--json, default benchmarks/results/model_bench.json) after every
case, so a run cut short keeps what it measured. Every case's failure is a
row (exception type and first line; the traceback is in the JSON).
"""

import argparse
import collections
import gc
import importlib
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

from bench_utils import (dynamo_stats, error_info,  # noqa: E402
                         fresh_compile, kernel_breakdown, kernel_launchers,
                         measure, reset_dynamo, sanity_warnings)
from gpu_gaps import print_gaps  # noqa: E402
# The report's names, also read as model_bench.X by the tests.
from model_bench_report import (KIND_NAMES, KINDS, _short,  # noqa: E402,F401
                                by_kind, kind_of, markdown, write)

# The models (also read as model_bench.X by the tests).
from model_bench_models import (  # noqa: E402,F401
    BACKENDS, DEFAULT_MODELS, DTYPES, MODELS, SIZES, build_model, fresh_copy)

# -------------------------------------------------- nvfuser's eager nodes
def _strip_index(name):
    return re.sub(r"_\d+$", "", name)


def _norm_reason(why):
    why = re.sub(r"\b[A-Za-z_][A-Za-z0-9_]*_\d+\b", "<node>", str(why))
    return why[:140]


def _graph_kind(gm):
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    if any(n.startswith("tangents") for n in names):
        return "backward"
    if any(n.startswith("primals") for n in names):
        return "forward"
    return "inference"


def _symbolic(example_inputs):
    for x in example_inputs:
        if type(x).__name__ in ("SymInt", "SymFloat", "SymBool"):
            return True
        if isinstance(x, torch.Tensor) and any(
                not isinstance(s, int) for s in x.shape):
            return True
    return False


class FxTracker:
    """Keeps every graph module nvfuser.fx.compile_graph returns while
    installed (a wrapper on nvfuser.fx.backend.compile_graph, which the
    registered backend calls for the forward and backward graphs)."""

    def __init__(self):
        self.graphs = []
        self._backend = None
        self._orig = None

    def start(self):
        self.graphs = []
        try:
            from nvfuser.fx import backend as be
        except ImportError:
            return False
        if not callable(getattr(be, "compile_graph", None)):
            return False
        orig = be.compile_graph
        graphs = self.graphs

        def tracked(gm, example_inputs):
            fused = orig(gm, example_inputs)
            graphs.append(dict(module=fused, kind=_graph_kind(gm),
                               dynamic=_symbolic(example_inputs)))
            return fused
        be.compile_graph = tracked
        self._backend, self._orig = be, orig
        return True

    def stop(self):
        if self._backend is not None:
            self._backend.compile_graph = self._orig
        self._backend = self._orig = None

    def summary(self):
        """Eager ATen ops by name with reasons, region nodes, coverage and
        regions that fell back at run time, over the tracked graphs."""
        from nvfuser.fx.translator import op_name
        eager_ops = collections.Counter()
        region_ops = collections.Counter()
        reasons = {}
        graphs = []
        fell_back = []
        fallback_calls = 0
        for i, g in enumerate(self.graphs):
            gm = g["module"]
            regions = set(getattr(gm, "nvfuser_regions", []) or [])
            unsupported = getattr(gm, "nvfuser_unsupported", {}) or {}
            n_eager = n_region = 0
            for node in gm.graph.nodes:
                if node.op == "call_module" and node.target in regions:
                    continue
                if node.op not in ("call_function", "call_method"):
                    continue
                if op_name(node) == "getitem" and node.args and \
                        getattr(node.args[0], "op", None) == "call_module":
                    continue  # reads a region's output tuple
                op = op_name(node) or _strip_index(node.name)
                eager_ops[op] += 1
                n_eager += 1
                why = unsupported.get(
                    node.name, "supported, but left out of every region")
                seen = reasons.setdefault(op, [])
                short = _norm_reason(why)
                if short not in seen and len(seen) < 3:
                    seen.append(short)
            for rname in sorted(regions):
                region = getattr(gm, rname, None)
                sub = getattr(region, "eager", None)
                ops = [op_name(n) for n in sub.graph.nodes
                       if n.op in ("call_function", "call_method")] \
                    if sub is not None else []
                region_ops.update(ops)
                n_region += len(ops)
                nfb = getattr(region, "fallbacks", 0) or 0
                fallback_calls += nfb
                if nfb:
                    fell_back.append(dict(
                        graph=i, kind=g["kind"], region=rname,
                        fallback_calls=nfb,
                        ops=collections.Counter(ops).most_common(8)))
            graphs.append(dict(kind=g["kind"], dynamic=g["dynamic"],
                               regions=len(regions), region_nodes=n_region,
                               eager_nodes=n_eager))
        total = sum(eager_ops.values()) + sum(region_ops.values())
        return dict(
            source="hook on nvfuser.fx.backend.compile_graph",
            graphs=graphs,
            coverage=(sum(region_ops.values()) / total) if total else None,
            eager_ops=dict(eager_ops.most_common()),
            eager_reasons=reasons,
            region_fallback_calls=fallback_calls,
            regions_fell_back=fell_back)


def summary_from_compiled_graphs():
    """The same from partition.COMPILED_GRAPHS (names and reasons only)
    when the hook could not be installed."""
    try:
        from nvfuser.fx import partition
        entries = list(partition.COMPILED_GRAPHS)
    except (ImportError, AttributeError):
        return None
    eager_ops = collections.Counter()
    reasons = {}
    for e in entries:
        for name, why in (e.get("unsupported") or {}).items():
            m = re.match(r"no translation for (\S+)", str(why))
            op = m.group(1) if m else _strip_index(name)
            eager_ops[op] += 1
            seen = reasons.setdefault(op, [])
            short = _norm_reason(why)
            if short not in seen and len(seen) < 3:
                seen.append(short)
    return dict(source="partition.COMPILED_GRAPHS (op names from node "
                       "names: approximate)",
                graphs=[dict(regions=e.get("regions")) for e in entries],
                coverage=None, eager_ops=dict(eager_ops.most_common()),
                eager_reasons=reasons)


# ------------------------------------------------------------- one case
def _sync(cuda):
    if cuda:
        torch.cuda.synchronize()


def rel_l2(x, ref):
    x, ref = x.detach().float(), ref.detach().float()
    d = ((x - ref).norm() / ref.norm().clamp_min(1e-30)).item()
    return d if math.isfinite(d) else float("inf")


def grad_diff(model, ref_grads):
    """Worst ||g - g_eager|| / ||g_eager|| over the parameters, and its
    parameter; a gradient present on one side only is infinite."""
    worst, worst_name = 0.0, None
    for n, p in model.named_parameters():
        ge = ref_grads.get(n)
        g = p.grad
        if ge is None and g is None:
            continue
        if ge is None or g is None:
            d = float("inf")
        else:
            d = rel_l2(g, ge)
        if worst_name is None or d > worst:
            worst, worst_name = d, n
    return dict(worst_grad_rel_l2=worst, worst_grad_param=worst_name)


def _slim(m):
    """A measure() result for the JSON: by_name cut to the top 40."""
    m = dict(m)
    if "by_name" in m:
        m["kinds"] = by_kind(m["by_name"])
        m["by_name"] = dict(list(m["by_name"].items())[:40])
    return m


def host_profile(step, rows, what):
    """Prints where the host's time of 10 steps goes (cProfile, by own
    time and by cumulative time): what keeps the GPU waiting."""
    import cProfile
    import io
    import pstats
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(10):
        step()
    prof.disable()
    for key in ("tottime", "cumtime"):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats(key).print_stats(rows)
        print("[host_profile] %s by %s (10 steps)\n%s" % (what, key,
                                                         out.getvalue()),
              flush=True)
    if "nvfuser" in what:
        # Our runtime's own split of its host time, two steps' worth.
        saved = os.environ.get("NVFUSER_DUMP")
        os.environ["NVFUSER_DUMP"] = "host_time"
        try:
            for _ in range(2):
                step()
        finally:
            if saved is None:
                del os.environ["NVFUSER_DUMP"]
            else:
                os.environ["NVFUSER_DUMP"] = saved


def run_case(name, backend, base, ids, a, ref, tracker, cuda):
    """One model through one backend; `ref` holds eager's loss, gradients
    and logits (filled by the eager case)."""
    r = dict(model=name, backend=backend)
    stage = "compile"
    model = cm = None
    tracking = False
    try:
        if backend == "nvfuser":
            try:
                from nvfuser.fx import partition
                partition.COMPILED_GRAPHS.clear()
            except (ImportError, AttributeError):
                pass
            tracking = tracker.start()
        model = fresh_copy(base)
        cm = fresh_compile(lambda: model, backend)
        if cuda:
            torch.cuda.reset_peak_memory_stats()

        def step():
            model.zero_grad(set_to_none=True)
            loss = cm(input_ids=ids, labels=ids).loss
            loss.backward()
            return loss

        stage = "first train step and gradient check"
        _first_step(step, model, r, ref, cuda)
        stage = "train timing"
        r["train"] = _slim(measure(step, reps=a.reps, cuda=cuda,
                                   warmup=a.warmup,
                                   kernel_reps=a.kernel_reps, host=cuda,
                                   names=cuda))
        if cuda:
            r["peak_mem_gb"] = torch.cuda.max_memory_allocated() / 1e9
        stage = "train extras"
        _train_extras(step, a, r, cuda)
        model.zero_grad(set_to_none=True)

        stage = "inference"
        _inference(cm, ids, a, r, ref, cuda)
        stats = dynamo_stats()
        r.update(graph_breaks=stats["graph_breaks"],
                 graphs=stats["unique_graphs"], dynamo=stats)

        if a.dynamic and backend in a.dynamic_backends:
            stage = "dynamic shapes"
            r["dynamic"] = dynamic_check(model, cm, base, a, tracker,
                                         tracking, cuda, backend)
    except Exception as e:  # noqa: BLE001: a case's failure is a result
        r.update(error_info(e))
        r["error_stage"] = stage
    finally:
        if backend == "nvfuser":
            try:
                r["fallbacks"] = (tracker.summary() if tracking else
                                  summary_from_compiled_graphs())
            except Exception as e:  # noqa: BLE001
                r["fallbacks"] = error_info(e)
            tracker.stop()
            tracker.graphs = []
        if model is not None:
            model.zero_grad(set_to_none=True)
        model = cm = None  # the closures hold them too
        reset_dynamo()  # drops the compiled graphs and what they hold
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
    return r


def _first_step(step, model, r, ref, cuda):
    """The first train step (compiles): its time and loss, and loss and
    gradients against eager's first step (eager's case records them and
    compares a second step of its own)."""
    t0 = time.perf_counter()
    loss = step()
    _sync(cuda)
    r["first_call_s"] = time.perf_counter() - t0
    r["loss"] = loss.item()
    r["after_train_compile"] = dynamo_stats()
    if r["backend"] == "eager":
        ref["loss"] = r["loss"]
        ref["grads"] = {n: p.grad.detach().clone()
                        for n, p in model.named_parameters()
                        if p.grad is not None}
        loss = step()  # eager's own run-to-run difference
        r["compared_to"] = "a second eager step"
    else:
        r["compared_to"] = "eager's first step"
    if "grads" in ref:
        r["loss_rel_diff"] = (abs(loss.item() - ref["loss"]) /
                              max(abs(ref["loss"]), 1e-30))
        r.update(grad_diff(model, ref["grads"]))


def _train_extras(step, a, r, cuda):
    """What --breakdown, --host-profile, --launchers and --gaps ask of the
    train step of r's case."""
    backend = r["backend"]
    if a.breakdown and cuda:
        r["breakdown"] = kernel_breakdown(step, reps=3)[:a.breakdown]
    if a.host_profile and backend != "eager":
        host_profile(step, a.host_profile, "%s %s" % (r["model"], backend))
    if a.launchers and cuda and backend != "eager":
        for k, op, shapes, chain in kernel_launchers(
                step, a.launchers.split(",")):
            print("[launcher] %s: %s <- %s %s <- %s" % (
                backend, k, op, shapes, " <- ".join(chain)), flush=True)
    if a.gaps and cuda:
        print_gaps("%s %s" % (r["model"], backend), step, top=a.gaps)


def _inference(cm, ids, a, r, ref, cuda):
    """The inference forward under no_grad: first call, logits against
    eager's (eager's case records them), timing. A failure is recorded
    in r["infer"]; the train numbers stand."""
    backend = r["backend"]
    try:
        def infer():
            with torch.no_grad():
                return cm(input_ids=ids).logits

        t0 = time.perf_counter()
        logits = infer()
        _sync(cuda)
        r["infer_first_call_s"] = time.perf_counter() - t0
        if backend == "eager":
            ref["logits"] = logits.detach()
        elif "logits" in ref:
            r["logits_rel_l2"] = rel_l2(logits, ref["logits"])
        del logits
        r["infer"] = _slim(measure(infer, reps=a.reps, cuda=cuda,
                                   warmup=a.warmup,
                                   kernel_reps=a.kernel_reps, host=cuda,
                                   names=cuda))
        if a.host_profile and backend != "eager":
            host_profile(infer, a.host_profile,
                         "%s %s inference" % (r["model"], backend))
    except Exception as e:  # noqa: BLE001: the train numbers stand
        r["infer"] = error_info(e)


def dynamic_check(model, cm, base, a, tracker, tracking, cuda, backend):
    """One train step of the compiled model at batch+1, seq/2."""
    b2, s2 = a.batch + 1, max(8, a.seq // 2)
    gen = torch.Generator().manual_seed(2)
    ids2 = torch.randint(0, a.vocab, (b2, s2), generator=gen).to(
        next(base.parameters()).device)
    res = dict(shape=[b2, s2])
    before = dynamo_stats()["unique_graphs"]
    n_before = len(tracker.graphs)
    try:
        dconfig = importlib.import_module("torch._dynamo.config")
        res["automatic_dynamic_shapes"] = getattr(
            dconfig, "automatic_dynamic_shapes", None)
    except ImportError:
        pass
    fallbacks_before = _region_fallbacks(tracker) if tracking else None
    try:
        model.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        loss = cm(input_ids=ids2, labels=ids2).loss
        loss.backward()
        _sync(cuda)
        res["first_call_s"] = time.perf_counter() - t0
        res["ran"] = True
        res["loss"] = loss.item()
    except Exception as e:  # noqa: BLE001
        res["ran"] = False
        res.update(error_info(e))
    after = dynamo_stats()["unique_graphs"]
    res["new_graphs"] = after - before
    if tracking:
        new = tracker.graphs[n_before:]
        res["new_nvfuser_graphs"] = [dict(kind=g["kind"],
                                          dynamic=g["dynamic"])
                                     for g in new]
        res["symbolic_shapes"] = any(g["dynamic"] for g in new) if new \
            else None
        res["region_fallback_calls"] = (_region_fallbacks(tracker) -
                                        fallbacks_before)
    if res.get("ran"):
        try:
            with torch.no_grad():
                ref = base(input_ids=ids2, labels=ids2).loss.item()
            res["loss_rel_diff"] = abs(res["loss"] - ref) / max(abs(ref),
                                                                1e-30)
        except Exception as e:  # noqa: BLE001
            res["reference_error"] = error_info(e)["error"]
    if backend == "eager":
        res["verdict"] = "eager (nothing compiled)"
    elif res["new_graphs"] == 0:
        res["verdict"] = "no recompile (the graphs were already dynamic)"
    elif res.get("symbolic_shapes"):
        res["verdict"] = "recompiled with symbolic shapes"
    elif res.get("symbolic_shapes") is False:
        res["verdict"] = "recompiled with static shapes"
    else:
        res["verdict"] = "recompiled"
    model.zero_grad(set_to_none=True)
    return res


def _region_fallbacks(tracker):
    n = 0
    for g in tracker.graphs:
        gm = g["module"]
        for rname in getattr(gm, "nvfuser_regions", []) or []:
            n += getattr(getattr(gm, rname, None), "fallbacks", 0) or 0
    return n


def run_model(name, a, cuda, device):
    """Every backend on one model: a list of rows."""
    rows = []
    try:
        base, info = build_model(name, a, device)
    except Exception as e:  # noqa: BLE001
        err = error_info(e)
        return [dict(model=name, backend=b, error_stage="build", **err)
                for b in a.backends]
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(0, a.vocab, (a.batch, a.seq), generator=gen).to(
        device)
    ref = {}
    tracker = FxTracker()
    for backend in a.backends:
        print("== %s / %s" % (name, backend), flush=True)
        r = run_case(name, backend, base, ids, a, ref, tracker, cuda)
        r["model_info"] = info
        rows.append(r)
        print("   " + json.dumps(_short(r)), flush=True)
    by_backend = {r["backend"]: r["train"] for r in rows
                  if isinstance(r.get("train"), dict)}
    warnings = sanity_warnings(by_backend,
                               [b for b in a.backends if b != "eager"],
                               label=" [%s train step]" % name)
    for r in rows:
        r["warnings"] = [w for w in warnings if " %s " % r["backend"] in w]
    ind = next((r for r in rows if r["backend"] == "inductor"), {})
    for r in rows:
        if r["backend"] == "nvfuser" and ind.get("worst_grad_rel_l2"):
            x = r.get("worst_grad_rel_l2")
            if x is not None:
                r["grad_diff_vs_inductors"] = x / ind["worst_grad_rel_l2"]
    del base
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return rows


def environment(a, cuda):
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), torch=torch.__version__,
                python=platform.python_version(),
                gpu=torch.cuda.get_device_name() if cuda else "cpu",
                args=vars(a))
    try:
        import transformers
        meta["transformers"] = transformers.__version__
    except ImportError:
        meta["transformers"] = None
    try:
        meta["git"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
            capture_output=True, timeout=10).stdout.strip()
    except Exception:  # noqa: BLE001
        pass
    return meta


def install_capture(directory):
    """Every graph the nvfuser backend compiles is first written to
    DIRECTORY as <n>_<forward|backward>.py (a fixture: the code, the input
    shapes and strides), so CPU tests and offline analysis see the graphs
    this torch and transformers produce."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
    from fixtures import capture
    from nvfuser.fx import backend
    os.makedirs(directory, exist_ok=True)
    compile_region_graph = backend._boxed
    count = [0]

    def boxed(gm, example_inputs):
        count[0] += 1
        path = os.path.join(directory, "graph_%d.py" % count[0])
        try:
            capture.write(path, gm, example_inputs,
                          "model_bench --capture graph %d" % count[0])
        except Exception as e:  # noqa: BLE001 (capture must not stop a run)
            print("capture of graph %d failed: %s" % (count[0], e))
        return compile_region_graph(gm, example_inputs)
    backend._boxed = boxed


# ------------------------------------------------------------- isolation
def child_argv(a, model, json_path, md_path):
    argv = [sys.executable, os.path.abspath(__file__), "--child",
            "--models", model,
            "--backends", ",".join(a.backends), "--json", json_path,
            "--md", md_path, "--dtype", a.dtype, "--attn", a.attn,
            "--dynamic-backends", ",".join(a.dynamic_backends),
            "--warmup", str(a.warmup), "--kernel-reps", str(a.kernel_reps),
            "--breakdown", str(a.breakdown), "--device", a.device,
            "--launchers", a.launchers, "--host-profile", str(a.host_profile),
            "--gaps", str(a.gaps)]
    for k in SIZES["full"]:
        argv += ["--" + k.replace("_", "-"), str(getattr(a, k))]
    if a.capture:
        argv += ["--capture", os.path.join(a.capture, model)]
    for flag in ("dynamic", "no_cache"):
        if getattr(a, flag):
            argv.append("--" + flag.replace("_", "-"))
    return argv


def run_isolated(name, a, timeout):
    """run_model in a child process: a crash or hang takes out this model
    only."""
    with tempfile.TemporaryDirectory() as tmp:
        jp, mp = os.path.join(tmp, "rows.json"), os.path.join(tmp, "rows.md")
        errp = os.path.join(tmp, "stderr.txt")
        rc, why = None, None
        try:
            with open(errp, "w") as err:
                rc = subprocess.run(child_argv(a, name, jp, mp), stderr=err,
                                    timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            why = "TimeoutExpired: the model's child process ran past %d s" \
                % timeout
        try:
            with open(jp) as f:
                rows = json.load(f)["rows"]
        except (OSError, ValueError, KeyError):
            rows = []
        with open(errp) as f:
            tail = f.read()[-3000:]
        if rc:
            sys.stderr.write(tail)
    done = {r["backend"] for r in rows}
    for b in a.backends:
        if b not in done:
            msg = why or "ChildProcessError: the model's child process " \
                "exited with %s before this case (stderr tail in the JSON)" \
                % rc
            rows.append(dict(model=name, backend=b, error=msg,
                             error_stage="child process",
                             traceback=tail))
    return rows


# ------------------------------------------------------------------ main
def parse(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--models", default=DEFAULT_MODELS,
                   help="comma-separated, from: " + ", ".join(MODELS))
    p.add_argument("--backends", default=",".join(BACKENDS))
    p.add_argument("--quick", action="store_true",
                   help="smoke-run sizes: %s" % SIZES["quick"])
    for k, v in SIZES["full"].items():
        p.add_argument("--" + k.replace("_", "-"), type=int, default=None,
                       help="default %d (--quick: %d)" % (
                           v, SIZES["quick"][k]))
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--kernel-reps", type=int, default=5,
                   help="profiled calls per measurement")
    p.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    p.add_argument("--attn", default="sdpa",
                   help="attn_implementation (sdpa, eager, ...)")
    p.add_argument("--no-cache", action="store_true",
                   help="config.use_cache=False (by default transformers "
                        "builds a DynamicCache even in a train step)")
    p.add_argument("--dynamic", action="store_true",
                   help="then a train step at batch+1, seq/2")
    p.add_argument("--dynamic-backends", default="nvfuser")
    p.add_argument("--host-profile", type=int, default=0, metavar="ROWS",
                   help="print cProfile's top ROWS functions of 10 compiled "
                        "train steps")
    p.add_argument("--launchers", default="", metavar="PATTERNS",
                   help="comma-separated kernel name parts: print the ATen "
                   "op (with input shapes) that launched each such kernel "
                   "of each compiled backend's train step, e.g. "
                   "direct_copy,FillFunctor")
    p.add_argument("--gaps", type=int, default=0, metavar="N",
                   help="print the N longest stretches in which the GPU "
                   "waited during each backend's train step, with the op "
                   "whose launch came late, and the host's blocking CUDA "
                   "calls (benchmarks/gpu_gaps.py)")
    p.add_argument("--breakdown", type=int, default=0, metavar="N",
                   help="top N kernels of each backend's train step")
    p.add_argument("--md", default=os.path.join(HERE, "results",
                                                "model_bench.md"))
    p.add_argument("--json", default=os.path.join(HERE, "results",
                                                  "model_bench.json"))
    p.add_argument("--isolate", action="store_true",
                   help="one child process per model")
    p.add_argument("--budget-s", type=float, default=None,
                   help="start no model after this many seconds (the rest "
                        "are rows saying so)")
    p.add_argument("--device", default=None)
    p.add_argument("--child", action="store_true",
                   help=argparse.SUPPRESS)  # run_isolated's children
    p.add_argument("--capture", default=None, metavar="DIR",
                   help="write every ATen graph the nvfuser backend is "
                        "given to DIR as a test fixture "
                        "(tests/python/fixtures/capture.py format)")
    p.add_argument("--list", action="store_true",
                   help="list the models and whether this transformers "
                        "has them")
    a = p.parse_args(argv)
    sizes = SIZES["quick" if a.quick else "full"]
    for k, v in sizes.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    a.models = [m for m in a.models.split(",") if m]
    unknown = [m for m in a.models if m not in MODELS]
    if unknown:
        p.error("unknown models %s (known: %s)" % (unknown, ", ".join(MODELS)))
    a.backends = [b for b in BACKENDS if b in a.backends.split(",")] + [
        b for b in a.backends.split(",") if b and b not in BACKENDS]
    a.dynamic_backends = [b for b in a.dynamic_backends.split(",") if b]
    if a.device is None:
        a.device = "cuda" if torch.cuda.is_available() else "cpu"
    return a


def main(argv=None):
    a = parse(argv)
    if a.list:
        try:
            import transformers
        except ImportError:
            transformers = None
        for name, (cfg, cls, _, _) in MODELS.items():
            ok = transformers is not None and hasattr(transformers, cls) \
                and hasattr(transformers, cfg)
            print("%-10s %-20s %-22s %s" % (name, cfg, cls,
                                            "ok" if ok else "missing"))
        return
    cuda = a.device.startswith("cuda")
    if a.capture and (a.child or not a.isolate):
        install_capture(a.capture)
    meta = environment(a, cuda)
    if "eager" not in a.backends:
        print("note: no eager backend, so no differences against eager")
    rows = []
    t_start = time.perf_counter()
    for name in a.models:
        elapsed = time.perf_counter() - t_start
        if a.budget_s is not None and elapsed > a.budget_s:
            rows += [dict(model=name, backend=b, error_stage="skipped",
                          error="skipped: the --budget-s of %g s was spent"
                          % a.budget_s) for b in a.backends]
            continue
        if a.isolate:
            left = (a.budget_s - elapsed + 120) if a.budget_s else 3600
            rows += run_isolated(name, a, timeout=max(60, int(left)))
        else:
            rows += run_model(name, a, cuda, a.device)
        write(rows, meta, a, final=False)
    md = write(rows, meta, a, final=True)
    if not a.child:
        print()
        print(md)
        print("wrote", a.md, "and", a.json)


if __name__ == "__main__":
    main()
