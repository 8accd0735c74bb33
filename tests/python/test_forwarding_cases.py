"""FORWARDING.md's cases through the Python API: segment structure per
policy, and segmented output bitwise equal to the unsegmented evaluation
under every policy."""

import torch

from nvfuser import DataType, FusionDefinition

# Horizontal fusion is off here, to look at forwarding alone; the last test
# turns it on.
POLICIES = {"off": ["input_forwarding", "horizontal_fusion"],
            "unary": ["extended_input_forwarding", "horizontal_fusion"],
            "extended": ["horizontal_fusion"]}


def run_policies(fd, inputs):
    """Executes under each policy; returns {policy: [(scheduler, ops,
    prologue), ...]} after checking outputs against the oracle."""
    reference = fd.execute_unsegmented(inputs)
    result = {}
    for name, disable in POLICIES.items():
        outs = fd.execute(inputs, _disable_options=disable)
        for o, r in zip(outs, reference):
            assert torch.equal(o, r), name
        seg = fd.last_segmentation()
        result[name] = [(g["scheduler"], g["ops"], g["prologue"])
                        for g in seg["groups"]]
        result[name + "_bytes"] = seg["boundary_bytes"]
        result[name + "_inputs"] = [g["inputs"] for g in seg["groups"]]
    return result


def rope_shaped_qk(B=2, H=8, Hk=2, T=16, D=32):
    """cos[T,D] unsqueezed and read by a q branch (H heads) and a k branch
    (Hk heads): the fusion and its inputs."""
    with FusionDefinition() as fd:
        q = fd.define_tensor(shape=[B, H, T, D], dtype=DataType.BFloat16)
        k = fd.define_tensor(shape=[B, Hk, T, D], dtype=DataType.BFloat16)
        cos = fd.define_tensor(shape=[T, D], dtype=DataType.BFloat16)
        cb = fd.ops.broadcast_in_dim(cos, [B, 1, T, D], [2, 3])
        fd.add_output(fd.ops.cast(fd.ops.mul(q, cb), DataType.BFloat16))
        fd.add_output(fd.ops.cast(fd.ops.mul(k, cb), DataType.BFloat16))
    return fd, [torch.randn(B, H, T, D).bfloat16(),
                torch.randn(B, Hk, T, D).bfloat16(),
                torch.randn(T, D).bfloat16()]


def test_two_cast_unary_chains_meet_at_binary_op():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], dtype=DataType.Half)
        b = fd.define_tensor(shape=[-1, -1], dtype=DataType.Half)
        ea = fd.ops.exp(fd.ops.cast(a, DataType.Float))
        sb = fd.ops.sin(fd.ops.cast(b, DataType.Float))
        fd.add_output(fd.ops.add(ea, sb))
    r = run_policies(fd, [torch.randn(4, 8).half(), torch.randn(4, 8).half()])
    assert r["extended"] == [("pointwise", ["add"],
                              ["cast", "exp", "cast", "sin"])]
    assert len(r["off"]) == 1


def test_chain_ending_in_output_not_forwarded():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], dtype=DataType.Half)
        c = fd.ops.cast(a, DataType.Float)
        fd.add_output(c)
        fd.add_output(fd.ops.exp(c))
    r = run_policies(fd, [torch.randn(6).half()])
    assert r["extended"] == [("pointwise", ["cast", "exp"], [])]


def test_forwarded_tensor_read_by_two_reductions():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], dtype=DataType.Half)
        e = fd.ops.exp(fd.ops.cast(a, DataType.Float))
        # A column max (a column sum would join the row kernel).
        fd.add_output(fd.ops.max(e, dims=[0]))
        fd.add_output(fd.ops.sum(e, dims=[1]))
    r = run_policies(fd, [torch.randn(4, 8).half()])
    assert sorted(r["extended"]) == [("reduction", ["max"], ["cast", "exp"]),
                                     ("reduction", ["sum"], ["cast", "exp"])]
    assert r["extended_bytes"] == 0
    assert r["off_bytes"] > 0


def test_rope_shape_expanded_tensor_never_read():
    fd, inputs = rope_shaped_qk()
    r = run_policies(fd, inputs)
    assert r["extended"] == [("pointwise", ["mul", "cast"],
                              ["broadcast", "expand"])] * 2
    # Each branch reads only true fusion inputs, never the expanded cos.
    assert [sorted(i) for i in r["extended_inputs"]] == [["T0", "T2"],
                                                         ["T1", "T2"]]
    assert ("no_op", ["broadcast", "expand"], []) in r["unary"]


def test_reshape_kinds():
    with FusionDefinition() as fd:
        m = fd.define_tensor(shape=[4, 2, 8])
        s = fd.define_tensor(shape=[8, 8])
        x = fd.define_tensor(shape=[4, 1, 8])
        merged = fd.ops.reshape(m, [8, 8])
        split = fd.ops.reshape(s, [4, 2, 8])
        ex = fd.ops.reshape(fd.ops.expand(x, [-1, 2, -1]), [8, 8])
        fd.add_output(fd.ops.add(merged, ex))
        fd.add_output(fd.ops.neg(split))
    fd.execute([torch.randn(4, 2, 8), torch.randn(8, 8),
                torch.randn(4, 1, 8)])
    chains = fd.last_segmentation()["forwarded_chains"]
    assert [(c["seed"], c["ops"]) for c in chains] == [
        ("T0", ["reshape"]), ("T2", ["expand"])]
    run_policies(fd, [torch.randn(4, 2, 8), torch.randn(8, 8),
                      torch.randn(4, 1, 8)])


def test_segment_set_boundary_not_crossed():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], dtype=DataType.Half)
        c = fd.ops.cast(a, DataType.Float)
        fd.add_output(fd.ops.exp(fd.ops.segment_set(c)))
    r = run_policies(fd, [torch.randn(5).half()])
    assert r["extended"] == [("pointwise", ["cast"], []),
                             ("pointwise", ["segment_set", "exp"], [])]


def test_factory_on_both_sides_of_a_boundary():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[4, 8])
        f = fd.ops.full(shape=[4, 8], fill_value=1.5, dtype=DataType.Float)
        fd.add_output(fd.ops.sum(fd.ops.mul(a, f), dims=[0]))
        fd.add_output(fd.ops.sum(fd.ops.add(a, f), dims=[1]))
    r = run_policies(fd, [torch.randn(4, 8)])
    for p in ("unary", "extended"):
        assert [g[2] for g in r[p]] == [["full"], ["full"]], p
        assert r[p + "_bytes"] == 0


def test_horizontal_fusion_joins_the_rope_branches():
    fd, inputs = rope_shaped_qk()
    outs = fd.execute(inputs)
    seg = fd.last_segmentation()
    assert [(g["scheduler"], g["ops"], g["prologue"], g["horizontal"])
            for g in seg["groups"]] == [
        ("pointwise", ["mul", "cast", "mul", "cast"],
         ["broadcast", "expand"], True)]
    assert "(pointwise, horizontal)" in seg["text"]
    for o, r in zip(outs, fd.execute_unsegmented(inputs)):
        assert torch.equal(o, r)
