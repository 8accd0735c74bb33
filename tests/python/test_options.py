"""NVFUSER_DUMP / ENABLE / DISABLE have one parser, the compiler's: the
Python side (the FX backend's fx_partition dump) asks it rather than
splitting the variable again."""

import os
import subprocess
import sys

import pytest
import torch
import torch.fx

from nvfuser import _C
from nvfuser.fx import compile_graph


class ExpThenSort(torch.nn.Module):
    def forward(self, x):
        return torch.sort(torch.exp(x), dim=-1)[0] + 1


@pytest.mark.parametrize("value", ["segmented_fusion, fx_partition",
                                   "fx_partition ,segmented_fusion",
                                   "segmented_fusion,\n\tfx_partition"])
def test_dump_list_with_spaces_names_fx_partition(value, monkeypatch,
                                                  capsys):
    monkeypatch.setenv("NVFUSER_DUMP", value)
    assert _C.dump_enabled("fx_partition")
    assert not _C.dump_enabled("cuda_kernel")
    x = torch.randn(4, 8)
    c = compile_graph(torch.fx.symbolic_trace(ExpThenSort()), [x])
    torch.testing.assert_close(c(x), ExpThenSort()(x))
    assert "[fx_partition] eager: sort" in capsys.readouterr().out


def test_unknown_dump_option_fails_in_python_as_in_the_compiler(
        monkeypatch):
    monkeypatch.setenv("NVFUSER_DUMP", "fx_partiton")
    with pytest.raises(ValueError, match="NVFUSER_DUMP: unknown option "
                                         "'fx_partiton'; valid options are"):
        compile_graph(torch.fx.symbolic_trace(ExpThenSort()),
                      [torch.randn(4, 8)])


def test_dump_enabled_refuses_names_that_are_not_options(monkeypatch):
    monkeypatch.delenv("NVFUSER_DUMP", raising=False)
    assert not _C.dump_enabled("fx_partition")
    with pytest.raises(ValueError, match="unknown option 'fx_partitions'"):
        _C.dump_enabled("fx_partitions")


def test_an_unknown_option_shows_its_control_characters(monkeypatch):
    # An invisible \x01 made "unknown option 'cuda_kernel'" next to a list
    # that has cuda_kernel.
    monkeypatch.setenv("NVFUSER_DUMP", "cuda_kernel\x01")
    with pytest.raises(ValueError,
                       match=r"unknown option 'cuda_kernel\\x01'; valid"):
        _C.dump_enabled("fx_partition")


def test_a_bad_module_bound_is_not_read_at_exit_without_kernels():
    # NVFUSER_MAX_LOADED_MODULES bounds the GPU's loaded kernels; exit read
    # it even where no kernel was loaded and failed in an atexit callback.
    script = ("import torch\nfrom nvfuser import FusionDefinition\n"
              "with FusionDefinition() as fd:\n"
              "    t = fd.define_tensor(shape=[-1])\n"
              "    fd.add_output(fd.ops.neg(t))\n"
              "print(fd.execute([torch.ones(3)])[0].sum().item())\n")
    env = dict(os.environ, NVFUSER_MAX_LOADED_MODULES="abc",
               CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, "-c", script], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "-3.0"
    assert "Exception ignored" not in done.stderr, done.stderr


def test_host_time_dump_prints_each_segment_kind(monkeypatch, capfd):
    import re
    from nvfuser import DataType, FusionDefinition
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        e = fd.ops.exp(x)
        fd.add_output(fd.ops.sum(e, [1]))
        fd.add_output(fd.ops.matmul(e, e))
    monkeypatch.setenv("NVFUSER_DUMP", "host_time")
    x = torch.randn(8, 8)
    fd.execute([x])
    capfd.readouterr()
    outs = fd.execute([x])
    torch.testing.assert_close(outs[1], x.exp() @ x.exp())
    out = capfd.readouterr().out
    assert re.search(r"\[host_time\] input signature lookup [0-9.]+ us", out)
    line = re.search(r"\[host_time\] [0-9.]+ us in segments:(.*)", out)
    assert line, out
    kinds = re.findall(r"(\w+) (\d+) x [0-9.]+ us", line.group(1))
    assert sorted(k for k, _ in kinds) == ["expr_eval", "pointwise",
                                           "reduction"], out
    # Then each segment: its kind, host time and ops.
    segs = re.findall(r"\[host_time\] g(\d+) (\w+) [0-9.]+ us: (.*)", out)
    assert len(segs) == 3, out
    assert {k for _, k, _ in segs} == {"expr_eval", "pointwise", "reduction"}
    assert any(k == "expr_eval" and "matmul" in ops for _, k, ops in segs), out


def test_scheduler_params_dump_prints_each_kernel_plan(monkeypatch, capfd):
    """NVFUSER_DUMP=scheduler_params prints the plan the scheduler hands the
    generator: its strategy and launch, and per output family the lanes,
    and why the lane proof narrowed them (a pad at 1 splits 2 lanes)."""
    from nvfuser import DataType, FusionDefinition
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(fd.ops.pad(x, [1, 1])))
        fd.add_output(fd.ops.sum(x, [0]))
    monkeypatch.setenv("NVFUSER_DUMP", "scheduler_params")
    x = torch.randn(4, 6)
    capfd.readouterr()
    outs = fd.execute([x])
    torch.testing.assert_close(
        outs[0], torch.nn.functional.pad(x, [1, 1]).exp())
    torch.testing.assert_close(outs[1], x.sum(0))
    out = capfd.readouterr().out
    plans = [line for line in out.splitlines()
             if line.startswith("[scheduler_params]")]
    assert len(plans) == 1, out
    assert "(reduction): serial reduction: 128 threads per block" in plans[0]
    assert ("family 1: output(s) [0], loop [4, 8], 1 lane(s) (2 lanes do "
            "not hold: a pad boundary at 1)") in out
    assert "family 0: output(s) [1], loop [6], 2 lane(s)\n" in out
