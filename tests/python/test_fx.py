"""FX translation and partitioning (nvfuser.fx) on the CPU: symbolic_trace
graphs and functorch aot_function graphs (forward and backward), numerics
against eager; the torch.compile path where dynamo exists."""

import operator

import pytest
import torch
import torch.fx

from fx_check import ops_in_regions
from nvfuser.fx import TABLE, compile_graph, register


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rotary(q, k, cos, sin):
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def repeat_kv(x, n):
    if n == 1:
        return x
    return x[:, :, None, :, :].expand(-1, -1, n, -1, -1).reshape(
        x.size(0), x.size(1) * n, x.size(2), x.size(3))


class RotaryEmbedding(torch.nn.Module):
    """cos/sin from position ids: an outer product as a batched matmul."""

    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv, persistent=False)

    def forward(self, x, position_ids):
        inv = self.inv_freq[None, :, None].float()  # batch-broadcast
        pos = position_ids[:, None, :].float()
        freqs = (inv @ pos).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


class Attention(torch.nn.Module):
    def __init__(self, heads=4, kv_heads=2, dim=16):
        super().__init__()
        self.h, self.g, self.d = heads, kv_heads, dim
        self.rope = RotaryEmbedding(dim)

    def forward(self, q, k, v, position_ids):
        b, t = q.size(0), q.size(1)
        q = q.view(b, t, self.h, self.d).transpose(1, 2)
        k = k.view(b, t, self.g, self.d).transpose(1, 2)
        v = v.view(b, t, self.g, self.d).transpose(1, 2)
        cos, sin = self.rope(v, position_ids)
        q, k = apply_rotary(q, k, cos, sin)
        return (q, repeat_kv(k, self.h // self.g),
                repeat_kv(v, self.h // self.g))


class RMSNorm(torch.nn.Module):
    def __init__(self, n, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(n))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def attention_inputs(t=8, requires_grad=False):
    q = torch.randn(2, t, 4 * 16, requires_grad=requires_grad)
    k = torch.randn(2, t, 2 * 16, requires_grad=requires_grad)
    v = torch.randn(2, t, 2 * 16, requires_grad=requires_grad)
    pos = torch.arange(t).expand(2, t)
    return [q, k, v, pos]


def test_symbolic_trace_rotary_is_one_region():
    m = Attention()
    inputs = attention_inputs()
    c = compile_graph(torch.fx.symbolic_trace(m), inputs)
    for o, r in zip(c(*inputs), m(*inputs)):
        torch.testing.assert_close(o, r)
    # symbolic_trace graphs query shapes and dtypes (q.size(0), v.dtype,
    # x.shape[-1] // 2) between the tensor ops; inside a region those are
    # the recorded constants, so the whole module (views, rotary table, both
    # rotate_halfs, repeat_kv) is one region. Only position_ids[:, None, :]
    # stays in eager: torch's partitioner keeps a getitem with the node it
    # reads, here a graph input.
    reasons = list(c.nvfuser_unsupported.values())
    assert len(reasons) == 1 and "getitems stay with" in reasons[0], reasons
    assert len(c.nvfuser_regions) == 1
    region = getattr(c, c.nvfuser_regions[0])
    assert sum(n.op == "call_function" and "cat" in str(n.target)
               for n in region.eager.graph.nodes) == 3


def test_shape_arithmetic_around_an_eager_node():
    # n is computed from sin's output and read by a slice of cumprod's (an
    # eager node between them: no translation). The slice is a getitem of an eager node, so
    # it stays in eager too (newer torch partitioners otherwise never stop
    # moving it), and with it the shape arithmetic only it reads.
    class M(torch.nn.Module):
        def forward(self, x):
            y = torch.sin(x)
            n = y.size(1) // 2
            return torch.cumprod(y, 0)[:, :n] + 1

    x = torch.randn(4, 6)
    c = compile_graph(torch.fx.symbolic_trace(M()), [x])
    torch.testing.assert_close(c(x), M()(x))
    assert "cumprod" in c.nvfuser_unsupported
    assert "getitem" in c.nvfuser_unsupported
    assert "floordiv" in c.nvfuser_unsupported
    assert len(c.nvfuser_regions) == 2  # sin, add
    y = torch.randn(4, 10)  # other shapes: the eager graph computes n
    torch.testing.assert_close(c(y), M()(y))


def test_getitem_and_the_node_it_reads_run_together():
    # Indexing with a tensor has no translation; sin, read only by that
    # getitem, must then stay in eager as well (torch's partitioner would
    # otherwise pull the getitem into sin's region).
    class M(torch.nn.Module):
        def forward(self, x, idx):
            return x.sin()[idx] * 2

    x, idx = torch.randn(5, 3), torch.tensor([0, 2, 4])
    c = compile_graph(torch.fx.symbolic_trace(M()), [x, idx])
    torch.testing.assert_close(c(x, idx), M()(x, idx))
    assert "sin" in c.nvfuser_unsupported
    assert "getitems stay with" in c.nvfuser_unsupported["sin"]


def test_a_region_returns_shape_values_as_recorded():
    # When the partitioner puts a shape query in another region than its
    # reader, the region returns the recorded value next to its tensors.
    from nvfuser.fx.partition import FusionRegion, record_values

    def f(x):
        y = torch.sin(x)
        return y, y.size(1)
    gm = torch.fx.symbolic_trace(f)
    x = torch.randn(4, 6)
    values = record_values(gm, [x])
    region = FusionRegion(gm, {n.name: v for n, v in values.items()})
    assert [(kind, x[0] if kind == "tensor" else x)
            for kind, x in region.outputs] == [("tensor", 0), ("value", 6)]
    y, n = region(x)
    torch.testing.assert_close(y, torch.sin(x))
    assert n == 6
    assert region(torch.randn(4, 9))[1] == 9  # other shapes: eager graph


def test_a_region_must_not_wait_on_its_own_output():
    from nvfuser.fx.partition import leaves_and_returns

    def f(x):
        a = torch.sin(x)
        b = torch.cumsum(a, 0)
        return torch.cos(b) + a
    g = torch.fx.symbolic_trace(f).graph
    n = {node.name: node for node in g.nodes}
    assert leaves_and_returns([n["sin"], n["add"]])  # through cumsum, cos
    assert not leaves_and_returns([n["cos"], n["add"]])
    assert not leaves_and_returns([n["sin"]])


def test_other_shapes_specialize_the_region_then_fall_back():
    # A new shape runs the region's graph once (recording its values) and
    # translates a variant for it; past MAX_VARIANTS, eager.
    m = Attention()
    c = compile_graph(torch.fx.symbolic_trace(m), attention_inputs(t=8))
    regions = [getattr(c, name) for name in c.nvfuser_regions]
    for t in (12, 12, 6, 12):
        longer = attention_inputs(t=t)
        for o, r in zip(c(*longer), m(*longer)):
            torch.testing.assert_close(o, r)
    assert all(len(r.variants) == 2 for r in regions)
    assert sum(r.fallbacks for r in regions) == 0
    for r in regions:
        r.MAX_VARIANTS = 2
    other = attention_inputs(t=4)
    for o, r in zip(c(*other), m(*other)):
        torch.testing.assert_close(o, r)
    assert sum(r.fallbacks for r in regions) >= 1


@pytest.mark.parametrize("tensor, first, then", [
    (torch.tensor([1.0, -2.0, 3.0]), 0.0, -0.0),  # the sign of x / 0
    (torch.arange(4), 1, 1.0),                    # int * float is float
    (torch.tensor([True, False]), True, 1),       # bool * int is int
    (torch.arange(4), 2, True),
])
def test_a_number_argument_equal_to_the_traced_one_gets_its_own_variant(
        tensor, first, then):
    # 1 == 1.0 == True and 0.0 == -0.0, but they are different arguments:
    # reusing the translation made for `first` gave another dtype or sign.
    def f(x, k):
        return x * k, x / k
    c = compile_graph(torch.fx.symbolic_trace(f), [tensor, first])
    for k in (first, then, then, first):  # specialize, then the variant
        for got, want in zip(c(tensor, k), f(tensor, k)):
            assert got.dtype == want.dtype
            assert torch.equal(torch.signbit(got), torch.signbit(want))
            torch.testing.assert_close(got, want, equal_nan=True)
    region = getattr(c, c.nvfuser_regions[0])
    assert len(region.variants) == 1 and region.fallbacks == 0


def test_region_failure_falls_back_to_eager_with_a_warning():
    m = Attention()
    inputs = attention_inputs()
    c = compile_graph(torch.fx.symbolic_trace(m), inputs)
    region = getattr(c, c.nvfuser_regions[0])

    def broken(*_a, **_k):
        raise RuntimeError("simulated compiler failure")
    region.fd._execute_plain = broken
    with pytest.warns(UserWarning, match="simulated compiler failure"):
        outs = c(*inputs)
    for o, r in zip(outs, m(*inputs)):
        torch.testing.assert_close(o, r)
    assert region.fallbacks == 1


def _aot(fn, inputs, grads_of):
    from functorch.compile import aot_function, aot_module, make_boxed_func
    seen = []

    def comp(gm, ins):
        c = compile_graph(gm, ins)
        seen.append(c)
        return make_boxed_func(c)
    # A module's parameters and buffers become graph inputs (newer torch
    # refuses real tensors captured as constants in a traced function).
    aot = aot_module if isinstance(fn, torch.nn.Module) else aot_function
    compiled = aot(fn, fw_compiler=comp, bw_compiler=comp)
    outs = compiled(*inputs)
    loss = sum((o.float() * (i + 1)).sum() for i, o in enumerate(outs))
    grads = torch.autograd.grad(loss, grads_of)
    return outs, grads, seen


def test_aot_forward_and_backward_of_hf_rotary_match_eager():
    m = Attention()
    inputs = attention_inputs(requires_grad=True)
    wrt = inputs[:3]
    outs, grads, seen = _aot(m, inputs, wrt)
    ref = m(*inputs)
    loss = sum((o.float() * (i + 1)).sum() for i, o in enumerate(ref))
    ref_grads = torch.autograd.grad(loss, wrt)
    for o, r in zip(outs, ref):
        torch.testing.assert_close(o, r)
    for g, r in zip(grads, ref_grads):
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-5)
    assert len(seen) == 2  # forward and backward graphs both came through
    fwd, bwd = seen
    assert len(fwd.nvfuser_regions) == 1 and len(bwd.nvfuser_regions) >= 1
    assert not bwd.nvfuser_unsupported, bwd.nvfuser_unsupported


def pair_view_rope(x, cos, sin):
    """torchtune's RoPE: x [B, T, H, D] viewed as D / 2 pairs, each rotated
    by its angle (x[2k] and x[2k + 1] adjacent: Meta's Llama, GPT-J)."""
    xp = x.float().reshape(*x.shape[:-1], -1, 2)
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    out = torch.stack([xp[..., 0] * c - xp[..., 1] * s,
                       xp[..., 1] * c + xp[..., 0] * s], -1)
    return (out.flatten(3).type_as(x),)


def test_aot_pair_view_rope_translates_stack_and_select_backward():
    x = torch.randn(2, 6, 3, 16, requires_grad=True)
    cos, sin = torch.randn(6, 8), torch.randn(6, 8)
    outs, grads, seen = _aot(pair_view_rope, [x, cos, sin], [x])
    ref = pair_view_rope(x, cos, sin)[0]
    ref_grad = torch.autograd.grad(ref.sum(), [x])[0]
    torch.testing.assert_close(outs[0], ref)
    torch.testing.assert_close(grads[0], ref_grad, rtol=1e-5, atol=1e-5)
    fwd, bwd = seen
    assert not fwd.nvfuser_unsupported, fwd.nvfuser_unsupported
    assert not bwd.nvfuser_unsupported, bwd.nvfuser_unsupported
    assert "stack" in ops_in_regions(fwd)
    assert "select_backward" in ops_in_regions(bwd)
    assert len(fwd.nvfuser_regions) == 1 and len(bwd.nvfuser_regions) == 1


def rms_norm(x, weight, eps=1e-6):
    dtype = x.dtype
    x = x.to(torch.float32)
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return (weight * x.to(dtype),)


def test_aot_rms_norm_is_one_region_each_way():
    x = torch.randn(6, 32, requires_grad=True)
    w = torch.randn(32, requires_grad=True)
    outs, grads, seen = _aot(rms_norm, [x, w], [x, w])
    ref = rms_norm(x, w)[0]
    ref_grads = torch.autograd.grad(ref.sum(), [x, w])
    torch.testing.assert_close(outs[0], ref)
    for g, r in zip(grads, ref_grads):
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-5)
    assert len(seen[0].nvfuser_regions) == 1
    assert 1 <= len(seen[1].nvfuser_regions) <= 2
    assert not seen[0].nvfuser_unsupported and not seen[1].nvfuser_unsupported


def test_unsupported_nodes_stay_eager_with_a_reason(capsys, monkeypatch):
    class M(torch.nn.Module):
        def forward(self, x):
            y = torch.exp(x) * 2
            s = torch.sort(y, dim=-1)[0]  # not translated
            return torch.relu(s) + 1

    monkeypatch.setenv("NVFUSER_DUMP", "fx_partition")
    x = torch.randn(4, 8)
    c = compile_graph(torch.fx.symbolic_trace(M()), [x])
    torch.testing.assert_close(c(x), M()(x))
    # torch.sort, a Python-level function (symbolic_trace), is not an ATen
    # operator the region could call.
    why = "no translation for sort (not an ATen operator)"
    assert c.nvfuser_unsupported["sort"] == why
    assert len(c.nvfuser_regions) == 2  # before and after the sort
    out = capsys.readouterr().out
    assert "[fx_partition] eager: sort (sort): " + why in out


def test_table_ops_translate_and_match():
    class M(torch.nn.Module):
        def forward(self, a, b, w):
            x = torch.where(a > 0, a, b).permute(1, 0)
            y = torch.nn.functional.pad(x, (1, 2)) + torch.full((8, 7), 0.5)
            z = torch.addmm(w[0], a, w) + torch.mm(a, w).amax(-1,
                                                             keepdim=True)
            s = y.sum(0) + torch.arange(7) * 0.25
            return s, z.var(0), torch.cat([z, z], 1).mean(), y.squeeze()

    a, b, w = torch.randn(4, 8), torch.randn(4, 8), torch.randn(8, 8)
    c = compile_graph(torch.fx.symbolic_trace(M()), [a, b, w])
    for o, r in zip(c(a, b, w), M()(a, b, w)):
        torch.testing.assert_close(o, r, rtol=1e-5, atol=1e-5)
    assert not c.nvfuser_unsupported, c.nvfuser_unsupported


def test_backward_scatter_ops_translate():
    # What slice gradients look like after decomposition (torch 2.x):
    # zeros + slice_scatter.
    class M(torch.nn.Module):
        def forward(self, g, base):
            z = g.new_zeros((4, 16))
            a = torch.slice_scatter(z, g, dim=1, start=4, end=12, step=1)
            b = torch.slice_scatter(base, g, dim=1, start=0, end=8,
                                   step=1)
            c = torch.slice_scatter(base, g, dim=1, start=8, end=16,
                                   step=1)
            return a + b + c

    g, base = torch.randn(4, 8), torch.randn(4, 16)
    c = compile_graph(torch.fx.symbolic_trace(M()), [g, base])
    torch.testing.assert_close(c(g, base), M()(g, base))
    assert not c.nvfuser_unsupported, c.nvfuser_unsupported


def test_split_of_a_fused_qkv_is_translated():
    class M(torch.nn.Module):  # LitGPT-style fused qkv
        def forward(self, qkv):
            parts = qkv.split([32, 16, 16], dim=-1)
            halves = torch.chunk(parts[0], 2, dim=-1)
            return (torch.cat([-halves[1], halves[0]], -1) * 2,
                    parts[1] + parts[2])

    x = torch.randn(3, 5, 64)
    c = compile_graph(torch.fx.symbolic_trace(M()), [x])
    for o, r in zip(c(x), M()(x)):
        torch.testing.assert_close(o, r)
    assert not c.nvfuser_unsupported, c.nvfuser_unsupported
    assert len(c.nvfuser_regions) == 1


def test_table_covers_the_issue_list():
    for name in ["add", "mul", "div", "_to_copy", "convert_element_type",
                 "view", "reshape", "_unsafe_view", "permute", "transpose",
                 "unsqueeze", "squeeze", "expand", "slice", "narrow", "split",
                 "cat",
                 "constant_pad_nd", "sum", "amax", "mean", "var", "where",
                 "full", "zeros", "ones", "arange", "mm", "bmm", "matmul",
                 "addmm", "clone", "alias"]:
        assert TABLE.get(name) is not None, name


@pytest.mark.skipif(not hasattr(torch, "compile"),
                    reason="torch.compile needs torch >= 2.0 (dynamo)")
def test_torch_compile_backend():
    assert register()
    m = Attention()
    inputs = attention_inputs(requires_grad=True)
    compiled = torch.compile(m, backend="nvfuser")
    outs = compiled(*inputs)
    for o, r in zip(outs, m(*inputs)):
        torch.testing.assert_close(o, r)
    sum(o.sum() for o in outs).backward()


def test_a_regions_inputs_come_in_graph_order_in_every_compile():
    # Twelve independent readers of twelve inputs: torch 1.13's Partition
    # keeps a region's nodes in a set, and its fuse takes the inputs in the
    # order it meets their readers, so the order (the printed definition,
    # the kernel cache's keys) changed from compile to compile.
    g = torch.fx.Graph()
    xs = [g.placeholder("x%d" % i) for i in range(12)]
    total = g.call_function(torch.sin, (xs[0],))
    for x in xs[1:]:
        total = g.call_function(operator.add,
                                (total, g.call_function(torch.sin, (x,))))
    g.output(total)
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    inputs = [torch.randn(4) for _ in xs]
    for _ in range(6):
        c = compile_graph(gm, inputs)
        torch.testing.assert_close(c(*inputs), sum(map(torch.sin, inputs)))
        (call,) = [n for n in c.graph.nodes if n.op == "call_module"]
        assert [a.name for a in call.args] == [x.name for x in xs]
