"""Splits an FX graph into regions our compiler runs and the rest (eager).

``compile_graph(gm, example_inputs)`` records every node's value on the
example inputs, marks the nodes the translator supports, groups them into
maximal regions that keep the graph a DAG (torch's
CapabilityBasedPartitioner), and replaces each region by a ``FusionRegion``
module executing one FusionDefinition. ``NVFUSER_DUMP=fx_partition`` prints
the regions and every unsupported node with its reason.
"""

import operator
import warnings

import torch
from torch.fx.passes.infra.partitioner import (CapabilityBasedPartitioner,
                                               Partition)
from torch.fx.passes.operator_support import OperatorSupportBase

from .. import _C
from ..fusion_definition import FusionDefinition, torch_dtype_to_nvfuser_dtype
from ..values import Tensor
from .translator import (SPLIT_OPS, SUPPORTED_DTYPES, Unsupported, op_name,
                         translate_node)


def _dump_enabled():
    return _C.dump_enabled("fx_partition")  # the compiler's own parser


class _Recorder(torch.fx.Interpreter):
    """Runs the graph once and keeps every node's value."""

    def __init__(self, gm):
        super().__init__(gm)
        self.values = {}

    def run_node(self, n):
        v = super().run_node(n)
        self.values[n] = v
        return v


def record_values(gm, example_inputs):
    """Every node's value: from the graph's metadata where every node has
    one (aot_autograd and dynamo graphs, possibly fake tensors), else by
    running the graph on the example inputs (symbolic_trace graphs)."""
    nodes = list(gm.graph.nodes)
    calls = [n for n in nodes if n.op in ("call_function", "call_method")]
    if calls and all("val" in n.meta for n in calls):
        values = {}
        for n in nodes:
            if "val" in n.meta:
                values[n] = n.meta["val"]
            elif n.op == "get_attr":  # a constant without metadata
                obj = gm
                for part in n.target.split("."):
                    obj = getattr(obj, part)
                values[n] = obj
            else:
                values[n] = None
        return values
    rec = _Recorder(gm)
    with torch.no_grad():
        rec.run(*example_inputs)
    return rec.values


def _plain_tensor(v):
    return (isinstance(v, torch.Tensor) and v.dtype in SUPPORTED_DTYPES and
            v.layout == torch.strided and
            all(isinstance(s, int) for s in v.shape))


class _TranslationContext:
    def __init__(self, fd, values):
        self.fd = fd
        self.values = values

    def value_of(self, node):
        return self.values[node]

    def _to_shape(self, x, shape):
        if not isinstance(x, Tensor):
            return x
        r = x.ndim
        if list(x.shape()) == list(shape):
            return x
        return self.fd.ops.broadcast_in_dim(
            x, list(shape), list(range(len(shape) - r, len(shape))))

    def broadcast_binary(self, fn, a, b, node):
        shape = list(self.value_of(node).shape)
        return fn(self._to_shape(a, shape), self._to_shape(b, shape))

    def broadcast_ternary(self, fn, a, b, c, node):
        shape = list(self.value_of(node).shape)
        return fn(*[self._to_shape(x, shape) for x in (a, b, c)])


# Shape, dtype and integer arithmetic on them. Inside a region such a node
# is the constant it was recorded as: the region runs only for inputs of
# the recorded shapes, dtypes and scalar values, which fix it.
METADATA_OPS = ("size", "dim", "getattr", "getitem", "floordiv", "mul",
                "add", "sub", "neg", "mod")
_METADATA_ATTRS = ("shape", "dtype", "ndim", "device", "is_cuda")


def _metadata_value(v):
    if isinstance(v, (tuple, list)):
        return all(_metadata_value(x) for x in v)
    return type(v) in (int, bool, float, torch.Size, torch.dtype,
                       torch.device)


def is_metadata(node, values):
    """A node computing shape/dtype information from its inputs' metadata
    and plain numbers (symbolic_trace graphs: ``x.size(0)``,
    ``x.shape[-1] // 2``, ``v.dtype``)."""
    if node.op not in ("call_function", "call_method"):
        return False
    name = op_name(node)
    if name not in METADATA_OPS or node not in values or \
            not _metadata_value(values[node]):
        return False
    if name == "getattr" and node.args[1] not in _METADATA_ATTRS:
        return False
    reads_tensor = name in ("size", "dim", "getattr")
    for a in node.all_input_nodes:
        v = values.get(a)
        if isinstance(v, torch.Tensor):
            if not (reads_tensor and a is node.args[0]):
                return False
        elif not _metadata_value(v):
            return False
    return True


def _support_reason(node, values, reasons):
    """None when the node can be translated, else why not. `reasons` holds
    those of the node's users already (nodes are decided last to first)."""
    if node.op not in ("call_function", "call_method"):
        return "not a call"
    if is_metadata(node, values):
        # Only for region ops: shape arithmetic read by eager nodes stays
        # with them.
        for u in node.users:
            if reasons[u] is not None:
                return "read by %s, which runs in eager" % u.name
        return None
    name = op_name(node)
    from .translator import TABLE
    if TABLE.get(name) is None:
        return "no translation for %s" % name
    out = values.get(node)
    if isinstance(out, (tuple, list)) and name in SPLIT_OPS:
        # A tuple of pieces: fine when only getitems read it.
        if not out or not all(_plain_tensor(p) for p in out):
            return "its pieces are not plain tensors of a supported dtype"
        if not all(op_name(u) == "getitem" for u in node.users):
            return "its tuple is read by more than getitem"
        out = out[0]
    elif not _plain_tensor(out):
        return "its value is not a plain tensor of a supported dtype"
    for a in node.all_input_nodes:
        v = values.get(a)
        if isinstance(v, torch.Tensor) and not _plain_tensor(v):
            return "input %s is not a plain tensor of a supported dtype" % a
        if isinstance(v, torch.Tensor) and v.device != out.device:
            return "inputs on several devices"
    # Dry-run the handler on a scratch fusion: every constraint lives in
    # the handler, so support and translation never disagree.
    try:
        with FusionDefinition() as fd:
            ctx = _TranslationContext(fd, values)

            def define(v):
                return fd.define_tensor(
                    shape=list(v.shape),
                    contiguity=[None if s == 1 else False for s in v.shape],
                    dtype=torch_dtype_to_nvfuser_dtype(v.dtype))

            def arg(a):
                if not isinstance(a, torch.fx.Node):
                    return a
                v = values[a]
                if isinstance(v, torch.Tensor):
                    return define(v)
                if isinstance(v, (tuple, list)) and v and all(
                        isinstance(p, torch.Tensor) for p in v):
                    return tuple(define(p) for p in v)  # split pieces
                return v
            args = torch.fx.node.map_aggregate(node.args, arg)
            kwargs = torch.fx.node.map_aggregate(node.kwargs, arg)
            r = translate_node(ctx, node, list(args), dict(kwargs))
            for piece in (r if isinstance(r, tuple) else (r,)):
                if not isinstance(piece, Tensor):
                    return "translation gave no tensor"
                fd.add_output(piece)
    except Unsupported as e:
        return str(e)
    except (TypeError, ValueError, RuntimeError, NotImplementedError,
            KeyError, IndexError) as e:
        return "rejected: %s" % str(e).splitlines()[0][:100]
    return None


def _getitem_users_only(node):
    return bool(node.users) and all(
        u.op == "call_function" and u.target is operator.getitem
        for u in node.users)


class _Support(OperatorSupportBase):
    """Every node's reason (None: supported), decided up front. torch's
    partitioner moves the getitems of a node read only by getitems into
    that node's partition (newer versions loop until nothing moves, and
    never settle when the node is eager and a getitem is not): such a node
    and its getitems are supported together or not at all."""

    def __init__(self, values, graph):
        self.values = values
        reasons = {}
        for n in reversed(graph.nodes):
            reasons[n] = _support_reason(n, values, reasons)
        self.reasons = {n: reasons[n] for n in graph.nodes}  # graph order
        changed = True
        while changed:
            changed = False
            for n in graph.nodes:
                if self.reasons[n] is None and is_metadata(n, values):
                    eager = [u for u in n.users if self.reasons[u] is not None]
                    if eager:  # its reader was left to eager below
                        self.reasons[n] = "read by %s, which runs in eager" % (
                            eager[0].name)
                        changed = True
                if not _getitem_users_only(n):
                    continue
                group = [n] + list(n.users)
                eager = [x for x in group if self.reasons[x] is not None]
                if not eager or len(eager) == len(group):
                    continue
                why = "runs in eager with %s (getitems stay with the node " \
                      "they read)" % eager[0].name
                for x in group:
                    if self.reasons[x] is None:
                        self.reasons[x] = why
                changed = True

    def is_node_supported(self, submodules, node):
        return self.reasons[node] is None


class FusionRegion(torch.nn.Module):
    """One region of the graph as a FusionDefinition. Calls whose tensor
    inputs differ in shape, dtype or device from the recorded ones run the
    region's original graph instead (recorded sizes are baked in)."""

    def __init__(self, sub_gm, values_by_name):
        super().__init__()
        self.eager = sub_gm
        self.fd, self.signature, self.outputs = self._translate(
            sub_gm, values_by_name)
        self.fallbacks = 0

    @staticmethod
    def _translate(gm, values_by_name):
        env = {}
        signature = []
        # Per region output: ("tensor", index among the fusion's outputs)
        # or ("value", the recorded shape/dtype value).
        outputs = []
        nodes = list(gm.graph.nodes)
        with FusionDefinition() as fd:
            ctx = _TranslationContext(fd, {})
            for n in nodes:
                v = values_by_name.get(n.name)
                ctx.values[n] = v
                if n.op == "placeholder":
                    if isinstance(v, torch.Tensor):
                        env[n] = fd.define_tensor(
                            shape=list(v.shape),
                            contiguity=[None if s == 1 else False
                                        for s in v.shape],
                            dtype=torch_dtype_to_nvfuser_dtype(v.dtype))
                        signature.append((tuple(v.shape), v.dtype, v.device))
                    else:
                        env[n] = v
                        signature.append(("value", v))
                elif is_metadata(n, ctx.values):
                    env[n] = v
                elif n.op in ("call_function", "call_method"):
                    args = torch.fx.node.map_arg(n.args, lambda a: env[a])
                    kwargs = torch.fx.node.map_arg(n.kwargs, lambda a: env[a])
                    r = translate_node(ctx, n, list(args), dict(kwargs))
                    if isinstance(r, Tensor):
                        want = torch_dtype_to_nvfuser_dtype(v.dtype)
                        if r.dtype != want:  # PyTorch's result type
                            r = fd.ops.cast(r, want)
                    env[n] = r  # a tuple for split: read by getitems
                elif n.op == "output":
                    outs = n.args[0]
                    outs = outs if isinstance(outs, (tuple, list)) else [outs]
                    tensors = 0
                    for o in outs:
                        if isinstance(env[o], Tensor):
                            fd.add_output(env[o])
                            outputs.append(("tensor", tensors))
                            tensors += 1
                        else:
                            outputs.append(("value", env[o]))
        return fd, signature, outputs

    def _matches(self, args):
        if len(args) != len(self.signature):
            return False
        for a, s in zip(args, self.signature):
            if s[0] == "value":
                if a != s[1]:
                    return False
            elif not (isinstance(a, torch.Tensor) and tuple(a.shape) == s[0]
                      and a.dtype == s[1] and a.device == s[2]):
                return False
        return True

    def forward(self, *args):
        if not self._matches(args):
            self.fallbacks += 1
            return self.eager(*args)
        tensors = [a for a, s in zip(args, self.signature) if s[0] != "value"]
        try:
            results = self.fd.execute(tensors) if any(
                kind == "tensor" for kind, _ in self.outputs) else []
            outs = [results[x] if kind == "tensor" else x
                    for kind, x in self.outputs]
        except Exception as e:  # noqa: BLE001 (a model must keep running)
            # Our failure, not the model's: say so once, run the region's
            # original graph, keep counting.
            if not self.fallbacks:
                warnings.warn("nvfuser: a compiled region failed and runs in "
                              "eager instead: %s" % str(e).splitlines()[0])
            self.fallbacks += 1
            return self.eager(*args)
        if not isinstance(list(self.eager.graph.nodes)[-1].args[0],
                          (tuple, list)):
            return outs[0]
        return tuple(outs)


def _downstream(nodes, partition_of):
    """Every node reachable from `nodes` once each partition is one node:
    reaching any node of another partition reaches all of its nodes (its
    fused call needs all of its inputs first)."""
    seen = set()
    stack = [u for n in nodes for u in n.users]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        group = partition_of.get(n)
        members = group.nodes if group is not None else {n}
        for x in members:
            if x not in seen:
                seen.add(x)
                stack.extend(x.users)
    return seen - set(nodes)


def leaves_and_returns(nodes):
    """Whether a path from the nodes leaves them and comes back (the region
    would wait for its own output)."""
    nodes = set(nodes)
    seen = set()
    stack = [u for n in nodes for u in n.users if u not in nodes]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for u in n.users:
            if u in nodes:
                return True
            stack.append(u)
    return False


def merge_independent(partitions):
    """Joins partitions with no path between them in either direction (the
    q and k gradients of a rotary embedding): one FusionDefinition, so one
    horizontally fused kernel, instead of several."""
    # Plain node sets (Partition.nodes is a set in torch 1.13, a dict in 2.x).
    groups = [set(p.nodes) for p in
              sorted(partitions, key=lambda p: min(n.name for n in p.nodes))]

    class _Group:
        def __init__(self, nodes):
            self.nodes = nodes

    boxes = [_Group(g) for g in groups]
    partition_of = {n: b for b in boxes for n in b.nodes}
    changed = True
    while changed:
        changed = False
        for a in boxes:
            for b in boxes:
                if a is b or not a.nodes or not b.nodes:
                    continue
                if (_downstream(a.nodes, partition_of) & b.nodes or
                        _downstream(b.nodes, partition_of) & a.nodes):
                    continue
                for n in b.nodes:
                    partition_of[n] = a
                a.nodes |= b.nodes
                b.nodes = set()
                changed = True
    return [Partition(id=i, nodes=list(b.nodes))
            for i, b in enumerate(x for x in boxes if x.nodes)]


# One entry per compiled graph (regions, unsupported nodes with reasons),
# for tools that look at what torch.compile handed over.
COMPILED_GRAPHS = []


def compile_graph(gm, example_inputs):
    """Returns gm with every supported region replaced by a FusionRegion."""
    values = record_values(gm, example_inputs)
    support = _Support(values, gm.graph)
    partitioner = CapabilityBasedPartitioner(
        gm, support, allows_single_node_partition=True)
    # A proposal that an eager node both reads and feeds (torch 1.13's
    # partitioner made some) stays in eager rather than failing the fuse.
    proposed = [p for p in partitioner.propose_partitions()
                if not leaves_and_returns(p.nodes)]
    # A region of shape arithmetic alone would run nothing: left to eager.
    partitions = merge_independent([
        p for p in proposed
        if not all(is_metadata(n, values) for n in p.nodes)])
    by_name = {n.name: v for n, v in values.items()}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            by_name[n.name] = values.get(n)
    fused = partitioner.fuse_partitions(partitions)
    subs = {n.target: getattr(fused, n.target) for n in fused.graph.nodes
            if n.op == "call_module" and n.target.startswith("fused_")}

    def original_value(outer):
        """The recorded value behind an argument of a fused call: an
        original node, or an output of another region (a new getitem on
        its call, or the call itself)."""
        if not isinstance(outer, torch.fx.Node):
            return outer
        if outer.name in by_name:
            return by_name[outer.name]
        call, idx = outer, None
        if outer.op == "call_function" and outer.args and isinstance(
                outer.args[0], torch.fx.Node) and \
                outer.args[0].op == "call_module":
            call, idx = outer.args[0], outer.args[1]
        if call.op != "call_module" or call.target not in subs:
            return None
        outs = list(subs[call.target].graph.nodes)[-1].args[0]
        if isinstance(outs, (tuple, list)):
            return by_name.get(outs[idx if idx is not None else 0].name)
        return by_name.get(outs.name)

    regions = []
    for node in list(fused.graph.nodes):
        if node.op != "call_module" or node.target not in subs:
            continue
        sub = subs[node.target]
        # Region nodes keep the original names; its placeholders are named
        # after the outer arguments, which may be new getitem nodes.
        sub_values = dict(by_name)
        for ph, outer in zip([p for p in sub.graph.nodes
                              if p.op == "placeholder"], node.args):
            sub_values[ph.name] = original_value(outer)
        region = FusionRegion(sub, sub_values)
        setattr(fused, node.target, region)
        regions.append((node.target, sub))
    fused.recompile()
    if _dump_enabled():
        print(describe(regions, support))
    fused.nvfuser_unsupported = {
        n.name: r for n, r in support.reasons.items()
        if r is not None and n.op in ("call_function", "call_method")}
    fused.nvfuser_regions = [name for name, _ in regions]
    COMPILED_GRAPHS.append(dict(regions=len(regions),
                                unsupported=dict(fused.nvfuser_unsupported)))
    return fused


def describe(regions, support):
    lines = ["[fx_partition] %d region(s)" % len(regions)]
    for name, sub in regions:
        ops = [op_name(n) for n in sub.graph.nodes
               if n.op in ("call_function", "call_method")]
        lines.append("[fx_partition] %s: %s" % (name, " ".join(ops)))
    for node, reason in support.reasons.items():
        if reason is not None and node.op in ("call_function", "call_method"):
            lines.append("[fx_partition] eager: %s (%s): %s" % (
                node.name, op_name(node), reason))
    return "\n".join(lines)
