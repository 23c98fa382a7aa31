"""Central finite differences, the reference of the rules' tests (float64, O(1) values)."""
from __future__ import annotations

import numpy as np

H = 1e-6
TOL = 1e-7


def fd_grad(f, x):
    """dL/dRe + i dL/dIm (torch's convention for a complex x) by central differences."""
    g = np.zeros(x.shape, x.dtype)
    for i in np.ndindex(x.shape):
        for unit in (1, 1j) if x.dtype.kind == "c" else (1,):
            d = np.zeros_like(x)
            d[i] = H * unit
            g[i] += (f(x + d) - f(x - d)) / (2 * H) * unit
    return g


def fd_jac(f, x):
    """d f(x) / dx by central differences along each element of a real x: f's shape + x's."""
    out = np.asarray(f(x))
    jac = np.zeros(out.shape + x.shape, out.dtype)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = H
        jac[(...,) + i] = (np.asarray(f(x + d)) - np.asarray(f(x - d))) / (2 * H)
    return jac


def close(a, b, tol=TOL):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
