"""Python handles of the values of a FusionDefinition."""

from . import _C


class _Value:
    """A value of one FusionDefinition; wraps the compiler's Val."""

    # _fusion keeps the definition that owns _val alive: a FusionDefinition
    # replaces its fusion when a `with` body raises.
    __slots__ = ("_fd", "_fusion", "_val")

    def __init__(self, fd, val):
        self._fd = fd
        self._fusion = fd._fusion
        self._val = val

    @property
    def dtype(self):
        return self._val.dtype

    @property
    def name(self):
        return self._val.name

    def __repr__(self):
        return repr(self._val)

    # Arithmetic operators build ops in the owning definition.
    def _binary(self, name, other, reverse=False):
        ops = self._fd.ops
        return getattr(ops, name)(other, self) if reverse else getattr(
            ops, name)(self, other)

    def __add__(self, o):
        return self._binary("add", o)

    def __radd__(self, o):
        return self._binary("add", o, True)

    def __sub__(self, o):
        return self._binary("sub", o)

    def __rsub__(self, o):
        return self._binary("sub", o, True)

    def __mul__(self, o):
        return self._binary("mul", o)

    def __rmul__(self, o):
        return self._binary("mul", o, True)

    def __truediv__(self, o):
        return self._binary("div", o)

    def __rtruediv__(self, o):
        return self._binary("div", o, True)

    def __pow__(self, o):
        return self._binary("pow", o)

    def __mod__(self, o):
        return self._binary("fmod", o)

    def __lt__(self, o):
        return self._binary("lt", o)

    def __le__(self, o):
        return self._binary("le", o)

    def __gt__(self, o):
        return self._binary("gt", o)

    def __ge__(self, o):
        return self._binary("ge", o)

    def __and__(self, o):
        return self._binary("bitwise_and", o)

    def __or__(self, o):
        return self._binary("bitwise_or", o)

    def __xor__(self, o):
        return self._binary("bitwise_xor", o)

    def __lshift__(self, o):
        return self._binary("bitwise_left_shift", o)

    def __rshift__(self, o):
        return self._binary("bitwise_right_shift", o)

    def __neg__(self):
        return self._fd.ops.neg(self)

    def __abs__(self):
        return self._fd.ops.abs(self)

    def __invert__(self):
        return self._fd.ops.bitwise_not(self)

    # Values are used as dict keys by user code; keep identity semantics.
    __hash__ = object.__hash__


class Tensor(_Value):
    """A tensor of a FusionDefinition."""

    __slots__ = ()

    @property
    def ndim(self):
        return self._val.ndim

    def shape(self):
        """Static sizes where known, None where symbolic."""
        return self._val.shape()


class Scalar(_Value):
    """A scalar of a FusionDefinition: a constant or a fusion input."""

    __slots__ = ()


class Vector:
    """A list of sizes made by define_vector, used as a shape argument."""

    __slots__ = ("_fd", "values")

    def __init__(self, fd, values):
        self._fd = fd
        self.values = list(values)

    def __len__(self):
        return len(self.values)

    def __repr__(self):
        return "Vector(%r)" % (self.values,)


def wrap(fd, val):
    """Wraps a _C.Val in the matching handle class."""
    return Tensor(fd, val) if val.is_tensor else Scalar(fd, val)


_ = _C  # the extension must be importable before handles are used
