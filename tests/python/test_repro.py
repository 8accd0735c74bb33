"""The original feature discussion's repro: a mul-sum matmul whose operand
goes through a slice (or a merge-only reshape) prologue."""

import torch

from nvfuser import DataType, FusionDefinition

M, N, K = 24, 16, 8


def test_mul_sum_with_slice_prologue():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[M + 1, K], dtype=DataType.Half)
        t1 = fd.define_tensor(shape=[K, N], dtype=DataType.Half)
        t2 = fd.ops.slice(t0, [1, 0], [M + 1, K], [1, 1])
        t3 = fd.ops.broadcast_in_dim(t2, [M, K, 1], [0, 1])
        t4 = fd.ops.broadcast_in_dim(t1, [1, K, N], [1, 2])
        t5 = fd.ops.mul(t3, t4)
        t6 = fd.ops.sum(t5, dims=[1])
        t7 = fd.ops.cast(t6, DataType.Half)
        fd.add_output(t7)
    a = torch.randn(M + 1, K).half()
    b = torch.randn(K, N).half()
    (out,) = fd.execute([a, b])
    ref = torch.matmul(a[1:].float(), b.float()).half()
    assert out.dtype == torch.float16 and out.shape == (M, N)
    torch.testing.assert_close(out, ref, rtol=1e-3, atol=1e-3)


def test_mul_sum_with_reshape_prologue():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[M // 2, 2, K], dtype=DataType.Half)
        t1 = fd.define_tensor(shape=[K, N], dtype=DataType.Half)
        t2 = fd.ops.reshape(t0, [M, K])
        t3 = fd.ops.broadcast_in_dim(t2, [M, K, 1], [0, 1])
        t4 = fd.ops.broadcast_in_dim(t1, [1, K, N], [1, 2])
        t5 = fd.ops.mul(t3, t4)
        t6 = fd.ops.sum(t5, dims=[1])
        fd.add_output(fd.ops.cast(t6, DataType.Half))
    a = torch.randn(M // 2, 2, K).half()
    b = torch.randn(K, N).half()
    (out,) = fd.execute([a, b])
    ref = torch.matmul(a.reshape(M, K).float(), b.float()).half()
    torch.testing.assert_close(out, ref, rtol=1e-3, atol=1e-3)
