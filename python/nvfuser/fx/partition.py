"""Splits an FX graph into regions our compiler runs and the rest (eager).

``compile_graph(gm, example_inputs)`` records every node's value on the
example inputs, marks the nodes the translator supports, groups them into
maximal regions that keep the graph a DAG (torch's
CapabilityBasedPartitioner), and replaces each region by a ``FusionRegion``
module executing one FusionDefinition. ``NVFUSER_DUMP=fx_partition`` prints
the regions and every unsupported node with its reason.
"""

import copy
import operator
import warnings

import torch
from torch.fx.passes.infra.partitioner import (CapabilityBasedPartitioner,
                                               Partition)
from torch.fx.passes.operator_support import OperatorSupportBase

from .. import _C
from ..fusion_definition import FusionDefinition, torch_dtype_to_nvfuser_dtype
from ..values import Tensor
from .mutation import MutationAnalysis, order_nodes, split_by_epoch
from . import library_calls
from .layout import OutputLayout
# (concrete: read as partition.concrete by tests.)
from .recording import _Recorder, concrete, record_values  # noqa: F401
from .translator import (SUPPORTED_DTYPES, TABLE, TUPLE_OPS, VIEW_OPS,
                         Unsupported, is_cpu_scalar, op_name,
                         translate_checked)
from .view_outputs import replay, view_chain


def _dump_enabled():
    return _C.dump_enabled("fx_partition")  # the compiler's own parser


def _plain_tensor(v):
    return (isinstance(v, torch.Tensor) and v.dtype in SUPPORTED_DTYPES and
            v.layout == torch.strided and
            all(isinstance(s, int) for s in v.shape))


def define_input(fd, v):
    """A fusion input for a recorded tensor: any strides, sizes as
    recorded; a 0-dim CPU tensor is passed to kernels by value, so it
    joins a fusion on any device."""
    return fd.define_tensor(
        shape=list(v.shape),
        contiguity=[None if s == 1 else False for s in v.shape],
        dtype=torch_dtype_to_nvfuser_dtype(v.dtype), is_cpu=is_cpu_scalar(v))


def _devices(values):
    """The devices of the graph's tensors, CPU scalars aside."""
    return {v.device for v in values.values()
            if isinstance(v, torch.Tensor) and not is_cpu_scalar(v)}


class _TranslationContext:
    def __init__(self, fd, values):
        self.fd = fd
        self.values = values

    def value_of(self, node):
        return self.values[node]

    def to_shape(self, x, shape):
        if not isinstance(x, Tensor):
            return x
        r = x.ndim
        if list(x.shape()) == list(shape):
            return x
        return self.fd.ops.broadcast_in_dim(
            x, list(shape), list(range(len(shape) - r, len(shape))))

    def to_operand_shape(self, x, shape):
        """x broadcast to shape, but a 0-dim tensor as it is: the core
        broadcasts it and, as torch, promotes it only where its category
        is higher (Float[n] * Double[] computes in Float)."""
        if isinstance(x, Tensor) and x.ndim == 0:
            return x
        return self.to_shape(x, shape)

    def broadcast_binary(self, fn, a, b, node):
        shape = list(self.value_of(node).shape)
        return fn(self.to_operand_shape(a, shape),
                  self.to_operand_shape(b, shape))

    def broadcast_ternary(self, fn, a, b, c, node):
        shape = list(self.value_of(node).shape)
        return fn(*[self.to_operand_shape(x, shape) for x in (a, b, c)])


# Shape, dtype and integer arithmetic on them. Inside a region such a node
# is the constant it was recorded as: the region runs only for inputs of
# the recorded shapes, dtypes and scalar values, which fix it.
METADATA_OPS = ("size", "dim", "getattr", "getitem", "floordiv", "mul",
                "add", "sub", "neg", "mod", "sym_size", "sym_stride",
                "sym_numel", "sym_storage_offset")
_READS_TENSOR = ("size", "dim", "getattr", "sym_size", "sym_stride",
                 "sym_numel", "sym_storage_offset")
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
    reads_tensor = name in _READS_TENSOR
    for a in node.all_input_nodes:
        v = values.get(a)
        if isinstance(v, torch.Tensor):
            if not (reads_tensor and a is node.args[0]):
                return False
        elif not _metadata_value(v):
            return False
    return True


def _support_reason(node, values, reasons, analysis, devices=()):
    """None when the node can be translated, else why not. `reasons` holds
    those of the node's users already (nodes are decided last to first);
    `devices` are those of the graph's tensors (CPU scalars aside)."""
    if node.op not in ("call_function", "call_method"):
        return "not a call"
    if analysis.is_write(node):
        return "writes to a tensor in place; stays in eager, where the " \
               "reads around it are ordered"
    if is_metadata(node, values):
        # Only for region ops: shape arithmetic read by eager nodes stays
        # with them.
        for u in node.users:
            if reasons[u] is not None:
                return "read by %s, which runs in eager" % u.name
        return None
    name = op_name(node)
    out = values.get(node)
    if TABLE.get(name) is None:
        try:
            library_calls.check_callable(node, out, values)
        except Unsupported as e:
            return "no translation for %s (%s)" % (name, e)
    if name in VIEW_OPS and analysis.shares_written_memory(node):
        return "may share memory with a tensor written in place; a " \
               "region's copy would not see the write"
    return _value_reason(node, name, out, values, reasons, devices) or \
        _dry_run_reason(node, values)


def _value_reason(node, name, out, values, reasons, devices):
    """Why the node's result or inputs cannot live in a region, or None."""
    library = _library_tuple(node, out, values)
    if library:
        out = library[min(library)]
    elif isinstance(out, (tuple, list)) and name in TUPLE_OPS:
        # A tuple of pieces: fine when only getitems read it (a None is
        # a result not asked for: a masked gradient).
        pieces = [p for p in out if p is not None]
        if not pieces or not all(_plain_tensor(p) for p in pieces):
            return "its pieces are not plain tensors of a supported dtype"
        if not all(op_name(u) == "getitem" for u in node.users):
            return "its tuple is read by more than getitem"
        out = pieces[0]
    elif not _plain_tensor(out):
        return "its value is not a plain tensor of a supported dtype"
    for a in node.all_input_nodes:
        v = values.get(a)
        if isinstance(v, torch.Tensor) and not _plain_tensor(v):
            return "input %s is not a plain tensor of a supported dtype" % a
        if isinstance(v, torch.Tensor) and v.device != out.device and \
                not is_cpu_scalar(v):
            return "inputs on several devices"
    if is_cpu_scalar(out) and any(d.type != "cpu" for d in devices):
        # A region on the GPU would make it a GPU tensor; eager readers
        # expect it on the CPU (copying it back would wait for the GPU).
        for u in node.users:
            if reasons.get(u) is not None:
                return "a CPU scalar read by %s, which runs in eager" % (
                    u.name)
    return None


def _dry_run_reason(node, values):
    """Dry-runs the node's handler on a scratch fusion: every constraint
    lives in the handler, so support and translation never disagree."""
    try:
        with FusionDefinition() as fd:
            ctx = _TranslationContext(fd, values)

            def define(v):
                return define_input(fd, v)

            def arg(a):
                if not isinstance(a, torch.fx.Node):
                    return a
                v = values[a]
                if isinstance(v, torch.Tensor):
                    return define(v)
                kept = _library_tuple(a, v, values)
                if kept:
                    return library_calls.LibraryResults(
                        define(p) if i in kept else None
                        for i, p in enumerate(v))
                if isinstance(v, (tuple, list)) and any(
                        isinstance(p, torch.Tensor) for p in v) and all(
                        p is None or isinstance(p, torch.Tensor) for p in v):
                    # split pieces, results of a tuple op (None: masked)
                    return tuple(None if p is None else define(p) for p in v)
                return v
            args = torch.fx.node.map_aggregate(node.args, arg)
            kwargs = torch.fx.node.map_aggregate(node.kwargs, arg)
            r = translate_checked(ctx, node, list(args), dict(kwargs))
            for piece in (r if isinstance(r, tuple) else (r,)):
                if piece is not None:  # a return nothing reads
                    fd.add_output(piece)
    except Unsupported as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 (any failure leaves it to eager)
        return "rejected: %s: %s" % (type(e).__name__,
                                     _first_line(e)[:100])
    return None


def _library_tuple(node, out, values):
    """The results getitems read ({return index: value}) when out is the
    tuple of an ATen call (library_calls.py) that getitems alone read;
    else None."""
    if not isinstance(out, (tuple, list)) or op_name(node) in TUPLE_OPS:
        return None
    try:
        return library_calls.kept_results(node, out, values)[1] or None
    except Unsupported:
        return None


def _first_line(e):
    lines = str(e).splitlines()
    return lines[0] if lines else ""


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

    def __init__(self, values, graph, analysis):
        self.values = values
        reasons = {}
        devices = _devices(values)
        for n in reversed(graph.nodes):
            reasons[n] = _support_reason(n, values, reasons, analysis,
                                         devices)
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


def _value_key(v):
    """A non-tensor argument as a region's variants tell them apart: by
    type and repr, since 1 == 1.0 == True and 0.0 == -0.0 translate
    differently (result dtype, the sign of a quotient)."""
    return (type(v), repr(v))


def _same_value(a, b):
    return _value_key(a) == _value_key(b)


def _early_layouts(nodes, values_by_name):
    """{output node: OutputLayout} for the computed region outputs whose
    promised strides are a permutation of a dense layout. Such a value is
    written once, in the promised layout, when its node is translated, and
    the region's own ops read it through the inverse permute: a kernel
    that wrote it row-major for an op in the region (attention reads the
    q a RoPE kernel computes) and permuted for the output would write a
    transpose next to the value, which the segmenter returns as a view
    (viewOutputsStayViews), and the layout check then copies it."""
    out = nodes[-1].args[0] if nodes and nodes[-1].op == "output" else ()
    out = out if isinstance(out, (tuple, list)) else [out]
    early = {}
    for o in out:
        if not isinstance(o, torch.fx.Node) or o in early or \
                o.op not in ("call_function", "call_method") or \
                view_chain(o) is not None or \
                all(u.op == "output" for u in o.users):
            continue  # (nothing in the region reads it: laid out as before)
        v = values_by_name.get(o.name)
        if not isinstance(v, torch.Tensor):
            continue
        try:
            plan = OutputLayout(v, o.name)
        except Unsupported:
            continue  # the output node raises it again, as before
        if plan.order is not None and not plan.expanded:
            early[o] = plan
    return early


class FusionRegion(torch.nn.Module):
    """One region of the graph as a FusionDefinition, translated for the
    recorded sizes (they are baked in). A call whose tensor inputs differ
    in shape, dtype or device, or whose number arguments differ (dynamic
    shapes: sizes arrive as ints), runs the region's original graph once,
    which records the values for those inputs, and translates the region
    again for them: up to MAX_VARIANTS such variants, then eager. Every
    tensor it returns has the sizes, strides and device recorded for its
    node (layout.py)."""

    MAX_VARIANTS = 8

    def __init__(self, sub_gm, values_by_name):
        super().__init__()
        self.eager = sub_gm
        self.fd, self.signature, self.outputs = self._translate(
            sub_gm, values_by_name)
        self.fallbacks = 0
        # Signature key -> (fd, signature, outputs), or the reason the
        # region could not be translated for it (it runs in eager).
        self.variants = {}
        # Read once: walking the graph on every call cost a step ~0.1 ms.
        self.returns_tuple = isinstance(
            list(sub_gm.graph.nodes)[-1].args[0], (tuple, list))

    @property
    def layouts(self):
        """The OutputLayout of each tensor output, in fusion order."""
        return [x[1] for kind, x in self.outputs if kind == "tensor"]

    @property
    def layout_copies(self):
        """How many outputs needed a copy to reach their strides."""
        return sum(plan.copies for plan in self.layouts)

    @staticmethod
    def _translate(gm, values_by_name):
        env = {}
        signature = []
        # Per region output: ("tensor", (index among the fusion's outputs,
        # its OutputLayout)), ("view", (index of the region input, the view
        # nodes to replay on it)) or ("value", the recorded shape/dtype
        # value).
        outputs = []
        nodes = list(gm.graph.nodes)
        early = _early_layouts(nodes, values_by_name)
        # Output node -> the tensor the fusion outputs for it, where its
        # layout was laid out when the node was translated.
        laid_out = {}
        with FusionDefinition() as fd:
            ctx = _TranslationContext(fd, {})
            for n in nodes:
                v = values_by_name.get(n.name)
                ctx.values[n] = v
                if n.op == "placeholder":
                    if isinstance(v, torch.Tensor):
                        env[n] = define_input(fd, v)
                        signature.append((tuple(v.shape), v.dtype, v.device))
                    else:
                        env[n] = v
                        signature.append(("value", v))
                elif is_metadata(n, ctx.values):
                    env[n] = v
                elif n.op in ("call_function", "call_method"):
                    args = torch.fx.node.map_arg(n.args, lambda a: env[a])
                    kwargs = torch.fx.node.map_arg(n.kwargs, lambda a: env[a])
                    # Cast to PyTorch's result type, checked as in the
                    # support dry run.
                    env[n] = translate_checked(ctx, n, list(args),
                                               dict(kwargs))
                    # (a tuple for split: read by getitems)
                    if n in early and isinstance(env[n], Tensor):
                        # A copy, not a view op: the segmenter cannot
                        # return it as a view of the row-major value.
                        laid_out[n] = fd.ops.set(
                            early[n].fusion_output(fd, env[n]))
                        env[n] = early[n].in_region_value(fd, laid_out[n])
                elif n.op == "output":
                    outs = n.args[0]
                    outs = outs if isinstance(outs, (tuple, list)) else [outs]
                    tensors = 0
                    inputs = [p for p in nodes if p.op == "placeholder"]
                    for o in outs:
                        view = view_chain(o) if isinstance(o, torch.fx.Node) \
                            else None
                        if view is not None and isinstance(env[o], Tensor):
                            # No kernel: the view ops replayed on the input.
                            outputs.append(("view", (inputs.index(view[0]),
                                                     view[1])))
                        elif isinstance(env[o], Tensor):
                            if o in laid_out:
                                plan, t = early[o], laid_out[o]
                            else:
                                plan = OutputLayout(ctx.values[o], o.name)
                                t = plan.fusion_output(fd, env[o])
                            fd.add_output(t)
                            outputs.append(("tensor", (tensors, plan)))
                            tensors += 1
                        else:
                            outputs.append(("value", env[o]))
        return fd, signature, outputs

    @staticmethod
    def _matches(args, signature):
        if len(args) != len(signature):
            return False
        for a, s in zip(args, signature):
            if s[0] == "value":
                if not _same_value(a, s[1]):
                    return False
            elif not (isinstance(a, torch.Tensor) and tuple(a.shape) == s[0]
                      and a.dtype == s[1] and a.device == s[2]):
                return False
        return True

    @staticmethod
    def _key(args):
        return tuple((tuple(a.shape), a.dtype, a.device)
                     if isinstance(a, torch.Tensor)
                     else ("value", _value_key(a)) for a in args)

    def _specialize(self, args):
        """(The region's outputs for args, computed by its graph in eager,
        and the variant translated for args: a tuple, or why none)."""
        rec = _Recorder(self.eager, writes=False)
        with torch.no_grad():
            outs = rec.run(*args)
        try:
            variant = self._translate(
                self.eager, {n.name: v for n, v in rec.values.items()})
        except Exception as e:  # noqa: BLE001 (these inputs run in eager)
            variant = "%s: %s" % (type(e).__name__, _first_line(e)[:100])
        return outs, variant

    def forward(self, *args):
        variant = (self.fd, self.signature, self.outputs)
        if not self._matches(args, self.signature):
            key = self._key(args)
            variant = self.variants.get(key)
            if variant is None and len(self.variants) < self.MAX_VARIANTS:
                outs, self.variants[key] = self._specialize(args)
                return outs
            if not isinstance(variant, tuple):
                self.fallbacks += 1
                return self.eager(*args)
        fd, signature, outputs = variant
        tensors = [a for a, s in zip(args, signature) if s[0] != "value"]
        try:
            # The definition is ours (no runtime shapes, no aliased or
            # stride-ordered outputs): the lean entry point.
            results = fd._execute_plain(tensors) if any(
                kind == "tensor" for kind, _ in outputs) else []
            outs = [x[1].finish(results[x[0]]) if kind == "tensor" else
                    replay(args[x[0]], x[1]) if kind == "view" else x
                    for kind, x in outputs]
        except Exception as e:  # noqa: BLE001 (a model must keep running)
            # Our failure, not the model's: say so once, run the region's
            # original graph, keep counting.
            if not self.fallbacks:
                warnings.warn("nvfuser: a compiled region failed and runs in "
                              "eager instead: %s" % str(e).splitlines()[0])
            self.fallbacks += 1
            return self.eager(*args)
        return tuple(outs) if self.returns_tuple else outs[0]


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


def merge_independent(partitions, epoch=None):
    """Joins partitions with no path between them in either direction (the
    q and k gradients of a rotary embedding): one FusionDefinition, so one
    horizontally fused kernel, instead of several. With `epoch` (node ->
    epoch, see mutation.py) only partitions of one epoch are joined."""
    # Plain node sets (Partition.nodes is a set in torch 1.13, a dict in 2.x).
    groups = [set(p.nodes) for p in
              sorted(partitions, key=lambda p: min(n.name for n in p.nodes))]

    class _Group:
        def __init__(self, nodes):
            self.nodes = nodes
            self.epoch = epoch[next(iter(nodes))] if epoch else 0

    boxes = [_Group(g) for g in groups]
    partition_of = {n: b for b in boxes for n in b.nodes}
    changed = True
    while changed:
        changed = False
        for a in boxes:
            for b in boxes:
                if a is b or not a.nodes or not b.nodes or \
                        a.epoch != b.epoch:
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


def _call_nodes(graph):
    return [n for n in graph.nodes if n.op in ("call_function", "call_method")]


def _finish(gm, regions, unsupported):
    gm.nvfuser_unsupported = unsupported
    gm.nvfuser_regions = regions
    COMPILED_GRAPHS.append(dict(regions=len(regions),
                                unsupported=dict(unsupported)))
    return gm


def _all_eager(gm, reason):
    """gm itself, every call left to eager with `reason`."""
    warnings.warn("nvfuser: the graph runs in eager: %s" % reason)
    return _finish(gm, [], {n.name: reason for n in _call_nodes(gm.graph)})


def _drop_unread_getitems(gm):
    """getitems nobody reads (make_fx keeps those of every result, also
    the None of a masked gradient) compute nothing: gone."""
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target is operator.getitem \
                and not node.users:
            gm.graph.erase_node(node)
    gm.recompile()


def compile_graph(gm, example_inputs):
    """Returns a copy of gm with every supported region replaced by a
    FusionRegion. Never raises for a graph PyTorch can run: whatever cannot
    be translated stays in eager, with its reason. gm and the example
    inputs are left as they are. A misspelled NVFUSER_DUMP option raises
    (ValueError) here, as it does at execute: a configuration error is the
    user's to fix, not a reason to run in eager."""
    _dump_enabled()
    # Partitioning rewrites the graph it works on; work on a copy so that a
    # failure anywhere can still hand back the caller's graph intact.
    work = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph),
                                class_name=type(gm).__name__)
    _drop_unread_getitems(work)
    try:
        values = record_values(work, example_inputs)
    except Exception as e:  # noqa: BLE001 (the model's own error)
        # Eager raises the same error when the graph is called.
        return _all_eager(gm, "running it on the example inputs raised "
                          "%s: %s" % (type(e).__name__, _first_line(e)))
    try:
        return _compile(work, values)
    except Exception as e:  # noqa: BLE001 (our failure: eager is correct)
        return _all_eager(gm, "partitioning failed: %s: %s" % (
            type(e).__name__, _first_line(e)))


def _propose(gm, values, analysis, support):
    """The regions: torch's partitioner's proposals, cut at in-place
    writes, without ones that would wait on their own output or run
    nothing but shape arithmetic, then joined where independent."""
    partitioner = CapabilityBasedPartitioner(
        gm, support, allows_single_node_partition=True)
    proposed = split_by_epoch([set(p.nodes) for p in
                               partitioner.propose_partitions()],
                              analysis.epoch)
    # A proposal that an eager node both reads and feeds (torch 1.13's
    # partitioner made some) stays in eager rather than failing the fuse.
    proposed = [p for p in proposed if not leaves_and_returns(p)]
    # A region of shape arithmetic alone would run nothing: left to eager.
    proposed = [Partition(id=i, nodes=list(p)) for i, p in enumerate(
        proposed) if not all(is_metadata(n, values) for n in p)]
    return partitioner, merge_independent(proposed, analysis.epoch)


def _compile(gm, values):
    analysis = MutationAnalysis(gm.graph, values, gm)
    support = _Support(values, gm.graph, analysis)
    unsupported = {n.name: r for n, r in support.reasons.items()
                   if r is not None and n.op in ("call_function",
                                                 "call_method")}
    partitioner, partitions = _propose(gm, values, analysis, support)
    by_name = {n.name: v for n, v in values.items()}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            by_name[n.name] = values.get(n)
    for p in partitions:
        # Graph order: torch's fuse takes a region's inputs in the order it
        # meets their readers, and Partition.nodes is a set in torch 1.13
        # (its order changes from run to run, and so would the printed
        # definition and the kernel cache's keys).
        p.nodes = dict.fromkeys(sorted(p.nodes,
                                       key=analysis.position.__getitem__))
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
        try:
            region = FusionRegion(sub, sub_values)
        except Exception as e:  # noqa: BLE001 (the region runs in eager)
            why = "its region failed to translate: %s: %s" % (
                type(e).__name__, _first_line(e)[:100])
            unsupported.update({n.name: why for n in _call_nodes(sub.graph)})
            continue  # the submodule stays: the region's eager graph
        setattr(fused, node.target, region)
        regions.append((node.target, sub))
    _restore_order(fused, subs, analysis)
    if _dump_enabled():
        print(describe(regions, support))
    return _finish(fused, [name for name, _ in regions], unsupported)


def _restore_order(gm, subs, analysis):
    """Re-sorts the fused graph (torch's fuse re-sorts it by data alone,
    breadth first) so that in-place writes keep their place: see
    mutation.order_nodes. Original nodes keep their names through the
    fuse; a fused call takes its members' place and epoch, and a getitem
    on it follows it."""
    position = {n.name: analysis.position[n] for n in analysis.position}
    epoch = {n.name: analysis.epoch[n] for n in analysis.epoch}
    writes = {n.name for n in analysis.writes}
    pos, ep, nodes, output = {}, {}, [], None
    for n in gm.graph.nodes:
        if n.op == "output":
            output = n
            continue
        nodes.append(n)
        if n.op == "call_module" and n.target in subs:
            members = [m.name for m in _call_nodes(subs[n.target].graph)]
            pos[n] = min(position[m] for m in members)
            ep[n] = epoch[members[0]]
        elif n.name in position and not _reads_fused(n, subs):
            pos[n], ep[n] = position[n.name], epoch[n.name]
        else:  # a getitem on a fused call: right after what it reads
            inputs = n.all_input_nodes
            pos[n] = max([pos[x] for x in inputs] or [0]) + 0.5
            ep[n] = max([ep[x] for x in inputs] or [0])

    def is_write(n):
        return n.name in writes and not (n.op == "call_module" and
                                         n.target in subs)
    order = order_nodes(nodes, lambda n: n.all_input_nodes, pos, ep,
                        is_write)
    graph = torch.fx.Graph()
    graph._codegen = gm.graph._codegen
    env = {}
    for n in order + [output]:
        env[n] = graph.node_copy(n, lambda x: env[x])
    gm.graph = graph
    gm.recompile()


def _reads_fused(node, subs):
    return node.op == "call_function" and node.target is operator.getitem \
        and isinstance(node.args[0], torch.fx.Node) and \
        node.args[0].op == "call_module" and node.args[0].target in subs


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
