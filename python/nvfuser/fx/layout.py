"""The layout contract of a region's outputs.

Eager code after a region relies on the strides PyTorch would have given
each value (``x.view(...)`` works only for some; a custom kernel may
assume them), and the FX graph records them (``meta["val"]``, or the value
the recorder computed). A fusion's outputs are whatever the executor
makes: generated kernels write dense row-major tensors, ops run through
ATen give ATen's layouts. So every region output is planned here:

* promised strides that are a permutation of a dense layout: the fusion
  outputs ``permute(t, order)`` (outermost dim first), which a kernel
  writes row-major, and the region returns ``out.permute(inverse)``, a
  free view with the promised strides (an output the region's own ops
  read too is laid out so where it is computed and they read the inverse
  permute: partition._early_layouts);
* expanded dims (stride 0): the fusion outputs one slice along them (less
  to write) and the region expands it back;
* anything else (gaps between elements, as a slice of a larger tensor
  has): the dense result is copied into ``torch.empty_strided``.

At run time ``OutputLayout.finish`` checks the result and repairs what
the plan could not promise (an executor's other layout, strides of size-1
dims) with a copy, so the contract holds whatever the executor did.
``NVFUSER_FX_DEBUG=layout`` prints every repair (a variable of its own:
the core checks NVFUSER_DUMP's options).
"""

import os

import torch

from .schema import Unsupported


def _dump_enabled():
    return "layout" in os.environ.get("NVFUSER_FX_DEBUG", "").split(",")


def same_addressing(sizes, a, b):
    """Whether strides a and b address the same elements: they may differ
    only where a dim has one element (or the tensor none)."""
    if any(s == 0 for s in sizes):
        return True
    return all(x == y or s == 1 for s, x, y in zip(sizes, a, b))


def _overlaps(sizes, strides):
    """Whether two elements share memory (stride-0 dims aside): dims by
    increasing stride must each step past the extent of the ones inside."""
    dims = sorted((d for d in range(len(sizes))
                   if sizes[d] > 1 and strides[d] != 0),
                  key=lambda d: strides[d])
    extent = 1
    for d in dims:
        if strides[d] < extent:
            return True
        extent = strides[d] * sizes[d]
    return False


class OutputLayout:
    """How one region output reaches its promised sizes and strides."""

    def __init__(self, want, name="?"):
        self.name = name  # the graph node's, for NVFUSER_FX_DEBUG=layout
        self.sizes = tuple(int(s) for s in want.shape)
        self.strides = tuple(int(s) for s in want.stride())
        self.device = want.device
        rank = len(self.sizes)
        if any(s < 0 for s in self.strides):
            raise Unsupported("an output with negative strides")
        if _overlaps(self.sizes, self.strides):
            raise Unsupported("an output whose elements overlap in memory")
        # Dims a stride-0 expand made: computed once, expanded back.
        self.expanded = [d for d in range(rank)
                         if self.strides[d] == 0 and self.sizes[d] > 1]
        self.compact = tuple(1 if d in self.expanded else s
                             for d, s in enumerate(self.sizes))
        self.order = self._dense_order()
        self.inverse = None
        if self.order is not None:
            self.inverse = [self.order.index(d) for d in range(rank)]
        self.copies = 0

    def _dense_order(self):
        """The dims outermost first when the compact tensor is dense in
        some order and that order is not row-major; else None. Size-1 dims
        go first (their stride addresses nothing)."""
        rank = len(self.sizes)
        big = [d for d in range(rank) if self.compact[d] > 1]
        by_stride = sorted(big, key=lambda d: (-self.strides[d], d))
        step = 1
        for d in reversed(by_stride):
            if self.strides[d] != step:
                return None  # gaps: copied at run time
            step *= self.compact[d]
        if by_stride == sorted(big):
            return None  # row-major already
        return [d for d in range(rank) if self.compact[d] <= 1] + by_stride

    # ---- the fusion side -------------------------------------------------
    def fusion_output(self, fd, t):
        """The tensor to add as the fusion's output in place of t."""
        if self.expanded:
            ends = list(self.compact)
            t = fd.ops.slice(t, [0] * len(ends), ends)
        if self.order is not None:
            t = fd.ops.permute(t, self.order)
        return t

    def in_region_value(self, fd, laid_out):
        """What the region's own ops read for an output fusion_output laid
        out early (partition._early_layouts): the promised layout seen in
        the node's dims again, a permute the segmenter keeps a view."""
        if self.order is None or self.expanded:
            raise ValueError("only a permuted dense layout is laid out "
                             "early")
        return fd.ops.permute(laid_out, self.inverse)

    # ---- the run-time side -----------------------------------------------
    def finish(self, out):
        """The fusion's output as a tensor with the promised sizes,
        strides and device."""
        if self.inverse is not None:
            out = out.permute(self.inverse)
        if out.device != self.device and self.device.type != "meta":
            # A CPU scalar computed on the GPU. ("meta": a symbolic value
            # this torch could not fake on its device promises none.)
            out = out.to(self.device)
        strides = tuple(out.stride())
        if strides != self.strides or tuple(out.shape) != self.compact:
            out = self._conform(out, strides)
        if self.expanded:
            out = out.expand(self.sizes)
        return out

    def _compact_strides(self):
        return tuple(s if d not in self.expanded else 0
                     for d, s in enumerate(self.strides))

    def _conform(self, out, strides):
        if tuple(out.shape) != self.compact:
            raise RuntimeError("a region output has sizes %s, the graph "
                               "promises %s" % (list(out.shape),
                                                list(self.compact)))
        want = self._compact_strides()
        if same_addressing(self.compact, strides, want):
            return out.as_strided(self.compact, want)
        self.copies += 1
        if _dump_enabled():
            print("[fx_layout] copy of a %s output %s with strides %s "
                  "into strides %s" % (list(self.sizes), self.name,
                                       list(strides), list(self.strides)))
        buf = torch.empty_strided(self.compact, want, dtype=out.dtype,
                                  device=out.device)
        return buf.copy_(out)

    def __repr__(self):
        return "OutputLayout(sizes=%s, strides=%s, order=%s, expanded=%s)" % (
            list(self.sizes), list(self.strides), self.order, self.expanded)

