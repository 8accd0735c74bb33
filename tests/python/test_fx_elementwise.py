"""The FX translations of the elementwise ops fd.ops gained after the first
set (python/nvfuser/fx/elementwise.py): acos ... lgamma and their aliases,
sign/sgn, trunc/fix, frac, the floating-point predicates, atan2, nextafter,
gcd, the shifts in every spelling, addcmul, and the backward graphs
autograd makes of them. Graphs come from symbolic_trace and make_fx (and
aot_function for backwards) and are compiled on the CPU: every call must
run inside a region, and every result equals eager's exactly (dtype,
values, nan where nan, the sign of zero) unless a test says otherwise."""

import warnings

import pytest
import torch
import torch.fx
from torch.fx.experimental.proxy_tensor import make_fx

from fx_check import call_nodes
from nvfuser.fx import compile_graph
from nvfuser.fx.elementwise import FLOAT_FUNCTIONS, PREDICATES
from value_checks import as_tuple as _as_tuple, assert_same, special_values

NAN, INF = float("nan"), float("inf")
FLOATS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 0.999,
          -0.999, 1e-3, 30.0, -30.0, 150.0, -3.0, 7.25, 1e-40, -89.5, 1e30]
TRACES = ["symbolic", "make_fx"]


def values(dtype):
    return special_values(dtype, FLOATS)


def pairs(dtype):
    """Every value of `dtype` against every other."""
    v = values(dtype)
    return v.repeat_interleave(len(v)), v.repeat(len(v))


def compiled(fn, inputs, trace="symbolic"):
    """fn traced and compiled on `inputs`; (module, its results, eager's).
    The module's `traced` is the graph it was compiled from."""
    gm = make_fx(fn)(*inputs) if trace == "make_fx" else \
        torch.fx.symbolic_trace(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = compile_graph(gm, list(inputs))
    c.traced = gm
    return c, _as_tuple(c(*inputs)), _as_tuple(fn(*inputs))


def in_regions(c):
    """The names of the calls the regions run."""
    return {n.name for r in c.nvfuser_regions
            for n in call_nodes(getattr(c, r).eager)}


def check(fn, *inputs, trace="symbolic"):
    """Every call in a region, every result as eager's."""
    c, got, want = compiled(fn, inputs, trace)
    assert not c.nvfuser_unsupported, c.nvfuser_unsupported
    calls = {n.name for n in call_nodes(c.traced)}
    assert calls and calls <= in_regions(c), (calls, in_regions(c))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w)
    return c


def eager_accepts(fn, *inputs):
    try:
        fn(*inputs)
    except RuntimeError:  # "sinh_cpu" not implemented for 'Half', ...
        return False
    return True


ALL_DTYPES = [torch.float32, torch.bfloat16, torch.float64, torch.float16,
              torch.int64, torch.int32, torch.bool]


def per_dtype(op, dtypes=ALL_DTYPES):
    """A function of one input per dtype eager takes for `op`, and those
    inputs."""
    inputs = [values(d) for d in dtypes if eager_accepts(op, values(d))]
    assert inputs
    names = ["x%d" % i for i in range(len(inputs))]
    scope = {"op": op}
    exec("def f(%s):\n    return (%s,)\n" % (  # noqa: S102 (our own code)
        ", ".join(names), ", ".join("op(%s)" % n for n in names)), scope)
    return scope["f"], inputs


# ---- one tensor ---------------------------------------------------------

@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("name", FLOAT_FUNCTIONS)
def test_floating_functions(name, trace):
    # Integers and bools compute in float32 (the default float type),
    # bfloat16 in float rounded once; float16 has no CPU kernel for most.
    fn, inputs = per_dtype(getattr(torch, name))
    assert {x.dtype for x in inputs} >= set(ALL_DTYPES) - {torch.float16}
    check(fn, *inputs, trace=trace)


@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("name", ["sign", "sgn", "trunc", "fix", "frac"])
def test_sign_trunc_frac(name, trace):
    # Each keeps the dtype; sign and sgn of a bool is itself, trunc of an
    # integer the integer; frac and trunc of bools PyTorch refuses.
    fn, inputs = per_dtype(getattr(torch, name))
    check(fn, *inputs, trace=trace)


def test_sign_trunc_frac_at_special_values():
    x = torch.tensor([NAN, -0.0, 0.0, -2.5, 2.5, INF, -INF, -2.0, 1e30])
    c = check(lambda t: (torch.sign(t), t.sgn(), torch.trunc(t), t.fix(),
                         t.frac(), torch.frac(-t)), x)
    assert len(c.nvfuser_regions) == 1


@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("name", PREDICATES)
def test_predicates(name, trace):
    op = getattr(torch, name)
    fn, inputs = per_dtype(op)
    # -nan: signbit reads the bit whatever the value.
    inputs = [torch.cat([x, -torch.tensor([NAN], dtype=x.dtype)])
              if x.dtype.is_floating_point else x for x in inputs]
    assert all(op(x).dtype == torch.bool for x in inputs)
    check(fn, *inputs, trace=trace)


def test_isfinite_as_make_fx_decomposes_it():
    # make_fx spells isfinite abs(x) != inf and x == x, multiplied: a mul
    # of two bools, which is their logical and.
    x = values(torch.float32)
    gm = make_fx(torch.isfinite)(x)
    assert any(n.target is torch.ops.aten.mul.Tensor for n in gm.graph.nodes)
    check(torch.isfinite, x, trace="make_fx")
    check(lambda t: ((t > 0) * (t < 2), (t > 0) * True), x)


ALIASES = [
    (lambda t: torch.arccos(t), "acos"),
    (lambda t: torch.arcsin(t), "asin"),
    (lambda t: t.arctan(), "atan"),
    (lambda t: torch.special.exp2(t), "exp2"),
    (lambda t: torch.special.expm1(t), "expm1"),
    (lambda t: torch.special.log1p(t), "log1p"),
    (lambda t: torch.special.erfc(t), "erfc"),
    (lambda t: torch.special.erfinv(t), "erfinv"),
    (lambda t: torch.special.gammaln(t), "lgamma"),
    (lambda t: t.log1p(), "log1p"),
    (lambda t: t.lgamma(), "lgamma"),
    (lambda t: t.erfinv(), "erfinv"),
    (lambda t: t.isposinf(), "isposinf"),
    (lambda t: t.signbit(), "signbit"),
]


@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("form", [f for f, _ in ALIASES],
                         ids=[n for _, n in ALIASES])
def test_aliases_and_methods(form, trace):
    check(form, torch.tensor(FLOATS), trace=trace)


# ---- two tensors: atan2, nextafter, gcd -----------------------------------

@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.float64, torch.int64, torch.int32,
                                   torch.bool])
def test_atan2(dtype, trace):
    a, b = pairs(dtype)
    check(lambda x, y: (torch.atan2(x, y), y.arctan2(x)), a, b, trace=trace)


@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64,
                                   torch.bfloat16])
def test_nextafter(dtype, trace):
    # (float16 has no CPU kernel in torch 1.13.) bfloat16 steps in its own
    # type.
    a, b = pairs(dtype)
    check(lambda x, y: torch.nextafter(x, y), a, b, trace=trace)


@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_gcd_with_zero_negative_and_min_operands(dtype, trace):
    a, b = pairs(dtype)
    check(lambda x, y: torch.gcd(x, y), a, b, trace=trace)


F32 = torch.tensor([0.5, -2.0, 3.0, -0.0, 1.0])
I64 = torch.tensor([3, -4, 12, 0, 7])

# Each result dtype is PyTorch's: a 0-dim tensor does not widen a
# dimensioned tensor of its category, but lifts integers to its own
# floating type.
PROMOTIONS = [
    ("atan2 int64, float64 0-dim", lambda a, b: torch.atan2(I64 * a, b),
     torch.float64),
    ("atan2 int32, int64", lambda a, b: torch.atan2(a.int(), I64 + a),
     torch.float32),
    ("atan2 bf16, float32", lambda a, b: torch.atan2(a.bfloat16(), a * 3.0),
     torch.float32),
    ("atan2 float32, float64 0-dim", lambda a, b: torch.atan2(a * 1.0, b),
     torch.float32),
    ("nextafter float32, float64 0-dim",
     lambda a, b: torch.nextafter(a * 1.0, b), torch.float32),
    ("nextafter bf16, float32", lambda a, b: torch.nextafter(
        a.bfloat16(), a * 1.0 + 1), torch.float32),
    ("gcd int32, int64", lambda a, b: torch.gcd(a.int(), I64 * a),
     torch.int64),
    ("gcd int32, int64 0-dim", lambda a, b: torch.gcd(
        a.int() * 6, b.long() + 4), torch.int32),
    ("shift int32, int64", lambda a, b: a.int() << (I64 * 0 + 3),
     torch.int64),
    ("shift int32, int64 0-dim", lambda a, b: a.int() << (b.long() + 2),
     torch.int32),
    ("addcmul float32, int64, bf16", lambda a, b: torch.addcmul(
        a * 1.0, I64 * a, a.bfloat16(), value=0.5), torch.float32),
    ("addcmul int32, int64 0-dim", lambda a, b: torch.addcmul(
        a.int(), a.int(), b.long(), value=3), torch.int32),
    ("addcmul int64, bool", lambda a, b: torch.addcmul(
        I64 * a, a > 0, a, value=2), torch.int64),
]


@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("fn,dtype", [(f, d) for _, f, d in PROMOTIONS],
                         ids=[n for n, _, _ in PROMOTIONS])
def test_promotion_as_eager(fn, dtype, trace):
    a, b = torch.tensor([1, -2, 3, 0, 5]), torch.tensor(-1.5,
                                                         dtype=torch.float64)
    assert fn(a, b).dtype == dtype
    check(fn, a, b, trace=trace)


def test_broadcasting_operands():
    a, b = torch.randn(3, 1), torch.randn(4)
    check(lambda x, y: (torch.atan2(x, y), torch.nextafter(y, x)), a, b)
    c, got, want = compiled(lambda x, y: torch.addcmul(y, x, y, value=2),
                            [a, b])
    assert not c.nvfuser_unsupported
    torch.testing.assert_close(got[0], want[0])  # see below: FMA
    n, m = torch.tensor([[12], [-18]]), torch.tensor([4, 6, 9])
    check(lambda x, y: (torch.gcd(x, y), x << (y & 7), y >> x.abs()), n, m)


# ---- shifts ---------------------------------------------------------------

SHIFTS = [
    lambda x, n: x << n,
    lambda x, n: x >> n,
    lambda x, n: x << 3,
    lambda x, n: x >> 5,
    lambda x, n: 3 << n,
    lambda x, n: -77 >> n,
    lambda x, n: torch.bitwise_left_shift(x, n),
    lambda x, n: torch.bitwise_right_shift(x, 2),
    lambda x, n: torch.bitwise_left_shift(5, n),
    lambda x, n: x.bitwise_right_shift(n),
    lambda x, n: x.__lshift__(n),
    lambda x, n: x.__rshift__(1),
    lambda x, n: n.__rlshift__(x),
    lambda x, n: n.__rrshift__(7),
    lambda x, n: x << True,
]
SHIFT_IDS = ["<<", ">>", "<< 3", ">> 5", "3 <<", "-77 >>", "left_shift",
             "right_shift 2", "left_shift(5, n)", "method", "__lshift__",
             "__rshift__", "__rlshift__", "__rrshift__", "<< True"]


def shift_operands(dtype):
    """Every value against counts in [0, bits)."""
    bits = torch.iinfo(dtype).bits
    counts = torch.tensor([0, 1, 3, 7, bits - 2, bits - 1], dtype=dtype)
    v = values(dtype)
    return v.repeat_interleave(len(counts)), counts.repeat(len(v))


@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("form", SHIFTS, ids=SHIFT_IDS)
def test_shifts(form, dtype, trace):
    check(form, *shift_operands(dtype), trace=trace)


def test_a_constant_count_outside_the_width_stays_in_eager():
    x = values(torch.int32)
    c, got, want = compiled(lambda t: (t << 40, t >> -1, t * 2), [x])
    assert c.nvfuser_unsupported == {
        "lshift": "a shift by 40, outside [0, 32)",
        "rshift": "a shift by -1, outside [0, 32)"}
    for g, w in zip(got, want):
        assert_same(g, w)


def core_shift(name, a, n, bits):
    """The core's definition: counts in [0, bits) as C; otherwise 0, or the
    sign for >> (torch's current kernels)."""
    out = []
    for x, s in zip(a.tolist(), n.tolist()):
        inside = 0 <= s < bits
        if name == "<<":
            r = (x << s) & ((1 << bits) - 1) if inside else 0
        else:
            r = x >> (s if inside else bits - 1)
        r &= (1 << bits) - 1
        out.append(r - (1 << bits) if r >> (bits - 1) else r)
    return torch.tensor(out, dtype=a.dtype)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_tensor_counts_outside_the_width(dtype):
    # A count tensor's values are not known when compiling: counts < 0 or
    # >= bits follow the core (0, or the sign for >>), where torch 1.13's
    # CPU kernels take them modulo the width.
    bits = torch.iinfo(dtype).bits
    v = values(dtype)
    counts = torch.tensor([-1, -bits, bits, bits + 1, 2 * bits + 3, 1000],
                          dtype=dtype)
    a, n = v.repeat_interleave(len(counts)), counts.repeat(len(v))
    c, got, _ = compiled(lambda x, s: (x << s, x >> s), [a, n])
    assert not c.nvfuser_unsupported
    assert_same(got[0], core_shift("<<", a, n, bits))
    assert_same(got[1], core_shift(">>", a, n, bits))


@pytest.mark.parametrize("write", [
    lambda x, n: x.__ilshift__(n), lambda x, n: x.bitwise_left_shift_(n),
    lambda x, n: x.__irshift__(2), lambda x, n: x.bitwise_right_shift_(n),
], ids=["<<=", "left_shift_", ">>=", "right_shift_"])
def test_in_place_shifts_stay_in_eager(write):
    def f(x, n):
        before = x << 1
        write(x, n)
        return before, x >> n, x
    x, n = shift_operands(torch.int64)
    c, got, want = compiled(f, [x.clone(), n])
    reasons = [r for r in c.nvfuser_unsupported.values()
               if "writes to a tensor in place" in r]
    assert len(reasons) == 1, c.nvfuser_unsupported
    assert c.nvfuser_regions
    x0 = x.clone()
    got, want = c(x.clone(), n), f(x0.clone(), n)
    for g, w in zip(got, want):
        assert_same(g, w)


def test_bools_shift_as_the_integers_they_promote_to():
    # (torch 1.13 shifts no bool, float or half tensor on the CPU; an
    # int64 count makes the bools int64.)
    b, n = torch.tensor([True, False, True]), torch.tensor([1, 2, 3])
    check(lambda x, s: x << s, b, n)


# ---- addcmul ----------------------------------------------------------------

def addcmul_operands(dtype):
    x = values(dtype)
    return x, x.flip(0), x.roll(3)


@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32,
                                   torch.bfloat16])
def test_addcmul_exactly(dtype, trace):
    # bfloat16 computes in float and rounds once, as PyTorch's kernels.
    value = -0.3 if dtype.is_floating_point else 3
    check(lambda x, a, b: (torch.addcmul(x, a, b), torch.addcmul(
        x, a, b, value=value), x.addcmul(a, b, value=2)),
        *addcmul_operands(dtype), trace=trace)


@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_addcmul_of_floats_rounds_once_as_atens_cpu_kernel(dtype, trace):
    # ATen's CPU kernel is fma(value * a, b, x); the core's addcmul is the
    # same (until session 24 it rounded the product before the add).
    x, a, b = (torch.randn(1000, dtype=dtype) for _ in range(3))
    c, got, want = compiled(lambda x, a, b: torch.addcmul(
        x, a, b, value=-0.3), [x, a, b], trace)
    assert not c.nvfuser_unsupported
    assert_same(got[0], want[0])
    x, a, b = addcmul_operands(dtype)
    c, got, want = compiled(lambda x, a, b: torch.addcmul(x, a, b, value=2),
                            [x, a, b], trace)
    assert_same(got[0], want[0])


def test_addcmul_of_integers_truncates_a_floating_value():
    # torch 1.13 converts the value to the integer type (toward zero).
    x, a, b = addcmul_operands(torch.int32)
    check(lambda x, a, b: (torch.addcmul(x, a, b, value=0.25),
                           torch.addcmul(x, a, b, value=-1.5),
                           torch.addcmul(x, a, b, value=2.7),
                           torch.addcmul(x, a, b, value=True)), x, a, b)


# ---- backward graphs ------------------------------------------------------

BACKWARDS = {
    "acos": torch.acos, "asin": torch.asin, "atan": torch.atan,
    "cosh": torch.cosh, "sinh": torch.sinh, "tan": torch.tan,
    "exp2": torch.exp2, "expm1": torch.expm1, "log10": torch.log10,
    "log1p": torch.log1p, "log2": torch.log2, "erfc": torch.erfc,
    "erfinv": torch.erfinv, "sign": torch.sign, "sgn": torch.sgn,
    "trunc": torch.trunc, "frac": torch.frac,
    "abs (sgn)": torch.abs,
    "atan2": lambda x: torch.atan2(x, x * 2 + 1),
    "addcmul": lambda x: torch.addcmul(x, x * 2, x + 1, value=0.5),
    "mixed": lambda x: (x.abs() * x.sign()).sgn() + torch.special.expm1(
        x) * x.frac(),
}


def aot_compiled(fn, x):
    """fn's forward and backward graphs compiled; (result, grad, what
    each graph left to eager)."""
    from functorch.compile import aot_function, make_boxed_func
    eager = []

    def comp(gm, example_inputs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = compile_graph(gm, example_inputs)
        eager.append(dict(c.nvfuser_unsupported))
        return make_boxed_func(c)
    x = x.clone().requires_grad_()
    y = aot_function(fn, comp, comp)(x)
    y.sum().backward()
    return y, x.grad, eager


@pytest.mark.parametrize("name", list(BACKWARDS))
def test_backward_graphs(name):
    # Autograd spells these backwards in pointwise ATen ops (mul, rsqrt,
    # pow, sinh, erfinv, sgn, _efficientzerotensor, ...): forward and
    # backward each run in regions, with eager's gradient.
    fn = BACKWARDS[name]
    x = torch.rand(6) * 0.8 + 0.1
    y, grad, eager = aot_compiled(fn, x)
    assert eager == [{}, {}], eager
    x = x.clone().requires_grad_()
    want = fn(x)
    want.sum().backward()
    if name == "addcmul":  # eager's FMA (test_addcmul_rounds_...)
        torch.testing.assert_close(y.detach(), want.detach())
    else:
        assert_same(y.detach(), want.detach())
    assert_same(grad, x.grad)


def test_lgamma_backward_calls_digamma_in_the_region():
    # No core op computes digamma: ATen's runs inside the region.
    x = torch.rand(6) * 3 + 0.1
    y, grad, eager = aot_compiled(torch.lgamma, x)
    assert eager == [{}, {}]
    x.requires_grad_()
    torch.lgamma(x).sum().backward()
    assert_same(grad, x.grad)


@pytest.mark.parametrize("trace", TRACES)
def test_a_zero_dim_operand_computes_in_the_result_type(trace):
    # The translator broadcast 0-dim operands before the op, so float32 x *
    # float64 s computed in float64 and rounded twice (a fifth of the
    # elements differed from eager); the core now sees s as 0-dim.
    x = torch.randn(1000)
    s = torch.tensor(0.3, dtype=torch.float64)
    c, got, want = compiled(lambda x, s: (x * s, x + s, torch.where(
        x > 0, x, s), torch.addcmul(x, x, s)), [x, s], trace)
    assert not c.nvfuser_unsupported
    for g, w in zip(got, want):
        assert_same(g, w)
