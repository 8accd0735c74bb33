"""Every RoPE variant of the benchmark suite, forward and backward, at
small fp32 sizes: forward against the eager module, backward against
torch.autograd in float64, under every forwarding policy."""

import os
import sys

import pytest
import torch

from nvfuser import DataType, FusionDefinition

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "benchmarks"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "benchmarks", "rope"))
import region_ab  # noqa: E402
import variants as rv  # noqa: E402

POLICIES = [["input_forwarding"], ["extended_input_forwarding"], []]
F32 = DataType.Float


def build(define, cfg):
    with FusionDefinition() as fd:
        define(fd, cfg, F32)
    return fd


def segments_per_policy(fd, inputs):
    counts = []
    reference = fd.execute_unsegmented(inputs)
    for disable in POLICIES:
        outs = fd.execute(inputs, _disable_options=disable)
        for o, r in zip(outs, reference):
            assert torch.equal(o, r), disable
        counts.append(len(fd.last_segmentation()["groups"]))
    off, unary, extended = counts
    assert extended <= unary <= off, counts
    return outs, counts


@pytest.mark.parametrize("name", sorted(rv.CONFIGS))
def test_forward_matches_eager(name):
    cfg = rv.small(name)
    fd = build(rv.define_forward, cfg)
    inputs = rv.forward_inputs(cfg, F32)
    outs, _ = segments_per_policy(fd, inputs)
    expected = rv.eager_forward(cfg, *inputs)
    assert len(outs) == len(expected)
    for o, e in zip(outs, expected):
        torch.testing.assert_close(o, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(rv.CONFIGS))
def test_backward_matches_autograd(name):
    cfg = rv.small(name)
    fd = build(rv.define_backward, cfg)
    fwd = rv.forward_inputs(cfg, F32)
    inputs = rv.backward_inputs(cfg, F32, fwd=fwd)
    outs, _ = segments_per_policy(fd, inputs)
    expected = rv.autograd_backward(cfg, inputs, fwd)
    assert len(outs) == len(expected)
    for o, e in zip(outs, expected):
        torch.testing.assert_close(o.double(), e, rtol=1e-4, atol=1e-4)


def test_configs_match_the_issue_table():
    # The 9 of the issue table, and the pair-view (interleaved) RoPE the
    # issue measured at 42% of copy bandwidth.
    assert len(rv.CONFIGS) == 10
    assert rv.CONFIGS["llama_2_7b_pairs"]["cos"] == "pairs"
    c = rv.CONFIGS["qwen2_5_7b_hf"]
    assert (c["H"], c["G"], c["D"], c["cos"]) == (28, 4, 128, "input")
    assert rv.CONFIGS["partial_rotary"]["R"] < rv.CONFIGS["partial_rotary"]["D"]


def test_suite_dry_run(tmp_path):
    import json
    import subprocess
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    script = os.path.join(root, "benchmarks", "rope", "run_suite.py")
    subprocess.run([sys.executable, script, "--dry-run", "--out",
                    str(tmp_path), "--variants", "qwen2_5_7b_hf"], check=True,
                   capture_output=True)
    data = json.loads((tmp_path / "rope_suite.json").read_text())
    modes = {(r["variant"], r["mode"]) for r in data["rows"]}
    assert modes == {("qwen2_5_7b_hf", "fwd"), ("qwen2_5_7b_hf", "bwd")}
    fwd = [r for r in data["rows"] if r["mode"] == "fwd"][0]["results"]
    # Horizontal fusion makes the forward one kernel under every policy;
    # without it, extended forwarding alone leaves three.
    assert fwd["nvfuser-extended"]["segments"] == 1
    assert fwd["nvfuser-off"]["segments"] == 1
    assert fwd["nvfuser-extended-no-hfusion"]["segments"] == 3
    # Forwarding alone (horizontal fusion off): off 5, extended 3.
    assert fwd["nvfuser-off-no-hfusion"]["segments"] == 5
    assert "| qwen2_5_7b_hf | 8 | 1/1/1, 5/3 |" in (tmp_path /
                                                   "rope_suite.md").read_text()


@pytest.mark.parametrize("name", sorted(rv.CONFIGS))
def test_timed_eager_backward_computes_the_fusions_gradients(name):
    """The suite times eager and compiled backwards against our backward
    fusion: they must differentiate the same inputs. They used to take
    gradients of every floating input, so cos/sin tables and inv_freq too:
    sums over the batch and heads our fusion does not compute."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "benchmarks"))
    import run_suite
    cfg = rv.small(name)
    fwd = rv.forward_inputs(cfg, F32)
    bwd = rv.backward_inputs(cfg, F32, fwd=fwd)
    timed = run_suite.eager_callables(cfg, "bwd", fwd, bwd)()
    fd = build(rv.define_backward, cfg)
    ours = fd.execute(bwd)
    assert len(timed) == len(rv.grad_inputs(cfg))
    # The fusion returns the hf_fused gradients as one cat; litgpt's as one.
    assert sum(t.numel() for t in timed) == sum(o.numel() for o in ours)
    for t, i in zip(timed, rv.grad_inputs(cfg)):
        assert t.shape == fwd[i].shape


def test_dump_compiled_writes_a_breakdown_and_its_summary(tmp_path):
    """dump_compiled.py on the CPU (no profile, no torch.compile on torch
    1.13): the report has every executor per case, and --summary turns it
    into the table device_suite.sh prints."""
    import json
    import subprocess
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    script = os.path.join(root, "benchmarks", "rope", "dump_compiled.py")
    subprocess.run([sys.executable, script, "--out", str(tmp_path),
                    "--variants", "partial_rotary", "--modes", "fwd,bwd"],
                   check=True, capture_output=True)
    report = json.loads((tmp_path / "kernels.json").read_text())
    assert sorted(report) == ["partial_rotary_bwd", "partial_rotary_fwd"]
    for case in report.values():
        assert sorted(case) == sorted(["ours (FusionDefinition)", "eager",
                                       "inductor", "nvfuser"])
    out = subprocess.run([sys.executable, script, "--summary", str(tmp_path)],
                         check=True, capture_output=True, text=True).stdout
    assert out.splitlines()[0].startswith("| case | FusionDefinition |")
    assert "| partial_rotary_bwd |" in out
    assert (tmp_path / "partial_rotary_bwd_fd.py").exists()


def test_region_ab_runs_saved_fusions_under_each_configuration(tmp_path):
    """region_ab.py replays dump_compiled's repro scripts in one process per
    configuration and compares each configuration's outputs with the
    first's (on the CPU: ATen runs them, nothing is timed)."""
    import subprocess
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    bench = os.path.join(root, "benchmarks")
    subprocess.run([sys.executable, os.path.join(bench, "rope",
                                                 "dump_compiled.py"),
                    "--out", str(tmp_path), "--variants", "partial_rotary",
                    "--modes", "bwd"], check=True, capture_output=True)
    script = os.path.join(bench, "region_ab.py")
    out = subprocess.run(
        [sys.executable, script, str(tmp_path / "partial_rotary_bwd_fd.py"),
         "--config", "base=", "--config",
         "plain=NVFUSER_DISABLE=interleaved_cat_order,full_grid",
         "--json", str(tmp_path / "ab.json")],
        check=True, capture_output=True, text=True).stdout
    assert "| fusion | base | plain |" in out
    assert "| partial_rotary_bwd_fd | - | - |" in out
    # --match takes alternatives: of two scripts, the one named.
    import shutil
    fd_script = tmp_path / "partial_rotary_bwd_fd.py"
    shutil.copy(fd_script, tmp_path / "other_bwd_fd.py")
    some = subprocess.run(
        [sys.executable, script, str(fd_script),
         str(tmp_path / "other_bwd_fd.py"), "--match",
         "nothing_here,partial_rotary_bwd"],
        check=True, capture_output=True, text=True).stdout
    assert "| partial_rotary_bwd_fd | - |" in some
    assert "other_bwd_fd" not in some
    bad = subprocess.run([sys.executable, script,
                          str(tmp_path / "partial_rotary_bwd_fd.py"),
                          "--config", "x=PATH=/tmp"],
                         capture_output=True, text=True)
    assert bad.returncode != 0
    assert "'PATH' is not an NVFUSER_ variable" in bad.stderr


@pytest.mark.parametrize("name", ["phi_3_5_mini_hf", "mistral_nemo_hf"])
def test_in_graph_cos_sin_tables_are_written_once(name):
    """cos and sin of position ids are computed on [B, T, D] and broadcast
    over the heads: a kernel of their own writes them once (fused, every
    head recomputed them, at the rotated indices too: an H200 ran the
    phi-3.5 backward in 152 us that way, 49 us now). Same values either
    way."""
    cfg = dict(rv.small(name, 16), H=16, G=16 if name.startswith("phi")
               else 2)
    for define, inputs in (
            (rv.define_forward, lambda: rv.forward_inputs(cfg, F32)),
            (rv.define_backward, lambda: rv.backward_inputs(cfg, F32))):
        fd = build(define, cfg)
        ins = inputs()
        outs = fd.execute(ins)
        groups = fd.last_segmentation()["groups"]
        fused_outs = fd.execute(
            ins, _disable_options=["broadcast_materialization"])
        # One kernel (phi-3.5's v, a view of the fused qkv, is a no_op).
        fused = [g for g in fd.last_segmentation()["groups"]
                 if g["scheduler"] != "no_op"]
        assert len(fused) == 1
        # One group computes the tables, and only they leave it; the RoPE
        # (q and k in one kernel) reads them.
        tables = [g for g in groups if "cos" in g["ops"]]
        assert len(tables) == 1 and len(tables[0]["outputs"]) == 2
        assert not any("cos" in g["ops"] or "sin" in g["ops"]
                       for g in groups if g is not tables[0])
        rotations = [g for g in groups
                     if "neg" in g["ops"] and g is not tables[0]]
        assert len(rotations) == 1, [g["ops"] for g in groups]
        for a, b in zip(outs, fused_outs):
            torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)


def test_dump_summary_flags_a_compile_that_fell_back_to_eager():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "benchmarks"))
    import dump_compiled
    case = {"ours (FusionDefinition)": [["k", 10.0, 1]],
            "eager": [["a", 60.0, 2], ["b", 40.0, 1]],
            "inductor": [["t", 5.0, 1]],
            "nvfuser": [["a", 60.0, 2], ["b", 40.0, 1]]}
    table = dump_compiled.summary_table({"x_fwd": case})
    assert "| x_fwd | 10.0 (1) | 100.0 (3) | 5.0 (1) | 100.0 (3) |" in table
    warnings = [ln for ln in table.splitlines() if ln.startswith("WARNING")]
    assert warnings == ["WARNING (x_fwd): nvfuser launches as many kernels "
                        "as eager (3): did it fall back to eager?"]


def test_dump_summary_notes_aten_kernels_outside_the_compiled_graph():
    # The pair-view backward (session 16): both compiled backends ran
    # eager's copy of v's gradient (AOTAutograd regenerates v, a view of
    # its input, outside the graph) next to their own kernel.
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "benchmarks"))
    import dump_compiled
    copy = "void at::native::elementwise_kernel<128, 4>"
    case = {"ours (FusionDefinition)": [["nvfuser_pointwise_g0_1", 50.3, 1]],
            "eager": [["a", 600.0, 39]],
            "inductor": [[copy, 44.6, 1], ["triton_poi_fused_x", 44.6, 1]],
            "nvfuser": [[copy, 44.7, 1], ["nvfuser_pointwise_g0_2", 29.8, 1]]}
    table = dump_compiled.summary_table({"pairs_bwd": case})
    notes = [ln for ln in table.splitlines() if ln.startswith("NOTE")]
    assert notes == ["NOTE (pairs_bwd): ATen kernels outside the compiled "
                     "graph: inductor 44.6 us in 1; nvfuser 44.7 us in 1"]
    case["nvfuser"] = case["nvfuser"][1:]
    case["inductor"] = case["inductor"][1:]
    table = dump_compiled.summary_table({"pairs_bwd": case})
    assert "NOTE" not in table


@pytest.mark.parametrize("name", ["llama_2_7b_litgpt", "partial_rotary",
                                  "phi_3_5_mini_litgpt"])
def test_qkv_gradient_kernels_keep_warps_on_one_cat_part(name, monkeypatch):
    """The LitGPT backwards write dq, dk and dv into one qkv gradient whose
    cat position changes every head-size elements: the kernel takes slots
    so that warps (blocks, where a group of them fits) stay on one part
    (scheduler/interleaved_cat.h; on an H200, Llama-2's 175 -> 127 us),
    unless switched off."""
    cfg = rv.small(name, 16)
    fd = build(rv.define_backward, cfg)
    ins = rv.backward_inputs(cfg, F32)
    code = "\n".join(fd.cuda_code_for(ins))
    assert "on one cat position" in code
    monkeypatch.setenv("NVFUSER_DISABLE", "interleaved_cat_order")
    code = "\n".join(fd.cuda_code_for(ins))
    assert "on one cat position" not in code


def test_hf_fused_v_is_returned_as_a_view_of_qkv():
    """phi-3.5's HF layout slices v off the fused qkv and splits it into
    heads: a view (splits are views on any strides). The kernel wrote it
    (a copy of a third of qkv, the FusionDefinition's 42 us against the
    compiled module's 29 us on the H200)."""
    cfg = rv.small("phi_3_5_mini_hf", 16)
    assert cfg["layout"] == "hf_fused"
    fd = build(rv.define_forward, cfg)
    ins = rv.forward_inputs(cfg, F32)
    outs = fd.execute(ins)
    schedulers = [g["scheduler"] for g in fd.last_segmentation()["groups"]]
    assert "no_op" in schedulers, schedulers
    v = outs[2]
    assert v.storage().data_ptr() == ins[0].storage().data_ptr()
    torch.testing.assert_close(list(outs), list(rv.eager_forward(cfg, *ins)))


def test_litgpt_v_is_returned_as_a_view_of_qkv():
    """LitGPT's v without GQA (phi-3.5, Llama-2) is qkv viewed, permuted,
    sliced and its size-1 dim reshaped away: a view, returned by a no_op
    segment instead of a kernel's copy (phi-3.5's forward wrote 25 MB for
    it), with eager's values."""
    cfg = rv.small("phi_3_5_mini_litgpt", 16)
    assert cfg["ret_v"] and cfg["H"] == cfg["G"]
    fd = build(rv.define_forward, cfg)
    ins = rv.forward_inputs(cfg, F32)
    outs = fd.execute(ins)
    groups = fd.last_segmentation()["groups"]
    assert sorted(g["scheduler"] for g in groups) == ["no_op", "pointwise"]
    v = outs[2]
    assert v.storage().data_ptr() == ins[0].storage().data_ptr()
    torch.testing.assert_close(list(outs), list(rv.eager_forward(cfg, *ins)))


@pytest.mark.parametrize("name", ["mistral_nemo_hf", "qwen2_5_7b_hf"])
def test_hf_backward_keeps_warps_on_one_side_of_rotate_half(name,
                                                            monkeypatch):
    """An HF backward's rotate-half gradient is two pads of the head dim;
    the kernel orders slots so warps stay on one half
    (scheduler/innermost_branches.h; on an H200, Mistral-NeMo's backward
    region 54.4 -> 49.6 us) unless switched off; execute gives the same
    either way (the ordered kernels' numerics: the C++ emulator tests)."""
    cfg = rv.small(name, 64)
    fd = build(rv.define_backward, cfg)
    ins = rv.backward_inputs(cfg, F32)
    code = "\n".join(fd.cuda_code_for(ins))
    assert "on one cat position" in code
    ordered = fd.execute(ins)
    monkeypatch.setenv("NVFUSER_DISABLE", "innermost_branch_order")
    code = "\n".join(fd.cuda_code_for(ins))
    assert "on one cat position" not in code
    plain = fd.execute(ins)
    reference = fd.execute_unsegmented(ins)
    for a, b, r in zip(ordered, plain, reference):
        assert torch.equal(a, b)
        torch.testing.assert_close(a, r, rtol=1e-5, atol=1e-5)


def test_gqa_backward_blocks_hold_both_halves_of_a_cat_position(
        monkeypatch):
    """LitGPT Llama-3's backward sums k over the query heads of a group:
    blocks stay on one qkv position, and a block holds both rotate-half
    halves of it, a warp on each, so a half's loads of the other half's
    elements hit the same SM's L1 (scheduler/interleaved_cat.h; with
    blocks on one half, ncu read an 8% L1 hit rate on an H200). Here 8
    digits (4 qkv positions of a group x 2 halves) of 8 floats (runs of 2
    slots of 4 lanes): a block of 128 threads is 32 runs of each half of
    one position, where it was 64 runs of one half."""
    cfg = rv.small("llama_3_8b_litgpt", 64)
    fd = build(rv.define_backward, cfg)
    ins = rv.backward_inputs(cfg, F32)
    both = "s = s - r + ((r / 2 % 32) * 8 + r / 64) * 2 + r % 2;"
    one = "s = s - r + ((r / 2 % 64) * 8 + r / 128) * 2 + r % 2;"
    code = "\n".join(fd.cuda_code_for(ins))
    assert both in code and one not in code
    ordered = fd.execute(ins)
    monkeypatch.setenv("NVFUSER_DISABLE", "pad_sides_in_one_block")
    code = "\n".join(fd.cuda_code_for(ins))
    assert one in code and both not in code
    plain = fd.execute(ins)
    reference = fd.execute_unsegmented(ins)
    for a, b, r in zip(ordered, plain, reference):
        assert torch.equal(a, b)
        torch.testing.assert_close(a, r, rtol=1e-5, atol=1e-5)


def test_minimal_bytes_leave_out_outputs_that_are_views_of_inputs():
    # The pair-view variant returns v as a view of v_lin (as many kv heads
    # as query heads): the forward moves q and k in and out, and the
    # tables; counting v twice read 126% of copy bandwidth (session 15).
    cfg = rv.small("llama_2_7b_pairs", T=8)
    ins = rv.forward_inputs(cfg)
    with FusionDefinition() as fd:
        rv.define_forward(fd, cfg)
    outs = fd.execute(ins)
    B, T, H, D = (cfg[k] for k in "BTHD")
    qk = 2 * B * T * H * D * 2  # bf16
    tables = 2 * T * (D // 2) * 2
    assert rv.minimal_bytes(cfg, "fwd", ins, outs) == 2 * qk + tables


def test_qwen_backward_is_one_kernel_that_reads_dq_once(monkeypatch):
    # Issue 16: Qwen2.5's RoPE backward was two kernels, both reading dq
    # (its own gradient, then the cos/sin gradients' loop over the heads),
    # because the cos gradient also sums the k gradient, itself a sum over
    # each group's query heads. At T=4096 (the plan needs a problem that
    # fills an H200) it is one kernel whose heads loop stores dq's
    # gradient and whose groups loop stores k's; NVRTC compiles it.
    cfg = rv.sized("qwen2_5_7b_hf", 4096)
    fwd = rv.forward_inputs(cfg)
    with FusionDefinition() as fd:
        rv.define_backward(fd, cfg)
    ins = rv.backward_inputs(cfg, fwd=fwd)
    codes = fd.cuda_code_for(ins)
    assert len(codes) == 1
    assert codes[0].count("in this loop") == 2
    # Without loop outputs the chain of sums is still one kernel.
    monkeypatch.setenv("NVFUSER_DISABLE", "loop_outputs")
    codes = fd.cuda_code_for(ins)
    assert len(codes) == 1
    assert "in this loop" not in codes[0]


def _compiled(fd, ins, capfd, monkeypatch, enable="",
              disable="kernel_cache"):
    """fd's kernels for ins (NVRTC, sm_90) and what ptxas printed about
    them (NVFUSER_DUMP=ptxas_verbose; no cubin cache, so ptxas runs)."""
    monkeypatch.setenv("NVFUSER_DUMP", "ptxas_verbose")
    monkeypatch.setenv("NVFUSER_DISABLE", disable)
    monkeypatch.setenv("NVFUSER_ENABLE", enable)
    capfd.readouterr()
    codes = fd.cuda_code_for(ins)
    printed = capfd.readouterr()
    return codes, printed.out + printed.err


def test_qwen_backward_chains_the_cos_and_sin_sums(capfd, monkeypatch):
    # Issue 16: the cos and sin gradients each add a sum over the query
    # heads to a sum over the kv groups. The kernel held the first sums
    # (16 floats a thread) through the second loop: 134 registers, 3
    # blocks of 128 threads per SM (ncu on the H200: 17% occupancy, DRAM
    # 53%). Chained, the groups loop starts from the heads loop's partial
    # sums, and a group of lanes combines each gradient once.
    import re
    cfg = rv.sized("qwen2_5_7b_hf", 4096)
    fwd = rv.forward_inputs(cfg)
    with FusionDefinition() as fd:
        rv.define_backward(fd, cfg)
    ins = rv.backward_inputs(cfg, fwd=fwd)
    (code,), log = _compiled(fd, ins, capfd, monkeypatch)
    assert code.count("// chained sum: starts from") == 2
    assert code.count("__shfl_xor_sync(nvf_group") == 2
    registers = re.findall(r"Used (\d+) registers", log)
    assert len(registers) == 1, log
    assert int(registers[0]) <= 128, registers
    (separate,), _ = _compiled(fd, ins, capfd, monkeypatch,
                               disable="kernel_cache,chained_sums")
    assert "chained sum" not in separate
    assert separate.count("__shfl_xor_sync(nvf_group") == 4


def test_qwen_backward_region_from_torch_compile_chains_keepdim_sums(
        capfd, monkeypatch):
    # torch.compile's graph of the same backward (saved from the device:
    # fixtures/rope) adds the sums through keepdim views,
    # add(set(broadcast(sum)), set(broadcast(sum))): chained through them,
    # 128 -> 100 registers a thread (ptxas, sm_90).
    import re
    path = os.path.join(os.path.dirname(__file__), "fixtures", "rope",
                        "qwen2_5_7b_hf_bwd_region1.py")
    source = open(path).read()
    fd = region_ab.fusion_from_script(source)
    shapes = re.findall(r"define_tensor\(shape=\[([^\]]*)\]", source)
    ins = [torch.empty([int(x) for x in shape.split(",")],
                       dtype=torch.bfloat16) for shape in shapes]
    (code,), log = _compiled(fd, ins, capfd, monkeypatch)
    assert code.count("// chained sum: starts from") == 2, code
    registers = re.findall(r"Used (\d+) registers", log)
    assert len(registers) == 1, log
    assert int(registers[0]) <= 104, registers
    (separate,), _ = _compiled(fd, ins, capfd, monkeypatch,
                               disable="kernel_cache,chained_sums")
    assert "chained sum" not in separate


@pytest.mark.parametrize("name,mode,marker", [
    ("llama_2_7b_pairs", "fwd", "// lane table"),
    ("llama_2_7b_pairs", "bwd", "// lane table"),
    ("llama_2_7b_litgpt", "fwd", "nvf_neg16("),
    ("qwen2_5_7b_hf", "bwd", "__shfl_xor_sync(nvf_group"),
    ("qwen2_5_7b_hf", "bwd", "2 reductions in one loop"),
])
def test_rope_kernel_features_compile_with_nvrtc(name, mode, marker):
    # cuda_code_for compiles every kernel with NVRTC (sm_90), no GPU
    # needed: the pair-view variant's lane tables, a LitGPT FD's
    # rotate-half sign flip and Qwen2.5's cos/sin gradients (a group of
    # lanes per slot, one loop for both) are code NVRTC accepts on every CI
    # run.
    cfg = rv.small(name, T=8)
    fwd = rv.forward_inputs(cfg)
    with FusionDefinition() as fd:
        (rv.define_forward if mode == "fwd" else rv.define_backward)(fd, cfg)
    ins = fwd if mode == "fwd" else rv.backward_inputs(cfg, fwd=fwd)
    code = "\n".join(fd.cuda_code_for(ins))
    assert marker in code


def test_litgpt_forward_takes_qkvs_order_and_compiles(capfd, monkeypatch):
    # The FusionDefinition's q and k are [B, H, T, D], qkv lies [B, T, H,
    # D]: the slots follow qkv (scheduler/input_loop_order.h), and NVRTC
    # compiles the renumbered kernel; NVFUSER_DISABLE=input_loop_order
    # keeps the outputs' order.
    cfg = rv.sized("llama_2_7b_litgpt", 4096)
    with FusionDefinition() as fd:
        rv.define_forward(fd, cfg)
    ins = rv.forward_inputs(cfg)
    marker = "loop dims in the order 0 2 1 3 (the input read most)"
    codes, printed = _compiled(fd, ins, capfd, monkeypatch)
    assert len(codes) == 1 and marker in codes[0]
    assert "0 bytes spill stores" in printed, printed
    codes, _ = _compiled(fd, ins, capfd, monkeypatch,
                         disable="kernel_cache,input_loop_order")
    assert len(codes) == 1 and "the input read most" not in codes[0]


def test_register_caps_everywhere_compile_pointwise_kernels_for_occupancy(
        capfd, monkeypatch):
    # NVFUSER_ENABLE=register_caps_everywhere (an experiment) sends
    # pointwise kernels through the occupancy tuner too: Mistral-NeMo's
    # two forward kernels (48 and 44 registers: 10 and 11 blocks of 128 per
    # SM) are compiled again with a cap of 40 (12 blocks), which ptxas
    # meets without spilling, so they keep it. By default only row kernels
    # are tuned. (Slots in the outputs' order: in q_lin's order the second
    # kernel takes 43 registers, and 40 spill 4 bytes.)
    import re
    cfg = rv.sized("mistral_nemo_hf", 4096)
    with FusionDefinition() as fd:
        rv.define_forward(fd, cfg)
    ins = rv.forward_inputs(cfg)
    off = "kernel_cache,input_loop_order"
    _, plain = _compiled(fd, ins, capfd, monkeypatch, disable=off)
    assert "maxrregcount" not in plain
    _, capped = _compiled(fd, ins, capfd, monkeypatch,
                          "register_caps_everywhere", disable=off)
    caps = re.findall(r"with\s+(\d+) of maxrregcount", capped)
    assert "40" in caps, capped
    spills = [int(b) for b in re.findall(r"(\d+) bytes spill stores",
                                         capped)]
    assert spills and spills.count(0) == len(spills), capped
