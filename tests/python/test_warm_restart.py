"""Automatic serialization: a second process finds every kernel of a known
definition on disk and runs no NVRTC compile (issue 17's warm restart).
Without a GPU, ``cuda_code_for`` compiles what ``execute`` would."""

import json
import os
import subprocess
import sys

import pytest
import torch

import nvfuser

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "..", "python")

SCRIPT = r"""
import json, sys, time
sys.path.insert(0, %(python)r)
import torch
import nvfuser
from nvfuser import DataType, FusionCache, FusionDefinition
FusionCache.get(load_from_default_workspace=True)
x = torch.randn(64, 1024, dtype=torch.bfloat16)
with FusionDefinition() as fd:
    t = fd.from_pytorch(x)
    s = fd.ops.sum(fd.ops.cast(t, DataType.Float), [1], keepdim=True)
    y = fd.ops.div(fd.ops.exp(fd.ops.cast(t, DataType.Float)), s)
    fd.add_output(fd.ops.cast(y, DataType.BFloat16))
    fd.add_output(fd.ops.sum(fd.ops.cast(t, DataType.Float), [0]))
t0 = time.perf_counter()
if torch.cuda.is_available():
    fd.execute([x.cuda()])
    torch.cuda.synchronize()
else:
    fd.cuda_code_for([x], "sm_90")
ms = (time.perf_counter() - t0) * 1e3
print(json.dumps(dict(stats=nvfuser.kernel_compile_stats(), ms=ms,
                      dir=nvfuser.serialize())))
"""


def _run(home):
    env = dict(os.environ, XDG_CACHE_HOME=str(home))
    env.pop("NVFUSER_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c",
                          SCRIPT % {"python": PYTHON_DIR}],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_process_compiles_nothing(tmp_path):
    first = _run(tmp_path)
    second = _run(tmp_path)
    assert first["dir"] == os.path.join(str(tmp_path), "nvfuser-lite",
                                        "kernels")
    assert first["stats"]["nvrtc_compiles"] >= 2  # two kernels at least
    assert first["stats"]["disk_hits"] == 0
    assert second["stats"]["nvrtc_compiles"] == 0
    assert second["stats"]["disk_hits"] >= 2
    assert oct(os.stat(first["dir"]).st_mode & 0o777) == "0o700"


def test_disable_restores_the_environment(monkeypatch):
    monkeypatch.delenv("NVFUSER_CACHE_DIR", raising=False)
    nvfuser.enable_automatic_serialization()
    try:
        assert nvfuser.serialize() == nvfuser.default_workspace()
    finally:
        nvfuser.disable_automatic_serialization()
    assert nvfuser.serialize() is None
    # A directory the user chose is never replaced or removed.
    monkeypatch.setenv("NVFUSER_CACHE_DIR", "/somewhere/else")
    nvfuser.enable_automatic_serialization()
    nvfuser.disable_automatic_serialization()
    assert os.environ["NVFUSER_CACHE_DIR"] == "/somewhere/else"


def test_stats_count_memory_hits():
    x = torch.randn(8, 128)
    with nvfuser.FusionDefinition() as fd:
        fd.add_output(fd.ops.neg(fd.from_pytorch(x)))
    fd.cuda_code_for([x], "sm_90")
    before = nvfuser.kernel_compile_stats()
    fd.cuda_code_for([x], "sm_90")
    after = nvfuser.kernel_compile_stats()
    assert after["nvrtc_compiles"] == before["nvrtc_compiles"]
    assert after["memory_hits"] > before["memory_hits"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
