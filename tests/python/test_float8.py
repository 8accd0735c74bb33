"""Float8 dtypes (DataType.Float8_e4m3fn, Float8_e5m2): the enum members
exist with every torch; with a torch that has no Float8 tensors (before
2.1, as torch 1.13 on the CI machine) defining or casting to one is a
TypeError naming the dtype and the torch version; with one that has them,
casts match torch bitwise on the CPU (ATen's conversions). Generated
kernels: tests/cpp/core/test_float8.cpp (NVRTC), tests/cpp/runtime/
test_float8_conversions.cpp (the conversions), tests/python/test_gpu.py
(bitwise against torch on a GPU)."""

import pytest
import torch

from nvfuser import DataType, FusionDefinition
from nvfuser.pytorch_utils import torch_dtype_to_nvfuser_dtype

FLOAT8 = {DataType.Float8_e4m3fn: "float8_e4m3fn",
          DataType.Float8_e5m2: "float8_e5m2"}
HAS_FLOAT8 = hasattr(torch, "float8_e4m3fn")
needs_float8 = pytest.mark.skipif(not HAS_FLOAT8,
                                  reason="this torch has no Float8 tensors")


def test_members_exist():
    assert DataType.Float8_e4m3fn.name == "Float8_e4m3fn"
    assert DataType.Float8_e5m2.name == "Float8_e5m2"
    assert DataType.Float8_e4m3fn != DataType.Float8_e5m2


@pytest.mark.skipif(HAS_FLOAT8, reason="this torch has Float8 tensors")
@pytest.mark.parametrize("dtype", list(FLOAT8))
def test_torch_without_float8_gets_a_type_error(dtype):
    pattern = (r"DataType\.%s tensors need torch >= 2\.1 \(torch\.%s\); "
               r"this is torch %s" % (dtype.name, FLOAT8[dtype],
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


@needs_float8
@pytest.mark.parametrize("dtype", list(FLOAT8))
def test_casts_match_torch_bitwise_on_the_cpu(dtype):
    f8 = getattr(torch, FLOAT8[dtype])
    assert torch_dtype_to_nvfuser_dtype(f8) == dtype
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    every = codes.view(f8)
    x = torch.cat([torch.randn(512) * 100, torch.tensor(
        [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 448.0, 464.0,
         470.0, 480.0, 57344.0, 61440.0, 65536.0, 2.0 ** -10, 2.0 ** -17])])
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
