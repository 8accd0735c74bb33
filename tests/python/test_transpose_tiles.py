"""Transposes through shared-memory tiles (scheduler/transpose_plan.h): a
pointwise segment that reads an input along a dim other than the output's
innermost gets 32 x 32 tiles. No GPU needed: cuda_code_for compiles every
kernel with NVRTC (sm_90); the kernels' values are checked by the C++
emulator tests (test_emulated_transpose.cpp) and on the GPU
(test_gpu.py)."""

import torch

from nvfuser import DataType, FusionDefinition


def _transpose_scale(shape, perm):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=list(shape), dtype=DataType.BFloat16)
        y = fd.ops.cast(fd.ops.permute(x, dims=list(perm)), DataType.Float)
        fd.add_output(fd.ops.cast(fd.ops.mul(y, 2.0), DataType.BFloat16))
    return fd


def test_a_transposing_copy_is_tiled_and_compiles(monkeypatch):
    fd = _transpose_scale((2, 45, 70), (0, 2, 1))
    x = torch.randn(2, 45, 70).bfloat16()
    code = fd.cuda_code_for([x])
    assert len(code) == 1
    assert "__shared__ nvf_bf16 nvf_tile0[32][33];" in code[0]
    assert "1 input(s) staged in shared memory" in code[0]
    out = fd.execute([x])[0]
    assert torch.equal(out, (x.permute(0, 2, 1).float() * 2).bfloat16())
    monkeypatch.setenv("NVFUSER_DISABLE", "transpose_tiles")
    assert "nvf_tile" not in fd.cuda_code_for([x])[0]


def test_permutes_that_keep_the_innermost_dim_are_not_tiled():
    # [B, T, H, D] -> [B, H, T, D], an attention head split: D stays
    # innermost, every read is along it already.
    fd = _transpose_scale((2, 64, 8, 64), (0, 2, 1, 3))
    x = torch.randn(2, 64, 8, 64).bfloat16()
    assert "nvf_tile" not in fd.cuda_code_for([x])[0]
