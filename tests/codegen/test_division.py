"""Division by a divisor that is one value per row (codegen/llvm/division.py): a reciprocal and two
FMAs where that is exact, a divide where it is not; every quotient bit for bit numpy's, for any
dividend (zeros of both signs, subnormals, huge values, infinities, nans) and any divisor."""
from __future__ import annotations

import numpy as np
import pytest

import aot
from codegen import CodegenOptions, lower_module
from codegen.targets import host_target

ROWS = 64


def _bits_equal(got: np.ndarray, want: np.ndarray) -> None:
    """The same values bit for bit, nans only where numpy has nans (their payloads may differ)."""
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    u = {4: np.uint32, 8: np.uint64}[want.dtype.itemsize]
    np.testing.assert_array_equal(got[~nan].view(u), want[~nan].view(u))


def _dividends(dtype, n: int, rng) -> np.ndarray:
    info = np.finfo(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.tiny, -info.tiny, info.smallest_subnormal,
                        info.tiny / 3, info.max, -info.max, 2.0 ** -110, 2.0 ** 110, 1.0, -1.5], dtype)
    x = (rng.standard_normal((ROWS, n)) * rng.choice([1e-3, 1.0, 1e3], (ROWS, 1))).astype(dtype)
    x[::3, : len(special)] = special  # every third row has them (those vectors divide), the others not
    return x


def _divisors(dtype, rng) -> np.ndarray:
    info = np.finfo(dtype)
    d = (rng.random((ROWS, 1)) * 10 + 0.1).astype(dtype)
    d[1::2] *= -1
    odd = [0.0, -0.0, np.inf, np.nan, info.tiny, info.max, 2.0 ** -30, 2.0 ** 30, 2.0 ** -200 if dtype == np.float64
           else 1e-30, 3.0, 1.0 / 3.0, np.nextafter(dtype(1), dtype(2)), np.nextafter(dtype(2), dtype(1))]
    d[: len(odd) * 2 : 2, 0] = odd
    return d


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1024, 1000, 37])  # whole vectors, and a masked tail
def test_row_divisor_quotients_are_numpys(dtype, n):
    rng = np.random.default_rng(n)
    x, d = _dividends(dtype, n, rng), _divisors(dtype, rng)
    f = aot.compile(lambda a, b: a / b)
    with np.errstate(all="ignore"):
        _bits_equal(f(x, d), x / d)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normalisations_divide_exactly(dtype):
    """A softmax's and a row normalisation's quotients are numpy's division of the same numerator
    and row divisor (each computed by aot alone)."""
    x = np.random.default_rng(1).standard_normal((256, 512)).astype(dtype)
    e = aot.compile(lambda a: np.exp(a - a.max(axis=1, keepdims=True)))(x)
    s = aot.compile(lambda a: np.exp(a - a.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True))(x)
    softmax = aot.compile(lambda a: np.exp(a - a.max(axis=1, keepdims=True))
                          / np.exp(a - a.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True))
    _bits_equal(softmax(x), e / s)
    norm = aot.compile(lambda a: np.sqrt((a * a).sum(axis=1, keepdims=True)))(x)
    _bits_equal(aot.compile(lambda a: a / np.sqrt((a * a).sum(axis=1, keepdims=True)))(x), x / norm)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_constant_divisors(dtype):
    x = _dividends(dtype, 256, np.random.default_rng(2))
    for c in (3.0, -7.0, 0.1, 1e-35, 1e300 if dtype == np.float64 else 1e30, 4.0):
        f = aot.compile(lambda a, c=c: a / c)
        with np.errstate(all="ignore"):
            _bits_equal(f(x), x / dtype(c))


def test_the_row_loop_multiplies_by_the_reciprocal():
    """The vector loop of x / d (d one value per row) has the reciprocal's FMAs and divides only
    on its slow path."""
    program = aot.export(lambda a, b: a / b, (np.ones((8, 64), np.float32), np.ones((8, 1), np.float32)))
    text = str(lower_module(program.ir_module(), host_target(), CodegenOptions(num_threads=1)))
    assert "div.slow" in text and "llvm.fma" in text
