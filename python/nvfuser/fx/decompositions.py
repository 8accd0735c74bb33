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
"""

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


def min_cut_partition(joint, joint_inputs, **kwargs):
    """torch's min-cut rematerialization partition of the joint graph
    without its detaches (_drop_detaches)."""
    from functorch.compile import min_cut_rematerialization_partition
    _drop_detaches(joint)
    return min_cut_rematerialization_partition(joint, joint_inputs, **kwargs)


def aot_decompositions():
    """The decomposition table the backend hands aot_autograd."""
    from torch._decomp import get_decompositions
    aten = torch.ops.aten
    table = get_decompositions([aten._log_softmax,
                                aten._log_softmax_backward_data])
    table[aten.nll_loss_backward.default] = _nll_loss_backward
    return table
