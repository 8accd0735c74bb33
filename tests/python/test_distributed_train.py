"""examples/distributed_train.py, the parts that run without dynamo,
transformers or a second GPU: arguments, launch checks and their
messages, the batch split, the training loop (one process, a stand-in
model) and the loss-curve check. The torchrun runs themselves are GPU-side
(README, "Distributed training")."""

import importlib.util
import os
import subprocess
import sys
import types

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "distributed_train.py")


def _load():
    spec = importlib.util.spec_from_file_location("distributed_train",
                                                  SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


dt = _load()


def test_help_runs_without_dynamo_or_transformers():
    r = subprocess.run([sys.executable, SCRIPT, "--help"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for word in ("torchrun", "--mode", "fsdp2", "--backend", "--check",
                 "--dist-backend"):
        assert word in r.stdout


def test_defaults_follow_the_device():
    a = dt.parse(["--device", "cpu"])
    assert (a.dist_backend, a.mode, a.backend, a.dtype) == (
        "gloo", "ddp", "nvfuser", "bf16")
    assert a.tol == 2e-2
    assert dt.parse(["--device", "cpu", "--dtype", "fp32"]).tol == 1e-3
    assert dt.parse(["--device", "cuda"]).dist_backend == "nccl"


@pytest.mark.parametrize("argv", [
    ["--device", "cpu", "--dist-backend", "nccl"],
    ["--steps", "0"], ["--mode", "fsdp"], ["--backend", "cudagraphs"],
    ["--device", "cpu", "--share-gpu"],
    ["--device", "cuda", "--dist-backend", "nccl", "--share-gpu"]])
def test_bad_arguments_exit_with_usage(argv, capsys):
    with pytest.raises(SystemExit) as e:
        dt.parse(argv)
    assert e.value.code == 2


def test_share_gpu_maps_ranks_onto_the_gpus(monkeypatch):
    a = dt.parse(["--device", "cuda", "--dist-backend", "gloo",
                  "--share-gpu"])
    chosen = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    assert [dt.device_of(a, r) for r in (0, 1)] == [
        torch.device("cuda", 0)] * 2
    assert chosen == [0, 0]
    a.share_gpu = False
    with pytest.raises(dt.SetupError, match=r"local rank 1 needs cuda:1; "
                       r"this machine has 1 GPU\(s\) \(gloo: --share-gpu\)"):
        dt.device_of(a, 1)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    a.share_gpu = True
    with pytest.raises(dt.SetupError, match="this machine has 0 GPU"):
        dt.device_of(a, 0)


def test_launch_env_says_to_use_torchrun():
    with pytest.raises(dt.SetupError, match="torchrun --nproc-per-node 2"):
        dt.launch_env({"RANK": "0"})
    assert dt.launch_env({"RANK": "1", "LOCAL_RANK": "1",
                          "WORLD_SIZE": "2"}) == (1, 1, 2)


def test_compiled_backends_need_dynamo():
    old = types.SimpleNamespace(__version__="1.13.0")  # no torch.compile
    for backend in ("nvfuser", "inductor"):
        a = dt.parse(["--device", "cpu", "--backend", backend])
        with pytest.raises(dt.SetupError, match="torch >= 2.0"):
            dt.check_torch(a, old)
    dt.check_torch(dt.parse(["--device", "cpu", "--backend", "eager"]), old)


def test_fsdp2_needs_fully_shard():
    try:
        dt.fully_shard_fn()
    except dt.SetupError as e:
        assert "torch >= 2.4" in str(e) and torch.__version__ in str(e)
    else:
        pytest.skip("torch %s has fully_shard" % torch.__version__)


def test_missing_transformers_is_a_clear_error(capsys):
    try:
        import transformers  # noqa: F401
        pytest.skip("transformers is installed")
    except ImportError:
        pass
    argv = ["--device", "cpu", "--backend", "eager"]
    assert dt.main(argv) == 2
    assert "transformers is not installed" in capsys.readouterr().err


def test_ranks_split_the_global_batch():
    a = dt.parse(["--device", "cpu", "--batch", "3", "--seq", "5"])
    ids = dt.global_batch(a, 0, 2, torch.device("cpu"))
    assert ids.shape == (6, 5)
    parts = [dt.shard(ids, r, 2) for r in range(2)]
    assert torch.equal(torch.cat(parts), ids)
    # The one-process reference (batch * world rows, world 1) sees the
    # same global batch.
    ref = types.SimpleNamespace(**vars(a))
    ref.batch = 6
    assert torch.equal(dt.global_batch(ref, 0, 1, torch.device("cpu")), ids)
    assert not torch.equal(dt.global_batch(a, 1, 2, torch.device("cpu")),
                           ids)
    with pytest.raises(ValueError, match="does not split"):
        dt.shard(ids[:5], 0, 2)


class _TinyLM(torch.nn.Module):
    """model(input_ids=, labels=).loss, as a causal LM."""

    def __init__(self, vocab):
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(vocab, 16)
        self.out = torch.nn.Linear(16, vocab)

    def forward(self, input_ids, labels):
        logits = self.out(self.emb(input_ids))[:, :-1]
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))
        return types.SimpleNamespace(loss=loss)


def test_training_loop_logs_each_step_and_learns():
    a = dt.parse(["--device", "cpu", "--steps", "6", "--vocab", "32",
                  "--seq", "8", "--batch", "4", "--lr", "0.5"])
    lines = []
    model = _TinyLM(32)
    w0 = model.out.weight.detach().clone()
    losses = dt.train(model, a, torch.device("cpu"), 0, 1, log=lines.append)
    assert not torch.equal(model.out.weight, w0)  # the optimizer stepped
    assert len(losses) == len(lines) == 6
    assert lines[0].startswith("step   0  loss ") and lines[0].endswith("ms")
    # Random tokens: about log(32) = 3.47 each step.
    assert all(abs(x - 3.47) < 0.5 for x in losses), losses
    again = dt.train(_TinyLM(32), a, torch.device("cpu"), 0, 1,
                     log=lambda s: None)
    assert again == losses  # same seeds, same curve


def test_compare_curves():
    ok, lines = dt.compare_curves([2.0, 1.5], [2.0, 1.51], 1e-2)
    assert ok and len(lines) == 2
    ok, lines = dt.compare_curves([2.0, 1.5], [2.0, 1.6], 1e-2)
    assert not ok and lines[1].endswith("> tol")
    assert not dt.compare_curves([float("nan")], [1.0], 1e-2)[0]
    ok, lines = dt.compare_curves([1.0], [1.0, 0.9], 1e-2)
    assert not ok and "1 steps against 2" in lines[-1]


def test_gloo_dtype_probe(tmp_path):
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("torch.distributed with gloo is not available")
    dist.init_process_group("gloo", init_method="file://%s" % (
        tmp_path / "store"), rank=0, world_size=1)
    try:
        dt.check_dtype_reduces(dt.parse(["--device", "cpu", "--dtype",
                                         "fp32"]), torch.device("cpu"))
        a = dt.parse(["--device", "cpu"])
        try:
            dt.check_dtype_reduces(a, torch.device("cpu"))
        except dt.SetupError as e:  # torch 1.13's gloo: no bfloat16
            assert "use --dtype fp32" in str(e) and "bfloat16" in str(e)
    finally:
        dist.destroy_process_group()
