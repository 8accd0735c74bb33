"""FX path semantics (issue 18 items 4, 7, 8), on the CPU.

4. true division of integers gives floats; trunc/floor rounding modes and
   integer division by zero behave as in eager;
7. in-place ops and out= stay in eager and order the reads around them; no
   region moves a read past a write; compile_graph leaves the example
   inputs alone;
8. arguments are read through the op's schema (round(decimals=), var's
   positional unbiased, transpose(dim0=, dim1=), ...), and no translation
   failure escapes compile_graph.

Every check compares with eager: exactly (same dtype, same values, nan
where nan, the same sign of zero).
"""

import operator
import warnings

import pytest
import torch
import torch.fx
import torch.nn.functional as F  # noqa: N812
from torch.fx.experimental.proxy_tensor import make_fx

from nvfuser.fx import TABLE, Unsupported, compile_graph
from nvfuser.fx import translator
from value_checks import as_tuple as _as_tuple, assert_same


def check(fn, *inputs, trace="symbolic", gm=None, exact=True):
    """Compiles fn's graph, checks that compiling left the inputs alone,
    and that outputs and the inputs after the call match eager (`exact`:
    bit for bit; var's algorithm differs in the last bits). Returns the
    compiled module."""
    if gm is None:
        gm = make_fx(fn)(*[t.clone() for t in inputs]) if trace == "make_fx" \
            else torch.fx.symbolic_trace(fn)
    examples = [t.clone() for t in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = compile_graph(gm, examples)
    for e, i in zip(examples, inputs):
        assert_same(e, i)  # compile_graph wrote to no example input
    ours, theirs = [t.clone() for t in inputs], [t.clone() for t in inputs]
    got, want = _as_tuple(c(*ours)), _as_tuple(fn(*theirs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w, exact)
    for g, w in zip(ours, theirs):  # in-place writes to inputs
        assert_same(g, w, exact)
    return c


def translated(c, *names):
    for name in names:
        assert name not in c.nvfuser_unsupported, c.nvfuser_unsupported
    assert c.nvfuser_regions


INTS_A = torch.tensor([7, -7, 5, 3, 0, -1, 9, -9])
INTS_B = torch.tensor([2, 2, -3, 4, 5, 3, -2, -2])


# ---- item 4: division -----------------------------------------------------

@pytest.mark.parametrize("form", [
    lambda a, b: a / b,
    lambda a, b: a / 8,
    lambda a, b: 7 / b,
    lambda a, b: torch.div(7, b),
    lambda a, b: torch.div(a, b),
    lambda a, b: torch.true_divide(a, b),
    lambda a, b: torch.divide(a, b),
    lambda a, b: a.div(b) * 2,
    lambda a, b: (a + b) / (b * 3),
], ids=["a/b", "a/8", "7/b", "torch.div(7, b)", "torch.div", "true_divide",
        "divide", "method", "inside a region"])
def test_integer_true_division_gives_floats(form):
    c = check(form, INTS_A, INTS_B)
    translated(c, "truediv", "div", "true_divide", "divide")
    assert form(INTS_A, INTS_B).dtype == torch.float32


@pytest.mark.parametrize("a,b", [
    (INTS_A.int(), INTS_B),  # int32 / int64
    (INTS_A > 0, INTS_B < 0),  # bool / bool
], ids=["int32-int64", "bool-bool"])
def test_true_division_of_mixed_dtypes(a, b):
    c = check(lambda x, y: x / y, a, b)
    translated(c, "truediv")


def test_true_division_with_a_float_operand():
    # (Right before the fix too: the float operand set the type.)
    for a, b in ((INTS_A.half(), INTS_B), (INTS_A.double(), INTS_B.int()),
                 (INTS_A, INTS_B.float())):
        c = check(lambda x, y: x / y, a, b)
        translated(c, "truediv")
    # number / tensor is reciprocal(tensor) * number; torch.div(number,
    # tensor) divides once. Bit for bit either way:
    b = torch.tensor([3.0, 7.0, 11.0, 0.3, -0.0])
    check(lambda y: (7 / y, torch.div(7, y), torch.true_divide(7.0, y)), b)


def test_aten_div_tensor_of_integers():
    c = check(lambda a, b: torch.div(a, b) + torch.div(a, 3), INTS_A, INTS_B,
              trace="make_fx")
    translated(c, "div", "div_1")
    graph = make_fx(lambda a, b: a / b)(INTS_A, INTS_B).graph
    assert any(n.target is torch.ops.aten.div.Tensor for n in graph.nodes)


@pytest.mark.parametrize("form", [
    lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    lambda a, b: torch.div(a, b, rounding_mode="floor"),
    lambda a, b: a // b,
    lambda a, b: torch.floor_divide(a, b),
    lambda a, b: a.div(-3, rounding_mode="floor"),
    lambda a, b: torch.div(a, 4, rounding_mode="trunc"),
    lambda a, b: 7 // b,
    lambda a, b: a % b,
    lambda a, b: torch.div(a.int(), b, rounding_mode="floor"),
    lambda a, b: torch.div(a, 2.5, rounding_mode="floor"),
], ids=["trunc", "floor", "//", "floor_divide", "floor by -3",
        "trunc by 4", "7 // b", "%", "int32 floor", "int floor float"])
def test_rounding_division_of_integers(form):
    c = check(form, INTS_A, INTS_B)
    assert c.nvfuser_regions, c.nvfuser_unsupported
    assert not c.nvfuser_unsupported, c.nvfuser_unsupported


FLOAT_A = torch.tensor([1.0, -5.0, 5.0, 0.0, -0.0, 7.5, float("nan"), 3.0,
                        -3.0, -7.0, 7.0, 1e30, -2.5])
FLOAT_B = torch.tensor([0.1, float("inf"), float("-inf"), -3.0, 3.0, 0.0,
                        1.0, -0.0, 0.0, 2.0, -2.0, 1e-30, 0.5])


@pytest.mark.parametrize("mode", ["trunc", "floor"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rounding_division_of_floats_at_the_edges(mode, dtype):
    # 1 // 0.1 is 9 (floor(1 / 0.1) is 10), -5 // inf is -1, x // 0 is
    # +-inf or nan, and zeros keep their sign.
    a, b = FLOAT_A.to(dtype), FLOAT_B.to(dtype)
    c = check(lambda x, y: torch.div(x, y, rounding_mode=mode), a, b)
    translated(c, "div")
    c = check(lambda x, y: torch.div(x, -0.5, rounding_mode=mode) +
              torch.div(2.0, y, rounding_mode=mode), a, b)
    translated(c, "div", "div_1")


def test_integer_division_by_zero_behaves_as_eager():
    zero = torch.tensor([2, 0, 1, 3])
    for form in (lambda a, b: torch.div(a, b, rounding_mode="floor"),
                 lambda a, b: torch.div(a, b, rounding_mode="trunc"),
                 lambda a, b: a % b, lambda a, b: a // b):
        gm = torch.fx.symbolic_trace(form)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            form(INTS_A[:4], zero)
        # A zero in the example inputs: compiling does not raise; the call
        # raises as eager does.
        with pytest.warns(UserWarning):
            c = compile_graph(gm, [INTS_A[:4], zero])
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            c(INTS_A[:4], zero)
        # Compiled on divisors without zero, then called with one.
        c = compile_graph(torch.fx.symbolic_trace(form),
                          [INTS_A[:4], INTS_B[:4]])
        assert c.nvfuser_regions
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="ZeroDivisionError"):
                c(INTS_A[:4], zero)
    # A Python zero divisor in a graph whose values come from metadata
    # (nothing runs while compiling): the node stays in eager.
    gm = make_fx(lambda a: torch.div(a, 0, rounding_mode="trunc") + 1,
                 tracing_mode="fake")(INTS_A)
    c = compile_graph(gm, [INTS_A])
    assert c.nvfuser_unsupported["div"] == "integer division by zero"
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        c(INTS_A)


def test_rounding_division_of_half_stays_eager():
    a, b = FLOAT_A[:4].half(), FLOAT_B[:4].half() + 3
    c = check(lambda x, y: torch.div(x, y, rounding_mode="floor") * 2, a, b)
    assert "rounded division in torch.float16" in c.nvfuser_unsupported["div"]


# ---- item 7: in-place writes ----------------------------------------------

def _read_write_read(write):
    """x read before the write, written, read after it (no data edge from
    the write to the later reads: only the order tells)."""
    def f(x, y):
        before = x * 2 + y
        write(x, y)
        after = x + 1
        return before, after, before * after
    return f


WRITES = {
    "add_": lambda x, y: x.add_(y),
    "mul_": lambda x, y: x.mul_(3),
    "copy_": lambda x, y: x.copy_(y),
    "relu_": lambda x, y: torch.relu_(x),
    "F.relu inplace=True": lambda x, y: F.relu(x, inplace=True),
    "F.relu positional inplace": lambda x, y: F.relu(x, True),
    "add out=": lambda x, y: torch.add(y, 1, out=x),
    "sub_ alpha": lambda x, y: x.sub_(y, alpha=2),
}


@pytest.mark.parametrize("name", list(WRITES))
def test_writes_order_the_reads_around_them(name):
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    c = check(_read_write_read(WRITES[name]), x, y)
    reasons = [r for r in c.nvfuser_unsupported.values()
               if "writes to a tensor in place" in r]
    assert len(reasons) == 1, c.nvfuser_unsupported


@pytest.mark.parametrize("name", ["add_", "mul_", "copy_", "add out="])
def test_aten_writes_order_the_reads_around_them(name):
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    f = _read_write_read(WRITES[name])
    gm = make_fx(f)(x.clone(), y.clone())
    assert any(getattr(n.target, "_schema", None) is not None and any(
        a.alias_info is not None and a.alias_info.is_write
        for a in n.target._schema.arguments) for n in gm.graph.nodes)
    check(f, x, y, gm=gm)


def test_no_region_spans_a_write():
    def f(x, y):
        a = torch.sin(x) * y
        x.mul_(2)
        b = torch.cos(x) + a
        return a, b
    x, y = torch.randn(5), torch.randn(5)
    gm = torch.fx.symbolic_trace(f)
    position = {n.name: i for i, n in enumerate(gm.graph.nodes)}
    c = check(f, x, y, gm=gm)
    write = position["mul_"]
    order = [n.name for n in c.graph.nodes]
    for name in c.nvfuser_regions:
        members = [position[n.name] for n in getattr(c, name).eager.graph.nodes
                   if n.op == "call_function"]
        assert all(p < write for p in members) or all(
            p > write for p in members), (name, members)
        # ... and runs on its side of the write.
        before = all(p < write for p in members)
        assert (order.index(name) < order.index("mul_")) == before


def test_a_view_of_a_written_tensor_sees_the_write():
    def through_base(x):
        v = x.view(-1)
        x.add_(1)
        return v * 2

    def through_view(x):
        v = x[0]
        v.mul_(3)
        return x + 1

    def same_tensor(x):
        v = x.contiguous()  # x itself
        w = x.to(torch.float32)  # x itself too
        x.add_(1)
        return v * 2, w - 1

    for f in (through_base, through_view, same_tensor):
        c = check(f, torch.randn(3, 4))
        assert c.nvfuser_regions


def test_a_leaf_module_that_writes_in_place():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.act = torch.nn.ReLU(inplace=True)

        def forward(self, x):
            before = x * 2
            self.act(x)
            return before + x, x.sum()

    m = M()
    x = torch.randn(6)
    gm = torch.fx.symbolic_trace(m)
    assert any(n.op == "call_module" for n in gm.graph.nodes)
    check(m, x, gm=gm)


def test_compile_graph_writes_to_no_input_and_no_buffer():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(3))

        def forward(self, x):
            self.count.add_(x)  # traced: the buffer is a get_attr node
            x.mul_(2)
            return x + self.count

    m = M()
    x = torch.randn(3)
    x0 = x.clone()
    gm = torch.fx.symbolic_trace(m)
    assert any(n.op == "get_attr" for n in gm.graph.nodes)
    c = compile_graph(gm, [x])
    assert torch.equal(x, x0) and torch.equal(m.count, torch.zeros(3))
    out = c(x)  # the call itself writes, as eager does
    assert torch.equal(x, x0 * 2) and torch.equal(m.count, x0)
    assert torch.equal(out, x0 * 3)


def test_a_write_that_changes_the_shape():
    def f(x):
        y = x + 1
        x.t_()
        return y * 2, x * 3
    check(f, torch.randn(2, 3))


# ---- item 8: arguments read through the schema ----------------------------

def test_round_with_decimals():
    x = torch.tensor([1.2345, 2.5, -1.255, 125.0, 135.0, -0.04, 0.5, 1e6])
    c = check(lambda t: (torch.round(t, decimals=2), t.round(decimals=-1),
                         torch.round(t, decimals=0), torch.round(t)), x)
    translated(c, "round", "round_1", "round_2", "round_3")
    check(lambda t: torch.round(t, decimals=1), x.double(), trace="make_fx")


def _aten_graph(op, *args):
    """A graph of one ATen call on placeholder x (and constant args)."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(op, (x,) + args))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def test_var_reads_unbiased_and_keepdim_by_position():
    x = torch.randn(5, 4)
    c = check(lambda t: (torch.var(t, 0, False), t.var(0, False),
                         t.var(1, True, True), torch.var(t, False),
                         t.var(dim=1, unbiased=False, keepdim=True),
                         torch.var(t, 1, correction=0)), x, exact=False)
    assert not c.nvfuser_unsupported, c.nvfuser_unsupported
    for args, want in ((([0], False), torch.var(x, 0, False)),
                       (([1], False, True), torch.var(x, 1, False, True))):
        gm = _aten_graph(torch.ops.aten.var.dim, *args)
        c = compile_graph(gm, [x])
        assert c.nvfuser_regions
        torch.testing.assert_close(c(x), want, rtol=1e-6, atol=1e-6)


def test_var_with_fewer_elements_than_the_correction():
    # PyTorch divides by max(0, N - correction): nan for an empty reduction
    # (0 / 0), inf where the deviations are not all zero. Found by the
    # fuzzer (seed 5727).
    for shape, correction in (((4, 0), 1), ((4, 1), 2), ((4, 2), 3)):
        x = torch.randn(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # degrees of freedom <= 0
            c = check(lambda t: torch.var(t, 1, correction=correction) * 1,
                      x)
        translated(c, "var")


def test_reductions_accumulate_in_the_result_dtype():
    # sum(dtype=float64) adds float64 values, not float32 ones cast after.
    x = torch.randn(5, 301) * 1000
    c = check(lambda t: (t.mean(1, dtype=torch.float64),
                         t.sum(0, dtype=torch.float64),
                         torch.sum(t, 1, True, dtype=torch.float64)), x)
    translated(c, "mean", "sum_1", "sum_2")
    c = check(lambda t: ((t > 0).sum(1), t.int().prod(1) * 1), x[:, :3])
    assert c.nvfuser_regions


def test_transpose_and_squeeze_keywords():
    x = torch.randn(2, 3, 4)
    c = check(lambda t: (torch.transpose(t, dim0=1, dim1=2) * 1,
                         t.transpose(dim0=0, dim1=2) + 1), x)
    translated(c, "transpose", "transpose_1")
    c = check(lambda t: torch.squeeze(t, dim=1) * 1, torch.randn(3, 1, 1))
    translated(c, "squeeze")


def test_forms_that_raised_out_of_compile_graph():
    # Each used to raise from compile_graph (a misread argument gave a
    # wrong shape that only the next node's translation noticed).
    x = torch.randn(4, 3)
    check(lambda t: t.sin().narrow(0, -2, 2) + 1, x)
    check(lambda t: t.var(1, True, True) + t, x, exact=False)
    check(lambda t: torch.transpose(t, dim0=1, dim1=2) * 1,
          torch.randn(2, 3, 4))
    check(lambda t: torch.squeeze(t, dim=1) * 1, torch.randn(3, 1, 1))


def test_any_exception_in_a_translation_leaves_the_node_in_eager(
        monkeypatch):
    def broken(*args):
        raise AttributeError("a bug in a handler")
    monkeypatch.setitem(TABLE, "sin", broken)
    c = check(lambda t: torch.sin(t * 2) + 1, torch.randn(3))
    assert "AttributeError: a bug in a handler" in c.nvfuser_unsupported["sin"]


def test_a_region_that_fails_to_translate_runs_its_graph_in_eager(
        monkeypatch):
    from nvfuser.fx import partition

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug in a region")
    monkeypatch.setattr(partition.FusionRegion, "_translate",
                        staticmethod(broken))
    c = check(lambda t: torch.sin(t * 2) + 1, torch.randn(3))
    assert not c.nvfuser_regions
    assert "a bug in a region" in c.nvfuser_unsupported["sin"]


# Pairs of one call written positionally and with keywords; before the fix
# the keyword (or positional) form of each was misread or left to eager.
KEYWORD_FORMS = [
    (lambda t: torch.cat([t, t], 1), lambda t: torch.cat(tensors=[t, t],
                                                         dim=1)),
    (lambda t: F.pad(t, (1, 1), "constant", 2.0),
     lambda t: F.pad(t, pad=(1, 1), value=2.0)),
    (lambda t: t.unsqueeze(1) * 1, lambda t: t.unsqueeze(dim=1) * 1),
    (lambda t: t.permute(1, 0) * 1, lambda t: t.permute(dims=(1, 0)) * 1),
    (lambda t: torch.permute(t, (1, 0)) * 1,
     lambda t: torch.permute(t, dims=[1, 0]) * 1),
    (lambda t: t.narrow(1, 1, 2) * 1,
     lambda t: t.narrow(dim=1, start=1, length=2) * 1),
    (lambda t: torch.where(t > 0, t, t * 2),
     lambda t: torch.where(condition=t > 0, input=t, other=t * 2)),
    (lambda t: torch.mul(t, 2), lambda t: torch.mul(input=t, other=2)),
    (lambda t: torch.zeros_like(t, dtype=torch.int32) + 1,
     lambda t: torch.ones_like(t, dtype=torch.int32)),
    (lambda t: torch.pow(t, 2), lambda t: torch.pow(t, exponent=2)),
]

# Pairs the old code read right already (kept: every form must stay so).
ALSO_READ_ALIKE = [
    (lambda t: t.sum(1, True), lambda t: t.sum(dim=1, keepdim=True)),
    (lambda t: torch.full((4, 3), 2.0) + t,
     lambda t: torch.full(size=(4, 3), fill_value=2.0) + t),
    (lambda t: torch.sub(t, 2, alpha=3), lambda t: torch.sub(t, 2, 3)),
    (lambda t: t.split(2, 0)[1] * 1, lambda t: t.split(2, dim=0)[1] * 1),
    (lambda t: t.expand(2, 4, 3) * 1, lambda t: t.expand(size=(2, 4, 3)) * 1),
    (lambda t: t.view(3, 4) * 1, lambda t: t.view(size=(3, 4)) * 1),
]


def _translate_alike(pair):
    x = torch.randn(4, 3)
    for form in pair:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sub(t, 2, 3) is deprecated
            c = check(form, x)
        assert c.nvfuser_regions and not c.nvfuser_unsupported, \
            c.nvfuser_unsupported


@pytest.mark.parametrize("pair", KEYWORD_FORMS,
                         ids=[str(i) for i in range(len(KEYWORD_FORMS))])
def test_positional_and_keyword_forms_translate_alike(pair):
    _translate_alike(pair)


@pytest.mark.parametrize("pair", ALSO_READ_ALIKE,
                         ids=[str(i) for i in range(len(ALSO_READ_ALIKE))])
def test_forms_read_alike_before_still_are(pair):
    _translate_alike(pair)


def test_a_bit_reinterpreting_view_stays_eager():
    c = check(lambda t: t.view(torch.int32) + 1, torch.randn(4, 3))
    assert "bit reinterpretation" in c.nvfuser_unsupported["view"]


def _node(fn, name):
    gm = torch.fx.symbolic_trace(fn)
    return {n.name: n for n in gm.graph.nodes}[name]


def test_normalize_reads_every_form_by_name():
    from nvfuser.fx.schema import normalize
    x = torch.randn(4, 3)

    def recorded(n):
        return x if n.op == "placeholder" else None

    def params(fn, name):
        n = _node(fn, name)
        return normalize(n, n.args, n.kwargs, recorded)

    p = params(lambda t: torch.var(t, 0, False), "var")
    assert (p["self"].name, p["dim"], p["unbiased"], p["keepdim"]) == \
        ("t", [0], False, False)
    p = params(lambda t: t.var(False), "var")
    assert p["unbiased"] is False and "dim" not in p
    p = params(lambda t: t.view(3, 4), "view")
    assert tuple(p["size"]) == (3, 4)
    p = params(lambda t: torch.transpose(t, dim0=1, dim1=0), "transpose")
    assert (p["dim0"], p["dim1"]) == (1, 0)
    p = params(lambda t: torch.round(t, decimals=3), "round_1")
    assert p["decimals"] == 3
    p = params(lambda t: torch.split(t, 2, 1), "split")
    assert p["dim"] == 1 and p["self"].name == "t"
    p = params(lambda t: t + 1, "add")
    assert p["other"] == 1
    p = params(lambda t: torch.div(t, 2, rounding_mode="floor"), "div")
    assert p["rounding_mode"] == "floor" and p["other"] == 2
    g = torch.fx.Graph()  # torch.var(t, "a", "b") cannot even be traced
    n = g.call_function(torch.var, (g.placeholder("t"), "a", "b"))
    with pytest.raises(Unsupported, match="no signature"):
        normalize(n, n.args, n.kwargs, recorded)


def test_operator_names_map_to_torch_ops():
    assert translator.op_name(_node(lambda a: a & a, "and_")) == \
        "bitwise_and"
    assert translator._OPERATORS[operator.invert] == "bitwise_not"
