import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "python"))

from nvfuser import FusionDefinition  # noqa: E402

HAS_GPU = torch.cuda.is_available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU")

# Every fusion a test executes also has its generated kernels compiled by
# NVRTC for Hopper and one older architecture, so a codegen bug fails CI
# even without a GPU.
CODEGEN_ARCHS = ("sm_90", "sm_80")
_original_execute = FusionDefinition.execute


def _execute_and_compile(self, inputs, **kwargs):
    outputs = _original_execute(self, inputs, **kwargs)
    options = {k: kwargs[k] for k in ("_enable_options", "_disable_options")
               if k in kwargs}
    for arch in CODEGEN_ARCHS:
        self.cuda_code_for(inputs, arch, **options)
    return outputs


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "no_nvrtc: execute without compiling the kernels with "
        "NVRTC (fusions too large for NVRTC to be worth the CI time)")


@pytest.fixture(autouse=True)
def compile_every_kernel(request, monkeypatch):
    if request.node.get_closest_marker("no_nvrtc") is None:
        monkeypatch.setattr(FusionDefinition, "execute", _execute_and_compile)


@pytest.fixture(params=["cpu"] + (["cuda"] if HAS_GPU else []))
def device(request):
    return request.param
