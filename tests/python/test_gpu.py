"""Generated kernels on the GPU against PyTorch (skipped without a GPU)."""

import os
import re
import subprocess
import sys

import pytest
import torch

from nvfuser import DataType, FusionDefinition

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "benchmarks", "rope"))
import rope_fusions as rf  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA GPU")

TORCH = {DataType.BFloat16: torch.bfloat16, DataType.Half: torch.float16,
         DataType.Float: torch.float32}


@pytest.mark.parametrize("name", sorted(rf.VARIANTS))
def test_rope_on_gpu(name):
    cfg = dict(B=2, T=64, H=8, G=2, D=64)
    define, make, eager = rf.VARIANTS[name]
    with FusionDefinition() as fd:
        define(fd, cfg)
    inputs = make(cfg, device="cuda")
    outs = fd.execute(inputs)
    seg = fd.last_segmentation()
    # Every group is a generated kernel (the backward's GQA sums too).
    generated = [g for g in seg["groups"]
                 if g["scheduler"] in ("pointwise", "reduction")]
    assert len(fd.last_cuda_code()) == len(generated) == len(seg["groups"])
    if name == "litgpt_backward":
        ref = eager(cfg, *inputs)[0]
        rel = (outs[0].float() - ref).norm() / ref.norm()
        assert rel < 1e-2
        return
    for o, r in zip(outs, eager(cfg, *inputs)):
        torch.testing.assert_close(o, r, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", [DataType.BFloat16, DataType.Half,
                                   DataType.Float])
def test_elementwise_dtypes_noncontiguous_and_expanded(dtype):
    td = TORCH[dtype]
    x = torch.randn(64, 96, device="cuda", dtype=td).t()  # strided
    e = torch.randn(1, 64, device="cuda", dtype=td).expand(96, 64)
    with FusionDefinition() as fd:
        tx, te = fd.from_pytorch(x), fd.from_pytorch(e)
        y = fd.ops.add(fd.ops.mul(tx, te), fd.ops.sigmoid(tx))
        fd.add_output(fd.ops.cast(y, dtype))
    (out,) = fd.execute([x, e])
    ref = (x.float() * e.float() + torch.sigmoid(x.float())).to(td)
    torch.testing.assert_close(out, ref, rtol=1e-2, atol=1e-2)
    assert len(fd.last_cuda_code()) == 1


def test_pad_cat_reshape_permute_on_gpu():
    a = torch.randn(4, 6, 8, device="cuda")
    b = torch.randn(8, 6, 4, device="cuda")
    with FusionDefinition() as fd:
        ta, tb = fd.from_pytorch(a), fd.from_pytorch(b)
        r = fd.ops.reshape(fd.ops.reshape(ta, [24, 8]), [4, 6, 8])
        p = fd.ops.pad(fd.ops.slice(r, [0, 0, 1], [4, 6, 8]), [0, 1], 2.0)
        c = fd.ops.cat([fd.ops.slice(p, [0, 0, 0], [4, 6, 4]),
                        fd.ops.slice(p, [0, 0, 4], [4, 6, 8])], dim=2)
        fd.add_output(fd.ops.add(c, fd.ops.permute(tb, [2, 1, 0])))
    (out,) = fd.execute([a, b])
    ref = torch.nn.functional.pad(a[:, :, 1:], [0, 1], value=2.0) + \
        b.permute(2, 1, 0)
    torch.testing.assert_close(out, ref)


def test_scalar_inputs_and_iota_on_gpu():
    x = torch.randn(10, device="cuda")
    with FusionDefinition() as fd:
        tx = fd.from_pytorch(x)
        s = fd.define_scalar(None, dtype=DataType.Double)
        i = fd.ops.iota(10, 0, 1, dtype=DataType.Int)
        fd.add_output(fd.ops.add(fd.ops.mul(tx, s), i))
    (out,) = fd.execute([x, 3.0])
    torch.testing.assert_close(out, x * 3 + torch.arange(10, device="cuda"))


def test_negative_bit_input_is_applied_on_gpu():
    # x.conj().imag is a view with torch's negative bit: the kernel reads
    # raw memory, so execute applies the bit first.
    z = torch.randn(16, dtype=torch.complex64, device="cuda")
    x = z.conj().imag
    assert x.is_neg()
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.mul(fd.define_tensor(shape=[-1],
                                                  contiguity=[False]), 2.0))
    (out,) = fd.execute([x])
    torch.testing.assert_close(out, x * 2)


def test_integer_edges_and_large_corrections_on_gpu():
    lo = -2**63
    a = torch.tensor([lo, lo, 7, 5, 3, -1], device="cuda")
    b = torch.tensor([-1, 2, 0, 0, 2**62, -2**62 - 1], device="cuda")
    x = torch.tensor([[1.0, 2.0, 4.0], [5.0, 5.0, 5.0]], device="cuda")
    with FusionDefinition() as fd:
        ta, tb = fd.from_pytorch(a), fd.from_pytorch(b)
        for op in ("div", "fmod", "remainder", "pow"):
            fd.add_output(getattr(fd.ops, op)(ta, tb))
        fd.add_output(fd.ops.var(fd.from_pytorch(x), dims=[1],
                                 correction=5))
    q, f, r, p, v = fd.execute([a, b, x])
    # MIN / -1 wraps; a zero divisor gives -1 and remainder a in kernels.
    assert q.tolist()[:4] == [lo, lo // 2, -1, -1]
    assert f.tolist()[:4] == [0, 0, 7, 5]
    assert r.tolist()[:4] == [0, 0, 7, 5]
    assert p.tolist() == torch.pow(a.cpu(), b.cpu()).tolist()
    torch.testing.assert_close(
        v, torch.tensor([float("inf"), float("nan")], device="cuda"),
        equal_nan=True)


def test_mixed_kernel_and_aten_groups():
    a = torch.randn(32, 64, device="cuda")
    w = torch.randn(16, 64, device="cuda")
    with FusionDefinition() as fd:
        ta, tw = fd.from_pytorch(a), fd.from_pytorch(w)
        h = fd.ops.linear(fd.ops.relu(ta), tw)
        fd.add_output(fd.ops.sum(fd.ops.exp(h), dims=[1]))
    (out,) = fd.execute([a, w])
    ref = torch.exp(torch.nn.functional.linear(torch.relu(a), w)).sum(1)
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-3)


def test_split_reshape_of_strided_input():
    # The reshape's index (h * D + d) multiplies a stride that is not 1.
    base = torch.randn(2, 8, 6 * 8 * 2, device="cuda")
    x = base[..., ::2]  # [2, 8, 48], innermost stride 2
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[2, 8, 48], contiguity=[True, True, False])
        r = fd.ops.permute(fd.ops.reshape(t, [2, 8, 6, 8]), [0, 2, 1, 3])
        s = fd.ops.slice(r, [0, 0, 0, 1], [2, 6, 8, 8], [1, 1, 1, 2])
        fd.add_output(fd.ops.neg(s))
    (out,) = fd.execute([x])
    ref = -x.reshape(2, 8, 6, 8).permute(0, 2, 1, 3)[..., 1::2]
    torch.testing.assert_close(out, ref)


def _scale(shape, dtype=DataType.BFloat16):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=shape, dtype=dtype,
                             contiguity=[False] * len(shape))
        fd.add_output(fd.ops.cast(fd.ops.mul(x, 2.0), dtype))
    return fd


@pytest.mark.parametrize("layout", ["dense", "misaligned", "transposed",
                                    "row_padded", "expanded"])
def test_vectorized_kernel_on_every_layout(layout):
    rows, cols = 96, 256
    base = torch.randn(rows * cols + 8, device="cuda", dtype=torch.bfloat16)
    if layout == "dense":
        x = base[:rows * cols].view(rows, cols)
    elif layout == "misaligned":  # 2 bytes past a 16-byte boundary
        x = base[1:rows * cols + 1].view(rows, cols)
    elif layout == "transposed":
        x = base[:rows * cols].view(cols, rows).t()
    elif layout == "row_padded":  # row stride 264 keeps 16-byte rows
        x = torch.randn(rows, cols + 8, device="cuda",
                        dtype=torch.bfloat16)[:, :cols]
    else:
        x = base[:cols].view(1, cols).expand(rows, cols)
    fd = _scale([rows, cols])
    out = fd.execute([x])[0]
    torch.testing.assert_close(out, x * 2.0)
    code = fd.last_cuda_code()[0]
    vector_load = re.search(r"nvf_vload(_stream)?\(v", code) is not None
    assert vector_load == (layout in ("dense", "row_padded", "expanded")), code


def test_vectorization_can_be_disabled():
    x = torch.randn(64, 128, device="cuda", dtype=torch.bfloat16)
    fd = _scale([64, 128])
    out = fd.execute([x], _disable_options=["vectorization"])[0]
    torch.testing.assert_close(out, x * 2.0)
    assert re.search(r"nvf_vload(_stream)?\(v",
                     fd.last_cuda_code()[0]) is None


def test_horizontal_kernel_with_two_loop_domains():
    q = torch.randn(2, 32, 64, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(2, 8, 64, 128, device="cuda", dtype=torch.float32)
    c = torch.randn(64, 128, device="cuda", dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        tq = fd.from_pytorch(q)
        tk = fd.from_pytorch(k)
        tc = fd.from_pytorch(c)
        cq = fd.ops.broadcast_in_dim(tc, [2, 32, 64, 128], [2, 3])
        ck = fd.ops.broadcast_in_dim(tc, [2, 8, 64, 128], [2, 3])
        fd.add_output(fd.ops.cast(fd.ops.mul(tq, cq), DataType.BFloat16))
        fd.add_output(fd.ops.mul(tk, ck))
    oq, ok = fd.execute([q, k, c])
    assert len(fd.last_segmentation()["groups"]) == 1
    torch.testing.assert_close(oq, (q.float() * c.float()).bfloat16())
    torch.testing.assert_close(ok, k * c.float())
    assert "family 1" in fd.last_cuda_code()[0]


REDUCTIONS = {"sum": torch.sum, "max": torch.amax, "min": torch.amin,
              "prod": torch.prod, "mean": torch.mean}


@pytest.mark.parametrize("op", sorted(REDUCTIONS))
@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1), (2,)])
@pytest.mark.parametrize("dtype", [DataType.BFloat16, DataType.Float])
def test_reduction_kernels(op, dims, dtype):
    x = torch.rand(6, 5, 64, device="cuda", dtype=TORCH[dtype]) + 0.5
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(getattr(fd.ops, op)(t, list(dims)))
    out = fd.execute([x])[0]
    ref = x.float() if dtype == DataType.BFloat16 else x
    if op == "prod":  # torch.prod takes one dim at a time
        for d in sorted(dims, reverse=True):
            ref = torch.prod(ref, d)
    else:
        ref = REDUCTIONS[op](ref, dims)
    torch.testing.assert_close(out.float(), ref.float(), rtol=2e-2,
                               atol=1e-3)
    # Row reductions (dim 2) run as one block per row, the others as a
    # loop per thread: always one generated kernel.
    assert len(fd.last_cuda_code()) == 1, fd.last_segmentation()["text"]


def test_var_mean_noncontiguous_empty_and_size_one():
    x = torch.randn(64, 48, 32, device="cuda").transpose(0, 1)  # [48, 64, 32]
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[48, 64, 32], contiguity=[False] * 3)
        var, mean = fd.ops.var_mean(t, [0, 1], correction=1)
        fd.add_output(var)
        fd.add_output(mean)
    var, mean = fd.execute([x])
    rv, rm = torch.var_mean(x, (0, 1), correction=1)
    torch.testing.assert_close(var, rv, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(mean, rm, rtol=1e-4, atol=1e-5)
    assert len(fd.last_cuda_code()) == 1
    for shape in ([0, 8], [1, 8]):
        y = torch.randn(*shape, device="cuda")
        with FusionDefinition() as fd:
            t = fd.from_pytorch(y)
            fd.add_output(fd.ops.sum(t, [0]))
        torch.testing.assert_close(fd.execute([y])[0], y.sum(0))


@pytest.mark.parametrize("name", ["llama_3_8b_litgpt", "qwen2_5_7b_hf",
                                  "mistral_nemo_hf", "partial_rotary"])
def test_rope_backward_kernels_match_autograd(name):
    import variants as rv
    cfg = rv.small(name, T=32)
    with FusionDefinition() as fd:
        rv.define_backward(fd, cfg, DataType.Float)
    fwd = rv.forward_inputs(cfg, DataType.Float)
    inputs = rv.backward_inputs(cfg, DataType.Float, fwd=fwd)
    outs = fd.execute([t.cuda() if isinstance(t, torch.Tensor) else t
                       for t in inputs])
    seg = fd.last_segmentation()
    assert len(fd.last_cuda_code()) == len(seg["groups"]) <= 2
    for o, e in zip(outs, rv.autograd_backward(cfg, inputs, fwd)):
        torch.testing.assert_close(o.double().cpu(), e, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["fwd", "bwd"])
def test_pair_view_rope_keeps_vector_lanes_on_gpu(mode):
    # The interleaved (torchtune / Meta Llama) RoPE: lanes pick x[2k] and
    # x[2k + 1] from one vector load and their side of the cat per lane
    # (lane tables), not one element per thread.
    import variants as rv
    cfg = rv.small("llama_2_7b_pairs", T=24)
    fwd = rv.forward_inputs(cfg, DataType.BFloat16, device="cuda")
    with FusionDefinition() as fd:
        if mode == "fwd":
            rv.define_forward(fd, cfg)
        else:
            rv.define_backward(fd, cfg)
    ins = fwd if mode == "fwd" else rv.backward_inputs(
        cfg, DataType.BFloat16, device="cuda", fwd=fwd)
    outs = fd.execute(ins)
    code = "\n".join(fd.last_cuda_code())
    assert "// lane table" in code and "i = s * 8;" in code, code
    if mode == "fwd":
        want = rv.eager_forward(cfg, *fwd)
        for o, e in zip(outs, want):
            torch.testing.assert_close(o, e)
    else:
        want = rv.autograd_backward(cfg, [t.cpu() for t in ins],
                                    [t.cpu() for t in fwd])
        for o, e in zip(outs, want):
            torch.testing.assert_close(o.double().cpu(), e, rtol=2e-2,
                                       atol=5e-2)


@pytest.mark.parametrize("T", [24, 4096])
def test_qwen_cos_sin_gradients_use_lane_groups_on_gpu(T):
    # Qwen2.5's cos and sin gradients sum 32 heads of dq * q per slot: a
    # group of lanes per slot (warp shuffles combine it) and one loop for
    # both gradients, checked against autograd.
    import variants as rv
    cfg = rv.sized("qwen2_5_7b_hf", T) if T == 4096 else rv.small(
        "qwen2_5_7b_hf", T=T)
    fwd = rv.forward_inputs(cfg, DataType.BFloat16, device="cuda")
    with FusionDefinition() as fd:
        rv.define_backward(fd, cfg)
    ins = rv.backward_inputs(cfg, DataType.BFloat16, device="cuda", fwd=fwd)
    outs = fd.execute(ins)
    code = "\n".join(fd.last_cuda_code())
    assert "__shfl_xor_sync(nvf_group" in code, code
    assert "2 reductions in one loop" in code, code
    if T != 4096:
        want = rv.autograd_backward(cfg, [t.cpu() for t in ins],
                                    [t.cpu() for t in fwd])
        for o, e in zip(outs, want):
            torch.testing.assert_close(o.double().cpu(), e, rtol=2e-2,
                                       atol=5e-2)
        return
    # At full size a few sums of 32 heads cancel to near 0, where the bf16
    # autograd reference is itself off by more than its tolerance: compare
    # with one thread per slot and a loop per sum instead, which differ
    # only in the float summation order (one bf16 rounding step).
    # At full size the backward is one kernel storing dq's and k's
    # gradients inside the heads' and the groups' loops (loop outputs).
    assert len(fd.last_cuda_code()) == 1
    assert code.count("in this loop") == 2, code
    plain = fd.execute(ins, _disable_options=["threads_per_slot",
                                              "shared_reduction_loops",
                                              "loop_outputs"])
    plain_code = "\n".join(fd.last_cuda_code())
    assert "nvf_group" not in plain_code
    assert "in this loop" not in plain_code
    for o, e in zip(outs, plain):
        torch.testing.assert_close(o, e, rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("shape,perm", [((4, 1000, 1536), (0, 2, 1)),
                                        ((33, 5, 45), (2, 1, 0))])
def test_transposes_go_through_shared_memory_tiles_on_gpu(shape, perm):
    # scheduler/transpose_plan.h: 32 x 32 tiles, partial ones at the edges
    # (33 and 45); both tiled dims at least kMinTransposeExtent (32) long.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=list(shape), dtype=DataType.BFloat16)
        y = fd.ops.cast(fd.ops.permute(x, dims=list(perm)), DataType.Float)
        fd.add_output(fd.ops.cast(fd.ops.mul(y, 2.0), DataType.BFloat16))
    x = torch.randn(*shape, device="cuda").bfloat16()
    out = fd.execute([x])[0]
    assert "nvf_tile0" in fd.last_cuda_code()[0]
    assert out.is_contiguous()
    assert out.shape == tuple(shape[p] for p in perm)
    assert torch.equal(out, (x.permute(*perm).float() * 2).bfloat16())


@pytest.mark.parametrize("name", ["softmax", "rms_norm", "layer_norm"])
def test_normalizations_are_one_row_kernel(name):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "benchmarks"))
    import norm_bench as nb
    x = torch.randn(96, 1536, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(1536, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(1536, device="cuda", dtype=torch.bfloat16)
    fd, inputs, eager = {"softmax": lambda: nb.softmax(x),
                         "rms_norm": lambda: nb.rms_norm(x, w),
                         "layer_norm": lambda: nb.layer_norm(x, w, b)}[name]()
    out = fd.execute(inputs)[0]
    torch.testing.assert_close(out.float(), eager().float(), rtol=2e-2,
                               atol=2e-2)
    seg = fd.last_segmentation()
    assert [g["scheduler"] for g in seg["groups"]] == ["inner_persistent"]
    assert "nvf_block_reduce(" in fd.last_cuda_code()[0]


@pytest.mark.parametrize("shape", [[7, 33], [4, 1000], [3, 1]])
def test_row_sum_of_odd_and_tiny_rows(shape):
    x = torch.randn(*shape, device="cuda")
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.sum(t, [1]))
        fd.add_output(fd.ops.max(t, [1]))
    s, m = fd.execute([x])
    torch.testing.assert_close(s, x.sum(1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(m, x.amax(1))


def test_split_column_sum():
    x = torch.randn(8192, 96, device="cuda")
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.sum(fd.from_pytorch(x), [0]))
    out = fd.execute([x])[0]
    torch.testing.assert_close(out, x.sum(0), rtol=1e-4, atol=1e-3)
    assert "atomicAdd" in fd.last_cuda_code()[0]
    # The workspace each launch leaves zeroed is reused, per stream.
    for _ in range(3):
        torch.testing.assert_close(fd.execute([x])[0], out, rtol=1e-5,
                                   atol=1e-4)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        again = fd.execute([x])[0]
    side.synchronize()
    torch.testing.assert_close(again, out, rtol=1e-5, atol=1e-4)


def test_weight_gradient_is_one_split_kernel():
    # sum over batch and tokens of grad * normalized x, cast to bf16
    g = torch.randn(4, 2048, 256, device="cuda", dtype=torch.bfloat16)
    xn = torch.randn(4, 2048, 256, device="cuda", dtype=torch.bfloat16)
    with FusionDefinition() as fd:
        p = fd.ops.mul(fd.ops.cast(fd.from_pytorch(g), DataType.Float),
                       fd.ops.cast(fd.from_pytorch(xn), DataType.Float))
        fd.add_output(fd.ops.cast(fd.ops.sum(p, [0, 1]), DataType.BFloat16))
    out = fd.execute([g, xn])[0]
    ref = (g.float() * xn.float()).sum((0, 1)).bfloat16()
    torch.testing.assert_close(out, ref, rtol=1e-2, atol=1e-1)
    assert len(fd.last_segmentation()["groups"]) == 1
    assert "nvf_last" in fd.last_cuda_code()[0]


@pytest.mark.skipif(not hasattr(torch, "compile"),
                    reason="torch.compile needs torch >= 2.0 (dynamo)")
def test_torch_compile_backend_on_gpu():
    import test_fx as tf
    m = tf.Attention().cuda()
    inputs = [t.cuda().detach().requires_grad_(t.is_floating_point())
              for t in tf.attention_inputs()]
    ref_inputs = [t.detach().clone().requires_grad_(t.requires_grad)
                  for t in inputs]
    outs = torch.compile(m, backend="nvfuser")(*inputs)
    refs = m(*ref_inputs)
    for o, r in zip(outs, refs):
        torch.testing.assert_close(o, r)
    sum((o * (i + 1)).sum() for i, o in enumerate(outs)).backward()
    sum((r * (i + 1)).sum() for i, r in enumerate(refs)).backward()
    for a, b in zip(inputs[:3], ref_inputs[:3]):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-5, atol=1e-5)


def test_loaded_modules_stay_bounded_and_are_unloaded():
    # A fresh process, since the bound is read once per process: 8 shapes
    # are 8 entries with a kernel each, through a table of 2 modules;
    # a second pass reloads evicted ones. Dropping the fusion (the
    # definition and the FusionCache's entry, which nvFuser's cache keeps
    # for later equal definitions) unloads.
    script = """
import gc, torch
from nvfuser import DataType, FusionCache, FusionDefinition, _C
with FusionDefinition() as fd:
    x = fd.define_tensor(shape=[-1], dtype=DataType.Float)
    fd.add_output(fd.ops.mul(fd.ops.exp(x), x))
most = 0
for _ in range(2):
    for n in range(1, 9):
        x = torch.rand(n * 33, device="cuda")
        out, = fd.execute([x])
        torch.testing.assert_close(out, x.exp() * x)
        most = max(most, _C._loaded_kernel_modules())
del fd
FusionCache.reset()
gc.collect()
print("most", most, "after", _C._loaded_kernel_modules())
"""
    env = dict(os.environ, NVFUSER_MAX_LOADED_MODULES="2",
               PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "..",
                                       "python"))
    done = subprocess.run([sys.executable, "-c", script], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    # (The last line: NVFUSER_DUMP in the caller's environment prints
    # kernels before it.)
    assert done.stdout.splitlines()[-1].split() == ["most", "2", "after", "0"]


def test_embedding_rms_norm_and_out_of_range_ids_on_gpu():
    # One row kernel gathers the rows; an id out of range reads zeros (a
    # kernel cannot raise where it runs), and so does the ATen path on the
    # GPU, which must not stop at ATen's device-side assert; both set the
    # index error word the next execute raises from.
    w = torch.randn(1000, 256, device="cuda", dtype=torch.bfloat16)
    g = torch.randn(256, device="cuda", dtype=torch.bfloat16)
    ids = torch.randint(0, 1000, (4, 33), device="cuda")
    with FusionDefinition() as fd:
        tw, tg, tids = (fd.from_pytorch(t) for t in (w, g, ids))
        e = fd.ops.index_select(tw, fd.ops.reshape(tids, [4 * 33]), 0)
        e = fd.ops.cast(fd.ops.reshape(e, [4, 33, 256]), DataType.Float)
        ms = fd.ops.mean(fd.ops.mul(e, e), [2], keepdim=True)
        y = fd.ops.mul(fd.ops.mul(e, fd.ops.rsqrt(fd.ops.add(ms, 1e-6))),
                       fd.ops.broadcast_in_dim(tg, [4, 33, 256], [2]))
        fd.add_output(fd.ops.cast(y, DataType.BFloat16))
        fd.add_output(fd.ops.cast(e, DataType.BFloat16))
    y, e = fd.execute([w, g, ids])
    emb = torch.nn.functional.embedding(ids, w)
    assert torch.equal(e, emb)
    x = emb.float()
    ref = (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) *
           g.float()).bfloat16()
    torch.testing.assert_close(y, ref, rtol=1e-2, atol=1e-2)
    assert len(fd.last_cuda_code()) == 1
    bad = ids.clone()
    bad[0, 3], bad[2, 0] = 1000, -1
    for run in (fd.execute, fd.execute_unsegmented):
        _, e = run([w, g, bad])
        torch.cuda.synchronize()
        assert torch.equal(e[0, 3], torch.zeros_like(e[0, 3]))
        assert torch.equal(e[2, 0], torch.zeros_like(e[2, 0]))
        assert torch.equal(e[1], emb[1])
        # Not silently: the launch set the index error word, and the next
        # execute raises (once; then it runs again).
        with pytest.raises(IndexError, match="before this call read an "
                           "index out of range"):
            fd.execute([w, g, ids])
        fd.execute([w, g, ids])
    with pytest.raises(IndexError, match="by this call"):
        fd.execute([w, g, bad], _enable_options=["sync_index_checks"])
    fd.execute([w, g, ids], _enable_options=["sync_index_checks"])


@pytest.mark.parametrize("backend", ["flash", "cudnn"])
def test_attention_and_embedding_backward_as_aten_calls_on_gpu(backend):
    # Library kernels inside a fusion: ATen's attention forward (its
    # outputs, including the CPU or GPU seed tensors, as ATen returns
    # them) between generated kernels, and the embedding's backward.
    name = "_scaled_dot_product_%s_attention" % backend
    op = getattr(torch.ops.aten, name, None)
    if op is None:
        pytest.skip("this torch has no %s" % name)
    op = op.default
    q = torch.randn(2, 4, 128, 64, device="cuda", dtype=torch.bfloat16)
    k, v = torch.randn_like(q), torch.randn_like(q)
    args = [q, k, v, 0.0, True] if backend == "flash" else \
        [q, k, v, None, True, 0.0, True]
    ref = op(*[a.sin() if isinstance(a, torch.Tensor) and a is q else a
               for a in args])
    with FusionDefinition() as fd:
        tq, tk, tv = (fd.from_pytorch(t) for t in (q, k, v))
        qs = fd.ops.cast(fd.ops.sin(tq), DataType.BFloat16)
        fargs = [qs, tk, tv] + args[3:]
        out, lse = fd.ops.aten_call(
            op, fargs, results=[
                (0, DataType.BFloat16, list(ref[0].shape)),
                (1, DataType.Float, list(ref[1].shape))])
        fd.add_output(fd.ops.mul(out, 2.0))
        fd.add_output(lse)
    got_out, got_lse = fd.execute([q, k, v])
    torch.testing.assert_close(got_out.float(), 2 * ref[0].float(),
                               rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(got_lse, ref[1])
    ir = fd.last_scheduled_fusion_ir()
    assert "expr_eval" in ir and "pointwise" in ir, ir


def _kernel_names(fn):
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name for e in prof.events()]


_EMB_OURS = torch.ops.nvfuser.embedding_dense_backward.default
_EMB_ATEN = torch.ops.aten.embedding_dense_backward.default


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("ids_dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("n_ids", [2048, 8192])
def test_embedding_backward_by_touched_rows_on_gpu(dtype, ids_dtype, n_ids):
    # nvfuser::embedding_dense_backward on CUDA sums into the touched rows
    # with Float atomics and rounds once: the exact (float64) sums to one
    # rounding, every untouched row exactly 0, and none of ATen's kernels.
    # Not ATen's result to a tolerance: its small-batch kernel (2048 ids)
    # rounds a bf16 row again after every 32 ids, 8 ulps off the exact
    # sum where a row's terms cancel (H100, session 26).
    torch.manual_seed(0)
    grad = torch.randn(n_ids // 512, 512, 256, device="cuda", dtype=dtype)
    ids = torch.randint(0, 1000, grad.shape[:2], device="cuda",
                        dtype=ids_dtype)
    ids[0, :64] = 7  # one row many times
    ids[1, :8] = 3  # the padding row below
    # One rounding: half an ulp (2^-8 of the value for bf16, 2^-24 for
    # Float); Float sums of at most 64 terms add a little absolute error.
    rtol = 2.0 ** -24 if dtype == torch.float32 else 2.0 ** -8
    flat = grad.reshape(-1, 256).double()
    for num_weights, padding_idx in ((5000, -1), (5000, 3), (1000, 1000)):
        got = _EMB_OURS(grad, ids, num_weights, padding_idx, False)
        assert got.dtype == dtype and got.shape == (num_weights, 256)
        exact = torch.zeros(num_weights, 256, dtype=torch.float64,
                            device="cuda").index_add_(
                                0, ids.long().flatten(), flat)
        if 0 <= padding_idx < num_weights:
            exact[padding_idx] = 0
        torch.testing.assert_close(got.double(), exact, rtol=rtol,
                                   atol=1e-4)
        touched = torch.zeros(num_weights, dtype=torch.bool, device="cuda")
        touched[ids.long().flatten()] = True
        if 0 <= padding_idx < num_weights:
            touched[padding_idx] = False
        assert torch.count_nonzero(got[~touched]) == 0
    names = _kernel_names(lambda: _EMB_OURS(grad, ids, 5000, -1, False))
    assert not [n for n in names if "embedding_backward" in n or
                "sum_and_scatter" in n or "compute_grad_weight" in n or
                "Radix" in n], names
    # scale_grad_by_freq needs the counts: ATen's kernel, bit for bit.
    assert torch.equal(_EMB_OURS(grad, ids, 5000, 3, True),
                       _EMB_ATEN(grad, ids, 5000, 3, True))


def test_embedding_backward_allocates_no_float_table_on_gpu():
    # The Float sums take one row per id, not one per table entry: a bf16
    # call allocates its bf16 gradient and about the ids' rows in Float
    # (the rows cast, the sums), never 4 bytes per table element.
    vocab, dim, n_ids = 100_000, 256, 512
    grad = torch.randn(n_ids, dim, device="cuda", dtype=torch.bfloat16)
    ids = torch.randint(0, vocab, (n_ids,), device="cuda")
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = _EMB_OURS(grad, ids, vocab, -1, False)
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - before - out.nbytes
    assert extra < 8 * n_ids * dim + (8 << 20), extra  # table: 102 MB
    torch.testing.assert_close(out.float(), _EMB_ATEN(
        grad, ids, vocab, -1, False).float(), rtol=1e-2, atol=1e-2)


def test_embedding_backward_above_the_measured_size_is_atens_on_gpu():
    # More than 2^23 row elements (8192 ids x 2048): ATen's sorted kernel,
    # bit for bit (the touched rows were measured slower at that size).
    torch.manual_seed(2)
    grad = torch.randn(8192, 2048, device="cuda", dtype=torch.bfloat16)
    ids = torch.randint(0, 32000, (8192,), device="cuda")
    assert torch.equal(_EMB_OURS(grad, ids, 32000, -1, False),
                       _EMB_ATEN(grad, ids, 32000, -1, False))


def test_embedding_backward_in_deterministic_mode_is_atens_on_gpu():
    # index_add_'s atomics are not deterministic: in deterministic mode the
    # operator calls ATen's sorted kernel, bit for bit its result.
    torch.manual_seed(1)
    grad = torch.randn(8192, 512, device="cuda", dtype=torch.bfloat16)
    ids = torch.randint(0, 300, (8192,), device="cuda")
    enabled = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        got = _EMB_OURS(grad, ids, 4000, 0, False)
        want = _EMB_ATEN(grad, ids, 4000, 0, False)
    finally:
        torch.use_deterministic_algorithms(enabled)
    assert torch.equal(got, want)


def test_embedding_backward_region_calls_ours_on_gpu():
    # The FX backend's region calls nvfuser::embedding_dense_backward for
    # aten.embedding_dense_backward, between generated kernels.
    from nvfuser.fx import compile_graph
    g = torch.fx.Graph()
    grad, ids = g.placeholder("grad"), g.placeholder("ids")
    g2 = g.call_function(torch.ops.aten.mul.Tensor, (grad, 3.0))
    w = g.call_function(_EMB_ATEN, (g2, ids, 4000, -1, False))
    g.output((g.call_function(torch.ops.aten.mul.Tensor, (w, 2.0)),))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    inputs = [torch.randn(4, 1024, 128, device="cuda", dtype=torch.bfloat16),
              torch.randint(0, 4000, (4, 1024), device="cuda")]
    c = compile_graph(gm, inputs)
    assert not c.nvfuser_unsupported and len(c.nvfuser_regions) == 1
    torch.testing.assert_close(c(*inputs)[0].float(), gm(*inputs)[0].float(),
                               rtol=2e-2, atol=2e-2)
    (name,) = c.nvfuser_regions
    fd = getattr(c, name).fd
    assert "nvfuser::embedding_dense_backward" in repr(fd)
    assert "expr_eval" in fd.last_scheduled_fusion_ir()


def test_profile_times_each_segment_with_cuda_events():
    # execute(profile=True) on the GPU: every segment's time from events on
    # the stream; together no more than the whole execute's.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        e = fd.ops.exp(x)
        fd.add_output(fd.ops.sum(fd.ops.mul(e, 2.0), [1]))
        fd.add_output(fd.ops.matmul(e, fd.ops.permute(e, [1, 0])))
    x = torch.randn(256, 512, device="cuda")
    fd.execute([x])
    fd.execute([x], profile=True)
    prof = fd.profile()
    times = [k.time_ms for k in prof.kernel_profiles]
    assert len(times) == prof.segments >= 2
    assert all(t is not None and t > 0 for t in times), times
    assert sum(times) <= prof.cuda_evt_time_ms * 1.05 + 0.05, (
        times, prof.cuda_evt_time_ms)


FLOAT8 = {DataType.Float8_e4m3fn: "float8_e4m3fn",
          DataType.Float8_e5m2: "float8_e5m2",
          DataType.Float8_e8m0fnu: "float8_e8m0fnu"}


@pytest.mark.parametrize("dtype", list(FLOAT8))
def test_float8_casts_match_torch_bitwise_on_gpu(dtype):
    # Every code decoded, and floats of every magnitude (ties, overflow
    # thresholds, subnormals, inf, NaN) rounded, by generated kernels.
    if not hasattr(torch, FLOAT8[dtype]):
        pytest.skip("this torch has no torch.%s" % FLOAT8[dtype])
    f8 = getattr(torch, FLOAT8[dtype])
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8).cuda()
    every = codes.view(f8)
    torch.manual_seed(0)
    special = torch.tensor(
        [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 448.0, 464.0,
         470.0, 480.0, 57344.0, 61440.0, 61441.0, 65536.0, 2.0 ** -10,
         2.0 ** -17, 1e-30, 3e38, 1.5, -3.0, 2.0 ** -127, 2.0 ** -130,
         1.5 * 2.0 ** 127, 1.4e-45], device="cuda")
    values = every.float()
    mids = (values[1:] + values[:-1]) / 2
    x = torch.cat([special, values, mids, -mids,
                   torch.randn(4096, device="cuda") *
                   torch.exp2(torch.randint(-20, 20, (4096,),
                                            device="cuda").float())])
    with FusionDefinition() as fd:
        t8 = fd.from_pytorch(every)
        tx = fd.from_pytorch(x)
        fd.add_output(fd.ops.cast(t8, DataType.Float))
        fd.add_output(fd.ops.cast(t8, DataType.Half))
        fd.add_output(fd.ops.cast(t8, DataType.BFloat16))
        fd.add_output(fd.ops.cast(tx, dtype))
        fd.add_output(fd.ops.cast(fd.ops.cast(tx, DataType.Half), dtype))
        fd.add_output(fd.ops.cast(fd.ops.cast(tx, DataType.Double), dtype))
    up, up_h, up_b, down, down_h, down_d = fd.execute([every, x])
    assert len(fd.last_cuda_code()) >= 1  # generated kernels, not ATen
    finite = ~torch.isnan(every.float())
    assert torch.equal(up[finite].view(torch.int32),
                       every.float()[finite].view(torch.int32))
    assert torch.equal(torch.isnan(up), ~finite)
    assert torch.equal(up_h[finite].view(torch.int16),
                       every.half()[finite].view(torch.int16))
    assert torch.equal(up_b[finite].view(torch.int16),
                       every.bfloat16()[finite].view(torch.int16))
    assert torch.equal(down.view(torch.uint8), x.to(f8).view(torch.uint8))
    assert torch.equal(down_h.view(torch.uint8),
                       x.half().to(f8).view(torch.uint8))
    assert torch.equal(down_d.view(torch.uint8),
                       x.double().to(f8).view(torch.uint8))


def test_complex_ops_run_through_aten_on_gpu():
    x = torch.randn(64, 32, dtype=torch.complex64, device="cuda")
    r = torch.randn(64, 32, device="cuda")
    with FusionDefinition() as fd:
        tx, tr = fd.from_pytorch(x), fd.from_pytorch(r)
        z = fd.ops.exp(fd.ops.mul(tx, tr))
        fd.add_output(z)
        fd.add_output(fd.ops.sin(fd.ops.mul(fd.ops.abs(z), tr)))
        fd.add_output(fd.ops.sum(z, [1]))
    z, s, total = fd.execute([x, r])
    want = torch.exp(x * r)
    assert torch.equal(z, want)
    torch.testing.assert_close(s, torch.sin(want.abs() * r))
    assert torch.equal(total, want.sum(1))
    schedulers = [g["scheduler"] for g in fd.last_segmentation()["groups"]]
    assert schedulers.count("expr_eval") == 4 and "pointwise" in schedulers


def _bits(t):
    view = {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    return t.contiguous().view(view).cpu()


@pytest.mark.parametrize("dtype", [DataType.Float, DataType.Double,
                                   DataType.Half, DataType.BFloat16])
def test_random_ops_give_the_cpu_paths_bits_on_gpu(dtype):
    """Seeded uniform/normal/rand_like/randn_like: the CUDA kernels, the
    ATen path on the GPU and the CPU give the same bits; also inside a
    reduction kernel and a row kernel."""
    def define(fd, x):
        t = fd.from_pytorch(x)
        s = fd.define_scalar(None, dtype=DataType.Int)
        u = fd.ops.uniform(-3.0, 5.0, [257, 1030], rng_seed=s,
                           rng_offset=12, dtype=dtype)
        n = fd.ops.normal(1.5, 2.0, [257, 1030], rng_seed=s, rng_offset=12,
                          dtype=dtype)
        r = fd.ops.rand_like(t, rng_seed=s, rng_offset=13, dtype=dtype)
        g = fd.ops.randn_like(t, rng_seed=s, rng_offset=13, dtype=dtype)
        for v in (u, n, r, g):
            fd.add_output(v)
        fd.add_output(fd.ops.sum(fd.ops.cast(n, DataType.Float), [0]))
        fd.add_output(fd.ops.sub(g, fd.ops.mean(g, [1], keepdim=True)))

    outs = {}
    for device in ("cpu", "cuda"):
        x = torch.zeros(129, 4099, device=device)
        with FusionDefinition() as fd:
            define(fd, x)
        outs[device] = fd.execute([x, -987654321])
        if device == "cuda":
            assert len(fd.last_cuda_code()) >= 1
            oracle = fd.execute_unsegmented([x, -987654321])
            for a, b in zip(oracle[:4], outs["cuda"][:4]):
                assert torch.equal(_bits(a), _bits(b))
    for a, b in zip(outs["cpu"][:4], outs["cuda"][:4]):
        assert b.is_cuda and torch.equal(_bits(a), _bits(b))
    for a, b in zip(outs["cpu"][4:], outs["cuda"][4:]):
        torch.testing.assert_close(b.cpu().float(), a.float(), rtol=1e-3,
                                   atol=1e-2)


def test_unseeded_random_ops_follow_the_cuda_generator():
    x = torch.zeros(1 << 16, device="cuda")
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.rand_like(t))
        fd.add_output(fd.ops.randn_like(t))
    torch.cuda.manual_seed(3)
    state = torch.cuda.get_rng_state()
    a = fd.execute([x])
    # The generator's Philox offset moved on: torch's own kernels draw
    # other numbers, and so does the next execute.
    assert not torch.equal(torch.cuda.get_rng_state(), state)
    b = fd.execute([x])
    assert not torch.equal(a[0], b[0])
    torch.cuda.manual_seed(3)
    again = fd.execute([x])
    assert torch.equal(a[0], again[0]) and torch.equal(a[1], again[1])
    assert 0 <= a[0].min().item() and a[0].max().item() < 1
    assert abs(a[1].mean().item()) < 0.02 and abs(a[1].std().item() - 1) < 0.02


def _norm_backward(fd, rows, cols, bias):
    """RMSNorm backward as autograd writes it (test_reduction_codegen's
    defineNormBackward): dw (and db) column sums next to dx."""
    x = fd.define_tensor(shape=[-1, -1], dtype=DataType.BFloat16)
    w = fd.define_tensor(shape=[-1], dtype=DataType.BFloat16)
    rstd = fd.define_tensor(shape=[-1, 1], dtype=DataType.Float)
    dy = fd.define_tensor(shape=[-1, -1], dtype=DataType.BFloat16)
    xf = fd.ops.cast(x, DataType.Float)
    xhat = fd.ops.cast(fd.ops.mul(xf, rstd), DataType.BFloat16)
    dw = fd.ops.sum(fd.ops.cast(fd.ops.mul(dy, xhat), DataType.Float), [0])
    fd.add_output(fd.ops.cast(dw, DataType.BFloat16))
    if bias:
        db = fd.ops.sum(fd.ops.cast(dy, DataType.Float), [0])
        fd.add_output(fd.ops.cast(db, DataType.BFloat16))
    dxhat = fd.ops.cast(
        fd.ops.mul(dy, fd.ops.broadcast_in_dim(w, [rows, cols], [1])),
        DataType.Float)
    s = fd.ops.sum(fd.ops.mul(dxhat, xf), [1], keepdim=True)
    r3 = fd.ops.mul(fd.ops.mul(rstd, rstd), rstd)
    dx = fd.ops.sub(fd.ops.mul(dxhat, rstd),
                    fd.ops.mul(fd.ops.mul(xf, r3), fd.ops.div(s, float(cols))))
    fd.add_output(fd.ops.cast(dx, DataType.BFloat16))


@pytest.mark.parametrize("rows,cols,bias", [(16384, 4096, False),
                                            (4000, 1000, True)])
def test_norm_backward_is_one_kernel_with_column_sums(rows, cols, bias):
    # dx and the weight (and bias) gradients from one read of x and dy: the
    # blocks' column partials meet in a workspace, which the last block
    # clears, so a second call (and a third, with new values) is right too.
    with FusionDefinition() as fd:
        _norm_backward(fd, rows, cols, bias)
    torch.manual_seed(0)
    for _ in range(3):
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
        dy = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        rstd = torch.rsqrt(x.float().pow(2).mean(1, keepdim=True) + 1e-6)
        outs = fd.execute([x, w, rstd, dy])
        xf = x.float()
        xhat = (xf * rstd).bfloat16()
        want = [(dy * xhat).float().sum(0)]
        if bias:
            want.append(dy.float().sum(0))
        dxhat = (dy * w).float()
        want.append(dxhat * rstd - xf * rstd ** 3 *
                    (dxhat * xf).sum(1, keepdim=True) / cols)
        for got, ref in zip(outs, want):
            assert got.dtype == torch.bfloat16
            torch.testing.assert_close(got.float(), ref, rtol=2e-2,
                                       atol=2e-2 * ref.abs().max().item())
    code = fd.last_cuda_code()
    assert len(code) == 1 and "nvf_csum0" in code[0], code


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_addcmul_rounds_once_in_the_kernel_and_in_the_aten_path(dtype):
    # addcmul is fma(value * t1, t2, x): the kernel's fmaf/fma, and the
    # ATen path's evaluation of it (ATen's CUDA addcmul rounds t1 * t2
    # first, so the ATen path computes fma on the CPU). Both equal ATen's
    # CPU addcmul bit for bit.
    torch.manual_seed(7)
    x, a, b = (torch.randn(4096, dtype=dtype) for _ in range(3))
    with FusionDefinition() as fd:
        ts = [fd.from_pytorch(t) for t in (x, a, b)]
        fd.add_output(fd.ops.addcmul(*ts, value=-0.3))
    want = torch.addcmul(x, a, b, value=-0.3)
    gpu = [t.cuda() for t in (x, a, b)]
    for run in (fd.execute, fd.execute_unsegmented):
        (got,) = run(gpu)
        assert got.is_cuda and torch.equal(got.cpu(), want), run.__name__
