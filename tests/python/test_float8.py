"""Float8 dtypes (DataType.Float8_e4m3fn, Float8_e5m2, Float8_e8m0fnu): the
enum members exist with every torch; with a torch that has no tensors of
the type (e4m3fn and e5m2 before 2.1, e8m0fnu before 2.7; torch 1.13 on
the CI machine has none) defining or casting to one is a TypeError naming
the dtype and the torch version; with one that has them,
casts match torch bitwise on the CPU (ATen's conversions). Generated
kernels: tests/cpp/core/test_float8.cpp (NVRTC), tests/cpp/runtime/
test_float8_conversions.cpp (the conversions), tests/python/test_gpu.py
(bitwise against torch on a GPU)."""

import pytest
import torch

from nvfuser import DataType, FusionDefinition
from nvfuser.pytorch_utils import torch_dtype_to_nvfuser_dtype

# DataType -> (torch dtype name, first torch version that has it)
FLOAT8 = {DataType.Float8_e4m3fn: ("float8_e4m3fn", "2.1"),
          DataType.Float8_e5m2: ("float8_e5m2", "2.1"),
          DataType.Float8_e8m0fnu: ("float8_e8m0fnu", "2.7")}


def torch_has(dtype):
    return hasattr(torch, FLOAT8[dtype][0])


def test_members_exist():
    names = [d.name for d in FLOAT8]
    assert names == ["Float8_e4m3fn", "Float8_e5m2", "Float8_e8m0fnu"]
    assert len(set(FLOAT8)) == 3


@pytest.mark.parametrize("dtype", list(FLOAT8))
def test_torch_without_float8_gets_a_type_error(dtype):
    if torch_has(dtype):
        pytest.skip("this torch has torch.%s" % FLOAT8[dtype][0])
    name, since = FLOAT8[dtype]
    pattern = (r"DataType\.%s tensors need torch >= %s \(torch\.%s\); "
               r"this is torch %s" % (dtype.name, since.replace(".", r"\."),
                                      name,
                                      torch.__version__.replace(".", r"\.")))
    with FusionDefinition() as fd:
        with pytest.raises(TypeError, match="define_tensor: " + pattern):
            fd.define_tensor(shape=[-1], dtype=dtype)
        t = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        with pytest.raises(TypeError, match="cast: " + pattern):
            fd.ops.cast(t, dtype)
        fd.add_output(fd.ops.neg(t))  # the definition goes on
    x = torch.randn(3)
    torch.testing.assert_close(fd.execute([x])[0], -x)


def test_float8_values_are_storage_only():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        with pytest.raises(TypeError, match="define_scalar: Float8_e4m3fn "
                           "values are storage only"):
            fd.define_scalar(1.0, dtype=DataType.Float8_e4m3fn)
        with pytest.raises(TypeError, match="full: Float8_e5m2 values are "
                           "storage only"):
            fd.ops.full([2], 1.0, DataType.Float8_e5m2)
        fd.add_output(t)


@pytest.mark.parametrize("dtype", list(FLOAT8))
def test_casts_match_torch_bitwise_on_the_cpu(dtype):
    if not torch_has(dtype):
        pytest.skip("this torch has no torch.%s" % FLOAT8[dtype][0])
    f8 = getattr(torch, FLOAT8[dtype][0])
    assert torch_dtype_to_nvfuser_dtype(f8) == dtype
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    every = codes.view(f8)
    x = torch.cat([torch.randn(512) * 100, torch.tensor(
        [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 448.0, 464.0,
         470.0, 480.0, 57344.0, 61440.0, 65536.0, 2.0 ** -10, 2.0 ** -17,
         1.5, -3.0, 2.0 ** -127, 2.0 ** -130, 1.5 * 2.0 ** 127])])
    with FusionDefinition() as fd:
        t8 = fd.from_pytorch(every)
        tx = fd.from_pytorch(x)
        fd.add_output(fd.ops.cast(t8, DataType.Float))
        fd.add_output(fd.ops.cast(t8, DataType.BFloat16))
        fd.add_output(fd.ops.cast(tx, dtype))
        fd.add_output(fd.ops.cast(fd.ops.cast(tx, DataType.Double), dtype))
        fd.add_output(fd.ops.set(t8))
    up, up_bf16, down, down_double, copy = fd.execute([every, x])
    assert down.dtype == f8 and copy.dtype == f8
    assert torch.equal(up.view(torch.int32), every.float().view(torch.int32))
    assert torch.equal(up_bf16.view(torch.int16),
                       every.to(torch.bfloat16).view(torch.int16))
    assert torch.equal(down.view(torch.uint8), x.to(f8).view(torch.uint8))
    assert torch.equal(down_double.view(torch.uint8),
                       x.double().to(f8).view(torch.uint8))
    assert torch.equal(copy.view(torch.uint8), codes)
