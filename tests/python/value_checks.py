"""Shared checks of the elementwise and FX semantics tests: exact
comparison with eager (dtype, shape, NaN positions, signs of zero) and the
special values each dtype is tested at."""

import torch


def assert_same(got, want, exact=True):
    """Exactly equal: dtype, shape, values, nan positions, signs of zero
    (or, not exact, floats within a rounding error)."""
    assert got.dtype == want.dtype and got.shape == want.shape, \
        (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.is_floating_point and not exact:
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6,
                                   equal_nan=True)
    elif want.dtype.is_floating_point:
        assert torch.equal(got.isnan(), want.isnan()), (got, want)
        ok = ~want.isnan()
        assert torch.equal(got[ok], want[ok]), (got, want)
        assert torch.equal(got[ok].signbit(), want[ok].signbit()), \
            (got, want)
    else:
        assert torch.equal(got, want), (got, want)


def as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def special_values(dtype, floats):
    """`floats` for floating dtypes; the extremes and small values of an
    integer dtype; True/False for bool."""
    if dtype == torch.bool:
        return torch.tensor([True, False, True])
    if dtype.is_floating_point:
        return torch.tensor(floats, dtype=dtype)
    info = torch.iinfo(dtype)
    return torch.tensor([info.min, -100, -7, -1, 0, 1, 2, 3, 64, info.max],
                        dtype=dtype)
