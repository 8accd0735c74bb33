"""nvFuser users' scripts run unmodified (issue 17): each test is written
as an nvFuser user writes it."""

import os
import re

import pytest
import torch

import nvfuser
from nvfuser import DataType, FusionCache, FusionDefinition
from nvfuser.pytorch_utils import torch_dtype_to_nvfuser_dtype


def define_gelu_like(fd):
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                          dtype=DataType.Float)
    s0 = fd.define_scalar(None, dtype=DataType.Double)
    t1 = fd.ops.mul(fd.ops.tanh(t0), s0)
    fd.add_output(fd.ops.add(t1, t0))


# ---- 1. FusionCache ------------------------------------------------------
def test_fusion_cache_reuses_a_definition_built_again():
    FusionCache.reset()
    x = torch.randn(4, 8)
    fds = []
    for _ in range(3):  # a training loop defining the fusion every step
        with FusionDefinition() as fd:
            define_gelu_like(fd)
        out = fd.execute([x, 0.5])[0]
        torch.testing.assert_close(out, torch.tanh(x) * 0.5 + x)
        fds.append(fd)
    assert FusionCache.get().num_fusions() == 1
    assert [fd.id() for fd in fds] == [0, 0, 0]
    # The same compiled fusion, not an equal copy of it.
    assert fds[0].last_cuda_code() == fds[2].last_cuda_code()
    assert fds[0]._fusion is fds[2]._fusion


def test_fusion_cache_counts_distinct_definitions():
    FusionCache.reset()
    with FusionDefinition() as fd0:
        define_gelu_like(fd0)
    with FusionDefinition() as fd1:
        t0 = fd1.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        fd1.add_output(fd1.ops.exp(t0))
    # Same ops, another layout: a different fusion.
    with FusionDefinition() as fd2:
        t0 = fd2.define_tensor(shape=[-1, -1], contiguity=[False, True],
                               dtype=DataType.Float)
        fd2.add_output(fd2.ops.exp(t0))
    assert FusionCache.get().num_fusions() == 3
    assert [fd0.id(), fd1.id(), fd2.id()] == [0, 1, 2]
    x = torch.randn(6, 8)[:, :4]
    torch.testing.assert_close(fd2.execute([x])[0], x.exp())


def test_fusion_cache_tells_constants_apart_exactly():
    """Printed texts round constants; the cache must not."""
    FusionCache.reset()
    fds = []
    for c in [0.1, 0.1000000000000001, 2, 2.0, 0.1]:
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1], dtype=DataType.Double)
            fd.add_output(fd.ops.mul(t0, c))
        fds.append(fd)
    assert [fd.id() for fd in fds] == [0, 1, 2, 3, 0]
    x = torch.ones(3, dtype=torch.float64)
    torch.testing.assert_close(fds[1].execute([x])[0],
                               x * 0.1000000000000001, rtol=0, atol=0)


def test_fusion_cache_reset_starts_over():
    with FusionDefinition() as fd:
        define_gelu_like(fd)
    FusionCache.reset()
    assert FusionCache.get().num_fusions() == 0
    x = torch.randn(2, 3)
    # A definition made before reset keeps running.
    torch.testing.assert_close(fd.execute([x, 2.0])[0],
                               torch.tanh(x) * 2.0 + x)
    with FusionDefinition() as again:
        define_gelu_like(again)
    assert FusionCache.get().num_fusions() == 1 and again.id() == 0
    assert FusionCache.get() is FusionCache.get()


def test_subclass_definition_uses_the_cache():
    class Exp(FusionDefinition):
        def definition(self):
            t0 = self.define_tensor(shape=[-1], dtype=DataType.Float)
            self.add_output(self.ops.exp(t0))

    FusionCache.reset()
    x = torch.randn(5)
    a, b = Exp(), Exp()
    torch.testing.assert_close(a.execute([x])[0], x.exp())
    torch.testing.assert_close(b.execute([x])[0], x.exp())
    assert FusionCache.get().num_fusions() == 1 and a.id() == b.id() == 0


# ---- 2. print(fd) --------------------------------------------------------
def run_printed(fd, inputs):
    """What a user does with a printed repro: paste, define, execute."""
    scope = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(str(fd), scope)
    func = scope["nvfuser_fusion_id%d" % fd.id()]
    with FusionDefinition() as repro:
        func(repro)
    return repro, repro.execute(inputs)


def test_print_is_an_executable_definition(capsys):
    FusionCache.reset()
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, 4], contiguity=[True, True],
                              dtype=DataType.Half)
        s0 = fd.define_scalar(None, dtype=DataType.Double)
        t1 = fd.ops.cast(t0, DataType.Float)
        t2 = fd.ops.sum(fd.ops.mul(t1, s0), dims=[1])
        fd.add_output(t2)
    print(fd)
    text = capsys.readouterr().out
    assert text.startswith(
        "def nvfuser_fusion_id0(fd : FusionDefinition) -> None :\n"
        "    T0 = fd.define_tensor(shape=[-1, 4], contiguity=[True, True], "
        "dtype=DataType.Half, is_cpu=False)\n"
        "    S0 = fd.define_scalar(None, dtype=DataType.Double)\n")
    assert text.rstrip().splitlines()[-1] == "    fd.add_output(T3)"
    assert repr(fd) == str(fd)
    x = torch.randn(3, 4).half()
    repro, outs = run_printed(fd, [x, 1.5])
    torch.testing.assert_close(outs[0], fd.execute([x, 1.5])[0])
    assert repro.id() == fd.id()  # the repro is the same cached fusion


def test_print_keeps_layout_and_cpu_scalars():
    """The C++ printer alone drops is_cpu and prints every dim
    contiguous; the printed repro keeps what was defined."""
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[False, True],
                              dtype=DataType.Float, stride_order=[0, 1])
        t1 = fd.define_tensor(shape=[], dtype=DataType.Float, is_cpu=True)
        fd.add_output(fd.ops.mul(t0, t1))
    text = str(fd)
    assert "contiguity=[False, True]" in text
    assert "stride_order=[0, 1]" in text
    assert "T1 = fd.define_tensor(shape=[], dtype=DataType.Float, " \
           "is_cpu=True)" in text
    x = torch.randn(8, 6).t()[:, :3]  # column-major, strided
    c = torch.tensor(3.0)
    _, outs = run_printed(fd, [x, c])
    torch.testing.assert_close(outs[0], x * 3.0)
    assert "is_cpu=True" in fd.python_definition()
    assert "contiguity=[False, True]" in fd.python_definition()


def test_fusion_ir_is_still_reachable():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, 1], dtype=DataType.BFloat16)
        fd.add_output(fd.ops.expand(t0, shape=[-1, 8]))
    assert "T1_g_bf16[iS{i0}, bS{1 ex 8}]" in fd.fusion_ir()
    assert "T1 = fd.ops.expand(T0, shape=[-1, 8])" in str(fd)


# ---- 3. module functions and fd accessors ---------------------------------
def test_clone_copies_a_definition():
    with FusionDefinition() as fd:
        define_gelu_like(fd)
    other = FusionDefinition()
    nvfuser.clone(fd, other)
    assert other.id() == fd.id() and str(other) == str(fd)
    x = torch.randn(3, 5)
    torch.testing.assert_close(other.execute([x, 0.25])[0],
                               fd.execute([x, 0.25])[0])
    with pytest.raises(RuntimeError, match="already has a definition"):
        nvfuser.clone(fd, other)


def test_inputs_outputs_and_id():
    fd = FusionDefinition()
    assert fd.id() is None
    with fd:
        t0 = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        s0 = fd.define_scalar(None, dtype=DataType.Float)
        c = fd.define_scalar(2.0)  # a constant, not an input
        t1 = fd.ops.mul(fd.ops.add(t0, s0), c)
        fd.add_output(t1)
        fd.add_output(t0)
    assert fd.inputs() == [t0, s0]
    assert fd.outputs() == [t1, t0]
    assert isinstance(fd.id(), int)


def test_version_and_tensor_descriptors():
    assert str(nvfuser.version()) == nvfuser.__version__
    x = torch.randn(2, 3, 4).permute(2, 0, 1)
    contiguity, stride_order = nvfuser.compute_tensor_descriptor(
        x.size(), x.stride())
    assert contiguity == [True, True, True]
    assert stride_order == [0, 2, 1]
    assert nvfuser.compute_contiguity([4, 1, 6], [12, 6, 1]) == \
        [False, None, True]
    assert nvfuser.compute_tensor_descriptor([2, 3], [3, 1]) == \
        ([True, True], [1, 0])
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=contiguity,
                              dtype=torch_dtype_to_nvfuser_dtype(x.dtype),
                              stride_order=stride_order)
        fd.add_output(fd.ops.neg(t0))
    torch.testing.assert_close(fd.execute([x])[0], -x)
    assert torch_dtype_to_nvfuser_dtype(torch.bfloat16) == DataType.BFloat16


# ---- 5. error contracts ---------------------------------------------------
def test_execute_of_an_empty_definition_is_not_implemented():
    with pytest.raises(NotImplementedError):
        FusionDefinition().execute([])
    with FusionDefinition() as fd:
        pass
    with pytest.raises(NotImplementedError):
        fd.execute([])


# ---- 4. nvFuser's option names ------------------------------------------
@pytest.mark.parametrize("variable,value", [
    ("NVFUSER_ENABLE", "id_model,fuse_matmul"),
    ("NVFUSER_DISABLE", "matmul_expr_eval, kernel_reuse,parallel_compile"),
    ("NVFUSER_DUMP", "python_definition"),
])
def test_nvfuser_option_names_are_accepted_as_no_ops(variable, value,
                                                     monkeypatch):
    monkeypatch.setenv(variable, value)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(t0))
    x = torch.randn(6)
    torch.testing.assert_close(fd.execute([x])[0], x.exp())
    torch.testing.assert_close(
        fd.execute([x], _enable_options=["id_model"],
                   _disable_options=["kernel_reuse"])[0], x.exp())


def test_option_names_nobody_defines_are_errors(monkeypatch):
    monkeypatch.setenv("NVFUSER_DISABLE", "kernel_reuse,kernel_reused")
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(t0))
    with pytest.raises(ValueError, match="unknown option 'kernel_reused'"):
        fd.execute([torch.randn(3)])


# ---- 6. docs/api.md -------------------------------------------------------
API_MD = os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                      "api.md")
OPTION_KINDS = {"NVFUSER_DUMP": "dump", "NVFUSER_ENABLE": "enable",
                "NVFUSER_DISABLE": "disable"}


def api_table():
    """{(kind, name): status} of every row of docs/api.md's tables."""
    rows = {}
    with open(API_MD) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 4 or not cells[0].startswith("`"):
                continue
            for name in re.findall(r"`([^`]+)`", cells[0]):
                rows[(cells[1], name)] = cells[2]
    return rows


def names_with(rows, kind, statuses):
    return {n for (k, n), s in rows.items() if k == kind and s in statuses}


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_api_table_matches_the_package():
    rows = api_table()
    present = ("supported", "partial")
    with FusionDefinition() as fd:
        pass
    # Every public method and op has a row that says it is there...
    assert names_with(rows, "method", present) >= public(FusionDefinition)
    assert names_with(rows, "op", present) == public(fd.ops)
    # ...and nothing the table calls supported is missing.
    for name in names_with(rows, "method", present):
        assert hasattr(FusionDefinition, name), name
    module = names_with(rows, "module", present)
    for name in module:
        obj = nvfuser
        for part in name.split("."):
            obj = getattr(obj, part)
    assert module >= set(nvfuser.__all__)
    for name in names_with(rows, "op", ("not supported",)):
        assert not hasattr(fd.ops, name), name


def test_api_table_lists_the_options_the_compiler_accepts():
    rows = api_table()
    for variable, group in OPTION_KINDS.items():
        assert names_with(rows, variable, ("supported",)) == \
            set(nvfuser._C.option_names(group)), variable
        assert names_with(rows, variable, ("no-op",)) == \
            set(nvfuser._C.option_names(group, nvfuser_noops=True)), variable


# ---- the harness: what nvFuser's own test helper does with a definition ----
def test_harness_build_execute_print_clone_segment_and_compare():
    # As nvFuser's exec_nvfuser: build, execute, check the cache, exec the
    # printed definition, clone, segment, execute again, compare.
    def definition(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True],
                              dtype=DataType.Float)
        t1 = fd.ops.exp(t0)
        fd.add_output(fd.ops.sum(fd.ops.mul(t1, 0.123456789012345), [1]))
        fd.add_output(fd.ops.cast(t1, DataType.Half))
        fd.add_output(fd.ops.matmul(t1, fd.ops.permute(t1, [1, 0])))
    x = torch.randn(6, 9)
    want = [(x.exp() * 0.123456789012345).sum(1), x.exp().half(),
            x.exp() @ x.exp().t()]
    FusionCache.reset()
    with FusionDefinition() as fd:
        definition(fd)
    out = fd.execute([x])
    for o, w in zip(out, want):
        torch.testing.assert_close(o, w)
    assert FusionCache.get().num_fusions() == 1
    with FusionDefinition() as again:
        definition(again)
    assert FusionCache.get().num_fusions() == 1 and again.id() == fd.id()
    # The printed definition, executed, builds the same fusion.
    scope = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(repr(fd), scope)  # noqa: S102 (our own printed definition)
    name = next(k for k in scope if k.startswith("nvfuser_fusion_id"))
    with FusionDefinition() as printed:
        scope[name](printed)
    assert printed.id() == fd.id()
    clone = FusionDefinition()
    nvfuser.clone(fd, clone)
    segments = fd.segment([x])  # execute now runs these
    assert len(segments) >= 2
    for run in (printed, clone, fd):
        for o, w in zip(run.execute([x]), want):
            torch.testing.assert_close(o, w)
    # Nothing new but the segments' own definitions.
    assert FusionCache.get().num_fusions() == 1 + len(segments)
