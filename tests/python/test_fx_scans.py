"""The FX backend's aten.cumsum, aten.scatter (src and value forms, no
reduce) and aten.triu, translated to the core's fd.ops.cumsum, scatter and
triu: numerics against eager on the CPU for ATen graphs (make_fx) and
traced torch calls, the nodes land in regions (cumsum and scatter as ATen
expr_eval segments, triu fused into a kernel), and the forms the core does
not compute stay in eager with a reason."""

import warnings

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from fx_check import ops_in_regions
from nvfuser.fx import compile_graph

aten = torch.ops.aten


def compiled(fn, inputs, trace="make_fx"):
    gm = make_fx(fn)(*[t.clone() for t in inputs]) if trace == "make_fx" \
        else torch.fx.symbolic_trace(fn)
    return compile_graph(gm, [t.clone() for t in inputs])


def check(fn, inputs, trace="make_fx"):
    """Every node in one region, results equal to eager's (dtype, values,
    strides)."""
    c = compiled(fn, inputs, trace)
    assert not c.nvfuser_unsupported, c.nvfuser_unsupported
    assert len(c.nvfuser_regions) == 1
    got, want = c(*inputs), fn(*inputs)
    got = got if isinstance(got, (tuple, list)) else [got]
    want = want if isinstance(want, (tuple, list)) else [want]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        assert torch.equal(g, w), (g, w)
        assert g.stride() == w.stride()
    assert all(getattr(c, r).fallbacks == 0 for r in c.nvfuser_regions)
    return c


def region_schedulers(c):
    region = getattr(c, c.nvfuser_regions[0])
    return [(g["scheduler"], g["ops"])
            for g in region.fd.last_segmentation()["groups"]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64,
                                   torch.bfloat16, torch.int64, torch.int32,
                                   torch.bool])
def test_cumsum_matches_eager(dtype):
    torch.manual_seed(0)
    x = (torch.randn(4, 6) * 3).to(dtype)

    def f(x):
        return aten.cumsum(x, 1), aten.cumsum(x, -2), \
            aten.cumsum(x, 0, dtype=torch.float64)
    c = check(f, [x])
    assert "cumsum" in ops_in_regions(c)
    kinds = [k for k, _ in region_schedulers(c)]
    assert kinds.count("expr_eval") == 3  # one ATen call each


def test_cumsum_of_torch_calls_next_to_elementwise_ops():
    x = torch.randn(3, 5)
    c = check(lambda x: torch.cumsum(x.exp(), dim=1) * 2 + x.cumsum(0),
              [x], trace="symbolic")
    groups = region_schedulers(c)
    assert ("expr_eval", ["cumsum"]) in groups
    assert any(k == "pointwise" for k, _ in groups)


def _index(shape, dim, size):
    """An index without duplicates along dim (eager leaves which duplicate
    wins unspecified): a permutation of range(size) cut to shape."""
    torch.manual_seed(1)
    perms = [torch.randperm(size)[:shape[dim]] for _ in range(
        shape[1 - dim])]
    index = torch.stack(perms, dim=1 - dim)
    return index.contiguous()


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_src_and_value_match_eager(dim):
    x = torch.randn(5, 7)
    d = dim % 2
    index = _index([3, 4] if d == 0 else [4, 3], d, x.shape[d])
    src = torch.randn(4, 6)

    def f(x, index, src):
        return (aten.scatter.src(x, dim, index, src),
                aten.scatter.value(x * 2, dim, index, -1.5),
                aten.scatter(x, dim, index, 3))
    c = check(f, [x, index, src])
    assert "scatter" in ops_in_regions(c)
    assert [k for k, ops in region_schedulers(c)
            if ops == ["scatter"]] == ["expr_eval"] * 3


def test_scatter_of_integer_and_bool_tensors():
    idx = torch.tensor([[2, 0, 1]])
    for x, value in ((torch.arange(9).reshape(3, 3), 7),
                     (torch.zeros(3, 3, dtype=torch.bool), True)):
        check(lambda x, i: torch.scatter(x, 0, i, value), [x, idx],
              trace="symbolic")
        check(lambda x, i: x.scatter(1, i, x[:1]), [x, idx],
              trace="symbolic")


def test_scatter_forms_the_core_does_not_compute_stay_in_eager():
    x, idx = torch.randn(3, 3), torch.tensor([[2, 0, 1]])
    c = compiled(lambda x, i: torch.scatter(x, 0, i, x[:1], reduce="add"),
                 [x, idx], trace="symbolic")
    assert c.nvfuser_unsupported["scatter"] == "scatter with reduce='add'"
    n = torch.arange(9).reshape(3, 3)
    c = compiled(lambda x, i: torch.scatter(x, 0, i, 1.5), [n, idx],
                 trace="symbolic")
    assert "scatter of 1.5 into" in c.nvfuser_unsupported["scatter"]
    assert torch.equal(c(n, idx), torch.scatter(n, 0, idx, 1.5))


def test_scatter_index_out_of_range_raises_as_eager_does():
    x, idx = torch.randn(3, 3), torch.tensor([[2, 0, 1]])
    c = check(lambda x, i: torch.scatter(x, 0, i, 1.0) + 1, [x, idx],
              trace="symbolic")
    bad = torch.tensor([[2, 0, 3]])
    with pytest.raises(RuntimeError):
        torch.scatter(x, 0, bad, 1.0)
    # The region raises IndexError, then runs its graph in eager, which
    # raises torch's error.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError):
            c(x, bad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.int64, torch.bool])
@pytest.mark.parametrize("diagonal", [0, 2, -1])
def test_triu_is_the_core_op_fused_into_a_kernel(dtype, diagonal):
    x = (torch.randn(2, 5, 6) * 4).to(dtype)
    c = check(lambda x: aten.triu(x, diagonal), [x])
    region = getattr(c, c.nvfuser_regions[0])
    assert "fd.ops.triu(" in repr(region.fd)
    assert [k for k, _ in region_schedulers(c)] == ["pointwise"]


def test_triu_of_a_torch_call_with_elementwise_ops():
    x = torch.randn(4, 4)
    c = check(lambda x: torch.triu(x.sin(), diagonal=1) + x.tril(),
              [x], trace="symbolic")
    region = getattr(c, c.nvfuser_regions[0])
    assert "fd.ops.triu(" in repr(region.fd)
    assert [k for k, _ in region_schedulers(c)] == ["pointwise"]
