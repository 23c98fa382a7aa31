"""Shared test helpers: inputs per dtype, numpy comparison at dtype-fitting tolerances."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from aot.frontend import EagerEmitter, translate

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]
NUMERIC = DTYPES[1:]
REAL = DTYPES[:5]
INEXACT = DTYPES[3:]
FLOATS = ["float32", "float64"]
RTOL = {"float32": 1e-6, "complex64": 1e-6, "float64": 1e-12, "complex128": 1e-12}
# numpy and our decompositions may take different (equally valid) rounding paths: a few ulps
RTOL_DECOMP = {"float32": 1e-5, "complex64": 1e-5, "float64": 1e-12, "complex128": 1e-12}


def make(dtype: str, shape: tuple, seed: int = 0, domain: str = "any") -> np.ndarray:
    """Random array; `domain`: any, positive, unit (|x| < 1), nonzero, small (0..3 for exponents)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind == "i":
        ranges = {"any": (-6, 7), "positive": (1, 7), "unit": (0, 1), "nonzero": (1, 7), "small": (0, 4)}
        lo, hi = ranges[domain]
        a = rng.integers(lo, hi, shape).astype(dt)
        if domain == "nonzero":
            a = a * np.where(rng.random(shape) < 0.5, -1, 1).astype(dt)
        return a
    def real(part_seed: int) -> np.ndarray:
        r = np.random.default_rng(seed + part_seed)
        base = {"any": r.uniform(-3, 3, shape), "positive": r.uniform(0.1, 3, shape),
                "unit": r.uniform(-0.95, 0.95, shape),
                "nonzero": r.uniform(0.5, 3, shape) * r.choice([-1, 1], shape),
                "small": r.uniform(0, 3, shape)}[domain]
        return base
    if dt.kind == "c":
        return (real(1) + 1j * real(2)).astype(dt)
    return real(1).astype(dt)


def assert_same(got: Any, want: Any, decomposed: bool = False) -> None:
    """Same dtype, shape and values (exact for ints/bools, rtol per dtype for inexact)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype} != numpy's {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape} != numpy's {want.shape}"
    if want.dtype.kind in "fc":
        rtol = (RTOL_DECOMP if decomposed else RTOL)[want.dtype.name]
        finite = np.abs(want[np.isfinite(want)]) if want.size else np.zeros(0)
        scale = float(finite.max()) if finite.size else 1.0
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(scale, 1.0), equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def check(func: Any, *args: Any, decomposed: bool = False, **kwargs: Any) -> np.ndarray:
    """translate(func) with the eager emitter agrees with calling numpy directly."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = func(*args, **kwargs)
        got = translate(EagerEmitter(), func, *args, **kwargs)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, decomposed)
    else:
        assert_same(got, want, decomposed)
    return got
