"""Records what every node of an FX graph computes on example inputs
(the values the partition checks and the regions are translated for):
real tensors where the graph can run, symbolic sizes as their hints, and
writes to inputs applied to copies."""

import copy

import torch

from .mutation import written_inputs


def _detached(v):
    """A value as it is now: a tensor's sizes, strides and dtype are its
    own (an in-place resize_ or t_ of the original later leaves them be);
    the data is shared, and nothing reads it."""
    if isinstance(v, torch.Tensor):
        return v.detach()
    if isinstance(v, (tuple, list)):
        return type(v)(_detached(x) for x in v) if type(v) in (
            tuple, list) else v
    return v


class _Recorder(torch.fx.Interpreter):
    """Runs the graph once and keeps every node's value. Compiling must not
    change anything the caller owns: in a graph that writes in place it
    works on copies of the module's constant tensors (the caller's inputs
    are copied by record_values), and a training-mode submodule with
    buffers (batch norm's running statistics) runs as a copy."""

    def __init__(self, gm, writes):
        super().__init__(gm)
        self.values = {}
        self.writes = writes
        self._copies = {}

    def run_node(self, n):
        v = super().run_node(n)
        self.values[n] = _detached(v)
        return v

    def get_attr(self, target, args, kwargs):
        v = super().get_attr(target, args, kwargs)
        if self.writes and isinstance(v, torch.Tensor):
            return self._copy(target, v, lambda t: t.clone())
        return v

    def call_module(self, target, args, kwargs):
        mod = self.fetch_attr(target)
        if mod.training and any(True for _ in mod.buffers()):
            mod = self._copy(target, mod, copy.deepcopy)
        return mod(*args, **kwargs)

    def _copy(self, key, obj, how):
        if key not in self._copies:
            self._copies[key] = how(obj)
        return self._copies[key]


def _copy_inputs(example_inputs):
    """Copies of the tensors (one copy per distinct tensor object, so an
    input passed twice stays one tensor); other values as they are."""
    copies = {}

    def one(v):
        if not isinstance(v, torch.Tensor):
            return v
        if id(v) not in copies:
            copies[id(v)] = v.detach().clone()
        return copies[id(v)]
    return [one(v) for v in example_inputs]


def graph_writes(gm):
    """Whether any node of the graph may write to a tensor in place."""
    return any(written_inputs(n, gm) is not None for n in gm.graph.nodes)


def size_hint(s):
    """The example value of a symbolic size (a SymInt of torch >= 2.0, a
    SymIntNode or PySymInt of torch 1.13), or None."""
    if isinstance(s, int):
        return s
    if type(s).__name__ not in ("SymInt", "SymIntNode", "PySymInt"):
        return None  # a SymFloat's hint must not become an int
    node = getattr(s, "node", None)  # torch >= 2.0
    if node is None and hasattr(s, "get_pyobj"):
        node = s.get_pyobj()  # torch 1.13's SymIntNode
    if node is None and hasattr(s, "shape_env"):
        node = s  # torch 1.13's PySymInt
    hint = getattr(node, "hint", None)
    if isinstance(hint, int):
        return hint
    try:
        return int(node.shape_env.size_hint(node.expr))
    except Exception:  # noqa: BLE001 (no hint: the node stays symbolic)
        return None


def _is_symbolic(v):
    if isinstance(v, torch.Tensor):
        return not all(isinstance(x, int) for x in
                       tuple(v.shape) + tuple(v.stride()))
    if isinstance(v, (tuple, list)):
        return any(_is_symbolic(x) for x in v)
    return v is not None and not isinstance(
        v, (int, float, bool, str, torch.dtype, torch.device)) and \
        size_hint(v) is not None


def concrete(v):
    """A symbolic value (dynamic shapes) as its example: sizes and strides
    by their hints, a tensor as a fake tensor of those (no memory). A
    region is translated for these sizes and specializes again for others
    (FusionRegion). Values without hints stay as they are (their nodes stay
    in eager)."""
    if isinstance(v, (tuple, list)):
        return type(v)(concrete(x) for x in v)
    if isinstance(v, torch.Tensor):
        if not _is_symbolic(v):
            return v
        sizes = [size_hint(x) for x in v.shape]
        strides = [size_hint(x) for x in v.stride()]
        if None in sizes or None in strides:
            return v
        return _fake_tensor(sizes, strides, v.dtype, v.device)
    if _is_symbolic(v):
        return size_hint(v)
    return v


def _fake_tensor(sizes, strides, dtype, device):
    from torch._subclasses.fake_tensor import FakeTensorMode
    try:
        with FakeTensorMode():
            return torch.empty_strided(sizes, strides, dtype=dtype,
                                       device=device)
    except Exception:  # noqa: BLE001 (a device this torch cannot fake)
        return torch.empty_strided(sizes, strides, dtype=dtype,
                                   device="meta")


def record_values(gm, example_inputs):
    """Every node's value: from the graph's metadata where every node has
    one (aot_autograd and dynamo graphs, possibly fake tensors, symbolic
    sizes as their hints), else by running the graph on the example inputs
    (symbolic_trace graphs). A graph that writes in place runs on copies of
    the inputs, which are never modified."""
    nodes = list(gm.graph.nodes)
    calls = [n for n in nodes if n.op in ("call_function", "call_method")]
    if calls and all("val" in n.meta for n in calls):
        values = {}
        for n in nodes:
            if "val" in n.meta:
                values[n] = concrete(n.meta["val"])
            elif n.op == "get_attr":  # a constant without metadata
                obj = gm
                for part in n.target.split("."):
                    obj = getattr(obj, part)
                values[n] = obj
            else:
                values[n] = None
        return values
    writes = graph_writes(gm)
    rec = _Recorder(gm, writes)
    inputs = _copy_inputs(example_inputs) if writes else list(example_inputs)
    with torch.no_grad():
        rec.run(*inputs)
    return rec.values
