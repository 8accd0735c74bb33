"""PyTorch integration: FX graphs to fusions, and a torch.compile backend.

    from nvfuser.fx import compile_graph   # any FX GraphModule
    torch.compile(model, backend="nvfuser") # torch >= 2.0

``compile_graph`` translates the supported ops (``translator.TABLE``) into
FusionDefinitions, one per maximal region that keeps the graph a DAG, and
leaves everything else to eager; ``NVFUSER_DUMP=fx_partition`` prints the
regions and each unsupported node with its reason.
"""

from .backend import nvfuser_backend, register
from .partition import FusionRegion, compile_graph
from .translator import TABLE, Unsupported

__all__ = ["compile_graph", "nvfuser_backend", "register", "FusionRegion",
           "TABLE", "Unsupported"]
