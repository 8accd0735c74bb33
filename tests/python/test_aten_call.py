"""fd.ops.aten_call: ATen operators called by name inside a fusion (as
the FX backend calls attention and the embedding's backward): numerics
against torch, one expr_eval segment per call with the ops around it
fused, printed definitions that run again, and the errors of bad calls."""

import pytest
import torch

from nvfuser import DataType, FusionCache, FusionDefinition

EMB_BWD = torch.ops.aten.embedding_dense_backward.default


def _embedding_backward_fusion(num_weights=10):
    with FusionDefinition() as fd:
        g = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        ids = fd.define_tensor(shape=[-1], dtype=DataType.Int)
        g2 = fd.ops.mul(g, 2.0)
        (w,) = fd.ops.aten_call(
            EMB_BWD, [g2, ids, num_weights, -1, False],
            results=[(0, DataType.Float, [num_weights, (g2, 1)])])
        fd.add_output(fd.ops.add(w, 1.0))
    return fd


def test_embedding_backward_matches_torch_and_fuses_around_the_call():
    fd = _embedding_backward_fusion()
    g, ids = torch.randn(5, 4), torch.tensor([1, 3, 3, 0, 9])
    (out,) = fd.execute([g, ids])
    want = EMB_BWD(g * 2, ids, 10, -1, False) + 1
    torch.testing.assert_close(out, want)
    # The mul before and the add after are kernels (pointwise), the call
    # is ATen's: three segments, the middle one expr_eval.
    ir = fd.last_scheduled_fusion_ir()
    assert "g1 expr_eval" in ir and ir.count("pointwise") == 2, ir


def test_symbolic_extents_follow_the_arguments():
    # Result dim 1 is (g2, 1): a second width runs with the same definition.
    fd = _embedding_backward_fusion()
    for width in (4, 7):
        g, ids = torch.randn(3, width), torch.tensor([0, 2, 2])
        (out,) = fd.execute([g, ids])
        assert out.shape == (10, width)
        torch.testing.assert_close(out, EMB_BWD(g * 2, ids, 10, -1, False)
                                   + 1)


def test_several_results_and_keyword_arguments():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        v, i = fd.ops.aten_call(
            "aten::topk", [x, 2], kwargs={"largest": False},
            results=[(0, DataType.Float, [(x, 0), 2]),
                     (1, DataType.Int, [(x, 0), 2])])
        fd.add_output(fd.ops.neg(v))
        fd.add_output(i)
    x = torch.randn(6, 5)
    neg, idx = fd.execute([x])
    ref = torch.topk(x, 2, largest=False)
    assert torch.equal(neg, -ref.values) and torch.equal(idx, ref.indices)


def test_a_scalar_input_is_passed_as_a_number():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        k = fd.define_scalar(dtype=DataType.Double)
        (y,) = fd.ops.aten_call("aten::pow.Tensor_Scalar", [x, k],
                                results=[(0, DataType.Float, [(x, 0)])])
        fd.add_output(y)
    x = torch.rand(5) + 0.5
    (out,) = fd.execute([x, 3.0])
    torch.testing.assert_close(out, x.pow(3.0))


def _index_fusion():
    # x[:, i, j] with a None for dim 0: aten::index.Tensor takes Tensor?[].
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1, -1], dtype=DataType.Float)
        i = fd.define_tensor(shape=[-1, 1], dtype=DataType.Int)
        j = fd.define_tensor(shape=[-1], dtype=DataType.Int)
        x2 = fd.ops.mul(x, 2.0)
        (y,) = fd.ops.aten_call(
            "aten::index.Tensor", [x2, [None, i, j]],
            results=[(0, DataType.Float, [(x2, 0), (i, 0), (j, 0)])])
        (c,) = fd.ops.aten_call(
            "aten::cat", [[y, y], 1],
            results=[(0, DataType.Float, [(y, 0), 2 * 3, (y, 2)])])
        fd.add_output(fd.ops.add(c, 1.0))
    return fd


def test_lists_of_tensors_with_none():
    fd = _index_fusion()
    x = torch.randn(2, 5, 4)
    i, j = torch.tensor([[0], [4], [2]]), torch.tensor([1, 3])
    (out,) = fd.execute([x, i, j])
    y = (x * 2)[:, i, j]
    torch.testing.assert_close(out, torch.cat([y, y], 1) + 1)
    text = repr(fd)
    assert "[T3, [None, T1, T2]]" in text and "[[T4, T4], 1]" in text, text
    ns = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(text, ns)  # noqa: S102 (our own printed definition)
    name = next(k for k in ns if k.startswith("nvfuser_fusion_id"))
    with FusionDefinition() as again:
        ns[name](again)
    torch.testing.assert_close(again.execute([x, i, j])[0], out)


def test_printed_definition_runs_again():
    fd = _embedding_backward_fusion(num_weights=6)
    text = repr(fd)
    assert "fd.ops.aten_call('aten::embedding_dense_backward.default', " \
        "[T2, T1, 6, -1, False], results=[(0, DataType.Float, " \
        "[6, (T2, 1)])])" in text, text
    ns = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(text, ns)  # noqa: S102 (our own printed definition)
    name = next(k for k in ns if k.startswith("nvfuser_fusion_id"))
    with FusionDefinition() as again:
        ns[name](again)
    g, ids = torch.randn(4, 3), torch.tensor([5, 0, 5, 1])
    torch.testing.assert_close(again.execute([g, ids])[0],
                               fd.execute([g, ids])[0])


def test_the_fusion_cache_tells_calls_apart():
    FusionCache.reset()
    a = _embedding_backward_fusion(num_weights=10)
    b = _embedding_backward_fusion(num_weights=10)
    c = _embedding_backward_fusion(num_weights=12)
    assert a.id() == b.id() and a.id() != c.id()


def test_float_constants_print_every_digit():
    # Printed definitions are repros: a constant must read back exactly
    # (it printed 6 digits: 0.123457).
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], dtype=DataType.Double)
        y = fd.ops.mul(x, 0.123456789012345)
        fd.add_output(fd.ops.add(y, float("inf")))
        fd.add_output(fd.ops.mul(x, 2.0))
    text = repr(fd)
    assert "0.123456789012345" in text and "float('inf')" in text, text
    assert "fd.ops.mul(T0, 2.0)" in text, text


@pytest.mark.parametrize("op, args, results, kind, message", [
    ("aten::no_such_op", [], [], ValueError, "has no operator"),
    ("not a name", [], [], ValueError, "is not an operator name"),
    ("aten::add_.Tensor", ["x", "x"], [(0, DataType.Float, [4])],
     ValueError, "writes to an argument or returns a view"),
    ("aten::view", ["x", [4]], [(0, DataType.Float, [4])], ValueError,
     "writes to an argument or returns a view"),
    ("aten::topk", ["x", 2], [(5, DataType.Float, [2])], ValueError,
     "has 2 returns; no return 5"),
    ("aten::_local_scalar_dense", ["x"], [(0, DataType.Float, [])],
     TypeError, "return 0 of .* is a .*, not a Tensor"),
    ("aten::topk", ["x", "x"], [(0, DataType.Float, [2])], TypeError,
     "argument 'k' is int, got a Tensor"),
    ("aten::topk", ["x", 2.5], [(0, DataType.Float, [2])], TypeError,
     "argument 'k' is int, got 2.5"),
    ("aten::topk", ["x", None], [(0, DataType.Float, [2])], TypeError,
     "argument 'k' is int, got None"),
    ("aten::topk", ["x", 2, 0, "yes"], [(0, DataType.Float, [2])], TypeError,
     "argument 'largest' is bool, got 'yes'"),
    ("aten::topk", ["x"], [(0, DataType.Float, [2])], TypeError,
     "needs argument 'k'"),
    ("aten::topk", ["x", 2], [(0, "float", [2])], TypeError,
     "must be a DataType"),
    ("aten::topk", ["x", 2], [], TypeError, "non-empty list"),
    ("aten::topk", ["x", 2], [(0, DataType.Float, [-2])], ValueError,
     "negative size"),
    ("aten::topk", ["x", object()], [(0, DataType.Float, [2])], TypeError,
     "argument 'k' is int, got <object"),
    ("aten::sum", [1.0], [(0, DataType.Float, [])], TypeError,
     "argument 'self' is Tensor, got 1.0"),
    ("aten::cat", [["x", None]], [(0, DataType.Float, [4])], TypeError,
     r"argument 'tensors' is List\[Tensor\], got \[T0"),
    ("aten::cat", [["x", 2]], [(0, DataType.Float, [4])], TypeError,
     r"argument 'tensors' is List\[Tensor\]"),
    ("aten::index.Tensor", ["x", [1]], [(0, DataType.Float, [4])],
     TypeError, r"argument 'indices' is List\[Optional\[Tensor\]\], "
     r"got \[1\]"),
])
def test_bad_calls_raise_naming_the_problem(op, args, results, kind,
                                            message):
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[4], dtype=DataType.Float)
        args = [x if a == "x" else
                [x if b == "x" else b for b in a] if isinstance(a, list)
                else a for a in args]
        with pytest.raises(kind, match=message):
            fd.ops.aten_call(op, args, results=results)
        fd.add_output(x)


def test_a_string_argument_must_be_printable_ascii():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[4], dtype=DataType.Float)
        r = [(0, DataType.Float, [4])]
        for bad in ("tan\nh", "t\u00e4nh"):
            with pytest.raises(TypeError, match="not printable ASCII"):
                fd.ops.aten_call("aten::gelu", [x], r,
                                 kwargs={"approximate": bad})
        (y,) = fd.ops.aten_call("aten::gelu", [x], r,
                                kwargs={"approximate": "tanh"})
        fd.add_output(y)
    x = torch.randn(4)
    torch.testing.assert_close(
        fd.execute([x])[0], torch.nn.functional.gelu(x, approximate="tanh"))
    assert "'tanh'" in repr(fd)


def test_an_unknown_keyword_and_a_repeated_argument():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[4], dtype=DataType.Float)
        r = [(0, DataType.Float, [2])]
        with pytest.raises(TypeError, match="has no argument 'kk'"):
            fd.ops.aten_call("aten::topk", [x, 2], r, kwargs={"kk": 1})
        with pytest.raises(TypeError, match="got argument 'k' twice"):
            fd.ops.aten_call("aten::topk", [x, 2], r, kwargs={"k": 1})
        fd.add_output(x)


def test_a_wrong_declared_result_raises_at_execute():
    # The definition says Float [4, 3], topk gives [4, 2]: a RuntimeError
    # naming the return, not a wrong tensor.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[4, 5], dtype=DataType.Float)
        (v,) = fd.ops.aten_call("aten::topk", [x, 2],
                                results=[(0, DataType.Float, [4, 3])])
        fd.add_output(v)
    with pytest.raises(RuntimeError, match=r"return 0 .* has sizes \[4, 2\], "
                                           r"declared \[4, 3\]"):
        fd.execute([torch.randn(4, 5)])
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[4, 5], dtype=DataType.Float)
        (i,) = fd.ops.aten_call("aten::topk", [x, 2],
                                results=[(1, DataType.Float, [4, 2])])
        fd.add_output(i)
    with pytest.raises(RuntimeError, match="is Long, declared Float"):
        fd.execute([torch.randn(4, 5)])


def test_input_forwarding_backs_off_for_the_call_only():
    # A cast chain from the input feeds the call and a pointwise op: the
    # call (expr_eval) takes no prologue, so the cast is computed once for
    # it, and the pointwise consumer still gets it forwarded.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], dtype=DataType.Half)
        xf = fd.ops.cast(x, DataType.Float)
        (s,) = fd.ops.aten_call("aten::topk", [xf, 1],
                                results=[(0, DataType.Float, [(xf, 0), 1])])
        fd.add_output(s)
        fd.add_output(fd.ops.exp(xf))
    x = torch.randn(3, 4).half()
    top, ex = fd.execute([x])
    torch.testing.assert_close(top, x.float().topk(1).values)
    torch.testing.assert_close(ex, x.float().exp())
    segments = fd.last_scheduled_fusion_ir().split("Segments")[1]
    assert "g0 pointwise inputs=['T0'] outputs=['T1']" in segments
    assert "g1 expr_eval inputs=['T1'] outputs=['T2']" in segments
    assert "g2 pointwise inputs=['T0'] outputs=['T3']" in segments
    assert "(forwarded) T1_l_float" in segments, segments


@pytest.mark.parametrize("ns,kind", [("nvf_test_gone", "DEF"),
                                     ("nvfuser", "FRAGMENT")])
def test_an_operator_registered_from_python_and_removed_raises(ns, kind):
    # A library defined from Python can go away, also a fragment of our own
    # namespace: the next execute raises, it does not call a stale
    # operator.
    import gc
    try:
        lib = torch.library.Library(ns, kind)
    except ValueError as e:  # torch 1.13 has no FRAGMENT
        pytest.skip("this torch.library has no %s: %s" % (kind, e))
    lib.define("twice_gone(Tensor a) -> Tensor")
    lib.impl("twice_gone", lambda a: a * 2, "CompositeExplicitAutograd")
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        (y,) = fd.ops.aten_call(ns + "::twice_gone", [x],
                                results=[(0, DataType.Float, [(x, 0)])])
        fd.add_output(y)
    torch.testing.assert_close(fd.execute([torch.ones(3)])[0],
                               torch.full((3,), 2.0))
    del lib
    gc.collect()
    with pytest.raises(ValueError, match="has no operator "
                                         + ns + "::twice_gone"):
        fd.execute([torch.ones(3)])
