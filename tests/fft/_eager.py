"""What the eager fast-path tests share: random data and the tolerance of each result dtype."""
from __future__ import annotations

import numpy as np

RNG = np.random.default_rng(7)
TOL = {np.dtype(np.complex64): 2e-6, np.dtype(np.complex128): 1e-13,
       np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-13}


def data(shape, dtype):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def close(got, want):
    """Equal dtypes and shapes, values within the result precision's tolerance."""
    assert got.dtype == want.dtype and got.shape == want.shape
    scale = max(float(np.abs(want).max(initial=0.0)), 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL[want.dtype] * scale * 10)
