"""Runtime shapes, at execute: the recorded definition is replayed with
every runtime size as a constant (nvFuser's concretization), once per
distinct set of values that shape it; see dynamic_values.py."""

import functools
import math

from ._C import DataType
from ._validate import check_int
from .dynamic_values import (SIZE_OPS, SIZE_QUERIES, DeferredScalar,
                             DeferredVector, _Deferred, at_arguments, defer,
                             is_dynamic_call)
from .values import Scalar, Tensor, Vector, _Value

_INT_TYPES = (DataType.Int, DataType.Int32)
# Ops whose list arguments are sizes (must be >= 0 at execute); slice and
# pad take positions and widths, which their builders check.
_SIZE_LIST_OPS = ("reshape", "view", "broadcast_in_dim", "expand", "full",
                  "iota", "uniform", "normal")


class Call:
    """One recorded top-level call: fd.<name> or fd.ops.<name>."""

    __slots__ = ("owner", "name", "args", "kwargs", "out", "layout")

    def __init__(self, owner, name, args, kwargs, out, layout=None):
        self.owner, self.name, self.out, self.layout = owner, name, out, layout
        self.args = _freeze(args)
        self.kwargs = {k: _freeze(v) for k, v in kwargs.items()}


def _freeze(x):
    # The caller may change its lists after the call.
    if isinstance(x, (list, tuple)):
        return type(x)(_freeze(v) for v in x)
    return x


def recorded(owner, name, fn):
    """fn, recording its top-level calls in fd._trace and deferring ops
    that need runtime values."""

    @functools.wraps(fn)
    def call(self, *args, **kwargs):
        fd = self if owner == "fd" else self._fd
        if fd._recording:  # an op built from other ops records once
            return fn(self, *args, **kwargs)
        if owner == "ops" and (fd._deferred or
                               is_dynamic_call(name, args, kwargs)):
            fd._check_defining(name)
            out = defer(fd, name, args, kwargs)
            if out is not None:
                fd._deferred = True
                fd._trace.append(Call(owner, name, args, kwargs, out))
                return out
        if owner == "fd" and name == "add_output" and fd._deferred:
            return _defer_output(fd, args, kwargs)
        fd._recording = True
        try:
            out = fn(self, *args, **kwargs)
        finally:
            fd._recording = False
        layout = fd._input_layouts[-1] if name == "define_tensor" else None
        fd._trace.append(Call(owner, name, args, kwargs, out, layout))
        return out

    return call


def _defer_output(fd, args, kwargs):
    fd._check_defining("add_output")
    out = kwargs.get("output", args[0] if args else None)
    if not isinstance(out, Tensor):
        raise TypeError("add_output: expected a Tensor, got %s" %
                        type(out).__name__)
    fd._trace.append(Call("fd", "add_output", args, kwargs, None))
    fd._outputs.append(out)


def extents(fd):
    """fd.extents(): an Int scalar for every dim of every tensor input, in
    input order (nvFuser's order). Inside the definition each is recorded
    as fd.ops.size(t, dim=d), without making the definition dynamic until
    an op uses one; the same scalars are returned every time."""
    out = []
    for handle in fd._inputs:
        if not isinstance(handle, Tensor):
            continue
        sizes = fd._extents.get(id(handle))
        if sizes is None:
            sizes = [DeferredScalar(fd) for _ in range(handle.ndim)]
            fd._extents[id(handle)] = sizes
            if fd._inside and not fd._fusion.finalized:
                for dim, scalar in enumerate(sizes):
                    fd._trace.append(Call("ops", "size", (handle,),
                                          {"dim": dim}, scalar))
        out.extend(sizes)
    return out


def is_dynamic(fd):
    """Whether executing fd needs concretization first."""
    return fd._deferred or any(isinstance(v, DeferredVector)
                               for v in fd._inputs)


# ---- execute -------------------------------------------------------------
def _runtime_inputs(fd, inputs):
    """(key values, {id(input handle): runtime value}) of the inputs whose
    values shape the fusion: vectors and integer scalars."""
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("execute: inputs must be a list, got %s" %
                        type(inputs).__name__)
    if len(inputs) != len(fd._inputs):
        raise ValueError("execute: the fusion has %d inputs but %d were "
                         "given" % (len(fd._inputs), len(inputs)))
    values, key = {}, []
    needs_sizes = any(c.name in SIZE_QUERIES for c in fd._trace)
    for i, (handle, value) in enumerate(zip(fd._inputs, inputs)):
        what = "execute: input %d" % i
        if isinstance(handle, DeferredVector):
            value = _vector_value(value, handle.size, what)
            for entry, v in zip(handle.values, value):
                values[id(entry)] = v
        elif isinstance(handle, Scalar) and handle.dtype in _INT_TYPES:
            check_int(value, "%s (an integer scalar)" % what)
        elif isinstance(handle, Tensor) and needs_sizes:
            if not hasattr(value, "shape"):
                continue  # the concrete fusion reports the wrong kind
            value = tuple(value.shape)
        else:
            continue
        values[id(handle)] = value
        key.append(value)
    return tuple(key), values


def _vector_value(value, size, what):
    if not isinstance(value, (list, tuple)):
        raise TypeError("%s is a vector of %d sizes; pass a list or tuple "
                        "of ints, got %s" % (what, size, type(value).__name__))
    if len(value) != size:
        raise ValueError("%s is a vector of %d sizes but %d were given" %
                         (what, size, len(value)))
    for j, v in enumerate(value):
        check_int(v, "%s[%d]" % (what, j))
    return tuple(value)


def concretize(fd, inputs):
    """(concrete FusionDefinition, its inputs) for these inputs: cached per
    value of everything that shapes the fusion."""
    key, values = _runtime_inputs(fd, inputs)
    concrete = fd._concrete.get(key)
    if concrete is None:
        # Threads that race here build equal definitions; one is kept.
        concrete = fd._concrete.setdefault(key, _Replay(fd, values).build())
    plain = [v for h, v in zip(fd._inputs, inputs)
             if not isinstance(h, DeferredVector)]
    return concrete, plain


class _Replay:
    """Replays fd's record in a new FusionDefinition with runtime values
    as constants."""

    def __init__(self, fd, values):
        self.fd = fd
        self.values = dict(values)  # id(scalar or vector) -> int(s)
        self.mapped = {}  # id(handle) -> handle of the concrete definition

    def build(self):
        from .fusion_definition import FusionDefinition

        self.cfd = FusionDefinition()
        with self.cfd:
            for call in self.fd._trace:
                self._replay(call)
        return self.cfd

    def _replay(self, call):
        if call.name == "define_vector" and isinstance(call.out,
                                                       DeferredVector):
            return  # an input: its values came with the inputs
        if isinstance(call.out, (DeferredScalar, DeferredVector)):
            self.values[id(call.out)] = self._evaluate(call)
            return
        if call.name == "tensor_sizes":
            for scalar, size in zip(call.out, self._evaluate(call)):
                self.values[id(scalar)] = size
            return
        if call.name == "define_tensor":
            out = self._define_tensor(call)
        else:
            owner = self.cfd if call.owner == "fd" else self.cfd.ops
            args = [self._arg(a, call.name, call.name == "iota" and i == 0)
                    for i, a in enumerate(call.args)]
            kwargs = {k: self._arg(v, call.name, k == "length")
                      for k, v in call.kwargs.items()}
            out = getattr(owner, call.name)(*args, **kwargs)
        self._map(call, out)

    def _map(self, call, out):
        pairs = zip(call.out, out) if isinstance(call.out, tuple) else [
            (call.out, out)]
        for old, new in pairs:
            if isinstance(old, (_Value, Vector)):
                self.mapped[id(old)] = new
            if isinstance(new, Scalar) and new._val.is_const and \
                    new.dtype in _INT_TYPES:
                self.values.setdefault(id(old), new._val.value)
        if call.owner == "ops" and isinstance(call.out, Scalar):
            value = self._try_evaluate(call)
            if value is not None:
                self.values[id(call.out)] = value

    def _define_tensor(self, call):
        layout = dict(call.layout)
        sizes = self.values.get(id(call.out))
        if sizes is not None and len(sizes) == len(layout["shape"]):
            # size() of any tensor is then a constant; size-1 dims and
            # static ones keep their definition (checked at execute).
            layout["shape"] = [s if d == -1 and s != 1 else d
                               for s, d in zip(sizes, layout["shape"])]
        return self.cfd.define_tensor(**layout)

    def _arg(self, x, op, size_position=False):
        """x in the concrete definition; inside lists (sizes) runtime
        scalars become their values."""
        if isinstance(x, (list, tuple)):
            return type(x)(self._arg(v, op, True) for v in x)
        if isinstance(x, Vector):
            if id(x) in self.values:
                return [self._size(v, op) for v in self.values[id(x)]]
            if id(x) in self.mapped and not size_position:
                return self.mapped[id(x)]
            return [self._arg(v, op, True) for v in x.values]
        if isinstance(x, _Value):
            runtime = isinstance(x, DeferredScalar) or (
                isinstance(x, Scalar) and not x._val.is_const)
            if runtime and (size_position or id(x) not in self.mapped):
                return self._size(self.values[id(x)], op)
            return self.mapped[id(x)]
        return x

    @staticmethod
    def _size(value, op):
        if op in _SIZE_LIST_OPS and value < 0:
            raise ValueError("%s: a runtime size is %d at execute; sizes "
                             "must be >= 0" % (op, value))
        return value

    def _evaluate(self, call):
        if call.name == "at":
            vector, index = at_arguments(call.args, call.kwargs)
            values = self.values.get(id(vector))
            if values is None:  # a Vector or list of sizes
                values = self._arg(list(vector.values if isinstance(
                    vector, Vector) else vector), "at")
            if not -len(values) <= index < len(values):
                raise IndexError("at: index %d is out of range for a vector "
                                 "of %d sizes" % (index, len(values)))
            value = values[index]
            return value._val.value if isinstance(value, Scalar) else value
        if call.name in SIZE_QUERIES:
            arg = call.kwargs.get("arg", call.args[0])
            x = self.mapped[id(arg)]
            # An input's own sizes; size-1 dims stay symbolic in x.
            shape = self.values.get(id(arg)) or x.shape()
            if None in shape:
                raise NotImplementedError(
                    "%s: a size-1 dim of %s that is not a broadcast is "
                    "not known before execute" % (call.name, x.name))
            if call.name in ("shape", "tensor_sizes"):
                return list(shape)
            dim = call.kwargs.get("dim", call.args[1] if len(call.args) > 1
                                  else None)
            return shape[dim]
        return self._try_evaluate(call, required=True)

    def _try_evaluate(self, call, required=False):
        """Integer scalar arithmetic in Python (None when an operand is not
        a known integer)."""
        operands = []
        for a in list(call.args) + list(call.kwargs.values()):
            if isinstance(a, _Value):
                a = self.values.get(id(a))
            if isinstance(a, bool) or not isinstance(a, int) or \
                    call.name not in SIZE_OPS:
                if required:
                    raise TypeError("%s: runtime size arithmetic needs "
                                    "integer operands" % call.name)
                return None
            operands.append(a)
        return SIZE_OPS[call.name](*operands)


# ---- printing ------------------------------------------------------------
def printed_lines(fd):
    """The record as nvFuser's printed statements (names T/S/V + number)."""
    names, lines = {}, []
    for call in fd._trace:
        target = _name_outputs(call.out, names)
        if call.name == "define_tensor":
            from .repro import _define_tensor_line
            lines.append(_define_tensor_line(target, call.layout))
            continue
        args = [_format(a, names) for a in call.args]
        args += ["%s=%s" % (k, _format(v, names))
                 for k, v in call.kwargs.items()]
        prefix = "fd." if call.owner == "fd" else "fd.ops."
        text = "%s%s(%s)" % (prefix, call.name, ", ".join(args))
        lines.append(text if target is None else "%s = %s" % (target, text))
    return lines


def _name_outputs(out, names):
    if out is None:
        return None
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for o in outs:
        kind = "T" if isinstance(o, Tensor) else (
            "V" if isinstance(o, Vector) else "S")
        names[id(o)] = "%s%d" % (kind, len(names))
    if isinstance(out, list):  # tensor_sizes: a list of scalars
        return "(%s,)" % ", ".join(names[id(o)] for o in outs) if outs \
            else "_"
    return ", ".join(names[id(o)] for o in outs)


def _format(x, names):
    if id(x) in names and isinstance(x, (_Value, Vector)):
        return names[id(x)]
    if isinstance(x, list):
        return "[%s]" % ", ".join(_format(v, names) for v in x)
    if isinstance(x, tuple):
        inner = ", ".join(_format(v, names) for v in x)
        return "(%s,)" % inner if len(x) == 1 else "(%s)" % inner
    if isinstance(x, DataType):
        return "DataType.%s" % x.name
    if isinstance(x, Vector):
        return _format(list(x.values), names)
    if isinstance(x, (_Deferred, _Value)):
        raise ValueError("print: %r was made outside this definition's "
                         "record" % (x,))
    if isinstance(x, complex):
        return "complex(%s, %s)" % (_float_literal(x.real),
                                    _float_literal(x.imag))
    if isinstance(x, float):
        return _float_literal(x)
    return repr(x)


def _float_literal(x):
    """A float as Python reads it back (repr gives nan and inf, which are
    no Python names)."""
    text = repr(x)
    return text if math.isfinite(x) else "float('%s')" % text


def python_repro(fd):
    body = ["    " + line for line in printed_lines(fd)]
    header = "def nvfuser_fusion_id0(fd : FusionDefinition) -> None :"
    return "\n".join([header] + body) + "\n"


def python_script(fd):
    body = ["    " + line for line in printed_lines(fd)]
    return "\n".join(["from nvfuser import FusionDefinition, DataType", "",
                      "with FusionDefinition() as fd:"] + body) + "\n"

