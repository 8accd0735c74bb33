"""Translations of ATen's gathers: ``embedding`` (a token embedding: the
weight's rows at the token ids, one ``index_select``), ``index_select`` and
``gather``; and of ``scatter`` (its ``src`` and ``value`` forms, no
``reduce``: the core's out-of-place scatter). Handlers take ``(ctx, node,
p)`` like those of translator.py and are merged into its TABLE.

An index outside the looked-up dim raises IndexError on the CPU, as eager
does (the region's failure runs its graph in eager, which raises torch's
error); a generated kernel cannot raise and gives 0 there (docs/api.md),
where eager CUDA stops at a device-side assert.

``embedding_dense_backward`` (a scatter-add of the gradient rows into the
weight's gradient) has no core op: it runs inside the region as an
aten_call of ``nvfuser::embedding_dense_backward`` (library_calls.py).
"""

from ..values import Tensor
from .._C import DataType
from .schema import Unsupported

_INDEX_TYPES = (DataType.Int, DataType.Int32)
_FLOAT_TYPES = (DataType.Double, DataType.Float, DataType.Half,
                DataType.BFloat16)


def _index(x, what):
    if not isinstance(x, Tensor) or x.dtype not in _INDEX_TYPES:
        raise Unsupported("%s with an index that is not an integer tensor"
                          % what)
    return x


def _lookup(x, what):
    if not isinstance(x, Tensor):
        raise Unsupported("%s of a non-tensor" % what)
    if x.ndim == 0:
        raise Unsupported("%s of a 0-dim tensor" % what)
    return x


def _dim(d, rank, what):
    if not isinstance(d, int) or isinstance(d, bool) or \
            not -rank <= d < rank:
        raise Unsupported("%s over dim %r" % (what, d))
    return d % rank


def _embedding(ctx, node, p):
    """aten.embedding(weight, indices, padding_idx, scale_grad_by_freq,
    sparse) and F.embedding(input, weight, ...): the weight's rows at the
    ids, shaped ids.shape + [embedding_dim]. padding_idx and
    scale_grad_by_freq change only the backward."""
    if "indices" in p:
        weight, ids = p["weight"], p["indices"]
    else:  # torch.nn.functional.embedding: the ids come first
        weight, ids = p["weight"], p["self"]
        if p.get("max_norm") is not None:
            raise Unsupported("embedding with max_norm (it renormalizes the "
                              "weight in place)")
    if p.get("sparse"):
        raise Unsupported("a sparse embedding")
    weight = _lookup(weight, "embedding")
    if weight.ndim != 2:
        raise Unsupported("embedding of a %d-D weight" % weight.ndim)
    ids = _index(ids, "embedding")
    flat = ids
    if ids.ndim > 1:
        count = 1
        for s in ids.shape():
            count *= int(s)
        flat = ctx.fd.ops.reshape(ids, [count])
    rows = ctx.fd.ops.index_select(weight, flat, 0)
    return ctx.fd.ops.reshape(rows, list(ctx.value_of(node).shape))


def _index_select(ctx, node, p):
    x = _lookup(p["self"], "index_select")
    index = _index(p["index"], "index_select")
    if index.ndim > 1:
        raise Unsupported("index_select with a %d-D index" % index.ndim)
    return ctx.fd.ops.index_select(x, index, _dim(p["dim"], x.ndim,
                                                  "index_select"))


def _gather(ctx, node, p):
    x = _lookup(p["self"], "gather")
    index = _index(p["index"], "gather")
    if index.ndim != x.ndim:
        raise Unsupported("gather with an index of another rank")
    return ctx.fd.ops.gather(x, index, _dim(p["dim"], x.ndim, "gather"))


def _scatter(ctx, node, p):
    """aten.scatter.src / scatter.value (torch.scatter, x.scatter): a copy
    of self with src (a tensor of self's dtype, or a number) written at the
    index along dim. Which of duplicate indices wins is unspecified, as in
    eager."""
    if p.get("reduce") is not None:
        raise Unsupported("scatter with reduce=%r" % (p["reduce"],))
    x = _lookup(p["self"], "scatter")
    index = _index(p["index"], "scatter")
    if index.ndim != x.ndim:
        raise Unsupported("scatter with an index of another rank")
    src = p["src"] if "src" in p else p.get("value")
    if isinstance(src, Tensor):
        if src.dtype != x.dtype or src.ndim != x.ndim:
            raise Unsupported("scatter of a src of another dtype or rank")
    elif isinstance(src, bool) != (x.dtype == DataType.Bool) or \
            not isinstance(src, (bool, int, float)) or (
                isinstance(src, float) and x.dtype not in _FLOAT_TYPES):
        # (eager casts the number to self's dtype)
        raise Unsupported("scatter of %r into %s" % (src, x.dtype))
    return ctx.fd.ops.scatter(x, index, src,
                              _dim(p["dim"], x.ndim, "scatter"))


TABLE = {
    "embedding": _embedding,
    "index_select": _index_select,
    "gather": _gather,
    "scatter": _scatter,
}
