"""FX node -> FusionDefinition translation, table-driven.

Every entry of ``TABLE`` maps an op name (an ATen overload packet's name
such as ``add`` for ``aten.add.Tensor``, a Python operator, a ``torch``
function or a tensor method) to a handler ``fn(ctx, node, p)`` that defines
the node's value in ``ctx.fd`` and returns it, or raises ``Unsupported``
with the reason. ``p`` is the node's arguments read through the op's
signature (``schema.normalize``): a dict name -> value with defaults, the
same whether the caller passed an argument by position or by keyword.
Values are nvfuser Tensors for tensor nodes of the region and recorded
Python values for everything else (ints, slices, shapes). Output shapes
come from the value the node produced when the graph was recorded, so
view/expand/reshape never need symbolic arithmetic. The elementwise ops'
handlers live in elementwise.py, the composite ops' in composite.py; both
tables are merged into this one.

``translate_checked`` is the one entry point: it runs the handler, then
checks the result against what PyTorch produced (shape, and integer vs
floating vs bool) and casts it to PyTorch's dtype, so a handler that
misreads an op leaves the node in eager instead of computing a wrong value.
"""

import operator

import torch

from ..values import Tensor
from .._C import DataType
from . import composite, elementwise, indexing, library_calls
from .elementwise import _cast_tensor, _nv, _out_dtype, _scalar_ok
from .schema import Unsupported, normalize


SPLIT_OPS = ("split", "split_with_sizes", "chunk")
# Ops whose value is a tuple of tensors that only getitems read.
TUPLE_OPS = SPLIT_OPS + composite.TUPLE_OPS

SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16,
                    torch.float64, torch.int64, torch.int32, torch.bool)

_FLOAT_DTYPES = (DataType.Double, DataType.Float, DataType.Half,
                 DataType.BFloat16)
_INT_DTYPES = (DataType.Int, DataType.Int32)


def op_name(node):
    """The table key of an FX node, or None."""
    t = node.target
    if node.op == "call_method":
        return t
    if node.op != "call_function":
        return None
    packet = getattr(t, "overloadpacket", None)
    if packet is not None:
        return packet.__name__
    if t in _OPERATORS:
        return _OPERATORS[t]
    return getattr(t, "__name__", None)


# Python operators whose __name__ is not the torch op they call on tensors.
_OPERATORS = {operator.truediv: "div", operator.and_: "bitwise_and",
              operator.or_: "bitwise_or", operator.xor: "bitwise_xor",
              operator.invert: "bitwise_not",
              operator.lshift: "__lshift__", operator.rshift: "__rshift__"}


# ---- small helpers ----------------------------------------------------------

def _dims(d, rank):
    d = [d] if isinstance(d, int) else list(d)
    return [x % rank if rank else 0 for x in d]


def _all_dims_if_none(dims, rank):
    """A reduction's dims: None or an empty list means every dim."""
    if dims is None or (isinstance(dims, (list, tuple)) and not dims):
        return list(range(rank))
    return _dims(dims, rank)


def _shape(ctx, node):
    """The node's recorded (PyTorch) output shape."""
    return list(ctx.value_of(node).shape)


def _in_shape(x):
    """A fusion tensor's sizes (all static: regions are defined for the
    recorded shapes)."""
    return [int(s) for s in x.shape()]


def _rank(x):
    return x.ndim if isinstance(x, Tensor) else 0


# ---- conversions ------------------------------------------------------------

def is_cpu_scalar(v):
    """A 0-dim CPU tensor: torch.compile's constants. Generated kernels
    take its value as a parameter, so it mixes with tensors of any
    device (define_tensor(shape=[], is_cpu=True))."""
    return isinstance(v, torch.Tensor) and v.dim() == 0 and \
        v.device.type == "cpu"


def _check_same_device(ctx, node):
    """A device change stays in eager, except a CPU scalar's: moving it to
    the GPU is reading its value, which the kernel has already."""
    out = ctx.value_of(node)
    for a in node.all_input_nodes:
        v = ctx.value_of(a)
        if isinstance(v, torch.Tensor) and v.device != out.device and \
                not is_cpu_scalar(v):
            raise Unsupported("a device change")


def _cast(ctx, node, p):
    """_to_copy / convert_element_type / to / float / type_as ...: the
    recorded result says which dtype; a device change stays eager."""
    _check_same_device(ctx, node)
    x = p["self"]
    if not isinstance(x, Tensor):
        raise Unsupported("a conversion of a non-tensor")
    return ctx.fd.ops.cast(x, _nv(_out_dtype(ctx, node)))


# ---- shape ops --------------------------------------------------------------

def _reshape(ctx, node, p):
    if "dtype" in p:
        raise Unsupported("view as another dtype (a bit reinterpretation)")
    return ctx.fd.ops.reshape(p["self"], _shape(ctx, node))


def _permute(ctx, node, p):
    return ctx.fd.ops.permute(p["self"],
                              _dims(list(p["dims"]), _rank(p["self"])))


def _transpose(ctx, node, p):
    x = p["self"]
    rank = _rank(x)
    if "dim0" not in p:  # .t()
        if rank < 2:
            return ctx.fd.ops.set(x)
        a, b = 0, 1
    else:
        a, b = _dims(p["dim0"], rank)[0], _dims(p["dim1"], rank)[0]
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return ctx.fd.ops.permute(x, perm)


def _with_unit_dim(ctx, x, shape, dim):
    """x with a size-1 dim inserted at `dim`: `shape` there is 1."""
    out = list(shape)
    out[dim] = 1
    keep = [i for i in range(len(out)) if i != dim]
    return ctx.fd.ops.broadcast_in_dim(x, out, keep)


def _padded_along(ctx, x, rank, dim, before, after):
    """x padded with zeros along one dim (torch.nn.functional.pad widths
    list the last dim first)."""
    widths = []
    for d in reversed(range(rank)):
        widths += [before, after] if d == dim else [0, 0]
    return ctx.fd.ops.pad(x, widths, 0.0)


def _unsqueeze(ctx, node, p):
    out = _shape(ctx, node)
    return _with_unit_dim(ctx, p["self"], out, p["dim"] % len(out))


def _squeeze(ctx, node, p):
    x = p["self"]
    shape = _in_shape(x)
    if p.get("dim") is not None:
        dims = [d for d in _dims(p["dim"], len(shape)) if shape[d] == 1]
    else:
        dims = [i for i, s in enumerate(shape) if s == 1]
    return ctx.fd.ops.squeeze(x, dims) if dims else ctx.fd.ops.set(x)


def _expand(ctx, node, p):
    out = _shape(ctx, node)
    x = p["self"]
    r = _rank(x)
    if r < len(out):
        x = ctx.fd.ops.broadcast_in_dim(
            x, [1] * (len(out) - r) + _in_shape(x),
            list(range(len(out) - r, len(out))))
    return ctx.fd.ops.expand(x, out)


def _slice_range(p, shape):
    """(dim, start, end, step) of a slice-like op, normalized against
    `shape` as Python slicing does."""
    dim = _dims(p.get("dim", 0), len(shape))[0]
    start, end, step = slice(p.get("start"), p.get("end"),
                             p.get("step", 1)).indices(shape[dim])
    return dim, start, end, step


def _slice_of(ctx, x, shape, dim, start, end, step):
    if step <= 0:
        raise Unsupported("a non-positive slice step")
    starts = [0] * len(shape)
    ends = list(shape)
    strides = [1] * len(shape)
    starts[dim], ends[dim], strides[dim] = start, max(end, start), step
    return ctx.fd.ops.slice(x, starts, ends, strides)


def _slice(ctx, node, p):
    shape = _in_shape(p["self"])
    return _slice_of(ctx, p["self"], shape, *_slice_range(p, shape))


def _narrow(ctx, node, p):
    shape = _in_shape(p["self"])
    start = p["start"]
    if not isinstance(start, int):
        raise Unsupported("narrow with a tensor start")
    dim = _dims(p["dim"], len(shape))[0]
    start = start % shape[dim] if start < 0 else start
    return _slice_of(ctx, p["self"], shape, dim, start, start + p["length"],
                     1)


def _select(ctx, node, p):
    """x.select(dim, i): a size-1 slice, squeezed."""
    x, index = p["self"], p["index"]
    shape = _in_shape(x)
    dim = _dims(p["dim"], len(shape))[0]
    if not isinstance(index, int) or not -shape[dim] <= index < shape[dim]:
        raise Unsupported("select of index %r" % (index,))
    i = index % shape[dim]
    return ctx.fd.ops.squeeze(_slice_of(ctx, x, shape, dim, i, i + 1, 1),
                              [dim])


def _getitem(ctx, node, p):
    """Basic indexing: slices, ints (a size-1 slice, then squeezed), None
    (a new dim) and one Ellipsis."""
    x, index = p["self"], p["index"]
    if isinstance(x, tuple):
        src = node.args[0]
        library = isinstance(x, library_calls.LibraryResults)
        if not (isinstance(index, int) and
                (library or op_name(src) in TUPLE_OPS)):
            raise Unsupported("getitem of a tuple of %s" % op_name(src))
        if x[index] is None:
            raise Unsupported("getitem of a result %s does not keep" %
                              op_name(src))
        return x[index]  # one piece of a split, one result of var_mean...
    if not isinstance(x, Tensor):
        raise Unsupported("getitem of a non-tensor")
    shape = _in_shape(x)
    index = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, bool) or
           not isinstance(i, (int, slice, type(None), type(Ellipsis)))
           for i in index):
        raise Unsupported("advanced indexing")
    if sum(i is Ellipsis for i in index) > 1:
        raise Unsupported("several ellipses")
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if Ellipsis in index:
        k = index.index(Ellipsis)
        index = index[:k] + (slice(None),) * (len(shape) - used) + \
            index[k + 1:]
    starts, ends, strides, squeezed, kept = [], [], [], [], []
    d = 0
    out_pos = 0
    for i in index:
        if i is None:
            out_pos += 1
            continue
        if isinstance(i, int):
            if not -shape[d] <= i < shape[d]:
                raise Unsupported("an index out of range")
            j = i % shape[d]
            starts.append(j)
            ends.append(j + 1)
            strides.append(1)
            squeezed.append(d)
        else:
            a, b, c = i.indices(shape[d])
            if c <= 0:
                raise Unsupported("a non-positive slice step")
            starts.append(a)
            ends.append(max(a, b))
            strides.append(c)
            kept.append(out_pos)
            out_pos += 1
        d += 1
    for e in range(d, len(shape)):
        starts.append(0)
        ends.append(shape[e])
        strides.append(1)
        kept.append(out_pos)
        out_pos += 1
    r = ctx.fd.ops.slice(x, starts, ends, strides)
    if squeezed:
        r = ctx.fd.ops.squeeze(r, squeezed)
    out = _shape(ctx, node)
    if len(kept) != len(out):  # new dims from None
        r = ctx.fd.ops.broadcast_in_dim(r, out, kept)
    return r


def _legacy_empty(v):
    """torch.cat skips 1-D tensors with no elements whatever the other
    operands' rank (transformers' DynamicCache starts from one)."""
    return isinstance(v, torch.Tensor) and v.dim() == 1 and v.numel() == 0


def _cat(ctx, node, p):
    tensors = list(p["tensors"])
    if not all(isinstance(t, Tensor) for t in tensors):
        raise Unsupported("cat of non-tensors")
    recorded = list(node.args[0] if node.args else node.kwargs["tensors"])
    kept = [t for t, r in zip(tensors, recorded)
            if not _legacy_empty(ctx.value_of(r))]
    if not kept:
        raise Unsupported("cat of empty 1-D tensors only")
    out = _out_dtype(ctx, node)
    kept = [_cast_tensor(ctx, t, out) for t in kept]  # one dtype
    if len(kept) == 1:
        return ctx.fd.ops.set(kept[0])
    return ctx.fd.ops.cat(kept, _dims(p["dim"], _rank(kept[0]))[0])


def _stack(ctx, node, p):
    """torch.stack: each tensor with a size-1 dim at `dim`, concatenated
    there (a pair-view RoPE's stack of its rotated halves)."""
    tensors = list(p["tensors"])
    if not tensors or not all(isinstance(t, Tensor) for t in tensors):
        raise Unsupported("stack of non-tensors")
    out = _shape(ctx, node)
    dim = _dims(p.get("dim", 0), len(out))[0]
    dtype = _out_dtype(ctx, node)
    parts = [_with_unit_dim(ctx, _cast_tensor(ctx, t, dtype), out, dim)
             for t in tensors]
    if len(parts) == 1:
        return ctx.fd.ops.set(parts[0])
    return ctx.fd.ops.cat(parts, dim)


def _pad(ctx, node, p):
    pads = list(p["pad"])
    value = p.get("value")
    if p.get("mode", "constant") != "constant" or any(x < 0 for x in pads):
        raise Unsupported("a non-constant or negative pad")
    return ctx.fd.ops.pad(p["self"], pads, value if value is not None
                          else 0.0)


def _split(ctx, node, p):
    """split / split_with_sizes / chunk: a tuple of slices; only getitem
    may read it (the partitioner checks)."""
    x = p["self"]
    pieces = ctx.value_of(node)
    shape = _in_shape(x)
    dim = _dims(p.get("dim", 0), len(shape))[0]
    out = []
    start = 0
    for piece in pieces:
        starts = [0] * len(shape)
        ends = list(shape)
        starts[dim], ends[dim] = start, start + piece.shape[dim]
        out.append(ctx.fd.ops.slice(x, starts, ends))
        start += piece.shape[dim]
    if start != shape[dim]:
        raise Unsupported("%s pieces do not cover the dim" % op_name(node))
    return tuple(out)


def _slice_backward(ctx, node, p):
    """The gradient of a slice: the slice's gradient padded with zeros."""
    grad = p["grad_output"]
    out = _shape(ctx, node)
    dim, start, _, step = _slice_range(p, out)
    if step != 1:
        raise Unsupported("slice_backward with a step")
    right = out[dim] - start - _in_shape(grad)[dim]
    return _padded_along(ctx, grad, len(out), dim, start, right)


def _select_backward(ctx, node, p):
    """The gradient of x.select(dim, i): the gradient with dim put back as
    size 1, padded with zeros to x's size there (a pair-view RoPE's
    x[..., 0] and x[..., 1], torchtune's)."""
    grad = p["grad_output"]
    out = _shape(ctx, node)
    dim = _dims(p["dim"], len(out))[0]
    index = p["index"]
    if not isinstance(index, int) or not -out[dim] <= index < out[dim]:
        raise Unsupported("select_backward of index %r" % (index,))
    i = index % out[dim]
    return _padded_along(ctx, _with_unit_dim(ctx, grad, out, dim), len(out),
                         dim, i, out[dim] - i - 1)


def _slice_scatter(ctx, node, p):
    """base with base[start:end] along dim replaced by src (step 1): the
    parts of base before and after, and src, concatenated."""
    base, src = p["self"], p["src"]
    out = _shape(ctx, node)
    dim, start, end, step = _slice_range(p, out)
    if step != 1:
        raise Unsupported("slice_scatter with a step")
    end = max(start, end)
    parts = []
    for a, b in ((0, start), (end, out[dim])):
        if b > a:
            starts = [0] * len(out)
            ends = list(out)
            starts[dim], ends[dim] = a, b
            parts.append(ctx.fd.ops.slice(base, starts, ends))
    parts.insert(1 if start > 0 else 0, src)
    if len(parts) == 1:
        return ctx.fd.ops.set(src)
    return ctx.fd.ops.cat(parts, dim)


# ---- reductions -------------------------------------------------------------

def _reduction(name):
    def fn(ctx, node, p):
        x = p["self"]
        out = ctx.value_of(node)
        if not isinstance(out, torch.Tensor):
            raise Unsupported("%s returning indices" % name)
        # PyTorch reduces in the result dtype (int32 and bool sums give
        # int64; dtype= chooses it): convert first. (A half mean stays half
        # here; the core accumulates it in float, as PyTorch does.)
        x = _cast_tensor(ctx, x, out.dtype)
        dims = _all_dims_if_none(p.get("dim"), _rank(x))
        r = getattr(ctx.fd.ops, name)(x, dims, bool(p.get("keepdim", False)))
        return ctx.fd.ops.cast(r, _nv(out.dtype))
    return fn


def _var(ctx, node, p):
    x = p["self"]
    dims = _all_dims_if_none(p.get("dim"), _rank(x))
    correction = p.get("correction")
    if correction is None:
        correction = 1 if p.get("unbiased", True) else 0
    if not isinstance(correction, int):
        raise Unsupported("a non-integer correction")
    # PyTorch divides by max(0, N - correction): 0 / 0 is nan for an empty
    # reduction. The core divides by N - correction as is, so clamp here.
    count = 1
    for d in dims:
        count *= _in_shape(x)[d]
    correction = min(correction, count)
    return ctx.fd.ops.var(x, dims, correction, bool(p.get("keepdim", False)))


# ---- factories --------------------------------------------------------------

def _fill(ctx, node, value):
    out = ctx.value_of(node)
    kind = float if out.dtype.is_floating_point else \
        bool if out.dtype == torch.bool else int
    return ctx.fd.ops.full(list(out.shape), kind(value), _nv(out.dtype))


def _constant(value):
    def fn(ctx, node, p):
        return _fill(ctx, node, value)
    return fn


def _full(ctx, node, p):
    return _fill(ctx, node, p["fill_value"])


def _arange(ctx, node, p):
    out = ctx.value_of(node)
    if out.dim() != 1:
        raise Unsupported("arange of rank %d" % out.dim())
    start, step = p.get("start", 0), p.get("step", 1)
    if not all(isinstance(v, (int, float)) for v in (start, step)):
        raise Unsupported("arange with non-numeric bounds")
    return ctx.fd.ops.iota(out.shape[0], start, step, _nv(out.dtype))


# ---- matrix products --------------------------------------------------------

def _matmul(ctx, node, p):
    if not _out_dtype(ctx, node).is_floating_point:
        raise Unsupported("an integer matmul")
    other = p["mat2"] if "mat2" in p else p["other"]
    return ctx.fd.ops.matmul(p["self"], other)


def _addmm(ctx, node, p):
    if not _out_dtype(ctx, node).is_floating_point:
        raise Unsupported("an integer matmul")
    beta, alpha = p.get("beta", 1), p.get("alpha", 1)
    prod = ctx.fd.ops.matmul(p["mat1"], p["mat2"])
    if alpha != 1:
        prod = ctx.fd.ops.mul(prod, alpha)
    if beta == 0:  # PyTorch ignores self then (nan and inf included)
        return ctx.to_shape(prod, _shape(ctx, node))
    bias = p["self"] if beta == 1 else ctx.fd.ops.mul(p["self"], beta)
    return ctx.broadcast_binary(ctx.fd.ops.add, bias, prod, node)


# ---- others -----------------------------------------------------------------

def _identity(ctx, node, p):
    return ctx.fd.ops.set(p["self"])


def _where(ctx, node, p):
    if "other" not in p:
        raise Unsupported("where with one argument")
    out = _out_dtype(ctx, node)
    a = _cast_tensor(ctx, _scalar_ok(p["self"]), out)
    b = _cast_tensor(ctx, _scalar_ok(p["other"]), out)
    return ctx.broadcast_ternary(ctx.fd.ops.where, p["condition"], a, b,
                                 node=node)


TABLE = dict(elementwise.TABLE)
TABLE.update({
    "_to_copy": _cast, "convert_element_type": _cast, "to": _cast,
    "float": _cast, "half": _cast, "bfloat16": _cast, "double": _cast,
    "int": _cast, "long": _cast, "bool": _cast, "type_as": _cast,
    "view": _reshape, "reshape": _reshape, "_unsafe_view": _reshape,
    "flatten": _reshape, "_reshape_alias": _reshape,
    "permute": _permute, "transpose": _transpose, "t": _transpose,
    "unsqueeze": _unsqueeze, "squeeze": _squeeze, "expand": _expand,
    "slice": _slice, "narrow": _narrow, "getitem": _getitem,
    "select": _select,
    "cat": _cat, "concat": _cat, "stack": _stack, "constant_pad_nd": _pad, "pad": _pad,
    "sum": _reduction("sum"), "mean": _reduction("mean"),
    "amax": _reduction("max"), "amin": _reduction("min"),
    "prod": _reduction("prod"), "var": _var,
    "full": _full, "full_like": _full, "zeros": _constant(0),
    "ones": _constant(1), "zeros_like": _constant(0),
    "ones_like": _constant(1), "new_zeros": _constant(0),
    "new_ones": _constant(1), "arange": _arange,
    "_efficientzerotensor": _constant(0),
    "mm": _matmul, "bmm": _matmul, "matmul": _matmul, "addmm": _addmm,
    "clone": _identity, "alias": _identity, "contiguous": _identity,
    "detach": _identity, "lift_fresh_copy": _identity,
    "where": _where, "slice_backward": _slice_backward,
    "select_backward": _select_backward,
    "slice_scatter": _slice_scatter,
})
for _n in SPLIT_OPS:
    TABLE[_n] = _split
TABLE.update(composite.TABLE)
TABLE.update(indexing.TABLE)
# Functionalized graphs may use the *_copy forms of view ops.
for _n in ("view", "permute", "transpose", "t", "unsqueeze", "squeeze",
           "expand", "slice", "alias", "select"):
    TABLE[_n + "_copy"] = TABLE[_n]

# Ops whose eager result may share memory with an input (a view, or the
# input itself when nothing changes: x.to(x.dtype), x.contiguous()). A
# region always computes a fresh tensor, so these must stay in eager where
# the graph writes to the memory they would share.
VIEW_OPS = frozenset((
    "view", "reshape", "_unsafe_view", "flatten", "_reshape_alias",
    "permute", "transpose", "t", "unsqueeze", "squeeze", "expand",
    "slice", "narrow", "getitem", "alias", "contiguous", "detach", "select",
    "to", "float", "half", "bfloat16", "double", "int", "long", "bool",
    "type_as",
    "convert_element_type") + SPLIT_OPS)


def is_mutating_name(name):
    """In-place method or function by PyTorch's naming (add_, copy_,
    relu_), not a dunder."""
    return isinstance(name, str) and name.endswith("_") and \
        not name.endswith("__")


def translate_node(ctx, node, args, kwargs):
    """The handler's value for one node (no checks against PyTorch); an
    ATen operator without one (or whose handler refuses these arguments)
    is called as it is (library_calls.py) when it can be."""
    name = op_name(node)
    handler = TABLE.get(name)
    if handler is None:
        try:
            return library_calls.translate(ctx, node, args, kwargs)
        except Unsupported as e:
            raise Unsupported("no translation for %s (%s)" % (name, e)) \
                from None
    try:
        p = normalize(node, args, kwargs, ctx.value_of)
        if p.get("out") is not None or p.get("inplace") is True:
            raise Unsupported("writes to a tensor (out= or inplace=True)")
        return handler(ctx, node, p)
    except Unsupported as refused:
        try:
            return library_calls.translate(ctx, node, args, kwargs)
        except Unsupported:
            raise refused from None


def _kind(dtype):
    if dtype in _FLOAT_DTYPES:
        return "floating"
    if dtype in _INT_DTYPES:
        return "integer"
    return "bool" if dtype == DataType.Bool else str(dtype)


def _conform(ctx, r, want, what):
    """r checked against PyTorch's value `want` and cast to its dtype."""
    if not isinstance(r, Tensor):
        raise Unsupported("%s gave no tensor" % what)
    shape = [int(s) if s is not None else None for s in r.shape()]
    if shape != list(want.shape):
        raise Unsupported("%s gives shape %s, PyTorch %s" %
                          (what, shape, list(want.shape)))
    dtype = _nv(want.dtype)
    if _kind(r.dtype) != _kind(dtype):
        # A cast would hide a wrong computation (integer division giving
        # an integer where PyTorch gives a float, ...).
        raise Unsupported("%s computes %s values, PyTorch %s" %
                          (what, _kind(r.dtype), _kind(dtype)))
    return r if r.dtype == dtype else ctx.fd.ops.cast(r, dtype)


def translate_checked(ctx, node, args, kwargs):
    """translate_node, then every result checked against the recorded
    value (shape, kind of dtype) and cast to its dtype. Both the support
    dry run and the region's translation use this, so they agree."""
    r = translate_node(ctx, node, args, kwargs)
    want = ctx.value_of(node)
    what = "the translation of %s" % op_name(node)
    if isinstance(r, tuple):
        if not isinstance(want, (tuple, list)) or len(want) != len(r):
            raise Unsupported("%s gave %d pieces" % (what, len(r)))
        pieces = tuple(x if x is None else _conform(ctx, x, w, what)
                       for x, w in zip(r, want))
        return library_calls.LibraryResults(pieces) \
            if isinstance(r, library_calls.LibraryResults) else pieces
    return _conform(ctx, r, want, what)


__all__ = ["TABLE", "Unsupported", "op_name", "translate_node",
           "translate_checked", "VIEW_OPS", "SUPPORTED_DTYPES", "DataType",
           "TUPLE_OPS", "is_cpu_scalar"]
