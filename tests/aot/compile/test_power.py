"""Powers with a scalar exponent: numpy's results to the bit, including its fast paths (`x**2` is
a product, `x**0.5` np.sqrt and `x**-1` np.reciprocal for real floats: sqrt differs from pow at
-0.0 and -inf), for the operator and np.power alike; an array of exponents keeps pow's results."""

import numpy as np
import pytest

import aot

EDGES = [-0.0, 0.0, -np.inf, np.inf, np.nan, -1.5, 1e-310, 3.0]


def _inputs(dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([EDGES, rng.standard_normal(61) * 10]).astype(dtype)
    return x


def _same_bits(got, want):
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("e", [2, 2.0, 0.5, -1, -1.0, np.float32(0.5), 1, 0])
def test_operator_power_of_floats(dtype, e):
    x = _inputs(dtype)
    f = aot.compile(lambda x: x**e)
    with np.errstate(all="ignore"):
        _same_bits(f(x), x**e)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("e", [2.0, 0.5, -1.0])
def test_np_power_with_a_scalar_exponent(dtype, e):
    x = _inputs(dtype)
    f = aot.compile(lambda x: np.power(x, e))
    with np.errstate(all="ignore"):
        _same_bits(f(x), np.power(x, e))


def test_array_of_exponents_keeps_pow_semantics():
    x = np.array([-0.0, -np.inf, 4.0, 2.0])
    e = np.full(4, 0.5)
    f = aot.compile(lambda x, e: np.power(x, e))
    with np.errstate(all="ignore"):
        _same_bits(f(x, e), np.power(x, e))


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_square(dtype):
    x = np.arange(-50, 50, dtype=dtype) * 1000003
    f = aot.compile(lambda x: x**2)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(f(x), x**2)


def test_complex_square_matches_numpy():
    rng = np.random.default_rng(1)
    z = rng.standard_normal(64) + 1j * rng.standard_normal(64)
    z[:2] = [-0.0 + 0j, 0j]
    f = aot.compile(lambda z: z**2)
    got = f(z)
    np.testing.assert_allclose(got, z**2, rtol=2e-15, atol=0)  # complex pow: a few ulp
    np.testing.assert_array_equal(np.signbit(got[:2].imag), np.signbit((z**2)[:2].imag))


def test_powers_of_numpy_scalars_are_pow():
    """A rank-0 value (x[1], x.max()) is a numpy scalar: numpy computes pow there, not sqrt."""
    x = np.array([-0.0, -np.inf, 4.0])
    f = aot.compile(lambda x: (x[0] ** 0.5, x[1] ** 0.5, x.max() ** -1, x[2] ** 2))
    with np.errstate(all="ignore"):
        for got, want in zip(f(x), (x[0] ** 0.5, x[1] ** 0.5, x.max() ** -1, x[2] ** 2), strict=True):
            _same_bits(np.asarray(got), np.asarray(want))
