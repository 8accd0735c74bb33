"""The benchmarks' shared timing helpers and the model benchmark's logic
that needs no GPU and no transformers: sanity warnings, formatting, the
hook that reads which ATen ops our FX backend left to eager, the Markdown
of synthetic rows and the command line."""

import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "benchmarks"))
import bench_utils  # noqa: E402
import model_bench as mb  # noqa: E402


def test_measure_on_the_cpu():
    calls = []
    res = bench_utils.measure(lambda: calls.append(1), reps=3, cuda=False,
                              warmup=2)
    assert res["ms"] >= 0 and res["kernel_ms"] is None
    assert res["kernels"] is None
    assert len(calls) == 2 + 1 + 3  # warm-up, the timer's own, the reps


def test_fresh_compile_eager_is_the_function_itself():
    def f(x):
        return x + 1
    assert bench_utils.fresh_compile(lambda: f, "eager") is f


def test_sanity_warnings():
    res = {"eager": dict(ms=10.0, kernels=300),
           "inductor": dict(ms=8.0, kernels=100),
           "nvfuser": dict(ms=9.0, kernels=300),
           "fast": dict(ms=0.5, kernels=3),
           "broken": dict(error="x")}
    w = bench_utils.sanity_warnings(res, ["inductor", "nvfuser", "fast",
                                          "broken"])
    assert len(w) == 2
    assert "nvfuser launches as many kernels as eager" in w[0]
    assert "fast takes" in w[1]


def test_fmt_measure():
    assert bench_utils.fmt_measure(dict(ms=1.0, kernel_ms=0.5,
                                        kernels=7)) == "1.000 (0.500, 7)"
    assert bench_utils.fmt_measure(dict(ms=1.0, kernel_ms=None)) == "1.000"
    assert bench_utils.fmt_measure(dict(unavailable="no")) == "no"
    assert bench_utils.fmt_measure(None) == "-"


def test_kernel_kinds():
    assert mb.kind_of("nvfuser_pointwise_g3") == "ours"
    assert mb.kind_of("triton_poi_fused_add_0") == "triton"
    assert mb.kind_of("void at::native::unrolled_elementwise_kernel<>") == \
        "aten copy/elementwise"
    assert mb.kind_of("sm90_xmma_gemm_bf16bf16") == "gemm"
    assert mb.kind_of("Memcpy DtoD (Device -> Device)") == "memcpy/memset"
    kinds = mb.by_kind({"nvfuser_a": [3.0, 1], "nvfuser_b": [2.0, 2]})
    assert kinds["ours"] == [5.0, 3]


def test_tracker_reads_eager_ops_and_reasons():
    class M(torch.nn.Module):
        def forward(self, x, idx):
            y = torch.sin(x) * 2 + 1
            z = torch.take(y, idx)  # no translation (embedding has one)
            return torch.relu(z).sum(-1), y.cumprod(0)

    tracker = mb.FxTracker()
    assert tracker.start()
    try:
        from nvfuser.fx import backend
        backend.compile_graph(torch.fx.symbolic_trace(M()),
                              [torch.randn(4, 8), torch.tensor([0, 2])])
        s = tracker.summary()
    finally:
        tracker.stop()
    from nvfuser.fx import partition
    assert backend.compile_graph is partition.compile_graph  # restored
    assert s["eager_ops"] == {"take": 1, "cumprod": 1}
    assert s["eager_reasons"]["cumprod"] == [
        "no translation for cumprod (not an ATen operator)"]
    assert s["graphs"][0]["regions"] == 2
    assert s["graphs"][0]["kind"] == "inference"
    assert not s["graphs"][0]["dynamic"]
    assert 0 < s["coverage"] < 1


def test_markdown_of_rows():
    a = mb.parse(["--quick", "--models", "llama,mistral", "--md", "x.md"])
    meta = dict(date="today", torch="2.x", transformers="5.x", gpu="H200",
                args=vars(a))
    m = dict(ms=10.0, kernel_ms=9.0, kernels=300,
             kinds=mb.by_kind({"nvfuser_x": [5.0, 2]}))
    rows = [
        dict(model="llama", backend="eager", first_call_s=1.0, train=m,
             infer=m, graph_breaks=0, graphs=0, loss_rel_diff=0.0,
             worst_grad_rel_l2=0.0, worst_grad_param="w"),
        dict(model="llama", backend="nvfuser", first_call_s=3.0, train=m,
             infer=dict(error="RuntimeError: x"), graph_breaks=1, graphs=3,
             loss_rel_diff=1e-3, worst_grad_rel_l2=float("inf"),
             worst_grad_param="lm_head.weight",
             warnings=["WARNING [llama train step]: nvfuser launches ..."],
             dynamic=dict(shape=[3, 128], ran=False,
                          error="TypeError: y", new_graphs=2,
                          verdict="recompiled with symbolic shapes"),
             fallbacks=dict(graphs=[dict(kind="forward", regions=4)],
                            coverage=0.5, eager_ops={"embedding": 2},
                            region_fallback_calls=3)),
        dict(model="mistral", backend="nvfuser", error_stage="first train "
             "step", error="RuntimeError: view size is not | compatible"),
    ]
    md = mb.markdown(rows, meta)
    assert "| llama | eager | 1.00 | 10.000 (9.000, 300) |" in md
    assert "| mistral | nvfuser | ERROR (first train step) RuntimeError: " \
        "view size is not / compatible |" in md
    assert "inf (lm_head.weight)" in md
    assert "3 region calls fell back to eager" in md
    assert "infer ERROR RuntimeError: x" in md
    assert "| llama | nvfuser | [3, 128] | no: TypeError: y |" in md
    assert "| llama | forward 4 | 50% of nodes in regions | embedding x2 |" \
        in md
    assert "WARNING [llama train step]" in md


def test_command_line():
    a = mb.parse(["--quick", "--hidden", "256", "--backends",
                  "nvfuser,eager"])
    assert a.hidden == 256 and a.seq == mb.SIZES["quick"]["seq"]
    assert a.backends == ["eager", "nvfuser"]  # eager first: the reference
    assert a.models == mb.DEFAULT_MODELS.split(",")
    argv = mb.child_argv(a, "llama", "r.json", "r.md")
    b = mb.parse(argv[2:])
    assert b.child and b.models == ["llama"] and b.hidden == 256
    with pytest.raises(SystemExit):
        mb.parse(["--models", "no_such_model"])


def test_gpu_gaps_names_the_late_launch_and_the_blocking_calls():
    import gpu_gaps

    def span(cat, name, ts, dur, tid=1, corr=None):
        e = dict(cat=cat, name=name, ts=ts, dur=dur, tid=tid)
        if corr is not None:
            e["args"] = dict(correlation=corr)
        return e

    events = [
        span("python_function", "model.py(12): forward", 0, 500),
        span("python_function", "/x/torch/nn/module.py(1): _call", 0, 500),
        span("cpu_op", "aten::mm", 5, 10),
        span("cuda_runtime", "cudaLaunchKernel", 6, 2, corr=1),
        span("cpu_op", "aten::copy_", 300, 30),
        span("cuda_runtime", "cudaMemcpy", 301, 20, corr=2),
        span("python_function", "runtime.py(7): run", 400, 10),
        span("cuda_driver", "cuLaunchKernel", 401, 2, corr=3),
        span("kernel", "gemm", 10, 100, tid=7, corr=1),
        span("gpu_memcpy", "Memcpy DtoH", 310, 5, tid=7, corr=2),
        span("kernel", "add_kernel", 405, 3, tid=7, corr=3),
    ]
    idle, gaps, blocking = gpu_gaps.gpu_gaps(events, min_gap_us=50)
    assert idle == (310 - 110) + (405 - 315)
    assert [(g[0], g[1], g[2]) for g in gaps] == [
        (200, "gemm", "Memcpy DtoH"), (90, "Memcpy DtoH", "add_kernel")]
    # The launch's innermost op first, then Python frames outside torch
    # (a driver-API launch, as our runtime's, has only frames).
    assert gaps[1][3] == ["runtime.py(7): run", "model.py(12): forward"]
    assert blocking == [("cudaMemcpy", 20, ["aten::copy_",
                                            "model.py(12): forward"])]


def test_kernel_profiles_leave_out_the_l2_flushes_and_refuse_a_collision():
    fill = "fill<unsigned char>"
    events = [(fill, 80.0), ("nvfuser_pointwise_g0", 30.0), (fill, 81.0),
              ("nvfuser_pointwise_g0", 31.0)]
    kept = bench_utils.without_flushes(events, frozenset([fill]), 1, 2)
    assert kept == [("nvfuser_pointwise_g0", 30.0),
                    ("nvfuser_pointwise_g0", 31.0)]
    # The measured function launched the flush's kernel too: its time
    # cannot be told apart, so no number rather than a wrong one.
    with pytest.raises(RuntimeError, match="launches the L2 flush's kernel"):
        bench_utils.without_flushes(events + [(fill, 5.0)],
                                    frozenset([fill]), 1, 2)


def test_the_l2_flush_reads_by_default_and_refuses_an_unknown_mode(
        monkeypatch):
    # A read leaves the L2 clean; a misspelt mode must not quietly measure
    # the write flush under another label.
    monkeypatch.delenv("NVF_BENCH_FLUSH", raising=False)
    assert bench_utils.flush_mode() == "read"
    monkeypatch.setenv("NVF_BENCH_FLUSH", "Read")
    with pytest.raises(ValueError, match="NVF_BENCH_FLUSH='Read'"):
        bench_utils.flush_mode()
    buf = torch.zeros(2 * 4096, dtype=torch.uint8)
    with pytest.raises(ValueError, match="L2 flush 'Read'"):
        bench_utils.l2_flush(buf, "Read")
    bench_utils.l2_flush(buf, "read")  # one row max per 4 KiB: any device
    bench_utils.l2_flush(buf, "write")
    assert int(buf.sum()) == 0


def test_aten_host_cost_says_it_measured_nothing_without_a_gpu():
    import subprocess
    import sys
    if torch.cuda.is_available():
        pytest.skip("has a GPU: the script measures")
    script = os.path.join(os.path.dirname(__file__), "..", "..",
                          "benchmarks", "aten_host_cost.py")
    done = subprocess.run([sys.executable, script], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "needs a CUDA GPU" in done.stdout and "nothing measured" in \
        done.stdout
