"""In-place writes in an FX graph and the order they impose.

A region runs as one call: it reads all of its inputs when it starts and
produces fresh tensors. Around a node that writes to a tensor in place
(``x.add_(y)``, ``torch.add(a, b, out=c)``, ``F.relu(x, inplace=True)``,
``x[0] = 1``) that is only right when

* the writing node stays in eager (it is never translated);
* no region holds nodes from both sides of a write: the graph is cut into
  *epochs* at every writing node, and a region lies within one epoch;
* the fused graph runs every region after the writes before it and before
  the writes after it (``order_nodes``); torch's partitioner re-sorts the
  graph by data dependencies alone, which would move a read past a write;
* no region computes a value that PyTorch would return as a view of (or
  the same tensor as) memory the graph writes to, since the region's copy
  would not see the write (``MutationAnalysis.shares_written_memory``).

Epochs count every write, not only writes to the tensors a region reads:
views make "which tensor" hard to know in a traced graph, and a write
is rare enough in graphs worth fusing that the simple rule is the safe one.
"""

import heapq
import operator

import torch

from .schema import normalize
from .translator import TABLE, VIEW_OPS, is_mutating_name, op_name

# Python operators that write to their first operand.
_INPLACE_OPERATORS = frozenset((
    operator.iadd, operator.isub, operator.imul, operator.itruediv,
    operator.ifloordiv, operator.imod, operator.ipow, operator.iand,
    operator.ior, operator.ixor, operator.ilshift, operator.irshift,
    operator.imatmul, operator.setitem, operator.delitem))

# Callables from these modules write only where their name, an out=
# argument or inplace=True says so; anything else (a user function kept
# as a leaf with torch.fx.wrap) may write to whatever it is given.
_KNOWN_MODULES = ("torch", "_operator", "operator", "math", "builtins")


def _tensor_inputs(node):
    return list(node.all_input_nodes)


def _first_input(node):
    if node.args and isinstance(node.args[0], torch.fx.Node):
        return [node.args[0]]
    return _tensor_inputs(node)


def _schema_writes(node, schema):
    """Inputs bound to arguments the schema marks as written (Tensor(a!))."""
    written = []
    k = 0  # position among the positional arguments
    for a in schema.arguments:
        if a.kwarg_only:
            v = node.kwargs.get(a.name)
        else:
            v = node.args[k] if k < len(node.args) else node.kwargs.get(
                a.name)
            k += 1
        if a.alias_info is not None and a.alias_info.is_write:
            written += [x for x in _flatten(v)
                        if isinstance(x, torch.fx.Node)]
    return written


def _flatten(v):
    if isinstance(v, (list, tuple)):
        return [y for x in v for y in _flatten(x)]
    return [v]


def _distributed_write(target, schema):
    """torch.distributed's collectives (all_reduce, broadcast, ...) write
    to their tensor arguments, and so do c10d's in-place operators (whose
    schemas do not say so on torch 1.13: c10d::allreduce_)."""
    if isinstance(schema, torch._C.FunctionSchema):
        ns, _, name = schema.name.partition("::")
        return ns == "c10d" and name.endswith("_")
    module = getattr(target, "__module__", None) or ""
    return module.split(".")[:2] == ["torch", "distributed"]


def _known_callable(target):
    """A callable of torch, Python's operators, math or builtins; a Tensor
    method called as a function (torch.Tensor.add) counts as torch's."""
    owner = getattr(target, "__objclass__", None)
    module = getattr(target, "__module__", None) or getattr(
        owner, "__module__", None) or ""
    return module.split(".")[0] in _KNOWN_MODULES


def _module_writes(node, gm):
    """torch.nn modules write where they say inplace=True (nn.ReLU(True));
    a user's leaf module may write to anything it is given."""
    try:
        mod = gm.get_submodule(node.target)
    except AttributeError:
        return _tensor_inputs(node)
    if not type(mod).__module__.startswith("torch.nn"):
        return _tensor_inputs(node)
    return _first_input(node) if getattr(mod, "inplace", False) else None


def _argument_writes(node, values):
    """out= and inplace=True, the latter read through the op's signature
    so that a positional F.relu(x, True) counts too."""
    written = [x for x in _flatten(node.kwargs.get("out"))
               if isinstance(x, torch.fx.Node)]
    try:
        p = normalize(node, node.args, node.kwargs,
                      lambda n: (values or {}).get(n))
        inplace = p.get("inplace") is True
    except Exception:  # noqa: BLE001 (no signature: only kwargs tell)
        inplace = node.kwargs.get("inplace") is True
    if inplace:
        written += _first_input(node)
    return written or None


def _writes_by_name(node):
    """Methods and functions that are in place by PyTorch's naming
    (x.add_(y), torch.relu_(x)) or Python's (x += y, x[i] = v)."""
    t = node.target
    if node.op == "call_method":
        return is_mutating_name(t) or t in ("__setitem__", "__delitem__") \
            or (t.startswith("__i") and t.endswith("__"))
    if getattr(t, "__module__", None) == "_operator":
        return t in _INPLACE_OPERATORS  # and_, or_ are not in place
    return is_mutating_name(getattr(t, "__name__", None))


def written_inputs(node, gm=None, values=None):
    """The input nodes a call may write to, or None when it writes nothing.
    A write whose target is not a graph value gives an empty list: still a
    write, still a barrier."""
    if node.op == "call_module":
        return _module_writes(node, gm) if gm is not None else \
            _tensor_inputs(node)
    if node.op not in ("call_method", "call_function"):
        return None
    schema = getattr(node.target, "_schema", None)
    if _distributed_write(node.target, schema):
        return _tensor_inputs(node)
    if isinstance(schema, torch._C.FunctionSchema):  # an OpOverload
        if any(a.alias_info is not None and a.alias_info.is_write
               for a in schema.arguments):
            return _schema_writes(node, schema)
        return None
    if _writes_by_name(node):
        if node.op == "call_method" or node.target in _INPLACE_OPERATORS:
            return _first_input(node)
        return _tensor_inputs(node)
    if node.op == "call_function" and not _known_callable(node.target):
        return _tensor_inputs(node)
    return _argument_writes(node, values)


class _UnionFind:
    def __init__(self):
        self.parent = {}

    def find(self, x):
        root = x
        while self.parent.get(root, root) is not root:
            root = self.parent[root]
        while x is not root:  # path compression
            self.parent[x], x = root, self.parent.get(x, x)
        return root

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[ra] = rb


def _is_tensorish(v):
    if isinstance(v, torch.Tensor):
        return True
    return isinstance(v, (tuple, list)) and any(
        isinstance(x, torch.Tensor) for x in v)


class MutationAnalysis:
    """Which nodes write in place, each node's epoch (the number of writing
    nodes before it in graph order), and which values may share memory
    with a tensor that is written to."""

    def __init__(self, graph, values=None, gm=None):
        self.writes = {}  # writing node -> the input nodes it writes
        self.epoch = {}
        self.position = {}
        for i, n in enumerate(graph.nodes):
            self.position[n] = i
            self.epoch[n] = len(self.writes)
            w = written_inputs(n, gm, values)
            if w is not None:
                self.writes[n] = w
        self._aliases = self._alias_classes(graph, values or {})
        self._written_roots = {self._aliases.find(x)
                               for w in self.writes.values() for x in w}
        self._written_roots |= {self._aliases.find(n) for n in self.writes}

    def _alias_classes(self, graph, values):
        """Groups nodes whose values may share memory: a view-like op or
        any op we know nothing about joins its tensor inputs' group; a
        writing op joins what it writes (add_ returns its input)."""
        uf = _UnionFind()
        if not self.writes:
            return uf  # nothing is written: no need to know
        for n in graph.nodes:
            if n.op not in ("call_function", "call_method", "call_module"):
                continue
            if n in self.writes:
                for x in self.writes[n]:
                    uf.union(n, x)
                continue
            if n in values and not _is_tensorish(values[n]):
                continue  # shape arithmetic and the like
            name = op_name(n)
            fresh = name in TABLE and name not in VIEW_OPS
            if not fresh:
                for x in n.all_input_nodes:
                    uf.union(n, x)
        return uf

    def is_write(self, node):
        return node in self.writes

    def shares_written_memory(self, node):
        """Whether the node's value may share memory with a tensor that
        the graph writes to in place."""
        return self._aliases.find(node) in self._written_roots


def split_by_epoch(groups, epoch):
    """Each group of nodes cut into one group per epoch. Epochs never
    decrease along a data edge, so a piece cannot reach another piece of
    its group and come back: the pieces stay acyclic."""
    out = []
    for nodes in groups:
        by_epoch = {}
        for n in nodes:
            by_epoch.setdefault(epoch[n], []).append(n)
        out.extend(by_epoch[e] for e in sorted(by_epoch))
    return out


def order_nodes(nodes, inputs_of, position, epoch, is_write):
    """A topological order of `nodes` (each given its data inputs by
    `inputs_of`) that keeps every node in its epoch relative to the writes:
    a write comes after every other node of its epoch and before every node
    of the next. Ties go to the earliest original position, so an
    unconstrained graph keeps its source order."""
    deps = {n: set(x for x in inputs_of(n) if x in position) for n in nodes}
    by_epoch = {}
    for n in nodes:
        by_epoch.setdefault(epoch[n], []).append(n)
    writes = sorted((n for n in nodes if is_write(n)), key=position.get)
    for w in writes:
        e = epoch[w]
        deps[w].update(n for n in by_epoch.get(e, ()) if n is not w)
        for n in by_epoch.get(e + 1, ()):  # the next write included
            deps[n].add(w)
    users = {n: [] for n in nodes}
    for n, ds in deps.items():
        for d in ds:
            users[d].append(n)
    missing = {n: len(ds) for n, ds in deps.items()}
    ready = [(position[n], i, n) for i, n in enumerate(nodes)
             if not missing[n]]
    heapq.heapify(ready)
    index = {n: i for i, n in enumerate(nodes)}
    order = []
    while ready:
        _, _, n = heapq.heappop(ready)
        order.append(n)
        for u in users[n]:
            missing[u] -= 1
            if not missing[u]:
                heapq.heappush(ready, (position[u], index[u], u))
    if len(order) != len(nodes):
        raise RuntimeError("nvfuser: no order of the fused graph keeps its "
                           "in-place writes in place")
    return order


__all__ = ["MutationAnalysis", "written_inputs", "split_by_epoch",
           "order_nodes"]
