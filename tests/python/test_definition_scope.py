"""Where ops may be defined: inside `with fd:` or definition() only, and an
exception there drops the half-built definition."""

import pytest
import torch

from nvfuser import DataType, FusionDefinition


def test_exception_in_with_block_discards_the_partial_definition():
    fd = FusionDefinition()
    with pytest.raises(KeyError):
        with fd:
            fd.define_tensor(shape=[-1])
            raise KeyError("user code failed half-way")
    with fd:  # a retry starts from an empty definition
        t = fd.define_tensor(shape=[-1])
        fd.add_output(fd.ops.neg(t))
    assert fd.fusion_ir().count("T0") == 2 and "T2" not in fd.fusion_ir()
    x = torch.randn(3)
    torch.testing.assert_close(fd.execute([x])[0], -x)


def test_failed_op_inside_with_block_discards_the_partial_definition():
    fd = FusionDefinition()
    with pytest.raises(ValueError, match="more than one -1"):
        with fd:
            t = fd.define_tensor(shape=[-1])
            fd.ops.reshape(t, [-1, -1])
    with fd:
        t = fd.define_tensor(shape=[-1])
        fd.add_output(fd.ops.exp(t))
    x = torch.randn(4)
    torch.testing.assert_close(fd.execute([x])[0], x.exp())


def test_values_of_a_discarded_definition_are_rejected():
    fd = FusionDefinition()
    with pytest.raises(RuntimeError):
        with fd:
            stale = fd.define_tensor(shape=[-1])
            raise RuntimeError("boom")
    with pytest.raises(ValueError, match="T0 belongs to a definition of "
                                         "this FusionDefinition that was "
                                         "discarded"):
        with fd:
            fd.add_output(fd.ops.neg(stale))


@pytest.mark.parametrize("call", [
    lambda fd: fd.define_tensor(shape=[-1]),
    lambda fd: fd.define_scalar(1.0),
    lambda fd: fd.define_vector([2, 3]),
    lambda fd: fd.ops.iota(4),
])
def test_ops_outside_a_with_block_raise(call):
    with pytest.raises(RuntimeError, match="can only be added inside `with "
                                           "FusionDefinition\\(\\) as fd:`"):
        call(FusionDefinition())


def test_ops_on_values_after_a_failed_block_raise():
    fd = FusionDefinition()
    with pytest.raises(ZeroDivisionError):
        with fd:
            t = fd.define_tensor(shape=[-1])
            1 / 0
    with pytest.raises(RuntimeError, match="neg: ops can only be added"):
        fd.ops.neg(t)


def test_with_blocks_cannot_be_nested():
    fd = FusionDefinition()
    with pytest.raises(RuntimeError, match="cannot be nested"):
        with fd:
            with fd:
                pass


def test_subclass_definition_that_raises_can_run_again():
    class Flaky(FusionDefinition):
        calls = 0

        def definition(self):
            Flaky.calls += 1
            t = self.define_tensor(shape=[-1], dtype=DataType.Float)
            if Flaky.calls == 1:
                raise RuntimeError("first definition fails")
            self.add_output(self.ops.mul(t, 2.0))

    fd = Flaky()
    x = torch.randn(3)
    with pytest.raises(RuntimeError, match="first definition fails"):
        fd.execute([x])
    torch.testing.assert_close(fd.execute([x])[0], x * 2)
    assert fd.fusion_ir().count("T0_g") == 1  # one input, not two
