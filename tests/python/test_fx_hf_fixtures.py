"""Real transformers graphs on the CPU (issue 15): the forward and backward
ATen graphs of a Llama, Qwen2 and Mistral training step as torch.compile
hands them to our backend on the H200 (fixtures/hf/, written by
``benchmarks/model_bench.py --capture``). They are loaded with meta inputs
(shapes, dtypes and strides; the graphs are too large to run here), the
cuDNN attention ops this torch lacks are registered as stand-in operators
(fixtures/capture.py), and the partition must put every op in one region:
attention and the embedding's backward are ATen calls inside it."""

import glob
import os

import pytest
import torch

from fixtures.capture import STANDINS, load
from fx_check import call_nodes, coverage, ops_in_regions
from nvfuser.fx import compile_graph

HF = os.path.join(os.path.dirname(__file__), "fixtures", "hf")
MODELS = ("llama", "qwen2", "mistral")

MUST_FUSE = {
    # The loss as decomposed for the backend (amax/exp/log), RMSNorm,
    # RoPE, the MLP, every matmul and attention.
    "forward": {"embedding", "mm", "bmm", "amax", "exp", "log",
                "nll_loss_forward", "rsqrt", "silu", "cat", "sin", "cos",
                "_scaled_dot_product_cudnn_attention"},
    "backward": {"mm", "silu_backward", "slice_backward", "sum", "where",
                 "exp", "_scaled_dot_product_cudnn_attention_backward",
                 "embedding_dense_backward"},
}


def test_every_model_has_both_graphs():
    names = sorted(os.path.basename(p) for p in glob.glob(
        os.path.join(HF, "*.py")))
    assert names == sorted("%s_%s.py" % (m, k) for m in MODELS
                           for k in ("backward", "forward"))


@pytest.mark.parametrize("kind", ["forward", "backward"])
@pytest.mark.parametrize("model", MODELS)
def test_hf_graph_partition(model, kind):
    gm, inputs, ns = load(os.path.join(HF, "%s_%s.py" % (model, kind)),
                          device="meta")
    assert ns["TORCH"].startswith("2."), ns["NOTE"]
    assert len(call_nodes(gm)) > 150
    compiled = compile_graph(gm, inputs)
    assert not compiled.nvfuser_unsupported
    assert coverage(gm, compiled) == 1.0
    assert MUST_FUSE[kind] <= ops_in_regions(compiled)
    # Attention no longer splits the graph: one region.
    assert len(compiled.nvfuser_regions) == 1


def _causal_attention(q, k, v):
    """Reference by hand (this torch has no scaled_dot_product_attention):
    row by row, each query attends to the keys up to its position."""
    rows = []
    for i in range(q.shape[2]):
        s = torch.einsum("bhd,bhjd->bhj", q[:, :, i], k[:, :, :i + 1])
        p = torch.softmax(s / q.shape[-1] ** 0.5, -1)
        rows.append(torch.einsum("bhj,bhjd->bhd", p, v[:, :, :i + 1]))
    return torch.stack(rows, 2)


def test_standins_compute_attention():
    # The stand-ins are what runs when a fixture executes: causal
    # attention with GQA, output in q's layout, and its gradients.
    torch.manual_seed(0)
    q = torch.randn(1, 8, 4, 2).transpose(1, 2)  # [1, 4 heads, 8, 2]
    k, v = torch.randn(1, 2, 8, 2), torch.randn(1, 2, 8, 2)
    fwd = STANDINS["_scaled_dot_product_cudnn_attention"]
    out, lse = fwd(q, k, v, None, True, 0.0, True)[:2]
    want = _causal_attention(q, k.repeat_interleave(2, 1),
                             v.repeat_interleave(2, 1))
    torch.testing.assert_close(out, want)
    assert out.stride() == q.stride() and lse.shape == (1, 4, 8)
    g = torch.randn_like(out)
    bwd = STANDINS["_scaled_dot_product_cudnn_attention_backward"]
    dq, dk, dv = bwd(g, q, k, v, out, lse, None, None, None, None, None,
                     8, 8, 0.0, True)
    qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))
    o = _causal_attention(qr, kr.repeat_interleave(2, 1),
                          vr.repeat_interleave(2, 1))
    o.backward(g)
    for got, ref in zip((dq, dk, dv), (qr.grad, kr.grad, vr.grad)):
        torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-5)
