"""add_output's options: alias_input (an in-place update of an input) and
stride_order (the output's memory layout).

The compiler computes every output as usual; these options are applied to
the results, so the core stays unaware of them: an aliased output is
copied into its input's storage and dropped from the returned list (nvFuser
hides it too), a stride-ordered output is laid out as asked.
"""

import torch

from ._validate import check_int_list
from .layouts import normalize_stride_order, with_stride_order


class OutputSpec:
    """What add_output was given besides the tensor."""

    __slots__ = ("alias_index", "alias_name", "stride_order")

    def __init__(self, alias_index=None, alias_name=None, stride_order=None):
        self.alias_index = alias_index  # position among fd.inputs()
        self.alias_name = alias_name
        self.stride_order = stride_order

    def key(self):
        return (self.alias_index, self.stride_order)

    def printed_args(self):
        """What the printed add_output line adds after the tensor."""
        if self.alias_index is not None:
            return ", alias_input=%s" % self.alias_name
        if self.stride_order is not None:
            return ", stride_order=%r" % (self.stride_order,)
        return ""


def make_spec(fd, output, alias_input, stride_order):
    """Checks add_output's options against the output; ValueError or
    TypeError naming the problem."""
    from .values import Tensor
    if alias_input is not None and stride_order is not None:
        raise ValueError("add_output: give alias_input or stride_order, not "
                         "both")
    if stride_order is not None:
        order = check_int_list("stride_order", stride_order)
        return OutputSpec(stride_order=normalize_stride_order(
            order, output.ndim, "add_output"))
    if alias_input is None:
        return OutputSpec()
    if not isinstance(alias_input, Tensor):
        raise TypeError("add_output: alias_input must be an input Tensor of "
                        "this definition, got %s" %
                        type(alias_input).__name__)
    fd._unwrap(alias_input, "add_output")
    index = next((i for i, v in enumerate(fd._inputs) if v is alias_input),
                 None)
    if index is None:
        raise ValueError("add_output: alias_input %s is not a fusion input; "
                         "only inputs can be updated in place" %
                         alias_input.name)
    if alias_input.dtype != output.dtype:
        raise TypeError("add_output: %s has dtype %s but alias_input %s has "
                        "dtype %s; cast it first" %
                        (output.name, output.dtype.name, alias_input.name,
                         alias_input.dtype.name))
    if alias_input.ndim != output.ndim:
        raise ValueError("add_output: %s has %d dims but alias_input %s has "
                         "%d" % (output.name, output.ndim, alias_input.name,
                                 alias_input.ndim))
    # The C++ printer's name of the input (t0); printed forms rename it.
    name = alias_input.name
    return OutputSpec(alias_index=index, alias_name=name[0].lower() + name[1:])


def _storage_ptr(t):
    # untyped_storage() from torch 2.0 on; storage() before.
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") \
        else t.storage()
    return storage.data_ptr()


def _shares_storage(a, b):
    return _storage_ptr(a) == _storage_ptr(b)


def apply_specs(specs, results, inputs):
    """The results the user sees: aliased outputs written into their inputs
    (after every output was computed, so all read the old values) and
    left out, stride-ordered outputs laid out as asked."""
    aliased = [(spec, out) for spec, out in zip(specs, results)
               if spec.alias_index is not None]
    kept = []
    for spec, out in zip(specs, results):
        if spec.alias_index is not None:
            continue
        if spec.stride_order is not None:
            out = with_stride_order(out, spec.stride_order)
        # An output that views an updated input keeps the values it had.
        if any(_shares_storage(out, inputs[s.alias_index]) for s, _ in
               aliased):
            out = out.clone()
        kept.append(out)
    for spec, out in aliased:
        target = inputs[spec.alias_index]
        if not isinstance(target, torch.Tensor):
            raise TypeError("execute: input %d is updated in place "
                            "(alias_input) and must be a torch.Tensor" %
                            spec.alias_index)
        if tuple(target.shape) != tuple(out.shape):
            raise ValueError(
                "execute: input %d is updated in place (alias_input) but has "
                "shape %s while the aliased output has shape %s" %
                (spec.alias_index, tuple(target.shape), tuple(out.shape)))
        if not _shares_storage(out, target) or \
                out.data_ptr() != target.data_ptr() or \
                out.stride() != target.stride():
            target.copy_(out)
    return kept
