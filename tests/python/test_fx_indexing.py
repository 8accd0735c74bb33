"""The FX backend's gathers on the CPU: aten.embedding (index_select of the
weight's rows, then a reshape), aten.index_select and aten.gather run inside
regions. A token embedding followed by an RMS norm, traced with functorch's
aot_module, is one region and one kernel; its numerics and gradients match
eager; out-of-range ids raise as eager does; embedding_dense_backward (a
scatter-add) runs in the backward's region as an aten_call of
nvfuser::embedding_dense_backward."""

import warnings

import pytest
import torch
import torch.fx
import torch.nn.functional as F  # noqa: N812
from torch import nn

from fx_check import ops_in_regions, region_layout_mismatches
from nvfuser.fx import compile_graph


class EmbedNorm(nn.Module):
    """A decoder's first steps: token embedding, RMS norm (Hugging Face's
    LlamaRMSNorm), a residual-style product."""

    def __init__(self, vocab=50, hidden=32, dtype=torch.float32):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden, padding_idx=0).to(dtype)
        self.weight = nn.Parameter(
            (1 + 0.1 * torch.randn(hidden)).to(dtype))

    def forward(self, ids):
        h = self.embed(ids)
        x = h.to(torch.float32)
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        return self.weight * x.to(h.dtype) + h


def aot_step(model, ids):
    from functorch.compile import aot_module, make_boxed_func
    seen = []

    def comp(gm, inputs):
        compiled = compile_graph(gm, inputs)
        seen.append((gm, list(inputs), compiled))
        return make_boxed_func(compiled)
    out = aot_module(model, fw_compiler=comp, bw_compiler=comp)(ids)
    out.float().square().sum().backward()
    return out, seen


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_embedding_and_rms_norm_run_in_one_region(dtype, capfd,
                                                  monkeypatch):
    monkeypatch.setenv("NVFUSER_DUMP", "fx_partition")
    torch.manual_seed(0)
    model = EmbedNorm(dtype=dtype)
    ids = torch.randint(0, 50, (2, 7))
    ids[0, 0] = 0  # the padding row: the same forward
    out, seen = aot_step(model, ids)
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    want = model(ids)
    want.float().square().sum().backward()
    # (The mean's summation order differs from eager's.) Regions compute
    # bf16 in float between inputs and outputs: close, not equal.
    f32 = dtype == torch.float32
    tol = 1e-5 if f32 else 1e-2
    torch.testing.assert_close(out, want, rtol=tol, atol=tol)
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g, p.grad, rtol=1e-4 if f32 else 5e-2,
                                   atol=1e-4 if f32 else 5e-2)
    dump = capfd.readouterr().out
    assert "[fx_partition] fused_0: embedding " in dump, dump
    (fw, fw_inputs, fw_compiled), (bw, _, bw_compiled) = seen
    assert not fw_compiled.nvfuser_unsupported
    assert "embedding" in ops_in_regions(fw_compiled)
    # The embedding's backward is called inside the region, as ours.
    assert not bw_compiled.nvfuser_unsupported
    assert "embedding_dense_backward" in ops_in_regions(bw_compiled)
    assert any("aten_call('nvfuser::embedding_dense_backward.default'" in
               repr(getattr(bw_compiled, name).fd)
               for name in bw_compiled.nvfuser_regions)
    assert not region_layout_mismatches(fw, fw_compiled, fw_inputs)[0]
    # One kernel: the gather inside the norm's row kernel.
    (name,) = fw_compiled.nvfuser_regions
    region = getattr(fw_compiled, name)
    groups = region.fd.last_segmentation()["groups"]
    assert [g["scheduler"] for g in groups] == ["inner_persistent"], groups
    assert "index_select" in groups[0]["ops"]
    assert region.fallbacks == 0


def check(fn, *inputs):
    gm = torch.fx.symbolic_trace(fn)
    compiled = compile_graph(gm, [t.clone() for t in inputs])
    got, want = compiled(*inputs), fn(*inputs)
    assert got.dtype == want.dtype and torch.equal(got, want), (got, want)
    return compiled


@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_index_select_gather_and_functional_embedding_are_translated(
        index_dtype):
    x = torch.randn(6, 8)
    idx = torch.tensor([5, 0, 2], dtype=index_dtype)
    ids = torch.tensor([[1, 5], [0, 0]], dtype=index_dtype)
    forms = [
        (lambda t, i: torch.index_select(t, 1, i) * 2, (x, idx)),
        (lambda t, i: t.index_select(-2, i).relu(), (x, idx)),
        (lambda t, i: torch.gather(t, -1, i.long().expand(6, 3)) + 1,
         (x, idx)),
        (lambda t, i: F.embedding(i, t, padding_idx=0).sin(), (x, ids)),
        # 0-dim ids, computed in the region by a reduction.
        (lambda t, i: F.embedding(i.amax(), t) - 1, (x, ids)),
    ]
    for fn, inputs in forms:
        compiled = check(fn, *inputs)
        assert not compiled.nvfuser_unsupported, compiled.nvfuser_unsupported
        assert len(compiled.nvfuser_regions) == 1


def test_out_of_range_ids_raise_as_eager_does():
    w = torch.randn(10, 4)
    c = check(lambda t, i: F.embedding(i, t) * 2, w, torch.tensor([1, 2]))
    bad = torch.tensor([1, 10])
    with pytest.raises(IndexError):
        F.embedding(bad, w)
    # The region raises IndexError, then runs its graph in eager, which
    # raises torch's error.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(IndexError):
            c(w, bad)


def test_embeddings_that_differ_from_a_gather_stay_in_eager():
    w, ids = torch.randn(10, 4), torch.tensor([1, 2])
    c = compile_graph(torch.fx.symbolic_trace(
        lambda t, i: F.embedding(i, t, sparse=True) * 2), [w, ids])
    assert c.nvfuser_unsupported["embedding"] == "a sparse embedding"
    c = compile_graph(torch.fx.symbolic_trace(
        lambda t, i: F.embedding(i, t.clone(), max_norm=1.0) * 2), [w, ids])
    assert "max_norm" in c.nvfuser_unsupported["embedding"]
