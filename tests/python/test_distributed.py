"""Data-parallel training with fusions (issue 19), on the CPU with gloo.

Two spawned processes each train one step of dist_mlp's layer (forward
and backward are FusionDefinitions, wrapped in an autograd.Function) on
their half of a batch; their gradients, averaged by
``torch.distributed.all_reduce`` and by DistributedDataParallel, must equal
the gradients of one process on the whole batch, and so must the SGD
step. Each rank also compiles (``compile_graph``) an FX graph holding
``torch.distributed.all_reduce``: the collective stays in eager with its
reason, the ops before and after it run in regions, and the result is the
sum over the ranks.

Collective operators of torch's ATen-level namespaces (``_c10d_functional``
and the others of ``library_calls.EAGER_NAMESPACES``) are never called
inside a region as aten_calls: a stand-in operator registered in such a
namespace (torch 1.13 has none of them) stays in eager.
"""

import multiprocessing
import os
import signal

import pytest
import torch

import dist_mlp
from fx_check import ops_in_regions
from nvfuser.fx import compile_graph
from nvfuser.fx import library_calls
from nvfuser.fx.schema import Unsupported

# Two spawned ranks import torch and the extension: on a loaded 2-core
# machine that took over 60 s.
JOIN_TIMEOUT_S = 180


def _need_gloo():
    import torch.distributed as dist
    if not dist.is_available():
        pytest.skip("torch.distributed is not available in this torch build")
    if not dist.is_gloo_available():
        pytest.skip("torch.distributed has no gloo backend in this build")


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    """The two ranks' results (dist_mlp.worker), spawned once."""
    _need_gloo()
    tmp = tmp_path_factory.mktemp("dist")
    init = "file://" + str(tmp / "store")  # no port to collide on
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=dist_mlp.worker, args=(r, init, str(tmp)))
             for r in range(dist_mlp.WORLD)]
    # A rank that hangs (seen twice in session 17, under load) prints its
    # Python stack when we abort it: the spawned interpreters enable
    # faulthandler from the environment they start with.
    before = os.environ.get("PYTHONFAULTHANDLER")
    os.environ["PYTHONFAULTHANDLER"] = "1"
    try:
        for p in procs:
            p.start()
    finally:
        if before is None:
            del os.environ["PYTHONFAULTHANDLER"]
        else:
            os.environ["PYTHONFAULTHANDLER"] = before
    try:
        for p in procs:
            p.join(JOIN_TIMEOUT_S)
        hung = [i for i, p in enumerate(procs) if p.is_alive()]
        for i in hung:
            os.kill(procs[i].pid, signal.SIGABRT)
            procs[i].join(10)
        assert not hung, ("ranks %s did not finish in %d s (their stacks, "
                          "dumped on SIGABRT, are in the captured stderr)" %
                          (hung, JOIN_TIMEOUT_S))
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(5)
    codes = [p.exitcode for p in procs]
    assert codes == [0] * dist_mlp.WORLD, "rank exit codes %s" % codes
    return [torch.load(str(tmp / ("rank%d.pt" % r)))
            for r in range(dist_mlp.WORLD)]


@pytest.fixture(scope="module")
def reference():
    return dist_mlp.reference()


def _close_lists(a, b, **tol):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        torch.testing.assert_close(x, y, **tol)


def test_fused_layer_matches_eager_autograd_in_one_process(reference):
    # The fusions' backward against eager autograd: the premise of the
    # distributed comparisons below.
    _, eager_grads, eager_params = reference["eager"]
    _, fused_grads, fused_params = reference["fused"]
    _close_lists(fused_grads, eager_grads, rtol=1e-5, atol=1e-6)
    _close_lists(fused_params, eager_params, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["manual", "ddp"])
def test_averaged_gradients_equal_the_whole_batch(ranks, reference, mode):
    _, want_grads, want_params = reference["fused"]
    for r, out in enumerate(ranks):
        _, grads, params = out[mode]
        _close_lists(grads, want_grads, rtol=1e-5, atol=1e-6)
        _close_lists(params, want_params, rtol=1e-5, atol=1e-6)
    # Every rank holds the same parameters after the step.
    _close_lists(ranks[0][mode][2], ranks[1][mode][2], rtol=0, atol=0)


def test_rank_losses_average_to_the_whole_batch_loss(ranks, reference):
    want = reference["fused"][0]
    got = sum(out["manual"][0] for out in ranks) / len(ranks)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_all_reduce_in_a_compiled_graph_stays_in_eager(ranks):
    xs = [torch.arange(6, dtype=torch.float32) + r for r in range(len(ranks))]
    want = torch.exp(sum(torch.sin(x) * 2.0 for x in xs) + 1.0)
    for out in ranks:
        fx = out["fx"]
        torch.testing.assert_close(fx["got"], want)
        assert fx["regions"] == 2, fx  # sin * 2 before, + 1 and exp after
        assert list(fx["unsupported"]) == ["all_reduce"], fx
        assert "in place" in fx["unsupported"]["all_reduce"], fx


# ------------------------------------------ collectives are not aten_calls
_LIBRARIES = []
_FAKE = "nvf_test_all_reduce"


def _fake_collective(ns):
    """torch.ops.<ns>.nvf_test_all_reduce.default: the schema of
    _c10d_functional.all_reduce, returning a copy (one rank's sum)."""
    packet = getattr(getattr(torch.ops, ns), _FAKE, None)
    if packet is None:
        try:
            lib = torch.library.Library(ns, "FRAGMENT")
        except ValueError:  # torch 1.13 has DEF only (new namespaces)
            try:
                lib = torch.library.Library(ns, "DEF")
            except RuntimeError:
                pytest.skip("torch %s cannot add an operator to the "
                            "namespace %s (no FRAGMENT libraries); "
                            "test_torch_process_group_ops_are_refused_by_"
                            "namespace covers it" % (torch.__version__, ns))
        lib.define(_FAKE + "(Tensor input, str reduce_op, str group_name) "
                   "-> Tensor")
        lib.impl(_FAKE, lambda x, op, group: x.clone(),
                 "CompositeExplicitAutograd")
        _LIBRARIES.append(lib)
        packet = getattr(getattr(torch.ops, ns), _FAKE)
    return packet.default


def _graph_around(op):
    g = torch.fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(torch.ops.aten.sin.default, (x,))
    r = g.call_function(op, (y, "sum", "0"))
    z = g.call_function(torch.ops.aten.mul.Tensor, (r, 3.0))
    g.output((g.call_function(torch.ops.aten.exp.default, (z,)),))
    return torch.fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.parametrize("ns", sorted(library_calls.EAGER_NAMESPACES))
def test_a_collective_namespace_stays_in_eager_between_regions(ns):
    op = _fake_collective(ns)
    gm = _graph_around(op)
    x = torch.randn(5)
    c = compile_graph(gm, [x])
    reasons = c.nvfuser_unsupported
    assert list(reasons) == [_FAKE + "_default"], reasons
    why = reasons[_FAKE + "_default"]
    assert "collective of torch.distributed" in why and ns in why, why
    assert len(c.nvfuser_regions) == 2  # sin before it, mul and exp after
    assert _FAKE not in " ".join(ops_in_regions(c))
    torch.testing.assert_close(c(x)[0], gm(x)[0])


def test_the_same_op_outside_those_namespaces_is_an_aten_call():
    # The exclusion is by namespace: the same schema elsewhere runs in the
    # one region (so the test above fails if the exclusion goes).
    op = _fake_collective("nvf_test_not_collective")
    gm = _graph_around(op)
    x = torch.randn(5)
    c = compile_graph(gm, [x])
    assert not c.nvfuser_unsupported and len(c.nvfuser_regions) == 1
    torch.testing.assert_close(c(x)[0], gm(x)[0])


def _node(op, nargs):
    g = torch.fx.Graph()
    args = tuple(g.placeholder("a%d" % i) for i in range(nargs))
    return g.call_function(op, args)


def test_torch_process_group_ops_are_refused_by_namespace():
    # c10d::allreduce_ writes to its tensors without saying so in its
    # schema on torch 1.13: the namespace keeps it out.
    _need_gloo()
    packet = getattr(torch.ops.c10d, "allreduce_", None)
    if packet is None:
        pytest.skip("this torch has no torch.ops.c10d.allreduce_")
    with pytest.raises(Unsupported, match="collective of torch.distributed"):
        library_calls.check_callable(_node(packet.default, 4), None, {})


def test_real_functional_collectives_are_refused():
    ops = []
    for ns, name in (("_c10d_functional", "all_reduce"),
                     ("_c10d_functional", "wait_tensor"),
                     ("c10d_functional", "all_reduce")):
        try:
            ops.append(getattr(getattr(torch.ops, ns), name).default)
        except (AttributeError, RuntimeError):
            pass
    if not ops:
        pytest.skip("torch %s has no functional collectives (torch >= 2.1 "
                    "has _c10d_functional)" % torch.__version__)
    for op in ops:
        node = _node(op, len(op._schema.arguments))
        with pytest.raises(Unsupported, match="collective"):
            library_calls.check_callable(node, torch.zeros(2), {})


def test_side_effect_ops_are_not_aten_calls():
    op = torch.ops.aten._assert_async.default  # returns nothing
    with pytest.raises(Unsupported, match="side effects"):
        library_calls.check_callable(_node(op, 1), None, {})


def test_collectives_count_as_writes_to_their_tensors():
    # Regression: torch.distributed.all_reduce was taken for a pure torch
    # function, so the reads after it joined the region before it and saw
    # the value before the reduction (a silent wrong result).
    import torch.distributed as dist
    from nvfuser.fx.mutation import written_inputs
    node = _node(dist.all_reduce, 1)
    assert written_inputs(node) == list(node.args)
    packet = getattr(torch.ops.c10d, "allreduce_", None)
    if packet is not None:
        node = _node(packet.default, 4)
        assert written_inputs(node) == list(node.args)
