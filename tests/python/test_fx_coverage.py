"""What used to fall out of regions in a Hugging Face training step (issue
15): CPU scalar tensors, composite ATen ops (softmax, nll_loss, activation
backwards, layer norm, masks, factories), tuple getitems, cat's legacy
empty operands; and the layout contract of region outputs. Graphs come
from make_fx and aot_function, as torch.compile's aot_autograd makes
them."""

import math
import re

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from fx_check import (ops_in_regions, region_layout_mismatches,
                      row_major_kernels, transposed_outputs_left_as_views)
from nvfuser.fx import compile_graph
from nvfuser.fx.layout import OutputLayout
from nvfuser.fx.mutation import MutationAnalysis
from nvfuser.fx.partition import _Support, record_values
from nvfuser.fx.schema import Unsupported

aten = torch.ops.aten


def compiled_make_fx(fn, inputs, trace="make_fx"):
    """fn traced (make_fx: ATen ops, some decomposed; symbolic: the ops fn
    calls, as they are) and compiled."""
    if trace == "make_fx":
        gm = make_fx(fn)(*[t.clone() for t in inputs])
    else:
        gm = torch.fx.symbolic_trace(fn)
    return gm, compile_graph(gm, inputs)


def check(fn, inputs, rtol=1e-5, atol=1e-5, regions=1, trace="make_fx"):
    """fn traced and compiled: every op in `regions` regions, results and
    their strides as eager's."""
    gm, c = compiled_make_fx(fn, inputs, trace)
    assert not c.nvfuser_unsupported, c.nvfuser_unsupported
    assert len(c.nvfuser_regions) == regions
    got, want = c(*inputs), fn(*inputs)
    got = got if isinstance(got, (tuple, list)) else [got]
    want = want if isinstance(want, (tuple, list)) else [want]
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=rtol, atol=atol,
                                   equal_nan=True)
        assert g.stride() == w.stride()
    bad, _ = region_layout_mismatches(gm, c, inputs)
    assert not bad, bad
    assert all(getattr(c, r).fallbacks == 0 for r in c.nvfuser_regions)
    return c


def cpu_inputs(region):
    """How many of the region's fusion inputs are CPU scalars."""
    ir = region.fd.fusion_ir()
    head = ir.split("Outputs:")[0]
    return sum("(cpu)" in line for line in head.splitlines())


# ---- 1. CPU scalar tensors --------------------------------------------------

def test_cpu_scalar_inputs_and_constants_join_the_region():
    # s is a 0-dim tensor input, torch.tensor(3.0) a constant the graph
    # copies (lift_fresh_copy): both reach the kernel by value.
    def f(x, s):
        return x * s + torch.tensor(3.0)
    c = check(f, [torch.randn(3, 4), torch.tensor(2.0)])
    assert cpu_inputs(getattr(c, c.nvfuser_regions[0])) == 2


def test_scalar_tensor_translates():
    def f(x):
        t = aten.scalar_tensor(-1.5, dtype=torch.float32)
        return torch.where(x > 0, x, t) * aten.scalar_tensor(2)
    check(f, [torch.randn(4, 5)])


def _support_on_meta(fn, inputs):
    """Every node's reason for a graph whose big tensors are on the meta
    device, standing for a GPU, next to CPU scalars."""
    gm = make_fx(fn)(*inputs)
    values = record_values(gm, inputs)
    return gm, _Support(values, gm.graph,
                        MutationAnalysis(gm.graph, values, gm)).reasons


def test_cpu_scalars_mix_with_tensors_of_another_device():
    x, s = torch.randn(3, 4, device="meta"), torch.tensor(2.0)

    def f(x, s):
        moved = aten._to_copy(s, dtype=torch.float16, device="meta")
        return (x * s + moved) * torch.tensor(0.5)
    gm, reasons = _support_on_meta(f, [x, s])
    assert all(r is None for n, r in reasons.items()
               if n.op == "call_function"), reasons
    c = compile_graph(gm, [x, s])
    assert not c.nvfuser_unsupported and len(c.nvfuser_regions) == 1
    assert cpu_inputs(getattr(c, c.nvfuser_regions[0])) == 2


def test_a_cpu_scalar_read_by_eager_is_computed_in_eager():
    # A region on the GPU would make s * 2 a GPU tensor; the graph's
    # output expects it on the CPU.
    x, s = torch.randn(3, 4, device="meta"), torch.tensor(2.0)
    gm, reasons = _support_on_meta(lambda x, s: (x * (s * 2), s * 2), [x, s])
    why = {n.name: r for n, r in reasons.items() if n.op == "call_function"}
    # (make_fx computes s * 2 twice: mul for x, mul_2 for the output.)
    assert why == {"mul": None, "mul_1": None, "mul_2": "a CPU scalar read "
                   "by output, which runs in eager"}


# ---- 2. translations --------------------------------------------------------

def _logits(dtype=torch.float32):
    x = torch.randn(6, 10).to(dtype)
    x[1, 3] = -math.inf
    return x


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_softmax_and_log_softmax_with_backward(dtype):
    x, g = _logits(dtype), torch.randn(6, 10).to(dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else \
        dict(rtol=2e-2, atol=2e-2)

    def f(x, g):
        y = aten._softmax(x, -1, False)
        z = aten._log_softmax(x, 1, False)
        return (y, z, aten._softmax_backward_data(g, y, -1, dtype),
                aten._log_softmax_backward_data(g, z, 1, dtype))
    check(f, [x, g], **tol)


def _targets(n, classes, ignored=(), ignore_index=-100):
    t = torch.randint(0, classes, (n,))
    for i in ignored:
        t[i] = ignore_index
    return t


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("ignored,ignore_index",
                         [((), -100), ((1, 4), -100), ((0, 1, 2, 3, 4, 5),
                                                       -100), ((2,), 3)])
def test_nll_loss_forward_and_backward(reduction, ignored, ignore_index):
    x = torch.randn(6, 10).log_softmax(1)
    t = _targets(6, 10, ignored, ignore_index)
    g = torch.randn(6) if reduction == 0 else torch.tensor(1.5)

    def f(x, t, g):
        loss, total = aten.nll_loss_forward(x, t, None, reduction,
                                            ignore_index)
        grad = aten.nll_loss_backward(g, x, t, None, reduction, ignore_index,
                                      total)
        return loss, total, grad
    check(f, [x, t, g])


def test_nll_loss_of_one_item():
    x = torch.randn(10).log_softmax(0)
    for target in (torch.tensor(4), torch.tensor(-100)):
        check(lambda x, t: aten.nll_loss_forward(x, t, None, 1, -100),
              [x, target])


def test_nll_loss_target_out_of_range_is_nan_not_a_number():
    # Eager raises for a class index out of range; a kernel cannot, so the
    # loss is nan rather than a plausible value.
    x = torch.randn(4, 10).log_softmax(1)
    good = torch.tensor([1, 2, 3, 4])
    gm, c = compiled_make_fx(
        lambda x, t: aten.nll_loss_forward(x, t, None, 1, -100), [x, good])
    assert not c.nvfuser_unsupported
    loss, _ = c(x, torch.tensor([1, 2, 10, 4]))
    assert torch.isnan(loss)


def test_cross_entropy_through_aot_is_one_region_each_way():
    from functorch.compile import aot_function, make_boxed_func
    seen = []

    def comp(gm, ins):
        c = compile_graph(gm, ins)
        seen.append(c)
        return make_boxed_func(c)
    x = torch.randn(6, 10, requires_grad=True)
    t = _targets(6, 10, (2,))

    def loss(x, t):
        return torch.nn.functional.cross_entropy(x * 2, t)
    got = aot_function(loss, fw_compiler=comp, bw_compiler=comp)(x, t)
    grad, = torch.autograd.grad(got, [x])
    want = loss(x, t)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(grad, torch.autograd.grad(want, [x])[0])
    for c in seen:
        assert not c.nvfuser_unsupported, c.nvfuser_unsupported
        assert len(c.nvfuser_regions) == 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_activation_backwards(dtype):
    x, g = torch.randn(5, 7).to(dtype), torch.randn(5, 7).to(dtype)
    x[0, 0] = 0.0
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else \
        dict(rtol=2e-2, atol=2e-2)

    def f(x, g):  # (make_fx would decompose some of them)
        return (aten.silu_backward.default(g, x),
                aten.gelu_backward.default(g, x),
                aten.gelu_backward.default(g, x, approximate="tanh"),
                aten.sigmoid_backward.default(g, torch.sigmoid(x)),
                aten.tanh_backward.default(g, torch.tanh(x)),
                aten.threshold_backward.default(g, x, 0),
                aten.threshold_backward.default(g, x, 0.5))
    check(f, [x, g], trace="symbolic", **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gelu_both_approximations_are_fused(dtype):
    # Gemma2's MLP (gelu_pytorch_tanh) ran its gelu in eager between two
    # regions per layer (H200 model bench, session 8: "gelu x6").
    x = torch.randn(6, 9).to(dtype)
    x[0, :3] = torch.tensor([0.0, -30.0, 30.0])
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else \
        dict(rtol=1e-2, atol=1e-2)

    def f(x):
        return (aten.gelu.default(x), aten.gelu.default(x, approximate="tanh"))
    check(f, [x], trace="symbolic", **tol)


def test_var_mean_and_layer_norm_tuples_are_read_by_getitem():
    x, w, b = torch.randn(4, 6, 8), torch.randn(8), torch.randn(8)

    def f(x, w, b):
        var, mean = aten.var_mean.correction(x, [1], correction=1,
                                             keepdim=True)
        out, mu, rstd = aten.native_layer_norm(x, [8], w, b, 1e-5)
        plain = aten.native_layer_norm(x, [6, 8], None, None, 1e-5)[0]
        return (x - mean) / var, out, mu, rstd, plain
    check(f, [x, w, b])


def test_layer_norm_backward_matches_aten():
    # Every output_mask, with and without weight and bias, one and two
    # normalized dims; the gradients are read by getitem.
    x, dy = torch.randn(4, 6, 8), torch.randn(4, 6, 8)
    w, b = torch.randn(8), torch.randn(8)
    mean = x.mean(2, keepdim=True)
    rstd = torch.rsqrt(x.var(2, unbiased=False, keepdim=True) + 1e-5)
    mean2 = x.mean((1, 2), keepdim=True)
    rstd2 = torch.rsqrt(x.var((1, 2), unbiased=False, keepdim=True) + 1e-5)

    def f(dy, x, w, b, mean, rstd, mean2, rstd2):
        bwd = aten.native_layer_norm_backward.default
        gi, gw, gb = bwd(dy, x, [8], mean, rstd, w, b, [True, True, True])
        only_w = bwd(dy, x, [8], mean, rstd, w, b, [False, True, False])[1]
        plain = bwd(dy, x, [6, 8], mean2, rstd2, None, None,
                    [True, False, False])[0]
        return gi, gw, gb, only_w, plain
    check(f, [dy, x, w, b, mean, rstd, mean2, rstd2], rtol=1e-4, atol=1e-4)


def test_masks_and_factories():
    x = torch.randn(3, 5, 5)
    mask = torch.rand(5, 5) > 0.5

    def f(x, mask):
        a = aten.masked_fill.Scalar(x, mask, -math.inf)
        b = aten.masked_fill.Scalar(x, mask, 0)
        c = aten.masked_fill.Tensor(x, mask, torch.tensor(2.0))
        d = aten.tril(x, -1) + aten.triu(x, 2) + aten.tril(x)
        e = aten.fill.Scalar(x, 1) + aten.fill.Tensor(x, x[0, 0, 0])
        n = (aten.new_ones(x, [5]) + aten.new_zeros(x, [5]) +
             aten.new_full(x, [5], 3.0) + aten.full_like(x, 2.0) +
             aten.zeros_like(x) + aten.ones_like(x))
        m = aten.tril(aten.ones([5, 5], dtype=torch.bool))
        return a, b, c, d, e, n, m
    check(f, [x, mask])


def test_empty_likes_are_zeros_where_their_values_are_unread():
    # An empty tensor may hold anything; what reads it here is fill.
    x = torch.randn(3, 4).t()

    def f(x):
        e = aten.empty_like(x, memory_format=torch.preserve_format)
        return aten.fill.Scalar(e, 1) - torch.sigmoid(x), aten.new_empty(
            x, [2])
    gm, c = compiled_make_fx(f, [x])
    assert not c.nvfuser_unsupported, c.nvfuser_unsupported
    got, want = c(x), f(x)
    torch.testing.assert_close(got[0], want[0])
    assert got[0].stride() == want[0].stride() == (1, 4)
    assert got[1].shape == (2,)


def test_cat_skips_empty_1d_operands_as_torch_does():
    # transformers' DynamicCache: torch.cat([empty 1-D, k], dim=-2).
    empty, k = torch.empty(0), torch.randn(2, 4, 8, 16)
    check(lambda e, k: torch.cat([e, k * 2], dim=-2) + 1, [empty, k])
    check(lambda e, k: torch.cat([e, k, e, k], dim=-2).sin(), [empty, k])


def test_an_untranslated_aten_tuple_runs_as_an_aten_call_in_the_region():
    # aten.sort has no translation: it is called as it is, inside the
    # region, and its getitem reads the kept result.
    x = torch.randn(4, 6)
    gm, c = compiled_make_fx(lambda x: torch.sort(x.sin(), 1)[0] * 2, [x])
    assert not c.nvfuser_unsupported
    assert len(c.nvfuser_regions) == 1
    assert "sort" in ops_in_regions(c)
    torch.testing.assert_close(c(x), torch.sort(x.sin(), 1)[0] * 2)


# ---- 3. layout contract -----------------------------------------------------

def _bthd():
    """[b, h, t, d] whose memory is [b, t, h, d]: how an attention kernel
    (cuDNN's) returns its output."""
    return torch.randn(2, 8, 4, 16).transpose(1, 2)


@pytest.mark.parametrize("kernels", ["aten", "row_major"])
def test_mistral_transposed_output_keeps_eager_strides(kernels, monkeypatch):
    # Eager: sin keeps its input's [b, t, h, d] memory, so the transpose
    # back is contiguous and .view(b, t, -1) works. A kernel writing sin
    # row-major made it a non-contiguous view, and the view raised.
    if kernels == "row_major":
        row_major_kernels(monkeypatch)

    def f(a):
        y = torch.sin(a)
        return y.transpose(1, 2), y * 2
    a = _bthd()
    gm, c = compiled_make_fx(f, [a])
    assert not c.nvfuser_unsupported
    region = getattr(c, c.nvfuser_regions[0])
    t, y2 = c(a)
    want_t, want_y2 = f(a)
    assert t.stride() == want_t.stride() and y2.stride() == want_y2.stride()
    torch.testing.assert_close(t.view(2, 8, -1), want_t.view(2, 8, -1))
    torch.testing.assert_close(y2, want_y2)
    if kernels == "row_major":
        # Both outputs were written in their promised order: no copies.
        assert region.layout_copies == 0
    bad, _ = region_layout_mismatches(gm, c, [a])
    assert not bad, bad


def test_an_output_also_used_in_the_region_is_written_in_its_layout():
    # Llama's q after RoPE: eager keeps its input's [b, t, h, d] memory,
    # attention (here a matmul) reads it in the region, and the backward
    # saves it. The kernel wrote it row-major for the matmul and the
    # segmenter returned the promised transpose as a view of that, so the
    # layout check copied it on every call (two ATen transposing copies,
    # 26 us each, in a Llama forward on the H200). Now the kernel writes
    # the promised layout and the matmul reads it through a view.
    a, w = _bthd(), torch.randn(16, 16)

    def f(a, w):
        y = torch.sin(a) * 2
        return y, y @ w
    gm, c = compiled_make_fx(f, [a, w])
    assert not c.nvfuser_unsupported and len(c.nvfuser_regions) == 1
    region = getattr(c, c.nvfuser_regions[0])
    (plan,) = region.layouts[:1]
    assert plan.order == [0, 2, 1, 3]
    got, want = c(a, w), f(a, w)
    assert not transposed_outputs_left_as_views(region)
    for g, wt in zip(got, want):
        torch.testing.assert_close(g, wt)
        assert g.stride() == wt.stride()
    assert region.layout_copies == 0


def test_only_outputs_the_region_reads_are_laid_out_early():
    # An output nothing in the region reads keeps the plain plan (its
    # permute as the fusion output, no extra copy op).
    from nvfuser.fx.partition import _early_layouts
    a, w = _bthd(), torch.randn(16, 16)
    for f, early in ((lambda a, w: (torch.sin(a) * 2,), 0),
                     (lambda a, w: (torch.sin(a) * 2, (torch.sin(a) * 2) @ w),
                      0),
                     (lambda a, w: (lambda y: (y, y @ w))(torch.sin(a) * 2),
                      1)):
        gm = make_fx(f)(a, w)
        values = {n.name: v for n, v in record_values(gm, [a, w]).items()}
        assert len(_early_layouts(list(gm.graph.nodes), values)) == early


@pytest.mark.parametrize("kernels", ["aten", "row_major"])
def test_expanded_and_sliced_outputs_keep_eager_strides(kernels,
                                                        monkeypatch):
    if kernels == "row_major":
        row_major_kernels(monkeypatch)
    x = torch.randn(4, 8)

    def f(x):
        wide = (x.sum(-1, keepdim=True) * 2).expand(4, 8)  # strides (1, 0)
        part = (x * 3)[:, 2:6]  # strides (8, 1): a gap after each row
        return wide, part
    gm, c = compiled_make_fx(f, [x])
    region = getattr(c, c.nvfuser_regions[0])
    got, want = c(x), f(x)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
        assert g.stride() == w.stride()
    if kernels == "row_major":
        assert region.layout_copies == 1  # the slice's gaps
    assert not region_layout_mismatches(gm, c, [x])[0]


@pytest.mark.parametrize("trace", ["make_fx", "symbolic"])
@pytest.mark.parametrize("kernels", ["aten", "row_major"])
def test_view_of_an_input_is_returned_as_a_view(trace, kernels, monkeypatch):
    # LitGPT's v: the fused qkv viewed, permuted, split and expanded. Eager
    # moves no element; the region used to write it densely in its kernel
    # and then copy it into the gapped strides the graph promises (an H200
    # spent 36 us of a 75 us phi-3.5 RoPE forward on that copy).
    if kernels == "row_major":
        row_major_kernels(monkeypatch)
    qkv = torch.randn(2, 6, 4 * 3 * 8)

    def f(qkv):
        x = qkv.view(2, 6, 4, 3, 8).permute(0, 2, 3, 1, 4)
        parts = x.split((1, 1, 1), dim=2)  # (symbolic_trace can't unpack)
        return parts[0] * 2, parts[1].sin(), parts[2].expand(2, 4, 2, 6, 8)
    gm, c = compiled_make_fx(f, [qkv], trace)
    assert not c.nvfuser_unsupported
    region = getattr(c, c.nvfuser_regions[0])
    got, want = c(qkv), f(qkv)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
        assert g.stride() == w.stride()
    v = got[2]
    assert v.untyped_storage().data_ptr() == qkv.untyped_storage().data_ptr() \
        if hasattr(v, "untyped_storage") else v.storage().data_ptr() == \
        qkv.storage().data_ptr()
    assert v.storage_offset() == want[2].storage_offset()
    assert [kind for kind, _ in region.outputs] == ["tensor", "tensor", "view"]
    assert len(region.fd.outputs()) == 2  # the kernel writes q and k only
    assert region.layout_copies == 0


def test_view_chains_stop_at_copies_and_computed_values():
    from nvfuser.fx.view_outputs import view_chain
    g = torch.fx.symbolic_trace(
        lambda x: (x.transpose(0, 1), x.reshape(-1), (x * 2).t(), x))
    outs = {n.name: n for n in g.graph.nodes}
    ret = list(g.graph.nodes)[-1].args[0]
    placeholder, chain = view_chain(ret[0])
    assert placeholder.op == "placeholder" and len(chain) == 1
    assert view_chain(ret[1]) is None  # reshape may copy
    assert view_chain(ret[2]) is None  # a view of a computed value
    assert view_chain(ret[3]) is None  # the input itself: nothing to replay
    assert outs


def test_output_layout_plans():
    def plan(t):
        return OutputLayout(t)
    assert plan(torch.empty(2, 3, 4)).order is None
    p = plan(torch.empty(2, 4, 3).transpose(1, 2))
    assert p.order == [0, 2, 1] and p.inverse == [0, 2, 1]
    p = plan(torch.empty(3, 1).expand(3, 5))
    assert p.expanded == [1] and p.order is None
    assert plan(torch.empty(4, 8)[:, :3]).order is None  # gaps: a copy
    with pytest.raises(Unsupported, match="overlap"):
        plan(torch.empty(10).as_strided((3, 3), (1, 1)))


def test_layout_repairs_are_dumped(monkeypatch, capsys):
    monkeypatch.setenv("NVFUSER_FX_DEBUG", "layout")
    row_major_kernels(monkeypatch)
    x = torch.randn(4, 8)
    gm, c = compiled_make_fx(lambda x: (x * 3)[:, 2:6], [x])
    c(x)
    # The repaired output is named by its graph node.
    out = capsys.readouterr().out
    assert re.search(r"\[fx_layout\] copy of a \[4, 4\] output slice\w* with "
                     r"strides \[4, 1\] into strides \[8, 1\]", out), out


# ---- dynamic shapes ---------------------------------------------------------

def test_symbolic_sizes_are_their_hints_and_regions_specialize():
    # make_fx(tracing_mode="symbolic") records fake tensors with symbolic
    # sizes and sym_size nodes, as dynamo does for a second sequence
    # length: the regions are translated for the hints, sym_size is shape
    # metadata, and other sizes get variants of their own.
    from nvfuser.fx.partition import concrete

    def f(x, w):
        y = torch.nn.functional.silu(x) * w
        return y.view(x.shape[0], -1, 4).transpose(1, 2).sum(-1)
    x, w = torch.randn(6, 8), torch.randn(8)
    gm = make_fx(f, tracing_mode="symbolic")(x, w)
    assert any("sym_size" in str(n.target) for n in gm.graph.nodes)
    val = [n.meta["val"] for n in gm.graph.nodes if n.name == "view"][0]
    assert tuple(concrete(val).shape) == (6, 2, 4)
    c = compile_graph(gm, [x, w])
    assert not c.nvfuser_unsupported, c.nvfuser_unsupported
    assert len(c.nvfuser_regions) == 1
    region = getattr(c, c.nvfuser_regions[0])
    for shape in [(6, 8), (10, 8), (6, 16), (10, 8)]:
        a, b = torch.randn(*shape), torch.randn(shape[1])
        got, want = c(a, b), f(a, b)
        torch.testing.assert_close(got, want)
        assert got.stride() == want.stride()
    assert len(region.variants) == 2 and region.fallbacks == 0
