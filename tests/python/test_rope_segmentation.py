"""RoPE fusions of real LLM layouts: segment counts under each forwarding
policy, numerics against eager PyTorch, and segmented == unsegmented."""

import os
import sys

import pytest
import torch

from nvfuser import FusionDefinition

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "benchmarks", "rope"))
import rope_fusions as rf  # noqa: E402

CFG = dict(B=2, T=16, H=4, G=2, D=16)
POLICIES = {
    "off": ["input_forwarding"],
    "unary": ["extended_input_forwarding"],
    "extended": [],
}
NO_HORIZONTAL = ["horizontal_fusion"]
# Expected schedulers per policy with horizontal fusion off (forwarding
# alone). hf_forward: cos/sin are unsqueezed once and shared by the q and k
# branches; only extended forwarding replicates the broadcast into both
# (no no_op groups left).
FORWARDING_ONLY = {
    "hf_forward": {
        "off": ["no_op", "no_op", "pointwise", "pointwise", "pointwise"],
        "unary": ["no_op", "no_op", "pointwise", "pointwise", "pointwise"],
        "extended": ["pointwise", "pointwise", "pointwise"],
    },
    "litgpt_forward": {
        p: ["no_op", "pointwise", "pointwise"] for p in POLICIES
    },
    # The GQA sums over the repeat axis and the qkv re-assembly (pads, cat)
    # form one reduction kernel: each thread loops over the repeat axis.
    "litgpt_backward": {p: ["reduction"] for p in POLICIES},
}
# With horizontal fusion (the default) every forward is one kernel under
# every policy: q, k and v (different loop domains) share a launch.
EXPECTED = {
    "hf_forward": {p: ["pointwise"] for p in POLICIES},
    "litgpt_forward": {p: ["pointwise"] for p in POLICIES},
    "litgpt_backward": {p: ["reduction"] for p in POLICIES},
}


def build(name, cfg=CFG):
    define = rf.VARIANTS[name][0]
    with FusionDefinition() as fd:
        define(fd, cfg)
    return fd


@pytest.mark.parametrize("name", sorted(rf.VARIANTS))
def test_segments_per_policy(name):
    fd = build(name)
    inputs = rf.VARIANTS[name][1](CFG)
    results = {}
    for policy, disable in POLICIES.items():
        for extra, expected in [([], EXPECTED), (NO_HORIZONTAL,
                                                 FORWARDING_ONLY)]:
            outs = fd.execute(inputs, _disable_options=disable + extra)
            seg = fd.last_segmentation()
            assert seg["policy"] == {"off": "off", "unary": "unary-only",
                                     "extended": "extended"}[policy]
            assert [g["scheduler"] for g in seg["groups"]] == \
                expected[name][policy], (policy, extra, seg["text"])
            results[policy + str(extra)] = outs
    # Forwarding never changes results: bitwise identical on the CPU, and
    # equal to the unsegmented evaluation.
    reference = fd.execute_unsegmented(inputs)
    for policy, outs in results.items():
        for o, r in zip(outs, reference):
            assert torch.equal(o, r), policy


def test_hf_forward_prologues_hold_the_shared_broadcasts():
    fd = build("hf_forward")
    fd.execute(rf.make_inputs_hf_forward(CFG), _disable_options=NO_HORIZONTAL)
    groups = fd.last_segmentation()["groups"]
    assert [g["prologue"] for g in groups] == [["broadcast", "broadcast"]] * 2 \
        + [[]]  # v: reshape, permute, repeat
    # Neither rotary branch reads a broadcast cos/sin from memory.
    for g in groups:
        assert set(g["inputs"]) <= {"T0", "T1", "T2", "T3", "T4"}, g


def test_horizontal_fusion_makes_hf_forward_one_kernel():
    fd = build("hf_forward")
    inputs = rf.make_inputs_hf_forward(CFG)
    fd.execute(inputs, _disable_options=NO_HORIZONTAL)
    assert len(fd.last_segmentation()["groups"]) == 3
    fd.execute(inputs)
    seg = fd.last_segmentation()
    assert len(seg["groups"]) == 1 and seg["groups"][0]["horizontal"]
    assert len(seg["groups"][0]["outputs"]) == 3  # q, repeated k, v
    # q (32 heads in the real model) and the repeated k share a loop
    # domain; the kernel covers them and v in one launch.
    code = fd.cuda_code_for(inputs)
    assert len(code) == 1


def test_extended_beats_unary_only_on_hf_forward():
    fd = build("hf_forward")
    inputs = rf.make_inputs_hf_forward(CFG)
    fd.execute(inputs, _disable_options=POLICIES["unary"] + NO_HORIZONTAL)
    unary = fd.last_segmentation()
    fd.execute(inputs, _disable_options=NO_HORIZONTAL)
    ext = fd.last_segmentation()
    assert len(ext["groups"]) < len(unary["groups"])
    assert ext["boundary_bytes"] <= unary["boundary_bytes"]


def test_segment_counts_monotone_in_policy():
    for name in rf.VARIANTS:
        fd = build(name)
        inputs = rf.VARIANTS[name][1](CFG)
        counts = []
        for disable in POLICIES.values():
            fd.execute(inputs, _disable_options=disable)
            counts.append(len(fd.last_segmentation()["groups"]))
        off, unary, ext = counts
        assert ext <= unary <= off, (name, counts)


@pytest.mark.parametrize("name", ["hf_forward", "litgpt_forward"])
def test_forward_matches_eager(name):
    cfg = dict(B=1, T=8, H=8, G=2, D=32)
    define, make, eager = rf.VARIANTS[name]
    fd = build(name, cfg)
    inputs = make(cfg)
    for o, r in zip(fd.execute(inputs), eager(cfg, *inputs)):
        assert torch.equal(o, r)


def test_backward_matches_autograd():
    cfg = dict(B=1, T=8, H=8, G=2, D=32)
    fd = build("litgpt_backward", cfg)
    inputs = rf.make_inputs_litgpt_backward(cfg)
    (out,) = fd.execute(inputs)
    (ref,) = rf.eager_litgpt_backward(cfg, *inputs)
    rel = (out.float() - ref).norm() / ref.norm()
    assert rel < 1e-2, rel.item()


def test_partial_rotary_litgpt():
    cfg = dict(B=1, T=8, H=4, G=4, D=20, R=8, return_v=True)
    fd = build("litgpt_forward", cfg)
    inputs = rf.make_inputs_litgpt_forward(cfg)
    outs = fd.execute(inputs)
    for o, r in zip(outs, rf.eager_litgpt_forward(cfg, *inputs)):
        assert torch.equal(o, r)
    assert len(outs) == 3
    for disable in POLICIES.values():
        for o, r in zip(fd.execute(inputs, _disable_options=disable), outs):
            assert torch.equal(o, r)


def test_gqa_without_repeat():
    cfg = dict(B=1, T=8, H=4, G=4, D=16)
    fd = build("litgpt_forward", cfg)
    inputs = rf.make_inputs_litgpt_forward(cfg)
    for o, r in zip(fd.execute(inputs),
                    rf.eager_litgpt_forward(cfg, *inputs)):
        assert torch.equal(o, r)
