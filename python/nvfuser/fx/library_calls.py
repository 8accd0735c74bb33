"""ATen operators with no translation run inside regions as ``aten_call``s.

Attention (``_scaled_dot_product_*_attention`` and their backwards), the
embedding's backward and any other functional ATen operator the
translator has no handler for (or whose handler refuses the arguments)
become one ``fd.ops.aten_call`` each: an ``expr_eval`` segment that calls
the operator through PyTorch's dispatcher, as eager does, so the ops
around it stay in one region instead of being split at it. A few are
called as an operator of ours with the same schema instead
(``REPLACEMENTS``): ``embedding_dense_backward`` as
``nvfuser::embedding_dense_backward``, which sums the gradient rows of
CUDA tensors with atomics into one Float row per id (no sort of the ids,
nothing Float of the table's size; ATen's kernel in deterministic mode
and above 2^23 row elements, where it was measured slower).

An operator qualifies when it is an OpOverload that writes to nothing and
returns no view (its schema has no alias annotations), every tensor
argument is a value of the region, and the results the graph reads are
plain tensors on the device of its tensor arguments (or 0-dim CPU
tensors, as attention's dropout seed; CPU scalar arguments are passed as
they are). A non-tensor return the graph reads, such as attention's
``max_q``, cannot be kept: such a node stays in eager.
Results no getitem reads are not kept at all.

Collectives never qualify, however functional their schema looks
(``_c10d_functional.all_reduce`` returns a new tensor, ``wait_tensor``
too): every rank must issue them in the same order, and a region may run
its calls in another order than eager or again at a fallback. Operators of
the namespaces in ``EAGER_NAMESPACES`` stay in eager, as do operators FX
registers as having side effects (asserts, profiler ranges)
and operators that return nothing (they are called for a side effect).
"""

import operator

import torch

from .schema import Unsupported


class LibraryResults(tuple):
    """The results of a multi-return call: a Tensor where the graph reads
    the return, None where it does not."""


# Distributed collectives (traceable functional ones of torch >= 2.1,
# their waits, the process-group ops of torch.distributed, DTensor's).
EAGER_NAMESPACES = frozenset(("_c10d_functional", "c10d_functional", "c10d",
                              "_c10d_functional_autograd", "_dtensor"))


# ATen operator -> ours with the same arguments and result, registered by
# nvfuser._C (csrc/runtime/torch_operators.h). ATen's CUDA embedding
# backward fills the whole bf16 gradient and radix-sorts the ids; ours
# sums with atomics into one Float row per id, up to the size where that
# was measured faster (embedding_backward.h: touchedRowsPays).
REPLACEMENTS = {
    "aten::embedding_dense_backward.default":
        "nvfuser::embedding_dense_backward.default",
}


def _called_as(op):
    """The operator (an OpOverload or its name) a region calls for op."""
    return REPLACEMENTS.get("%s.%s" % (op._schema.name, op._overloadname), op)


def _namespace(op):
    return op._schema.name.partition("::")[0]


def _side_effectful(op):
    """Whether FX registers op as having side effects (not Node.is_impure:
    newer torch counts seeded random operators, attention's dropout, as
    impure; those run in order inside a region as in eager)."""
    known = getattr(torch.fx.node, "_side_effectful_functions", ())
    return op in known or getattr(op, "overloadpacket", None) in known


def _overload(node):
    t = node.target
    if node.op != "call_function" or not isinstance(t, torch._ops.OpOverload):
        raise Unsupported("not an ATen operator")
    schema = t._schema
    if _namespace(t) in EAGER_NAMESPACES:
        raise Unsupported("%s is a collective of torch.distributed: it stays "
                          "in eager, in the order every rank issues it" %
                          schema.name)
    if _side_effectful(t) or not schema.returns:
        raise Unsupported("%s has side effects" % schema.name)
    if any(a.alias_info is not None
           for a in list(schema.arguments) + list(schema.returns)):
        raise Unsupported("%s writes to or returns a view of an argument" %
                          schema.name)
    return t


def read_returns(node):
    """Indices of the returns of a multi-return node that getitems read;
    Unsupported when something else reads the tuple."""
    kept = set()
    for u in node.users:
        if not (u.op == "call_function" and u.target is operator.getitem and
                isinstance(u.args[1], int)):
            raise Unsupported("its results are read by %s, not getitem" %
                              u.name)
        kept.add(u.args[1])
    return sorted(kept)


def _cpu_scalar(v):
    return isinstance(v, torch.Tensor) and v.dim() == 0 and \
        v.device.type == "cpu"


def _plain(v, device):
    """A strided tensor of a supported dtype on `device`, or a 0-dim CPU
    tensor (flash and cuDNN attention return their dropout seed so)."""
    from .translator import SUPPORTED_DTYPES
    return (isinstance(v, torch.Tensor) and v.layout == torch.strided and
            v.dtype in SUPPORTED_DTYPES and
            (v.device == device or _cpu_scalar(v)) and
            all(isinstance(s, int) for s in v.shape))


def kept_results(node, value, values):
    """(op, {return index: recorded value}) of a node that can run as an
    aten_call: a functional OpOverload whose kept results (its one return,
    or those getitems read) are plain tensors on the device of its tensor
    arguments; Unsupported otherwise."""
    op = _overload(node)
    devices = {values[a].device for a in node.all_input_nodes
               if isinstance(values.get(a), torch.Tensor) and
               not _cpu_scalar(values[a])}
    if len(devices) != 1:
        raise Unsupported("an ATen call needs tensor arguments on one device")
    device = devices.pop()
    if len(op._schema.returns) == 1:
        kept = {0: value}
    else:
        if not isinstance(value, (tuple, list)):
            raise Unsupported("%s returned no tuple" % op._schema.name)
        kept = {i: value[i] for i in read_returns(node) if i < len(value)}
    for i, v in kept.items():
        if not _plain(v, device):
            raise Unsupported("return %d of %s is not a plain tensor of a "
                              "supported dtype on %s" % (
                                  i, op._schema.name, device))
    return op, kept


def check_callable(node, value, values):
    """The OpOverload of a node that can run as an aten_call
    (kept_results); Unsupported otherwise."""
    return kept_results(node, value, values)[0]


def translate(ctx, node, args, kwargs):
    """The node as one fd.ops.aten_call: a Tensor, or LibraryResults."""
    from .elementwise import _nv
    value = ctx.value_of(node)
    op, kept = kept_results(node, value, ctx.values)
    order = sorted(kept)
    results = [(i, _nv(kept[i].dtype), [int(s) for s in kept[i].shape])
               for i in order]
    try:
        outs = ctx.fd.ops.aten_call(_called_as(op), list(args), results,
                                    dict(kwargs))
    except (TypeError, ValueError) as e:
        raise Unsupported(str(e)) from None
    if len(op._schema.returns) == 1:
        return outs[0]
    pieces = [None] * len(value)
    for i, t in zip(order, outs):
        pieces[i] = t
    return LibraryResults(pieces)
