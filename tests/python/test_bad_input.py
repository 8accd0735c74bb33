"""Bad input raises a Python exception that names the problem."""

import pytest
import torch

from nvfuser import DataType, FusionDefinition


def simple_add():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        b = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        fd.add_output(fd.ops.add(a, b))
    return fd


def test_wrong_number_of_inputs():
    fd = simple_add()
    with pytest.raises(ValueError, match="the fusion has 2 inputs but 1 were"):
        fd.execute([torch.randn(2, 3)])


def test_wrong_rank():
    fd = simple_add()
    with pytest.raises(ValueError,
                       match=r"input 1 \(T1\) was defined with rank 2 but the "
                             r"tensor has rank 3"):
        fd.execute([torch.randn(2, 3), torch.randn(2, 3, 1)])


def test_wrong_dtype():
    fd = simple_add()
    with pytest.raises(TypeError,
                       match=r"input 0 \(T0\) was defined with dtype Float but "
                             r"the tensor has dtype Half"):
        fd.execute([torch.randn(2, 3).half(), torch.randn(2, 3)])


def test_symbolic_size_disagrees_between_inputs():
    fd = simple_add()
    with pytest.raises(ValueError,
                       match=r"input 1 \(T1\) dim 1 has size 4 but input 0 "
                             r"\(T0\) dim 1 has size 3"):
        fd.execute([torch.randn(2, 3), torch.randn(2, 4)])


def test_noncontiguous_where_contiguity_declared():
    fd = simple_add()
    with pytest.raises(ValueError, match="is not contiguous as declared"):
        fd.execute([torch.randn(3, 2).t(), torch.randn(2, 3)])


def test_broadcast_dim_given_real_size():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[1, -1])
        fd.add_output(fd.ops.neg(a))
    with pytest.raises(ValueError, match="defined as a broadcast dim"):
        fd.execute([torch.randn(4, 3)])


def test_device_mismatch_is_reported():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU to have two devices")
    fd = simple_add()
    with pytest.raises(ValueError, match="all tensor inputs must be on one"):
        fd.execute([torch.randn(2, 3), torch.randn(2, 3, device="cuda")])


def test_execute_device_argument_mismatch():
    fd = simple_add()
    with pytest.raises(ValueError, match="but device=cuda:0 was given"):
        fd.execute([torch.randn(2, 3), torch.randn(2, 3)], device="cuda:0")


def test_none_and_wrong_kind_of_input():
    fd = simple_add()
    with pytest.raises(TypeError, match="input 1 is None"):
        fd.execute([torch.randn(2, 3), None])
    with pytest.raises(TypeError, match=r"is a tensor but a float was given"):
        fd.execute([torch.randn(2, 3), 1.0])
    with pytest.raises(TypeError, match="unsupported type str"):
        fd.execute([torch.randn(2, 3), "x"])
    with pytest.raises(TypeError, match="inputs must be a list"):
        fd.execute(torch.randn(2, 3))


def test_reshape_to_different_element_count():
    with pytest.raises(ValueError, match="with 12 elements to new_shape with "
                                         "10 elements"):
        with FusionDefinition() as fd:
            a = fd.define_tensor(shape=[3, 4])
            fd.ops.reshape(a, new_shape=[2, 5])


def test_reshape_symbolic_checked_at_execute():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, 4])
        fd.add_output(fd.ops.reshape(a, new_shape=[2, 6]))
    assert fd.execute([torch.randn(3, 4)])[0].shape == (2, 6)
    with pytest.raises(ValueError, match="with 20 elements to new_shape with "
                                         "12 elements"):
        fd.execute([torch.randn(5, 4)])


def test_slice_out_of_range():
    with pytest.raises(ValueError, match="end 9 at dim 1 is out of range"):
        with FusionDefinition() as fd:
            a = fd.define_tensor(shape=[4, 8])
            fd.ops.slice(a, [0, 0], [4, 9])


def test_cat_mismatched_shapes():
    with pytest.raises(ValueError, match="does not match tensor 0"):
        with FusionDefinition() as fd:
            a = fd.define_tensor(shape=[4, 8])
            b = fd.define_tensor(shape=[5, 8])
            fd.ops.cat([a, b], dim=1)


def test_broadcast_dims_that_do_not_fit():
    with pytest.raises(ValueError, match="broadcast_dims must be strictly "
                                         "increasing"):
        with FusionDefinition() as fd:
            a = fd.define_tensor(shape=[4, 8])
            fd.ops.broadcast_in_dim(a, shape=[4, 2, 8], broadcast_dims=[2, 0])
    with pytest.raises(ValueError, match="cannot be broadcast to 3"):
        with FusionDefinition() as fd:
            a = fd.define_tensor(shape=[4, 8])
            fd.ops.broadcast_in_dim(a, shape=[4, 3], broadcast_dims=[0, 1])


def test_tensor_from_another_definition():
    with FusionDefinition() as other:
        foreign = other.define_tensor(shape=[4])
    with pytest.raises(ValueError, match="T0 belongs to another "
                                         "FusionDefinition"):
        with FusionDefinition() as fd:
            fd.define_tensor(shape=[4])
            fd.ops.neg(foreign)


def test_defining_after_context_closed():
    fd = simple_add()
    with pytest.raises(RuntimeError, match="already finalized"):
        fd.define_tensor(shape=[4])
    with pytest.raises(RuntimeError, match="already finalized"):
        fd.ops.exp(fd.define_scalar)  # the check runs before the operand


def test_ops_after_context_closed_with_valid_operand():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[4])
        fd.add_output(fd.ops.neg(a))
    with pytest.raises(RuntimeError, match="already finalized"):
        fd.ops.exp(a)


def test_execute_inside_with_block():
    with pytest.raises(RuntimeError, match="leave it first"):
        with FusionDefinition() as fd:
            a = fd.define_tensor(shape=[4])
            fd.add_output(fd.ops.neg(a))
            fd.execute([torch.randn(4)])


def test_no_outputs():
    with FusionDefinition() as fd:
        fd.define_tensor(shape=[4])
    with pytest.raises(RuntimeError, match="has no outputs"):
        fd.execute([torch.randn(4)])


def test_complex_operand_of_an_op_torch_refuses():
    # Complex tensors are defined (test_complex.py); an op torch has no
    # complex kernel for is a TypeError naming it, at definition.
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[4], dtype=DataType.ComplexFloat)
        with pytest.raises(TypeError, match="relu: complex operands are not "
                           "supported"):
            fd.ops.relu(t)


def test_bad_arguments_types():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[4, 4])
        with pytest.raises(TypeError, match="dims must hold ints"):
            fd.ops.sum(a, dims=["x"])
        with pytest.raises(TypeError, match="shape must be a list of sizes"):
            fd.ops.expand(a, shape=5)
        with pytest.raises(TypeError, match="got a torch.Tensor"):
            fd.ops.add(a, torch.randn(4))
        with pytest.raises(TypeError, match=r"shape\[1\] must be an int"):
            fd.define_tensor(shape=[4, 2.5])
        with pytest.raises(TypeError, match="dtype must be a DataType"):
            fd.ops.cast(a, torch.float16)
        with pytest.raises(ValueError, match="dim 5 is out of range"):
            fd.ops.permute(a, dims=[0, 5])
        with pytest.raises(TypeError, match="add_output: .* is a scalar"):
            fd.add_output(fd.define_scalar(1.0))


def test_unknown_options():
    fd = simple_add()
    x = torch.randn(2, 3)
    with pytest.raises(ValueError, match="unknown option 'input_fowarding'"):
        fd.execute([x, x], _disable_options=["input_fowarding"])
    with pytest.raises(TypeError, match="must be a list of option names"):
        fd.execute([x, x], _disable_options="input_forwarding")


def test_unknown_option_in_environment(monkeypatch):
    fd = simple_add()
    x = torch.randn(2, 3)
    monkeypatch.setenv("NVFUSER_DUMP", "segmented_fusoin")
    with pytest.raises(ValueError, match="NVFUSER_DUMP: unknown option "
                                         "'segmented_fusoin'"):
        fd.execute([x, x])


def test_scalar_input_given_a_tensor():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1])
        s = fd.define_scalar(None, dtype=DataType.Double)
        fd.add_output(fd.ops.mul(a, s))
    with pytest.raises(TypeError, match=r"input 1 \(s0\) is a scalar"):
        fd.execute([torch.randn(3), torch.randn(3)])


def test_undefined_tensor_never_crashes():
    # An undefined tensor cannot come from Python; an empty one runs.
    fd = simple_add()
    out = fd.execute([torch.empty(0, 3), torch.empty(0, 3)])[0]
    assert out.shape == (0, 3)
