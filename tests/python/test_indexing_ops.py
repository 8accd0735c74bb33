"""fd.ops.index_select, gather and take_along_axis against torch on the CPU:
dtypes, Int and Int32 indices, negative dims, 0-dim, 1-element and empty
indices, take_along_axis broadcasting, out-of-range indices (IndexError
naming the op, as torch raises), definition errors, printed definitions,
and how gathers segment. conftest compiles every executed fusion's kernels
with NVRTC; the kernels' values are checked on the CPU by
tests/cpp/runtime/test_emulated_indexing.cpp."""

import pytest
import torch

from nvfuser import DataType, FusionDefinition
from printed import run_printed

LOOKUP_DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int64,
                 torch.int32, torch.bool]
INDEX_DTYPES = [torch.int64, torch.int32]


def lookup_values(shape, dtype):
    torch.manual_seed(0)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(-1000, 1000, shape, dtype=dtype)


def run(op, x, index, dim):
    with FusionDefinition() as fd:
        fd.add_output(getattr(fd.ops, op)(fd.from_pytorch(x),
                                          fd.from_pytorch(index), dim))
    (out,) = fd.execute([x, index])
    return out, fd


def same(out, ref):
    assert out.dtype == ref.dtype and out.shape == ref.shape, (out, ref)
    assert torch.equal(out, ref)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", LOOKUP_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_index_select_matches_torch(dim, dtype, index_dtype):
    x = lookup_values((5, 6, 8), dtype)
    size = x.shape[dim]
    index = torch.tensor([size - 1, 0, 2, 2, 1, 0, size - 1],
                         dtype=index_dtype)
    out, _ = run("index_select", x, index, dim)
    same(out, torch.index_select(x, dim, index))


@pytest.mark.parametrize("index", [torch.tensor(3), torch.tensor([4]),
                                   torch.tensor([], dtype=torch.int64)],
                         ids=["0-dim", "1-element", "empty"])
def test_index_select_small_indices(index):
    x = lookup_values((6, 8), torch.float32)
    for dim in (0, 1):
        out, _ = run("index_select", x, index, dim)
        same(out, torch.index_select(x, dim, index))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.int64, torch.bool])
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_gather_matches_torch(dim, dtype, index_dtype):
    x = lookup_values((8, 16), dtype)
    # Smaller than the input in the other dim, larger along dim 0.
    index = torch.randint(0, x.shape[dim], (12 if dim in (0, -2) else 4, 5),
                          dtype=index_dtype)
    if dim in (1, -1):
        index = torch.randint(0, 16, (8, 20), dtype=index_dtype)
    out, _ = run("gather", x, index, dim)
    same(out, torch.gather(x, dim, index.long()))


def test_index_select_at_a_cpu_scalar_index():
    # torch.compile's constants: a 0-dim CPU tensor, passed by value.
    x = lookup_values((6, 8), torch.float32)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        i = fd.define_tensor(shape=[], dtype=DataType.Int, is_cpu=True)
        fd.add_output(fd.ops.index_select(t, i, 1))
    (out,) = fd.execute([x, torch.tensor(7)])
    same(out, x[:, 7:8])


def test_gather_with_an_empty_index():
    x = lookup_values((4, 6), torch.float32)
    index = torch.zeros((0, 9), dtype=torch.int64)  # torch skips size checks
    out, _ = run("gather", x, index, 0)
    same(out, torch.gather(x, 0, index))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("xshape,ishape,dim", [
    ((6, 10), (6, 3), 1),     # same shape but along dim
    ((6, 10), (6, 1), -1),    # one per row (cross entropy's target)
    ((6, 10), (1, 4), 1),     # the index broadcasts over rows
    ((1, 10), (6, 4), 1),     # the input broadcasts over rows
    ((4, 1, 5), (4, 3, 2), 2),
    ((4, 7, 5), (1, 2, 5), 1),
])
def test_take_along_axis_broadcasts_like_torch(xshape, ishape, dim,
                                               index_dtype):
    x = lookup_values(xshape, torch.float32)
    index = torch.randint(0, xshape[dim], ishape, dtype=index_dtype)
    out, _ = run("take_along_axis", x, index, dim)
    same(out, torch.take_along_dim(x, index.long(), dim))


def test_take_along_axis_bf16():
    x = lookup_values((3, 16), torch.bfloat16)
    index = torch.randint(0, 16, (3, 16))
    out, _ = run("take_along_axis", x, index, 1)
    same(out, torch.take_along_dim(x, index, 1))


@pytest.mark.parametrize("op", ["index_select", "gather", "take_along_axis"])
@pytest.mark.parametrize("bad", [-1, 6, 1 << 40])
def test_out_of_range_index_raises_index_error(op, bad):
    x = lookup_values((4, 6), torch.float32)
    index = torch.tensor([0, bad, 2]) if op == "index_select" else \
        torch.tensor([[0, bad, 2]] * 4)
    with pytest.raises(IndexError, match="%s: index %d is out of range for "
                       "dim 1" % (op, bad)):
        run(op, x, index, 1)
    # torch raises too (IndexError or RuntimeError by op).
    with pytest.raises((IndexError, RuntimeError)):
        if op == "index_select":
            torch.index_select(x, 1, index)
        else:
            torch.gather(x, 1, index)


def test_empty_lookup_dim_raises_unless_the_index_is_empty():
    x = torch.zeros((0, 3))
    with pytest.raises(IndexError, match="index_select: index 0"):
        run("index_select", x, torch.tensor([0]), 0)
    out, _ = run("index_select", x, torch.tensor([], dtype=torch.int64), 0)
    same(out, torch.zeros((0, 3)))


def test_definition_errors_name_the_op():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        f = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        i1 = fd.define_tensor(shape=[-1], dtype=DataType.Int)
        i2 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Int)
        x46 = fd.define_tensor(shape=[4, 6], dtype=DataType.Float)
        i52 = fd.define_tensor(shape=[5, 2], dtype=DataType.Int)
        ops = fd.ops
        cases = [
            (TypeError, "index_select: the index .* must be Int or Int32",
             lambda: ops.index_select(x, f, 0)),
            (ValueError, "index_select: the index .* must be 1-D or 0-dim",
             lambda: ops.index_select(x, i2, 0)),
            (ValueError, "gather: the index .* must have the rank",
             lambda: ops.gather(x, i1, 0)),
            (ValueError, "take_along_axis: dim 2 is out of range",
             lambda: ops.take_along_axis(x, i2, 2)),
            (TypeError, "expected a Tensor", lambda: ops.gather(x, 1, 0)),
            (TypeError, "dim must be an int",
             lambda: ops.gather(x, i2, 0.5)),
            (ValueError, "gather: the index .* is larger than the input .* "
             "at dim 0", lambda: ops.gather(x46, i52, 1)),
            (ValueError, "take_along_axis: operands .* incompatible sizes "
             "at dim 0", lambda: ops.take_along_axis(x46, i52, 1)),
        ]
        for error, match, call in cases:
            with pytest.raises(error, match=match):
                call()
        fd.add_output(fd.ops.gather(x, i2, 1))
        fd.add_output(fd.ops.gather(x46, i52, 0))


def test_gather_sizes_are_checked_at_execute_for_symbolic_shapes():
    x = torch.randn(4, 6)
    with pytest.raises(ValueError, match="gather: the index .* is larger"):
        run("gather", x, torch.zeros((5, 2), dtype=torch.int64), 1)


def build_all_three(fd):
    x = fd.define_tensor(shape=[-1, -1], dtype=DataType.BFloat16)
    i = fd.define_tensor(shape=[-1], dtype=DataType.Int32)
    j = fd.define_tensor(shape=[-1, 1], dtype=DataType.Int)
    e = fd.ops.index_select(x, i, 0)
    fd.add_output(fd.ops.mul(e, 2.0))
    fd.add_output(fd.ops.gather(x, j, -1))
    fd.add_output(fd.ops.take_along_axis(x, j, 1))


def test_printed_definitions_re_execute():
    x = lookup_values((6, 8), torch.bfloat16)
    i = torch.tensor([5, 0, 3], dtype=torch.int32)
    j = torch.tensor([[7], [0], [1], [2], [3], [4]])
    with FusionDefinition() as fd:
        build_all_three(fd)
    want = fd.execute([x, i, j])
    same(want[0], (x.index_select(0, i).float() * 2.0))
    same(want[1], torch.gather(x, -1, j))
    same(want[2], torch.take_along_dim(x, j, 1))
    for call in ("T3 = fd.ops.index_select(T0, T1, dim=0)",
                 "fd.ops.gather(T0, T2, dim=1)",
                 "fd.ops.take_along_axis(T0, T2, dim=1)"):
        assert call in repr(fd), repr(fd)
    got, got_repr = run_printed(fd, [x, i, j])
    for w, g, r in zip(want, got, got_repr):
        same(g, w)
        same(r, w)


# ---- segmentation -------------------------------------------------------

def groups(fd):
    return [(g["scheduler"], g["ops"])
            for g in fd.last_segmentation()["groups"]]


def test_embedding_and_pointwise_ops_are_one_kernel():
    w = lookup_values((64, 32), torch.bfloat16)
    ids = torch.randint(0, 64, (2, 8))
    with FusionDefinition() as fd:
        tw, tids = fd.from_pytorch(w), fd.from_pytorch(ids)
        e = fd.ops.index_select(tw, fd.ops.reshape(tids, [16]), 0)
        e = fd.ops.reshape(e, [2, 8, 32])
        y = fd.ops.mul(fd.ops.silu(fd.ops.cast(e, DataType.Float)), 0.5)
        fd.add_output(fd.ops.cast(y, DataType.BFloat16))
    (out,) = fd.execute([w, ids])
    emb = torch.nn.functional.embedding(ids, w)
    same(out, (torch.nn.functional.silu(emb.float()) * 0.5).bfloat16())
    seg = fd.last_segmentation()
    assert [g["scheduler"] for g in seg["groups"]] == ["pointwise"]
    assert "index_select" in seg["groups"][0]["ops"] + \
        seg["groups"][0]["prologue"]
    assert seg["boundary_bytes"] == 0


def test_embedding_and_rms_norm_are_one_kernel():
    w = lookup_values((64, 32), torch.float32)
    g = torch.randn(32)
    ids = torch.randint(0, 64, (2, 8))
    with FusionDefinition() as fd:
        tw, tids, tg = (fd.from_pytorch(t) for t in (w, ids, g))
        e = fd.ops.reshape(fd.ops.index_select(tw, fd.ops.reshape(tids, [16]),
                                               0), [2, 8, 32])
        ms = fd.ops.mean(fd.ops.mul(e, e), [2], keepdim=True)
        r = fd.ops.rsqrt(fd.ops.add(ms, 1e-6))
        fd.add_output(fd.ops.mul(fd.ops.mul(e, r), fd.ops.broadcast_in_dim(
            tg, [2, 8, 32], [2])))
        fd.add_output(e)
    y, e = fd.execute([w, ids, g])
    emb = torch.nn.functional.embedding(ids, w)
    same(e, emb)
    ref = emb * torch.rsqrt(emb.pow(2).mean(-1, keepdim=True) + 1e-6) * g
    torch.testing.assert_close(y, ref)
    assert groups(fd)[0][0] == "inner_persistent" and len(groups(fd)) == 1


def test_a_computed_lookup_is_written_by_an_earlier_kernel(capfd,
                                                           monkeypatch):
    # nvFuser's test_gather shape: gather from a sum of two inputs.
    monkeypatch.setenv("NVFUSER_DUMP", "segmenter_logging")
    a, b = torch.randn(8, 16), torch.randn(8, 16)
    index = torch.randint(0, 8, (4, 4))
    with FusionDefinition() as fd:
        t0, t1, t2 = (fd.from_pytorch(t) for t in (a, b, index))
        fd.add_output(fd.ops.gather(fd.ops.add(t0, t1), t2, 0))
    (out,) = fd.execute([a, b, index])
    same(out, torch.gather(a + b, 0, index))
    assert groups(fd) == [("pointwise", ["add"]), ("pointwise", ["gather"])]
    assert "which this segment computes (a gather reads its input from " \
        "memory)" in capfd.readouterr().out


def test_a_forwarded_lookup_is_backed_off():
    # weight -> cast is a forwardable chain; the gather cannot take it as a
    # prologue, so the cast is materialized for it.
    w = lookup_values((16, 8), torch.bfloat16)
    ids = torch.tensor([3, 15, 0])
    with FusionDefinition() as fd:
        tw, tids = fd.from_pytorch(w), fd.from_pytorch(ids)
        e = fd.ops.index_select(fd.ops.cast(tw, DataType.Float), tids, 0)
        fd.add_output(fd.ops.neg(e))
    (out,) = fd.execute([w, ids])
    same(out, -w.float().index_select(0, ids))
    seg = fd.last_segmentation()
    assert seg["forwarded_chains"][0]["backed_off"] == ["index_select"]
    assert groups(fd) == [("pointwise", ["cast"]),
                          ("pointwise", ["index_select", "neg"])]


def test_index_computed_in_the_kernel():
    # The index is an intermediate of the same kernel (a cast and an add).
    w = lookup_values((10, 4), torch.float32)
    ids = torch.tensor([0, 4, 8], dtype=torch.int32)
    with FusionDefinition() as fd:
        tw, tids = fd.from_pytorch(w), fd.from_pytorch(ids)
        k = fd.ops.add(fd.ops.cast(tids, DataType.Int), 1)
        fd.add_output(fd.ops.index_select(tw, k, 0))
    (out,) = fd.execute([w, ids])
    same(out, w.index_select(0, ids.long() + 1))
    assert len(groups(fd)) == 1


def test_execute_unsegmented_agrees():
    w = lookup_values((10, 4), torch.float32)
    ids = torch.tensor([[1], [9]])
    with FusionDefinition() as fd:
        tw, tids = fd.from_pytorch(w), fd.from_pytorch(ids)
        fd.add_output(fd.ops.take_along_axis(tw, tids, 0))
    same(fd.execute([w, ids])[0], fd.execute_unsegmented([w, ids])[0])
