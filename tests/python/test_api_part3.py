"""nvFuser API fidelity, part 3: add_output(alias_input / stride_order),
contiguity in allocation order, introspection (scheduled IR, repro
scripts, profile, debug output) and FusionDefinition.segment."""

import itertools

import pytest
import torch

import nvfuser
from nvfuser import DataType, FusionDefinition
from printed import run_printed


def expected_strides(shape, stride_order):
    """Strides of a dense tensor laid out by stride_order (0 innermost)."""
    order = sorted(range(len(shape)), key=lambda d: -stride_order[d])
    dense = torch.empty([shape[d] for d in order])
    return dense.permute([order.index(d) for d in range(len(shape))]).stride()


def verify_stride_order(strides, stride_order):
    # nvFuser's check (tests/python/utils.py): strides sorted by the order.
    rank = len(strides)
    ranked = list(strides)
    for idx, axis in enumerate(stride_order):
        ranked[rank - 1 - axis] = strides[idx]
    assert sorted(ranked, reverse=True) == ranked


# ---- 1. add_output(alias_input=...) / add_output(stride_order=...) ------
def test_alias_input_updates_the_input_and_hides_the_output():
    # nvFuser's test_alias_output_to_input.
    x = torch.ones(4, 4)
    ptr = x.data_ptr()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        t1 = fd.ops.add(t0, fd.define_scalar(1.0))
        t2 = fd.ops.add(t1, fd.define_scalar(2.0))
        fd.add_output(t1, alias_input=t0)
        fd.add_output(t2)
    outs = fd.execute([x])
    assert len(outs) == 1
    torch.testing.assert_close(outs[0], torch.full((4, 4), 4.0))
    torch.testing.assert_close(x, torch.full((4, 4), 2.0))
    assert x.data_ptr() == ptr  # written into the input's storage
    fd.execute([x])  # and again: the update reads the updated input
    torch.testing.assert_close(x, torch.full((4, 4), 3.0))


def test_alias_input_other_outputs_read_the_old_values():
    x = torch.randn(3, 5)
    y = torch.randn(3, 5)
    x0 = x.clone()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        t1 = fd.from_pytorch(y)
        fd.add_output(fd.ops.mul(t0, 2.0), alias_input=t0)
        fd.add_output(fd.ops.add(t0, t1))
        fd.add_output(t0)  # the input itself, as it was
    out_sum, out_same = fd.execute([x, y])
    torch.testing.assert_close(x, x0 * 2.0)
    torch.testing.assert_close(out_sum, x0 + y)
    torch.testing.assert_close(out_same, x0)


def test_alias_input_printed_and_reexecuted():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        fd.add_output(fd.ops.neg(t0), alias_input=t0)
        fd.add_output(fd.ops.exp(t0))
    assert "fd.add_output(T1, alias_input=T0)" in str(fd)
    assert "alias_input=t0" in fd.python_definition()
    x = torch.randn(2, 3)
    x_script, x_repr = x.clone(), x.clone()
    scope = {}
    exec(fd.python_definition(), scope)  # noqa: S102
    (e1,) = scope["fd"].execute([x_script])
    torch.testing.assert_close(x_script, -x)
    torch.testing.assert_close(e1, x.exp())
    _, (e2,) = run_printed(fd, [x_repr])
    torch.testing.assert_close(e2, (-x).exp())  # ran twice on x_repr


def test_alias_input_errors():
    with pytest.raises(ValueError, match="not a fusion input"):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1], dtype=DataType.Float)
            t1 = fd.ops.neg(t0)
            fd.add_output(fd.ops.exp(t0), alias_input=t1)
    with pytest.raises(TypeError, match="has dtype Double but alias_input "
                                        "T0 has dtype Float; cast it first"):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1], dtype=DataType.Float)
            fd.add_output(fd.ops.cast(t0, DataType.Double), alias_input=t0)
    with pytest.raises(ValueError, match="has 1 dims but alias_input"):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
            fd.add_output(fd.ops.sum(t0, [0]), alias_input=t0)
    with pytest.raises(TypeError, match="alias_input must be an input "
                                        "Tensor of this definition, got "
                                        "Scalar"):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1], dtype=DataType.Float)
            s0 = fd.define_scalar(None, dtype=DataType.Float)
            fd.add_output(t0, alias_input=s0)
    with pytest.raises(ValueError, match="alias_input or stride_order, not "
                                         "both"):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1], dtype=DataType.Float)
            fd.add_output(t0, alias_input=t0, stride_order=[0])
    # An output broadcast beyond the input's shape cannot be written into it.
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[1, -1], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        fd.add_output(fd.ops.add(t0, t1), alias_input=t0)
    with pytest.raises(ValueError, match=r"input 0 is updated in place "
                                         r"\(alias_input\) but has shape "
                                         r"\(1, 3\) while the aliased output "
                                         r"has shape \(2, 3\)"):
        fd.execute([torch.randn(1, 3), torch.randn(2, 3)])


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_add_output_stride_order_sets_sizes_and_strides(perm):
    x = torch.arange(0, 24).reshape(2, 3, 4).float()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        fd.add_output(fd.ops.add(t0, 3.0), stride_order=list(perm))
        fd.add_output(fd.ops.mul(t0, 2.0), list(perm))  # positional form
    out, out2 = fd.execute([x])
    for o, ref in ((out, x + 3.0), (out2, x * 2.0)):
        torch.testing.assert_close(o, ref)
        assert o.shape == (2, 3, 4)
        assert o.stride() == expected_strides([2, 3, 4], perm)
        verify_stride_order(o.stride(), perm)
    assert "stride_order=%r" % (list(perm),) in str(fd)


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_ops_stride_order_lays_out_the_output(perm):
    # nvFuser's test_output_stride_order (the fd.ops.stride_order form).
    x = torch.arange(0, 24).reshape(2, 3, 4).float()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        t1 = fd.ops.add(t0, fd.define_scalar(3.0))
        fd.add_output(fd.ops.stride_order(t1, list(perm)))
    (out,) = fd.execute([x])
    torch.testing.assert_close(out, x + 3.0)
    assert out.stride() == expected_strides([2, 3, 4], perm)
    verify_stride_order(out.stride(), perm)
    _, (again,) = run_printed(fd, [x])
    assert again.stride() == out.stride()
    with pytest.raises(ValueError, match=r"stride_order: stride_order must "
                                         r"be a permutation of 0..2"):
        with FusionDefinition() as fd:
            t0 = fd.from_pytorch(x)
            fd.ops.stride_order(t0, [0, 1, 1])


def test_add_output_stride_order_errors_and_negative_dims():
    for order, kind, message in (
            ([0, 1], ValueError, "stride_order has 2 entries but the tensor "
                                 "has 3 dims"),
            ([0, 0, 1], ValueError, r"stride_order must be a permutation of "
                                    r"0..2, got \[0, 0, 1\]"),
            ([0, 1.5, 2], TypeError, r"stride_order\[1\] must be an int"),
            ("abc", TypeError, "stride_order must be a list of ints")):
        with pytest.raises(kind, match=message):
            with FusionDefinition() as fd:
                t0 = fd.define_tensor(shape=[-1, -1, -1])
                fd.add_output(t0, stride_order=order)
    x = torch.randn(2, 3)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.neg(fd.from_pytorch(x)), stride_order=[-2, -1])
    (out,) = fd.execute([x])  # -2, -1 are 0, 1: column-major
    assert out.stride() == (1, 2)
    torch.testing.assert_close(out, -x)


# ---- 2. contiguity in allocation order ------------------------------------
def permuted_input():
    """sizes (3, 4, 2), stride_order [1, 0, 2]; in allocation order
    (dims 2, 0, 1) the contiguity is [True, False, True]."""
    base = torch.randn(2, 3, 6)[..., :4]
    return base.permute(1, 2, 0)


def test_contiguity_is_read_in_allocation_order():
    y = permuted_input()
    assert y.stride() == (6, 1, 18)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1, -1],
                              contiguity=[True, False, True],
                              dtype=DataType.Float, stride_order=[1, 0, 2])
        fd.add_output(fd.ops.mul(t0, 2.0))
    torch.testing.assert_close(fd.execute([y])[0], y * 2.0)
    # Read per logical dim, the same list would claim dim 0 contiguous.
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1, -1],
                              contiguity=[False, True, True],
                              dtype=DataType.Float, stride_order=[1, 0, 2])
        fd.add_output(fd.ops.mul(t0, 2.0))
    with pytest.raises(ValueError, match="input 0 .* is not contiguous as "
                                         "declared: dim 0 has stride 6 but "
                                         "contiguity requires 4"):
        fd.execute([y])


def test_descriptors_and_from_pytorch_use_allocation_order():
    y = permuted_input()
    assert nvfuser.compute_tensor_descriptor(y.size(), y.stride()) == \
        ([True, False, True], [1, 0, 2])
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(y)
        fd.add_output(fd.ops.neg(t0))
    assert "contiguity=[True, False, True]" in str(fd)
    assert "stride_order=[1, 0, 2]" in str(fd)
    torch.testing.assert_close(fd.execute([y])[0], -y)
    _, (again,) = run_printed(fd, [y])
    torch.testing.assert_close(again, -y)


def test_contiguity_broadcast_entries_follow_the_stride_order():
    x = torch.randn(5, 1).t()  # sizes (1, 5), strides (1, 1)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[1, -1], contiguity=[True, None],
                              stride_order=[0, 1])
        fd.add_output(fd.ops.neg(t0))
    torch.testing.assert_close(fd.execute([x])[0], -x)
    with pytest.raises(ValueError, match="dim 0 is a broadcast dim"):
        with FusionDefinition() as fd:
            fd.define_tensor(shape=[1, -1], contiguity=[None, True],
                             stride_order=[0, 1])
    # Lists that do not fit reach the compiler's checks unchanged.
    with pytest.raises(ValueError, match="contiguity has 1 entries but "
                                         "shape has 2 dims"):
        with FusionDefinition() as fd:
            fd.define_tensor(shape=[-1, -1], contiguity=[True],
                             stride_order=[0, 1])
    with pytest.raises(ValueError, match="stride_order must be a "
                                         "permutation of 0..1"):
        with FusionDefinition() as fd:
            fd.define_tensor(shape=[-1, -1], contiguity=[True, False],
                             stride_order=[1, 1])
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[1, -1], contiguity=True,
                              stride_order=[0, 1])
        fd.add_output(fd.ops.neg(t0))
    assert "contiguity=[True, None]" in str(fd)


# ---- 3. introspection -----------------------------------------------------
def define_two_segments(fd):
    t0 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
    t1 = fd.ops.exp(t0)
    t2 = fd.ops.segment_set(t1)
    t3 = fd.ops.sum(fd.ops.mul(t2, 2.0), [1])
    fd.add_output(t3)
    fd.add_output(t1)


def test_scheduled_fusion_ir():
    with FusionDefinition() as fd:
        define_two_segments(fd)
    x = torch.randn(4, 6)
    with pytest.raises(RuntimeError, match="execute the fusion first"):
        fd.last_scheduled_fusion_ir()
    planned = fd.scheduled_fusion_ir_for([x])
    fd.execute([x])
    text = fd.last_scheduled_fusion_ir(tensor_transforms=True)
    assert text == planned
    assert "Segments (%d):" % len(fd.last_segmentation()["groups"]) in text
    for group in fd.last_segmentation()["groups"]:
        assert group["scheduler"] in text
    assert fd.last_concrete_ir().rstrip() in text
    assert "    T1_g_float[iS{4}, iS{6}] = exp(T0)" in text
    with pytest.raises(ValueError, match="the fusion has 1 inputs but 2"):
        fd.scheduled_fusion_ir_for([x, x])


def test_print_repro_and_last_repro_script(capsys):
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float,
                              contiguity=[False, True])
        s0 = fd.define_scalar(None, dtype=DataType.Double)
        fd.add_output(fd.ops.mul(t0, s0))
    with pytest.raises(RuntimeError, match="save_repro_inputs=True"):
        fd.last_repro_script()
    x = torch.randn(4, 8)[:, :5]
    fd.execute([x, float("inf")], print_repro=True)
    printed = capsys.readouterr().out
    assert "fd.execute(inputs)" in printed
    assert ".as_strided((4, 5), (8, 1))" in printed
    assert 'float("inf")' in printed
    assert printed == fd.last_repro_script() + "\n"  # print adds one
    scope = {}
    exec(printed, scope)  # noqa: S102 (the script runs as printed)
    fd.execute([torch.ones(2, 3), 2.0], save_repro_inputs=True)
    script = fd.last_repro_script()
    assert "torch.testing.make_tensor((2, 3), dtype=torch.float32, " \
           "device='cpu', low=1.0, high=2.0)" in script
    exec(script, {})  # noqa: S102
    assert fd.repro_script_for().endswith("nvfuser_fusion_id%d(fd)\n" %
                                          fd.id())


def test_profile():
    with FusionDefinition() as fd:
        define_two_segments(fd)
    x = torch.randn(4, 6)
    fd.execute([x])
    with pytest.raises(ValueError, match="profile=True"):
        fd.profile()
    outs = fd.execute([x], profile=True)
    torch.testing.assert_close(outs[0], (x.exp() * 2.0).sum(1))
    prof = fd.profile()
    groups = fd.last_segmentation()["groups"]
    assert prof.fusion_id == fd.id()
    assert prof.segments == len(groups) >= 2
    assert [k.scheduler for k in prof.kernel_profiles] == \
        [g["scheduler"] for g in groups]
    assert prof.host_time_ms > 0
    # Each segment's own time (host time on the CPU), within the whole.
    times = [k.time_ms for k in prof.kernel_profiles]
    assert all(t is not None and t >= 0 for t in times), times
    assert sum(times) <= prof.host_time_ms
    assert prof.input_bytes == x.numel() * 4
    assert prof.output_bytes == (4 + 24) * 4


def test_debug_output(monkeypatch):
    with FusionDefinition() as fd:
        define_two_segments(fd)
    x = torch.randn(3, 7)
    fd.execute([x])
    assert fd.debug_output() is None
    monkeypatch.setenv("NVFUSER_DUMP", "fusion_ir")
    outs = fd.execute([x], capture_debug_output=True)
    torch.testing.assert_close(outs[1], x.exp())
    assert fd.fusion_ir().strip() in fd.debug_output()


# ---- 4. segment ------------------------------------------------------------
def test_segment_returns_definitions_that_compute_the_same():
    with FusionDefinition() as fd:
        define_two_segments(fd)
    x = torch.randn(5, 7)
    expected = fd.execute([x])
    segments = fd.segment([x])
    assert len(segments) == len(fd.last_segmentation()["groups"]) >= 2
    assert all(isinstance(s, FusionDefinition) for s in segments)
    maps = fd.segment_index_space_maps
    assert set(maps) == set(segments)
    # Run each segment by hand through the maps.
    values = {fd.inputs()[0]: x}
    for seg in segments:
        outs = seg.execute([values[maps[seg][v]] for v in seg.inputs()])
        for v, out in zip(seg.outputs(), outs):
            values[maps[seg][v]] = out
    for value, ref in zip(fd.outputs(), expected):
        torch.testing.assert_close(values[value], ref)
    # execute now runs the segments.
    for out, ref in zip(fd.execute([x], profile=True), expected):
        torch.testing.assert_close(out, ref)
    assert [k.scheduler for k in fd.profile().kernel_profiles] == \
        [g["scheduler"] for g in fd.last_segmentation()["groups"]]


def test_segment_of_one_segment_and_of_a_strided_input():
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        fd.add_output(fd.ops.relu(t0))
    assert fd.segment([torch.randn(2, 3)]) == []
    y = permuted_input()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(y)
        t1 = fd.ops.segment_set(fd.ops.neg(t0))
        fd.add_output(fd.ops.sum(t1, [0]))
    segments = fd.segment([y])
    assert len(segments) >= 2
    assert "stride_order=[1, 0, 2]" in str(segments[0])
    torch.testing.assert_close(fd.execute([y])[0], (-y).sum(0))
    with pytest.raises(ValueError, match="the fusion has 1 inputs but 0"):
        fd.segment([])
    with pytest.raises(TypeError, match="inputs must be a list, got str"):
        fd.segment("y")
    with pytest.raises(TypeError, match="input 0 has unsupported type str"):
        fd.segment(["y"])


def test_segment_keeps_output_options_and_clone_keeps_them_too():
    x = torch.randn(4, 6)
    x0 = x.clone()
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        t1 = fd.ops.segment_set(fd.ops.exp(t0))
        fd.add_output(fd.ops.sum(t1, [1]))
        fd.add_output(fd.ops.mul(t1, 2.0), stride_order=[0, 1])
        fd.add_output(fd.ops.neg(t0), alias_input=t0)
    assert len(fd.segment([x])) >= 2
    total, doubled = fd.execute([x])
    torch.testing.assert_close(total, x0.exp().sum(1))
    torch.testing.assert_close(doubled, x0.exp() * 2.0)
    assert doubled.stride() == (1, 4)
    torch.testing.assert_close(x, -x0)
    other = FusionDefinition()
    nvfuser.clone(fd, other)
    (_, again) = other.execute([x])
    assert again.stride() == (1, 4)
    torch.testing.assert_close(x, x0)  # negated back in place


@pytest.mark.parametrize("tensor, value, dtype", [
    (torch.arange(6).reshape(2, 3), 3, DataType.Double),  # Int + 3.0
    (torch.ones(2, 3, dtype=torch.half), 0.1, DataType.Half),
    (torch.ones(2, 3, dtype=torch.double), 0.1, DataType.Float),
    (torch.tensor([[True, False]]), 1, DataType.Int),
    (torch.arange(4, dtype=torch.int32), 5, DataType.Int32),
])
def test_printed_definitions_keep_a_constant_scalars_dtype(tensor, value,
                                                            dtype):
    # The printers wrote define_scalar(3, dtype=DataType.Double) as a bare
    # 3, which is an Int: the printed script computed another dtype.
    with FusionDefinition() as fd:
        t = fd.from_pytorch(tensor)
        fd.add_output(fd.ops.add(t, fd.define_scalar(value, dtype=dtype)))
    (want,) = fd.execute([tensor])
    for got in run_printed(fd, [tensor]):
        assert got[0].dtype == want.dtype
        assert torch.equal(got[0], want)
    natural = DataType.Int if isinstance(value, int) else DataType.Double
    assert ("dtype=DataType.%s" % dtype.name in fd.python_definition()) == \
        (dtype != natural)


def test_printed_float_constants_are_pythons_repr():
    # The printer wrote the shortest %g text (7e+04 for 70000.0): it read
    # back exactly but is not what Python prints.
    import random
    import re
    import struct
    rng = random.Random(24)
    values = [70000.0, 0.001, 1e16, 1.5e-05, 1e300, -0.0, 0.1, 5e-324,
              1.7976931348623157e308, 0.0001, 1e15, 9999999999999998.0]
    values += [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
               for _ in range(500)]
    values += [rng.uniform(-1e6, 1e6) for _ in range(500)]
    # Powers of two: the digits below and above round differently there.
    values += [2.0 ** e for e in range(-1074, 1024, 7)]
    values += [7.1202363472230444e-307]
    for v in values:
        if v != v or abs(v) == float("inf"):
            continue
        with FusionDefinition() as fd:
            t = fd.define_tensor(shape=[-1], dtype=DataType.Double)
            fd.add_output(fd.ops.add(t, v))
        printed = re.search(r"fd.ops.add\(t0, ([^)]*)\)",
                            fd.python_definition()).group(1)
        assert printed == repr(v)
