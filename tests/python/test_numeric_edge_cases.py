"""Results at the edges of the number types: variance with a correction of
at least the element count, integer pow with huge and negative exponents,
integer division of MIN by -1 and by zero. Every execute also compiles the
generated kernels with NVRTC (conftest.py); tests/cpp/runtime/
test_emulated_kernels.cpp checks the kernels' values on the CPU."""

import pytest
import torch

from nvfuser import DataType, FusionDefinition
from printed import run_printed

INT64_MIN = -2**63


def run(build, inputs):
    with FusionDefinition() as fd:
        build(fd)
    return fd.execute(inputs)


@pytest.mark.parametrize("correction", [3, 4, 100])
def test_variance_with_correction_at_least_the_count(correction):
    # torch divides by max(0, n - correction): inf, or NaN for a constant
    # row; never a negative variance.
    x = torch.tensor([[1.0, 2.0, 4.0], [5.0, 5.0, 5.0]])

    def build(fd):
        var, mean = fd.ops.var_mean(fd.from_pytorch(x), dims=[1],
                                    correction=correction)
        fd.add_output(var)
        fd.add_output(mean)

    var, mean = run(build, [x])
    want = torch.tensor([float("inf"), float("nan")])
    torch.testing.assert_close(var, want, equal_nan=True)
    torch.testing.assert_close(mean, x.mean(1))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_integer_pow_matches_torch(dtype):
    info = torch.iinfo(dtype)
    bases, exps = zip(*[(b, e) for b in (0, 1, -1, 2, -2, 3)
                        for e in (0, 1, 5, 62, -1, -2, -3, info.max,
                                  info.min)])
    a = torch.tensor(bases, dtype=dtype)
    b = torch.tensor(exps, dtype=dtype)
    (out,) = run(lambda fd: fd.add_output(
        fd.ops.pow(fd.from_pytorch(a), fd.from_pytorch(b))), [a, b])
    assert torch.equal(out, torch.pow(a, b))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_integer_division_of_min_by_minus_one_wraps(dtype):
    # torch itself dies of SIGFPE here on x86; the kernels wrap.
    lo = torch.iinfo(dtype).min
    a = torch.tensor([lo, lo, 7, -7], dtype=dtype)
    b = torch.tensor([-1, 2, -1, 2], dtype=dtype)

    def build(fd):
        ta, tb = fd.from_pytorch(a), fd.from_pytorch(b)
        for op in ("div", "fmod", "remainder"):
            fd.add_output(getattr(fd.ops, op)(ta, tb))

    q, f, r = run(build, [a, b])
    assert q.tolist() == [lo, lo // 2, -7, -3]
    assert f.tolist() == [0, 0, 0, -1]
    assert r.tolist() == [0, 0, 0, 1]


def test_integer_division_of_runtime_scalars():
    # Python ints given at execute are evaluated the same way.
    def build(fd):
        t = fd.define_tensor(shape=[-1], dtype=DataType.Int)
        s0 = fd.define_scalar(None, dtype=DataType.Int)
        s1 = fd.define_scalar(None, dtype=DataType.Int)
        fd.add_output(fd.ops.add(t, fd.ops.div(s0, s1)))
        fd.add_output(fd.ops.add(t, fd.ops.remainder(s0, s1)))

    with FusionDefinition() as fd:
        build(fd)
    zero = torch.zeros(2, dtype=torch.int64)
    q, r = fd.execute([zero, INT64_MIN, -1])
    assert q.tolist() == [INT64_MIN] * 2
    assert r.tolist() == [0, 0]
    with pytest.raises(ZeroDivisionError,
                       match="div: integer division by zero"):
        fd.execute([zero, 5, 0])


@pytest.mark.parametrize("op", ["div", "fmod", "remainder"])
def test_integer_division_by_zero_raises_on_the_cpu(op):
    a = torch.tensor([5, 6], dtype=torch.int64)
    b = torch.tensor([1, 0], dtype=torch.int64)
    with pytest.raises(ZeroDivisionError,
                       match="%s: integer division by zero" % op):
        run(lambda fd: fd.add_output(getattr(fd.ops, op)(
            fd.from_pytorch(a), fd.from_pytorch(b))), [a, b])


def test_python_ints_beyond_int64_for_float_scalars():
    # torch takes 2**70 as a float where a float is wanted; an Int scalar
    # refuses it (test_bad_input_catalog.py).
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1])
        s = fd.define_scalar(None, dtype=DataType.Double)
        fd.add_output(fd.ops.mul(fd.ops.mul(t, s),
                                 fd.define_scalar(2**70,
                                                  dtype=DataType.Double)))
    x = torch.ones(2)
    (out,) = fd.execute([x, 2**70])
    torch.testing.assert_close(out, x * 2.0**140)


def test_integer_constants_as_sizes_and_scalar_inputs_in_range():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], dtype=DataType.Int32)
        s = fd.define_scalar(None, dtype=DataType.Int32)
        two = fd.define_scalar(2)
        fd.add_output(fd.ops.reshape(fd.ops.add(t, s), [two, -1]))
    x = torch.arange(6, dtype=torch.int32)
    (out,) = fd.execute([x, 2**31 - 7])
    assert torch.equal(out, (x + (2**31 - 7)).reshape(2, 3))


@pytest.mark.parametrize("shape, widths, out_shape", [
    ((0, 3), [1, 1], (0, 5)),        # padded dim non-empty, other empty
    ((2, 0), [0, 0, 1, 2], (5, 0)),  # the empty dim named with (0, 0)
    ((0, 3), [0, 0, 2, 1], (3, 3)),  # the empty dim padded: all fill
    ((2, 0), [1, 2], (2, 3)),
])
def test_pad_of_a_tensor_with_an_empty_dim(shape, widths, out_shape):
    # torch 1.13's constant_pad_nd refuses a result with an empty dim named
    # in the widths, even padded by 0; the ATen path raised for these.
    x = torch.zeros(shape)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        fd.add_output(fd.ops.pad(t, widths, 2.5))
    (out,) = fd.execute([x])
    assert tuple(out.shape) == out_shape and out.dtype == torch.float32
    assert torch.equal(out, torch.full(out_shape, 2.5))


@pytest.mark.parametrize("with_dims, zero_dim", [
    (torch.float32, torch.float64),
    (torch.int64, torch.float64),
    (torch.int32, torch.int64),
    (torch.bool, torch.int32),
    (torch.bool, torch.float64),
    (torch.float64, torch.float32),
    (torch.float32, torch.complex128),
])
@pytest.mark.parametrize("is_cpu", [False, True])
def test_a_zero_dim_tensor_promotes_as_torch(with_dims, zero_dim, is_cpu):
    # torch's result_type: a 0-dim tensor counts only where its category
    # is higher (float32[4] * float64[] is float32); ours promoted it as a
    # tensor with dims.
    def make(dtype, shape):
        if dtype == torch.bool:
            return torch.rand(shape) < 0.5
        return (torch.randn(shape, dtype=torch.float64) * 4).to(dtype) \
            if not dtype.is_complex else torch.randn(shape, dtype=dtype)
    x, s = make(with_dims, (4,)), make(zero_dim, ())
    with FusionDefinition() as fd:
        a = fd.from_pytorch(x)
        b = fd.define_tensor(shape=[], dtype=fd_dtype(zero_dim),
                             is_cpu=is_cpu)
        fd.add_output(fd.ops.mul(a, b))
        fd.add_output(fd.ops.where(fd.ops.gt(a, a), a, b))
    mul, where = fd.execute([x, s])
    assert mul.dtype == (x * s).dtype
    torch.testing.assert_close(mul, x * s)
    assert where.dtype == torch.where(x > x, x, s).dtype
    # The printed script broadcasts s before the op: it must still compute
    # what the definition does.
    for printed in run_printed(fd, [x, s]):
        assert [o.dtype for o in printed] == [mul.dtype, where.dtype]
        assert torch.equal(printed[0], mul)
    if not (zero_dim.is_complex or with_dims == torch.bool):
        fd.cuda_code_for([x, s], "sm_90")  # the kernel is generated too


def fd_dtype(dtype):
    from nvfuser.pytorch_utils import torch_dtype_to_nvfuser_dtype
    return torch_dtype_to_nvfuser_dtype(dtype)
