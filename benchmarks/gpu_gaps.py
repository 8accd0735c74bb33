"""Where the GPU waits during one call: the stretches between consecutive
GPU activities (kernels, copies, memsets) of a profiled fn() call, the
longest first, each with the kernel before and after it, the CPU op that
launched the one after (the launch that came late) and its nearest Python
frames outside torch; and the runtime calls that block the host on the
GPU (synchronizations, blocking copies). Event time minus kernel time is
these gaps: this names them.

Reads the profiler's Chrome trace (its "kernel", "gpu_memcpy",
"gpu_memset", "cuda_runtime", "cuda_driver", "cpu_op" and
"python_function" events, tied
by their "correlation" ids), which every torch 2.x profiler writes.
"""

import json
import os
import tempfile

import torch

_GPU = ("kernel", "gpu_memcpy", "gpu_memset")
# Runtime calls that wait for the GPU (or may: a pageable copy).
_BLOCKING = ("cudaStreamSynchronize", "cudaDeviceSynchronize",
             "cudaEventSynchronize", "cudaMemcpy", "cuStreamSynchronize",
             "cuCtxSynchronize")


def trace_events(fn):
    """The Chrome-trace events of one profiled fn() call (after one
    unprofiled call that warms it up)."""
    fn()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU,
            torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, with_stack=True) as prof:
        fn()
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            return json.load(f)["traceEvents"]
    finally:
        os.remove(path)


class _Enclosing:
    """The CPU ops and Python frames of one thread that were running at a
    given time, innermost first."""

    def __init__(self, events):
        self.spans = sorted(
            (e for e in events if e.get("cat") in ("cpu_op",
                                                   "python_function")
             and "dur" in e), key=lambda e: e["ts"])

    def at(self, tid, t):
        inside = [e for e in self.spans
                  if e["tid"] == tid and e["ts"] <= t <= e["ts"] + e["dur"]]
        inside.sort(key=lambda e: e["dur"])
        ops = [e["name"] for e in inside if e["cat"] == "cpu_op"]
        frames = [e["name"] for e in inside if e["cat"] == "python_function"
                  and "/torch/" not in e["name"]]
        return ops[:3] + frames[:3]


def _short(name, n=70):
    return name if len(name) <= n else name[:n - 3] + "..."


def gpu_gaps(events, min_gap_us=10.0, top=15):
    """(total idle us between the first and last GPU activity, [(gap us,
    kernel before, kernel after, where the after one was launched)] longest
    first, [(blocking runtime call, us, where)])."""
    gpu = sorted((e for e in events if e.get("cat") in _GPU and "dur" in e),
                 key=lambda e: e["ts"])
    # Our runtime launches through the driver API (cuLaunchKernel).
    launches = {e["args"].get("correlation"): e for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver")
                and "args" in e}
    where = _Enclosing(events)
    gaps, idle, end = [], 0.0, None
    for e in gpu:
        if end is not None and e["ts"] > end["ts"] + end["dur"]:
            gap = e["ts"] - (end["ts"] + end["dur"])
            idle += gap
            if gap >= min_gap_us:
                gaps.append((gap, end, e))
        if end is None or e["ts"] + e["dur"] > end["ts"] + end["dur"]:
            end = e
    # Launch sites only for the gaps shown (a lookup scans the trace).
    gaps.sort(key=lambda g: -g[0])
    shown = []
    for gap, before, after in gaps[:top]:
        launch = launches.get(after.get("args", {}).get("correlation"))
        site = (where.at(launch["tid"], launch["ts"]) if launch
                else ["(launch not in the trace)"])
        shown.append((gap, _short(before["name"]), _short(after["name"]),
                      site))
    blocking = [(e["name"], e["dur"], where.at(e["tid"], e["ts"]))
                for e in events if e.get("cat") == "cuda_runtime"
                and e.get("name") in _BLOCKING and e.get("dur", 0) >= 5]
    return idle, shown, blocking


def print_gaps(label, fn, min_gap_us=10.0, top=15):
    """Prints gpu_gaps of one fn() call as [gap] / [blocking] lines."""
    idle, gaps, blocking = gpu_gaps(trace_events(fn), min_gap_us, top)
    print("[gap] %s: GPU idle %.0f us between its first and last activity; "
          "%d gaps >= %.0f us shown" % (label, idle, len(gaps), min_gap_us),
          flush=True)
    for gap, before, after, site in gaps:
        print("[gap] %s: %.0f us after %s, before %s <- %s" % (
            label, gap, before, after, " <- ".join(site)), flush=True)
    for name, dur, site in blocking:
        print("[blocking] %s: %s %.0f us <- %s" % (label, name, dur,
                                                   " <- ".join(site)),
              flush=True)
