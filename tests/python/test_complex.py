"""Complex dtypes (DataType.ComplexFloat / ComplexDouble) against torch on
the CPU: definitions, complex Python scalars (constants and runtime
inputs), torch's promotion and cast rules, real/imag/isreal, the ops torch
computes on complex values (exact values, dtypes and shapes), the ops it
refuses (TypeError naming the op), the scheduler's explicit decision (one
expr_eval segment per op on complex values, the pointwise scheduler's "no"
in the segmenter log) and printed definitions that round-trip."""

import math
import warnings

import pytest
import torch

from nvfuser import DataType, FusionDefinition
from printed import run_printed
from value_checks import assert_same

NAN, INF = float("nan"), float("inf")
CTYPES = [torch.complex64, torch.complex128]


def assert_exact(got, want):
    """Same dtype and shape; complex values compared part by part (NaN
    positions and signs of zero included)."""
    if not want.is_complex():
        assert_same(got, want)
        return
    assert got.dtype == want.dtype and got.shape == want.shape, \
        (got.dtype, got.shape, want.dtype, want.shape)
    assert_same(torch.view_as_real(got.resolve_conj()),
                torch.view_as_real(want.resolve_conj()))


def cvalues(dtype, n=24, seed=0):
    """Random complex values plus zeros of both signs, infinities and NaNs
    in either part."""
    torch.manual_seed(seed)
    special = torch.tensor(
        [0j, complex(-0.0, 0.0), complex(0.0, -0.0), complex(INF, 0),
         complex(0, -INF), complex(NAN, 1), complex(1, NAN), 1 + 1j,
         -2.5 + 0.5j, 3j], dtype=dtype)
    return torch.cat([torch.randn(n, dtype=dtype) * 3, special])


def run(build, inputs):
    with FusionDefinition() as fd:
        build(fd, [fd.from_pytorch(x) if isinstance(x, torch.Tensor) else x
                   for x in inputs])
    return fd.execute(inputs), fd


def schedulers(fd):
    return [g["scheduler"] for g in fd.last_segmentation()["groups"]]


# ---- definitions ----------------------------------------------------------

@pytest.mark.parametrize("dtype", CTYPES)
def test_define_tensor_and_identity(dtype):
    x = cvalues(dtype).reshape(2, 17)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                             dtype=(DataType.ComplexFloat
                                    if dtype == torch.complex64 else
                                    DataType.ComplexDouble))
        fd.add_output(fd.ops.neg(t))
    assert "DataType.Complex" in repr(fd)
    assert_exact(fd.execute([x])[0], -x)


def test_complex_scalar_constants_default_to_complex_double():
    with FusionDefinition() as fd:
        s = fd.define_scalar(1 + 2j)
        f = fd.define_scalar(0.5, dtype=DataType.ComplexFloat)
        assert s.dtype == DataType.ComplexDouble
        assert f.dtype == DataType.ComplexFloat
        assert s._val.value == 1 + 2j
        with pytest.raises(TypeError, match="Float scalars take a Python "
                           "int or float, got complex"):
            fd.define_scalar(1j, dtype=DataType.Float)
        with pytest.raises(TypeError, match="Int scalars take a Python int"):
            fd.define_scalar(1j, dtype=DataType.Int)
        with pytest.raises(TypeError, match="ComplexFloat scalars take a "
                           "Python int, float or complex, got bool"):
            fd.define_scalar(True, dtype=DataType.ComplexFloat)


@pytest.mark.parametrize("dtype", CTYPES)
def test_runtime_complex_scalar_input(dtype):
    x = cvalues(dtype)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        s = fd.define_scalar(None, dtype=DataType.ComplexDouble)
        fd.add_output(fd.ops.mul(t, s))
    for c in (0.5 - 2j, 3, -1.5, complex(NAN, 0)):
        assert_exact(fd.execute([x, c])[0], x * c)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1])
        fd.add_output(fd.ops.mul(t, fd.define_scalar(None,
                                                     dtype=DataType.Float)))
    with pytest.raises(TypeError, match="Float scalars take a Python int "
                       "or float, got complex"):
        fd.execute([torch.randn(3), 1j])


# ---- promotion ------------------------------------------------------------

@pytest.mark.parametrize("real", [torch.float32, torch.float64, torch.int64,
                                  torch.int32, torch.bool, torch.bfloat16])
@pytest.mark.parametrize("ctype", CTYPES)
def test_tensor_promotion_follows_torch(real, ctype):
    z = cvalues(ctype, n=6)
    r = (torch.arange(16) % 3 - 1).to(real)
    for op in ("add", "sub", "mul", "div", "eq", "ne"):
        (out,), _ = run(lambda fd, t: fd.add_output(
            getattr(fd.ops, op)(t[0], t[1])), [z, r])
        # torch refuses `-` with a bool tensor; it subtracts 0 or 1 here.
        other = r.long() if op == "sub" and real == torch.bool else r
        assert_exact(out, getattr(torch, op)(z, other))


@pytest.mark.parametrize("real", [torch.float32, torch.float64, torch.int64,
                                  torch.bool, torch.bfloat16])
def test_complex_python_scalar_gives_the_tensors_complex_type(real):
    # torch: float and the reduced types give complex64, double gives
    # complex128, integers and bool the default complex64.
    r = (torch.arange(6) - 2).to(real)
    for c in (2 - 1j, 1j):
        # (torch refuses `-` with a bool tensor)
        for op in ("add", "mul") + (("sub",) if real != torch.bool else ()):
            (out,), _ = run(lambda fd, t: fd.add_output(
                getattr(fd.ops, op)(t[0], c)), [r])
            assert_exact(out, getattr(torch, op)(r, c))


def test_half_with_complex_scalar_computes_in_complex_float():
    # torch makes complex32 (experimental, few kernels); as Half arithmetic
    # here computes in Float, Half gives ComplexFloat.
    r = torch.tensor([1.0, -2.5, 0.125], dtype=torch.float16)
    (out,), _ = run(lambda fd, t: fd.add_output(fd.ops.mul(t[0], 2j)), [r])
    assert_exact(out, r.float() * 2j)


def test_real_python_scalars_keep_the_complex_type():
    z = cvalues(torch.complex64)
    (a, b, c), _ = run(lambda fd, t: [fd.add_output(o) for o in (
        fd.ops.mul(t[0], 2.5), fd.ops.add(t[0], 3), fd.ops.div(t[0], -0.0))],
        [z])
    assert_exact(a, z * 2.5)
    assert_exact(b, z + 3)
    assert_exact(c, z / -0.0)


# ---- elementwise ops on complex values -------------------------------------

UNARY = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin",
         "cos", "tanh", "sigmoid", "acos", "asin", "atan", "cosh", "sinh",
         "tan", "log10", "log2", "acosh", "asinh", "atanh", "isnan", "isinf",
         "isfinite", "logical_not", "real", "imag", "isreal"]


def torch_unary(name, x):
    return getattr(torch, name)(x)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", CTYPES)
def test_unary_matches_torch(name, dtype):
    x = cvalues(dtype)
    (out,), fd = run(lambda fd, t: fd.add_output(getattr(fd.ops, name)(t[0])),
                     [x])
    assert_exact(out, torch_unary(name, x))
    assert schedulers(fd) == ["expr_eval"]


@pytest.mark.parametrize("dtype", CTYPES)
def test_silu_matches_torch(dtype):
    x = cvalues(dtype)
    (out,), _ = run(lambda fd, t: fd.add_output(fd.ops.silu(t[0])), [x])
    assert_exact(out, torch.nn.functional.silu(x))


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "eq",
                                  "ne", "logical_and", "logical_or"])
@pytest.mark.parametrize("dtype", CTYPES)
def test_binary_matches_torch(name, dtype):
    x = cvalues(dtype, seed=1)
    y = cvalues(dtype, seed=2).flip(0)
    (out,), fd = run(lambda fd, t: fd.add_output(
        getattr(fd.ops, name)(t[0], t[1])), [x, y])
    assert_exact(out, getattr(torch, name)(x, y))
    assert schedulers(fd) == ["expr_eval"]


@pytest.mark.parametrize("exponent", [2, 3, 0.5, -1, 2.5, 1j, 1 - 2j])
def test_pow_by_a_constant_is_torchs_tensor_scalar_pow(exponent):
    x = cvalues(torch.complex64)
    (out,), _ = run(lambda fd, t: fd.add_output(fd.ops.pow(t[0], exponent)),
                    [x])
    assert_exact(out, x ** exponent)


def test_tensor_operators_and_truediv():
    x = cvalues(torch.complex128, seed=3)
    y = torch.arange(x.numel(), dtype=torch.int64) - 5
    (a, b, c, d), _ = run(lambda fd, t: [fd.add_output(o) for o in (
        t[0] / t[1], fd.ops.truediv(t[0], t[1]), -t[0], abs(t[0]))], [x, y])
    assert_exact(a, x / y)
    assert_exact(b, torch.true_divide(x, y))
    assert_exact(c, -x)
    assert_exact(d, x.abs())


def test_where_lerp_and_full():
    x = cvalues(torch.complex64, seed=4)
    y = cvalues(torch.complex64, seed=5)
    m = torch.arange(x.numel()) % 3 == 0
    w = torch.linspace(0, 1, x.numel())

    def build(fd, t):
        fd.add_output(fd.ops.where(t[2], t[0], t[1]))
        fd.add_output(fd.ops.where(t[2], t[0], 0.5))
        fd.add_output(fd.ops.lerp(t[0], t[1], fd.ops.cast(t[3],
                                                          DataType.ComplexFloat)))
        fd.add_output(fd.ops.full([2, 3], 1 - 1j, DataType.ComplexDouble))
    (a, b, c, d), _ = run(build, [x, y, m, w])
    assert_exact(a, torch.where(m, x, y))
    assert_exact(b, torch.where(m, x, torch.tensor(0.5, dtype=x.dtype)))
    assert_exact(c, torch.lerp(x, y, w.to(torch.complex64)))
    assert_exact(d, torch.full([2, 3], 1 - 1j, dtype=torch.complex128))


@pytest.mark.parametrize("dtype", CTYPES)
def test_reductions_match_torch(dtype):
    x = (torch.randn(4, 6, 5, dtype=dtype))

    def build(fd, t):
        fd.add_output(fd.ops.sum(t[0], [1]))
        fd.add_output(fd.ops.sum(t[0], [0, 2], keepdim=True))
        fd.add_output(fd.ops.prod(t[0], [2]))
        fd.add_output(fd.ops.mean(t[0], [1, 2]))
        fd.add_output(fd.ops.cumsum(t[0], -1))
    (s1, s2, p, m, c), _ = run(build, [x])
    assert_exact(s1, x.sum(1))
    assert_exact(s2, x.sum((0, 2), keepdim=True))
    assert_exact(p, x.prod(2))
    assert_exact(m, x.mean((1, 2)))
    assert_exact(c, x.cumsum(-1))


def test_shape_ops_on_complex_values():
    x = torch.randn(3, 4, dtype=torch.complex64)

    def build(fd, t):
        p = fd.ops.permute(t[0], [1, 0])
        fd.add_output(fd.ops.reshape(p, [2, 6]))
        fd.add_output(fd.ops.pad(t[0], [1, 1], 2 + 1j))
        fd.add_output(fd.ops.cat([t[0], t[0]], 0))
        fd.add_output(fd.ops.slice(t[0], [0, 1], [3, 4], [2, 1]))
        fd.add_output(fd.ops.broadcast_in_dim(t[0], [2, 3, 4], [1, 2]))
        fd.add_output(fd.ops.triu(t[0], 1))
    outs, _ = run(build, [x])
    padded = torch.full((3, 6), 2 + 1j, dtype=x.dtype)
    padded[:, 1:5] = x  # (torch 1.13's pad takes no complex value)
    want = [x.t().reshape(2, 6), padded,
            torch.cat([x, x]), x[0:3:2, 1:4], x.expand(2, 3, 4),
            torch.triu(x, 1)]
    for got, w in zip(outs, want):
        assert_exact(got, w)


def test_conjugate_and_negative_views_as_inputs():
    z = torch.randn(8, dtype=torch.complex64)
    for x in (z.conj(), z.conj().imag, torch.view_as_real(z)[:, 1]):
        (out,), _ = run(lambda fd, t: fd.add_output(fd.ops.mul(t[0], 2.0)),
                        [x])
        assert_exact(out, x * 2.0)


# ---- casts ----------------------------------------------------------------

@pytest.mark.parametrize("src", CTYPES)
@pytest.mark.parametrize("dst", [DataType.Float, DataType.Double,
                                 DataType.Half, DataType.BFloat16,
                                 DataType.Int, DataType.Int32, DataType.Bool])
def test_complex_to_real_casts_keep_the_real_part_and_warn(src, dst):
    x = torch.tensor([1.5 + 2j, -3.25 + 0j, 0 + 1j, complex(-0.0, 5),
                      100.75 - 7j], dtype=src)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        with pytest.warns(UserWarning, match="discards the imaginary part"):
            out = fd.ops.cast(t, dst)
        fd.add_output(out)
    torch_dtype = {DataType.Float: torch.float32,
                   DataType.Double: torch.float64,
                   DataType.Half: torch.float16,
                   DataType.BFloat16: torch.bfloat16,
                   DataType.Int: torch.int64, DataType.Int32: torch.int32,
                   DataType.Bool: torch.bool}[dst]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = x.to(torch_dtype)
    assert_exact(fd.execute([x])[0], want)


@pytest.mark.parametrize("src", [torch.float32, torch.float64, torch.float16,
                                 torch.bfloat16, torch.int64, torch.int32,
                                 torch.bool, torch.complex64,
                                 torch.complex128])
@pytest.mark.parametrize("dst", [DataType.ComplexFloat,
                                 DataType.ComplexDouble])
def test_casts_to_complex_match_torch(src, dst):
    x = torch.tensor([1.5, -3.25, 0.0, -0.0, 7.0]).to(src)
    if src.is_complex:
        x = x * (1 - 0.5j)
    (out,), _ = run(lambda fd, t: fd.add_output(fd.ops.cast(t[0], dst)), [x])
    want = torch.complex64 if dst == DataType.ComplexFloat else \
        torch.complex128
    assert_exact(out, x.to(want))


# ---- real, imag, isreal on real values --------------------------------------

def test_real_imag_isreal_of_real_values():
    r = torch.tensor([1.0, -0.0, NAN, INF])
    with FusionDefinition() as fd:
        t = fd.from_pytorch(r)
        fd.add_output(fd.ops.real(t))  # nvFuser: a copy
        fd.add_output(fd.ops.isreal(t))
        with pytest.raises(TypeError, match="imag: operand must be complex, "
                           "got Float"):
            fd.ops.imag(t)
    real, isreal = fd.execute([r])
    assert_exact(real, torch.real(r))
    assert_exact(isreal, torch.isreal(r))
    # A real operand's isreal is a generated kernel (the predicate is true).
    assert "pointwise" in schedulers(fd)


# ---- ops torch does not compute on complex values --------------------------

@pytest.mark.parametrize("name", ["relu", "erf", "floor", "ceil", "round",
                                  "bitwise_not", "exp2", "expm1", "log1p",
                                  "erfc", "erfinv", "erfcinv", "lgamma",
                                  "sign", "trunc", "frac", "isneginf",
                                  "isposinf", "signbit", "gelu"])
def test_unary_refused_with_type_error(name):
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], dtype=DataType.ComplexFloat)
        with pytest.raises(TypeError, match=r"^%s: complex operands are not "
                           r"supported" % name):
            getattr(fd.ops, name)(t)


@pytest.mark.parametrize("name", ["fmod", "remainder", "maximum", "minimum",
                                  "lt", "le", "gt", "ge", "bitwise_and",
                                  "bitwise_or", "bitwise_xor", "atan2",
                                  "nextafter", "gcd", "bitwise_left_shift"])
def test_binary_refused_with_type_error(name):
    with FusionDefinition() as fd:
        c = fd.define_tensor(shape=[-1], dtype=DataType.ComplexFloat)
        r = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        with pytest.raises(TypeError, match=r"^%s: complex operands are not "
                           r"supported" % name):
            getattr(fd.ops, name)(c, r)
        with pytest.raises(TypeError, match=r"^%s: complex operands" % name):
            getattr(fd.ops, name)(r, 1j)


def test_other_ops_refuse_complex_values():
    with FusionDefinition() as fd:
        c = fd.define_tensor(shape=[-1, -1], dtype=DataType.ComplexFloat)
        r = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        i = fd.define_tensor(shape=[-1, -1], dtype=DataType.Int)
        for name in ("max", "min"):
            with pytest.raises(TypeError, match="%s: complex operands are "
                               "not supported \\(complex values have no "
                               "order\\)" % name):
                getattr(fd.ops, name)(c, [1])
        with pytest.raises(TypeError, match="clamp: complex operands"):
            fd.ops.clamp(c, 0.0, 1.0)
        with pytest.raises(TypeError, match="var_mean: input must be "
                           "floating point"):
            fd.ops.var_mean(c, [1])
        with pytest.raises(TypeError, match="matmul: operands must be "
                           "floating point"):
            fd.ops.matmul(c, c)
        with pytest.raises(TypeError, match="sum: a complex input .* cannot "
                           "be reduced into dtype Float"):
            fd.ops.sum(c, [0], dtype=DataType.Float)
        with pytest.raises(TypeError, match="full: a complex fill_value"):
            fd.ops.full([2], 1j, DataType.Float)
        with pytest.raises(TypeError, match="pad: a complex value"):
            fd.ops.pad(r, [1, 1], 1j)
        with pytest.raises(TypeError, match="scatter: a complex scalar src"):
            fd.ops.scatter(r, i, 1j, 0)
        with pytest.raises(TypeError, match="addcmul: value .* must not be "
                           "complex"):
            fd.ops.addcmul(r, r, r, 1j)
        with pytest.raises(TypeError, match="iota: dtype must be integral or "
                           "floating point"):
            fd.ops.iota(4, 0, 1, dtype=DataType.ComplexFloat)


# ---- segmentation -----------------------------------------------------------

def test_each_op_on_complex_values_is_an_expr_eval_segment(monkeypatch,
                                                          capfd):
    monkeypatch.setenv("NVFUSER_DUMP", "segmenter_logging")
    x = torch.randn(4, 8, dtype=torch.complex64)
    r = torch.randn(4, 8)

    def build(fd, t):
        z = fd.ops.exp(fd.ops.mul(t[0], t[1]))   # two complex ops
        m = fd.ops.abs(z)                        # complex in, real out
        fd.add_output(fd.ops.sin(fd.ops.mul(m, t[1])))  # a real kernel
    with FusionDefinition() as fd:
        build(fd, [fd.from_pytorch(x), fd.from_pytorch(r)])
    (out,) = fd.execute([x, r])
    assert_exact(out, torch.sin(torch.exp(x * r).abs() * r))
    assert schedulers(fd) == ["expr_eval"] * 3 + ["pointwise"]
    # The decision is the schedulers', made explicitly and logged.
    log = capfd.readouterr().out
    assert "pointwise: mul T2 has ComplexFloat values (no generated kernel " \
        "type)" in log
    assert "has ComplexFloat values (an ATen op, never forwarded)" in log


# ---- printing ---------------------------------------------------------------

@pytest.mark.parametrize("constant", [
    0.1 + 0.2j, complex(1e-300, -1e300), complex(NAN, -0.0),
    complex(-INF, INF), 1j, complex(1 / 3, math.pi)])
def test_printed_definitions_round_trip_complex_scalars(constant):
    x = cvalues(torch.complex128, seed=6)
    r = torch.randn(x.numel(), dtype=torch.float64)

    def build(fd, t):
        fd.add_output(fd.ops.add(t[0], constant))
        fd.add_output(fd.ops.mul(t[1], constant))
        fd.add_output(fd.ops.cast(t[1], DataType.ComplexFloat))
    outs, fd = run(build, [x, r])
    text = repr(fd)
    assert "DataType.ComplexFloat" in text and "complex(" in text
    assert_exact(outs[0], x + constant)
    assert_exact(outs[1], r * constant)
    for printed in run_printed(fd, [x, r]):
        for got, want in zip(printed, outs):
            assert_exact(got, want)


def test_print_repro_of_a_complex_fusion_runs(capsys):
    x = torch.randn(5, dtype=torch.complex64)
    (out,), fd = run(lambda fd, t: fd.add_output(fd.ops.mul(t[0], 0.5j)),
                     [x])
    fd.execute([x], print_repro=True)
    script = capsys.readouterr().out
    assert "torch.complex64" in script and "complex(0.0, 0.5)" in script
    scope = {}
    exec(script, scope)  # noqa: S102 (our own repro script)
