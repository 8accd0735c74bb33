"""The elementwise ops of nvFuser's list added after the first set (acos
... signbit, atan2, nextafter, gcd, the shifts, addcmul) against torch on
the CPU, in every dtype each takes, at NaN, infinities, -0.0, domain
edges, zero and MIN operands and shift counts outside [0, bits). conftest
compiles every executed fusion's kernels with NVRTC; the kernels' values
are checked on the CPU by tests/cpp/runtime/test_emulated_elementwise.cpp.
"""

import math

import numpy as np
import pytest
import torch

from nvfuser import DataType, FusionDefinition
from printed import run_printed
from value_checks import special_values

NAN, INF = float("nan"), float("inf")
FLOATS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5,
          0.999, -0.999, 1e-3, 30.0, -30.0, 150.0, -3.0, 7.25]
TORCH = {torch.float32: DataType.Float, torch.float64: DataType.Double,
         torch.bfloat16: DataType.BFloat16, torch.float16: DataType.Half,
         torch.int64: DataType.Int, torch.int32: DataType.Int32,
         torch.bool: DataType.Bool}

FLOAT_MATH = ["acos", "asin", "atan", "cosh", "sinh", "tan", "exp2",
              "expm1", "log10", "log1p", "log2", "erfc", "erfinv", "lgamma"]
PREDICATES = ["isinf", "isfinite", "isneginf", "isposinf", "signbit",
              "isnan"]


def values(dtype):
    return special_values(dtype, FLOATS)


def run(build, inputs):
    with FusionDefinition() as fd:
        build(fd)
    return fd.execute(inputs)


def unary(name, x):
    (out,) = run(lambda fd: fd.add_output(
        getattr(fd.ops, name)(fd.from_pytorch(x))), [x])
    return out


def same(out, ref):
    """Equal values and dtypes, NaN where ref has NaN, zeros' signs too."""
    assert out.dtype == ref.dtype, (out.dtype, ref.dtype)
    torch.testing.assert_close(out, ref, equal_nan=True, rtol=0, atol=0)
    if out.dtype.is_floating_point:
        zeros = (out == 0) & (ref == 0)
        assert torch.equal(torch.signbit(out[zeros]), torch.signbit(ref[zeros]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.int64, torch.int32, torch.bool])
@pytest.mark.parametrize("name", FLOAT_MATH)
def test_float_math(name, dtype):
    # Integers and Bool promote to Float as in torch; Half and BFloat16
    # compute and return Float (nvFuser's rule), like torch in float32.
    x = values(dtype)
    out = unary(name, x)
    ref = getattr(torch, name)(x.float() if dtype.is_floating_point else x)
    assert ref.dtype == torch.float32
    same(out, ref)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.float16, torch.int64, torch.int32,
                                   torch.bool])
@pytest.mark.parametrize("name", PREDICATES)
def test_predicates(name, dtype):
    x = values(dtype)
    if dtype.is_floating_point:
        # -NaN: signbit reads the bit, whatever the value.
        x = torch.cat([x, -torch.tensor([NAN], dtype=dtype)])
    out = unary(name, x)
    assert out.dtype == torch.bool
    assert torch.equal(out, getattr(torch, name)(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.float64, torch.int64, torch.int32,
                                   torch.bool])
@pytest.mark.parametrize("name", ["sign", "trunc", "frac"])
def test_sign_trunc_frac(name, dtype):
    x = values(dtype)
    if (name == "frac" and not dtype.is_floating_point) or (
            name == "trunc" and dtype == torch.bool):
        with pytest.raises(TypeError, match=r"%s: operand" % name):
            unary(name, x)
        with pytest.raises(RuntimeError):
            getattr(torch, name)(x)  # torch refuses them too
        return
    out = unary(name, x)
    # They keep the dtype; Half and BFloat16 compute and return Float.
    ref = getattr(torch, name)(x.float() if dtype == torch.bfloat16 else x)
    same(out, ref)


def test_special_values_of_sign_trunc_frac():
    x = torch.tensor([NAN, -0.0, 0.0, -2.5, 2.5, INF, -INF, -2.0])

    def build(fd):
        t = fd.from_pytorch(x)
        for name in ("sign", "trunc", "frac"):
            fd.add_output(getattr(fd.ops, name)(t))
    outs = run(build, [x])
    sign, trunc, frac = (o.tolist() for o in outs)
    assert sign[:7] == [0.0, 0.0, 0.0, -1.0, 1.0, 1.0, -1.0]
    assert not torch.signbit(outs[0][1])  # sign(-0.0) is +0, as torch
    assert math.isnan(trunc[0]) and trunc[1:7] == [-0.0, 0.0, -2.0, 2.0,
                                                   INF, -INF]
    assert torch.signbit(outs[1][1])  # trunc keeps -0.0
    assert math.isnan(frac[5]) and math.isnan(frac[6])  # inf - inf
    assert frac[3:5] == [-0.5, 0.5] and not torch.signbit(outs[2][7])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.int64, torch.int32, torch.bool])
def test_atan2(dtype):
    v = values(dtype)
    a, b = v.repeat_interleave(len(v)), v.repeat(len(v))
    (out,) = run(lambda fd: fd.add_output(fd.ops.atan2(
        fd.from_pytorch(a), fd.from_pytorch(b))), [a, b])
    floating = dtype.is_floating_point
    same(out, torch.atan2(a.float() if floating else a,
                          b.float() if floating else b))


def nextafter_ref(a, b):
    if a.dtype != torch.float16:
        return torch.nextafter(a, b)
    # torch 1.13 has no CPU kernel for Half: numpy's, except that for
    # a == b (0.0 and -0.0) C and torch give b, numpy a.
    with np.errstate(over="ignore"):
        r = torch.from_numpy(np.nextafter(a.numpy(), b.numpy()))
    return torch.where(a == b, b, r)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64,
                                   torch.bfloat16, torch.float16])
def test_nextafter_steps_in_the_operands_type(dtype):
    v = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 2.5, 1e-40,
                      6e-8, 65504.0], dtype=dtype)
    a, b = v.repeat_interleave(len(v)), v.repeat(len(v))
    (out,) = run(lambda fd: fd.add_output(fd.ops.nextafter(
        fd.from_pytorch(a), fd.from_pytorch(b))), [a, b])
    same(out, nextafter_ref(a, b))
    assert out[5 * len(v) + 7] > 1.0  # nextafter(1, 2.5) moved a whole step


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_gcd_with_zero_negative_and_min_operands(dtype):
    v = values(dtype)
    a, b = v.repeat_interleave(len(v)), v.repeat(len(v))
    (out,) = run(lambda fd: fd.add_output(fd.ops.gcd(
        fd.from_pytorch(a), fd.from_pytorch(b))), [a, b])
    same(out, torch.gcd(a, b))
    lo = torch.iinfo(dtype).min
    assert torch.gcd(torch.tensor([lo], dtype=dtype),
                     torch.tensor([6], dtype=dtype)).item() == -2


def shift_ref(name, a, b, bits):
    """Our definition: counts in [0, bits) as C; otherwise 0, or the sign
    for the arithmetic right shift (torch's kernels)."""
    out = []
    for x, s in zip(a.tolist(), b.tolist()):
        inside = 0 <= s < bits
        if name == "bitwise_left_shift":
            r = (x << s) & ((1 << bits) - 1) if inside else 0
        elif name == "bitwise_right_shift":
            r = x >> (s if inside else bits - 1)
        else:
            r = (x & ((1 << bits) - 1)) >> s if inside else 0
        r &= (1 << bits) - 1
        out.append(r - (1 << bits) if r >> (bits - 1) else r)
    return torch.tensor(out, dtype=a.dtype)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("name", ["bitwise_left_shift",
                                  "bitwise_right_shift",
                                  "logical_right_shift"])
def test_shifts(name, dtype):
    bits = torch.iinfo(dtype).bits
    v = values(dtype)
    counts = torch.tensor([0, 1, 3, bits - 1, bits, bits + 1, 2 * bits + 3,
                           -1, -bits, 1000], dtype=dtype)
    a, b = v.repeat_interleave(len(counts)), counts.repeat(len(v))
    (out,) = run(lambda fd: fd.add_output(getattr(fd.ops, name)(
        fd.from_pytorch(a), fd.from_pytorch(b))), [a, b])
    same(out, shift_ref(name, a, b, bits))
    inside = (b >= 0) & (b < bits)
    if name != "logical_right_shift":  # torch agrees where C defines it
        assert torch.equal(out[inside], getattr(torch, name)(a, b)[inside])


def test_shift_by_a_python_int_and_operators():
    x = torch.tensor([1, -8, 5], dtype=torch.int32)

    def build(fd):
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.bitwise_left_shift(t, 3))
        fd.add_output(t >> 1)
        fd.add_output(t << 40)  # out of range for Int32: 0
        fd.add_output(fd.ops.logical_right_shift(t, 28))
    outs = run(build, [x])
    assert all(o.dtype == torch.int32 for o in outs)
    assert outs[0].tolist() == [8, -64, 40]
    assert outs[1].tolist() == [0, -4, 2]
    assert outs[2].tolist() == [0, 0, 0]
    assert outs[3].tolist() == [0, 15, 0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.int64, torch.int32])
def test_addcmul(dtype):
    x = values(dtype)
    t1, t2 = x.flip(0), x.roll(3)
    value = -0.5 if dtype.is_floating_point else 3

    def build(fd):
        a, b, c = (fd.from_pytorch(t) for t in (x, t1, t2))
        fd.add_output(fd.ops.addcmul(a, b, c, value))
        fd.add_output(fd.ops.addcmul(a, b, c))
    out, out1 = run(build, [x, t1, t2])
    up = (lambda t: t.float()) if dtype == torch.bfloat16 else (lambda t: t)
    ref = torch.addcmul(up(x), up(t1), up(t2), value=value)
    torch.testing.assert_close(out, ref, equal_nan=True)
    torch.testing.assert_close(out1, torch.addcmul(up(x), up(t1), up(t2)),
                               equal_nan=True)


def test_addcmul_broadcasts_and_takes_a_runtime_value():
    x = torch.randn(3, 4)
    row = torch.randn(4)
    col = torch.randn(3, 1)

    def build(fd):
        a, b, c = (fd.from_pytorch(t) for t in (x, row, col))
        v = fd.define_scalar(None, dtype=DataType.Double)
        fd.add_output(fd.ops.addcmul(a, b, c, v))
    (out,) = run(build, [x, row, col, 0.25])
    torch.testing.assert_close(out, torch.addcmul(x, row, col, value=0.25))


def define(build):
    with FusionDefinition() as fd:
        build(fd)
    return fd


def tensor(fd, dtype):
    return fd.define_tensor(shape=[-1], dtype=dtype)


@pytest.mark.parametrize("op,dtype,pattern", [
    ("bitwise_left_shift", DataType.Float, r"bitwise_left_shift: operands "
     r"must be integers .* Float"),
    ("bitwise_right_shift", DataType.Bool, r"bitwise_right_shift: .* Bool"),
    ("logical_right_shift", DataType.Half, r"logical_right_shift: .* Half"),
    ("gcd", DataType.Float, r"gcd: operands must be integers .* Float"),
    ("gcd", DataType.Bool, r"gcd: .* Bool"),
    ("nextafter", DataType.Int, r"nextafter: operands must be floating "
     r"point, got .* Int"),
])
def test_bad_binary_operands_raise_at_definition(op, dtype, pattern):
    with pytest.raises(TypeError, match=pattern):
        define(lambda fd: getattr(fd.ops, op)(tensor(fd, dtype),
                                              tensor(fd, dtype)))


@pytest.mark.parametrize("op,dtype,pattern", [
    ("frac", DataType.Int32, r"frac: operand must be floating point, got "
     r"Int32"),
    ("trunc", DataType.Bool, r"trunc: operand must not be Bool"),
])
def test_bad_unary_operands_raise_at_definition(op, dtype, pattern):
    with pytest.raises(TypeError, match=pattern):
        define(lambda fd: getattr(fd.ops, op)(tensor(fd, dtype)))


def test_addcmul_of_integers_with_a_float_value_raises():
    with pytest.raises(TypeError, match=r"addcmul: value .* must be an "
                                        r"integer for operands of type Int"):
        define(lambda fd: fd.ops.addcmul(
            *(tensor(fd, DataType.Int) for _ in range(3)), 0.5))
    with pytest.raises(TypeError, match=r"addcmul: operands must not all be "
                                        r"Bool"):
        define(lambda fd: fd.ops.addcmul(
            *(tensor(fd, DataType.Bool) for _ in range(3)), 1))


def build_everything(fd):
    f = fd.define_tensor(shape=[-1], dtype=DataType.Float)
    i = fd.define_tensor(shape=[-1], dtype=DataType.Int)
    h = fd.define_tensor(shape=[-1], dtype=DataType.BFloat16)
    for name in FLOAT_MATH + PREDICATES + ["sign", "trunc", "frac"]:
        fd.add_output(getattr(fd.ops, name)(f))
    for name in ("atan2", "nextafter"):
        fd.add_output(getattr(fd.ops, name)(f, fd.ops.neg(f)))
    fd.add_output(fd.ops.nextafter(h, fd.ops.cast(f, DataType.BFloat16)))
    for name in ("gcd", "bitwise_left_shift", "bitwise_right_shift",
                 "logical_right_shift"):
        fd.add_output(getattr(fd.ops, name)(i, fd.ops.abs(i)))
    fd.add_output(fd.ops.addcmul(f, f, f, 0.5))
    fd.add_output(fd.ops.addcmul(i, i, i, 2))


def test_printed_definitions_re_execute():
    x = torch.tensor([0.5, -2.0, NAN, INF, -0.0])
    n = torch.tensor([12, -8, 3, 0, 70])
    h = torch.tensor([1.0, 0.0, -1.0, 2.0, 3.0], dtype=torch.bfloat16)
    fd = define(build_everything)
    want = fd.execute([x, n, h])
    script = fd.python_definition()
    for name in FLOAT_MATH + ["gcd", "nextafter", "logical_right_shift"]:
        assert "fd.ops.%s(" % name in script
    # repr(fd) too: nvFuser's printed function, as a user pastes it.
    got, got_repr = run_printed(fd, [x, n, h])
    for w, g, r in zip(want, got, got_repr):
        same(g, w)
        same(r, w)
