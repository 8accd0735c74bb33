"""Every op through FusionDefinition.execute against its PyTorch equivalent."""

import pytest
import torch

from nvfuser import DataType, FusionDefinition

UNARY = {
    "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "log": torch.log,
    "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal, "sin": torch.sin, "cos": torch.cos,
    "tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu,
    "silu": torch.nn.functional.silu, "gelu": torch.nn.functional.gelu,
    "erf": torch.erf, "floor": torch.floor, "ceil": torch.ceil,
    "round": torch.round,
}

BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "pow": torch.pow, "fmod": torch.fmod, "remainder": torch.remainder,
    "maximum": torch.maximum, "minimum": torch.minimum,
    "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
    "gt": torch.gt, "ge": torch.ge,
}


def run1(build, inputs):
    with FusionDefinition() as fd:
        build(fd)
    return fd.execute(inputs)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, device):
    x = torch.rand(4, 6, device=device) + 0.1
    (out,) = run1(lambda fd: fd.add_output(
        getattr(fd.ops, name)(fd.from_pytorch(x))), [x])
    torch.testing.assert_close(out, UNARY[name](x))


@pytest.mark.parametrize("name", ["neg", "exp", "sin", "relu"])
def test_unary_half_computes_in_float(name, device):
    x = torch.randn(4, 6, device=device).half()
    (out,) = run1(lambda fd: fd.add_output(
        getattr(fd.ops, name)(fd.from_pytorch(x))), [x])
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, UNARY[name](x.float()))


def test_predicates_and_bitwise(device):
    x = torch.tensor([1.0, float("nan"), 3.0], device=device)
    i = torch.tensor([1, 6, 3], device=device)
    b = torch.tensor([True, False, True], device=device)

    def build(fd):
        tx, ti, tb = fd.from_pytorch(x), fd.from_pytorch(i), fd.from_pytorch(b)
        fd.add_output(fd.ops.isnan(tx))
        fd.add_output(fd.ops.logical_not(tb))
        fd.add_output(fd.ops.bitwise_not(ti))
        fd.add_output(fd.ops.bitwise_and(ti, 3))
        fd.add_output(fd.ops.bitwise_or(ti, ti))
        fd.add_output(fd.ops.bitwise_xor(ti, 5))
        fd.add_output(fd.ops.logical_and(tb, fd.ops.logical_not(tb)))
        fd.add_output(fd.ops.logical_or(tb, tb))
        fd.add_output(fd.ops.div(ti, 2))
    outs = run1(build, [x, i, b])
    refs = [torch.isnan(x), ~b, ~i, i & 3, i | i, i ^ 5, b & ~b, b | b,
            torch.div(i, 2, rounding_mode="trunc")]
    for o, r in zip(outs, refs):
        assert torch.equal(o, r)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_with_broadcast(name, device):
    a = torch.rand(3, 4, device=device) + 0.5
    b = torch.rand(1, 4, device=device) + 0.5
    (out,) = run1(lambda fd: fd.add_output(getattr(fd.ops, name)(
        fd.from_pytorch(a), fd.from_pytorch(b))), [a, b])
    torch.testing.assert_close(out, BINARY[name](a, b))


def test_binary_with_scalars_and_rank_broadcast(device):
    a = torch.randn(2, 3, 4, device=device)
    b = torch.randn(4, device=device)

    def build(fd):
        ta, tb = fd.from_pytorch(a), fd.from_pytorch(b)
        s = fd.define_scalar(None, dtype=DataType.Double)
        fd.add_output(ta * 2.0 + tb)
        fd.add_output(fd.ops.mul(ta, s))
        fd.add_output(1.0 - ta)
    outs = run1(build, [a, b, 3.0])
    torch.testing.assert_close(outs[0], a * 2 + b)
    torch.testing.assert_close(outs[1], a * 3)
    torch.testing.assert_close(outs[2], 1 - a)


def test_ternary(device):
    a = torch.randn(3, 4, device=device)
    b = torch.randn(3, 4, device=device)
    w = torch.rand(3, 4, device=device)

    def build(fd):
        ta, tb, tw = (fd.from_pytorch(t) for t in (a, b, w))
        fd.add_output(fd.ops.where(fd.ops.gt(ta, tb), ta, tb))
        fd.add_output(fd.ops.lerp(ta, tb, tw))
        fd.add_output(fd.ops.clamp(ta, -0.5, 0.5))
        fd.add_output(fd.ops.where(fd.ops.gt(ta, 0.0), ta, 0.0))
    outs = run1(build, [a, b, w])
    torch.testing.assert_close(outs[0], torch.where(a > b, a, b))
    torch.testing.assert_close(outs[1], torch.lerp(a, b, w))
    torch.testing.assert_close(outs[2], torch.clamp(a, -0.5, 0.5))
    torch.testing.assert_close(outs[3], torch.where(a > 0, a, 0.0))


@pytest.mark.parametrize("dtype", [DataType.Half, DataType.BFloat16,
                                   DataType.Double, DataType.Int32,
                                   DataType.Bool])
def test_cast(dtype, device):
    x = torch.randn(5, device=device) * 4
    torch_dtype = {DataType.Half: torch.float16,
                   DataType.BFloat16: torch.bfloat16,
                   DataType.Double: torch.float64, DataType.Int32: torch.int32,
                   DataType.Bool: torch.bool}[dtype]
    (out,) = run1(lambda fd: fd.add_output(
        fd.ops.cast(fd.from_pytorch(x), dtype)), [x])
    assert torch.equal(out, x.to(torch_dtype))


def test_shape_ops(device):
    x = torch.randn(2, 3, 4, device=device)
    c = torch.randn(3, 1, device=device)

    def build(fd):
        tx, tc = fd.from_pytorch(x), fd.from_pytorch(c)
        fd.add_output(fd.ops.permute(tx, dims=[2, 0, 1]))
        fd.add_output(fd.ops.reshape(tx, new_shape=[6, -1]))
        fd.add_output(fd.ops.broadcast_in_dim(tc, shape=[2, 3, 4],
                                              broadcast_dims=[1, 2]))
        fd.add_output(fd.ops.expand(fd.ops.broadcast(
            fd.ops.squeeze(tc, dims=[1]), [True, False]), shape=[5, -1]))
        fd.add_output(fd.ops.slice(tx, start_indices=[0, 1, 0],
                                   end_indices=[2, 3, 4],
                                   strides=[1, 1, 2]))
        fd.add_output(fd.ops.pad(tx, [1, 2], 0.5))
        fd.add_output(fd.ops.cat([tx, tx], dim=1))
        fd.add_output(fd.ops.set(tx))
        fd.add_output(fd.ops.segment_set(tx))
    outs = run1(build, [x, c])
    refs = [x.permute(2, 0, 1), x.reshape(6, 4), c.expand(2, 3, 4),
            c.squeeze(1).unsqueeze(0).expand(5, 3), x[:, 1:3, ::2],
            torch.nn.functional.pad(x, [1, 2], value=0.5),
            torch.cat([x, x], 1), x, x]
    for o, r in zip(outs, refs):
        assert o.shape == r.shape
        torch.testing.assert_close(o, r)


@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(keepdim, device):
    x = torch.rand(3, 4, 5, device=device) + 0.5

    def build(fd):
        tx = fd.from_pytorch(x)
        fd.add_output(fd.ops.sum(tx, dims=[0, 2], keepdim=keepdim))
        fd.add_output(fd.ops.max(tx, dims=[1], keepdim=keepdim))
        fd.add_output(fd.ops.min(tx, dims=[-1], keepdim=keepdim))
        fd.add_output(fd.ops.prod(tx, dims=[0, 1], keepdim=keepdim))
        fd.add_output(fd.ops.mean(tx, dims=[2], keepdim=keepdim))
        fd.add_output(fd.ops.var(tx, dims=[1, 2], correction=1,
                                 keepdim=keepdim))
        v, m = fd.ops.var_mean(tx, dims=[0], correction=0, keepdim=keepdim)
        fd.add_output(v)
        fd.add_output(m)
    outs = run1(build, [x])
    refs = [x.sum([0, 2], keepdim=keepdim), x.amax(1, keepdim=keepdim),
            x.amin(-1, keepdim=keepdim),
            x.prod(1, keepdim=keepdim).prod(0, keepdim=keepdim),
            x.mean(2, keepdim=keepdim),
            x.var([1, 2], unbiased=True, keepdim=keepdim),
            x.var(0, unbiased=False, keepdim=keepdim),
            x.mean(0, keepdim=keepdim)]
    for o, r in zip(outs, refs):
        torch.testing.assert_close(o, r)


def test_sum_half_accumulates_in_float(device):
    x = torch.randn(8, 64, device=device).half()
    (out,) = run1(lambda fd: fd.add_output(
        fd.ops.sum(fd.from_pytorch(x), dims=[1])), [x])
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, x.float().sum(1))


def test_sum_with_dtype(device):
    x = torch.randint(0, 5, (4, 4), device=device, dtype=torch.int32)
    (out,) = run1(lambda fd: fd.add_output(fd.ops.sum(
        fd.from_pytorch(x), dims=[0], dtype=DataType.Double)), [x])
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, x.double().sum(0))


@pytest.mark.parametrize("op", ["sum", "prod"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float16,
                                   torch.bfloat16, torch.float64])
def test_sum_and_prod_into_every_dtype(op, dtype, device):
    # Int32 results came back as Int64 (an internal error) and Half
    # products had no CPU kernel; both compute like torch now.
    x = torch.tensor([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], device=device)
    nv = {torch.int32: DataType.Int32, torch.int64: DataType.Int,
          torch.float16: DataType.Half, torch.bfloat16: DataType.BFloat16,
          torch.float64: DataType.Double}[dtype]
    (out,) = run1(lambda fd: fd.add_output(getattr(fd.ops, op)(
        fd.from_pytorch(x), dims=[1], dtype=nv)), [x])
    assert out.dtype == dtype
    ref = getattr(torch, op)(x.to(dtype).double(), 1).to(dtype)
    torch.testing.assert_close(out, ref)


def test_matmul_and_linear(device):
    a = torch.randn(2, 3, 4, device=device)
    b = torch.randn(4, 5, device=device)
    w = torch.randn(6, 4, device=device)
    bias = torch.randn(6, device=device)

    def build(fd):
        ta, tb, tw, tbias = (fd.from_pytorch(t) for t in (a, b, w, bias))
        fd.add_output(fd.ops.matmul(ta, tb))
        fd.add_output(fd.ops.linear(ta, tw, tbias))
        fd.add_output(fd.ops.linear(ta, tw))
    outs = run1(build, [a, b, w, bias])
    torch.testing.assert_close(outs[0], a @ b)
    torch.testing.assert_close(outs[1],
                               torch.nn.functional.linear(a, w, bias))
    torch.testing.assert_close(outs[2], torch.nn.functional.linear(a, w))


def test_factories(device):
    x = torch.randn(2, 3, device=device)

    def build(fd):
        tx = fd.from_pytorch(x)
        f = fd.ops.full(shape=[2, 3], fill_value=1.5, dtype=DataType.Float)
        fd.add_output(fd.ops.add(tx, f))
        fd.add_output(fd.ops.iota(5, 2, 3, dtype=DataType.Int))
        fd.add_output(fd.ops.iota(4, 0.5, 0.25, dtype=DataType.Float))
    outs = run1(build, [x])
    torch.testing.assert_close(outs[0], x + 1.5)
    assert torch.equal(outs[1].cpu(), torch.arange(5) * 3 + 2)
    torch.testing.assert_close(outs[2].cpu(), torch.arange(4) * 0.25 + 0.5)


def test_noncontiguous_and_expanded_inputs(device):
    x = torch.randn(4, 6, device=device).t()  # strides (1, 6)
    e = torch.randn(1, 4, device=device).expand(6, 4)  # stride 0

    def build(fd):
        tx, te = fd.from_pytorch(x), fd.from_pytorch(e)
        fd.add_output(fd.ops.add(tx, fd.ops.cast(te, DataType.Float)))
    (out,) = run1(build, [x, e])
    torch.testing.assert_close(out, x + e)


def test_rank0_and_empty_tensors(device):
    s = torch.tensor(2.0, device=device)
    z = torch.randn(0, 3, device=device)

    def build(fd):
        ts, tz = fd.from_pytorch(s), fd.from_pytorch(z)
        fd.add_output(fd.ops.mul(tz, ts))
        fd.add_output(fd.ops.sum(tz, dims=[0]))
    outs = run1(build, [s, z])
    assert outs[0].shape == (0, 3)
    torch.testing.assert_close(outs[1], torch.zeros(3, device=device))
