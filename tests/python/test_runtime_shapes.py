"""Runtime shapes (issue 17): fd.ops.shape/size, define_vector(n) and
runtime scalars as sizes, concretized per value at execute."""

import pytest
import torch

from nvfuser import DataType, FusionDefinition
from printed import run_printed


def _same(out, ref):
    assert out.shape == ref.shape
    assert out.stride() == ref.contiguous().stride()
    torch.testing.assert_close(out, ref)


def _reshape_by_size_fusion():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        t1 = fd.define_tensor(shape=[-1], contiguity=[True])
        n = fd.ops.mul(fd.ops.size(t0, 0), fd.ops.size(t0, 1))
        t2 = fd.ops.add(fd.ops.reshape(t0, [n]), t1)
        fd.add_output(fd.ops.reshape(t2, fd.ops.shape(t0)))
    return fd


def test_size_and_shape_feed_reshape_with_two_runtime_values():
    fd = _reshape_by_size_fusion()
    for rows, cols in [(3, 4), (2, 5), (3, 4)]:
        a, b = torch.randn(rows, cols), torch.randn(rows * cols)
        out, = fd.execute([a, b])
        _same(out, (a.reshape(-1) + b).reshape(rows, cols))
    # Two shapes, two concretizations; the repeated one hit the cache.
    assert len(fd._concrete) == 2
    assert "new_shape=[10]" in fd.last_concrete_ir() or \
        "new_shape=[12]" in fd.last_concrete_ir()


def test_size_arithmetic_with_operators_and_in_broadcast_in_dim():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        rows, cols = fd.ops.size(t1, 0), fd.ops.size(t1, -1)
        t2 = fd.ops.broadcast_in_dim(t0, [rows * 1, cols + 0], [1])
        fd.add_output(fd.ops.add(t1, t2))
    for r, c in [(2, 3), (5, 7)]:
        a, b = torch.randn(c), torch.randn(r, c)
        out, = fd.execute([a, b])
        _same(out, b + a)


def test_expand_and_full_with_runtime_scalar_inputs():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[1, -1], contiguity=[None, True])
        s0 = fd.define_scalar(dtype=DataType.Int)
        t1 = fd.ops.expand(t0, [s0, fd.ops.size(t0, 1)])
        t2 = fd.ops.full([s0, fd.ops.size(t0, 1)], 2.0, DataType.Float)
        fd.add_output(fd.ops.mul(t1, t2))
    for rows in (3, 6):
        a = torch.randn(1, 4)
        out, = fd.execute([a, rows])
        _same(out, a.expand(rows, 4) * 2.0)
    assert len(fd._concrete) == 2
    fd.execute([a, 6])
    assert len(fd._concrete) == 2


def test_iota_with_a_runtime_length():
    with FusionDefinition() as fd:
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.iota(n, 2, 3, DataType.Int))
    for length in (4, 9):
        out, = fd.execute([length])
        assert torch.equal(out, torch.arange(2, 2 + 3 * length, 3))


def test_define_vector_input_reshapes_per_execute():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        v = fd.define_vector(2)
        t1 = fd.ops.reshape(t0, v)
        fd.add_output(fd.ops.exp(t1))
    a = torch.randn(12)
    for shape in ([3, 4], (6, 2), [3, 4]):
        out, = fd.execute([a, shape])
        _same(out, a.exp().reshape(shape))
    assert len(fd._concrete) == 2
    assert fd.inputs()[1] is v


def test_define_vector_of_runtime_scalars_and_size_times_tensor():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        s0 = fd.define_scalar(dtype=DataType.Int)
        s1 = fd.define_scalar(dtype=DataType.Int)
        t1 = fd.ops.view(t0, fd.define_vector([s0, s1]))
        t2 = fd.ops.mul(t1, fd.ops.size(t1, 0))
        fd.add_output(t2)
    a = torch.randn(4, 6)
    for r, c in [(8, 3), (2, 12)]:
        out, = fd.execute([a, r, c])
        _same(out, a.reshape(r, c) * r)


def test_slice_and_pad_with_runtime_scalars():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        start = fd.define_scalar(dtype=DataType.Int)
        width = fd.define_scalar(dtype=DataType.Int)
        t1 = fd.ops.slice(t0, [start, 0], [fd.ops.size(t0, 0), 3])
        fd.add_output(fd.ops.pad(t1, [width, width], 0.0))
    a = torch.randn(5, 4)
    for s, w in [(1, 2), (3, 0)]:
        out, = fd.execute([a, s, w])
        _same(out, torch.nn.functional.pad(a[s:, :3], [w, w]))


def test_execute_unsegmented_and_subclass_definitions():
    class Fd(FusionDefinition):
        def definition(self):
            t0 = self.define_tensor(shape=[-1, -1], contiguity=[True, True])
            self.add_output(self.ops.reshape(
                t0, [self.ops.size(t0, 1), self.ops.size(t0, 0)]))

    fd = Fd()
    a = torch.randn(2, 3)
    out, = fd.execute([a])
    _same(out, a.reshape(3, 2))
    out, = fd.execute_unsegmented([torch.ones(4, 1)])
    _same(out, torch.ones(1, 4))


def test_printed_definitions_reexecute():
    fd = _reshape_by_size_fusion()
    inputs = [torch.randn(3, 4), torch.randn(12)]
    ref, = fd.execute(inputs)
    text = repr(fd)
    assert "fd.ops.size(T0, 0)" in text and "fd.ops.shape(T0)" in text
    from_script, from_repr = run_printed(fd, inputs)
    torch.testing.assert_close(from_script[0], ref)
    torch.testing.assert_close(from_repr[0], ref)

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        v = fd.define_vector(2)
        s = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.add(fd.ops.reshape(t0, v), s))
    inputs = [torch.randn(6), [2, 3], 5]
    from_script, from_repr = run_printed(fd, inputs)
    torch.testing.assert_close(from_repr[0], inputs[0].reshape(2, 3) + 5)
    torch.testing.assert_close(from_script[0], from_repr[0])


def test_long_chains_after_a_runtime_size():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True])
        t = fd.ops.reshape(t, [fd.ops.size(t, 0)])
        for _ in range(2000):
            t = fd.ops.add(t, 1.0)
        fd.add_output(t)
    out, = fd.execute([torch.zeros(3)])
    assert torch.equal(out, torch.full((3,), 2000.0))


def test_static_definitions_are_not_concretized_again():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        fd.add_output(fd.ops.reshape(t0, [-1]))
    out, = fd.execute([torch.ones(2, 3)])
    assert out.shape == (6,) and fd._concrete == {}
    assert fd.segment([torch.ones(2, 3)]) == []


# ---- errors ----------------------------------------------------------------
def _vector_reshape():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(fd.ops.reshape(t0, fd.define_vector(2)))
    return fd


def test_negative_runtime_size_raises():
    fd = _vector_reshape()
    with pytest.raises(ValueError, match="runtime size is -3"):
        fd.execute([torch.randn(6), [-3, -2]])
    with FusionDefinition() as fd2:
        s = fd2.define_scalar(dtype=DataType.Int)
        fd2.add_output(fd2.ops.full([s], 1.0, DataType.Float))
    with pytest.raises(ValueError, match="full: a runtime size is -1"):
        fd2.execute([-1])
    # A failed value is not cached: the next execute works.
    out, = fd.execute([torch.arange(6.0), [2, 3]])
    _same(out, torch.arange(6.0).reshape(2, 3))


def test_size_product_not_matching_numel_raises():
    fd = _vector_reshape()
    with pytest.raises(ValueError, match="cannot reshape.*6 elements"):
        fd.execute([torch.randn(6), [5, 5]])


def test_vector_of_the_wrong_length_or_kind_raises():
    fd = _vector_reshape()
    with pytest.raises(ValueError, match="vector of 2 sizes but 3"):
        fd.execute([torch.randn(6), [1, 2, 3]])
    with pytest.raises(TypeError, match="list or tuple of ints, got int"):
        fd.execute([torch.randn(6), 6])
    with pytest.raises(ValueError, match="2 inputs but 1"):
        fd.execute([torch.randn(6)])


def test_non_integer_runtime_sizes_raise():
    fd = _vector_reshape()
    with pytest.raises(TypeError, match=r"input 1\[1\] must be an int"):
        fd.execute([torch.randn(6), [2, 3.0]])
    with pytest.raises(TypeError, match=r"input 1\[0\] must be an int"):
        fd.execute([torch.randn(6), [True, 6]])
    with FusionDefinition() as fd2:
        s = fd2.define_scalar(dtype=DataType.Int)
        fd2.add_output(fd2.ops.full([s], 1.0, DataType.Float))
    with pytest.raises(TypeError, match="input 0 .*must be an int"):
        fd2.execute([2.5])


def test_definition_time_errors():
    with pytest.raises(TypeError, match="runtime Double scalar"):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1], contiguity=[True])
            s = fd.define_scalar()
            fd.ops.reshape(t0, [s])
    with pytest.raises(IndexError, match="dim 2 is out of range"):
        with FusionDefinition() as fd:
            fd.ops.size(fd.define_tensor(shape=[-1, -1]), 2)
    with pytest.raises(TypeError, match="expected a Tensor"):
        with FusionDefinition() as fd:
            fd.ops.shape(3)
    with pytest.raises(TypeError, match="takes integers"):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1])
            fd.ops.mul(fd.ops.size(t0, 0), 2.5)
    with pytest.raises(ValueError, match="size must be >= 0"):
        with FusionDefinition() as fd:
            fd.define_vector(-1)
    with pytest.raises(RuntimeError, match="can only be added inside"):
        fd.ops.size(t0, 0)


def test_clone_and_introspection_of_runtime_shape_definitions():
    from nvfuser import clone

    fd = _vector_reshape()
    other = FusionDefinition()
    clone(fd, other)
    out, = other.execute([torch.arange(6.0), [3, 2]])
    _same(out, torch.arange(6.0).reshape(3, 2))
    assert "new_shape=[3, 2]" in other.last_concrete_ir()
    plan = fd.scheduled_fusion_ir_for([torch.arange(6.0), [2, 3]])
    assert "new_shape=[2, 3]" in plan
    with pytest.raises(NotImplementedError, match="runtime shapes"):
        fd.segment([torch.arange(6.0), [2, 3]])


def test_runtime_scalar_next_to_an_inferred_size():
    # nvFuser's test_reshape_dynamic: a scalar input and -1 in one vector.
    with FusionDefinition() as fd:
        s0 = fd.define_scalar(dtype=DataType.Int)
        t0 = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(fd.ops.reshape(t0, fd.define_vector([s0, -1])))
    a = torch.arange(12.0)
    for rows in (3, 4):
        out, = fd.execute([rows, a])
        _same(out, a.reshape(rows, -1))
    assert "V2 = fd.define_vector([S0, -1])" in repr(fd)
