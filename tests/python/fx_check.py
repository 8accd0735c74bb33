"""Checks shared by the FX tests: what a compiled graph left to eager, and
the layout contract (every region output has the sizes and strides eager
gives the same node)."""

import re

import torch

from nvfuser.fx.partition import FusionRegion, record_values


def call_nodes(gm):
    return [n for n in gm.graph.nodes
            if n.op in ("call_function", "call_method")]


def coverage(gm, compiled):
    """The fraction of gm's calls that run inside regions."""
    calls = call_nodes(gm)
    return 1.0 - len(compiled.nvfuser_unsupported) / max(len(calls), 1)


def ops_in_regions(compiled):
    """The ATen op names (overload packets) inside the regions."""
    names = set()
    for name in compiled.nvfuser_regions:
        for n in call_nodes(getattr(compiled, name).eager):
            packet = getattr(n.target, "overloadpacket", None)
            names.add(packet.__name__ if packet is not None else str(
                n.target))
    return names


class _RegionOutputs(torch.fx.Interpreter):
    """Runs a compiled graph and keeps what each region returned, by the
    name of the original node each output stands for."""

    def __init__(self, gm):
        super().__init__(gm)
        self.outputs = {}

    def call_module(self, target, args, kwargs):
        out = super().call_module(target, args, kwargs)
        region = self.fetch_attr(target)
        if isinstance(region, FusionRegion):
            ret = list(region.eager.graph.nodes)[-1].args[0]
            names = [n.name for n in (ret if isinstance(ret, (tuple, list))
                                      else [ret])]
            values = out if isinstance(out, tuple) else (out,)
            self.outputs.update(zip(names, values))
        return out


def region_layout_mismatches(gm, compiled, inputs):
    """[(node, eager sizes/strides, region's)] for every region output
    whose sizes or strides differ from eager's value of the same node."""
    eager = {n.name: v for n, v in record_values(gm, inputs).items()}
    run = _RegionOutputs(compiled)
    with torch.no_grad():
        run.run(*inputs)
    bad = []
    for name, got in run.outputs.items():
        want = eager[name]
        if not isinstance(want, torch.Tensor):
            continue
        a = (tuple(want.shape), want.stride(), want.device)
        b = (tuple(got.shape), got.stride(), got.device)
        if a != b:
            bad.append((name, a, b))
    return bad, run.outputs


def row_major_kernels(monkeypatch):
    """Makes every fusion output dense row-major, as generated kernels
    write them (the CPU executor returns ATen's layouts instead)."""
    from nvfuser import FusionDefinition
    # Regions call _execute_plain; users call execute.
    for name in ("execute", "_execute_plain"):
        run = getattr(FusionDefinition, name)

        def dense(self, inputs, _run=run, **kwargs):
            return [o.contiguous() for o in _run(self, inputs, **kwargs)]
        monkeypatch.setattr(FusionDefinition, name, dense)


_KERNELS = ("pointwise", "reduction", "inner_persistent")


_VIEW_OPS = ("permute", "reshape", "broadcast", "expand", "squeeze",
             "slice")


def _view_sources(text):
    """{tensor: its input} for every view op in a segmented fusion's dump."""
    return {m.group(1): m.group(3) for m in re.finditer(
        r"^(T\d+)_[^\n]*\n\s+= (\w+)\((T\d+)", text, re.M)
        if m.group(2) in _VIEW_OPS}


def transposed_outputs_left_as_views(region):
    """The region's fusion outputs promised in a permuted dense layout
    (OutputLayout.order) that its last execute returned as a view (made by
    a no_op segment, or by the view ops of a matmul's expr_eval segment) of
    a value a kernel computed: the kernel wrote that value row-major, so
    the layout check copies the view on every call. [] after the region
    laid them out where they are computed (partition._early_layouts)."""
    fd = region.fd
    seg = fd.last_segmentation()
    concrete = fd.last_concrete_ir() or ""
    if seg is None:
        return []
    names = re.findall(r"^\s+(T\d+)_", concrete.split("Outputs:")[1].split(
        "\n\n")[0], re.M) if "Outputs:" in concrete else []
    made_by = {}
    for g in seg["groups"]:
        for o in g["outputs"]:
            made_by[o] = g
    if len(names) != len(region.layouts):
        raise AssertionError("the concrete IR lists %d outputs, the region "
                             "has %d tensor outputs (has its format "
                             "changed?)" % (len(names), len(region.layouts)))
    source = _view_sources(seg["text"])
    found = []
    for name, plan in zip(names, region.layouts):
        g = made_by.get(name)
        if plan.order is None or g is None or name not in source or \
                g["scheduler"] not in ("no_op", "expr_eval"):
            continue  # (a kernel writes the layout it was asked for)
        root = name
        while root in source and root not in g["inputs"]:
            root = source[root]
        if made_by.get(root, {}).get("scheduler", "").startswith(_KERNELS):
            found.append(plan.name)
    return found


def views_only_atens_read(compiled, ops=("permute",)):
    """[(region, ops)] of the no_op segments of the regions' last executes,
    made of `ops` only, whose every output is read only by expr_eval
    segments (a weight's transpose before its matmul): each costs a
    segment's host time per execute where the matmul's own segment makes
    the view for free."""
    found = []
    for name in compiled.nvfuser_regions:
        seg = getattr(compiled, name).fd.last_segmentation()
        groups = seg["groups"] if seg else []
        readers = {}
        for g in groups:
            for i in g["inputs"]:
                readers.setdefault(i, []).append(g["scheduler"])
        for g in groups:
            if g["scheduler"] != "no_op" or not set(g["ops"]) <= set(ops):
                continue
            kinds = [k for o in g["outputs"] for k in readers.get(o, [None])]
            if kinds and all(k == "expr_eval" for k in kinds):
                found.append((name, g["ops"]))
    return found
