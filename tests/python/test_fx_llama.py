"""A Llama-style training step through the FX backend on the CPU (issue
15): the model of llama_like.py traced with aot_module, and the graphs
stored in fixtures/ (captured by fixtures/capture.py; a device's torch and
transformers can capture theirs the same way). Coverage, the ops that must
be inside regions, numerics against eager, and the layout contract."""

import glob
import os

import pytest
import torch

from fixtures.capture import load
from fx_check import (call_nodes, coverage, ops_in_regions,
                      region_layout_mismatches, views_only_atens_read)
from llama_like import LlamaLike, example_batch
from nvfuser.fx import compile_graph

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")

# Nothing stays in eager: the embedding's backward (a scatter-add, no core
# op) is ATen's, called inside the backward's region (an aten_call).
EAGER_OK = set()
MIN_COVERAGE = 1.0
MUST_FUSE = {
    "forward": {"embedding", "_softmax", "_log_softmax", "nll_loss_forward",
                "masked_fill", "tril", "silu", "rsqrt", "cat", "bmm", "mm"},
    "backward": {"_softmax_backward_data", "_log_softmax_backward_data",
                 "nll_loss_backward", "masked_fill", "fill", "empty_like",
                 "sigmoid", "slice_backward", "bmm", "mm"},
}


def _eager_ops(gm, compiled):
    by_name = {n.name: n for n in call_nodes(gm)}
    ops = set()
    for name in compiled.nvfuser_unsupported:
        packet = getattr(by_name[name].target, "overloadpacket", None)
        ops.add(packet.__name__ if packet is not None else name)
    return ops


def _check_graph(gm, inputs, kind):
    compiled = compile_graph(gm, inputs)
    assert _eager_ops(gm, compiled) <= EAGER_OK, compiled.nvfuser_unsupported
    assert coverage(gm, compiled) >= MIN_COVERAGE
    assert MUST_FUSE[kind] <= ops_in_regions(compiled)
    got, want = compiled(*inputs), gm(*inputs)
    for g, w in zip(got, want):
        if isinstance(w, torch.Tensor):
            # (Drawn inputs, not a model's: large values, long sums.)
            torch.testing.assert_close(g, w, rtol=1e-3, atol=1e-3)
            assert g.stride() == w.stride()
    bad, outputs = region_layout_mismatches(gm, compiled, inputs)
    assert not bad, bad
    assert outputs  # the check saw the regions' outputs
    for name in compiled.nvfuser_regions:
        assert getattr(compiled, name).fallbacks == 0
    # Weight transposes are made by their matmul's segment (the forward's
    # 9 and the backward's 20 were no_op segments of their own).
    assert not views_only_atens_read(compiled)
    return compiled


def _aot_step(model, batch):
    from functorch.compile import aot_module, make_boxed_func
    seen = []

    def comp(gm, inputs):
        compiled = compile_graph(gm, inputs)
        seen.append((gm, [x.detach().clone() if isinstance(x, torch.Tensor)
                          else x for x in inputs], compiled))
        return make_boxed_func(compiled)
    loss = aot_module(model, fw_compiler=comp, bw_compiler=comp)(*batch)
    loss.backward()
    return loss, seen


def test_llama_like_training_step_matches_eager():
    torch.manual_seed(0)
    model = LlamaLike(layers=2)
    batch = example_batch()
    loss, seen = _aot_step(model, batch)
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    want = model(*batch)
    want.backward()
    torch.testing.assert_close(loss, want, rtol=1e-5, atol=1e-5)
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g, p.grad, rtol=1e-4, atol=1e-5)
    assert len(seen) == 2
    for (gm, inputs, compiled), kind in zip(seen, ("forward", "backward")):
        assert _eager_ops(gm, compiled) <= EAGER_OK, \
            compiled.nvfuser_unsupported
        assert MUST_FUSE[kind] <= ops_in_regions(compiled)
        assert not region_layout_mismatches(gm, compiled, inputs)[0]


def test_fixtures_exist():
    names = sorted(os.path.basename(p) for p in glob.glob(
        os.path.join(FIXTURES, "llama_*.py")))
    assert names == ["llama_backward.py", "llama_forward.py"]


@pytest.mark.parametrize("kind", ["forward", "backward"])
def test_llama_fixture_graph(kind):
    gm, inputs, ns = load(os.path.join(FIXTURES, "llama_%s.py" % kind))
    assert len(call_nodes(gm)) > 100, ns["NOTE"]
    _check_graph(gm, inputs, kind)


def test_llama_like_bf16_training_step_is_close_to_eager():
    # Regions compute in float between their inputs and outputs, eager
    # rounds every intermediate to bf16: close, not equal.
    torch.manual_seed(0)
    model = LlamaLike().to(torch.bfloat16)
    batch = example_batch()
    loss, seen = _aot_step(model, batch)
    grads = [p.grad.float() for p in model.parameters()]
    model.zero_grad()
    want = model(*batch)
    want.backward()
    torch.testing.assert_close(loss, want, rtol=1e-2, atol=1e-2)
    for g, p in zip(grads, model.parameters()):
        scale = p.grad.float().abs().max().item() + 1e-6
        assert (g - p.grad.float()).abs().max().item() <= 5e-2 * scale
    for gm, inputs, compiled in seen:
        assert _eager_ops(gm, compiled) <= EAGER_OK
        assert not region_layout_mismatches(gm, compiled, inputs)[0]


def test_capture_of_fake_inputs():
    # torch.compile hands a backend fake tensors: capturing them wrote
    # empty fixture files on the GPU machine (no values to read). Their
    # shapes are kept and the values drawn when loaded.
    import tempfile
    from torch._subclasses.fake_tensor import FakeTensorMode
    from fixtures import capture
    gm = torch.fx.symbolic_trace(lambda x, i: x.sum() + i.sum())
    with FakeTensorMode():
        x = torch.empty(1000, 10)
        i = torch.empty(4, dtype=torch.int64)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.py")
        capture.write(path, gm, [x, i], "fake inputs")
        text = open(path).read()
        assert "'values_unknown': True" in text
        loaded, inputs, _ = capture.load(path)
    assert [tuple(t.shape) for t in inputs] == [(1000, 10), (4,)]
    assert inputs[1].dtype == torch.int64
