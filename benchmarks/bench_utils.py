"""Timing helpers shared by the benchmarks: CUDA-event medians with an L2
flush between reps, kernel counts and kernel time from the profiler, byte
counts and the copy bandwidth every fraction is measured against."""

import statistics
import time

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
                self.flush.zero_()
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


def count_kernels(fn, cuda):
    """CUDA kernels one call launches (profiler), None on the CPU."""
    if not cuda:
        return None
    fn()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events()
               if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA]
    return len(kernels)


def nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts
               if isinstance(t, torch.Tensor))


def copy_bandwidth(cuda, timer):
    n = (1 << 30) // 2 if cuda else 1 << 20
    x = torch.randn(n, device="cuda" if cuda else "cpu", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    ms = timer(lambda: y.copy_(x))
    return 2 * x.numel() * 2 / ms / 1e6  # GB/s


def kernel_breakdown(fn, reps=10):
    """[(kernel name, GPU us per call, launches per call)] of what fn()
    launches, longest first, from the profiler."""
    fn()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None)
        if t is None:
            t = getattr(e, "cuda_time_total", 0.0)
        if t > 0 and e.key and not e.key.startswith("cuda"):
            rows.append((e.key, t / reps, e.count / reps))
    return sorted(rows, key=lambda r: -r[1])


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


def kernel_time_ms(fn, reps=10):
    """GPU time of the kernels fn() launches (no host gaps), per call, and
    the kernels' names, from the profiler."""
    rows = kernel_breakdown(fn, reps)
    return sum(r[1] for r in rows) / 1e3, sorted(r[0] for r in rows)
