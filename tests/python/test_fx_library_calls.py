"""ATen operators without a translation run inside regions as aten_calls
(nvfuser/fx/library_calls.py): attention (this torch lacks cuDNN's, so
the fixtures' stand-in operator with the same schema), the embedding's
backward (as our nvfuser::embedding_dense_backward), sort. Numerics
against eager on the CPU, one region where eager once split the graph,
and the cases that must stay in eager."""

import operator

import pytest
import torch

from fixtures.capture import standin_op
from fx_check import ops_in_regions
from nvfuser import DataType, FusionDefinition
from nvfuser.fx import compile_graph

ATTN = "_scaled_dot_product_cudnn_attention"


def _attention_graph(read_max_q=False):
    """sin(q) -> attention -> transpose/reshape * 2, plus the logsumexp;
    with read_max_q also the call's SymInt return."""
    g = torch.fx.Graph()
    q, k, v = (g.placeholder(n) for n in "qkv")
    qs = g.call_function(torch.ops.aten.sin.default, (q,))
    att = g.call_function(standin_op(ATTN), (qs, k, v, None, True, 0.0,
                                             True), {"scale": 0.5})
    out = g.call_function(operator.getitem, (att, 0))
    lse = g.call_function(operator.getitem, (att, 1))
    t = g.call_function(torch.ops.aten.transpose.int, (out, 1, 2))
    r = g.call_function(torch.ops.aten.mul.Tensor, (t, 2.0))
    lse2 = g.call_function(torch.ops.aten.exp.default, (lse,))
    outs = [r, lse2]
    if read_max_q:
        outs.append(g.call_function(operator.getitem, (att, 4)))
    g.output(tuple(outs))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def _qkv():
    torch.manual_seed(0)
    q = torch.randn(1, 6, 4, 8).transpose(1, 2)  # [1, 4 heads, 6, 8]
    return [q, torch.randn(1, 2, 6, 8), torch.randn(1, 2, 6, 8)]


def test_attention_runs_inside_the_region_and_matches_eager():
    gm = _attention_graph()
    inputs = _qkv()
    c = compile_graph(gm, inputs)
    assert not c.nvfuser_unsupported
    assert len(c.nvfuser_regions) == 1
    assert ATTN in ops_in_regions(c)
    got, want = c(*inputs), gm(*inputs)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)
        assert a.stride() == b.stride()


def test_a_read_symint_return_keeps_the_call_in_eager():
    # max_q is an int: a region cannot return it, so the call and its
    # getitems stay in eager; the ops around still run in regions.
    gm = _attention_graph(read_max_q=True)
    inputs = _qkv()
    c = compile_graph(gm, inputs)
    reasons = c.nvfuser_unsupported
    assert any("return 4" in r and "not a plain tensor" in r
               for r in reasons.values()), reasons
    assert c.nvfuser_regions
    got, want = c(*inputs), gm(*inputs)
    torch.testing.assert_close(got[0], want[0])
    assert got[2] == want[2] == 6


def _embedding_backward_graph(padding_idx):
    g = torch.fx.Graph()
    grad, ids = g.placeholder("grad"), g.placeholder("ids")
    g2 = g.call_function(torch.ops.aten.mul.Tensor, (grad, 3.0))
    w = g.call_function(torch.ops.aten.embedding_dense_backward.default,
                        (g2, ids, 12, padding_idx, False))
    g.output((g.call_function(torch.ops.aten.add.Tensor, (w, 1.0)),))
    return torch.fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.parametrize("ids_dtype,padding_idx", [(torch.int64, -1),
                                                   (torch.int32, 3)])
def test_embedding_backward_in_a_region_matches_eager(ids_dtype,
                                                      padding_idx):
    gm = _embedding_backward_graph(padding_idx)
    ids = torch.randint(0, 12, (2, 5), dtype=ids_dtype)
    ids[0, :2] = 3  # a repeated id, and the padding row when it is 3
    inputs = [torch.randn(2, 5, 4), ids]
    c = compile_graph(gm, inputs)
    assert not c.nvfuser_unsupported and len(c.nvfuser_regions) == 1
    torch.testing.assert_close(c(*inputs)[0], gm(*inputs)[0])
    # Called as our operator (library_calls.REPLACEMENTS), whose printed
    # definition runs again.
    (name,) = c.nvfuser_regions
    fd = getattr(c, name).fd
    text = repr(fd)
    assert "fd.ops.aten_call('nvfuser::embedding_dense_backward.default', " \
        "[T1, T2, 12, %d, False]" % padding_idx in text, text
    assert "aten::embedding_dense_backward" not in text
    ns = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(text, ns)  # noqa: S102 (our own printed definition)
    fn = next(v for k, v in ns.items() if k.startswith("nvfuser_fusion_id"))
    with FusionDefinition() as again:
        fn(again)
    torch.testing.assert_close(again.execute(inputs)[0],
                               fd.execute(inputs)[0])


def test_a_copy_to_another_device_is_not_called_in_a_region():
    # _to_copy is functional, but its result is on another device than
    # its argument: never an aten_call (a region has one device).
    g = torch.fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(torch.ops.aten.sin.default, (x,))
    m = g.call_function(torch.ops.aten._to_copy.default, (y,),
                        {"device": torch.device("meta")})
    g.output((m,))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    c = compile_graph(gm, [torch.randn(3)])
    assert "_to_copy_default" in c.nvfuser_unsupported, \
        c.nvfuser_unsupported


def test_index_with_none_and_tensors_runs_in_the_region():
    # x[:, rows, cols] as aten.index.Tensor with a Tensor?[] argument (a
    # DDP llama graph's mask indexing stayed in eager when lists of tensors
    # could not be arguments).
    g = torch.fx.Graph()
    x, rows, cols = (g.placeholder(n) for n in ("x", "rows", "cols"))
    xs = g.call_function(torch.ops.aten.sin.default, (x,))
    y = g.call_function(torch.ops.aten.index.Tensor, (xs, [None, rows, cols]))
    g.output((g.call_function(torch.ops.aten.mul.Tensor, (y, 2.0)),))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    inputs = [torch.randn(3, 5, 6), torch.tensor([[4], [0], [2]]),
              torch.tensor([5, 1])]
    c = compile_graph(gm, inputs)
    assert not c.nvfuser_unsupported, c.nvfuser_unsupported
    assert len(c.nvfuser_regions) == 1
    assert "index" in ops_in_regions(c)
    torch.testing.assert_close(c(*inputs)[0], gm(*inputs)[0])
