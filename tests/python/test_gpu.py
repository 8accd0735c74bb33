"""Generated kernels on the GPU against PyTorch (skipped without a GPU)."""

import os
import sys

import pytest
import torch

from nvfuser import DataType, FusionDefinition

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "benchmarks", "rope"))
import rope_fusions as rf  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA GPU")

TORCH = {DataType.BFloat16: torch.bfloat16, DataType.Half: torch.float16,
         DataType.Float: torch.float32}


@pytest.mark.parametrize("name", sorted(rf.VARIANTS))
def test_rope_on_gpu(name):
    cfg = dict(B=2, T=64, H=8, G=2, D=64)
    define, make, eager = rf.VARIANTS[name]
    with FusionDefinition() as fd:
        define(fd, cfg)
    inputs = make(cfg, device="cuda")
    outs = fd.execute(inputs)
    seg = fd.last_segmentation()
    pointwise = [g for g in seg["groups"] if g["scheduler"] == "pointwise"]
    assert len(fd.last_cuda_code()) == len(pointwise) > 0
    if name == "litgpt_backward":
        ref = eager(cfg, *inputs)[0]
        rel = (outs[0].float() - ref).norm() / ref.norm()
        assert rel < 1e-2
        return
    for o, r in zip(outs, eager(cfg, *inputs)):
        torch.testing.assert_close(o, r, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", [DataType.BFloat16, DataType.Half,
                                   DataType.Float])
def test_elementwise_dtypes_noncontiguous_and_expanded(dtype):
    td = TORCH[dtype]
    x = torch.randn(64, 96, device="cuda", dtype=td).t()  # strided
    e = torch.randn(1, 64, device="cuda", dtype=td).expand(96, 64)
    with FusionDefinition() as fd:
        tx, te = fd.from_pytorch(x), fd.from_pytorch(e)
        y = fd.ops.add(fd.ops.mul(tx, te), fd.ops.sigmoid(tx))
        fd.add_output(fd.ops.cast(y, dtype))
    (out,) = fd.execute([x, e])
    ref = (x.float() * e.float() + torch.sigmoid(x.float())).to(td)
    torch.testing.assert_close(out, ref, rtol=1e-2, atol=1e-2)
    assert len(fd.last_cuda_code()) == 1


def test_pad_cat_reshape_permute_on_gpu():
    a = torch.randn(4, 6, 8, device="cuda")
    b = torch.randn(8, 6, 4, device="cuda")
    with FusionDefinition() as fd:
        ta, tb = fd.from_pytorch(a), fd.from_pytorch(b)
        r = fd.ops.reshape(fd.ops.reshape(ta, [24, 8]), [4, 6, 8])
        p = fd.ops.pad(fd.ops.slice(r, [0, 0, 1], [4, 6, 8]), [0, 1], 2.0)
        c = fd.ops.cat([fd.ops.slice(p, [0, 0, 0], [4, 6, 4]),
                        fd.ops.slice(p, [0, 0, 4], [4, 6, 8])], dim=2)
        fd.add_output(fd.ops.add(c, fd.ops.permute(tb, [2, 1, 0])))
    (out,) = fd.execute([a, b])
    ref = torch.nn.functional.pad(a[:, :, 1:], [0, 1], value=2.0) + \
        b.permute(2, 1, 0)
    torch.testing.assert_close(out, ref)


def test_scalar_inputs_and_iota_on_gpu():
    x = torch.randn(10, device="cuda")
    with FusionDefinition() as fd:
        tx = fd.from_pytorch(x)
        s = fd.define_scalar(None, dtype=DataType.Double)
        i = fd.ops.iota(10, 0, 1, dtype=DataType.Int)
        fd.add_output(fd.ops.add(fd.ops.mul(tx, s), i))
    (out,) = fd.execute([x, 3.0])
    torch.testing.assert_close(out, x * 3 + torch.arange(10, device="cuda"))


def test_mixed_kernel_and_aten_groups():
    a = torch.randn(32, 64, device="cuda")
    w = torch.randn(16, 64, device="cuda")
    with FusionDefinition() as fd:
        ta, tw = fd.from_pytorch(a), fd.from_pytorch(w)
        h = fd.ops.linear(fd.ops.relu(ta), tw)
        fd.add_output(fd.ops.sum(fd.ops.exp(h), dims=[1]))
    (out,) = fd.execute([a, w])
    ref = torch.exp(torch.nn.functional.linear(torch.relu(a), w)).sum(1)
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-3)


def test_split_reshape_of_strided_input():
    # The reshape's index (h * D + d) multiplies a stride that is not 1.
    base = torch.randn(2, 8, 6 * 8 * 2, device="cuda")
    x = base[..., ::2]  # [2, 8, 48], innermost stride 2
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[2, 8, 48], contiguity=[True, True, False])
        r = fd.ops.permute(fd.ops.reshape(t, [2, 8, 6, 8]), [0, 2, 1, 3])
        s = fd.ops.slice(r, [0, 0, 0, 1], [2, 6, 8, 8], [1, 1, 1, 2])
        fd.add_output(fd.ops.neg(s))
    (out,) = fd.execute([x])
    ref = -x.reshape(2, 8, 6, 8).permute(0, 2, 1, 3)[..., 1::2]
    torch.testing.assert_close(out, ref)
