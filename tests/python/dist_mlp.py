"""A small training layer written with FusionDefinitions, and the worker
that test_distributed.py spawns once per rank (gloo on the CPU).

The layer is RMSNorm -> linear -> SiLU -> linear. Its forward is one
FusionDefinition and its backward another (recomputing the forward from
the inputs); ``FusedMLP`` wraps both in a ``torch.autograd.Function`` so
eager autograd, and DDP's gradient hooks, see it as one op.
"""

import datetime
import operator
import os

import torch

from nvfuser import DataType, FusionDefinition

EPS = 1e-6
BATCH, HIDDEN, FFN = 4, 8, 16  # per rank
WORLD = 2
LR = 0.1


def _define(fd, shape):
    return fd.define_tensor(shape=[-1] * len(shape), dtype=DataType.Float)


def _norm(fd, x, g):
    """(n, y): x normalized by its RMS over the last dim, and n * g."""
    ms = fd.ops.mean(fd.ops.mul(x, x), [1], keepdim=True)
    r = fd.ops.rsqrt(fd.ops.add(ms, EPS))
    n = fd.ops.mul(x, r)
    return r, n, fd.ops.mul(n, g)


def forward_fusion():
    with FusionDefinition() as fd:
        x, g = _define(fd, "bh"), _define(fd, "h")
        w1, w2 = _define(fd, "fh"), _define(fd, "hf")
        _, _, y = _norm(fd, x, g)
        a = fd.ops.silu(fd.ops.linear(y, w1))
        fd.add_output(fd.ops.linear(a, w2))
    return fd


def backward_fusion():
    """grads of (x, g, w1, w2) from grad_out, recomputing the forward."""
    with FusionDefinition() as fd:
        x, g = _define(fd, "bh"), _define(fd, "h")
        w1, w2 = _define(fd, "fh"), _define(fd, "hf")
        go = _define(fd, "bh")
        r, n, y = _norm(fd, x, g)
        h = fd.ops.linear(y, w1)
        s = fd.ops.sigmoid(h)
        a = fd.ops.mul(h, s)
        t = fd.ops.permute
        dw2 = fd.ops.matmul(t(go, [1, 0]), a)
        da = fd.ops.matmul(go, w2)
        # silu'(h) = s * (1 + h * (1 - s))
        one_minus = fd.ops.sub(1.0, s)
        dsilu = fd.ops.mul(s, fd.ops.add(1.0, fd.ops.mul(h, one_minus)))
        dh = fd.ops.mul(da, dsilu)
        dw1 = fd.ops.matmul(t(dh, [1, 0]), y)
        dy = fd.ops.matmul(dh, w1)
        dg = fd.ops.sum(fd.ops.mul(dy, n), [0])
        dn = fd.ops.mul(dy, g)
        proj = fd.ops.mean(fd.ops.mul(dn, n), [1], keepdim=True)
        dx = fd.ops.mul(r, fd.ops.sub(dn, fd.ops.mul(n, proj)))
        for out in (dx, dg, dw1, dw2):
            fd.add_output(out)
    return fd


_FUSIONS = {}


def _fusion(name):
    if name not in _FUSIONS:
        _FUSIONS[name] = {"fw": forward_fusion,
                          "bw": backward_fusion}[name]()
    return _FUSIONS[name]


class FusedMLP(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, g, w1, w2):
        ctx.save_for_backward(x, g, w1, w2)
        return _fusion("fw").execute([x, g, w1, w2])[0]

    @staticmethod
    def backward(ctx, grad_out):
        x, g, w1, w2 = ctx.saved_tensors
        return tuple(_fusion("bw").execute(
            [x, g, w1, w2, grad_out.contiguous()]))


class Block(torch.nn.Module):
    """The layer's parameters; forward through the fusions or in eager."""

    def __init__(self, fused=True):
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        self.g = torch.nn.Parameter(1 + 0.1 * torch.randn(HIDDEN,
                                                          generator=gen))
        self.w1 = torch.nn.Parameter(torch.randn(FFN, HIDDEN, generator=gen)
                                     / HIDDEN ** 0.5)
        self.w2 = torch.nn.Parameter(torch.randn(HIDDEN, FFN, generator=gen)
                                     / FFN ** 0.5)
        self.fused = fused

    def forward(self, x):
        if self.fused:
            return FusedMLP.apply(x, self.g, self.w1, self.w2)
        n = x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS)
        h = torch.nn.functional.linear(n * self.g, self.w1)
        return torch.nn.functional.linear(torch.nn.functional.silu(h),
                                          self.w2)


def data():
    """The global batch (inputs, targets): rank r trains on rows
    [r * BATCH, (r + 1) * BATCH)."""
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(WORLD * BATCH, HIDDEN, generator=gen)
    return x, torch.randn(WORLD * BATCH, HIDDEN, generator=gen)


def loss_of(model, x, t):
    return ((model(x) - t) ** 2).mean()


def train_step(model, x, t, average=None):
    """Gradients of one step (average: a function that averages them over
    the ranks, or None), then an SGD step; returns (loss, grads, params)."""
    for p in model.parameters():
        p.grad = None
    loss = loss_of(model, x, t)
    loss.backward()
    if average is not None:
        average(model)
    grads = [p.grad.detach().clone() for p in model.parameters()]
    with torch.no_grad():
        for p in model.parameters():
            p -= LR * p.grad
    return loss.detach(), grads, [p.detach().clone()
                                  for p in model.parameters()]


def reference():
    """One process, the concatenated batch, eager autograd and fusions."""
    x, t = data()
    return {name: train_step(Block(fused=fused), x, t)
            for name, fused in (("eager", False), ("fused", True))}


def _all_reduce_average(model):
    import torch.distributed as dist
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
        p.grad /= dist.get_world_size()


def collective_graph():
    """x -> sin * 2 -> all_reduce (in place, eager) -> + 1 -> exp: a graph
    with torch.distributed.all_reduce as a call_function node."""
    import torch.distributed as dist
    g = torch.fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(operator.mul, (g.call_function(torch.sin, (x,)), 2.0))
    g.call_function(dist.all_reduce, (y,))
    z = g.call_function(torch.exp, (g.call_function(operator.add,
                                                    (y, 1.0)),))
    g.output((z,))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def _compiled_collective(rank):
    from nvfuser.fx import compile_graph
    gm = collective_graph()
    x = torch.arange(6, dtype=torch.float32) + rank
    c = compile_graph(gm, [x])
    return dict(got=c(x)[0], regions=len(c.nvfuser_regions),
                unsupported=dict(c.nvfuser_unsupported))


def worker(rank, init_method, outdir):
    """One rank: the step with all_reduce'd gradients, the step under DDP,
    and the FX graph with a collective; writes rank<r>.pt."""
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=init_method, rank=rank,
                            world_size=WORLD,
                            timeout=datetime.timedelta(seconds=30))
    try:
        x, t = data()
        rows = slice(rank * BATCH, (rank + 1) * BATCH)
        x, t = x[rows], t[rows]
        out = {"manual": train_step(Block(), x, t, _all_reduce_average)}
        ddp = torch.nn.parallel.DistributedDataParallel(Block())
        out["ddp"] = train_step(ddp, x, t)
        out["fx"] = _compiled_collective(rank)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    torch.save(out, os.path.join(outdir, "rank%d.pt" % rank))
    # Ends here, without the interpreter's teardown: on a loaded 2-core
    # machine (CI, sessions 17 and 18) rank 0 hung after this function had
    # returned, its stack at multiprocessing's call of the target with no
    # frame of ours, i.e. inside a destructor of the locals above (the DDP
    # module, the gloo group). The results are saved; nothing is left to do.
    os._exit(0)
