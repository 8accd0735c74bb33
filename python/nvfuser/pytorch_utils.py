"""nvFuser's nvfuser.pytorch_utils: torch <-> nvFuser dtype conversion."""

from .fusion_definition import torch_dtype_to_nvfuser_dtype

__all__ = ["torch_dtype_to_nvfuser_dtype"]
