"""aot.nn.functional against direct numpy formulas, with numpy's result dtypes."""
from __future__ import annotations

import math

import numpy as np
import pytest

import aot.nn.functional as F

RNG = np.random.default_rng(6)
TOL = {np.float32: 2e-6, np.float64: 1e-13}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activations(dtype):
    x = (RNG.standard_normal((4, 5)) * 4).astype(dtype)
    rtol = TOL[dtype]
    np.testing.assert_array_equal(F.relu(x), np.where(x > 0, x, 0))
    np.testing.assert_allclose(F.sigmoid(x), 1 / (1 + np.exp(-x.astype(np.float64))), rtol=rtol)
    np.testing.assert_allclose(F.tanh(x), np.tanh(x), rtol=rtol)
    for fn in (F.relu, F.sigmoid, F.tanh, F.gelu):
        assert fn(x).dtype == dtype, fn.__name__


def test_sigmoid_is_stable_for_large_magnitudes():
    x = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        out = F.sigmoid(x)
    e = math.exp(-40)
    np.testing.assert_allclose(out, [0.0, e / (1 + e), 0.5, 1 / (1 + e), 1.0],
                               rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_and_log_softmax(dtype):
    x = (RNG.standard_normal((3, 6)) * 10).astype(dtype)
    x64 = x.astype(np.float64)
    ref = np.exp(x64) / np.exp(x64).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(F.softmax(x, dim=1), ref, rtol=TOL[dtype] * 10)
    np.testing.assert_allclose(F.softmax(x, axis=1), ref, rtol=TOL[dtype] * 10)
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(F.log_softmax(x, dim=-1), np.log(ref), rtol=tol, atol=tol)
    assert F.softmax(x, dim=0).dtype == dtype and F.log_softmax(x, dim=0).dtype == dtype
    with pytest.raises(TypeError, match="both dim"):
        F.softmax(x, dim=0, axis=1)
    with pytest.warns(UserWarning, match="Implicit dimension"):
        F.softmax(x)


def test_gelu_exact_and_tanh():
    x = np.linspace(-5, 5, 41)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(F.gelu(x), exact, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(F.gelu(x, approximate="tanh"), exact, atol=1e-3)
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(x, approximate="fast")


def test_dropout():
    x = np.ones((200, 50))
    np.random.seed(0)
    y = F.dropout(x, p=0.25)
    kept = y != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(y[kept], 1 / 0.75)
    np.testing.assert_array_equal(F.dropout(x, 0.5, training=False), x)
    np.testing.assert_array_equal(F.dropout(x, 1.0), np.zeros_like(x))
    assert F.dropout(x.astype(np.float32), 0.5).dtype == np.float32
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, -0.1)


def test_linear():
    x, w, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((5, 4)), RNG.standard_normal(5)
    np.testing.assert_allclose(F.linear(x, w, b), x @ w.T + b)
    np.testing.assert_allclose(F.linear(x, w), x @ w.T)
    assert F.linear(x.astype(np.float32), w.astype(np.float32)).dtype == np.float32
