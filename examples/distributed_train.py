"""Data-parallel training of a small transformers causal LM through
torch.compile (issue 19): DDP or FSDP2, nvfuser / inductor / eager.

    torchrun --nproc-per-node 2 examples/distributed_train.py \\
        [--mode ddp|fsdp2] [--backend nvfuser|inductor|eager] [--steps N] \\
        [--model llama] [--device cuda|cpu] [--dist-backend nccl|gloo] \\
        [--share-gpu] [--check] [--dtype bf16|fp32] \\
        [--layers 2 --hidden 256 ...]

The model is built from a config (random weights, offline, no hub) by
benchmarks/model_bench_models.py's make_config/build_model, seeded alike
on every rank. Each step trains on a global batch of --batch sequences per rank
(rank r takes its slice); rank 0 prints the global loss (mean over the
ranks) and the step time. With --check, rank 0 then trains an eager copy of
the same initial model in one process on the whole global batch and
compares the loss curves (exit status 1 when a step differs by more than
--tol, relative).

Needs torch >= 2.0 (dynamo) unless --backend eager, torch >= 2.4 for
--mode fsdp2, and transformers. The CPU runs with --device cpu
--dist-backend gloo (gloo must all-reduce the --dtype; older gloo cannot
reduce bfloat16: use --dtype fp32 there). With one GPU, --dist-backend
gloo --share-gpu runs both ranks on it.
"""

import argparse
import datetime
import importlib
import os
import sys
import time
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SIZES = dict(layers=2, hidden=256, heads=8, kv_heads=2, intermediate=704,
             vocab=4096, seq=128, batch=2)


class SetupError(RuntimeError):
    """Something this torch, machine or launch cannot do; its message says
    what to change."""


def model_bench():
    """benchmarks/model_bench_models.py as a module (its MODELS,
    make_config and build_model), or None where it cannot be imported."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import model_bench_models as mb
        return mb
    except Exception:  # noqa: BLE001 (then the llama fallback below)
        return None


def model_names():
    mb = model_bench()
    return sorted(mb.MODELS) if mb is not None else ["llama"]


def parse(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--mode", default="ddp", choices=("ddp", "fsdp2"))
    p.add_argument("--backend", default="nvfuser",
                   choices=("nvfuser", "inductor", "eager"))
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--model", default="llama", choices=model_names())
    p.add_argument("--device", default=None, choices=("cuda", "cpu"),
                   help="default: cuda where available")
    p.add_argument("--dist-backend", default=None, choices=("nccl", "gloo"),
                   help="default: nccl on cuda, gloo on cpu")
    p.add_argument("--share-gpu", action="store_true",
                   help="ranks share GPUs (rank r on cuda:r mod #GPUs); "
                        "gloo only: NCCL needs a GPU per rank")
    p.add_argument("--dtype", default="bf16", choices=("bf16", "fp32"))
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--attn", default="sdpa",
                   help="attn_implementation (sdpa, eager, ...)")
    p.add_argument("--check", action="store_true",
                   help="compare the loss curve with an eager single-"
                        "process run on the global batch (rank 0)")
    p.add_argument("--tol", type=float, default=None,
                   help="relative loss tolerance of --check (default 2e-2 "
                        "for bf16, 1e-3 for fp32)")
    for k, v in SIZES.items():
        p.add_argument("--" + k.replace("_", "-"), type=int, default=v)
    a = p.parse_args(argv)
    if a.device is None:
        a.device = "cuda" if torch.cuda.is_available() else "cpu"
    if a.dist_backend is None:
        a.dist_backend = "nccl" if a.device == "cuda" else "gloo"
    if a.dist_backend == "nccl" and a.device != "cuda":
        p.error("nccl needs --device cuda (use --dist-backend gloo)")
    if a.share_gpu and (a.device != "cuda" or a.dist_backend != "gloo"):
        p.error("--share-gpu needs --device cuda --dist-backend gloo (NCCL "
                "needs a GPU per rank)")
    if a.tol is None:
        a.tol = 2e-2 if a.dtype == "bf16" else 1e-3
    if a.steps < 1:
        p.error("--steps must be at least 1")
    a.no_cache = True  # build_model's config: no KV cache in training
    return a


# ------------------------------------------------------------ the setup
def launch_env(environ=None):
    """(rank, local_rank, world_size) from torchrun's environment."""
    env = os.environ if environ is None else environ
    missing = [k for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE")
               if k not in env]
    if missing:
        raise SetupError("%s not set: launch with torchrun --nproc-per-node "
                         "2 %s" % (", ".join(missing), sys.argv[0]))
    return int(env["RANK"]), int(env["LOCAL_RANK"]), int(env["WORLD_SIZE"])


def check_torch(a, torch_module=torch):
    """SetupError when this torch cannot run the configuration."""
    if a.backend != "eager" and not hasattr(torch_module, "compile"):
        raise SetupError("--backend %s needs torch.compile (torch >= 2.0); "
                         "this is torch %s (--backend eager runs without)"
                         % (a.backend, torch_module.__version__))
    if a.mode == "fsdp2":
        fully_shard_fn()


def fully_shard_fn():
    """torch's FSDP2 fully_shard (torch >= 2.4), else SetupError. Any
    import failure counts (torch 1.13's FSDP does not even import on
    Python 3.11: a ValueError of dataclasses)."""
    errors = []
    for module in ("torch.distributed.fsdp",  # torch >= 2.6
                   "torch.distributed._composable.fsdp"):
        try:
            return getattr(importlib.import_module(module), "fully_shard")
        except Exception as e:  # noqa: BLE001 (ImportError, AttributeError..)
            errors.append("%s: %s" % (type(e).__name__,
                                      str(e).splitlines()[0][:80]))
    raise SetupError("--mode fsdp2 needs torch.distributed.fsdp.fully_shard "
                     "(torch >= 2.4); this is torch %s (%s)" % (
                         torch.__version__, "; ".join(errors)))


def require_transformers():
    try:
        import transformers
        return transformers
    except ImportError:
        raise SetupError("transformers is not installed: pip install "
                         "transformers (the model is built from a config, "
                         "offline)") from None


def device_of(a, local_rank):
    if a.device == "cpu":
        return torch.device("cpu")
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n == 0 or (local_rank >= n and not a.share_gpu):
        raise SetupError("local rank %d needs cuda:%d; this machine has %d "
                         "GPU(s)%s" % (local_rank, local_rank, n,
                                       "" if n == 0 else
                                       " (gloo: --share-gpu)"))
    index = local_rank % n
    torch.cuda.set_device(index)
    return torch.device("cuda", index)


def check_dtype_reduces(a, device):
    """gloo of older torch cannot all-reduce bfloat16: say so up front."""
    import torch.distributed as dist
    t = torch.ones(1, dtype=torch_dtype(a), device=device)
    try:
        dist.all_reduce(t)
    except RuntimeError as e:
        raise SetupError("%s cannot all-reduce %s (%s): use --dtype fp32" % (
            a.dist_backend, t.dtype, str(e).splitlines()[0])) from None


def torch_dtype(a):
    return {"bf16": torch.bfloat16, "fp32": torch.float32}[a.dtype]


def build(a, device):
    """The causal LM, seeded alike everywhere
    (model_bench_models.build_model)."""
    require_transformers()
    mb = model_bench()
    if mb is not None:
        model, _ = mb.build_model(a.model, a, device)
        return model
    import transformers
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=a.vocab, hidden_size=a.hidden,
        intermediate_size=a.intermediate, num_hidden_layers=a.layers,
        num_attention_heads=a.heads, num_key_value_heads=a.kv_heads,
        max_position_embeddings=max(4096, 2 * a.seq), use_cache=False)
    return transformers.LlamaForCausalLM(cfg).to(torch_dtype(a)).to(
        device).train()


def wrap(model, a, device, world):
    if a.mode == "ddp":
        ids = [device.index] if device.type == "cuda" else None
        model = torch.nn.parallel.DistributedDataParallel(model,
                                                          device_ids=ids)
    else:
        from torch.distributed.device_mesh import init_device_mesh
        fully_shard = fully_shard_fn()
        mesh = init_device_mesh(device.type, (world,))
        for layer in model.model.layers:
            fully_shard(layer, mesh=mesh)
        fully_shard(model, mesh=mesh)
    if a.backend == "eager":
        return model
    backend = a.backend
    if backend == "nvfuser":
        sys.path.insert(0, os.path.join(ROOT, "python"))
        from nvfuser.fx import nvfuser_backend
        backend = nvfuser_backend
    return torch.compile(model, backend=backend)


# ------------------------------------------------------------- training
def global_batch(a, step, world, device):
    """The token ids of one step's global batch: [world * batch, seq]."""
    gen = torch.Generator().manual_seed(1000 + step)
    ids = torch.randint(0, a.vocab, (world * a.batch, a.seq), generator=gen)
    return ids.to(device)


def shard(ids, rank, world):
    """Rank's rows of the global batch."""
    n = ids.shape[0]
    if n % world:
        raise ValueError("a batch of %d rows does not split over %d ranks"
                         % (n, world))
    per = n // world
    return ids[rank * per:(rank + 1) * per]


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train(model, a, device, rank, world, log=print):
    """Losses of --steps steps (each the global-batch loss: the ranks'
    mean); rank 0 logs each step and its time."""
    import torch.distributed as dist
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    losses = []
    for step in range(a.steps):
        ids = global_batch(a, step, world, device)
        if world > 1:
            ids = shard(ids, rank, world)
        _sync(device)
        t0 = time.perf_counter()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        _sync(device)
        ms = 1e3 * (time.perf_counter() - t0)
        mean = loss.detach().float().clone()
        if world > 1:
            dist.all_reduce(mean)
            mean /= world
        losses.append(float(mean))
        if rank == 0:
            log("step %3d  loss %.5f  %9.1f ms" % (step, losses[-1], ms))
    return losses


def compare_curves(got, ref, tol):
    """(ok, lines): each step's loss against the reference, relative."""
    lines, ok = [], len(got) == len(ref)
    for i, (x, y) in enumerate(zip(got, ref)):
        rel = abs(x - y) / max(abs(y), 1e-12)
        bad = not rel <= tol  # NaN is bad
        ok = ok and not bad
        lines.append("step %3d  %.5f  ref %.5f  rel %.1e%s" % (
            i, x, y, rel, "  > tol" if bad else ""))
    if len(got) != len(ref):
        lines.append("%d steps against %d reference steps" % (
            len(got), len(ref)))
    return ok, lines


def reference_losses(a, device, world):
    """One process, eager, the global batch, the same initial weights."""
    ref = types.SimpleNamespace(**vars(a))
    ref.batch = a.batch * world
    return train(build(a, device), ref, device, 0, 1, log=lambda s: None)


def nvfuser_summary():
    """What the nvfuser backend left in eager, by reason (rank 0)."""
    from nvfuser.fx import partition
    graphs = partition.COMPILED_GRAPHS
    reasons = {}
    for g in graphs:
        for why in g["unsupported"].values():
            reasons[why] = reasons.get(why, 0) + 1
    lines = ["nvfuser: %d graphs, %d regions, %d nodes in eager" % (
        len(graphs), sum(g["regions"] for g in graphs),
        sum(reasons.values()))]
    for why, n in sorted(reasons.items(), key=lambda x: -x[1])[:15]:
        lines.append("  %4d  %s" % (n, why[:150]))
    return lines


def run(a):
    import torch.distributed as dist
    check_torch(a)
    require_transformers()
    rank, local_rank, world = launch_env()
    device = device_of(a, local_rank)
    dist.init_process_group(a.dist_backend, rank=rank, world_size=world,
                            timeout=datetime.timedelta(minutes=10))
    try:
        check_dtype_reduces(a, device)
        if rank == 0:
            print("torch %s, %s %s on %d ranks (%s), backend %s, %s" % (
                torch.__version__, a.model, a.mode, world, a.dist_backend,
                a.backend, a.dtype))
        model = wrap(build(a, device), a, device, world)
        losses = train(model, a, device, rank, world)
        ok = True
        if rank == 0 and a.backend == "nvfuser":
            print("\n".join(nvfuser_summary()))
        if a.check and rank == 0:
            ok, lines = compare_curves(
                losses, reference_losses(a, device, world), a.tol)
            print("\n".join(["loss against eager, one process (tol %.0e):"
                             % a.tol] + lines))
            print("check: %s" % ("PASS" if ok else "FAIL"))
        dist.barrier()
    finally:
        dist.destroy_process_group()
    return 0 if ok else 1


def main(argv=None):
    a = parse(argv)
    try:
        return run(a)
    except SetupError as e:
        print("distributed_train: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
