"""fd.ops.uniform, normal, rand_like and randn_like on the CPU: statistics
of large samples (mean, variance, tails, a Kolmogorov-Smirnov distance),
ranges, distinct values, determinism under rng_seed/rng_offset (every
execute, the ATen oracle, other segmentations, printed definitions), seed
and offset sensitivity, independent streams, draws from torch's generator
without a seed, and bad arguments. The kernels' bits against the CPU path:
tests/cpp/runtime/test_rng.cpp (emulated) and test_gpu.py (CUDA)."""

import math

import pytest
import torch

from nvfuser import DataType, FusionDefinition
from printed import run_printed

FLOATS = [DataType.Float, DataType.Double, DataType.Half, DataType.BFloat16]
TORCH = {DataType.Float: torch.float32, DataType.Double: torch.float64,
         DataType.Half: torch.float16, DataType.BFloat16: torch.bfloat16}
N = 1 << 20


def bits(t):
    """The tensor's bit patterns, so equality is exact (signs of zeros)."""
    view = {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    return t.contiguous().view(view)


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and \
        torch.equal(bits(a), bits(b))


def random_fd(op, a, b, shape, dtype=DataType.Float, seed=11, offset=3,
              **kwargs):
    with FusionDefinition() as fd:
        r = getattr(fd.ops, op)(a, b, shape, rng_seed=seed, rng_offset=offset,
                                dtype=dtype, **kwargs)
        fd.add_output(r)
    return fd


def sample(op, a, b, shape, dtype=DataType.Float, seed=11, offset=3):
    return random_fd(op, a, b, shape, dtype, seed, offset).execute([])[0]


def ks_distance(x, cdf):
    """sup |ECDF - CDF| of a sample."""
    x, _ = torch.sort(x.double().flatten())
    n = x.numel()
    c = cdf(x)
    hi = torch.arange(1, n + 1, dtype=torch.float64) / n
    lo = torch.arange(0, n, dtype=torch.float64) / n
    return max((hi - c).max().item(), (c - lo).max().item())


# ---- distributions --------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_statistics_and_range(dtype):
    a, b = -2.0, 3.0
    x = sample("uniform", a, b, [N // 1024, 1024], dtype)
    assert x.dtype == TORCH[dtype] and x.shape == (N // 1024, 1024)
    v = x.double()
    assert v.min().item() >= a and v.max().item() < b
    sigma = (b - a) / math.sqrt(12)
    assert abs(v.mean().item() - 0.5) < 5 * sigma / math.sqrt(N)
    assert abs(v.var().item() / sigma ** 2 - 1) < 0.01
    # Every tenth of the interval gets its share.
    counts = torch.histc(v, bins=10, min=a, max=b)
    assert ((counts / N - 0.1).abs() < 0.003).all(), counts
    if dtype in (DataType.Float, DataType.Double):
        assert ks_distance(x, lambda t: (t - a) / (b - a)) < 1.6 / math.sqrt(N)
        # 2^24 (2^53) grid points: about 3% (0%) of a million repeat.
        distinct = 0.999 if dtype == DataType.Double else 0.95
        assert v.unique().numel() > distinct * N


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_statistics_and_tails(dtype):
    mean, std = 1.5, 0.5
    x = sample("normal", mean, std, [N], dtype)
    assert x.dtype == TORCH[dtype]
    z = (x.double() - mean) / std
    assert torch.isfinite(z).all()
    assert abs(z.mean().item()) < 5 / math.sqrt(N)
    assert abs(z.var().item() - 1) < 0.01
    assert abs((z ** 3).mean().item()) < 0.02  # skewness
    assert abs((z ** 4).mean().item() - 3) < 0.05  # kurtosis
    within = [(z.abs() < k).double().mean().item() for k in (1, 2, 3)]
    for got, want in zip(within, (0.682689, 0.954500, 0.997300)):
        assert abs(got - want) < 0.004, within
    if dtype in (DataType.Float, DataType.Double):
        normal = torch.distributions.Normal(mean, std)
        assert ks_distance(x, normal.cdf) < 1.6 / math.sqrt(N)
        # Float values in [1, 2) have 2^23 steps: about 3% of a million
        # samples around 1.5 repeat.
        distinct = 0.999 if dtype == DataType.Double else 0.95
        assert z.unique().numel() > distinct * N
        # Tails: 32-bit uniforms reach beyond 5 sigma (P ~ 5.7e-7).
        assert z.abs().max().item() > 4.5


def test_rand_like_and_randn_like_are_uniform_and_normal_of_the_shape():
    x = torch.randn(64, 33)
    for like, op, a, b in [("rand_like", "uniform", 0.0, 1.0),
                           ("randn_like", "normal", 0.0, 1.0)]:
        with FusionDefinition() as fd:
            t = fd.from_pytorch(x)
            fd.add_output(getattr(fd.ops, like)(t, rng_seed=5, rng_offset=9))
        (got,) = fd.execute([x])
        assert same_bits(got, sample(op, a, b, [64, 33], seed=5, offset=9))
        # Another dtype than the argument's.
        with FusionDefinition() as fd:
            t = fd.from_pytorch(x)
            fd.add_output(getattr(fd.ops, like)(
                t, rng_seed=5, rng_offset=9, dtype=DataType.Half))
        assert same_bits(fd.execute([x])[0],
                         sample(op, a, b, [64, 33], DataType.Half, 5, 9))


@pytest.mark.parametrize("make", [
    lambda: torch.randn(3, 1, 5),                       # a size-1 dim
    lambda: torch.randn(3, 1, 5).expand(3, 4, 5),       # an expanded one
    lambda: torch.randn(6, 4).t(),                      # strided
    lambda: torch.randn(2, 0, 3),                       # empty
    lambda: torch.tensor(2.0),                          # 0-dim
])
def test_rand_like_takes_the_arguments_sizes(make):
    x = make()
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.rand_like(t, rng_seed=1, rng_offset=0))
        fd.add_output(fd.ops.add(fd.ops.randn_like(t), t))
    r, n = fd.execute([x])
    assert r.shape == x.shape and n.shape == x.shape
    assert r.is_contiguous()
    if x.numel():
        assert same_bits(r, sample("uniform", 0.0, 1.0, list(x.shape),
                                   seed=1, offset=0))
    if x.dim() == 3 and x.shape[1] == 4 and x.numel():
        # An expanded input's broadcast dim is real in the result.
        assert not torch.equal(r[:, 0], r[:, 1])


# ---- determinism ----------------------------------------------------------

@pytest.mark.parametrize("op", ["uniform", "normal"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_seeded_values_repeat_on_every_path(op, dtype):
    fd = random_fd(op, 0.25, 4.0, [33, 70], dtype, seed=123, offset=456)
    first = fd.execute([])[0]
    assert same_bits(first, fd.execute([])[0])
    assert same_bits(first, fd.execute_unsegmented([])[0])
    # A definition made again, and the seed and offset as runtime inputs.
    assert same_bits(first, sample(op, 0.25, 4.0, [33, 70], dtype, 123, 456))
    with FusionDefinition() as fd2:
        s = fd2.define_scalar(None, dtype=DataType.Int)
        o = fd2.define_scalar(None, dtype=DataType.Int32)
        fd2.add_output(getattr(fd2.ops, op)(0.25, 4.0, [33, 70], rng_seed=s,
                                            rng_offset=o, dtype=dtype))
    assert same_bits(first, fd2.execute([123, 456])[0])
    # Another seed, another offset: other values.
    for seed, offset in [(124, 456), (123, 457), (-123, 456)]:
        other = fd2.execute([seed, offset])[0]
        assert (other != first).double().mean().item() > 0.9


def test_seeds_are_64_bit_patterns():
    big = sample("uniform", 0.0, 1.0, [256], seed=2**64 - 1, offset=2**63)
    assert same_bits(big, sample("uniform", 0.0, 1.0, [256], seed=-1,
                                 offset=-2**63))
    assert not same_bits(big, sample("uniform", 0.0, 1.0, [256], seed=1,
                                     offset=0))


def test_two_random_ops_draw_independent_streams():
    with FusionDefinition() as fd:
        for op in ("uniform", "uniform", "normal"):
            fd.add_output(getattr(fd.ops, op)(0.0, 1.0, [N // 4],
                                              rng_seed=7, rng_offset=1))
    u0, u1, n = fd.execute([])
    assert (u0 == u1).double().mean().item() < 1e-3
    assert abs(torch.corrcoef(torch.stack([u0, u1]))[0, 1].item()) < 0.01
    assert abs(torch.corrcoef(torch.stack([u0, n]))[0, 1].item()) < 0.01
    # Each is the op its position gives: stream k is rng_index=k.
    with FusionDefinition() as alone:
        alone.add_output(alone.ops.uniform(0.0, 1.0, [N // 4], rng_seed=7,
                                           rng_offset=1, rng_index=1))
    assert same_bits(u1, alone.execute([])[0])


def test_segmentation_does_not_change_values():
    """The same op alone, next to a reduction that splits the fusion, with
    a segment_set in the way, and under other options."""
    shape = [96, 160]
    ref = sample("normal", 0.0, 2.0, shape, seed=3, offset=4)
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        n = fd.ops.normal(0.0, 2.0, shape, rng_seed=3, rng_offset=4)
        s = fd.ops.sum(fd.ops.mul(n, x), [1], keepdim=True)
        fd.add_output(fd.ops.segment_set(fd.ops.sub(n, s)))
        fd.add_output(n)
        fd.add_output(fd.ops.exp(fd.ops.segment_set(n)))
    x = torch.randn(shape)
    plain = fd.execute([x])
    assert len(fd.last_segmentation()["groups"]) > 1
    for disable in ([], ["input_forwarding"], ["horizontal_fusion"],
                    ["reduction_split", "vectorization"]):
        outs = fd.execute([x], _disable_options=disable)
        assert same_bits(outs[1], ref), disable
        assert same_bits(outs[2], plain[2]), disable
    torch.testing.assert_close(plain[0], ref - (ref * x).sum(1, True))


def test_random_ops_are_computed_in_one_segment_never_forwarded():
    x = torch.randn(32, 32)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        r = fd.ops.cast(fd.ops.rand_like(t, rng_seed=1, rng_offset=2),
                        DataType.Double)
        fd.add_output(fd.ops.matmul(fd.ops.cast(r, DataType.Float), t))
        fd.add_output(fd.ops.exp(r))
    outs = fd.execute([x])
    seg = fd.last_segmentation()
    placed = [g for g in seg["groups"]
              if any("rand_like" in op or "uniform" in op
                     for op in g["ops"] + g["prologue"])]
    assert len(placed) == 1, seg["text"]
    assert not any("uniform" in op for g in seg["groups"]
                   for op in g["prologue"])
    ref = sample("uniform", 0.0, 1.0, [32, 32], seed=1, offset=2)
    torch.testing.assert_close(outs[0], ref @ x)
    assert "uniform" not in repr(seg["forwarded_chains"])


# ---- seeds drawn at execute -----------------------------------------------

def test_unseeded_ops_follow_torchs_generator():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], dtype=DataType.Float)
        fd.add_output(fd.ops.rand_like(t))
        fd.add_output(fd.ops.normal(0.0, 1.0, [300]))
    x = torch.zeros(500)
    torch.manual_seed(0)
    a = fd.execute([x])
    b = fd.execute([x])
    assert not torch.equal(a[0], b[0]) and not torch.equal(a[1], b[1])
    torch.manual_seed(0)
    again = fd.execute([x])
    assert all(same_bits(p, q) for p, q in zip(a, again))
    # One draw per execute, shared by the fusion's random ops: its streams
    # still differ.
    assert not torch.equal(a[0][:300], a[1])
    assert a[0].min() >= 0 and a[0].max() < 1
    # The oracle draws too.
    torch.manual_seed(0)
    assert same_bits(fd.execute_unsegmented([x])[0], a[0])


def test_segment_needs_a_seed():
    x = torch.randn(8, 8)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        r = fd.ops.rand_like(t)
        fd.add_output(fd.ops.exp(fd.ops.segment_set(fd.ops.add(r, t))))
    with pytest.raises(NotImplementedError, match="rng_seed and rng_offset"):
        fd.segment([x])
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        r = fd.ops.uniform(0.0, 1.0, [8, 8], rng_seed=4, rng_offset=2)
        fd.ops.normal(0.0, 1.0, [8], rng_seed=4, rng_offset=2)  # unused
        r2 = fd.ops.randn_like(t, rng_seed=4, rng_offset=2)
        fd.add_output(fd.ops.exp(fd.ops.segment_set(fd.ops.add(r, t))))
        fd.add_output(fd.ops.segment_set(r2))
    whole = fd.execute([x])
    assert len(fd.segment([x])) > 1
    # Each segment keeps its ops' streams (printed as rng_index).
    assert all(same_bits(p, q) for p, q in zip(fd.execute([x]), whole))


# ---- runtime shapes, printing ---------------------------------------------

def test_runtime_shapes():
    x = torch.randn(6, 10)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        n = fd.define_scalar(None, dtype=DataType.Int)
        fd.add_output(fd.ops.uniform(-1.0, 1.0, fd.ops.shape(t),
                                     rng_seed=8, rng_offset=0))
        fd.add_output(fd.ops.normal(0.0, 1.0, [n, 3], rng_seed=8,
                                    rng_offset=0))
    u, g = fd.execute([x, 5])
    assert same_bits(u, sample("uniform", -1.0, 1.0, [6, 10], seed=8,
                               offset=0))
    with FusionDefinition() as ref:
        ref.ops.uniform(-1.0, 1.0, [6, 10], rng_seed=8, rng_offset=0)
        ref.add_output(ref.ops.normal(0.0, 1.0, [5, 3], rng_seed=8,
                                      rng_offset=0))
    assert same_bits(g, ref.execute([])[0])
    # Constant Scalars and a define_vector as shapes.
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.uniform(-1.0, 1.0, [fd.define_scalar(6), 10],
                                     rng_seed=8, rng_offset=0))
        fd.add_output(fd.ops.uniform(-1.0, 1.0, fd.define_vector([6, 10]),
                                     rng_seed=8, rng_offset=0,
                                     rng_index=0))
    for out in fd.execute([]):
        assert same_bits(out, u)
    with pytest.raises(ValueError, match="uniform: a runtime size is -2"):
        with FusionDefinition() as bad:
            n = bad.define_scalar(None, dtype=DataType.Int)
            bad.add_output(bad.ops.uniform(0.0, 1.0, [n], rng_seed=1,
                                           rng_offset=1))
        bad.execute([-2])


def test_printed_definitions_compute_the_same_values(capsys):
    x = torch.randn(4, 6)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        s = fd.define_scalar(None, dtype=DataType.Int)
        fd.ops.uniform(0.0, 1.0, [3], rng_seed=s, rng_offset=1)  # unused
        u = fd.ops.uniform(-0.1, 0.7, [4, 6], rng_seed=s, rng_offset=1,
                           dtype=DataType.BFloat16)
        fd.add_output(fd.ops.add(u, t))
        fd.add_output(fd.ops.randn_like(t, rng_seed=s, rng_offset=2,
                                        dtype=DataType.Double))
        fd.add_output(fd.ops.normal(2.0, 0.5, [5], rng_seed=9,
                                    rng_offset=s))
    text = repr(fd)
    assert ("fd.ops.uniform(-0.1, 0.7, shape=[4, 6], rng_seed=S0, "
            "rng_offset=1, dtype=DataType.BFloat16, rng_index=1)") in text
    assert ("fd.ops.randn_like(T0, rng_seed=S0, rng_offset=2, "
            "dtype=DataType.Double, rng_index=2)") in text
    inputs = [x, 77]
    ref = fd.execute(inputs, print_repro=True)
    assert "fd.ops.normal(2.0, 0.5, shape=[5], rng_seed=9" in \
        capsys.readouterr().out
    for outs in run_printed(fd, inputs):
        assert all(same_bits(p, q) for p, q in zip(outs, ref))


def test_unseeded_ops_print_without_a_seed():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], dtype=DataType.Half)
        fd.add_output(fd.ops.rand_like(t))
        fd.add_output(fd.ops.normal(0.0, 1.0, [2, 2], dtype=DataType.Double))
    text = repr(fd)
    assert "T1 = fd.ops.rand_like(T0)\n" in text
    assert ("T2 = fd.ops.normal(0.0, 1.0, shape=[2, 2], "
            "dtype=DataType.Double)\n") in text


# ---- Half and BFloat16 ends, bad arguments --------------------------------

@pytest.mark.parametrize("dtype", [DataType.Half, DataType.BFloat16])
def test_uniform_never_returns_maxval_after_rounding(dtype):
    # Many values round up to 2^-10 in Half (and to 1.0 in BFloat16).
    hi = 2.0 ** -10 if dtype == DataType.Half else 1.0
    x = sample("uniform", 0.0, hi, [1 << 16], dtype).double()
    assert x.max().item() < hi and x.min().item() >= 0
    assert (x == 0).double().mean().item() < 0.02


def test_empty_and_zero_dim_shapes():
    assert sample("uniform", 0.0, 1.0, [0, 5]).shape == (0, 5)
    z = sample("normal", 3.0, 0.0, [])
    assert z.shape == () and z.item() == 3.0  # std 0 is the mean


@pytest.mark.parametrize("call, error, message", [
    (lambda fd: fd.ops.uniform(0.0, 1.0, [2], dtype=DataType.Int),
     TypeError, r"uniform: dtype must be Float, Double, Half or BFloat16, "
                r"got Int"),
    (lambda fd: fd.ops.normal(0.0, 1.0, [2], dtype=DataType.Bool),
     TypeError, r"normal: dtype must be Float, Double, Half or BFloat16"),
    (lambda fd: fd.ops.uniform(0.0, 1.0, [2], dtype=torch.float32),
     TypeError, r"uniform: dtype must be a DataType"),
    (lambda fd: fd.ops.rand_like(
        fd.define_tensor(shape=[2], dtype=DataType.Int)),
     TypeError, r"rand_like: T0 .* is not floating point"),
    (lambda fd: fd.ops.randn_like(2.0), TypeError,
     r"randn_like: expected a Tensor"),
    (lambda fd: fd.ops.uniform(0.0, 1.0, [2], rng_seed=1),
     ValueError, r"uniform: rng_seed and rng_offset must be given together"),
    (lambda fd: fd.ops.normal(0.0, 1.0, [2], rng_seed=1.5, rng_offset=0),
     TypeError, r"normal: rng_seed must be an integer, got 1.5"),
    (lambda fd: fd.ops.uniform(0.0, 1.0, [2], rng_seed=2 ** 64,
                               rng_offset=0),
     ValueError, r"uniform: rng_seed 18446744073709551616 does not fit"),
    (lambda fd: fd.ops.uniform(
        0.0, 1.0, [2], rng_seed=fd.define_scalar(None, DataType.Double),
        rng_offset=0),
     TypeError, r"uniform: rng_seed must be an Int or Int32 scalar"),
    (lambda fd: fd.ops.uniform(
        fd.define_tensor(shape=[1], dtype=DataType.Float), 1.0, [2]),
     TypeError, r"uniform: minval must be a scalar, got T0"),
    (lambda fd: fd.ops.uniform(True, 1.0, [2]), TypeError,
     r"uniform: minval must be an integer or floating point scalar"),
    (lambda fd: fd.ops.uniform(2.0, 1.0, [2]), ValueError,
     r"uniform: minval 2 must be <= maxval 1"),
    (lambda fd: fd.ops.uniform(0.0, math.inf, [2]), ValueError,
     r"uniform: maxval must be finite, got inf"),
    (lambda fd: fd.ops.normal(0.0, -1.0, [2]), ValueError,
     r"normal: std must be >= 0, got -1"),
    (lambda fd: fd.ops.normal(0.0, 1.0, [2, -1]), ValueError,
     r"normal: shape\[1\] = -1 must be >= 0"),
    (lambda fd: fd.ops.normal(0.0, 1.0, 5), TypeError,
     r"normal: shape must be a list of sizes, got int"),
    (lambda fd: fd.ops.normal(0.0, 1.0, [2.5]), TypeError, r"normal"),
    (lambda fd: fd.ops.uniform(0.0, 1.0, [2], rng_index=-1), ValueError,
     r"uniform: rng_index -1 is outside \[0, 65536\)"),
    (lambda fd: fd.ops.uniform(0.0, 1.0, [2], rng_index="a"), TypeError,
     r"uniform: rng_index"),
])
def test_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        with FusionDefinition() as fd:
            call(fd)


def test_runtime_parameters_are_checked_on_the_cpu():
    with FusionDefinition() as fd:
        lo = fd.define_scalar(None, dtype=DataType.Double)
        hi = fd.define_scalar(None, dtype=DataType.Double)
        fd.add_output(fd.ops.uniform(lo, hi, [4], rng_seed=1, rng_offset=1))
    assert fd.execute([0.0, 1.0])[0].shape == (4,)
    with pytest.raises(ValueError, match="uniform: minval 3 must be <= "
                                         "maxval 1"):
        fd.execute([3.0, 1.0])
    with FusionDefinition() as fd:
        sd = fd.define_scalar(None, dtype=DataType.Double)
        fd.add_output(fd.ops.normal(0.0, sd, [4], rng_seed=1, rng_offset=1))
    with pytest.raises(ValueError, match="normal: std must be >= 0"):
        fd.execute([-0.5])


def test_ops_outside_a_definition_raise():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[2], dtype=DataType.Float)
        fd.add_output(t)
    with pytest.raises(RuntimeError, match="uniform: this FusionDefinition "
                                           "is already finalized"):
        fd.ops.uniform(0.0, 1.0, [2], dtype=DataType.Int)
    with pytest.raises(RuntimeError, match="rand_like"):
        fd.ops.rand_like(t)
