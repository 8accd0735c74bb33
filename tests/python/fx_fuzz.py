"""A fuzzer for the FX path: random small programs of the ops the
translator supports, traced, compiled with ``compile_graph`` and compared
with eager.

Each case is one seed. ``generate(seed)`` writes a Python function (its
source is kept, so a failure can be read and replayed) over random inputs
of random dtypes (float32/64, float16, int32/64, bool), mixing unary and
binary ops (every division form with ints, floats and bools, broadcasting,
Python scalars; the floating functions, sign/trunc/frac, the predicates,
atan2, nextafter, gcd, the shifts, addcmul), reductions with keepdim,
views, where, casts, and now and then an in-place op or an ``out=``
call. In some symbolic_trace cases Python numbers are parameters of the
program (graph inputs, as dynamo passes sizes); those cases are called
again with equal numbers of another type or sign (1.0 for 1, -0.0 for
0.0), twice, to check the region's variant for them. Every line is run
in eager while the program is written; a line PyTorch rejects (a dtype it
does not implement, an integer division by zero) is dropped, so every
program runs in eager. ``run_case(seed)`` traces the program
(``symbolic_trace`` or ``make_fx``), compiles it, checks that compiling left the example inputs
alone, and compares outputs and the inputs the program writes to with
eager: exactly for integer and bool results, with a tolerance by dtype for
floating ones, and that no region returns an output it promises
transposed as a view of a row-major kernel output (a layout copy every
call: ``fx_check.transposed_outputs_left_as_views``). A mismatch raises ``FuzzFailure`` whose message holds the
seed and the program.

    python tests/python/fx_fuzz.py 0 500     # seeds 0..499
    python tests/python/fx_fuzz.py --seed 17 # one case, printed
    NVFUSER_FUZZ_DEVICE=cuda python tests/python/fx_fuzz.py 0 500

Programs are written on the CPU (so every seed gives the same program
everywhere); NVFUSER_FUZZ_DEVICE=cuda runs them on the GPU.
"""

import os
import random
import re
import sys
import warnings

import torch
import torch.fx
import torch.nn.functional as F  # noqa: N812 (the generated code uses F)
from torch.fx.experimental.proxy_tensor import make_fx

from nvfuser.fx import compile_graph

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fx_check import transposed_outputs_left_as_views  # noqa: E402

DTYPES = (torch.float32, torch.float64, torch.float16, torch.int64,
          torch.int32, torch.bool)
FLOATS = (torch.float32, torch.float64, torch.float16)
INTS = (torch.int64, torch.int32)
MAX_ELEMENTS = 48


class FuzzFailure(AssertionError):
    """A case whose compiled result differs from eager."""


class FuzzSkip(Exception):
    """A case no tracer traces faithfully (make_fx refused a program with
    x[i] = v, which symbolic_trace cannot trace at all; or the traced
    graph computes something else than the program)."""


class Case:
    """One generated program: its seed, source, function and inputs."""

    def __init__(self, seed, source, fn, inputs, tracer, dtypes, scalars=()):
        self.seed = seed
        self.source = source
        self.fn = fn
        self.inputs = inputs
        self.tracer = tracer
        # Number parameters after the tensors: [(name, value)].
        self.scalars = list(scalars)
        # Every dtype a value of the program has: a float64 result computed
        # from float32 values is only as close as float32 arithmetic.
        self.dtypes = dtypes

    def describe(self):
        shapes = ", ".join("%s%s" % (str(t.dtype).replace("torch.", ""),
                                     list(t.shape)) for t in self.inputs)
        numbers = "".join(", %s=%r" % s for s in self.scalars)
        return "seed %d (%s; inputs %s%s):\n%s" % (
            self.seed, self.tracer, shapes, numbers, self.source)

    def values(self):
        return [v for _, v in self.scalars]


# ---- inputs -------------------------------------------------------------

def _random_tensor(rng, gen, shape, dtype):
    n = 1
    for s in shape:
        n *= s
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) < 0.5
    if dtype in INTS:
        # Some integer inputs hold no zero, so divisions by them survive
        # (eager raises for an integer division by zero).
        low, high = (-6, 7)
        t = torch.randint(low, high, shape, generator=gen, dtype=dtype)
        if rng.random() < 0.5:
            t = torch.where(t == 0, torch.ones_like(t), t)
        return t
    t = torch.randn(shape, generator=gen, dtype=torch.float64) * 3
    if rng.random() < 0.3 and n:
        # Now and then a special value: signed zeros, infinities, nan.
        flat = t.view(-1)
        specials = [0.0, -0.0, float("inf"), float("-inf"), float("nan"),
                    0.5, -1.5]
        for _ in range(rng.randint(1, 2)):
            flat[rng.randrange(n)] = rng.choice(specials)
    return t.to(dtype)


def _random_shape(rng):
    rank = rng.choice((0, 1, 1, 2, 2, 2, 3, 3))
    return tuple(rng.choice((1, 2, 3, 4)) for _ in range(rank))


# ---- program builder ------------------------------------------------------

class _Builder:
    """Writes a program line by line, running each line in eager on copies
    of the inputs; lines PyTorch rejects are dropped."""

    def __init__(self, rng, inputs, params_rng=None):
        self.rng = rng
        self.inputs = inputs
        # Draws which numbers become parameters (its own generator, so a
        # seed's program is the same with or without them).
        self.params_rng = params_rng
        self.scalars = []
        self.names = ["a%d" % i for i in range(len(inputs))]
        self.tensors = list(self.names)
        self.lines = []
        self.count = 0
        self._replay()

    def _replay(self):
        """The state after the kept lines, from fresh copies of the inputs
        (a rejected line may have written before it failed)."""
        self.env = {"torch": torch, "F": F}
        for name, t in zip(self.names, self.inputs):
            self.env[name] = t.clone()
        self.env.update(self.scalars)
        for line in self.lines:
            exec(line, self.env)  # noqa: S102 (our own generated code)

    def value(self, name):
        return self.env[name]

    def add(self, expr):
        """Runs `v = expr`; keeps the line when eager accepts it and gives a
        small tensor of a supported dtype. Returns the new name or None."""
        name = "v%d" % self.count
        return self._run("%s = %s" % (name, expr), name)

    def add_statement(self, expr):
        """An expression run for its effect (an in-place write); kept when
        eager accepts it."""
        return self._run(expr, None) is not None

    def _run(self, line, name):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # resize warnings and the like
                exec(line, self.env)  # noqa: S102 (our own generated code)
            if name is not None:
                v = self.env[name]
                if not (isinstance(v, torch.Tensor) and v.dtype in DTYPES
                        and v.numel() <= MAX_ELEMENTS):
                    raise ValueError("not a small tensor we compile")
        except Exception:  # noqa: BLE001 (PyTorch refused: drop the line)
            self._replay()
            return None
        if name is not None:
            self.tensors.append(name)
            self.count += 1
        self.lines.append(line)
        return name or True

    def number(self, value):
        """A Python number operand: its literal, or now and then a
        parameter of the program (a graph input, as dynamo passes sizes)."""
        if self.params_rng is None or self.params_rng.random() < 0.3:
            return repr(value)
        name = "s%d" % len(self.scalars)
        self.scalars.append((name, value))
        self.env[name] = value
        return name

    def pick(self, pred=None):
        names = [n for n in self.tensors
                 if pred is None or pred(self.env[n])]
        return self.rng.choice(names) if names else None


def _scalar_value(rng, for_division=False):
    choices = [2, 3, -2, 2.5, -0.5, 1.5, True]
    if not for_division:
        choices += [0, 0.0, False]
    return rng.choice(choices)


def _scalar(rng, for_division=False):
    return repr(_scalar_value(rng, for_division))


def twin(v):
    """A number equal to v (==) that is another argument: another type,
    or the other sign of a zero; non-integral floats change sign."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return float(v) if v else False
    if v == 0:
        return -v
    return int(v) if float(v).is_integer() else -v


def _dim(rng, rank):
    return rng.randrange(-rank, rank) if rank else None


def _operand(b, rng, division=False):
    """A tensor name, or now and then a Python scalar."""
    if rng.random() < 0.3:
        return b.number(_scalar_value(rng, division))
    return b.pick()


_UNARY = ("torch.neg({x})", "torch.abs({x})", "torch.exp({x})",
          "torch.log({x})", "torch.sin({x})", "{x}.cos()", "torch.tanh({x})",
          "torch.sigmoid({x})", "torch.sqrt({x})", "torch.rsqrt({x})",
          "torch.relu({x})", "F.relu({x})", "torch.reciprocal({x})",
          "F.silu({x})", "torch.erf({x})", "torch.floor({x})",
          "{x}.ceil()", "torch.round({x})", "torch.round({x}, decimals=1)",
          "torch.round({x}, decimals=-1)", "{x}.round(decimals=2)",
          "torch.logical_not({x})", "torch.bitwise_not({x})", "-{x}",
          "~{x}", "torch.acos({x})", "torch.asin({x})", "{x}.atan()",
          "torch.cosh({x})", "torch.sinh({x})", "torch.tan({x})",
          "torch.exp2({x})", "torch.expm1({x})", "torch.log10({x})",
          "torch.log1p({x})", "{x}.log2()", "torch.erfc({x})",
          "torch.erfinv({x})", "torch.lgamma({x})", "torch.arcsin({x})",
          "torch.special.expm1({x})", "torch.special.gammaln({x})",
          "torch.sign({x})", "torch.sgn({x})", "{x}.trunc()",
          "torch.fix({x})", "torch.frac({x})", "torch.isinf({x})",
          "torch.isfinite({x})", "{x}.isneginf()", "torch.isposinf({x})",
          "torch.signbit({x})", "torch.isnan({x})")

_BINARY = ("{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / {b}",
           "{a} // {b}", "{a} % {b}", "torch.div({a}, {b})",
           "torch.div({a}, {b}, rounding_mode='trunc')",
           "torch.div({a}, {b}, rounding_mode='floor')",
           "{a}.div({b}, rounding_mode='floor')",
           "torch.true_divide({a}, {b})", "torch.floor_divide({a}, {b})",
           "torch.remainder({a}, {b})", "torch.fmod({a}, {b})",
           "torch.maximum({a}, {b})", "torch.minimum({a}, {b})",
           "{a} == {b}", "{a} < {b}", "{a} >= {b}", "torch.ne({a}, {b})",
           "{a} & {b}", "{a} | {b}", "{a} ^ {b}",
           "torch.add({a}, {b}, alpha=2)", "torch.sub({a}, {b}, alpha=-1)",
           "torch.rsub({a}, {b})", "torch.mul({a}, other={b})",
           "{a} ** 2", "torch.pow({a}, 0.5)", "torch.atan2({a}, {b})",
           "{a}.arctan2({b})", "torch.nextafter({a}, {b})",
           "torch.gcd({a}, {b})")

_DIVISIONS = ("/", "//", "%", "div", "divide", "remainder", "fmod")


def _unary(b, rng):
    x = b.pick()
    return b.add(rng.choice(_UNARY).format(x=x))


def _binary(b, rng):
    form = rng.choice(_BINARY)
    division = any(d in form for d in _DIVISIONS)
    a = b.pick()
    other = _operand(b, rng, division)
    if rng.random() < 0.2 and form.startswith("{a} "):
        a, other = _scalar(rng, False), b.pick()  # 2 - x, 3 // x
    return b.add(form.format(a=a, b=other))


def _shift(b, rng):
    """x << n and x >> n in their spellings. Counts stay in [0, bits)
    (a tensor count masked with & 15): torch 1.13's CPU kernels take
    others modulo the width, the core gives 0 (the sign for >>) as
    torch's current kernels. A constant count outside the range stays in
    eager."""
    x, n = b.pick(), b.pick()
    count = rng.choice(("({n} & 15)", "({n} & 15)", str(rng.randrange(8)),
                        "40", "-1")).format(n=n)
    form = rng.choice(("{x} << {c}", "{x} >> {c}",
                       "torch.bitwise_left_shift({x}, {c})",
                       "torch.bitwise_right_shift({x}, {c})",
                       "{x}.bitwise_left_shift({c})", "{s} << ({n} & 7)",
                       "torch.bitwise_right_shift({s}, {n} & 7)"))
    return b.add(form.format(x=x, c=count, n=n,
                             s=rng.choice((3, -100, 1))))


def _addcmul(b, rng):
    return b.add("torch.addcmul(%s, %s, %s%s)" % (
        b.pick(), b.pick(), b.pick(), rng.choice(
            ("", ", value=2", ", value=-0.5", ", value=0.25"))))


def _reduction(b, rng):
    x = b.pick(lambda t: t.dim() > 0)
    if x is None:
        return None
    rank = b.value(x).dim()
    d = _dim(rng, rank)
    dims = sorted({_dim(rng, rank) % rank for _ in range(2)})
    keep = rng.choice((True, False))
    form = rng.choice((
        "{x}.sum({d})", "torch.sum({x}, {dims}, {keep})",
        "{x}.sum()", "{x}.mean(dim={dims}, keepdim={keep})",
        "torch.mean({x}.float(), {d})", "torch.amax({x}, {d})",
        "{x}.amin({dims}, {keep})", "{x}.prod({d})",
        "torch.prod({x}, {d}, keepdim={keep})",
        "torch.var({x}, {d}, {unbiased})",
        "{x}.var({dims}, unbiased={unbiased}, keepdim={keep})",
        "torch.var({x}, dim={d}, correction=0)", "{x}.var({unbiased})",
        "torch.sum({x}, dim={d}, dtype=torch.float64)"))
    return b.add(form.format(x=x, d=d, dims=dims, keep=keep,
                             unbiased=rng.choice((True, False))))


def _factor_shape(rng, n):
    """A random shape with n elements."""
    shape = []
    while n > 1:
        f = rng.choice([k for k in range(2, n + 1) if n % k == 0])
        shape.append(f)
        n //= f
    rng.shuffle(shape)
    if rng.random() < 0.3:
        shape.insert(rng.randrange(len(shape) + 1), 1)
    if shape and rng.random() < 0.3:
        shape[rng.randrange(len(shape))] = -1
    return shape


def _index(rng, shape):
    parts = []
    for s in shape:
        kind = rng.random()
        if kind < 0.3 and s:
            parts.append(str(rng.randrange(-s, s)))
        elif kind < 0.8:
            a = rng.choice((None, 0, 1, -1))
            c = rng.choice((None, None, 2))
            parts.append("%s:%s%s" % ("" if a is None else a,
                                      rng.choice(("", "3", "-1")),
                                      "" if c is None else ":%d" % c))
        else:
            parts.append(":")
        if rng.random() < 0.15:
            parts.append("None")
    if parts and rng.random() < 0.2:
        parts[0] = "..."
    return ", ".join(parts) or "..."


def _view(b, rng):
    x = b.pick()
    t = b.value(x)
    rank = t.dim()
    shape = list(t.shape)
    forms = ["{x}.reshape({new})", "{x}.view({new_list})",
             "{x}.unsqueeze({d1})", "torch.unsqueeze({x}, dim={d1})",
             "{x}.flatten()", "{x}[{index}]"]
    if rank:
        forms += ["{x}.permute({perm})", "{x}.squeeze({d})",
                  "torch.squeeze({x}, dim={d})",
                  "{x}.narrow({d}, {start}, 1)",
                  "{x}.split(2, {d})[0]", "torch.chunk({x}, 2, dim={d})[-1]",
                  "{x}.expand({expanded})", "torch.cat([{x}, {x}], {d})"]
    if rank >= 2:
        forms += ["{x}.transpose({d}, {d2})",
                  "torch.transpose({x}, dim0={d}, dim1={d2})"]
    if rank <= 2:
        forms.append("{x}.t()")
    d = _dim(rng, rank)
    perm = list(range(rank))
    rng.shuffle(perm)
    expanded = [rng.choice((s, 3)) if s == 1 else s for s in shape]
    new = _factor_shape(rng, t.numel())
    return b.add(rng.choice(forms).format(
        x=x, new=", ".join(map(str, new)) or "()", new_list=new,
        d=d, d2=_dim(rng, rank), d1=rng.randrange(-rank - 1, rank + 1),
        perm=", ".join(map(str, perm)), index=_index(rng, shape),
        start=rng.randrange(-1, 1), expanded=", ".join(map(str, expanded))))


def _cast(b, rng):
    x = b.pick()
    form = rng.choice(("{x}.float()", "{x}.double()", "{x}.to(torch.int32)",
                       "{x}.to(dtype=torch.float64)", "{x}.long()",
                       "{x}.half()", "{x}.type_as({y})",
                       "{x}.to(torch.float16)"))
    return b.add(form.format(x=x, y=b.pick()))


def _where(b, rng):
    cond = b.pick(lambda t: t.dtype == torch.bool)
    if cond is None:
        x = b.pick()
        cond = b.add("%s > %s" % (x, _scalar(rng)))
        if cond is None:
            return None
    return b.add("torch.where(%s, %s, %s)" % (cond, b.pick(),
                                              _operand(b, rng)))


def _factory(b, rng):
    x = b.pick()
    form = rng.choice(("torch.zeros_like({x})", "torch.ones_like({x}) + {x}",
                       "torch.full_like({x}, {s}) * {x}",
                       "torch.zeros_like({x}, dtype=torch.float64) - {x}"))
    return b.add(form.format(x=x, s=_scalar(rng)))


def _inplace(b, rng, setitem):
    """An in-place write to a value (an input, a view of one, or an
    intermediate), then reads that see it. `setitem`: x[i] = v too (only
    make_fx traces it)."""
    x = b.pick()
    other = _operand(b, rng)
    forms = ["{x}.add_({o})", "{x}.mul_({o})", "{x}.sub_({o})",
             "{x}.div_({o})", "{x}.copy_({o})", "{x}.zero_()",
             "torch.add({x}, {o}, out={x})", "F.relu({x}, inplace=True)",
             "{x}.relu_()", "torch.mul({o}, 2, out={x})"]
    if setitem:
        forms += ["{x}[{index}] = {s}", "{x}[{index}] = {o}"]
    form = rng.choice(forms)
    return b.add_statement(form.format(
        x=x, o=other, s=_scalar(rng),
        index=_index(rng, list(b.value(x).shape))))


def _matmul(b, rng):
    """A matmul of a value by its transpose: an expr_eval segment reading
    a computed value, as attention reads Llama's q (eager keeps a
    transposed operand's layout in the ops after it, so such a value may
    be promised transposed)."""
    names = [n for n in b.tensors
             if b.env[n].dim() >= 2 and b.env[n].is_floating_point()]
    if not names:
        return None
    x = rng.choice(names)
    if rng.random() < 0.5:  # a value computed from a transpose
        x = b.add("%s.transpose(-1, -2) * %s" % (x, _scalar(rng))) or x
    return b.add("torch.matmul(%s, %s.transpose(-1, -2))" % (x, x))


_STEPS = ((_unary, 3), (_binary, 6), (_reduction, 2), (_view, 3),
          (_cast, 1), (_where, 1), (_factory, 1), (_shift, 1),
          (_addcmul, 1))


def generate(seed):
    """The case of one seed (deterministic)."""
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    inputs = []
    for _ in range(rng.randint(1, 3)):
        shape = _random_shape(rng)
        if inputs and rng.random() < 0.5:  # a broadcast partner
            base = list(inputs[0].shape)
            shape = tuple(rng.choice((s, 1)) for s in base[rng.randrange(
                len(base) + 1):])
        inputs.append(_random_tensor(rng, gen, shape, rng.choice(DTYPES)))
    tracer = "make_fx" if rng.random() < 0.3 else "symbolic_trace"
    # make_fx bakes numbers into the graph; symbolic_trace keeps them
    # inputs.
    params = random.Random(seed + 7_000_003)
    b = _Builder(rng, inputs, params if tracer == "symbolic_trace" and
                 params.random() < 0.5 else None)
    steps, weights = zip(*_STEPS)
    writes = rng.random() < 0.3
    for _ in range(rng.randint(2, 8)):
        if writes and rng.random() < 0.25:
            _inplace(b, rng, setitem=tracer == "make_fx")
        else:
            rng.choices(steps, weights)[0](b, rng)
    # Its own generator, so the programs of seeds without it stay as they
    # were before it was added.
    extra = random.Random(seed + 11_000_003)
    if extra.random() < 0.25:
        _matmul(b, extra)
    made = [n for n in b.tensors if n.startswith("v")]
    outputs = made[-rng.randint(1, 2):] if made else []
    outputs += rng.sample(b.tensors, min(len(b.tensors), rng.randint(0, 1)))
    # Values computed from a number parameter are outputs too, so a
    # wrong translation for another number shows.
    params = {n for n, _ in b.scalars}
    outputs += [line.split(" = ")[0] for line in b.lines
                if " = " in line and line.split(" = ")[0] in b.tensors
                and params & set(re.findall(r"\bs\d+\b", line))][-2:]
    outputs = list(dict.fromkeys(outputs)) or [b.names[0]]
    body = ["    " + line for line in b.lines]
    source = "def f(%s):\n%s\n    return (%s,)\n" % (
        ", ".join(b.names + [n for n, _ in b.scalars]), "\n".join(body),
        ", ".join(outputs))
    scope = {"torch": torch, "F": F}
    exec(compile(source, "<fx_fuzz seed %d>" % seed, "exec"), scope)  # noqa
    dtypes = {b.value(n).dtype for n in b.tensors}
    return Case(seed, source, scope["f"], inputs, tracer, dtypes, b.scalars)


# ---- running and comparing ----------------------------------------------

def _trace(case):
    """The case's graph. make_fx cannot trace every program eager runs (it
    passes a Python bool where ATen wants a Tensor): those fall back to
    symbolic_trace."""
    if case.tracer == "make_fx":
        try:
            return make_fx(case.fn)(*[t.clone() for t in case.inputs])
        except Exception:  # noqa: BLE001 (a tracer limit, not our bug)
            case.tracer = "symbolic_trace (make_fx failed)"
    try:
        return torch.fx.symbolic_trace(case.fn)
    except Exception as e:  # noqa: BLE001
        raise FuzzSkip("seed %d: no tracer: %s" % (case.seed, e)) from e


_TOLERANCE = {torch.float16: (1e-2, 1e-2), torch.bfloat16: (2e-2, 2e-2),
              torch.float32: (1e-5, 1e-5), torch.float64: (1e-9, 1e-9)}


def _same(got, want, dtypes=()):
    """None when equal (exactly for integers and bools, closely for
    floats, nan where nan), else what differs. The float tolerance is the
    loosest of want's dtype and `dtypes` (those its inputs were computed
    in)."""
    if not isinstance(got, torch.Tensor):
        return "got %s, want a tensor" % type(got).__name__
    if got.dtype != want.dtype or got.shape != want.shape:
        return "got %s%s, want %s%s" % (got.dtype, list(got.shape),
                                        want.dtype, list(want.shape))
    if not want.dtype.is_floating_point:
        return None if torch.equal(got, want) else \
            "values differ:\n got %s\nwant %s" % (got, want)
    rtol, atol = max(_TOLERANCE[d] for d in set(dtypes) | {want.dtype}
                     if d in _TOLERANCE)
    try:
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol,
                                   equal_nan=True)
    except AssertionError as e:
        return "values differ: %s\n got %s\nwant %s" % (
            str(e).splitlines()[0], got, want)
    return None


def _identical(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and (
        torch.equal(a, b) or (a.dtype.is_floating_point and bool(
            ((a == b) | (a.isnan() & b.isnan())).all())))


def _check_tracer(case, gm, want, eager_in):
    """Skips a case whose traced graph, run in eager, already differs from
    the program (make_fx records `bool_tensor & True` as an int64 op in
    torch 1.13): compile_graph can only be asked to match the graph."""
    graph_in = [t.clone() for t in case.inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = gm(*graph_in, *case.values())
    traced = traced if isinstance(traced, (tuple, list)) else (traced,)
    same = len(traced) == len(want) and all(
        _same(a, b, case.dtypes) is None for a, b in
        list(zip(traced, want)) + list(zip(graph_in, eager_in)))
    if not same:
        raise FuzzSkip("seed %d: the %s graph differs from the program in "
                       "eager" % (case.seed, case.tracer))


def _quiet_call(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _compare(case, compiled, want, eager_in, fail, twins=None):
    """Runs the compiled graph on copies of the inputs and the case's
    numbers (or `twins`); fails unless its outputs and the inputs after
    the call are eager's."""
    ours_in = [t.clone() for t in case.inputs]
    numbers = case.values() if twins is None else twins
    tag = "" if twins is None else " with numbers %r" % (twins,)
    try:
        got = _quiet_call(compiled, ours_in + numbers)
    except Exception as e:  # noqa: BLE001
        fail("the compiled graph%s raised %s: %s" % (tag, type(e).__name__,
                                                     e))
    got = got if isinstance(got, (tuple, list)) else (got,)
    if len(got) != len(want):
        fail("%d outputs, want %d" % (len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        why = _same(g, w, case.dtypes)
        if why:
            fail("output %d%s: %s\nregions %s, eager nodes %s" % (
                i, tag, why, compiled.nvfuser_regions,
                compiled.nvfuser_unsupported))
    for i, (g, w) in enumerate(zip(ours_in, eager_in)):
        why = _same(g, w, case.dtypes)
        if why:
            fail("input a%d after the call%s (the program writes to it): %s"
                 % (i, tag, why))


def _check_twins(case, compiled, fail):
    """Calls again with numbers equal to the traced ones but of another
    type or sign (1.0 for 1, -0.0 for 0.0): twice, as the first call of a
    new argument runs eager and the second the variant translated for
    it. Returns whether it ran (eager may refuse the twins)."""
    numbers = [twin(v) for v in case.values()]
    eager_in = [t.clone() for t in case.inputs]
    try:
        want = _quiet_call(case.fn, eager_in + numbers)
    except Exception:  # noqa: BLE001 (the program is not for these)
        return False
    if any(w.dtype not in DTYPES for w in want):
        return False
    for _ in range(2):
        _compare(case, compiled, want, eager_in, fail, twins=numbers)
    return True


def run_case(case, device=None):
    """Compiles and checks one case on `device` (default: the
    NVFUSER_FUZZ_DEVICE environment variable, else the CPU); raises
    FuzzFailure on any mismatch. Returns the compiled module."""
    def fail(what):
        raise FuzzFailure("%s\n%s" % (what, case.describe()))

    device = device or os.environ.get("NVFUSER_FUZZ_DEVICE", "cpu")
    case.inputs = [t.to(device) for t in case.inputs]

    gm = _trace(case)
    examples = [t.clone() for t in case.inputs]
    try:
        compiled = _quiet_call(compile_graph, (gm, examples + case.values()))
    except Exception as e:  # noqa: BLE001
        fail("compile_graph raised %s: %s" % (type(e).__name__, e))
    for i, (a, b) in enumerate(zip(examples, case.inputs)):
        if not _identical(a, b):
            fail("compile_graph modified example input a%d" % i)
    eager_in = [t.clone() for t in case.inputs]
    want = case.fn(*eager_in, *case.values())
    _check_tracer(case, gm, want, eager_in)
    _compare(case, compiled, want, eager_in, fail)
    for name in compiled.nvfuser_regions:
        left = transposed_outputs_left_as_views(getattr(compiled, name))
        if left:
            fail("region %s returns %s, promised transposed, as views of "
                 "row-major kernel outputs (a layout copy every call)" %
                 (name, left))
    compiled.twins_checked = bool(case.scalars) and _check_twins(
        case, compiled, fail)
    return compiled


class Stats:
    """What a run of seeds did."""

    def __init__(self):
        self.cases = self.skipped = self.regions = self.writes = 0
        self.twins = 0  # cases called again with equal numbers
        self.failures = []

    def __str__(self):
        return ("%d cases (%d skipped: not traceable), %d failures, %d "
                "regions, %d programs writing in place, %d called again "
                "with equal numbers of another type or sign" % (
                    self.cases, self.skipped, len(self.failures),
                    self.regions, self.writes, self.twins))


def run(seeds):
    """Runs the seeds; returns their Stats."""
    stats = Stats()
    for seed in seeds:
        stats.cases += 1
        case = generate(seed)
        try:
            compiled = run_case(case)
            stats.regions += len(compiled.nvfuser_regions)
            stats.twins += compiled.twins_checked
        except FuzzFailure as e:
            stats.failures.append(str(e))
        except FuzzSkip:
            stats.skipped += 1
        stats.writes += any(w in case.source for w in (
            "_(", "out=", "inplace=", "] ="))
    return stats


def main(argv):
    if argv[:1] == ["--seed"]:
        case = generate(int(argv[1]))
        print(case.describe())
        run_case(case)
        print("ok")
        return 0
    first, last = (int(argv[0]), int(argv[1])) if argv else (0, 200)
    stats = run(range(first, last))
    for f in stats.failures:
        print(f)
        print("-" * 72)
    print(stats)
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
