"""The decompositions the torch.compile backend hands aot_autograd
(nvfuser/fx/decompositions.py): a cross-entropy step through aot_function
with them, compiled by our regions, against eager; and what the min-cut
partition then saves for the backward (issue 15: a Llama step saved a float
copy of the logits)."""

import pytest
import torch
import torch.nn.functional as F

from fx_check import call_nodes
from nvfuser.fx.backend import _boxed
from nvfuser.fx.decompositions import aot_decompositions

_compile = pytest.importorskip("functorch.compile")
aot_function, make_boxed_func = _compile.aot_function, _compile.make_boxed_func


def _graphs_of_step(fn, inputs, partition=None, compiler=_boxed):
    """(forward gm, backward gm, result, grads) of fn(*inputs).backward()
    through aot_function with our decompositions."""
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return compiler(gm, example_inputs)
    kwargs = {} if partition is None else {"partition_fn": partition}
    compiled = aot_function(fn, fw_compiler=keep, bw_compiler=keep,
                            decompositions=aot_decompositions(), **kwargs)
    out = compiled(*inputs)
    out.backward()
    return graphs[0], graphs[1], out


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_step_matches_eager(reduction):
    torch.manual_seed(0)
    logits = torch.randn(48, 300, dtype=torch.bfloat16)
    target = torch.randint(0, 300, (48,))
    target[[3, 17]] = -100  # ignored rows: zero gradient, not in the mean

    def step(x, t):
        loss = F.cross_entropy(x.float(), t, reduction=reduction)
        return loss.sum() if reduction == "none" else loss
    ours = logits.clone().requires_grad_()
    fw, bw, loss = _graphs_of_step(step, [ours, target])
    ref = logits.clone().requires_grad_()
    want = step(ref, target)
    want.backward()
    torch.testing.assert_close(loss, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ours.grad, ref.grad, rtol=0, atol=1e-2)
    assert ours.grad[3].abs().max() == 0 and ours.grad[17].abs().max() == 0
    # Decomposed: the backward has neither opaque op left.
    names = {n.target.overloadpacket.__name__ for n in call_nodes(bw)
             if hasattr(n.target, "overloadpacket")}
    assert not names & {"nll_loss_backward", "_log_softmax_backward_data"}
    assert "_log_softmax" not in {
        n.target.overloadpacket.__name__ for n in call_nodes(fw)
        if hasattr(n.target, "overloadpacket")}


def test_weighted_nll_loss_backward_keeps_the_aten_op():
    # Class weights: our replacement declines (NotImplemented) and the
    # ATen op is traced as before, with eager's values.
    torch.manual_seed(1)
    logits = torch.randn(16, 40)
    target = torch.randint(0, 40, (16,))
    w = torch.rand(40)

    def step(x, t, w):
        return F.cross_entropy(x, t, weight=w)
    ours = logits.clone().requires_grad_()
    _, bw, loss = _graphs_of_step(step, [ours, target, w])
    ref = logits.clone().requires_grad_()
    step(ref, target, w).backward()
    torch.testing.assert_close(ours.grad, ref.grad)
    assert any(getattr(n.target, "overloadpacket", None) is
               torch.ops.aten.nll_loss_backward for n in call_nodes(bw))


def test_min_cut_saves_no_float_logits():
    pytest.importorskip("networkx")
    from nvfuser.fx.decompositions import min_cut_partition
    logits = torch.randn(64, 1000, dtype=torch.bfloat16, requires_grad=True)
    target = torch.randint(0, 1000, (64,))
    fw, _, _ = _graphs_of_step(
        lambda x, t: F.cross_entropy(x.float(), t), [logits, target],
        partition=min_cut_partition,
        compiler=lambda gm, _: make_boxed_func(gm))
    out = [n for n in fw.graph.nodes if n.op == "output"][0].args[0]
    saved = [(o.name, o.meta["val"].dtype) for o in out
             if hasattr(o, "meta") and "val" in o.meta and
             tuple(o.meta["val"].shape) == (64, 1000)]
    assert all(dtype == torch.bfloat16 for _, dtype in saved), saved


def _rope_with_cos_grad(q, cos, sin):
    """HF rotate-half RoPE in float on bf16 q, cos and sin taking
    gradients (the Qwen2.5 variant of benchmarks/rope)."""
    qf = q.float()
    half = qf.shape[-1] // 2
    rot = torch.cat([-qf[..., half:], qf[..., :half]], dim=-1)
    return (qf * cos.float() + rot * sin.float()).to(torch.bfloat16).sum()


def test_min_cut_recomputes_rotate_half_instead_of_saving_it(monkeypatch):
    pytest.importorskip("networkx")
    partitioners = pytest.importorskip("torch._functorch.partitioners")
    if not hasattr(partitioners, "get_default_op_list"):
        pytest.skip("torch %s's partitioner has no op list to extend"
                    % torch.__version__)
    from nvfuser.fx.decompositions import min_cut_partition
    q = torch.randn(1, 4, 16, 8, dtype=torch.bfloat16, requires_grad=True)
    cos = torch.randn(1, 1, 16, 8, dtype=torch.bfloat16, requires_grad=True)
    sin = torch.randn(1, 1, 16, 8, dtype=torch.bfloat16, requires_grad=True)
    fw, bw, _ = _graphs_of_step(
        _rope_with_cos_grad, [q, cos, sin], partition=min_cut_partition,
        compiler=lambda gm, _: make_boxed_func(gm))
    out = [n for n in fw.graph.nodes if n.op == "output"][0].args[0]
    saved = [(o.name, o.meta["val"].dtype) for o in out
             if hasattr(o, "meta") and "val" in o.meta and
             tuple(o.meta["val"].shape) == tuple(q.shape)]
    # Only q itself (bf16); torch's allowlist alone saves the float cat.
    assert all(dtype == torch.bfloat16 for _, dtype in saved), saved
    assert any(getattr(n.target, "overloadpacket", None) is torch.ops.aten.cat
               for n in call_nodes(bw))
    # NVFUSER_DISABLE=recompute_cat: torch's allowlist, the float cat saved.
    monkeypatch.setenv("NVFUSER_DISABLE", "recompute_cat")
    fw_off, _, _ = _graphs_of_step(
        _rope_with_cos_grad, [q, cos, sin], partition=min_cut_partition,
        compiler=lambda gm, _: make_boxed_func(gm))
    monkeypatch.delenv("NVFUSER_DISABLE")
    out_off = [n for n in fw_off.graph.nodes if n.op == "output"][0].args[0]
    assert any(o.meta["val"].dtype == torch.float32 for o in out_off
               if hasattr(o, "meta") and "val" in o.meta and
               tuple(o.meta["val"].shape) == tuple(q.shape))
    # The gradients are eager's.
    for t in (q, cos, sin):
        t.grad = None
    _graphs_of_step(_rope_with_cos_grad, [q, cos, sin],
                    partition=min_cut_partition,
                    compiler=lambda gm, _: make_boxed_func(gm))
    ref = [t.detach().clone().requires_grad_() for t in (q, cos, sin)]
    _rope_with_cos_grad(*ref).backward()
    for got, want in zip((q, cos, sin), ref):
        torch.testing.assert_close(got.grad, want.grad)


def test_op_list_gains_cat_and_pad_and_keeps_the_rest():
    # The extension itself, on any torch: a stand-in for torch's OpTypes.
    import dataclasses
    from nvfuser.fx.decompositions import _with_our_fusible_ops
    aten = torch.ops.aten

    @dataclasses.dataclass
    class OpTypes:
        fusible_ops: set
        compute_intensive_ops: set
        recomputable_ops: set

    def default():
        return OpTypes({aten.add}, {aten.mm}, {aten.add})
    types = _with_our_fusible_ops(default)()
    assert types.recomputable_ops == {aten.add, aten.cat,
                                      aten.constant_pad_nd}
    assert types.fusible_ops == types.recomputable_ops
    assert types.compute_intensive_ops == {aten.mm}
    assert default().recomputable_ops == {aten.add}  # not mutated
