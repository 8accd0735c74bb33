"""Timing helpers shared by the benchmarks: CUDA-event medians with an L2
flush between reps, kernel counts and kernel time from the profiler, byte
counts and the copy bandwidth every fraction is measured against.

Every benchmark measures through ``measure(fn)``: event time (median, L2
flushed), the GPU time of the kernels alone (L2 flushed before every call
too) and the kernels per call, all three from the same warmed-up function,
so tables never mix methods.
``fresh_compile(factory, backend)`` is the one way to compile a case:
dynamo's caches and counters are reset and a new function is compiled, so a
case never runs on an earlier case's graphs or past the recompile limit
(where dynamo silently runs eager).
"""

import collections
import importlib
import os
import statistics
import time
import traceback

import torch


class Timer:
    """Median time in ms; CUDA events with an L2 flush between reps on the
    GPU, wall clock on the CPU."""

    def __init__(self, cuda, reps):
        self.cuda = cuda
        self.reps = reps
        self.flush = (torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
                      if cuda else None)

    def __call__(self, fn):
        fn()
        times = []
        for _ in range(self.reps):
            if self.cuda:
                l2_flush(self.flush)
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
            else:
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)


# ------------------------------------------------------------ the profiler
def _is_gpu_event(e):
    return getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA


def _gpu_us(e):
    """Duration of one GPU-side profiler event (kernel, memcpy, memset)."""
    tr = getattr(e, "time_range", None)
    if tr is not None:
        return float(tr.elapsed_us())
    return float(getattr(e, "device_time_total", 0.0) or 0.0)


def _per_call(n, reps):
    x = n / reps
    return int(x) if x == int(x) else round(x, 2)


# How the L2 is flushed before every timed call (NVF_BENCH_FLUSH). "read"
# (the default) reads a 256 MiB buffer: the L2 is left holding clean lines
# (and the flush's 64 KiB result), so every call starts from the same cold L2 and pays for its own
# work alone, as under Nsight Compute's cache control. "write" zeroes the
# buffer (Triton's do_bench does): the L2 is left full of dirty lines whose
# write-back the first kernel after the flush pays for. On an H100 that
# added about 6 us to every RoPE kernel of every executor (partial rotary's
# forward: 29.8 us after a read, 35.8 after a write), and a GPU-side wait of
# ~100 us after the write did not drain it
# (benchmarks/results/session28_2026-12-06_h100.md).
FLUSH_MODES = ("read", "write")


def flush_mode():
    mode = os.environ.get("NVF_BENCH_FLUSH", "read")
    if mode not in FLUSH_MODES:
        raise ValueError("NVF_BENCH_FLUSH=%r: one of %s" % (mode,
                                                            FLUSH_MODES))
    return mode


def l2_flush(buf, mode=None):
    """One L2 flush through buf (the 256 MiB flush buffer), `mode` one of
    FLUSH_MODES (default: flush_mode())."""
    mode = mode or flush_mode()
    if mode not in FLUSH_MODES:
        raise ValueError("L2 flush %r: one of %s" % (mode, FLUSH_MODES))
    if mode == "read":
        # One read pass: the max of each 4 KiB row of uint8, one kernel
        # (a whole-buffer max also launches a memset, whose name a
        # measured function's memsets share; profile_kernels tells the
        # flush's kernels by name).
        buf.view(-1, 4096).amax(dim=1)
    else:
        buf.zero_()


def _flush_events(mode):
    """(names, count): the GPU-side events one L2 flush of `mode` launches,
    found once per process and mode by profiling a flush alone."""
    if mode not in _FLUSH_EVENTS:
        flush = _flush_buffer()
        l2_flush(flush, mode)
        torch.cuda.synchronize()
        acts = [torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            l2_flush(flush, mode)
            torch.cuda.synchronize()
        names = [e.name for e in prof.events() if _is_gpu_event(e)]
        _FLUSH_EVENTS[mode] = (frozenset(names), len(names))
    return _FLUSH_EVENTS[mode]


_FLUSH_EVENTS = {}


def _flush_buffer():
    """The event timer's 256 MiB L2 flush buffer (one per process)."""
    t = _TIMERS.get(True)
    return t.flush if t is not None else _timer(True, 1).flush


def without_flushes(events, flush_names, per_flush, flushes):
    """events ([(name, us)]) less the L2 flushes' own events: `flushes`
    flush calls of `per_flush` events each, all named in flush_names.
    Raises if the measured function launched a kernel of such a name too
    (its time could not be told from the flushes')."""
    kept = [(n, us) for n, us in events if n not in flush_names]
    dropped = len(events) - len(kept)
    if dropped != flushes * per_flush:
        raise RuntimeError(
            "profile_kernels: the measured function launches the L2 flush's "
            "kernel (%s) itself; profile it with "
            "profile_kernels(fn, flush_l2=False)" % sorted(flush_names))
    return kept


def profile_kernels(fn, reps=10, names=False, flush_l2=True, flush=None):
    """What fn() runs on the GPU, per call, from one profiler session over
    `reps` calls (fn is called once before, outside it): kernel_ms (the
    GPU-side events' durations summed: no host gaps), kernels (GPU-side
    events: kernels, memcpys and memsets) and, with names, by_name
    {name: [us per call, launches per call]}, longest first. Only GPU-side
    events count: CPU-side ops carry their kernels' time too (that is how
    key_averages' device totals double count). With flush_l2 (default)
    the L2 is flushed before every call, as the event timer does, so each
    call starts cold, and the flush's own events are left out: kernel
    times of inputs that nearly fit in L2 would otherwise depend on what
    the previous call left there."""
    fn()
    mode = (flush or flush_mode()) if flush_l2 else None
    flush_names, per_flush = _flush_events(mode) if flush_l2 else ((), 0)
    buf = _flush_buffer() if flush_l2 else None
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(reps):
            if buf is not None:
                l2_flush(buf, mode)
            fn()
        torch.cuda.synchronize()
    events = [(e.name, _gpu_us(e)) for e in prof.events()
              if _is_gpu_event(e)]
    if flush_l2:
        events = without_flushes(events, flush_names, per_flush, reps)
    total_us = sum(us for _, us in events)
    by = collections.defaultdict(lambda: [0.0, 0])
    for name, us in events if names else ():
        row = by[name]
        row[0] += us
        row[1] += 1
    res = dict(kernel_ms=total_us / reps / 1e3,
               kernels=_per_call(len(events), reps))
    if names:
        res["by_name"] = dict(sorted(
            ((k, [v[0] / reps, _per_call(v[1], reps)]) for k, v in by.items()),
            key=lambda kv: -kv[1][0]))
    return res


def count_kernels(fn, cuda):
    """GPU-side events (kernels, memcpys, memsets) one call launches,
    None on the CPU."""
    if not cuda:
        return None
    return profile_kernels(fn, reps=1)["kernels"]


def kernel_breakdown(fn, reps=10):
    """[(kernel name, GPU us per call, launches per call)] of what fn()
    launches, longest first, from the profiler (GPU-side events only)."""
    by = profile_kernels(fn, reps, names=True)["by_name"]
    return [(k, us, n) for k, (us, n) in by.items()]


def kernel_launchers(fn, patterns):
    """[(kernel, CPU op that launched it, its input shapes, enclosing ops
    innermost first and then the nearest Python frames outside torch)] for the kernels of one fn() call whose names contain
    one of `patterns`: where an ATen copy or fill comes from."""
    fn()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU,
            torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, record_shapes=True,
                                with_stack=True) as prof:
        fn()
        torch.cuda.synchronize()
    found = []
    for e in prof.events():
        for k in getattr(e, "kernels", []) or []:
            if not any(p in k.name for p in patterns):
                continue
            chain, parent = [], e.cpu_parent
            while parent is not None and len(chain) < 6:
                chain.append(parent.name)
                parent = parent.cpu_parent
            # The Python frames nearest the op, outside torch itself: which
            # line of a backend or of the model asked for it.
            frames = [f for f in (getattr(e, "stack", None) or [])
                      if "/torch/" not in f][:3]
            found.append((k.name[:60], e.name, e.input_shapes,
                          chain + frames))
    return found


def kernel_time_ms(fn, reps=10):
    """GPU time of the kernels fn() launches (no host gaps), per call, and
    the kernels' names, from the profiler."""
    res = profile_kernels(fn, reps, names=True)
    return res["kernel_ms"], sorted(res["by_name"])


def host_ms(fn, reps=20):
    """Host time per call of fn() (launches are asynchronous: when this is
    close to the event time, the host is what limits)."""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / reps * 1e3


# ------------------------------------------------------ the one helper
_TIMERS = {}


def _timer(cuda, reps):
    # One flush buffer per process (256 MiB), whatever the rep counts.
    key = bool(cuda)
    t = _TIMERS.get(key)
    if t is None:
        t = _TIMERS[key] = Timer(cuda, reps)
    t.reps = reps
    return t


def measure(fn, reps=20, cuda=None, warmup=2, kernel_reps=None, host=False,
            names=False):
    """The timing of every benchmark: fn() is called `warmup` times, then
    ms (median CUDA-event time over `reps` calls, L2 flushed between them;
    wall clock on the CPU), kernel_ms and kernels (per call, profiler over
    `kernel_reps` calls, default min(reps, 10); None on the CPU), with host
    host_ms (host time per call), with names by_name (see
    profile_kernels)."""
    if cuda is None:
        cuda = torch.cuda.is_available()
    for _ in range(warmup):
        fn()
    if cuda:
        torch.cuda.synchronize()
    res = dict(ms=_timer(cuda, reps)(fn), kernel_ms=None, kernels=None)
    if cuda:
        res.update(profile_kernels(fn, kernel_reps or min(reps, 10),
                                   names=names))
        if host:
            res["host_ms"] = host_ms(fn, reps)
    return res


def fmt_measure(m, digits=3):
    """'ms (kernel ms, kernels)' of a measure() result; what went wrong
    where it holds no time."""
    if not isinstance(m, dict):
        return "-" if m is None else str(m)
    if m.get("ms") is None:
        return str(m.get("error") or m.get("unavailable") or "-")
    s = "%.*f" % (digits, m["ms"])
    if m.get("kernel_ms") is not None:
        s += " (%.*f, %s)" % (digits, m["kernel_ms"], m["kernels"])
    return s


# ------------------------------------------------------------- compiling
def dynamo_available():
    return hasattr(torch, "compile")


def reset_dynamo():
    """Dynamo's code caches, guards, recompile counts and counters
    cleared (no-op without dynamo)."""
    if not dynamo_available():
        return
    dynamo = importlib.import_module("torch._dynamo")
    dynamo.reset()
    try:
        dynamo.utils.counters.clear()
    except AttributeError:
        pass


def fresh_compile(fn_factory, backend, **compile_kwargs):
    """A new function (or module) from fn_factory(), after a dynamo reset,
    compiled with `backend`: "eager" (or None) returns it uncompiled,
    "inductor" is torch.compile's default, any other name is passed as
    backend= ("nvfuser" imports nvfuser first, which registers it). Every
    case compiles through this, so no case runs on an earlier case's cache
    entries or hits the recompile limit."""
    reset_dynamo()
    fn = fn_factory()
    if backend in (None, "eager"):
        return fn
    if not dynamo_available():
        raise RuntimeError("torch.compile unavailable (torch %s)" %
                           torch.__version__)
    if backend == "nvfuser":  # importing nvfuser registers the backend
        importlib.import_module("nvfuser")
    kw = dict(compile_kwargs)
    if backend != "inductor":
        kw["backend"] = backend
    return torch.compile(fn, **kw)


def dynamo_stats():
    """Graph breaks (total and by reason), graphs compiled and the other
    dynamo counters since the last reset, as plain numbers."""
    if not dynamo_available():
        return dict(graph_breaks=0, unique_graphs=0)
    c = importlib.import_module("torch._dynamo.utils").counters
    breaks = dict(c.get("graph_break", {}))
    return dict(graph_breaks=sum(breaks.values()),
                break_reasons={str(k)[:300]: v for k, v in breaks.items()},
                unique_graphs=c.get("stats", {}).get("unique_graphs", 0),
                stats={k: v for k, v in c.get("stats", {}).items()})


# ------------------------------------------------------- checks, errors
def sanity_warnings(results, compiled, count_ref="eager", time_ref="eager",
                    min_ratio=0.1, label=""):
    """Warnings for measure() results that suggest a broken measurement:
    a compiled backend launching exactly as many kernels as `count_ref`
    (it probably fell back to eager), or taking less than min_ratio of
    `time_ref`'s time."""
    out = []
    cref = results.get(count_ref) or {}
    tref = results.get(time_ref) or {}
    for name in compiled:
        r = results.get(name) or {}
        if r.get("ms") is None:
            continue
        if (r.get("kernels") is not None and cref.get("kernels") and
                r["kernels"] == cref["kernels"] and name != count_ref):
            out.append("WARNING%s: %s launches as many kernels as %s (%s): "
                       "did it fall back to eager?" % (
                           label, name, count_ref, r["kernels"]))
        if tref.get("ms") and name != time_ref and \
                r["ms"] < min_ratio * tref["ms"]:
            out.append("WARNING%s: %s takes %.4f ms, under %g of %s's %.4f "
                       "ms: check that it computes the same thing" % (
                           label, name, r["ms"], min_ratio, time_ref,
                           tref["ms"]))
    return out


def error_info(e):
    """{'error': 'Type: first line', 'traceback': ...} of an exception."""
    lines = str(e).strip().splitlines()
    return dict(error="%s: %s" % (type(e).__name__,
                                  (lines[0] if lines else "")[:200]),
                traceback=traceback.format_exc())


def nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts
               if isinstance(t, torch.Tensor))


def copy_bandwidth(cuda, timer):
    n = (1 << 30) // 2 if cuda else 1 << 20
    x = torch.randn(n, device="cuda" if cuda else "cpu", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    ms = timer(lambda: y.copy_(x))
    return 2 * x.numel() * 2 / ms / 1e6  # GB/s
