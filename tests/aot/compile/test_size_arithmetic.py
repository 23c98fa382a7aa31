"""Sizes in arithmetic under dynamic shapes: `x * x.shape[0]` uses the run-time size, with the
dtype rules of a Python int (weak: float32 stays float32), and one artifact serves every size."""

import numpy as np
import pytest

import aot


def _check(f, ref, xs):
    for x in xs:
        got, want = f(x), ref(x)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.complex64])
def test_array_times_its_length(dtype):
    def fn(x):
        return x * x.shape[0] - x.shape[0] // 2

    f = aot.compile(fn, dynamic=True)
    _check(f, fn, [np.arange(n).astype(dtype) for n in (5, 8, 13)])
    assert f.cache_info()["compiles"] == 1


def test_sizes_in_ufunc_calls_comparisons_and_reflected_operators():
    def fn(x):
        n, m = x.shape
        return np.multiply(x, n) + (x > m) + 1.0 / (n * m) + (n - x)

    f = aot.compile(fn, dynamic=True)
    _check(f, fn, [np.random.default_rng(k).random((k + 2, 2 * k + 3)) for k in (1, 4, 7)])
    assert f.cache_info()["compiles"] == 1


def test_automatic_dynamic_normalisation_by_length():
    def fn(x):
        return (x - x.sum() / x.shape[0]) * x.shape[0]

    f = aot.compile(fn)
    _check(f, fn, [np.random.default_rng(n).random(n) for n in range(20, 30)])
    assert f.cache_info()["compiles"] == 2


def test_export_and_library(tmp_path):
    def fn(x):
        return x * x.shape[0] + x.mean()

    ep = aot.export(fn, (np.arange(6.0),), dynamic_shapes={"x": {0: aot.Dim("N", min=2, max=100)}})
    lib = aot.aot_load(aot.aot_compile(ep, path=tmp_path / "scaled.so"))
    for n in (2, 9, 100):
        x = np.random.default_rng(n).random(n)
        np.testing.assert_allclose(ep.module()(x), fn(x), rtol=1e-13)
        np.testing.assert_allclose(lib(x), fn(x), rtol=1e-13)


@pytest.mark.parametrize("fn", [
    lambda x: x * (x.shape[0] / 3),  # int / int: one rounding, as Python
    lambda x: x * (2 * x.shape[0] / 2),  # a float that sympy simplifies to an integer stays float
    lambda x: x + 1.0 / (x.shape[0] * (x.shape[0] + 2)),
    lambda x: x + (x.shape[0] // 2) / x.shape[0],
    lambda x: x + x.shape[0] % -3 + x.shape[0] // -2,  # Python's floor semantics
    lambda x: np.clip(x, 0, x.shape[0] // 2),
    lambda x: np.where(x > 3, x, x.shape[0]),
    lambda x: np.zeros(x.shape[0]) + np.arange(x.shape[0]) * x,
], ids=["ratio", "float-int", "reciprocal", "floor-ratio", "negative-divisor", "clip", "where", "creation"])
def test_size_expressions_bit_for_bit(fn):
    f = aot.compile(fn, dynamic=True)
    for n in (4, 7, 9):
        x = np.arange(1, n + 1, dtype=np.int32)
        got, want = f(x), fn(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fn", [
    lambda x: x + x.shape[0] // (x.shape[0] - 5),
    lambda x: x * (1.0 / (x.shape[0] - 5)),
    lambda x: x + x.shape[0] % (x.shape[0] - 5),
], ids=["floordiv", "truediv", "mod"])
def test_division_by_a_zero_size_raises(fn):
    """Python raises ZeroDivisionError; the generated code must not trap (SIGFPE) or return inf."""
    f = aot.compile(fn, dynamic=True)
    np.testing.assert_array_equal(f(np.arange(7.0)), fn(np.arange(7.0)))
    with pytest.raises(ZeroDivisionError):
        fn(np.arange(5.0))
    with pytest.raises(ZeroDivisionError):
        f(np.arange(5.0))


def test_sizes_generated_code_cannot_compute_are_specialised():
    """2**n is guarded to its value (one entry per n); a comparison of sizes is guarded like
    `if n > 3:`; both give numpy's results."""
    for fn, compiles in ((lambda x: x + 2 ** x.shape[0], 3), (lambda x: x * (x.shape[0] > 3), 2)):
        f = aot.compile(fn, dynamic=True)
        for n in (3, 5, 6):
            x = np.arange(float(n))
            got, want = f(x), fn(x)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
        assert f.cache_info()["compiles"] == compiles
