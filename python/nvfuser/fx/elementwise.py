"""Translations of the elementwise ops: arithmetic, comparisons and logic,
every division form, pow and round, the floating functions (``acos`` ...
``lgamma``), ``sign``/``trunc``/``frac``, the floating-point predicates,
``atan2``, ``nextafter``, ``gcd``, the shifts and ``addcmul``.

Handlers take ``(ctx, node, p)`` like those of translator.py, which merges
``TABLE`` into its own. Where PyTorch computes in the result dtype, the
operands are cast to the recorded one first: integer inputs of a floating
function compute in the default float type, mixed operands in their
promoted type (a 0-dim tensor or a Python number widens a dimensioned
tensor only from a higher category; the recorded dtype already says so).
Half and bfloat16 compute in float and round once, as PyTorch's kernels of
these ops do: translate_checked casts each result to the recorded dtype.
"""

import operator

import torch

from ..fusion_definition import torch_dtype_to_nvfuser_dtype
from ..values import Tensor
from .._C import DataType
from .schema import Unsupported

_FLOAT_DTYPES = (DataType.Double, DataType.Float, DataType.Half,
                 DataType.BFloat16)


# ---- small helpers (translator.py uses them too) ----------------------------

def _scalar_ok(x):
    if isinstance(x, (Tensor, bool, int, float)):
        return x
    raise Unsupported("operand of type %s" % type(x).__name__)


def _tensor(x, what):
    if not isinstance(x, Tensor):
        raise Unsupported("%s of a non-tensor" % what)
    return x


def _is_float(x):
    if isinstance(x, Tensor):
        return x.dtype in _FLOAT_DTYPES
    return isinstance(x, float)


def _nv(dtype):
    return torch_dtype_to_nvfuser_dtype(dtype)


def _out_dtype(ctx, node):
    return ctx.value_of(node).dtype


def _shape(ctx, node):
    """The node's recorded (PyTorch) output shape."""
    return list(ctx.value_of(node).shape)


def _cast_tensor(ctx, x, dtype):
    """x as `dtype` when it is a Tensor of another dtype; Python numbers
    are left to the core's promotion (they never widen a tensor)."""
    if isinstance(x, Tensor) and x.dtype != _nv(dtype):
        return ctx.fd.ops.cast(x, _nv(dtype))
    return x


def _two_operands(p):
    """(self, other) of a binary op; pow calls the second "exponent"."""
    second = p["other"] if "other" in p else p.get("exponent")
    a, b = _scalar_ok(p["self"]), _scalar_ok(second)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise Unsupported("a binary op on two Python numbers")
    return a, b


# ---- elementwise ------------------------------------------------------------

def _binary(name, alpha_op=False):
    def fn(ctx, node, p):
        a, b = _two_operands(p)
        alpha = p.get("alpha", 1) if alpha_op else 1
        if alpha != 1:
            b = b * alpha if not isinstance(b, Tensor) else \
                ctx.fd.ops.mul(b, alpha)
        return ctx.broadcast_binary(getattr(ctx.fd.ops, name), a, b, node)
    return fn


def _rsub(ctx, node, p):
    """other - alpha * self."""
    a, b = _two_operands(p)
    alpha = p.get("alpha", 1)
    if alpha != 1:
        a = a * alpha if not isinstance(a, Tensor) else \
            ctx.fd.ops.mul(a, alpha)
    return ctx.broadcast_binary(ctx.fd.ops.sub, b, a, node)


def _mul(ctx, node, p):
    """Two bools multiply to their logical and (the core refuses arithmetic
    on Bool; make_fx spells isfinite with such a mul)."""
    a, b = _two_operands(p)
    op = ctx.fd.ops.logical_and if _out_dtype(ctx, node) == torch.bool \
        else ctx.fd.ops.mul
    return ctx.broadcast_binary(op, a, b, node)


def _pow(ctx, node, p):
    """x ** 0.5 and x ** -0.5 with a number exponent are sqrt and rsqrt in
    PyTorch, which differ from pow at -inf and -0.0 (sqrt(-inf) is nan,
    pow(-inf, 0.5) is inf); spell them so. (Except float16 on the CPU,
    which PyTorch computes with pow.)"""
    a, b = _two_operands(p)
    if isinstance(a, Tensor) and not isinstance(b, (Tensor, bool)) and \
            b in (0.5, -0.5):
        value = ctx.value_of(node)
        out = value.dtype
        cpu_half = out == torch.float16 and value.device.type == "cpu"
        if out.is_floating_point and not cpu_half:
            x = _cast_tensor(ctx, a, out)
            return ctx.fd.ops.sqrt(x) if b > 0 else ctx.fd.ops.rsqrt(x)
    return ctx.broadcast_binary(ctx.fd.ops.pow, a, b, node)


def _unary(name):
    def fn(ctx, node, p):
        return getattr(ctx.fd.ops, name)(_scalar_ok(p["self"]))
    return fn


def _round(ctx, node, p):
    """round(x, decimals=d) as PyTorch computes it: scale by 10**|d| in the
    op's compute type, round half to even, scale back."""
    x = _scalar_ok(p["self"])
    decimals = p.get("decimals", 0)
    if not decimals:
        return ctx.fd.ops.round(x)
    if not _is_float(x):
        raise Unsupported("round with decimals of a non-floating tensor")
    scale = float(10 ** abs(decimals))
    ops = ctx.fd.ops
    if decimals > 0:
        return ops.div(ops.round(ops.mul(x, scale)), scale)
    return ops.mul(ops.round(ops.div(x, scale)), scale)


# ---- division -----------------------------------------------------------
# The core's div truncates integers (C semantics); PyTorch's `/` never
# does. Each rounding mode is spelled out here in terms of core ops.

def _div(ctx, node, p):
    a, b = _two_operands(p)
    mode = p.get("rounding_mode")
    if mode is None:
        return _true_divide(ctx, node, a, b)
    if mode == "trunc":
        return _rounded_divide(ctx, node, a, b, floor=False)
    if mode == "floor":
        return _rounded_divide(ctx, node, a, b, floor=True)
    raise Unsupported("div with rounding_mode=%r" % (mode,))


def _true_divide(ctx, node, a, b):
    """Integer and bool operands are promoted to PyTorch's result dtype (the
    default float dtype) before dividing: 7 / 2 is 3.5."""
    out = _out_dtype(ctx, node)
    if not out.is_floating_point:
        raise Unsupported("true division giving %s" % out)
    a, b = _cast_tensor(ctx, a, out), _cast_tensor(ctx, b, out)
    if not isinstance(a, Tensor) and _is_reflected(node):
        # number / tensor is Tensor.__rtruediv__: PyTorch computes
        # reciprocal(b) * number (two roundings; 7 / 3 differs from
        # 7 * (1 / 3) in the last bit).
        r = ctx.fd.ops.cast(ctx.fd.ops.reciprocal(b), _nv(out))
        return ctx.broadcast_binary(ctx.fd.ops.mul, r, a, node)
    return ctx.broadcast_binary(ctx.fd.ops.div, a, b, node)


def _is_reflected(node):
    """Python's `number / tensor` (operator.truediv with the tensor second,
    or the __rtruediv__ method), not torch.div(number, tensor)."""
    return node.target is operator.truediv or node.target in (
        "__rtruediv__", "__rdiv__")


def _floor_divide(ctx, node, p):
    """`a // b` and torch.floor_divide: division rounded toward -inf."""
    a, b = _two_operands(p)
    return _rounded_divide(ctx, node, a, b, floor=True)


def _rounded_divide(ctx, node, a, b, floor):
    out = _out_dtype(ctx, node)
    if out in (torch.float16, torch.bfloat16):
        # PyTorch rounds the quotient to the half type before rounding it
        # to an integer; computing in float could round differently.
        raise Unsupported("rounded division in %s" % out)
    if out == torch.bool:
        raise Unsupported("rounded division of bools")
    shape = _shape(ctx, node)
    a = ctx.to_shape(_cast_tensor(ctx, a, out), shape)
    b = ctx.to_shape(_cast_tensor(ctx, b, out), shape)
    if not out.is_floating_point:
        if not isinstance(b, Tensor) and b == 0:
            # PyTorch raises ZeroDivisionError; eager keeps that behaviour.
            raise Unsupported("integer division by zero")
        q = ctx.fd.ops.div(a, b)  # C division: toward zero
        return _int_floor_fixup(ctx, a, b, q, out) if floor else q
    if floor:
        return _float_floor_divide(ctx, a, b)
    return _trunc(ctx, ctx.fd.ops.div(a, b))


def _is_negative(ctx, x):
    """x < 0: a Python bool for a number, a Bool tensor for a tensor."""
    return x < 0 if not isinstance(x, Tensor) else ctx.fd.ops.lt(x, 0)


def _differ(ctx, p, q):
    """p != q for bools, each a Python bool or a Bool tensor."""
    if not isinstance(p, Tensor) and not isinstance(q, Tensor):
        return p != q
    if not isinstance(p, Tensor):
        p, q = q, p
    if isinstance(q, Tensor):
        return ctx.fd.ops.ne(p, q)
    return ctx.fd.ops.logical_not(p) if q else p


def _int_floor_fixup(ctx, a, b, q, out):
    """Truncated quotient -> floored: one less where the division was
    inexact and the operands' signs differ (the remainder's sign is a's)."""
    ops = ctx.fd.ops
    r = ops.sub(a, ops.mul(q, b))
    signs_differ = _differ(ctx, _is_negative(ctx, r), _is_negative(ctx, b))
    if signs_differ is False:
        return q
    inexact = ops.ne(r, 0)
    fix = inexact if signs_differ is True else ops.logical_and(
        inexact, signs_differ)
    return ops.sub(q, ops.cast(fix, _nv(out)))


def _trunc(ctx, x):
    ops = ctx.fd.ops
    return ops.where(ops.lt(x, 0), ops.ceil(x), ops.floor(x))


def _float_floor_divide(ctx, a, b):
    """PyTorch's (and Python's) floating floor division, step for step:
    (a - fmod(a, b)) / b corrected by one where the remainder's sign is
    b's opposite, then rounded to the nearest integer; an exact zero keeps
    the sign of a / b, and b == 0 gives a / b (inf or nan). Plain
    floor(a / b) differs (1 // 0.1 is 9, floor(1 / 0.1) is 10)."""
    ops = ctx.fd.ops
    mod = ops.fmod(a, b)
    d = ops.div(ops.sub(a, mod), b)
    wrong_sign = _differ(ctx, _is_negative(ctx, b), ops.lt(mod, 0))
    fix = ops.logical_and(ops.ne(mod, 0), wrong_sign)
    d = ops.where(fix, ops.sub(d, 1), d)
    fl = ops.floor(d)
    fl = ops.where(ops.gt(ops.sub(d, fl), 0.5), ops.add(fl, 1), fl)
    quotient = ops.div(a, b)
    # Where d == 0 the quotient is finite (|a| < |b|), so 0 * quotient is
    # the zero with the quotient's sign.
    result = ops.where(ops.eq(d, 0), ops.mul(quotient, 0.0), fl)
    if isinstance(b, Tensor):
        return ops.where(ops.eq(b, 0), quotient, result)
    return quotient if b == 0 else result


# ---- floating functions, sign, predicates -----------------------------------

FLOAT_FUNCTIONS = ("acos", "asin", "atan", "cosh", "sinh", "tan", "exp2",
                   "expm1", "log10", "log1p", "log2", "erfc", "erfinv",
                   "lgamma")
PREDICATES = ("isinf", "isfinite", "isneginf", "isposinf", "signbit",
              "isnan")

# Other names of the same ops: torch's aliases (torch.arccos, torch.fix,
# x.arctan2(y)), torch.special's functions, and sgn, which is sign for the
# real dtypes (complex values never reach a region).
ALIASES = {"arccos": "acos", "arcsin": "asin", "arctan": "atan",
           "special_exp2": "exp2", "special_expm1": "expm1",
           "special_log1p": "log1p", "special_erfc": "erfc",
           "special_erfinv": "erfinv", "special_gammaln": "lgamma",
           "fix": "trunc", "sgn": "sign", "arctan2": "atan2"}


def _float_function(name):
    """A floating function of one tensor: integers and bools compute in
    PyTorch's result type (the default float type), floating tensors in
    their own (float for the half types)."""
    def fn(ctx, node, p):
        x = _tensor(p["self"], name)
        out = _out_dtype(ctx, node)
        if not out.is_floating_point:
            raise Unsupported("%s giving %s" % (name, out))
        if not _is_float(x):
            x = _cast_tensor(ctx, x, out)
        return getattr(ctx.fd.ops, name)(x)
    return fn


# ---- binary ops computed in the promoted dtype ------------------------------

_INT_BITS = {torch.int64: 64, torch.int32: 32}


def _promoted(name, kind):
    """atan2 (floating results), nextafter (floating operands) and gcd
    (integer operands): both operands in the result dtype, where PyTorch
    computes (an integer atan2 in the default float type; a float32
    nextafter with a float64 0-dim operand steps in float32)."""
    def fn(ctx, node, p):
        a, b = _two_operands(p)
        out = _out_dtype(ctx, node)
        if (kind == "floating") != out.is_floating_point or \
                out == torch.bool:
            raise Unsupported("%s giving %s" % (name, out))
        a, b = _cast_tensor(ctx, a, out), _cast_tensor(ctx, b, out)
        return ctx.broadcast_binary(getattr(ctx.fd.ops, name), a, b, node)
    return fn


def _shift(name, reflected=False):
    """x << n and x >> n in every spelling (bitwise_left_shift,
    __lshift__, operator.lshift; `reflected`: __rlshift__, n << x): both
    operands in the result dtype, an integer one. A count outside
    [0, bits) gives 0 (>>: the sign) in the core, as torch's current
    kernels define it; torch 1.13's CPU kernels take it modulo the width.
    A Python count outside the range stays in eager, which gives whatever
    PyTorch gives."""
    def fn(ctx, node, p):
        a, b = _two_operands(p)
        if reflected:
            a, b = b, a
        out = _out_dtype(ctx, node)
        bits = _INT_BITS.get(out)
        if bits is None:
            raise Unsupported("a shift giving %s" % out)
        a, b = (int(v) if isinstance(v, bool) else v for v in (a, b))
        if isinstance(b, int) and not 0 <= b < bits:
            raise Unsupported("a shift by %d, outside [0, %d)" % (b, bits))
        if isinstance(a, int) and not \
                -(1 << (bits - 1)) <= a < (1 << (bits - 1)):
            raise Unsupported("a shift of %d, which %s cannot hold" %
                              (a, out))
        a, b = _cast_tensor(ctx, a, out), _cast_tensor(ctx, b, out)
        return ctx.broadcast_binary(getattr(ctx.fd.ops, name), a, b, node)
    return fn


def _addcmul(ctx, node, p):
    """self + value * tensor1 * tensor2 in PyTorch's order, the three
    tensors in the result dtype (value is a number and takes no part in
    the promotion; half types compute in float). PyTorch's kernels contract
    the last multiply-add into an FMA (on the CPU fma(value * tensor1,
    tensor2, self), on CUDA fma(value, tensor1 * tensor2, self)); the
    core's addcmul is the CPU's (its op `fma`), so on CUDA a float32 or
    float64 result may differ from eager's in the last bits (more where
    the sum cancels).
    With integer tensors torch 1.13 truncates a floating value toward zero
    (value.to<int>()), as int() does."""
    out = _out_dtype(ctx, node)
    if out == torch.bool:
        raise Unsupported("addcmul of bools")
    value = p.get("value", 1)
    if not isinstance(value, (bool, int, float)):
        raise Unsupported("addcmul with a value of type %s" %
                          type(value).__name__)
    if isinstance(value, bool) or not out.is_floating_point:
        value = int(value)
    shape = _shape(ctx, node)
    x, t1, t2 = (ctx.to_shape(_cast_tensor(ctx, _tensor(p[k], "addcmul"),
                                           out), shape)
                 for k in ("self", "tensor1", "tensor2"))
    return ctx.fd.ops.addcmul(x, t1, t2, value)


TABLE = {}
for _n in ("add", "sub"):
    TABLE[_n] = _binary(_n, alpha_op=True)
for _n in ("maximum", "minimum", "eq", "ne", "lt", "le",
           "gt", "ge", "logical_and", "logical_or", "bitwise_and",
           "bitwise_or", "bitwise_xor", "remainder", "fmod"):
    TABLE[_n] = _binary(_n)
TABLE["mul"] = _mul
TABLE["div"] = TABLE["true_divide"] = TABLE["divide"] = _div
TABLE["floordiv"] = TABLE["floor_divide"] = _floor_divide
TABLE["mod"] = TABLE["remainder"]  # Python's % on tensors
TABLE["rsub"] = _rsub
TABLE["pow"] = _pow
for _n in ("neg", "exp", "log", "sin", "cos", "tanh", "sigmoid", "rsqrt",
           "sqrt", "abs", "relu", "reciprocal", "silu", "erf", "floor",
           "ceil", "logical_not", "bitwise_not", "sign", "trunc",
           "frac") + PREDICATES:
    TABLE[_n] = _unary(_n)
TABLE["round"] = _round
for _n in FLOAT_FUNCTIONS:
    TABLE[_n] = _float_function(_n)
TABLE["atan2"] = _promoted("atan2", "floating")
TABLE["nextafter"] = _promoted("nextafter", "floating")
TABLE["gcd"] = _promoted("gcd", "integer")
for _n, _op in (("lshift", "bitwise_left_shift"),
                ("rshift", "bitwise_right_shift")):
    TABLE[_op] = TABLE["__%s__" % _n] = _shift(_op)
    TABLE["__r%s__" % _n] = _shift(_op, reflected=True)
TABLE["addcmul"] = _addcmul
for _alias, _n in ALIASES.items():
    TABLE[_alias] = TABLE[_n]
