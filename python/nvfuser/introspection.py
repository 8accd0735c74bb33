"""What nvFuser's FusionDefinition tells about a run besides its outputs:
reproducer scripts, the scheduled (segmented) IR, a profile and captured
debug output."""

import math
import os
import re
import tempfile
import time

import torch


# ---- reproducer scripts ---------------------------------------------------
class InputReproducer:
    """How to make a tensor like an execute input again: sizes, strides,
    dtype, device and value range (nvFuser's class of the same name)."""

    def __init__(self, tensor):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError("InputReproducer: expected a torch.Tensor, got %s"
                            % type(tensor).__name__)
        self.dtype = tensor.dtype
        self.device = tensor.device
        self.size = tuple(tensor.size())
        self.strides = tuple(tensor.stride())
        self.is_contiguous = tensor.is_contiguous()
        self.low, self.high = _value_range(tensor)

    def to_make_tensor_str(self):
        where = "dtype=%s, device='%s'" % (self.dtype, self.device)
        if self.is_contiguous:
            return "torch.testing.make_tensor(%r, %s, low=%r, high=%r)" % (
                self.size, where, self.low, self.high)
        # Enough storage for the largest offset the strides reach.
        extent = 1 + sum((s - 1) * st for s, st in zip(self.size,
                                                       self.strides))
        extent = 0 if 0 in self.size else extent
        if self.dtype.is_floating_point or self.dtype.is_complex:
            base = "torch.randn(%d, %s)" % (extent, where)
        else:
            base = "torch.randint(%r, %r, (%d,), %s)" % (
                self.low, self.high, extent, where)
        return "%s.as_strided(%r, %r)" % (base, self.size, self.strides)


def _value_range(tensor):
    """[low, high) for make_tensor: the tensor's own range, so indices stay
    in bounds in the reproducer."""
    if tensor.dtype == torch.bool:
        return 0, 2
    if tensor.numel() == 0:
        return 0, 1
    t = tensor.detach()
    if t.is_complex():
        # make_tensor draws both parts from [low, high).
        t = torch.view_as_real(t.resolve_conj())
    low, high = t.min().item(), t.max().item()
    if isinstance(low, float) and not (math.isfinite(low) and
                                       math.isfinite(high)):
        return None, None
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        return int(low), int(high) + 1
    return low, high if high > low else low + 1.0


def _scalar_str(value):
    # nan and inf are not Python names.
    text = repr(value)
    text = re.sub(r"\binf\b", 'float("inf")', text)
    return re.sub(r"\bnan\b", 'float("nan")', text)


def repro_script(fd, inputs=None):
    """A script that defines fd again and, given inputs (tensors, Python
    numbers or InputReproducers), makes like inputs and executes it."""
    from . import version
    lines = ["# torch version: %s" % torch.__version__,
             "# nvfuser version: %s" % version(),
             "import torch",
             "from nvfuser import FusionDefinition, DataType",
             str(fd).rstrip("\n"),
             "with FusionDefinition() as fd:",
             "    nvfuser_fusion_id%s(fd)" % fd.id()]
    if inputs is not None:
        lines += ["", "inputs = ["]
        for value in inputs:
            if isinstance(value, torch.Tensor):
                value = InputReproducer(value)
            if isinstance(value, InputReproducer):
                lines.append("    %s," % value.to_make_tensor_str())
            else:
                lines.append("    %s," % _scalar_str(value))
        lines += ["]", "fd.execute(inputs)"]
    return "\n".join(lines) + "\n"


def reproducers(inputs):
    return [InputReproducer(v) if isinstance(v, torch.Tensor) else v
            for v in inputs]


# ---- scheduled IR ---------------------------------------------------------
def scheduled_ir(concrete_ir, segmentation, tensor_transforms):
    """The concrete fusion and how it was split: every segment with its
    scheduler and ops (and the forwarded ops it replicates)."""
    del tensor_transforms  # no loop transforms to show: see docs/api.md
    parts = [concrete_ir.rstrip("\n"),
             "Segments (%d):" % len(segmentation["groups"])]
    for group in segmentation["groups"]:
        parts.append("  g%d %s inputs=%s outputs=%s" % (
            group["id"], group["scheduler"], group["inputs"],
            group["outputs"]))
        for text in group["prologue_exprs"]:
            parts.append("    (forwarded) " + _one_line(text))
        for text in group["exprs"]:
            parts.append("    " + _one_line(text))
    return "\n".join(parts) + "\n"


def _one_line(text):
    return " ".join(line.strip() for line in text.splitlines())


# ---- profile --------------------------------------------------------------
class KernelProfile:
    """One segment of a profiled execute."""

    def __init__(self, segment_id, scheduler, name, time_ms=None):
        self.segment_id = segment_id
        self.scheduler = scheduler
        self.name = name
        # The segment's time: CUDA events around its work on the stream on
        # a GPU (kernel or ATen calls), host time on the CPU; None for
        # definitions split by segment().
        self.time_ms = time_ms

    def __repr__(self):
        return "KernelProfile(segment_id=%d, scheduler=%r)" % (
            self.segment_id, self.scheduler)


class FusionProfile:
    """nvFuser's FusionProfile fields that this runtime measures: the
    fusion id, segment count, host and device wall time of the execute,
    bytes in and out, and one KernelProfile per segment."""

    def __init__(self, fusion_id, segmentation, host_ms, device_ms, inputs,
                 outputs, segment_ms=None):
        groups = segmentation["groups"] if segmentation else []
        times = segment_ms if segment_ms and \
            len(segment_ms) == len(groups) else [None] * len(groups)
        self.fusion_id = fusion_id
        self.segments = len(groups)
        self.kernel_profiles = [
            KernelProfile(i, g["scheduler"], "%s_g%d" % (g["scheduler"],
                                                           g["id"]), t)
            for i, (g, t) in enumerate(zip(groups, times))]
        self.host_time_ms = host_ms
        self.cuda_evt_time_ms = device_ms
        self.kernel_time_ms = device_ms
        self.compile_time_ms = None
        self.input_bytes = _bytes(inputs)
        self.output_bytes = _bytes(outputs)
        seconds = (device_ms if device_ms is not None else host_ms) / 1e3
        moved = self.input_bytes + self.output_bytes
        self.effective_bandwidth_gbs = moved / seconds / 1e9 \
            if seconds > 0 else None

    def __repr__(self):
        return ("FusionProfile(fusion_id=%s, segments=%d, host_time_ms=%.3f)"
                % (self.fusion_id, self.segments, self.host_time_ms))


def _bytes(values):
    return sum(v.numel() * v.element_size() for v in values
               if isinstance(v, torch.Tensor))


def timed(run, inputs):
    """(outputs, host ms, device ms or None) of run(); CUDA work is timed
    with events on the current stream."""
    cuda = any(isinstance(v, torch.Tensor) and v.is_cuda for v in inputs)
    if cuda:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
    t0 = time.perf_counter()
    outputs = run()
    device_ms = None
    if cuda:
        end.record()
        end.synchronize()
        device_ms = start.elapsed_time(end)
    return outputs, (time.perf_counter() - t0) * 1e3, device_ms


# ---- captured debug output ------------------------------------------------
def captured(run):
    """(run()'s result, what it printed to stdout and stderr): the
    compiler's dumps write to the process' file descriptors, so those are
    redirected, not sys.stdout."""
    import sys
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as sink:
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            try:
                result = run()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        sink.seek(0)
        text = sink.read().decode("utf-8", "replace")
    return result, text
