"""Translations of ATen's composite ops: softmax and its backward, the
negative log likelihood loss, activation backwards, layer norm, masks,
cumsum and factories. Each is spelled in the core's elementwise ops, reductions and
iota, the way PyTorch defines the op (its formula, not its kernel).

Handlers take ``(ctx, node, p)`` like those of translator.py and are
merged into its TABLE. Floating math runs in float for half and bfloat16
inputs, as PyTorch's kernels compute them (their "opmath" type); the
caller (translate_checked) casts the result to the recorded dtype.
"""

import math

import torch

from ..fusion_definition import torch_dtype_to_nvfuser_dtype
from ..values import Tensor
from .._C import DataType
from .schema import Unsupported

_HALF_TYPES = (DataType.Half, DataType.BFloat16)
_FLOAT_TYPES = _HALF_TYPES + (DataType.Float, DataType.Double)


def _nv(dtype):
    return torch_dtype_to_nvfuser_dtype(dtype)


def _tensor(x, what):
    if not isinstance(x, Tensor):
        raise Unsupported("%s of a non-tensor" % what)
    return x


def _opmath(ctx, x):
    """x in the type PyTorch computes it in: float for half types."""
    if isinstance(x, Tensor) and x.dtype in _HALF_TYPES:
        return ctx.fd.ops.cast(x, DataType.Float)
    return x


def _shape(x):
    return [int(s) for s in x.shape()]


def _dim(d, rank, what):
    """One dim, wrapped; a 0-dim tensor takes dim 0 or -1 only, which
    these ops do not support (PyTorch treats it as one element)."""
    if rank == 0:
        raise Unsupported("%s of a 0-dim tensor" % what)
    if not isinstance(d, int) or not -rank <= d < rank:
        raise Unsupported("%s over dim %r" % (what, d))
    return d % rank


def _out(ctx, node):
    return ctx.value_of(node)


# ---- softmax ----------------------------------------------------------------

def _softmax_parts(ctx, node, p):
    """(x - max, sum(exp(x - max))) over dim, in opmath (or in the dtype=
    asked for); the max keeps exp from overflowing, as PyTorch's kernels
    subtract it too."""
    x = _tensor(p["self"], "softmax")
    if p.get("dtype") is not None:
        x = ctx.fd.ops.cast(x, _nv(p["dtype"]))
    x = _opmath(ctx, x)
    dim = p["dim"]
    d = _dim(dim, x.ndim, "softmax")
    if _shape(x)[d] == 0:
        raise Unsupported("softmax over an empty dim")
    ops = ctx.fd.ops
    shifted = ops.sub(x, ops.max(x, [d], True))
    return shifted, ops.sum(ops.exp(shifted), [d], True)


def _softmax(ctx, node, p):
    shifted, total = _softmax_parts(ctx, node, p)
    return ctx.fd.ops.div(ctx.fd.ops.exp(shifted), total)


def _log_softmax(ctx, node, p):
    shifted, total = _softmax_parts(ctx, node, p)
    return ctx.fd.ops.sub(shifted, ctx.fd.ops.log(total))


def _softmax_backward_data(ctx, node, p):
    """d softmax: y * (g - sum(g * y))."""
    g = _opmath(ctx, _tensor(p["grad_output"], "softmax backward"))
    y = _opmath(ctx, _tensor(p["output"], "softmax backward"))
    d = _dim(p["dim"], y.ndim, "softmax backward")
    ops = ctx.fd.ops
    return ops.mul(y, ops.sub(g, ops.sum(ops.mul(g, y), [d], True)))


def _log_softmax_backward_data(ctx, node, p):
    """d log_softmax: g - exp(y) * sum(g)."""
    g = _opmath(ctx, _tensor(p["grad_output"], "log_softmax backward"))
    y = _opmath(ctx, _tensor(p["output"], "log_softmax backward"))
    d = _dim(p["dim"], y.ndim, "log_softmax backward")
    ops = ctx.fd.ops
    return ops.sub(g, ops.mul(ops.exp(y), ops.sum(g, [d], True)))


# ---- negative log likelihood ----------------------------------------------
# There is no gather: x[i, target[i]] is the sum over the class dim of x
# where the class index (an iota) equals the target.

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _nll_operands(ctx, p, what):
    """(x, target, classes, hit, valid): hit[i, c] is c == target[i],
    valid[i] is target[i] != ignore_index."""
    if p.get("weight") is not None:
        raise Unsupported("%s with class weights" % what)
    if p["reduction"] not in _REDUCTIONS:
        raise Unsupported("%s with reduction %r" % (what, p["reduction"]))
    x = _tensor(p["self"], what)
    target = _tensor(p["target"], what)
    if x.ndim not in (1, 2) or target.ndim != x.ndim - 1:
        raise Unsupported("%s of a rank-%d input" % (what, x.ndim))
    if target.dtype not in (DataType.Int, DataType.Int32):
        raise Unsupported("%s with a non-integer target" % what)
    ops = ctx.fd.ops
    shape = _shape(x)
    classes = shape[-1]
    iota = ops.broadcast_in_dim(ops.iota(classes, 0, 1, DataType.Int),
                                shape, [x.ndim - 1])
    t = ops.cast(target, DataType.Int)
    hit = ops.eq(iota, ops.broadcast_in_dim(t, shape,
                                            list(range(x.ndim - 1))))
    valid = ops.ne(t, p["ignore_index"])
    # A class index out of range (other than ignore_index) is an error in
    # PyTorch; here the item's loss is nan, never a plausible number.
    in_range = ops.logical_and(ops.ge(t, 0), ops.lt(t, classes))
    bad = ops.logical_and(valid, ops.logical_not(in_range))
    return x, hit, valid, bad, classes


def _nll_loss_forward(ctx, node, p):
    """(loss, total_weight) as aten.nll_loss_forward returns them;
    total_weight is the count of targets not ignored (0 for "none")."""
    x, hit, valid, bad, _ = _nll_operands(ctx, p, "nll_loss")
    ops = ctx.fd.ops
    x = _opmath(ctx, x)
    picked = ops.sum(ops.where(hit, x, 0.0), [x.ndim - 1], False)
    loss = ops.where(valid, ops.neg(picked), 0.0)
    loss = ops.where(bad, float("nan"), loss)
    kind = _REDUCTIONS[p["reduction"]]
    out = _out(ctx, node)
    weight_type = _nv(out[1].dtype)
    if kind == "none":
        return loss, ops.full([], 0.0, weight_type)
    count = ops.cast(valid, weight_type)
    every = list(range(loss.ndim))
    total = ops.sum(loss, every, False) if every else loss
    count = ops.sum(count, every, False) if every else count
    if kind == "mean":  # 0 / 0 is nan when every target is ignored
        total = ops.div(total, count)
    return total, count


def _nll_loss_backward(ctx, node, p):
    """-grad (over total_weight for "mean") at each target's class, 0
    elsewhere and for ignored targets."""
    _, hit, valid, _, _ = _nll_operands(ctx, p, "nll_loss backward")
    ops = ctx.fd.ops
    x = p["self"]
    shape = _shape(x)
    g = _opmath(ctx, _tensor(p["grad_output"], "nll_loss backward"))
    kind = _REDUCTIONS[p["reduction"]]
    if kind == "mean":
        g = ops.div(g, _opmath(ctx, _tensor(p["total_weight"],
                                            "nll_loss backward")))
    # "none": one gradient per item, else one for all.
    batch = list(range(x.ndim - 1)) if kind == "none" else []
    if g.ndim != len(batch):
        raise Unsupported("nll_loss backward with a grad of rank %d" % g.ndim)
    g = ops.broadcast_in_dim(g, shape, batch)
    mask = ops.logical_and(hit, ops.broadcast_in_dim(
        valid, shape, list(range(x.ndim - 1))))
    return ops.where(mask, ops.neg(g), 0.0)


# ---- activation backwards ---------------------------------------------------

def _grad_and(ctx, p, second, what):
    g = _opmath(ctx, _tensor(p["grad_output"], what))
    return g, _opmath(ctx, _tensor(p[second], what))


def _silu_backward(ctx, node, p):
    """g * s * (1 + x * (1 - s)) with s = sigmoid(x)."""
    g, x = _grad_and(ctx, p, "self", "silu backward")
    ops = ctx.fd.ops
    s = ops.sigmoid(x)
    return ops.mul(g, ops.mul(s, ops.add(1.0, ops.mul(x, ops.sub(1.0, s)))))


def _sigmoid_backward(ctx, node, p):
    """g * (1 - y) * y, y the sigmoid's output."""
    g, y = _grad_and(ctx, p, "output", "sigmoid backward")
    ops = ctx.fd.ops
    return ops.mul(ops.mul(g, ops.sub(1.0, y)), y)


def _tanh_backward(ctx, node, p):
    """g * (1 - y * y), y the tanh's output."""
    g, y = _grad_and(ctx, p, "output", "tanh backward")
    ops = ctx.fd.ops
    return ops.mul(g, ops.sub(1.0, ops.mul(y, y)))


def _threshold_backward(ctx, node, p):
    """g where x > threshold, else 0 (relu's backward with threshold 0)."""
    g = _tensor(p["grad_output"], "threshold backward")
    x = _tensor(p["self"], "threshold backward")
    t = p["threshold"]
    if not isinstance(t, (int, float)) or isinstance(t, bool):
        raise Unsupported("threshold backward with a threshold of type %s"
                          % type(t).__name__)
    return ctx.broadcast_ternary(ctx.fd.ops.where, ctx.fd.ops.le(x, t), 0,
                                 g, node)


def _gelu(ctx, node, p):
    """x * Phi(x) (approximate="none"), or PyTorch's tanh approximation
    0.5 x (1 + tanh(k (x + c x^3))) (Gemma's MLP), in float."""
    x = _opmath(ctx, _tensor(p["self"], "gelu"))
    ops = ctx.fd.ops
    approximate = p.get("approximate", "none")
    if approximate == "none":
        cdf = ops.add(1.0, ops.erf(ops.mul(x, math.sqrt(0.5))))
        return ops.mul(ops.mul(x, 0.5), cdf)
    if approximate == "tanh":
        k, c = math.sqrt(2.0 / math.pi), 0.044715
        inner = ops.mul(k, ops.add(x, ops.mul(c, ops.mul(ops.mul(x, x), x))))
        return ops.mul(ops.mul(x, 0.5), ops.add(1.0, ops.tanh(inner)))
    raise Unsupported("gelu with approximate=%r" % (approximate,))


def _gelu_backward(ctx, node, p):
    g, x = _grad_and(ctx, p, "self", "gelu backward")
    approximate = p.get("approximate", "none")
    if approximate == "none":
        return _gelu_erf_backward(ctx, g, x)
    if approximate == "tanh":
        return _gelu_tanh_backward(ctx, g, x)
    raise Unsupported("gelu backward with approximate=%r" % (approximate,))


def _gelu_erf_backward(ctx, g, x):
    """d/dx x * Phi(x) = Phi(x) + x * phi(x)."""
    ops = ctx.fd.ops
    cdf = ops.mul(0.5, ops.add(1.0, ops.erf(ops.mul(x, math.sqrt(0.5)))))
    pdf = ops.mul(ops.exp(ops.mul(-0.5, ops.mul(x, x))),
                  1.0 / math.sqrt(2.0 * math.pi))
    return ops.mul(g, ops.add(cdf, ops.mul(x, pdf)))


def _gelu_tanh_backward(ctx, g, x):
    """d/dx 0.5 x (1 + tanh(k (x + c x^3))), k = sqrt(2 / pi)."""
    ops = ctx.fd.ops
    k, c = math.sqrt(2.0 / math.pi), 0.044715
    x2 = ops.mul(x, x)
    t = ops.tanh(ops.mul(k, ops.add(x, ops.mul(c, ops.mul(x2, x)))))
    d_inner = ops.mul(k, ops.add(1.0, ops.mul(3.0 * c, x2)))
    d_tanh = ops.mul(ops.sub(1.0, ops.mul(t, t)), d_inner)
    d = ops.add(ops.mul(0.5, ops.add(1.0, t)),
                ops.mul(ops.mul(0.5, x), d_tanh))
    return ops.mul(g, d)


# ---- normalization ----------------------------------------------------------

def _var_mean(ctx, node, p):
    """aten.var_mean: (var, mean), dividing by max(0, N - correction)."""
    x = _opmath(ctx, _tensor(p["self"], "var_mean"))
    dims = p.get("dim")
    dims = list(range(x.ndim)) if not dims else [
        _dim(d, x.ndim, "var_mean") for d in dims]
    correction = p.get("correction")
    if correction is None:
        correction = 1 if p.get("unbiased", True) else 0
    if not isinstance(correction, int):
        raise Unsupported("var_mean with a non-integer correction")
    count = 1
    for d in dims:
        count *= _shape(x)[d]
    return ctx.fd.ops.var_mean(x, dims, min(correction, count),
                               bool(p.get("keepdim", False)))


def _normalized_dims(x, normalized_shape, what):
    """The trailing dims of x that normalized_shape names (Unsupported when
    it does not name x's trailing sizes)."""
    norm = list(normalized_shape)
    k = len(norm)
    if k == 0 or k > x.ndim or _shape(x)[x.ndim - k:] != norm:
        raise Unsupported("%s over shape %s" % (what, norm))
    return list(range(x.ndim - k, x.ndim))


def _native_layer_norm(ctx, node, p):
    """(out, mean, rstd) over the trailing normalized_shape dims; mean and
    rstd keep those dims as size 1, as aten.native_layer_norm does."""
    x = _opmath(ctx, _tensor(p["self"], "layer norm"))
    dims = _normalized_dims(x, p["normalized_shape"], "layer norm")
    ops = ctx.fd.ops
    var, mean = ops.var_mean(x, dims, 0, True)
    rstd = ops.rsqrt(ops.add(var, float(p["eps"])))
    out = ops.mul(ops.sub(x, mean), rstd)
    shape = _shape(x)
    for name, op in (("weight", ops.mul), ("bias", ops.add)):
        if p.get(name) is not None:
            w = _opmath(ctx, _tensor(p[name], "layer norm"))
            out = op(out, ctx.to_shape(w, shape))
    return out, mean, rstd


def _native_layer_norm_backward(ctx, node, p):
    """(grad_input, grad_weight, grad_bias) of aten.native_layer_norm, those
    output_mask asks for (None otherwise). With xhat = (x - mean) * rstd
    and g = grad_out * weight over the N normalized elements: grad_input =
    rstd / N * (N g - sum(g) - xhat sum(g xhat)); the weight and bias
    gradients sum grad_out * xhat and grad_out over the other dims (column
    sums the row kernel computes next to grad_input)."""
    what = "layer norm backward"
    ops = ctx.fd.ops
    x = _opmath(ctx, _tensor(p["input"], what))
    dy = _opmath(ctx, _tensor(p["grad_out"], what))
    mean = _opmath(ctx, _tensor(p["mean"], what))
    rstd = _opmath(ctx, _tensor(p["rstd"], what))
    inner = _normalized_dims(x, p["normalized_shape"], what)
    if mean.ndim != x.ndim or rstd.ndim != x.ndim:
        raise Unsupported("%s with mean/rstd of rank %d/%d, input %d" % (
            what, mean.ndim, rstd.ndim, x.ndim))
    shape = _shape(x)
    outer = list(range(inner[0]))
    n = 1
    for d in inner:
        n *= shape[d]
    mask = list(p.get("output_mask") or (True, True, True))
    xhat = ops.mul(ops.sub(x, mean), rstd)
    w = p.get("weight")
    g = dy if w is None else ops.mul(
        dy, ctx.to_shape(_opmath(ctx, _tensor(w, what)), shape))

    def over_rows(v):  # a sum over the other dims (none: v itself)
        return ops.sum(v, outer) if outer else v
    grad_input = grad_weight = grad_bias = None
    if mask[0]:
        s1 = ops.sum(g, inner, keepdim=True)
        s2 = ops.sum(ops.mul(g, xhat), inner, keepdim=True)
        grad_input = ops.mul(
            ops.mul(rstd, 1.0 / n),
            ops.sub(ops.sub(ops.mul(g, float(n)), s1), ops.mul(xhat, s2)))
    if mask[1] and w is not None:
        grad_weight = over_rows(ops.mul(dy, xhat))
    if mask[2] and p.get("bias") is not None:
        grad_bias = over_rows(dy)
    return grad_input, grad_weight, grad_bias


# ---- masks ------------------------------------------------------------------

def _masked_fill(ctx, node, p):
    """where(mask, value, self); a tensor value is 0-dim."""
    x = _tensor(p["self"], "masked_fill")
    value = p["value"]
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise Unsupported("masked_fill with a value of rank %d" %
                              value.ndim)
        value = ctx.fd.ops.cast(value, x.dtype)
    elif isinstance(value, bool) != (x.dtype == DataType.Bool) or \
            not isinstance(value, (bool, int, float)):
        raise Unsupported("masked_fill of %s with %r" % (x.dtype, value))
    elif x.dtype in _FLOAT_TYPES:
        value = float(value)  # an int would make the where integral
    return ctx.broadcast_ternary(ctx.fd.ops.where, p["mask"], value, x,
                                 node)


def _triu(ctx, node, p):
    """triu: the core's op (an iota mask and a where once concretized)."""
    x = _tensor(p["self"], "triu")
    if x.ndim < 2:
        raise Unsupported("triu of a rank-%d tensor" % x.ndim)
    return ctx.fd.ops.triu(x, p.get("diagonal", 0))


def _cumsum(ctx, node, p):
    """cumsum(self, dim, dtype=None): the core's op (an ATen call), on
    self cast to dtype when one is given; integers and bools sum in Int,
    as eager."""
    x = _tensor(p["self"], "cumsum")
    if p.get("dtype") is not None:
        x = ctx.fd.ops.cast(x, _nv(p["dtype"]))
    if x.dtype not in _FLOAT_TYPES + (DataType.Int, DataType.Int32,
                                      DataType.Bool):
        raise Unsupported("cumsum of %s" % x.dtype)
    return ctx.fd.ops.cumsum(x, p["dim"])


def _tril(ctx, node, p):
    """tril (nvFuser has no tril op): keep x where col - row <= diagonal in
    the last two dims, else zero."""
    x = _tensor(p["self"], "tril")
    if x.ndim < 2:
        raise Unsupported("tril of a rank-%d tensor" % x.ndim)
    ops = ctx.fd.ops
    shape = _shape(x)
    rows, cols = shape[-2], shape[-1]
    r = ops.broadcast_in_dim(ops.iota(rows, 0, 1, DataType.Int),
                             [rows, cols], [0])
    c = ops.broadcast_in_dim(ops.iota(cols, 0, 1, DataType.Int),
                             [rows, cols], [1])
    keep = ctx.to_shape(ops.le(ops.sub(c, r), p.get("diagonal", 0)), shape)
    if x.dtype == DataType.Bool:
        return ops.logical_and(keep, x)
    return ops.where(keep, x, 0)


# ---- factories --------------------------------------------------------------

def _filled(ctx, node, value):
    """The recorded shape and dtype filled with a Python number or a 0-dim
    fusion tensor."""
    out = _out(ctx, node)
    dtype = _nv(out.dtype)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise Unsupported("fill with a value of rank %d" % value.ndim)
        return ctx.fd.ops.broadcast_in_dim(ctx.fd.ops.cast(value, dtype),
                                           list(out.shape), [])
    if not isinstance(value, (bool, int, float)):
        raise Unsupported("fill with a value of type %s" %
                          type(value).__name__)
    kind = float if out.dtype.is_floating_point else \
        bool if out.dtype == torch.bool else int
    return ctx.fd.ops.full(list(out.shape), kind(value), dtype)


def _scalar_tensor(ctx, node, p):
    return _filled(ctx, node, p["s"])


def _fill(ctx, node, p):
    return _filled(ctx, node, p["value"])


def _new_full(ctx, node, p):
    return _filled(ctx, node, p["fill_value"])


def _empty(ctx, node, p):
    """Uninitialized memory may hold anything: zeros are one such value.
    (Whoever writes to it in place stays in eager.)"""
    return _filled(ctx, node, 0)


TABLE = {
    "_softmax": _softmax, "softmax": _softmax,
    "_log_softmax": _log_softmax, "log_softmax": _log_softmax,
    "_softmax_backward_data": _softmax_backward_data,
    "_log_softmax_backward_data": _log_softmax_backward_data,
    "nll_loss_forward": _nll_loss_forward,
    "nll_loss_backward": _nll_loss_backward,
    "silu_backward": _silu_backward, "sigmoid_backward": _sigmoid_backward,
    "tanh_backward": _tanh_backward, "gelu_backward": _gelu_backward,
    "gelu": _gelu,
    "threshold_backward": _threshold_backward,
    "var_mean": _var_mean, "native_layer_norm": _native_layer_norm,
    "native_layer_norm_backward": _native_layer_norm_backward,
    "masked_fill": _masked_fill, "tril": _tril, "triu": _triu,
    "cumsum": _cumsum,
    "scalar_tensor": _scalar_tensor, "fill": _fill, "new_full": _new_full,
    "full_like": _new_full,
    "empty_like": _empty, "new_empty": _empty, "empty": _empty,
    "empty_strided": _empty, "new_empty_strided": _empty,
}

# Ops whose value is a tuple of tensors, read by getitem.
TUPLE_OPS = ("nll_loss_forward", "var_mean", "native_layer_norm",
             "native_layer_norm_backward")
