"""fd.ops.triu, cumsum, scatter, welford and acosh/asinh/atanh/erfcinv
against torch on the CPU: dtypes, negative dims and diagonals, empty and
broadcast inputs, symbolic shapes, bad arguments (TypeError/ValueError
naming the problem), out-of-range scatter indices (IndexError), printed
definitions, and which segments run as generated kernels (triu, welford,
the unary ops) and which through ATen (cumsum, scatter). conftest compiles
every executed fusion's kernels with NVRTC for sm_90 and sm_80."""

import math

import pytest
import torch

from nvfuser import DataType, FusionDefinition
from printed import run_printed
from value_checks import assert_same

NAN, INF = float("nan"), float("inf")


def define(build, inputs):
    with FusionDefinition() as fd:
        build(fd, [fd.from_pytorch(x) if isinstance(x, torch.Tensor) else x
                   for x in inputs])
    return fd


def execute(build, inputs):
    fd = define(build, inputs)
    return fd.execute(inputs), fd


def schedulers(fd):
    return [g["scheduler"] for g in fd.last_segmentation()["groups"]]


def values(shape, dtype, seed=0):
    torch.manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(-100, 100, shape, dtype=dtype)


# ---- triu -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16,
                                   torch.bfloat16, torch.float64,
                                   torch.int64, torch.int32, torch.bool])
@pytest.mark.parametrize("diagonal", [0, 1, -1, 3, -7, 20, -20])
def test_triu_matches_torch(dtype, diagonal):
    x = values((5, 9), dtype)
    (out,), fd = execute(
        lambda fd, t: fd.add_output(fd.ops.triu(t[0], diagonal)), [x])
    assert_same(out, torch.triu(x, diagonal))  # dtype kept, Half too
    assert schedulers(fd) == ["pointwise"]


def test_triu_default_diagonal_and_batch_dims():
    x = values((2, 3, 4, 6), torch.float32)
    (out,), _ = execute(lambda fd, t: fd.add_output(fd.ops.triu(t[0])), [x])
    assert_same(out, torch.triu(x))


def test_triu_symbolic_shapes_and_reuse():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                             dtype=DataType.Float)
        fd.add_output(fd.ops.triu(t, diagonal=-1))
    for shape in [(3, 7), (8, 2), (1, 5), (0, 4)]:
        x = values(shape, torch.float32)
        (out,) = fd.execute([x])
        assert_same(out, torch.triu(x, -1))


def test_triu_broadcast_and_expanded_inputs():
    row = values((1, 6), torch.float32)
    x = row.expand(5, 6)
    (out,), _ = execute(lambda fd, t: fd.add_output(fd.ops.triu(t[0], 1)),
                        [x])
    assert_same(out, torch.triu(x, 1))
    (out,), _ = execute(lambda fd, t: fd.add_output(fd.ops.triu(t[0])),
                        [row])
    assert_same(out, torch.triu(row))


def test_triu_fuses_with_elementwise_ops():
    x = values((16, 16), torch.bfloat16)
    y = values((16, 16), torch.bfloat16, seed=1)

    def build(fd, t):
        s = fd.ops.add(t[0], t[1])
        fd.add_output(fd.ops.cast(fd.ops.triu(s, 2), DataType.BFloat16))
    (out,), fd = execute(build, [x, y])
    assert_same(out, torch.triu(x.float() + y.float(), 2).bfloat16())
    assert schedulers(fd) == ["pointwise"]
    code = fd.cuda_code_for([x, y], "sm_90")
    assert len(code) == 1 and "__global__" in code[0]


def test_triu_errors():
    x = values((4,), torch.float32)
    with pytest.raises(ValueError, match="triu: input must have rank >= 2"):
        define(lambda fd, t: fd.ops.triu(t[0]), [x])
    m = values((4, 4), torch.float32)
    with pytest.raises(TypeError, match="triu: diagonal must be an int"):
        define(lambda fd, t: fd.ops.triu(t[0], 1.5), [m])
    with pytest.raises(TypeError, match="triu: expected a Tensor"):
        define(lambda fd, t: fd.ops.triu(2.0), [m])


# ---- cumsum ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64,
                                   torch.float16, torch.bfloat16,
                                   torch.int64, torch.int32, torch.bool])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_cumsum_matches_torch(dtype, dim):
    x = values((3, 5, 7), dtype)
    (out,), fd = execute(lambda fd, t: fd.add_output(fd.ops.cumsum(t[0], dim)),
                         [x])
    # Floating types keep theirs (Half too); integers and Bool give Int.
    # Half and BFloat16 accumulate in Float, as torch's CUDA kernel (its
    # CPU kernel has no Half).
    if dtype in (torch.float16, torch.bfloat16):
        assert_same(out, torch.cumsum(x.float(), dim).to(dtype))
    else:
        assert_same(out, torch.cumsum(x, dim))
    assert schedulers(fd) == ["expr_eval"]


@pytest.mark.parametrize("shape", [(0, 4), (4, 0), (1, 1), ()])
def test_cumsum_empty_and_small(shape):
    x = values(shape, torch.float32)
    (out,), _ = execute(lambda fd, t: fd.add_output(fd.ops.cumsum(t[0], -1)),
                        [x])
    assert_same(out, torch.cumsum(x, -1))


def test_cumsum_of_broadcast_input_between_kernels():
    x = values((1, 6), torch.float32).expand(4, 6)

    def build(fd, t):
        c = fd.ops.cumsum(fd.ops.mul(t[0], 2.0), 0)
        fd.add_output(fd.ops.exp(c))
    (out,), fd = execute(build, [x])
    assert_same(out, torch.exp(torch.cumsum(x * 2.0, 0)), exact=False)
    assert "expr_eval" in schedulers(fd)


def test_cumsum_errors():
    x = values((4, 4), torch.float32)
    with pytest.raises(ValueError, match="cumsum: dim 2 is out of range"):
        define(lambda fd, t: fd.ops.cumsum(t[0], 2), [x])
    with pytest.raises(TypeError, match="cumsum: dim must be an int"):
        define(lambda fd, t: fd.ops.cumsum(t[0], [0]), [x])


# ---- scatter --------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.int64, torch.bool])
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_scatter_matches_torch(dtype, index_dtype, dim):
    x = values((6, 8), dtype)
    src = values((6, 8), dtype, seed=1)
    # A permutation per row/column: no duplicate writes, so the result is
    # defined.
    d = dim % 2
    n = x.shape[d]
    perm = torch.stack([torch.randperm(n) for _ in range(8 if d == 0 else 6)])
    index = (perm.t() if d == 0 else perm)[:4 if d == 0 else 6,
                                          :8 if d == 0 else 5]
    index = index.to(index_dtype).contiguous()
    (out,), fd = execute(lambda fd, t: fd.add_output(
        fd.ops.scatter(t[0], t[1], t[2], dim)), [x, index, src])
    assert_same(out, torch.scatter(x, dim, index.long(), src))
    assert schedulers(fd) == ["expr_eval"]
    assert torch.equal(x, values((6, 8), dtype))  # out of place


def test_scatter_scalar_src_and_fused_consumer():
    x = values((8, 4), torch.float32)
    index = torch.tensor([[0, 1, 2, 3], [7, 6, 5, 4]])

    def build(fd, t):
        s = fd.ops.scatter(t[0], t[1], 1.5, 0)
        fd.add_output(fd.ops.sigmoid(s))
    (out,), fd = execute(build, [x, index])
    assert_same(out, torch.sigmoid(torch.scatter(x, 0, index, 1.5)))
    assert schedulers(fd) == ["expr_eval", "pointwise"]


def test_scatter_empty_index_and_empty_input():
    x = values((3, 4), torch.float32)
    index = torch.zeros((0, 4), dtype=torch.int64)
    src = values((2, 4), torch.float32)
    (out,), _ = execute(lambda fd, t: fd.add_output(
        fd.ops.scatter(t[0], t[1], t[2], 0)), [x, index, src])
    assert_same(out, x)
    e = values((0, 4), torch.float32)
    (out,), _ = execute(lambda fd, t: fd.add_output(
        fd.ops.scatter(t[0], t[1], t[2], 0)), [e, index, src])
    assert_same(out, e)


@pytest.mark.parametrize("bad", [8, -1, 100])
def test_scatter_out_of_range_raises_index_error(bad):
    x = values((8, 4), torch.float32)
    index = torch.tensor([[0, 1, bad, 3]])
    src = values((1, 4), torch.float32)
    fd = define(lambda fd, t: fd.add_output(
        fd.ops.scatter(t[0], t[1], t[2], 0)), [x, index, src])
    with pytest.raises(IndexError, match="scatter: index %d is out of range "
                       "for dim 0 of .*, of size 8" % bad):
        fd.execute([x, index, src])
    good = torch.tensor([[0, 1, 2, 3]])
    (out,) = fd.execute([x, good, src])  # the definition still works
    assert_same(out, torch.scatter(x, 0, good, src))


def test_scatter_definition_errors():
    x = values((4, 4), torch.float32)
    i = torch.zeros((2, 2), dtype=torch.int64)
    with pytest.raises(TypeError, match="scatter: the index .* must be Int "
                       "or Int32"):
        define(lambda fd, t: fd.ops.scatter(t[0], t[2], t[0], 0), [x, i, x])
    with pytest.raises(TypeError, match="scatter: src .* must have the dtype"):
        define(lambda fd, t: fd.ops.scatter(t[0], t[1], t[2], 0),
               [x, i, x.double()])
    with pytest.raises(ValueError, match="scatter: the index .* must have "
                       "the rank"):
        define(lambda fd, t: fd.ops.scatter(t[0], t[1], t[0], 0),
               [x, i[0]])
    # Sizes are symbolic in from_pytorch's definitions: checked at execute.
    small = [x, torch.zeros((3, 3), dtype=torch.int64), x[:2, :2]]
    with pytest.raises(ValueError, match="scatter: the index .* is larger "
                       "than src .* at dim 0 \\(3 > 2\\)"):
        execute(lambda fd, t: fd.add_output(
            fd.ops.scatter(t[0], t[1], t[2], 0)), small)
    wide = [x, torch.zeros((2, 6), dtype=torch.int64),
            values((2, 6), torch.float32)]
    with pytest.raises(ValueError, match="only dim 0 may be larger"):
        execute(lambda fd, t: fd.add_output(
            fd.ops.scatter(t[0], t[1], t[2], 0)), wide)
    with pytest.raises(ValueError, match="scatter: dim 2 is out of range"):
        define(lambda fd, t: fd.ops.scatter(t[0], t[1], t[0], 2), [x, i])
    xi = x.long()
    with pytest.raises(TypeError, match="a floating scalar src"):
        define(lambda fd, t: fd.ops.scatter(t[0], t[1], 0.5, 0), [xi, i])


# ---- welford --------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64,
                                   torch.bfloat16, torch.float16])
@pytest.mark.parametrize("dims", [[-1], [0], [1], [0, 2], [0, 1, 2]])
def test_welford_matches_torch(dtype, dims):
    x = values((4, 6, 8), dtype)

    def build(fd, t):
        avg, var_sum, n = fd.ops.welford(t[0], dims)
        fd.add_output(avg)
        fd.add_output(var_sum)
        fd.add_output(n)
        fd.add_output(fd.ops.div(var_sum, n))
    (avg, var_sum, n, var), fd = execute(build, [x])
    xf = x.double()
    count = math.prod(x.shape[d] for d in dims)
    want_t = torch.float64 if dtype == torch.float64 else torch.float32
    assert avg.dtype == var_sum.dtype == var.dtype == want_t
    assert n.dtype == torch.int64
    assert torch.equal(n, torch.full(avg.shape, count))
    ref_var, ref_avg = torch.var_mean(xf, dims, unbiased=False)
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    torch.testing.assert_close(avg.double(), ref_avg, rtol=tol, atol=tol)
    torch.testing.assert_close(var.double(), ref_var, rtol=tol, atol=tol)
    torch.testing.assert_close(var_sum.double(), ref_var * count, rtol=tol,
                               atol=tol)
    assert all(s != "expr_eval" for s in schedulers(fd))


def test_welford_nvfuser_example():
    # nvFuser's test_welford: var = var_sum / n is var_mean's, correction 0.
    x = torch.randn(2, 2)

    def build(fd, t):
        mean, var_sum, n = fd.ops.welford(t[0], [-1])
        fd.add_output(fd.ops.div(var_sum, n))
        fd.add_output(mean)
    (var, mean), _ = execute(build, [x])
    ref_var, ref_mean = torch.var_mean(x, [-1], unbiased=False)
    torch.testing.assert_close(var, ref_var)
    torch.testing.assert_close(mean, ref_mean)


def test_welford_empty_reduction_and_symbolic_shape():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                             dtype=DataType.Float)
        avg, var_sum, n = fd.ops.welford(t, 1)
        fd.add_output(avg)
        fd.add_output(var_sum)
        fd.add_output(n)
    avg, var_sum, n = fd.execute([torch.zeros(3, 0)])
    assert torch.isnan(avg).all() and avg.shape == (3,)
    assert_same(var_sum, torch.zeros(3))
    assert_same(n, torch.zeros(3, dtype=torch.int64))
    x = values((5, 7), torch.float32)
    avg, var_sum, n = fd.execute([x])
    torch.testing.assert_close(avg, x.mean(1))
    assert torch.equal(n, torch.full((5,), 7))


def test_welford_errors():
    x = values((4, 4), torch.float32)
    with pytest.raises(TypeError, match="welford: input must be floating"):
        define(lambda fd, t: fd.ops.welford(t[0], [0]), [x.long()])
    with pytest.raises(ValueError, match="welford: dims must name at least"):
        define(lambda fd, t: fd.ops.welford(t[0], []), [x])
    with pytest.raises(ValueError, match="welford: dim 3 is out of range"):
        define(lambda fd, t: fd.ops.welford(t[0], [3]), [x])
    with pytest.raises(ValueError, match="welford: dim -2 appears more"):
        define(lambda fd, t: fd.ops.welford(t[0], [0, -2]), [x])


# ---- acosh, asinh, atanh, erfcinv -----------------------------------------

FLOATS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 0.999,
          -0.999, 1e-3, 1.999, 1e-30, 30.0, -30.0, 2.0, 3.0]


def torch_erfcinv(x):
    # torch has no erfcinv: erfc(y) = x is ndtri(x / 2) = -sqrt(2) y;
    # + 0 turns erfcinv(1) = -0 into CUDA's +0.
    return torch.special.ndtri(x / 2) * -math.sqrt(0.5) + 0.0


REFS = {"acosh": torch.acosh, "asinh": torch.asinh, "atanh": torch.atanh,
        "erfcinv": torch_erfcinv}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64,
                                   torch.bfloat16, torch.int64, torch.bool])
@pytest.mark.parametrize("name", sorted(REFS))
def test_new_unary_ops_match_torch(name, dtype):
    if dtype == torch.bool:
        x = torch.tensor([True, False])
    elif dtype.is_floating_point:
        x = torch.tensor(FLOATS, dtype=dtype)
    else:
        x = torch.tensor([-3, -1, 0, 1, 2, 7], dtype=dtype)
    (out,), fd = execute(lambda fd, t: fd.add_output(
        getattr(fd.ops, name)(t[0])), [x])
    # Integers, Bool, Half and BFloat16 compute and return Float.
    xf = x if dtype == torch.float64 else x.float()
    assert_same(out, REFS[name](xf))
    assert schedulers(fd) == ["pointwise"]
    code = fd.cuda_code_for([x], "sm_90")[0]
    fn = name + ("" if dtype == torch.float64 else "f")
    assert fn + "(" in code


def test_erfcinv_special_values():
    x = torch.tensor([0.0, 2.0, -1.0, 3.0, 1.0, 1e-300, 2 - 1e-15],
                     dtype=torch.float64)
    (out,), _ = execute(lambda fd, t: fd.add_output(fd.ops.erfcinv(t[0])),
                        [x])
    assert out[0] == INF and out[1] == -INF
    assert torch.isnan(out[2]) and torch.isnan(out[3])
    assert out[4] == 0 and not out[4].signbit()
    torch.testing.assert_close(torch.erfc(out[5:]), x[5:], rtol=1e-12,
                               atol=0)


# ---- printing, api table --------------------------------------------------

def test_printed_definitions_rerun():
    x = values((5, 6), torch.float32)
    index = torch.tensor([[4, 3, 2, 1, 0, 0]])

    def build(fd, t):
        fd.add_output(fd.ops.triu(t[0], -1))
        fd.add_output(fd.ops.cumsum(t[0], 1))
        fd.add_output(fd.ops.scatter(t[0], t[1], t[0], 0))
        avg, var_sum, n = fd.ops.welford(t[0], [1])
        fd.add_output(avg)
        fd.add_output(var_sum)
        fd.add_output(n)
        fd.add_output(fd.ops.asinh(t[0]))
    outs, fd = execute(build, [x, index])
    text = fd.python_definition()
    for call in ["fd.ops.triu(", "diagonal=-1", "fd.ops.cumsum(",
                 "fd.ops.scatter(", "fd.ops.welford(", "fd.ops.asinh("]:
        assert call in text, text
    for rerun in run_printed(fd, [x, index]):
        for got, want in zip(rerun, outs):
            assert_same(got, want)
