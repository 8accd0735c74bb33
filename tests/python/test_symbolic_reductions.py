"""Reductions of inputs defined with symbolic (-1) sizes, keepdim and
broadcast-back included: the reduction splitter once asked concrete-shape
questions of the symbolic definition and raised an internal error on every
call (the bias-gradient pattern)."""

import pytest
import torch

from nvfuser import DataType, FusionDefinition


def _run(build, inputs):
    with FusionDefinition() as fd:
        build(fd)
    return fd.execute(inputs)


def _tensor(fd, rank, contiguity=None):
    return fd.define_tensor(shape=[-1] * rank,
                            contiguity=contiguity or [True] * rank,
                            dtype=DataType.Float)


@pytest.mark.parametrize("shape", [(4, 5), (3, 1), (1, 7), (600, 3)])
def test_keepdim_sum_over_rows(shape):
    def build(fd):
        fd.add_output(fd.ops.sum(_tensor(fd, 2), [0], keepdim=True))
    x = torch.randn(*shape)
    out, = _run(build, [x])
    assert out.shape == (1, shape[1])
    torch.testing.assert_close(out, x.sum(0, keepdim=True))


def test_subtract_broadcast_row_sum_of_a_column():
    def build(fd):
        t = _tensor(fd, 2)
        s = fd.ops.sum(t, [1])
        fd.add_output(fd.ops.sub(t, fd.ops.broadcast(s, [False, True])))
    x = torch.randn(3, 1)
    out, = _run(build, [x])
    torch.testing.assert_close(out, x - x.sum(1, keepdim=True))


@pytest.mark.parametrize("shape", [(4, 5, 6), (2, 512, 3)])
def test_keepdim_sum_over_a_middle_dim(shape):
    def build(fd):
        fd.add_output(fd.ops.sum(_tensor(fd, 3), [1], keepdim=True))
    x = torch.randn(*shape)
    out, = _run(build, [x])
    assert out.shape == (shape[0], 1, shape[2])
    torch.testing.assert_close(out, x.sum(1, keepdim=True))


def test_keepdim_sum_over_an_expanded_dim():
    def build(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[None, True],
                             dtype=DataType.Float)
        fd.add_output(fd.ops.sum(t, [0], keepdim=True))
    x = torch.randn(1, 5).expand(4, 5)
    out, = _run(build, [x])
    torch.testing.assert_close(out, x.sum(0, keepdim=True))


def test_sum_of_two_dims_then_reshape():
    def build(fd):
        t = fd.define_tensor(shape=[1, -1, -1], contiguity=[None, True, True],
                             dtype=DataType.Float)
        fd.add_output(fd.ops.reshape(fd.ops.sum(t, [1, 0]), [2, -1]))
    x = torch.randn(1, 6, 8)
    out, = _run(build, [x])
    torch.testing.assert_close(out, x.sum((1, 0)).reshape(2, -1))


def test_bias_gradient_in_the_split_path():
    # Enough rows for the reduction splitter to split the sum in two.
    def build(fd):
        dy = _tensor(fd, 2)
        g = fd.ops.sum(dy, [0], keepdim=True)
        fd.add_output(fd.ops.cast(g, DataType.Half))
    dy = torch.randn(4096, 8)
    out, = _run(build, [dy])
    torch.testing.assert_close(out, dy.sum(0, keepdim=True).half(),
                               rtol=1e-3, atol=1e-3)
