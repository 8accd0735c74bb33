"""Fusions of 100k ops through the Python API: defining, printing,
executing and describing the segmentation recurse nowhere once per op (a
~4,500-op chain crashed the generator) and stay near-linear (the DOT dump
scanned every group per edge: 110 s for last_segmentation())."""

import pytest
import torch

from nvfuser import DataType, FusionDefinition

CHAIN_OPS = 100_000


@pytest.mark.no_nvrtc
def test_hundred_thousand_op_chain_runs_and_describes():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                             dtype=DataType.Float)
        v = x
        for i in range(CHAIN_OPS):
            v = fd.ops.neg(v) if i % 2 == 0 else fd.ops.add(v, x)
        fd.add_output(v)
    assert len(repr(fd)) > CHAIN_OPS
    inp = torch.randn(4, 8)
    out, = fd.execute([inp])
    # neg, +x pairs: v -> -v + x, so after k pairs v alternates x, 0, x ...
    expected = inp.clone()
    for i in range(CHAIN_OPS):
        expected = -expected if i % 2 == 0 else expected + inp
    torch.testing.assert_close(out, expected)
    seg = fd.last_segmentation()
    assert len(seg["groups"]) == 1
    assert seg["dot"].count("->") >= CHAIN_OPS


@pytest.mark.no_nvrtc
def test_deep_chain_of_pads_is_split_into_kernels_of_bounded_nesting():
    # Each non-zero pad nests a branch in the kernel (and once nested the
    # generator's walk a level per pad: 10k of them overflowed its stack).
    pads = 2000
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True],
                             dtype=DataType.Float)
        v = x
        for _ in range(pads):
            v = fd.ops.pad(fd.ops.neg(v), [1, 0])
        fd.add_output(v)
    inp = torch.randn(8)
    out, = fd.execute([inp])
    expected = inp
    for _ in range(pads):
        expected = torch.nn.functional.pad(-expected, [1, 0])
    assert torch.equal(out, expected)
    groups = fd.last_segmentation()["groups"]
    assert len(groups) >= pads // 32
    assert all(g["ops"].count("pad") <= 32 for g in groups)


@pytest.mark.no_nvrtc
def test_chain_of_zero_width_pads_is_a_chain_of_copies():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                             dtype=DataType.Float)
        v = x
        for _ in range(10_000):
            v = fd.ops.neg(fd.ops.pad(v, [0, 0, 0, 0]))
        fd.add_output(v)
    inp = torch.randn(4, 8)
    out, = fd.execute([inp])
    torch.testing.assert_close(out, inp)
    assert len(fd.last_segmentation()["groups"]) == 1
