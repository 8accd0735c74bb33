"""fd.ops: nvFuser's op namespace, mapped onto the compiler's builders."""

import warnings

from . import _C, aten_call, dynamic
from ._C import DataType
from ._validate import check_int, check_int_list
from .layouts import normalize_stride_order
from .values import Scalar, Tensor, Vector

_cops = _C.ops


class Ops:
    """The ``fd.ops`` namespace of one FusionDefinition."""

    def __init__(self, fd):
        self._fd = fd

    # ---- helpers ----------------------------------------------------------
    def _val(self, x, what):
        # A closed definition is reported before anything about operands.
        self._fd._check_defining(what)
        return self._fd._unwrap(x, what)

    def _tensor(self, x, what):
        self._fd._check_defining(what)
        if not isinstance(x, Tensor):
            raise TypeError("%s: expected a Tensor, got %s" %
                            (what, type(x).__name__))
        return self._val(x, what)

    def _call(self, what, fn, *args):
        self._fd._check_defining(what)
        return self._fd._wrap(fn(*args))

    def _sizes(self, shape, what, name="shape"):
        """Resolves a shape argument (list of ints / constant Scalars, or a
        Vector) to a list of ints."""
        if isinstance(shape, Vector):
            shape = shape.values
        if isinstance(shape, Tensor):
            raise TypeError("%s: %s must be a list of sizes, got a Tensor" %
                            (what, name))
        if not isinstance(shape, (list, tuple)):
            raise TypeError("%s: %s must be a list of sizes, got %s" %
                            (what, name, type(shape).__name__))
        out = []
        for i, s in enumerate(shape):
            entry = "%s: %s[%d]" % (what, name, i)
            if isinstance(s, Scalar):
                self._fd._unwrap(s, entry)
                if not s._val.is_const:
                    raise NotImplementedError(
                        "%s is a runtime scalar input; shapes must be "
                        "constants in this version" % entry)
                if s.dtype not in _INT_TYPES:
                    raise TypeError("%s must be an integer scalar, got a %s "
                                    "constant %r" % (entry, s.dtype.name,
                                                     s._val.value))
                s = s._val.value
            out.append(check_int(s, entry))
        return out

    @staticmethod
    def _dims(dims, what, name="dims"):
        if dims is None:
            return []
        if isinstance(dims, int) and not isinstance(dims, bool):
            return [check_int(dims, "%s: %s" % (what, name))]
        if not isinstance(dims, (list, tuple)):
            raise TypeError("%s: %s must be an int or a list of ints" %
                            (what, name))
        for i, d in enumerate(dims):
            if isinstance(d, bool) or not isinstance(d, int):
                raise TypeError("%s: %s must hold ints, got %r" %
                                (what, name, d))
            check_int(d, "%s: %s[%d]" % (what, name, i))
        return list(dims)

    # ---- elementwise ------------------------------------------------------
    def cast(self, x, dtype):
        if not isinstance(dtype, DataType):
            raise TypeError("cast: dtype must be a DataType, got %r" %
                            (dtype,))
        val = self._val(x, "cast")
        if val.is_tensor:
            from .fusion_definition import check_torch_has
            check_torch_has(dtype, "cast")
        if val.dtype in _COMPLEX_TYPES and dtype not in _COMPLEX_TYPES:
            # nvFuser and torch warn here; the result is the real part.
            warnings.warn("cast: casting %s to %s discards the imaginary "
                          "part" % (val.dtype.name, dtype.name), UserWarning,
                          stacklevel=3)
        return self._call("cast", _cops.cast, val, dtype)

    def where(self, cond, a, b):
        return self._call("where", _cops.where, self._val(cond, "where"),
                          self._val(a, "where"), self._val(b, "where"))

    def fma(self, a, b, c):
        """a * b + c rounded once (C's fma); the operands promote as for
        add, to a floating type."""
        return self._call("fma", _cops.fma, self._val(a, "fma"),
                          self._val(b, "fma"), self._val(c, "fma"))

    def lerp(self, start, end, weight):
        return self._call("lerp", _cops.lerp, self._val(start, "lerp"),
                          self._val(end, "lerp"), self._val(weight, "lerp"))

    def clamp(self, x, min, max):  # noqa: A002 (nvFuser's names)
        return self._call("clamp", _cops.clamp, self._val(x, "clamp"),
                          self._val(min, "clamp"), self._val(max, "clamp"))

    def addcmul(self, x, tensor1, tensor2, value=1):
        """x + value * tensor1 * tensor2 (torch.addcmul); value is a
        scalar."""
        if isinstance(value, Tensor):
            raise TypeError("addcmul: value must be a scalar, got a Tensor")
        return self._call("addcmul", _cops.addcmul,
                          self._val(x, "addcmul"),
                          self._val(tensor1, "addcmul"),
                          self._val(tensor2, "addcmul"),
                          self._val(value, "addcmul"))

    def truediv(self, a, b):
        """Division that computes integers in floating point."""
        a, b = self._val(a, "truediv"), self._val(b, "truediv")
        inexact = _FLOAT_TYPES + _COMPLEX_TYPES
        if a.dtype not in inexact and b.dtype not in inexact:
            a = _cops.cast(a, DataType.Float)
        return self._call("truediv", _cops.binary, "div", a, b)

    # ---- shape ops --------------------------------------------------------
    def broadcast(self, x, is_broadcast_dim):
        if not isinstance(is_broadcast_dim, (list, tuple)):
            raise TypeError("broadcast: is_broadcast_dim must be a list of "
                            "bools")
        return self._call("broadcast", _cops.broadcast,
                          self._tensor(x, "broadcast"),
                          [bool(b) for b in is_broadcast_dim])

    def broadcast_in_dim(self, x, shape, broadcast_dims):
        return self._call(
            "broadcast_in_dim", _cops.broadcast_in_dim,
            self._tensor(x, "broadcast_in_dim"),
            self._sizes(shape, "broadcast_in_dim"),
            self._dims(broadcast_dims, "broadcast_in_dim", "broadcast_dims"))

    def expand(self, x, shape):
        return self._call("expand", _cops.expand, self._tensor(x, "expand"),
                          self._sizes(shape, "expand"))

    def reshape(self, x, *args, new_shape=None, original_shape=None):
        """reshape(t, new_shape) or nvFuser's older
        reshape(t, original_shape, new_shape)."""
        del original_shape
        if new_shape is None:
            if not args:
                raise TypeError("reshape: new_shape is required")
            new_shape = args[-1]
        return self._call("reshape", _cops.reshape, self._tensor(x, "reshape"),
                          self._sizes(new_shape, "reshape", "new_shape"))

    def view(self, x, new_shape):
        return self.reshape(x, new_shape)

    def permute(self, x, dims):
        return self._call("permute", _cops.permute,
                          self._tensor(x, "permute"),
                          self._dims(dims, "permute"))

    def squeeze(self, x, *args, dims=None, original_shape=None):
        """squeeze(t, dims) or nvFuser's older squeeze(t, original_shape,
        dims)."""
        del original_shape
        if dims is None:
            if not args:
                raise TypeError("squeeze: dims is required")
            dims = args[-1]
        return self._call("squeeze", _cops.squeeze,
                          self._tensor(x, "squeeze"),
                          self._dims(dims, "squeeze"))

    def slice(self, x, start_indices, end_indices, strides=None):
        return self._call(
            "slice", _cops.slice, self._tensor(x, "slice"),
            self._sizes(start_indices, "slice", "start_indices"),
            self._sizes(end_indices, "slice", "end_indices"),
            self._sizes(strides or [], "slice", "strides"))

    def pad(self, x, pad_widths, value=None):
        v = None if value is None else self._val(value, "pad")
        return self._call("pad", _cops.pad, self._tensor(x, "pad"),
                          self._sizes(pad_widths, "pad", "pad_widths"), v)

    def cat(self, tensors, dim=0, manual_padding=False):
        del manual_padding
        if not isinstance(tensors, (list, tuple)):
            raise TypeError("cat: tensors must be a list of Tensors")
        vals = [self._tensor(t, "cat") for t in tensors]
        return self._call("cat", _cops.cat, vals,
                          check_int(dim, "cat: dim"))

    def set(self, x):
        return self._call("set", _cops.set, self._tensor(x, "set"))

    def stride_order(self, x, stride_order):
        """nvFuser's layout op: a copy of x laid out by stride_order
        (stride_order[i] is dim i's rank by stride, 0 the innermost). The
        layout is kept where it shows, in a fusion output; inside the
        fusion the compiler picks its own."""
        out = self.set(x)
        order = check_int_list("stride_order", stride_order)
        self._fd._layout_hints[out] = normalize_stride_order(
            order, out.ndim, "stride_order")
        return out

    def segment_set(self, x):
        return self._call("segment_set", _cops.segment_set,
                          self._tensor(x, "segment_set"))

    # ---- runtime shapes (dynamic.py defers every call of these) ----------
    def shape(self, arg):
        """The runtime sizes of arg, a Vector for shape arguments."""
        raise AssertionError("shape: deferred by dynamic.recorded")

    def size(self, arg, dim):
        """The runtime size of arg's dim, an Int scalar."""
        raise AssertionError("size: deferred by dynamic.recorded")

    def tensor_sizes(self, arg):
        """The runtime sizes of arg, a list of Int scalars (one per dim)."""
        raise AssertionError("tensor_sizes: deferred by dynamic.recorded")

    def at(self, vector, index):
        """Entry `index` of a Vector of sizes (negative indices count from
        the end), an Int scalar. A Vector of runtime sizes (fd.ops.shape,
        define_vector(n)) gives a runtime scalar (dynamic.py defers it);
        one of constants gives a constant."""
        self._fd._check_defining("at")
        vector, index = dynamic.at_arguments((vector, index), {})
        entry = (vector.values if isinstance(vector, Vector) else
                 list(vector))[index]
        if isinstance(entry, Scalar):
            self._fd._unwrap(entry, "at")
            return entry
        return self._fd.define_scalar(check_int(entry, "at: entry %d" %
                                                index), DataType.Int)

    # ---- indexing ---------------------------------------------------------
    def _gather(self, name, x, index, dim):
        return self._call(name, _cops.gather_op, name,
                          self._tensor(x, name), self._tensor(index, name),
                          check_int(dim, "%s: dim" % name))

    def index_select(self, arg, index, dim):
        """torch.index_select: arg's slices along dim at a 1-D (or 0-dim)
        Int/Int32 index."""
        return self._gather("index_select", arg, index, dim)

    def gather(self, arg1, index, dim):
        """torch.gather: out[i] = arg1[i with i[dim] = index[i]]; index
        has arg1's rank and the output's shape."""
        return self._gather("gather", arg1, index, dim)

    def take_along_axis(self, arg1, index, dim):
        """numpy.take_along_axis (torch.take_along_dim with a dim): gather
        whose other dims broadcast against each other."""
        return self._gather("take_along_axis", arg1, index, dim)

    def scatter(self, arg, index, src, dim):
        """Out-of-place torch.scatter(arg, dim, index, src): a copy of arg
        with src[i] written where i's dim coordinate is index[i]; src is a
        Tensor of arg's dtype or a scalar."""
        return self._call("scatter", _cops.scatter,
                          self._tensor(arg, "scatter"),
                          self._tensor(index, "scatter"),
                          self._val(src, "scatter"),
                          check_int(dim, "scatter: dim"))

    # ---- library calls ----------------------------------------------------
    def aten_call(self, op, args, results, kwargs=None):
        """Calls the ATen operator `op` (torch.ops.aten.topk.default, or
        'aten::topk') with `args` in schema order (and `kwargs` by name):
        fusion Tensors and scalars, None, bool, int, float, lists of ints,
        strings. `results` lists the returns the fusion keeps as
        (return index, DataType, shape), each shape entry a size or
        (tensor argument, dim). Returns their Tensors, in that order. The
        call runs through PyTorch's dispatcher as the one ATen op of an
        expr_eval segment; only functional operators (no writes, no views)
        qualify.
        """
        self._fd._check_defining("aten_call")
        outs = aten_call.aten_call(self._fd, op, args, results, kwargs)
        return [self._fd._wrap(v) for v in outs]

    # ---- masks and scans --------------------------------------------------
    def triu(self, input, diagonal=0):  # noqa: A002 (nvFuser's name)
        """torch.triu: the upper triangle of the last two dims, from
        `diagonal` on (0 keeps the main diagonal)."""
        return self._call("triu", _cops.triu, self._tensor(input, "triu"),
                          check_int(diagonal, "triu: diagonal"))

    def cumsum(self, arg, dim):
        """torch.cumsum along dim (an inclusive prefix sum)."""
        return self._call("cumsum", _cops.cumsum,
                          self._tensor(arg, "cumsum"),
                          check_int(dim, "cumsum: dim"))

    # ---- reductions -------------------------------------------------------
    def welford(self, arg, dims):
        """nvFuser's welford over dims: (avg, var_sum, n), where var_sum is
        the sum of squared deviations from avg and n the count (Int)."""
        self._fd._check_defining("welford")
        outs = _cops.welford(self._tensor(arg, "welford"),
                             self._dims(dims, "welford"))
        return tuple(self._fd._wrap(v) for v in outs)

    def _reduction(self, name, x, dims, keepdim, dtype):
        if not isinstance(dtype, DataType):
            raise TypeError("%s: dtype must be a DataType, got %r" %
                            (name, dtype))
        return self._call(name, _cops.reduction, name, self._tensor(x, name),
                          self._dims(dims, name), bool(keepdim), dtype)

    def sum(self, x, dims=None, keepdim=False, dtype=DataType.Null, *,
            dim=None):
        return self._reduction("sum", x, dim if dims is None else dims,
                               keepdim, dtype)

    def prod(self, x, dims=None, keepdim=False, dtype=DataType.Null, *,
             dim=None):
        return self._reduction("prod", x, dim if dims is None else dims,
                               keepdim, dtype)

    def max(self, x, dims=None, keepdim=False, dtype=DataType.Null, *,
            dim=None):
        return self._reduction("max", x, dim if dims is None else dims,
                               keepdim, dtype)

    def min(self, x, dims=None, keepdim=False, dtype=DataType.Null, *,
            dim=None):
        return self._reduction("min", x, dim if dims is None else dims,
                               keepdim, dtype)

    def mean(self, x, dims=None, keepdim=False, dtype=DataType.Null, *,
             dim=None):
        return self._reduction("mean", x, dim if dims is None else dims,
                               keepdim, dtype)

    def var_mean(self, x, dims=None, correction=1, keepdim=False):
        self._fd._check_defining("var_mean")
        # int() would truncate a float correction (torch 2 takes 0.5).
        var, mean = _cops.var_mean(self._tensor(x, "var_mean"),
                                   self._dims(dims, "var_mean"),
                                   check_int(correction,
                                             "var_mean: correction"),
                                   bool(keepdim))
        return self._fd._wrap(var), self._fd._wrap(mean)

    def var(self, x, dims=None, correction=1, keepdim=False):
        return self.var_mean(x, dims, correction, keepdim)[0]

    # ---- matrix products --------------------------------------------------
    def matmul(self, a, b):
        return self._call("matmul", _cops.matmul, self._val(a, "matmul"),
                          self._val(b, "matmul"))

    def linear(self, a, w, bias=None):
        b = None if bias is None else self._val(bias, "linear")
        return self._call("linear", _cops.linear, self._val(a, "linear"),
                          self._val(w, "linear"), b)

    # ---- factories --------------------------------------------------------
    def full(self, shape, fill_value, dtype):
        if not isinstance(dtype, DataType):
            raise TypeError("full: dtype must be a DataType, got %r" %
                            (dtype,))
        fill = self._val(fill_value, "full")
        return self._call("full", _cops.full, fill,
                          self._sizes(shape, "full"), fill, dtype)

    def iota(self, length, start=None, step=None, dtype=DataType.Int):
        if not isinstance(dtype, DataType):
            raise TypeError("iota: dtype must be a DataType, got %r" %
                            (dtype,))
        if isinstance(length, Scalar):
            length = self._sizes([length], "iota", "length")[0]
        check_int(length, "iota: length")
        zero = 0 if dtype in _INT_TYPES else 0.0
        one = 1 if dtype in _INT_TYPES else 1.0
        start = self._val(zero if start is None else start, "iota")
        step = self._val(one if step is None else step, "iota")
        return self._call("iota", _cops.iota, length, start, step, dtype)

    # ---- random numbers ---------------------------------------------------
    # Values are a function of (rng_seed, rng_offset, the op's stream, the
    # element's index): equal inputs give equal bits on every path. Without
    # rng_seed/rng_offset a seed and an offset are drawn from torch's
    # generator at every execute (docs/rng.md). rng_index (an nvfuser-lite
    # extension) picks the op's stream; by default the number of random ops
    # defined before it, and printed definitions give it only where that
    # differs.
    def uniform(self, minval, maxval, shape, *, rng_seed=None,
                rng_offset=None, dtype=DataType.Float, rng_index=None):
        """Values in [minval, maxval) of `shape`."""
        return self._random("uniform", minval, maxval, shape, rng_seed,
                            rng_offset, dtype, rng_index)

    def normal(self, mean, std, shape, *, rng_seed=None, rng_offset=None,
               dtype=DataType.Float, rng_index=None):
        """Normally distributed values of `shape` (Box-Muller)."""
        return self._random("normal", mean, std, shape, rng_seed,
                            rng_offset, dtype, rng_index)

    def rand_like(self, arg, *, rng_seed=None, rng_offset=None, dtype=None,
                  rng_index=None):
        """uniform(0, 1) shaped as arg, of arg's dtype unless given."""
        return self._random_like("rand_like", arg, rng_seed, rng_offset,
                                 dtype, rng_index)

    def randn_like(self, arg, *, rng_seed=None, rng_offset=None, dtype=None,
                   rng_index=None):
        """normal(0, 1) shaped as arg, of arg's dtype unless given."""
        return self._random_like("randn_like", arg, rng_seed, rng_offset,
                                 dtype, rng_index)

    def _random(self, name, a, b, shape, seed, offset, dtype, index):
        self._fd._check_defining(name)
        _check_dtype(dtype, name)
        a, b = self._val(a, name), self._val(b, name)
        sizes = self._sizes(shape, name)
        seed, offset = self._rng_state(name, seed, offset)
        return self._call(name, _cops.random, name, a, b, sizes, seed,
                          offset, dtype, _rng_index(index, name))

    def _random_like(self, name, arg, seed, offset, dtype, index):
        self._fd._check_defining(name)
        if dtype is None:
            dtype = DataType.Null  # arg's
        _check_dtype(dtype, name)
        x = self._tensor(arg, name)
        seed, offset = self._rng_state(name, seed, offset)
        return self._call(name, _cops.random_like, name, x, dtype, seed,
                          offset, _rng_index(index, name))

    def _rng_state(self, name, seed, offset):
        if (seed is None) != (offset is None):
            raise ValueError("%s: rng_seed and rng_offset must be given "
                             "together" % name)
        if seed is None:
            return None, None
        return (self._rng_scalar(seed, name, "rng_seed"),
                self._rng_scalar(offset, name, "rng_offset"))

    def _rng_scalar(self, x, name, what):
        """An Int scalar, or an int taken as its 64 bits (torch's seeds go
        up to 2**64 - 1)."""
        if isinstance(x, (bool, float)):
            raise TypeError("%s: %s must be an integer, got %r" %
                            (name, what, x))
        if isinstance(x, int):
            if not -2**63 <= x < 2**64:
                raise ValueError("%s: %s %d does not fit 64 bits" %
                                 (name, what, x))
            x = x - 2**64 if x >= 2**63 else x
        return self._val(x, name)


def _check_dtype(dtype, name):
    if not isinstance(dtype, DataType):
        raise TypeError("%s: dtype must be a DataType, got %r" %
                        (name, dtype))


def _rng_index(index, name):
    return None if index is None else check_int(index, "%s: rng_index" %
                                                name)


_FLOAT_TYPES = (DataType.Double, DataType.Float, DataType.Half,
                DataType.BFloat16)
_INT_TYPES = (DataType.Int, DataType.Int32)
_COMPLEX_TYPES = (DataType.ComplexFloat, DataType.ComplexDouble)


def _make_unary(name):
    def op(self, x):
        return self._call(name, _cops.unary, name, self._val(x, name))
    op.__name__ = name
    op.__doc__ = "Elementwise %s." % name
    return op


def _make_binary(name):
    def op(self, a, b):
        return self._call(name, _cops.binary, name, self._val(a, name),
                          self._val(b, name))
    op.__name__ = name
    op.__doc__ = "Elementwise %s with broadcasting." % name
    return op


for _name in _cops.unary_names():
    setattr(Ops, _name, _make_unary(_name))
for _name in _cops.binary_names():
    setattr(Ops, _name, _make_binary(_name))
# Every op is recorded, and deferred when it needs runtime values.
for _name in [n for n in vars(Ops) if not n.startswith("_")]:
    setattr(Ops, _name, dynamic.recorded("ops", _name, getattr(Ops, _name)))
