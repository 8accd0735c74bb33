"""FX node -> FusionDefinition translation, table-driven.

Every entry of ``TABLE`` maps an op name (an ATen overload packet's name
such as ``add`` for ``aten.add.Tensor``, a Python operator, a ``torch``
function or a tensor method) to a handler ``fn(ctx, node, args, kwargs)``
that defines the node's value in ``ctx.fd`` and returns it, or raises
``Unsupported`` with the reason. Handlers see concrete argument values:
nvfuser Tensors for tensor nodes of the region, recorded Python values for
everything else (ints, slices, shapes). Output shapes come from the value
the node produced when the graph was recorded, so view/expand/reshape never
need symbolic arithmetic.
"""

import operator

import torch

from ..fusion_definition import torch_dtype_to_nvfuser_dtype
from ..values import Tensor
from .._C import DataType


SPLIT_OPS = ("split", "split_with_sizes", "chunk")


class Unsupported(Exception):
    """A node the translator leaves to eager, with the reason."""


SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16,
                    torch.float64, torch.int64, torch.int32, torch.bool)


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


_OPERATORS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
              operator.truediv: "div", operator.neg: "neg",
              operator.pow: "pow", operator.getitem: "getitem",
              operator.matmul: "matmul"}


def _dims(d, rank):
    d = [d] if isinstance(d, int) else list(d)
    return [x % rank if rank else 0 for x in d]


def _shape(ctx, node):
    return list(ctx.value_of(node).shape)


def _rank(x):
    return x.ndim if isinstance(x, Tensor) else 0


def _scalar_ok(x):
    if isinstance(x, (Tensor, bool, int, float)):
        return x
    raise Unsupported("operand of type %s" % type(x).__name__)


def _binary(name, alpha_op=None):
    def fn(ctx, node, args, kwargs):
        a, b = _scalar_ok(args[0]), _scalar_ok(args[1])
        alpha = kwargs.get("alpha", args[2] if len(args) > 2 else 1)
        if alpha_op and alpha != 1:
            b = ctx.fd.ops.mul(b, alpha)
        if name == "div" and kwargs.get("rounding_mode") is not None:
            raise Unsupported("div with rounding_mode")
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            raise Unsupported("a binary op on two Python numbers")
        return ctx.broadcast_binary(getattr(ctx.fd.ops, name), a, b, node)
    return fn


def _unary(name):
    def fn(ctx, node, args, kwargs):
        return getattr(ctx.fd.ops, name)(_scalar_ok(args[0]))
    return fn


def _cast(ctx, node, args, kwargs):
    out = ctx.value_of(node)
    x = args[0]
    layout_kwargs = {k: v for k, v in kwargs.items()
                     if k not in ("dtype", "copy", "non_blocking")
                     and v is not None}
    if any(k in ("device", "layout", "memory_format") and v is not None
           for k, v in layout_kwargs.items()):
        dev = kwargs.get("device")
        if dev is not None and torch.device(dev) != out.device:
            raise Unsupported("a device change")
    return ctx.fd.ops.cast(x, torch_dtype_to_nvfuser_dtype(out.dtype))


def _to_method(ctx, node, args, kwargs):
    src = ctx.value_of(node.args[0])
    out = ctx.value_of(node)
    if out.device != src.device:
        raise Unsupported("a device change")
    return ctx.fd.ops.cast(args[0], torch_dtype_to_nvfuser_dtype(out.dtype))


def _reshape(ctx, node, args, kwargs):
    return ctx.fd.ops.reshape(args[0], _shape(ctx, node))


def _permute(ctx, node, args, kwargs):
    dims = args[1:] if len(args) > 2 or isinstance(args[1], int) else args[1]
    return ctx.fd.ops.permute(args[0], _dims(list(dims), _rank(args[0])))


def _transpose(ctx, node, args, kwargs):
    rank = _rank(args[0])
    if len(args) == 1:  # .t()
        if rank < 2:
            return args[0]
        a, b = 0, 1
    else:
        a, b = _dims(args[1], rank)[0], _dims(args[2], rank)[0]
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return ctx.fd.ops.permute(args[0], perm)


def _unsqueeze(ctx, node, args, kwargs):
    out = _shape(ctx, node)
    d = args[1] % len(out)
    keep = [i for i in range(len(out)) if i != d]
    return ctx.fd.ops.broadcast_in_dim(args[0], out, keep)


def _squeeze(ctx, node, args, kwargs):
    x = args[0]
    shape = list(ctx.value_of(node.args[0]).shape)
    if len(args) > 1:
        dims = [d for d in _dims(args[1], len(shape)) if shape[d] == 1]
    else:
        dims = [i for i, s in enumerate(shape) if s == 1]
    return ctx.fd.ops.squeeze(x, dims) if dims else x


def _expand(ctx, node, args, kwargs):
    out = _shape(ctx, node)
    x = args[0]
    r = _rank(x)
    if r < len(out):
        x = ctx.fd.ops.broadcast_in_dim(
            x, [1] * (len(out) - r) + list(ctx.value_of(node.args[0]).shape),
            list(range(len(out) - r, len(out))))
    return ctx.fd.ops.expand(x, out)


def _slice_range(args, kwargs, first, shape):
    """(dim, start, end, step) of a slice-like op whose dim argument is
    args[first], normalized against `shape` as Python slicing does."""
    def get(name, i, default):
        return kwargs.get(name, args[i] if len(args) > i else default)
    dim = _dims(get("dim", first, 0), len(shape))[0]
    start, end, step = slice(get("start", first + 1, None),
                             get("end", first + 2, None),
                             get("step", first + 3, 1)).indices(shape[dim])
    return dim, start, end, step


def _slice(ctx, node, args, kwargs):
    x = args[0]
    shape = list(ctx.value_of(node.args[0]).shape)
    dim, start, end, step = _slice_range(args, kwargs, 1, shape)
    if step != 1 and step <= 0:
        raise Unsupported("a non-positive slice step")
    starts = [0] * len(shape)
    ends = list(shape)
    strides = [1] * len(shape)
    starts[dim], ends[dim], strides[dim] = start, max(end, start), step
    return ctx.fd.ops.slice(x, starts, ends, strides)


def _getitem(ctx, node, args, kwargs):
    """Basic indexing: slices, ints (a size-1 slice, then squeezed), None
    (a new dim) and one Ellipsis."""
    x, index = args
    if isinstance(x, tuple):
        src = node.args[0]
        if not (isinstance(index, int) and op_name(src) in SPLIT_OPS):
            raise Unsupported("getitem of a tuple that is not a split")
        return x[index]  # one piece of a split
    if not isinstance(x, Tensor):
        raise Unsupported("getitem of a non-tensor")
    shape = list(ctx.value_of(node.args[0]).shape)
    index = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, (Tensor, list, bool)) or
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


def _cat(ctx, node, args, kwargs):
    tensors = list(args[0])
    dim = kwargs.get("dim", args[1] if len(args) > 1 else 0)
    if not all(isinstance(t, Tensor) for t in tensors):
        raise Unsupported("cat of non-tensors")
    return ctx.fd.ops.cat(tensors, _dims(dim, _rank(tensors[0]))[0])


def _pad(ctx, node, args, kwargs):
    pads = list(args[1])
    value = kwargs.get("value", args[2] if len(args) > 2 else 0.0)
    mode = kwargs.get("mode", "constant")
    if mode != "constant" or any(p < 0 for p in pads):
        raise Unsupported("a non-constant or negative pad")
    return ctx.fd.ops.pad(args[0], pads, value if value is not None else 0.0)


def _reduction(name):
    def fn(ctx, node, args, kwargs):
        x = args[0]
        rank = _rank(x)
        dims = kwargs.get("dim", args[1] if len(args) > 1 else None)
        keepdim = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
        if isinstance(dims, bool):  # amax(x, keepdim) is not a signature
            raise Unsupported("unexpected reduction arguments")
        dims = list(range(rank)) if dims in (None, []) else _dims(dims, rank)
        out = ctx.value_of(node)
        if name in ("max", "min") and not isinstance(out, torch.Tensor):
            raise Unsupported("max/min returning indices")
        dtype = torch_dtype_to_nvfuser_dtype(out.dtype)
        r = getattr(ctx.fd.ops, name)(x, dims, bool(keepdim))
        return ctx.fd.ops.cast(r, dtype)
    return fn


def _var(ctx, node, args, kwargs):
    x = args[0]
    rank = _rank(x)
    dims = kwargs.get("dim", args[1] if len(args) > 1 else None)
    dims = list(range(rank)) if dims in (None, []) else _dims(dims, rank)
    correction = kwargs.get("correction")
    if correction is None:
        unbiased = kwargs.get("unbiased", True)
        correction = 1 if unbiased else 0
    keepdim = kwargs.get("keepdim", False)
    return ctx.fd.ops.var(x, dims, int(correction), bool(keepdim))


def _full(ctx, node, args, kwargs):
    out = ctx.value_of(node)
    if node.op == "call_function" and op_name(node) in ("zeros", "ones"):
        value = 0 if op_name(node) == "zeros" else 1
    elif op_name(node) in ("zeros_like", "ones_like", "full_like"):
        value = {"zeros_like": 0, "ones_like": 1}.get(
            op_name(node), args[1] if len(args) > 1 else kwargs["fill_value"])
    else:
        value = args[1] if len(args) > 1 else kwargs["fill_value"]
    return ctx.fd.ops.full(list(out.shape), value,
                           torch_dtype_to_nvfuser_dtype(out.dtype))


def _arange(ctx, node, args, kwargs):
    out = ctx.value_of(node)
    if out.dim() != 1:
        raise Unsupported("arange of rank %d" % out.dim())
    nums = [a for a in args if isinstance(a, (int, float))]
    start, step = 0, 1
    if len(nums) >= 2:
        start = nums[0]
    if len(nums) >= 3:
        step = nums[2]
    start = kwargs.get("start", start)
    step = kwargs.get("step", step)
    dtype = torch_dtype_to_nvfuser_dtype(out.dtype)
    return ctx.fd.ops.iota(out.shape[0], start, step, dtype)


def _matmul(ctx, node, args, kwargs):
    if ctx.value_of(node).dtype not in (torch.float32, torch.float16,
                                        torch.bfloat16, torch.float64):
        raise Unsupported("an integer matmul")
    return ctx.fd.ops.matmul(args[0], args[1])


def _addmm(ctx, node, args, kwargs):
    beta = kwargs.get("beta", 1)
    alpha = kwargs.get("alpha", 1)
    prod = ctx.fd.ops.matmul(args[1], args[2])
    if alpha != 1:
        prod = ctx.fd.ops.mul(prod, alpha)
    bias = args[0] if beta == 1 else ctx.fd.ops.mul(args[0], beta)
    return ctx.broadcast_binary(ctx.fd.ops.add, bias, prod, node)


def _identity(ctx, node, args, kwargs):
    return ctx.fd.ops.set(args[0])


def _where(ctx, node, args, kwargs):
    if len(args) != 3:
        raise Unsupported("where with one argument")
    return ctx.broadcast_ternary(ctx.fd.ops.where, *args, node=node)


TABLE = {}
for _n in ("add", "sub"):
    TABLE[_n] = _binary(_n, alpha_op=True)
for _n in ("mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le",
           "gt", "ge", "logical_and", "logical_or", "bitwise_and",
           "bitwise_or", "bitwise_xor", "remainder", "fmod"):
    TABLE[_n] = _binary(_n)
TABLE["true_divide"] = TABLE["truediv"] = TABLE["div"]
TABLE["rsub"] = lambda ctx, node, args, kwargs: _binary("sub")(
    ctx, node, [args[1], args[0]], kwargs)
for _n in ("neg", "exp", "log", "sin", "cos", "tanh", "sigmoid", "rsqrt",
           "sqrt", "abs", "relu", "reciprocal", "silu", "erf", "floor",
           "ceil", "round", "logical_not", "bitwise_not"):
    TABLE[_n] = _unary(_n)
TABLE.update({
    "_to_copy": _cast, "convert_element_type": _cast, "to": _to_method,
    "float": _to_method, "half": _to_method, "bfloat16": _to_method,
    "double": _to_method, "type_as": _to_method,
    "view": _reshape, "reshape": _reshape, "_unsafe_view": _reshape,
    "flatten": _reshape, "permute": _permute, "transpose": _transpose,
    "t": _transpose, "unsqueeze": _unsqueeze, "squeeze": _squeeze,
    "expand": _expand, "slice": _slice, "narrow": None, "getitem": _getitem,
    "cat": _cat, "constant_pad_nd": _pad, "pad": _pad,
    "sum": _reduction("sum"), "mean": _reduction("mean"),
    "amax": _reduction("max"), "amin": _reduction("min"),
    "prod": _reduction("prod"), "var": _var,
    "full": _full, "zeros": _full, "ones": _full, "full_like": _full,
    "zeros_like": _full, "ones_like": _full, "arange": _arange,
    "mm": _matmul, "bmm": _matmul, "matmul": _matmul, "addmm": _addmm,
    "clone": _identity, "alias": _identity, "contiguous": _identity,
    "where": _where,
})


def _narrow(ctx, node, args, kwargs):
    x, dim, start, length = args[:4]
    return _slice(ctx, node, [x, dim, start, start + length], {})


TABLE["narrow"] = _narrow


def _slice_backward(ctx, node, args, kwargs):
    """The gradient of a slice: the slice's gradient padded with zeros."""
    grad = args[0]
    out = _shape(ctx, node)
    dim, start, _, step = _slice_range(args, kwargs, 2, out)
    if step != 1:
        raise Unsupported("slice_backward with a step")
    gshape = list(ctx.value_of(node.args[0]).shape)
    right = out[dim] - start - gshape[dim]
    widths = []
    for d in reversed(range(len(out))):  # torch.nn.functional.pad order
        widths += [start, right] if d == dim else [0, 0]
    return ctx.fd.ops.pad(grad, widths, 0.0)


TABLE["slice_backward"] = _slice_backward


def _slice_scatter(ctx, node, args, kwargs):
    """base with base[start:end] along dim replaced by src (step 1): the
    parts of base before and after, and src, concatenated."""
    base, src = args[0], args[1]
    out = _shape(ctx, node)
    dim, start, end, step = _slice_range(args, kwargs, 2, out)
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
    if start > 0:
        parts.insert(1, src)
    else:
        parts.insert(0, src)
    if len(parts) == 1:
        return ctx.fd.ops.set(src)
    return ctx.fd.ops.cat(parts, dim)


def _new_zeros(ctx, node, args, kwargs):
    out = ctx.value_of(node)
    return ctx.fd.ops.full(list(out.shape), 0,
                           torch_dtype_to_nvfuser_dtype(out.dtype))


def _split(ctx, node, args, kwargs):
    """split / split_with_sizes / chunk: a tuple of slices; only getitem
    may read it (the partitioner checks)."""
    x = args[0]
    pieces = ctx.value_of(node)
    shape = list(ctx.value_of(node.args[0]).shape)
    name = op_name(node)
    dim = kwargs.get("dim", args[2] if len(args) > 2 else 0)
    dim = _dims(dim, len(shape))[0]
    out = []
    start = 0
    for p in pieces:
        starts = [0] * len(shape)
        ends = list(shape)
        starts[dim], ends[dim] = start, start + p.shape[dim]
        out.append(ctx.fd.ops.slice(x, starts, ends))
        start += p.shape[dim]
    if start != shape[dim]:
        raise Unsupported("%s pieces do not cover the dim" % name)
    return tuple(out)


for _n in SPLIT_OPS:
    TABLE[_n] = _split
TABLE["slice_scatter"] = _slice_scatter
TABLE["new_zeros"] = _new_zeros
TABLE["detach"] = _identity
TABLE["lift_fresh_copy"] = _identity
TABLE["_reshape_alias"] = _reshape  # a view: same values, new sizes
# Functionalized graphs may use the *_copy forms of view ops.
for _n in ("view", "permute", "transpose", "t", "unsqueeze", "squeeze",
           "expand", "slice", "alias"):
    TABLE[_n + "_copy"] = TABLE[_n]


def translate_node(ctx, node, args, kwargs):
    name = op_name(node)
    handler = TABLE.get(name)
    if handler is None:
        raise Unsupported("no translation for %s" % name)
    return handler(ctx, node, args, kwargs)


__all__ = ["TABLE", "Unsupported", "op_name", "translate_node",
           "SUPPORTED_DTYPES", "DataType"]
