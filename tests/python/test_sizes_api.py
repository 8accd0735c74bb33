"""nvFuser's fd.ops.tensor_sizes, fd.ops.at and fd.extents(), written as
nvFuser's users write them (its tests and Thunder's printed fusions), on
top of the runtime shapes of dynamic.py: values against torch for several
input shapes, printed definitions that re-execute, and errors."""

import pytest
import torch

from nvfuser import DataType, FusionDefinition
from printed import run_printed


def test_tensor_sizes_as_a_broadcast_shape():
    # nvFuser's test_tensor_sizes.
    def fusion_func(fd, inputs):
        t0 = fd.from_pytorch(inputs[0])
        t1 = fd.from_pytorch(inputs[1])
        t0_sizes = fd.ops.tensor_sizes(t0)
        t1_b = fd.ops.broadcast_in_dim(t1, t0_sizes, [2])
        fd.add_output(fd.ops.sub(t0, t1_b))

    inputs = [torch.randn(2, 3, 4), torch.randn(4)]
    with FusionDefinition() as fd:
        fusion_func(fd, inputs)
    for shape in ((2, 3, 4), (5, 1, 4), (2, 3, 4)):
        a, b = torch.randn(shape), torch.randn(shape[-1])
        (out,) = fd.execute([a, b])
        assert torch.equal(out, a - b.expand(shape))
    assert len(fd._concrete) == 2  # one concretization per shape
    text = repr(fd)
    assert "(S2, S3, S4,) = fd.ops.tensor_sizes(T0)" in text
    for printed in run_printed(fd, inputs):
        assert torch.equal(printed[0], inputs[0] - inputs[1])


def test_tensor_sizes_of_one_and_zero_dims():
    x, s = torch.randn(7), torch.tensor(2.5)
    with FusionDefinition() as fd:
        t0, t1 = fd.from_pytorch(x), fd.define_tensor(shape=[])
        (n,) = fd.ops.tensor_sizes(t0)
        assert fd.ops.tensor_sizes(t1) == []
        fd.add_output(fd.ops.mul(fd.ops.full([n], 1.0, DataType.Float), t1))
    (out,) = fd.execute([x, s])
    assert torch.equal(out, torch.full((7,), 2.5))
    assert "(S2,) = fd.ops.tensor_sizes(T0)" in repr(fd)
    assert "_ = fd.ops.tensor_sizes(T1)" in repr(fd)
    for printed in run_printed(fd, [x, s]):
        assert torch.equal(printed[0], out)


def test_at_of_a_runtime_shape_with_a_negative_index():
    # The pattern of Thunder's cross-entropy fusions.
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                              dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1], contiguity=[True],
                              dtype=DataType.Int)
        v = fd.ops.shape(t1)
        s = fd.ops.at(v, index=-1)
        t2 = fd.ops.broadcast_in_dim(t1, shape=[s, 1], broadcast_dims=[0])
        t3 = fd.ops.take_along_axis(t0, t2, dim=1)
        fd.add_output(fd.ops.reshape(t3, new_shape=[s]))
    with FusionDefinition() as fd:
        define(fd)
    for rows in (4, 9):
        x = torch.randn(rows, 6)
        i = torch.randint(0, 6, (rows,))
        (out,) = fd.execute([x, i])
        assert torch.equal(out, x.gather(1, i[:, None])[:, 0])
    assert "S3 = fd.ops.at(V2, index=-1)" in repr(fd)
    for printed in run_printed(fd, [x, i]):
        assert torch.equal(printed[0], out)


def test_at_of_vector_inputs_and_constant_vectors():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        v = fd.define_vector(3)
        rows = fd.ops.at(v, 0)
        fd.add_output(fd.ops.reshape(t0, [rows, fd.ops.at(v, index=-2)]))
        with pytest.raises(IndexError, match="at: index 3 is out of range "
                           "for a vector of 3 sizes"):
            fd.ops.at(v, 3)
    (out,) = fd.execute([torch.arange(6.0), [2, 3, 99]])
    assert torch.equal(out, torch.arange(6.0).reshape(2, 3))

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        c = fd.define_vector([2, fd.define_scalar(3)])
        a, b = fd.ops.at(c, 0), fd.ops.at(c, -1)
        assert a._val.is_const and (a._val.value, b._val.value) == (2, 3)
        fd.add_output(fd.ops.reshape(t0, [a, b]))
    (out,) = fd.execute([torch.arange(6.0)])
    assert out.shape == (2, 3) and fd._concrete == {}  # stays static


def test_at_errors():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        with pytest.raises(TypeError, match="at: expected a Vector"):
            fd.ops.at(t0, 0)
        with pytest.raises(TypeError, match="at: index must be an int"):
            fd.ops.at(fd.ops.shape(t0), 0.5)
        bad = fd.ops.at(fd.ops.shape(t0), 2)  # the rank is known at execute
        fd.add_output(fd.ops.reshape(t0, [bad, -1]))
    with pytest.raises(IndexError, match="at: index 2 is out of range for "
                       "a vector of 2 sizes"):
        fd.execute([torch.randn(2, 3)])


def test_extents_are_the_input_sizes_in_input_order():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        s = fd.define_scalar(None, dtype=DataType.Double)  # not a tensor
        t1 = fd.define_tensor(shape=[-1], contiguity=[True])
        e = fd.extents()
        assert len(e) == 3 and fd.extents() == e  # the same scalars
        assert all(x.dtype == DataType.Int for x in e)
        t2 = fd.ops.reshape(t0, [e[1], e[0]])
        t3 = fd.ops.broadcast_in_dim(t1, [e[2], e[0]], [0])
        fd.add_output(fd.ops.mul(t2, s))
        fd.add_output(t3)
    a, b = torch.randn(3, 5), torch.randn(5)
    out, bcast = fd.execute([a, 2.0, b])
    assert torch.equal(out, a.reshape(5, 3) * 2.0)
    assert torch.equal(bcast, b[:, None].expand(5, 3))
    assert fd.extents() == e  # after the definition too
    text = repr(fd)
    assert "S3 = fd.ops.size(T0, dim=0)" in text
    for printed in run_printed(fd, [a, 2.0, b]):
        assert torch.equal(printed[0], out)


def test_unused_extents_keep_a_definition_static():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, 4], contiguity=[True, True])
        assert len(fd.extents()) == 2
        fd.add_output(fd.ops.exp(t0))
    x = torch.randn(3, 4)
    (out,) = fd.execute([x])
    assert torch.equal(out, x.exp())
    assert fd._concrete == {} and "size" not in repr(fd)


def test_printed_dynamic_definitions_spell_special_numbers():
    # A dynamic definition prints its record: inf, nan and complex numbers
    # as Python reads them back.
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True],
                              dtype=DataType.ComplexFloat)
        (n,) = fd.ops.tensor_sizes(t0)
        t1 = fd.ops.reshape(t0, [n])
        t2 = fd.ops.add(t1, complex(0.1, float("nan")))
        fd.add_output(fd.ops.real(t2))
        fd.add_output(fd.ops.mul(fd.ops.real(t1), float("-inf")))
    x = torch.tensor([1 + 1j, -2 - 2j, 3 - 1j], dtype=torch.complex64)
    real, inf = fd.execute([x])
    want = (x + complex(0.1, float("nan"))).real  # NaN: 1 * nan in torch
    assert torch.equal(real.isnan(), want.isnan())
    assert torch.equal(inf, x.real * float("-inf"))
    text = repr(fd)
    assert "complex(0.1, float('nan'))" in text and "float('-inf')" in text
    for printed in run_printed(fd, [x]):
        assert torch.equal(printed[0].isnan(), real.isnan())
        assert torch.equal(printed[1], inf)
