"""API compatibility: definition styles, inspection, caching."""

import torch

from nvfuser import DataType, FusionCache, FusionDefinition


def test_subclass_definition_runs_on_first_execute():
    class MyFusion(FusionDefinition):
        def definition(self):
            t0 = self.define_tensor(shape=[-1], dtype=DataType.Float)
            self.add_output(self.ops.mul(t0, 2.0))

    fd = MyFusion()
    x = torch.randn(5)
    torch.testing.assert_close(fd.execute([x])[0], x * 2)


def test_print_and_fusion_ir():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, 1], dtype=DataType.BFloat16)
        t1 = fd.ops.expand(t0, shape=[-1, 8])
        fd.add_output(t1)
    # str(fd) is nvFuser's printed definition; the IR has its own name.
    text = fd.fusion_ir()
    assert "T0_g_bf16[iS{i0}, bS{1}]" in text
    assert "T1_g_bf16[iS{i0}, bS{1 ex 8}]" in text
    assert "= expand(T0, shape=[-1, 8])" in text
    assert "T1 = fd.ops.expand(T0, shape=[-1, 8])" in str(fd)


def test_concrete_ir_after_execute():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        fd.add_output(fd.ops.reshape(t0, new_shape=[-1]))
    fd.execute([torch.randn(3, 4)])
    assert "iS{12}" in fd.last_concrete_ir()


def test_cache_is_keyed_by_signature():
    # Earlier tests may have defined (and run) the same fusion: FusionCache
    # would hand this definition their executor cache.
    FusionCache.reset()
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(t0))
    fd.execute([torch.randn(4)])
    fd.execute([torch.randn(4)])
    assert fd._fusion.num_cached_signatures() == 1
    fd.execute([torch.randn(5)])
    assert fd._fusion.num_cached_signatures() == 2


def test_from_pytorch_layouts():
    x = torch.randn(4, 6).t()
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.add(t, t))
    torch.testing.assert_close(fd.execute([x])[0], x + x)


def test_define_vector_and_constant_scalars_as_shapes():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        two = fd.define_scalar(2, dtype=DataType.Int)
        v = fd.define_vector([two, -1])
        fd.add_output(fd.ops.reshape(t0, v))
    assert fd.execute([torch.randn(4, 3)])[0].shape == (2, 6)


def test_older_reshape_and_squeeze_signatures():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[2, 1, 3], dtype=DataType.Float)
        t1 = fd.ops.squeeze(t0, [2, 1, 3], [1])
        fd.add_output(fd.ops.reshape(t1, [2, 3], [6]))
    x = torch.randn(2, 1, 3)
    torch.testing.assert_close(fd.execute([x])[0], x.reshape(6))


def test_operator_overloads():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        b = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        fd.add_output(-(a * b) + 2.0 / (abs(a) + 1.0) - b ** 2.0)
    x, y = torch.randn(5), torch.randn(5)
    torch.testing.assert_close(fd.execute([x, y])[0],
                               -(x * y) + 2 / (x.abs() + 1) - y ** 2)


def test_integer_true_division():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], dtype=DataType.Int)
        fd.add_output(fd.ops.truediv(a, 2))
    x = torch.tensor([1, 2, 3])
    torch.testing.assert_close(fd.execute([x])[0], x / 2)


def test_fusion_output_is_an_input():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        fd.add_output(a)
        fd.add_output(fd.ops.neg(a))
    x = torch.randn(3)
    outs = fd.execute([x])
    torch.testing.assert_close(outs[0], x)
    torch.testing.assert_close(outs[1], -x)


def test_python_definition_round_trips():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, 4], dtype=DataType.Half)
        b = fd.ops.broadcast_in_dim(a, shape=[2, 3, 4], broadcast_dims=[1, 2])
        c = fd.ops.pad(fd.ops.slice(b, [0, 0, 1], [2, 3, 4]), [1, 0], 0.5)
        s = fd.ops.sum(fd.ops.cast(c, DataType.Float), dims=[0])
        fd.add_output(fd.ops.cat([s, s], dim=1))
    script = fd.python_definition()
    assert "fd.ops.pad(" in script and "fd.ops.cat([" in script
    scope = {}
    exec(script, scope)
    x = torch.randn(3, 4).half()
    torch.testing.assert_close(scope["fd"].execute([x])[0], fd.execute([x])[0])
