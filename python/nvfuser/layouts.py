"""Memory layouts in nvFuser's conventions.

stride_order[i] is dim i's rank by stride: 0 the innermost, rank - 1 the
outermost. Contiguity is read in allocation order (outermost first), as
nvFuser reads it: entry k belongs to the dim whose stride_order is
rank - 1 - k. The compiler core keeps contiguity per logical dim; these
helpers convert at the API boundary.
"""

import torch


def is_permutation(order, rank):
    return len(order) == rank and sorted(order) == list(range(rank))


def normalize_stride_order(order, rank, what):
    """order with negative entries wrapped (nvFuser accepts -rank..rank-1);
    ValueError naming `what` unless it is a permutation of 0..rank-1."""
    if len(order) != rank:
        raise ValueError("%s: stride_order has %d entries but the tensor "
                         "has %d dims" % (what, len(order), rank))
    wrapped = [o + rank if -rank <= o < 0 else o for o in order]
    if not is_permutation(wrapped, rank):
        raise ValueError("%s: stride_order must be a permutation of 0..%d, "
                         "got %r" % (what, rank - 1, list(order)))
    return wrapped


def outer_to_inner(stride_order):
    """Logical dims from the outermost to the innermost."""
    rank = len(stride_order)
    return sorted(range(rank), key=lambda d: rank - 1 - stride_order[d])


def contiguity_to_logical(contiguity, stride_order):
    """Allocation-ordered contiguity -> one entry per logical dim. Lists
    that do not fit (wrong length, bad order) pass through unchanged so
    the core's checks name the problem."""
    rank = len(stride_order)
    if not stride_order or len(contiguity) != rank or \
            not is_permutation(stride_order, rank):
        return list(contiguity)
    return [contiguity[rank - 1 - stride_order[d]] for d in range(rank)]


def contiguity_to_allocation(contiguity, stride_order):
    """One entry per logical dim -> allocation (outermost first) order."""
    rank = len(stride_order)
    if not stride_order or len(contiguity) != rank or \
            not is_permutation(stride_order, rank):
        return list(contiguity)
    return [contiguity[d] for d in outer_to_inner(stride_order)]


def with_stride_order(out, stride_order):
    """`out` itself when its layout already follows stride_order, else a
    dense copy laid out so (what nvFuser allocates for such an output)."""
    order = outer_to_inner(stride_order)
    expected = [0] * out.dim()
    step = 1
    for d in reversed(order):
        expected[d] = step
        step *= max(out.size(d), 1)
    if all(out.size(d) == 1 or out.stride(d) == expected[d]
           for d in range(out.dim())):
        return out
    dense = torch.empty([out.size(d) for d in order], dtype=out.dtype,
                        device=out.device)
    inverse = [order.index(d) for d in range(out.dim())]
    result = dense.permute(inverse)
    result.copy_(out)
    return result
