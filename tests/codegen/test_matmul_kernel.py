"""The blocked matmul kernel (codegen/kernels/matmul.py) against numpy, through aot.compile."""
from __future__ import annotations

import numpy as np
import pytest

import aot
from aot import nn

SHAPES = [(3, 0, 4), (1, 1, 1), (5, 3, 7), (6, 17, 16), (13, 29, 33), (7, 300, 5), (64, 64, 64)]


def _tol(dt, k):
    return (1e-4, 1e-4 * max(k, 1)) if dt == np.float32 else (1e-12, 1e-12 * max(k, 1))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_matmul_layouts(dt, m, k, n):
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a = rng.standard_normal((m, k)).astype(dt)
    b = rng.standard_normal((k, n)).astype(dt)
    rtol, atol = _tol(dt, k)
    f = aot.compile(lambda a, b: a @ b)
    for x, y in [(a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b)), (a[:, ::-1], b[::-1])]:
        got = f(x, y)
        assert got.dtype == (x @ y).dtype
        np.testing.assert_allclose(got, x @ y, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_matmul_threads_bit_identical(dt):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((67, 300)).astype(dt)
    b = rng.standard_normal((300, 45)).astype(dt)
    one = aot.compile(lambda a, b: a @ b, options={"num_threads": 1})
    two = aot.compile(lambda a, b: a @ b, options={"num_threads": 2})
    np.testing.assert_array_equal(one(a, b), two(a, b))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_linear_and_dot_transposed_weight(dt):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((50, 37)).astype(dt)
    w = rng.standard_normal((19, 37)).astype(dt)
    rtol, atol = _tol(dt, 37)
    np.testing.assert_allclose(aot.compile(lambda x, w: x @ w.T)(x, w), x @ w.T, rtol=rtol, atol=atol)
    np.testing.assert_allclose(aot.compile(lambda x, w: np.dot(x, w.T))(x, w), x @ w.T, rtol=rtol, atol=atol)
    lin = nn.Linear(37, 19)
    x64 = x.astype(lin.weight.dtype)
    np.testing.assert_allclose(aot.compile(lin)(x64), lin(x64), rtol=1e-10, atol=1e-10)
