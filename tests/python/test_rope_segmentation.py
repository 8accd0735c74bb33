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
# Expected (segments, schedulers) per policy. hf_forward: cos/sin are
# unsqueezed once and shared by the q and k branches; only extended
# forwarding replicates the broadcast into both, and the two branches (same
# loop domain, same forwarded chain) then merge as siblings: q and k in one
# kernel, v in another.
EXPECTED = {
    "hf_forward": {
        "off": ["no_op", "no_op", "pointwise", "pointwise", "pointwise"],
        "unary": ["no_op", "no_op", "pointwise", "pointwise", "pointwise"],
        "extended": ["pointwise", "pointwise"],
    },
    "litgpt_forward": {
        p: ["no_op", "pointwise", "pointwise"] for p in POLICIES
    },
    "litgpt_backward": {
        p: ["reduction", "reduction", "pointwise"] for p in POLICIES
    },
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
        outs = fd.execute(inputs, _disable_options=disable)
        seg = fd.last_segmentation()
        assert seg["policy"] == {"off": "off", "unary": "unary-only",
                                 "extended": "extended"}[policy]
        assert [g["scheduler"] for g in seg["groups"]] == \
            EXPECTED[name][policy], (policy, seg["text"])
        results[policy] = outs
    # Forwarding never changes results: bitwise identical on the CPU, and
    # equal to the unsegmented evaluation.
    reference = fd.execute_unsegmented(inputs)
    for policy, outs in results.items():
        for o, r in zip(outs, reference):
            assert torch.equal(o, r), policy


def test_hf_forward_prologues_hold_the_shared_broadcasts():
    fd = build("hf_forward")
    fd.execute(rf.make_inputs_hf_forward(CFG))
    groups = fd.last_segmentation()["groups"]
    assert groups[0]["prologue"] == ["broadcast", "broadcast"]
    assert groups[1]["prologue"] == []  # v: reshape, permute, repeat
    assert len(groups[0]["outputs"]) == 2  # q and the repeated k
    # Neither rotary branch reads a broadcast cos/sin from memory.
    for g in groups:
        assert set(g["inputs"]) <= {"T0", "T1", "T2", "T3", "T4"}, g


def test_sibling_merge_is_horizontal_fusion():
    fd = build("hf_forward")
    inputs = rf.make_inputs_hf_forward(CFG)
    fd.execute(inputs, _disable_options=["horizontal_fusion"])
    assert len(fd.last_segmentation()["groups"]) == 3
    fd.execute(inputs)
    assert len(fd.last_segmentation()["groups"]) == 2


def test_extended_beats_unary_only_on_hf_forward():
    fd = build("hf_forward")
    inputs = rf.make_inputs_hf_forward(CFG)
    fd.execute(inputs, _disable_options=POLICIES["unary"])
    unary = fd.last_segmentation()
    fd.execute(inputs)
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
