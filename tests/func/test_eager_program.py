"""The eager program of a staged transform (aot/func/_staging.py): intermediates released at their
last use, and float64 sin/cos/log/log1p on large arrays run as compiled kernels (numpy's loops for
them are scalar) with results as the compiled transform's and numpy's closed form."""
from __future__ import annotations

import numpy as np
import pytest

import aot
import aot.func as F
from aot.func import _staging


def chain(x):
    return (np.sin(x) * np.log1p(x * x) + np.cos(x) * np.log(x + 2)).sum()


def chain_grad(x):
    return (np.cos(x) * np.log1p(x * x) + np.sin(x) * 2 * x / (1 + x * x)
            - np.sin(x) * np.log(x + 2) + np.cos(x) / (x + 2))


@pytest.mark.parametrize("n", [100, 100_000])  # under and over VECTOR_MATH_MIN_SIZE
def test_eager_grad_equals_closed_form_and_compiled(n):
    x = np.linspace(-0.9, 3.0, n)
    eager = F.grad(chain)(x)
    compiled = aot.compile(F.grad(chain))(x)
    np.testing.assert_allclose(eager, chain_grad(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(eager, compiled, rtol=1e-13, atol=1e-15)
    if n >= _staging.VECTOR_MATH_MIN_SIZE:  # the eager program ran them as compiled kernels
        kernels = [_staging._math_kernel(k) for k in ("sin", "cos", "log", "log1p")]
        assert all(k.cache_info()["calls"]["native"] >= 1 for k in kernels)


def test_released_values_are_never_the_outputs_or_inputs():
    """An intermediate both returned and read later, and an argument read after its last use as an
    intermediate's operand, survive the release of dead values."""
    def f(x):
        y = np.sin(x) * 2
        return (y * y).sum(), y

    x = np.linspace(0, 1, 10_000)
    (value, y), vjp_fn = F.vjp(f, x)
    np.testing.assert_allclose(y, np.sin(x) * 2, rtol=1e-15)
    np.testing.assert_allclose(value, 4 * (np.sin(x) ** 2).sum(), rtol=1e-13)
    (g,) = vjp_fn((np.float64(1.0), np.zeros_like(x)))
    np.testing.assert_allclose(g, 8 * np.sin(x) * np.cos(x), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(x, np.linspace(0, 1, 10_000))  # the argument is untouched


def test_last_uses():
    steps = [(None, (0,), {}, None), (None, (1, 0), {}, None), (None, (2,), {}, None)]  # slots 1, 2, 3
    assert _staging._last_uses(steps, 1, (3, 1)) == [[], [], [2]]  # 1 is an output: kept
