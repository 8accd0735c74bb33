"""``torch.compile(model, backend="nvfuser")``: dynamo hands the captured
graph to aot_autograd, whose forward and backward ATen graphs both go
through ``compile_graph`` (supported regions run as FusionDefinitions, the
rest in eager)."""

from .partition import compile_graph


def _boxed(gm, example_inputs):
    from functorch.compile import make_boxed_func
    return make_boxed_func(compile_graph(gm, example_inputs))


def nvfuser_backend(gm, example_inputs):
    """A torch.compile backend (torch >= 2.0). The forward/backward split
    is the min-cut one (as inductor's): the backward recomputes cheap
    pointwise values instead of the forward saving them to memory; the
    decompositions (decompositions.py) let it see the log-softmax of a
    loss as such values."""
    from torch._dynamo.backends.common import aot_autograd
    from .decompositions import aot_decompositions, min_cut_partition
    return aot_autograd(fw_compiler=_boxed, bw_compiler=_boxed,
                        partition_fn=min_cut_partition,
                        decompositions=aot_decompositions())(
        gm, example_inputs)


def register():
    """Registers the backend as "nvfuser" where dynamo exists; returns
    whether it is registered."""
    try:
        from torch._dynamo import list_backends, register_backend
    except ImportError:
        return False  # torch < 2.0: no dynamo; compile_graph still works
    try:
        if "nvfuser" not in list_backends(exclude_tags=()):
            register_backend(compiler_fn=nvfuser_backend, name="nvfuser")
    except (AssertionError, RuntimeError, TypeError):
        return False
    return True
