"""Segmentation visibility: last_segmentation, dumps, caching."""

import os

import torch

from nvfuser import DataType, FusionCache, FusionDefinition

M, N, K = 24, 16, 8


def reshape_matmul():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[M // 2, 2, K], dtype=DataType.Float)
        b = fd.define_tensor(shape=[K, N], dtype=DataType.Float)
        fd.add_output(fd.ops.matmul(fd.ops.reshape(a, [M, K]), b))
    return fd


def test_reshape_matmul_backs_off_and_matches():
    fd = reshape_matmul()
    a, b = torch.randn(M // 2, 2, K), torch.randn(K, N)
    (out,) = fd.execute([a, b])
    torch.testing.assert_close(out, a.reshape(M, K) @ b)
    seg = fd.last_segmentation()
    # Backed off, the reshape is the matmul segment's own view op (ATen's
    # view: no copy, no no_op segment of its own).
    assert [(g["scheduler"], g["ops"], g["prologue"])
            for g in seg["groups"]] == [("expr_eval", ["reshape", "matmul"],
                                         [])]
    assert seg["forwarded_chains"][0]["backed_off"] == ["matmul"]


def test_segmented_fusion_dump(capfd, monkeypatch):
    # Dumps come from segmenting; an earlier test may have run this
    # definition already, and FusionCache would reuse its segmentation.
    FusionCache.reset()
    monkeypatch.setenv("NVFUSER_DUMP", "segmented_fusion,segmenter_logging")
    fd = reshape_matmul()
    fd.execute([torch.randn(M // 2, 2, K), torch.randn(K, N)])
    out = capfd.readouterr().out
    assert "g{(expr_eval)" in out and "= reshape(T0" in out
    assert "[segmenter] forwarding: back-off: matmul" in out
    assert "expr_eval takes no prologue" in out


def test_forwarded_ops_marked_in_dump(capfd, monkeypatch):
    monkeypatch.setenv("NVFUSER_DUMP", "segmented_fusion")
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], dtype=DataType.Half)
        e = fd.ops.exp(fd.ops.cast(a, DataType.Float))
        # A column max (a column sum would join the row kernel).
        fd.add_output(fd.ops.max(e, dims=[0]))
        fd.add_output(fd.ops.sum(e, dims=[1]))
    fd.execute([torch.randn(4, 8).half()])
    out = capfd.readouterr().out
    assert out.count("g{(reduction)") == 2
    assert out.count("[forwarded]") == 4


def test_draw_segmented_fusion(tmp_path, monkeypatch):
    # Dumps come from segmenting; an earlier test may have run this
    # definition already, and FusionCache would reuse its segmentation.
    FusionCache.reset()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFUSER_DUMP", "draw_segmented_fusion")
    fd = reshape_matmul()
    fd.execute([torch.randn(M // 2, 2, K), torch.randn(K, N)])
    dots = [f for f in os.listdir(tmp_path) if f.endswith(".dot")]
    assert len(dots) == 1
    text = (tmp_path / dots[0]).read_text()
    assert "digraph SegmentedFusion" in text and "cluster_0" in text
    assert 'label="g0 (expr_eval)"' in text


def test_draw_segmented_fusion_never_writes_through_a_link(
        tmp_path, monkeypatch, capfd):
    # Links at every name the process-wide counter may be at: the dump
    # must neither follow one nor replace it, and must take a free name.
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    links = [cwd / f"segmented_fusion_{i}.dot" for i in range(200)]
    for link in links:
        link.symlink_to(victim)
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("NVFUSER_DUMP", "draw_segmented_fusion")
    FusionCache.reset()  # a cached fusion would not be segmented again
    fd = reshape_matmul()
    fd.execute([torch.randn(M // 2, 2, K), torch.randn(K, N)])
    assert victim.read_text() == "precious\n"
    assert all(link.is_symlink() for link in links)
    written = [f for f in cwd.iterdir() if not f.is_symlink()]
    assert len(written) == 1 and written[0].is_file()
    assert f"wrote {written[0].name}" in capfd.readouterr().out
    assert "digraph SegmentedFusion" in written[0].read_text()


def test_second_call_reuses_segmentation():
    fd = reshape_matmul()
    args = [torch.randn(M // 2, 2, K), torch.randn(K, N)]
    fd.execute(args)
    first = fd.last_segmentation()["text"]
    fd.execute(args)
    assert fd._fusion.num_cached_signatures() == 1
    assert fd.last_segmentation()["text"] == first
    fd.execute(args, _disable_options=["input_forwarding"])
    assert fd._fusion.num_cached_signatures() == 2


def test_policies_give_identical_results_on_mul_sum():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[M // 2, 2, K], dtype=DataType.Half)
        t1 = fd.define_tensor(shape=[K, N], dtype=DataType.Half)
        t3 = fd.ops.broadcast_in_dim(fd.ops.reshape(t0, [M, K]), [M, K, 1],
                                     [0, 1])
        t4 = fd.ops.broadcast_in_dim(t1, [1, K, N], [1, 2])
        t6 = fd.ops.sum(fd.ops.mul(t3, t4), dims=[1])
        fd.add_output(fd.ops.cast(t6, DataType.Half))
    a, b = torch.randn(M // 2, 2, K).half(), torch.randn(K, N).half()
    outs = [fd.execute([a, b], _disable_options=d)[0]
            for d in ([], ["extended_input_forwarding"],
                      ["input_forwarding"])]
    assert all(torch.equal(outs[0], o) for o in outs)
    seg = fd.last_segmentation()
    assert len(seg["groups"]) == 1 and \
        seg["groups"][0]["scheduler"] == "reduction"
    torch.testing.assert_close(
        outs[0], torch.matmul(a.reshape(M, K).float(), b.float()).half(),
        rtol=1e-3, atol=1e-3)


def test_long_reduction_with_epilogue_is_split():
    # A sum over 4 x 4096 rows into 64 values with an epilogue (neg, cast).
    # Partial sums over chunks first (many outputs, many threads), then the
    # sum of the partials.
    x = torch.randn(4, 4096, 64).bfloat16()
    g = torch.randn(4, 4096, 64).bfloat16()
    with FusionDefinition() as fd:
        s = fd.ops.sum(fd.ops.mul(fd.from_pytorch(x), fd.from_pytorch(g)),
                       [0, 1])
        fd.add_output(fd.ops.cast(fd.ops.neg(s), DataType.BFloat16))
    ref = -(x.float() * g.float()).sum((0, 1))
    out = fd.execute([x, g])[0]
    torch.testing.assert_close(out.float(), ref, rtol=1e-2, atol=1e-1)
    groups = fd.last_segmentation()["groups"]
    # The sum of the 512 partials per value is itself split over the GPU
    # (alone in its kernel), the epilogue is a third.
    assert [g["ops"] for g in groups] == [["mul", "reshape", "sum"],
                                          ["segment_set", "sum"],
                                          ["neg", "cast"]]
    # Without the split the sum still does not run as one thread per value
    # looping over 16384 rows: the reduction scheduler only takes it alone
    # (split over the GPU by the generator), the epilogue is another kernel.
    fd.execute([x, g], _disable_options=["reduction_split"])
    assert [g["ops"] for g in fd.last_segmentation()["groups"]] == [
        ["mul", "sum"], ["neg", "cast"]]
    # A norm's weight gradient, only cast: one kernel splits it itself.
    with FusionDefinition() as fd3:
        s = fd3.ops.sum(fd3.ops.mul(fd3.from_pytorch(x), fd3.from_pytorch(g)),
                        [0, 1])
        fd3.add_output(fd3.ops.cast(s, DataType.BFloat16))
    out = fd3.execute([x, g])[0]
    torch.testing.assert_close(out.float(), -ref, rtol=1e-2, atol=1e-1)
    assert [g["ops"] for g in fd3.last_segmentation()["groups"]] == [
        ["mul", "sum", "cast"]]
    # A short reduction, or a lone sum into an output, is left alone.
    with FusionDefinition() as fd2:
        fd2.add_output(fd2.ops.sum(fd2.from_pytorch(x.float()), [1]))
    fd2.execute([x.float()])
    assert len(fd2.last_segmentation()["groups"]) == 1


def test_view_outputs_are_not_copied_by_kernels():
    # A kernel output's transpose (a matmul gradient's t()) and a reshape
    # of an input were written by the kernel as extra, uncoalesced copies
    # (the Llama backward wrote its RoPE gradients twice, 394 us); they are
    # no_op views now: same values, a transposed stride, no extra family.
    x = torch.randn(64, 128)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        y = fd.ops.exp(t)
        fd.add_output(y)
        fd.add_output(fd.ops.permute(y, [1, 0]))
        fd.add_output(fd.ops.reshape(t, [2, 32, 128]))
    y, yt, xv = fd.execute([x])
    torch.testing.assert_close(yt, x.exp().t())
    assert yt.stride() == (1, 128)
    assert xv.data_ptr() == x.data_ptr()
    groups = fd.last_segmentation()["groups"]
    assert sorted(g["scheduler"] for g in groups) == ["no_op", "pointwise"]
    kernels = fd.cuda_code_for([x], "sm_90")
    assert len(kernels) == 1 and kernels[0].count("nvf_vstore(out") == 1


def test_a_slice_of_an_input_is_returned_as_a_view():
    # An output that is a slice of an input, next to a kernel's output of
    # the same shape, was written by the kernel (a copy); it is a no_op
    # view now, with the input's strides.
    x = torch.randn(4, 8)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        left = fd.ops.slice(t, [0, 0], [4, 4])
        fd.add_output(fd.ops.mul(left, left))
        fd.add_output(fd.ops.slice(t, [0, 4], [4, 8]))
    sq, right = fd.execute([x])
    torch.testing.assert_close(sq, x[:, :4] * x[:, :4])
    assert right.data_ptr() == x[:, 4:].data_ptr()
    assert right.stride() == (8, 1)
    groups = fd.last_segmentation()["groups"]
    assert sorted(g["scheduler"] for g in groups) == ["no_op", "pointwise"]


def test_a_transpose_alone_is_written_by_the_kernel():
    # A region output whose promised strides are a permutation (Llama's
    # q after RoPE, [2, 16, S, 128] laid out as [2, S, 16, 128]) is the
    # fusion output permute(value): the kernel must write that order. As a
    # no_op view of a row-major value it needed a copy after the fusion
    # (4 ATen copies of 27 us per Llama step).
    x = torch.randn(2, 16, 8, 4).transpose(1, 2)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        y = fd.ops.add(fd.ops.mul(t, t), t)
        fd.add_output(fd.ops.permute(y, [0, 2, 1, 3]))
    out, = fd.execute([x])
    torch.testing.assert_close(out, (x * x + x).permute(0, 2, 1, 3))
    assert out.is_contiguous()
    groups = fd.last_segmentation()["groups"]
    assert [g["scheduler"] for g in groups] == ["pointwise"]


def test_view_of_a_matmul_output_is_not_copied():
    # The loss kernel of a Llama step copied the logits (a matmul output
    # viewed [2, 2048, 32000]) because a region returned that view too.
    a, b = torch.randn(64, 32), torch.randn(32, 128)
    with FusionDefinition() as fd:
        m = fd.ops.matmul(fd.from_pytorch(a), fd.from_pytorch(b))
        fd.add_output(fd.ops.reshape(m, [2, 32, 128]))
        fd.add_output(fd.ops.exp(m))
    view, e = fd.execute([a, b])
    torch.testing.assert_close(view, (a @ b).reshape(2, 32, 128))
    torch.testing.assert_close(e, (a @ b).exp())
    groups = [(g["scheduler"], g["ops"]) for g in
              fd.last_segmentation()["groups"]]
    assert groups == [("expr_eval", ["matmul"]), ("no_op", ["reshape"]),
                      ("pointwise", ["exp"])]
