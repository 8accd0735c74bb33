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
