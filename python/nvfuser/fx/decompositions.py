"""What aot_autograd decomposes before the backend sees a graph.

The min-cut partitioner can only recompute in the backward what it sees
as cheap pointwise ops. Whole, ``_log_softmax`` is an opaque op whose
float result the backward needs, so a training step saved that result: a
float copy of the logits ([tokens, vocab]; 524 MB for a Llama step of
4096 tokens) written by the forward and read by the backward. Decomposed
(amax, exp, sum, log), it is recomputed in the backward from the bf16
logits the forward keeps anyway, and only two values per row are saved.

``nll_loss_backward`` is replaced for the same reason: its ATen schema
takes the log-probabilities, whose values it never reads (only their
shape), and that argument alone would keep them alive. Ours reads only the
targets.

``cat`` and ``constant_pad_nd`` are recomputable in the min-cut partition
(torch's allowlist is Inductor's, which does not fuse them as producers;
ours does), so a rotate-half is recomputed from the q it rotates;
``NVFUSER_DISABLE=recompute_cat`` keeps torch's allowlist.
"""

import contextlib
import dataclasses
import threading

import torch

_NONE, _MEAN = 0, 1


def _nll_loss_backward(grad_output, self, target, weight, reduction,
                       ignore_index, total_weight):
    """d loss / d log-probabilities: -grad at each row's target, zero
    elsewhere and at ignored rows (eager's values, also for mean)."""
    if weight is not None or self.dim() != 2:
        return NotImplemented  # traced as the ATen op
    classes = torch.arange(self.shape[1], device=target.device)
    hit = (classes.unsqueeze(0) == target.unsqueeze(1)) & \
        (target != ignore_index).unsqueeze(1)
    g = grad_output
    if reduction == _MEAN:
        g = g / total_weight
    elif reduction == _NONE:
        g = g.unsqueeze(1)
    return torch.where(hit, -g, g.new_zeros(())).to(self.dtype)


def _drop_detaches(joint):
    """Removes detach nodes from aot_autograd's joint graph: there they
    only mark saved values (the graph is differentiated already), and the
    min-cut partition cannot recompute through them, so a detached value
    was always saved. Detaches that are graph outputs stay (an output that
    aliases an input is aot_autograd's business)."""
    detach = torch.ops.aten.detach.default
    for node in list(joint.graph.nodes):
        if node.op != "call_function" or node.target is not detach:
            continue
        if any(user.op == "output" for user in node.users):
            continue
        node.replace_all_uses_with(node.args[0])
        joint.graph.erase_node(node)
    joint.recompile()


# Ops our kernels fuse that torch's min-cut allowlist (written for
# Inductor) does not let the backward recompute. A rotate-half is a cat:
# saved, a RoPE whose cos and sin take gradients (the Qwen2.5 variant of
# benchmarks/rope) wrote a float rotate-half of q and k in the forward and
# read it in the backward, 67 of its 230 MB, next to the bf16 q it
# recomputes everything else from.
_FUSIBLE_BEYOND_ALLOWLIST = ("cat", "constant_pad_nd")
_op_list_lock = threading.Lock()


def _with_our_fusible_ops(default_op_list):
    """default_op_list (torch's get_default_op_list) with our extra
    fusible ops recomputable and fusible."""
    def op_list():
        types = default_op_list()
        extra = [getattr(torch.ops.aten, n) for n in _FUSIBLE_BEYOND_ALLOWLIST]
        grown = {f: type(getattr(types, f))(list(getattr(types, f)) + extra)
                 for f in ("recomputable_ops", "fusible_ops")}
        return dataclasses.replace(types, **grown)
    return op_list


@contextlib.contextmanager
def _our_fusible_ops():
    """torch's partitioner asks get_default_op_list, a module global, what
    it may recompute (torch 2.x); without it (torch 1.13) nothing
    changes. The lock keeps concurrent partitions from restoring each
    other's lists."""
    try:
        from torch._functorch import partitioners
    except ImportError:
        partitioners = None
    default = getattr(partitioners, "get_default_op_list", None)
    if default is None:
        yield
        return
    with _op_list_lock:
        partitioners.get_default_op_list = _with_our_fusible_ops(default)
        try:
            yield
        finally:
            partitioners.get_default_op_list = default


def min_cut_partition(joint, joint_inputs, **kwargs):
    """torch's min-cut rematerialization partition of the joint graph
    without its detaches (_drop_detaches), with cat and constant_pad_nd
    recomputable (_FUSIBLE_BEYOND_ALLOWLIST)."""
    from functorch.compile import min_cut_rematerialization_partition
    from .. import _C
    _drop_detaches(joint)
    ops = (contextlib.nullcontext() if _C.disabled("recompute_cat")
           else _our_fusible_ops())  # else torch's allowlist as it is
    with ops:
        return min_cut_rematerialization_partition(joint, joint_inputs,
                                                   **kwargs)


def aot_decompositions():
    """The decomposition table the backend hands aot_autograd."""
    from torch._decomp import get_decompositions
    aten = torch.ops.aten
    table = get_decompositions([aten._log_softmax,
                                aten._log_softmax_backward_data])
    table[aten.nll_loss_backward.default] = _nll_loss_backward
    return table
