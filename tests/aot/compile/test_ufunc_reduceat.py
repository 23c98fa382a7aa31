"""ufunc.reduceat with indices known at trace time (aot/frontend/numpy_ufunc_methods.py) against numpy:
dtypes, repeated and decreasing indices, axes, and numpy's errors."""
from __future__ import annotations

import numpy as np
import pytest

import aot
from aot.frontend import UnsupportedError

CASES = [
    (lambda a: np.add.reduceat(a, [0, 2, 2, 5]), np.arange(6, dtype=np.int32)),  # int32 sums in int64
    (lambda a: np.multiply.reduceat(a, [4, 1]), np.arange(6.0) + 1),  # decreasing: the single element
    (lambda a: np.subtract.reduceat(a, [0, 3]), np.arange(6.0)),  # not reorderable: a fold
    (lambda a: np.add.reduceat(a, [0, 2], axis=1), np.arange(6.0).reshape(2, 3)),
    (lambda a: np.maximum.reduceat(a, [0, 3, 1]), np.array([3.0, 1, 4, 1, 5, 9])),
    (lambda a: np.logical_or.reduceat(a, [0, 1]), np.array([True, False, False])),
    (lambda a: np.add.reduceat(a[::2], [1], dtype=np.float32), np.arange(8.0)),
    (lambda a: np.hypot.reduceat(a, [0, 2]), np.arange(4.0) - 1.5),
]


@pytest.mark.parametrize("kw", [{}, {"backend": "eager"}, {"dynamic": True}], ids=["llvm", "eager", "dynamic"])
def test_reduceat_matches_numpy(kw):
    for f, a in CASES:
        got, want = aot.compile(f, fullgraph=True, **kw)(a), f(a)
        np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.float32 else 1e-15)
        assert got.dtype == want.dtype


def test_reduceat_errors():
    x = np.arange(4.0)
    with pytest.raises(IndexError, match="out-of-bounds"):
        aot.compile(lambda a: np.add.reduceat(a, [0, 4]), fullgraph=True)(x)
    with pytest.raises(UnsupportedError, match="traced indices"):
        aot.compile(lambda a, i: np.add.reduceat(a, i), fullgraph=True)(x, np.array([0, 2]))
    with pytest.raises(ValueError, match="binary"):
        aot.compile(lambda a: np.sin.reduceat(a, [0]), fullgraph=True)(x)
