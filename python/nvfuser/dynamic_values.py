"""Runtime shapes (nvFuser's dynamic transforms), at definition time.

Every top-level call on a FusionDefinition is recorded. Once a call needs
a value only known at execute (``fd.ops.size``/``shape``, a vector from
``define_vector(n)``, a runtime scalar in a shape list), the definition is
*deferred*: later ops are only recorded and return placeholders, and
``dynamic.concretize`` replays the record with those values as constants
for each execute (see dynamic.py).
"""

from ._C import DataType
from .values import Scalar, Tensor, Vector

_INT_TYPES = (DataType.Int, DataType.Int32)

# Integer arithmetic on sizes, evaluated when the fusion is concretized.
# Integer div truncates and fmod keeps the dividend's sign, as in the IR.
SIZE_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: _trunc_div(a, b),
    "fmod": lambda a, b: a - b * _trunc_div(a, b),
    "remainder": lambda a, b: a - b * (a // b),
    "maximum": max,
    "minimum": min,
    "neg": lambda a: -a,
    "abs": abs,
}


def _trunc_div(a, b):
    if b == 0:
        raise ZeroDivisionError("integer division by zero in size "
                                "arithmetic")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


class _Deferred:
    """Mixin: a value known only once the fusion is concretized."""

    __slots__ = ()

    def __init__(self, fd):
        # No IR value until concretization.
        self._fd, self._fusion, self._val = fd, fd._fusion, None

    def _unknown(self, what):
        raise NotImplementedError(
            "%s of a value computed from runtime shapes is known only at "
            "execute" % what)


class DeferredTensor(_Deferred, Tensor):
    """A tensor whose op waits for concretization."""

    __slots__ = ()

    @property
    def dtype(self):
        return self._unknown("the dtype")

    @property
    def ndim(self):
        return self._unknown("the rank")

    @property
    def name(self):
        return "T?"

    def shape(self):
        return self._unknown("the shape")

    def __repr__(self):
        return "DeferredTensor()"


class DeferredScalar(_Deferred, Scalar):
    """A runtime Int: a size, a vector entry, or arithmetic on those."""

    __slots__ = ()

    @property
    def dtype(self):
        return DataType.Int

    @property
    def name(self):
        return "S?"

    def __repr__(self):
        return "DeferredScalar()"


class DeferredVector(Vector):
    """fd.ops.shape(t) or define_vector(n): runtime sizes."""

    __slots__ = ("size",)

    def __init__(self, fd, size=None):
        # An input's entries are scalars of their own, usable one by one.
        entries = [] if size is None else [DeferredScalar(fd)
                                           for _ in range(size)]
        super().__init__(fd, entries)
        self.size = size

    def __len__(self):
        if self.size is None:
            raise NotImplementedError("the length of fd.ops.shape(t) is "
                                      "known only at execute")
        return self.size

    def __repr__(self):
        return "DeferredVector(%s)" % ("?" if self.size is None
                                       else self.size)


def is_runtime_scalar(x):
    """A scalar whose value is known only at execute."""
    return isinstance(x, DeferredScalar) or (
        isinstance(x, Scalar) and x._val is not None and
        not x._val.is_const)


def _runtime_in_list(values, what):
    """Whether a shape list holds runtime values; a runtime value of a
    non-integer dtype is refused here, at definition."""
    if isinstance(values, DeferredVector):
        return True
    if isinstance(values, Vector):
        values = values.values
    found = False
    for i, v in enumerate(values):
        if isinstance(v, (list, tuple, Vector)):
            found = _runtime_in_list(v, what) or found
        elif is_runtime_scalar(v):
            if v.dtype not in _INT_TYPES:
                raise TypeError(
                    "%s: entry %d is a runtime %s scalar; sizes must be "
                    "integer scalars" % (what, i, v.dtype.name))
            found = True
    return found


# Ops whose results are runtime sizes of a tensor.
SIZE_QUERIES = ("shape", "size", "tensor_sizes")


def is_dynamic_call(name, args, kwargs):
    """Whether the op needs runtime values: deferred operands, runtime
    scalars in a list argument, or a runtime iota length."""
    if name in SIZE_QUERIES:
        return True
    if name == "aten_call":
        # Its lists are arguments and results, not shapes: runtime scalars
        # there are operands passed at execute (shape entries are ints or
        # dims of tensor arguments).
        return any(isinstance(v, _Deferred) for v in _flatten(
            list(args) + list(kwargs.values())))
    values = list(args) + list(kwargs.values())
    for v in values:
        if isinstance(v, _Deferred):
            return True
        if isinstance(v, (list, tuple, Vector)) and _runtime_in_list(v, name):
            return True
    if name == "iota":
        length = kwargs.get("length", args[0] if args else None)
        return is_runtime_scalar(length)
    return False


def _flatten(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flatten(v)
        else:
            yield v


def _check_size_operand(name, v):
    if isinstance(v, bool) or not (
            isinstance(v, (int, DeferredScalar)) or
            (isinstance(v, Scalar) and v.dtype in _INT_TYPES)):
        raise TypeError("%s: arithmetic on runtime sizes takes integers, "
                        "got %r" % (name, v))


def _check_size_call(fd, name, args, kwargs):
    """size(t, dim) / shape(t) / tensor_sizes(t): a tensor of this
    definition (and a dim)."""
    x = kwargs.get("arg", args[0] if args else None)
    if not isinstance(x, Tensor):
        raise TypeError("%s: expected a Tensor, got %s" %
                        (name, type(x).__name__))
    if not isinstance(x, _Deferred):
        fd._unwrap(x, name)
    if name == "tensor_sizes":
        return [DeferredScalar(fd) for _ in range(x.ndim)]
    if name == "size":
        dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise TypeError("size: dim must be an int, got %r" % (dim,))
        if not isinstance(x, _Deferred) and not -x.ndim <= dim < x.ndim:
            raise IndexError("size: dim %d is out of range for %s of rank "
                             "%d" % (dim, x.name, x.ndim))


def at_arguments(args, kwargs):
    """at(vector, index): the vector (a Vector or a list) and the index,
    checked (negative indices count from the end, as nvFuser's)."""
    vector = kwargs.get("vector", args[0] if args else None)
    index = kwargs.get("index", args[1] if len(args) > 1 else None)
    if not isinstance(vector, (Vector, list, tuple)):
        raise TypeError("at: expected a Vector (fd.ops.shape, "
                        "define_vector), got %s" % type(vector).__name__)
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError("at: index must be an int, got %r" % (index,))
    size = vector.size if isinstance(vector, DeferredVector) else \
        len(vector)
    if size is not None and not -size <= index < size:
        raise IndexError("at: index %d is out of range for a vector of %d "
                         "sizes" % (index, size))
    return vector, index


def defer(fd, name, args, kwargs):
    """The placeholder output of a deferred op, or None when the op does
    not depend on runtime values and runs now (scalar-only ops)."""
    if name in SIZE_QUERIES:
        out = _check_size_call(fd, name, args, kwargs)
        if name == "tensor_sizes":
            return out
        return DeferredScalar(fd) if name == "size" else DeferredVector(fd)
    if name == "at":
        at_arguments(args, kwargs)
        return DeferredScalar(fd)
    values = list(_flatten(list(args) + list(kwargs.values())))
    tensors = any(isinstance(v, Tensor) for v in values)
    if tensors or name in ("full", "iota", "uniform", "normal"):
        if name == "var_mean":
            return DeferredTensor(fd), DeferredTensor(fd)
        return DeferredTensor(fd)
    if not any(isinstance(v, DeferredScalar) for v in values):
        return None
    if name not in SIZE_OPS:
        raise NotImplementedError(
            "%s: arithmetic on runtime sizes supports %s" %
            (name, " ".join(sorted(SIZE_OPS))))
    for v in values:
        _check_size_operand(name, v)
    return DeferredScalar(fd)
