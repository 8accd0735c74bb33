"""torch.ops.nvfuser.embedding_dense_backward, registered by ``import
nvfuser`` (csrc/runtime/torch_operators.cpp): on the CPU it is ATen's
kernel, bit for bit (the touched-rows sums run on CUDA only: test_gpu.py,
and on the CPU in the C++ tests); its meta kernel gives the result's
shape for meta and fake tensors; bad arguments raise."""

import pytest
import torch

import nvfuser  # noqa: F401 (registers the operator)

OURS = torch.ops.nvfuser.embedding_dense_backward.default
ATEN = torch.ops.aten.embedding_dense_backward.default


def test_schema_is_atens():
    assert str(OURS._schema) == (
        "nvfuser::embedding_dense_backward(Tensor grad_output, Tensor "
        "indices, int num_weights, int padding_idx, bool "
        "scale_grad_by_freq) -> Tensor")
    ours = [a.name for a in OURS._schema.arguments]
    assert ours == [a.name for a in ATEN._schema.arguments]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("ids_dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("scale", [False, True])
def test_cpu_is_atens_kernel(dtype, ids_dtype, scale):
    torch.manual_seed(0)
    grad = torch.randn(3, 8, 16, dtype=dtype)
    ids = torch.randint(0, 10, (3, 8), dtype=ids_dtype)
    for padding_idx in (-1, 4, 20):
        got = OURS(grad, ids, 20, padding_idx, scale)
        want = ATEN(grad, ids, 20, padding_idx, scale)
        assert got.dtype == want.dtype and torch.equal(got, want)


def test_meta_and_fake_tensors_get_the_shape():
    grad = torch.empty(4, 6, 8, device="meta", dtype=torch.bfloat16)
    ids = torch.empty(4, 6, device="meta", dtype=torch.int64)
    out = OURS(grad, ids, 100, -1, False)
    assert (out.shape, out.dtype, out.device.type) == (
        (100, 8), torch.bfloat16, "meta")
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        out = OURS(torch.empty(5, 3), torch.zeros(5, dtype=torch.int32), 7,
                   -1, False)
    assert type(out).__name__ == "FakeTensor" and out.shape == (7, 3)


def test_a_grad_with_one_row_per_id_in_any_shape_is_taken_as_aten_takes_it():
    ids = torch.tensor([[1, 3, 1], [0, 3, 1]])
    grad = torch.randn(6, 4)
    assert torch.equal(OURS(grad, ids, 5, -1, False),
                       torch.ops.aten.embedding_dense_backward(
                           grad, ids, 5, -1, False))


@pytest.mark.parametrize("grad_shape,ids,message", [
    ((2, 3), torch.zeros(2, 3, dtype=torch.int64), "per index (6 indices)"),
    ((), torch.zeros(1, dtype=torch.int64), "the embedding dim"),
    ((2, 4, 4), torch.zeros(2, 3, dtype=torch.int64),
     "per index (6 indices)"),
    ((2, 3, 4), torch.zeros(2, 3), "int32 or int64"),
])
def test_bad_arguments_raise(grad_shape, ids, message):
    # ValueError through nvfuser's exception translator where torch shares
    # pybind11's internals with it, RuntimeError otherwise.
    with pytest.raises((ValueError, RuntimeError),
                       match="embedding_dense_backward") as e:
        OURS(torch.zeros(grad_shape), ids, 4, -1, False)
    assert message in str(e.value)
