"""Region outputs that are views of region inputs.

A region output reached from a region input through view ops alone (a
LitGPT or Hugging Face attention's v: the fused qkv tensor viewed, permuted,
split and expanded) is a view in eager: no element moves. Computing it in
the fusion writes a dense copy, and its gapped strides then cost a second
copy into the layout the graph promises (layout.py). Instead the region
replays the view ops on the input at run time, which is what eager does:
no kernel, no bytes, and the output aliases its input as it would there.
"""

import operator

import torch

from .mutation import _flatten
from .translator import op_name

# Ops whose result is always a view of their first argument. (translator's
# VIEW_OPS are those that may alias it: reshape, flatten, contiguous and
# dtype conversions too, which may copy, so they are not here.)
ALWAYS_VIEW_OPS = frozenset([
    "view", "_unsafe_view", "_reshape_alias", "permute", "transpose", "t",
    "expand", "expand_as", "slice", "select", "squeeze", "unsqueeze",
    "alias", "narrow", "as_strided", "diagonal", "unfold", "view_as",
    "detach", "split", "split_with_sizes", "unbind", "chunk", "movedim",
    "swapaxes", "swapdims"])
_TUPLE_VIEWS = frozenset(["split", "split_with_sizes", "unbind", "chunk"])


def _is_view_step(n):
    if n.op not in ("call_function", "call_method"):
        return False
    if n.op == "call_function" and n.target is operator.getitem:
        src = n.args[0]
        return isinstance(src, torch.fx.Node) and \
            op_name(src) in _TUPLE_VIEWS and isinstance(n.args[1], int)
    if op_name(n) not in ALWAYS_VIEW_OPS or not n.args or \
            not isinstance(n.args[0], torch.fx.Node):
        return False
    others = list(n.args[1:]) + list(n.kwargs.values())
    return not any(isinstance(x, torch.fx.Node)
                   for a in others for x in _flatten(a))


def view_chain(node):
    """(placeholder, [nodes from it to `node`]) when `node` is a region
    input seen through view ops only, each reading the previous node as its
    first argument and constants otherwise; None otherwise (including the
    input itself: an output that is an input needs no chain)."""
    chain = []
    n = node
    while n.op != "placeholder":
        if not _is_view_step(n):
            return None
        chain.append(n)
        n = n.args[0]
    return (n, chain[::-1]) if chain else None


def replay(tensor, chain):
    """The chain's view of `tensor`, computed by PyTorch as eager does."""
    for n in chain:
        if n.op == "call_method":
            tensor = getattr(tensor, n.target)(*n.args[1:], **n.kwargs)
        else:
            tensor = n.target(tensor, *n.args[1:], **n.kwargs)
    return tensor
