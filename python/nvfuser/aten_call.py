"""fd.ops.aten_call: an ATen operator called by name inside a fusion.

The compiler does not generate every kernel: attention, the embedding's
backward and other library kernels are ATen's. ``aten_call`` puts such a
call into a definition (it runs as the one ATen op of an ``expr_eval``
segment, through PyTorch's dispatcher, as eager would call it) so the ops
around it still fuse. This module reads the operator's schema and flattens
the call into what the core stores: each argument in schema order as a
fusion input or a constant, and for each result the fusion keeps its return
index, dtype and shape (each dim a size or ``(tensor, dim)``: the extent of a dim of a
tensor argument).
"""

import torch

from .values import Scalar, Tensor
from ._C import DataType


def _resolve(op):
    """(qualified name "ns::name.overload", schema) of an OpOverload or of
    its name; ValueError when PyTorch has no such operator."""
    if isinstance(op, torch._ops.OpOverload):
        return "%s.%s" % (op._schema.name, op._overloadname), op._schema
    if not isinstance(op, str):
        raise TypeError("aten_call: op must be an OpOverload (torch.ops.aten."
                        "topk.default) or its name ('aten::topk'), got %s" %
                        type(op).__name__)
    qualified, _, overload = op.partition(".")
    ns, sep, name = qualified.partition("::")
    if not sep or not ns or not name:
        raise ValueError("aten_call: '%s' is not an operator name "
                         "(namespace::name[.overload])" % op)
    try:
        packet = getattr(getattr(torch.ops, ns), name)
        overload_op = getattr(packet, overload or "default")
    except (AttributeError, RuntimeError):
        raise ValueError("aten_call: this PyTorch has no operator %s" %
                         op) from None
    return "%s.%s" % (qualified, overload or "default"), overload_op._schema


def _type_name(arg):
    return str(arg.type)


def _check_functional(name, schema):
    for a in list(schema.arguments) + list(schema.returns):
        if a.alias_info is not None:
            raise ValueError("aten_call: %s writes to an argument or returns "
                             "a view of one; only functional operators can "
                             "be called in a fusion" % name)


def _arguments(name, schema, args, kwargs):
    """The values of schema's arguments up to the last one given, in
    schema order; a gap takes the argument's default."""
    params = list(schema.arguments)
    if len(args) > len(params):
        raise TypeError("aten_call: %s takes %d arguments, got %d" %
                        (name, len(params), len(args)))
    values = list(args)
    by_name = {p.name: i for i, p in enumerate(params)}
    missing = object()
    for key, v in (kwargs or {}).items():
        if key not in by_name:
            raise TypeError("aten_call: %s has no argument '%s'" % (name, key))
        i = by_name[key]
        if i < len(args):
            raise TypeError("aten_call: %s got argument '%s' twice" %
                            (name, key))
        values += [missing] * (i + 1 - len(values))
        values[i] = v
    for i, v in enumerate(values):
        if v is missing:
            if not params[i].has_default_value():
                raise TypeError("aten_call: %s needs argument '%s'" %
                                (name, params[i].name))
            values[i] = params[i].default_value
    for p in params[len(values):]:
        if not p.has_default_value():
            raise TypeError("aten_call: %s needs argument '%s'" %
                            (name, p.name))
    return values, params


_INT_TYPES = (DataType.Int, DataType.Int32)
# Schema types of lists of tensors: Tensor[] and Tensor?[] (None allowed).
_TENSOR_LISTS = ("List[Tensor]", "List[Optional[Tensor]]")
_FLOAT_TYPES = (DataType.Double, DataType.Float, DataType.Half,
                DataType.BFloat16)


def _number(v, kinds):
    """v is a Python number or fusion scalar of one of kinds ("bool",
    "int", "float")."""
    if isinstance(v, Scalar):
        return ("bool" in kinds and v.dtype == DataType.Bool) or \
            ("int" in kinds and v.dtype in _INT_TYPES) or \
            ("float" in kinds and v.dtype in _FLOAT_TYPES)
    if isinstance(v, bool):
        return "bool" in kinds
    if isinstance(v, int):
        return "int" in kinds
    return isinstance(v, float) and "float" in kinds


def _accepts(type_name, v):
    """Whether v can be passed for an argument of the schema type."""
    t = type_name
    optional = t.startswith("Optional[") and t.endswith("]")
    if optional:
        t = t[len("Optional["):-1]
    elif t.endswith("?"):
        optional, t = True, t[:-1]
    if optional and v is None:
        return True
    if t == "Tensor":
        return isinstance(v, Tensor) or v is None
    if t in ("int", "SymInt"):
        return _number(v, ("int",))
    if t == "float":
        return _number(v, ("int", "float"))
    if t == "bool":
        return _number(v, ("bool",))
    if t in ("Scalar", "number"):
        return _number(v, ("bool", "int", "float"))
    if t.startswith(("List[int]", "List[SymInt]", "int[", "SymInt[")):
        return (isinstance(v, int) and not isinstance(v, bool)) or (
            isinstance(v, (list, tuple)) and all(
                isinstance(x, int) and not isinstance(x, bool) for x in v))
    if t == "str":
        return isinstance(v, str)
    if t in _TENSOR_LISTS:
        none_ok = t != "List[Tensor]"
        return isinstance(v, (list, tuple)) and all(
            isinstance(x, Tensor) or (none_ok and x is None) for x in v)
    return False


def _flat_argument(fd, name, param, v, inputs):
    """(kind, value) for the core; fusion values join `inputs`."""
    what = "aten_call: %s argument '%s'" % (name, param.name)
    type_name = _type_name(param)
    if not _accepts(type_name, v):
        got = v.dtype.name + " scalar" if isinstance(v, Scalar) else \
            "a Tensor" if isinstance(v, Tensor) else repr(v)
        raise TypeError("%s is %s, got %s (arguments of the fusion: Tensor, "
                        "numbers, bool, lists of ints, lists of Tensor, str, "
                        "None)" % (what, type_name, got))
    if isinstance(v, (Tensor, Scalar)):
        inputs.append(fd._unwrap(v, what))
        return ("input", len(inputs) - 1)
    if v is None:
        return ("none", None)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int):
        return ("int", v) if "[" not in type_name else ("ints", [v])
    if isinstance(v, float):
        return ("double", v)
    if type_name in _TENSOR_LISTS:
        items = []
        for x in v:
            if x is not None:
                inputs.append(fd._unwrap(x, what))
            items.append(None if x is None else len(inputs) - 1)
        return ("tensors", items)
    if isinstance(v, (list, tuple)):
        return ("ints", list(v))
    if v.isascii() and v.isprintable():
        return ("str", v)
    raise TypeError("%s: the string %r is not printable ASCII" % (what, v))


def _flat_results(fd, name, schema, results, inputs):
    returns = list(schema.returns)
    if not isinstance(results, (list, tuple)) or not results:
        raise TypeError("aten_call: results must be a non-empty list of "
                        "(return index, dtype, shape)")
    flat = []
    for r in results:
        if not (isinstance(r, (list, tuple)) and len(r) == 3):
            raise TypeError("aten_call: each result is (return index, "
                            "dtype, shape), got %r" % (r,))
        index, dtype, shape = r
        if isinstance(index, bool) or not isinstance(index, int) or \
                not 0 <= index < len(returns):
            raise ValueError("aten_call: %s has %d returns; no return %r" %
                             (name, len(returns), index))
        if _type_name(returns[index]) != "Tensor":
            raise TypeError("aten_call: return %d of %s is a %s, not a "
                            "Tensor" % (index, name,
                                        _type_name(returns[index])))
        if not isinstance(dtype, DataType):
            raise TypeError("aten_call: the dtype of return %d must be a "
                            "DataType, got %r" % (index, dtype))
        flat.append((index, dtype, [_flat_extent(fd, name, index, s, inputs)
                                    for s in shape]))
    return flat


def _flat_extent(fd, name, index, s, inputs):
    what = "aten_call: %s return %d shape" % (name, index)
    if isinstance(s, int) and not isinstance(s, bool):
        if s < 0:
            raise ValueError("%s has negative size %d" % (what, s))
        return (-1, 0, s)
    if isinstance(s, (list, tuple)) and len(s) == 2 and \
            isinstance(s[0], Tensor) and isinstance(s[1], int):
        val = fd._unwrap(s[0], what)
        for k, x in enumerate(inputs):
            if x is val:
                return (k, s[1], 0)
        raise ValueError("%s refers to %s, which is not an argument of the "
                         "call" % (what, s[0].name))
    raise TypeError("%s entries are sizes or (tensor argument, dim), got %r"
                    % (what, s))


def aten_call(fd, op, args, results, kwargs=None):
    """Flattens the call and builds it; returns the kept results'
    _C.Vals."""
    from . import _C
    name, schema = _resolve(op)
    _check_functional(name, schema)
    if not isinstance(args, (list, tuple)):
        raise TypeError("aten_call: args must be a list")
    values, params = _arguments(name, schema, list(args), kwargs)
    inputs = []
    flat_args = [_flat_argument(fd, name, p, v, inputs)
                 for p, v in zip(params, values)]
    flat_results = _flat_results(fd, name, schema, results, inputs)
    if not any(v.is_tensor for v in inputs):
        raise ValueError("aten_call: %s needs at least one tensor of the "
                         "fusion among its arguments" % name)
    return _C.ops.aten_call(name, inputs, flat_args, flat_results)
