"""Reads an FX node's arguments through its op's signature.

``normalize(node, args, kwargs, recorded)`` turns the positional and keyword
arguments of any supported call (an ATen OpOverload, a ``torch`` function, a
Tensor method, a Python-level torch function such as ``torch.split``, a
Python operator) into one ``Params`` dict: argument name -> value, defaults
filled in. Handlers then read ``p["dim"]`` and never guess at positions, so
``torch.var(x, 0, False)``, ``x.var(0, unbiased=False)`` and
``aten.var.dim(x, [0], False)`` all read the same way.

Where the op has several overloads (``torch.div`` with a Tensor or a number,
``var`` with ``unbiased`` or ``correction``), the overload is picked as
PyTorch's argument parser picks it: by the types of the *recorded* argument
values (what the node's inputs evaluated to), first match wins. An argument
list that no signature accepts raises ``Unsupported``: the node stays in
eager, which reports whatever PyTorch reports.

The first tensor argument is always named ``self`` (ATen's name), whatever
the Python-level function calls it (``input``, ``tensor``, ``a``).
"""

import functools
import inspect

import torch


class Unsupported(Exception):
    """A node the translator leaves to eager, with the reason."""


# Names a Python-level signature may give the leading tensor; all read as
# "self" so one handler serves torch.f(input=x), x.f() and aten.f(self=x).
_SELF_ALIASES = ("self", "input", "tensor", "a")

# JIT schemas type these enum arguments as int; Python passes the enum
# objects (torch.float32, torch.strided, torch.contiguous_format).
_ENUM_ARGUMENTS = {"dtype": torch.dtype, "layout": torch.layout,
                   "memory_format": torch.memory_format}


class Params(dict):
    """Argument name -> value for one call, defaults included; ``schema``
    names the signature that matched (for messages)."""

    def __init__(self, values, schema):
        super().__init__(values)
        self.schema = schema


class _Param:
    """One argument of a signature: its name, whether it may be passed
    positionally, its default, and a check of a recorded value's type."""

    def __init__(self, name, kwarg_only=False, default=inspect.Parameter.empty,
                 accepts=None, single_as_list=False, is_int_list=False):
        self.name = name
        self.kwarg_only = kwarg_only
        self.default = default
        self.accepts = accepts or (lambda v: True)
        # int[1] dim: a single int stands for a one-element list.
        self.single_as_list = single_as_list
        self.is_int_list = is_int_list

    @property
    def required(self):
        return self.default is inspect.Parameter.empty


class _Signature:
    def __init__(self, name, params, varargs=False, varkw=False,
                 check_types=True):
        self.name = name
        self.params = params
        self.varargs = varargs  # a Python *args: extra positionals allowed
        self.varkw = varkw
        # Off for an OpOverload: its one schema is the one meant, and traced
        # ATen graphs pass Python numbers where it says Tensor.
        self.check_types = check_types


# ---- value type checks (PyTorch's argument parser, simplified) ------------

def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _numbers_as_tensors(op):
    """PyTorch's parser lets a few ops (add, div, ...: torch.div(2.0, t))
    take a Python number where the schema says Tensor."""
    allow = getattr(torch._C, "_should_allow_numbers_as_tensors", None)
    if allow is not None:
        return allow(op)
    return op in ("add", "sub", "mul", "div", "true_divide", "floor_divide")


def _type_check(jit_type, name, numbers_as_tensors=False):
    """A predicate on recorded values for one JIT argument type."""
    kind = jit_type.kind()
    if kind == "OptionalType":
        inner = _type_check(jit_type.getElementType(), name,
                            numbers_as_tensors)
        return lambda v: v is None or inner(v)
    if kind == "TensorType":
        if numbers_as_tensors:
            return lambda v: isinstance(v, (torch.Tensor, int, float))
        return lambda v: isinstance(v, torch.Tensor)
    if kind in ("IntType", "SymIntType"):
        enum = _ENUM_ARGUMENTS.get(name)
        if enum is not None:
            return lambda v: isinstance(v, enum)
        return _is_int
    if kind == "FloatType":
        return lambda v: isinstance(v, (int, float)) and not isinstance(
            v, bool)
    if kind == "BoolType":
        return lambda v: isinstance(v, bool)
    if kind == "NumberType":
        return lambda v: isinstance(v, (int, float, complex))
    if kind == "StringType":
        return lambda v: isinstance(v, str)
    if kind == "DeviceObjType":
        return lambda v: isinstance(v, (torch.device, str)) or _is_int(v)
    if kind == "ListType":
        inner = _type_check(jit_type.getElementType(), name)
        return lambda v: isinstance(v, (list, tuple)) and all(
            inner(x) for x in v)
    if kind == "GeneratorType":
        return lambda v: isinstance(v, torch.Generator)
    if kind == "AnyType":
        return lambda v: True
    return lambda v: False  # a type we do not model: never a match


def _int_list_element(jit_type):
    """The element type of an int[] (or int[]?) argument, else None."""
    if jit_type.kind() == "OptionalType":
        jit_type = jit_type.getElementType()
    if jit_type.kind() != "ListType":
        return None
    element = jit_type.getElementType()
    return element if element.kind() in ("IntType", "SymIntType") else None


def _from_jit_schema(schema):
    params = []
    numbers = _numbers_as_tensors(schema.name.split("::")[-1])
    for a in schema.arguments:
        default = a.default_value if a.has_default_value() else \
            inspect.Parameter.empty
        check = _type_check(a.type, a.name, numbers)
        element = _int_list_element(a.type)
        single = element is not None and a.N is not None
        if single:  # int[1] dim also takes one int
            check = (lambda c, one: lambda v: c(v) or one(v))(
                check, _type_check(element, a.name))
        params.append(_Param(a.name, a.kwarg_only, default, check, single,
                             element is not None))
    if params and params[0].name in _SELF_ALIASES:
        params[0].name = "self"
    name = schema.name + ("." + schema.overload_name
                          if schema.overload_name else "")
    return _Signature(name, params)


def _from_python(fn, name):
    """A Python function's signature; its types are not checked."""
    sig = inspect.signature(fn)
    params = []
    varargs = varkw = False
    for i, p in enumerate(sig.parameters.values()):
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            varargs = True
            continue
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            varkw = True
            continue
        pname = "self" if i == 0 and p.name in _SELF_ALIASES else p.name
        params.append(_Param(pname, p.kind is inspect.Parameter.KEYWORD_ONLY,
                             p.default))
    return _Signature(name, params, varargs=varargs, varkw=varkw)


# ---- signatures of targets without an ATen schema -------------------------

def _unary_operator(self):
    pass


def _binary_operator(self, other):
    pass


def _pow_operator(self, exponent):
    pass


def _getitem_operator(self, index):
    pass


def _setitem_operator(self, index, value):
    pass


def _conversion_method(self, memory_format=torch.preserve_format):
    pass


_OPERATOR_SIGNATURES = {
    "neg": _unary_operator, "pos": _unary_operator,
    "invert": _unary_operator, "not_": _unary_operator,
    "abs": _unary_operator, "pow": _pow_operator, "ipow": _pow_operator,
    "getitem": _getitem_operator, "setitem": _setitem_operator,
}

# Tensor methods that are not ATen ops (x.float() is aten::to underneath).
_METHOD_SIGNATURES = {n: _conversion_method for n in (
    "float", "half", "double", "bfloat16", "int", "long", "short", "bool",
    "byte", "char", "cpu")}


@functools.lru_cache(maxsize=None)
def _aten_signatures(name):
    return tuple(_from_jit_schema(s) for s in
                 torch._C._jit_get_schemas_for_operator("aten::" + name))


def _python_callable(fn):
    """Whether fn is a Python function (inspect can read its signature),
    not a C builtin whose signature lives in an ATen schema."""
    return inspect.isfunction(fn) or inspect.ismethod(fn)


def signatures(node):
    """Candidate signatures of a call node, in the order to try them."""
    target = node.target
    if node.op == "call_method":
        if target in _METHOD_SIGNATURES:
            return (_from_python(_METHOD_SIGNATURES[target], target),)
        fn = getattr(torch.Tensor, target, None)
        if _python_callable(fn):
            return (_from_python(fn, target),)
        return _aten_signatures(target)
    if node.op != "call_function":
        return ()
    schema = getattr(target, "_schema", None)
    if isinstance(schema, torch._C.FunctionSchema):  # an OpOverload
        sig = _from_jit_schema(schema)
        sig.check_types = False
        return (sig,)
    if getattr(target, "__module__", None) == "_operator":
        name = target.__name__
        fn = _OPERATOR_SIGNATURES.get(name, _binary_operator)
        return (_from_python(fn, "operator." + name),)
    if _python_callable(target):
        return (_from_python(target, getattr(target, "__name__", "?")),)
    packet = getattr(target, "overloadpacket", None)
    name = packet.__name__ if packet is not None else getattr(
        target, "__name__", None)
    return _aten_signatures(name) if name else ()


# ---- binding -----------------------------------------------------------

def _pack_int_varargs(sig, args, is_method):
    """PyTorch's parser lets an op whose one positional argument (besides
    self) is an int list take the ints spread out: x.view(2, 3),
    torch.zeros(2, 3), x.permute(1, 0). Returns the packed args, or None
    where the rule does not apply."""
    first = 1 if is_method else 0
    positional = [p for p in sig.params[first:] if not p.kwarg_only]
    if len(positional) != 1 or not positional[0].is_int_list:
        return None
    rest = args[first:]
    if not rest or not all(_is_int(v) for v in rest):
        return None
    return tuple(args[:first]) + (tuple(rest),)


def _bind(sig, args, kwargs):
    """name -> value for one signature, or None where it does not fit."""
    positional = [p for p in sig.params if not p.kwarg_only]
    if len(args) > len(positional) and not sig.varargs:
        return None
    bound = {}
    for p, v in zip(positional, args):
        bound[p.name] = v
    if len(args) > len(positional):
        bound["*args"] = tuple(args[len(positional):])
    names = {p.name for p in sig.params}
    for k, v in kwargs.items():
        if k in _SELF_ALIASES and "self" in names and k not in names:
            k = "self"
        if k in bound or (k not in names and not sig.varkw):
            return None
        bound[k] = v
    for p in sig.params:
        if p.name not in bound:
            if p.required:
                return None
            bound[p.name] = p.default
    return bound


def _types_match(sig, bound, given):
    """Whether the given (not defaulted) arguments have the types the
    signature asks for."""
    if not sig.check_types:
        return True
    by_name = {p.name: p for p in sig.params}
    return all(by_name[k].accepts(bound[k]) for k in given if k in by_name)


def normalize(node, args, kwargs, recorded):
    """Params for a call node. `args`/`kwargs` are the values the handler
    works with (nvfuser Tensors for region tensors); `recorded` maps an FX
    node to the value it produced on the example inputs and decides which
    overload fits. Raises Unsupported when no signature accepts the call."""
    rec_args = torch.fx.node.map_arg(node.args, recorded)
    rec_kwargs = torch.fx.node.map_arg(node.kwargs, recorded)
    args, kwargs = tuple(args), dict(kwargs)
    rec_args, rec_kwargs = tuple(rec_args), dict(rec_kwargs)
    is_method = node.op == "call_method"
    candidates = signatures(node)
    for sig in candidates:
        for a, ra in _arrangements(sig, args, rec_args, is_method):
            bound_rec = _bind(sig, ra, rec_kwargs)
            if bound_rec is None or not _types_match(
                    sig, bound_rec, _given(sig, ra, rec_kwargs)):
                continue
            bound = _bind(sig, a, kwargs)
            _expand_single_ints(sig, bound)
            return Params(bound, sig.name)
    if not candidates:
        raise Unsupported("no known signature for %s" % _describe(node))
    raise Unsupported("arguments match no signature of %s" %
                      _describe(node))


def _given(sig, args, kwargs):
    """Names of the arguments the call passed (the rest are defaults)."""
    positional = [p.name for p in sig.params if not p.kwarg_only]
    names = positional[:len(args)]
    names += ["self" if k in _SELF_ALIASES and "self" in positional[:1]
              else k for k in kwargs]
    return names


def _arrangements(sig, args, rec_args, is_method):
    """The positional arguments (handler's, recorded) as given, then packed
    by the int-varargs rule where it applies."""
    yield args, rec_args
    packed = _pack_int_varargs(sig, args, is_method)
    packed_rec = _pack_int_varargs(sig, rec_args, is_method)
    if packed is not None and packed_rec is not None:
        yield packed, packed_rec


def _expand_single_ints(sig, bound):
    """int[1] arguments given one int become a one-element list."""
    for p in sig.params:
        if p.single_as_list and _is_int(bound.get(p.name)):
            bound[p.name] = [bound[p.name]]


def _describe(node):
    t = node.target
    return t if isinstance(t, str) else getattr(t, "__name__", str(t))


__all__ = ["Params", "Unsupported", "normalize", "signatures"]
