"""nvfuser-lite: a fusion compiler with nvFuser's Python FusionDefinition API.

Usage::

    from nvfuser import FusionDefinition, DataType

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        t1 = fd.ops.exp(t0)
        fd.add_output(t1)
    out = fd.execute([torch.randn(4, 8)])
"""

import atexit

import torch  # noqa: F401  (loads libtorch before the extension)

from . import _C
from ._C import DataType
from . import pytorch_utils  # noqa: F401 (nvfuser.pytorch_utils)
from .fusion_cache import (FusionCache, default_workspace,
                           disable_automatic_serialization,
                           enable_automatic_serialization,
                           kernel_compile_stats, serialize)
from .fusion_definition import FusionDefinition, Scalar, Tensor, Vector
from .utils import (clone, compute_contiguity, compute_tensor_descriptor,
                    version)

__all__ = ["DataType", "FusionCache", "FusionDefinition", "Scalar", "Tensor",
           "Vector", "clone", "compute_contiguity",
           "compute_tensor_descriptor", "default_workspace",
           "disable_automatic_serialization",
           "enable_automatic_serialization", "kernel_compile_stats",
           "serialize", "version"]

# Loaded CUDA modules are unloaded while the driver is certainly still up
# (C++ static destruction comes too late for that).
atexit.register(_C._unload_kernels)

if hasattr(torch, "compile"):  # torch >= 2.0: backend="nvfuser"
    from .fx import register as _register_backend

    _register_backend()
__version__ = "0.1.0"
