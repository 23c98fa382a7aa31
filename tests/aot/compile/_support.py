"""Shared helpers of the compiled-path tests: inputs per dtype (with IEEE specials), the strided
layouts a compiled function must accept, and numpy comparison at tolerances that fit the dtype."""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

DTYPES = ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
SUPPORTED = frozenset(np.dtype(d) for d in DTYPES)

# arithmetic is exact up to rounding; transcendentals within a few ulps (libm/libmvec vs numpy's)
RTOL_ARITH = {"float32": 1e-6, "complex64": 1e-6, "float64": 1e-12, "complex128": 1e-12}
RTOL_TRANS = {"float32": 2e-6, "complex64": 2e-6, "float64": 5e-15, "complex128": 5e-15}
SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0)
FINITE_SPECIALS = (np.nan, 0.0, -0.0)


def make(dtype: Any, shape: tuple, seed: int = 0, domain: str = "any", specials: bool = True,
         complex_inf: bool = False) -> np.ndarray:
    """A random array. domain: any, positive, nonzero (ints: no zeros), small (0..3: int exponents).
    Floats get nan, +-inf and +-0 at a few positions unless `specials` is False; complex parts get
    infinities only with `complex_inf` (C99 Annex G cases, see test_ops.test_complex_infinities)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dt.kind == "i":
        lo, hi = {"any": (-6, 7), "positive": (1, 7), "nonzero": (1, 7), "small": (0, 4)}[domain]
        a = rng.integers(lo, hi, shape)
        if domain == "nonzero":
            a = a * rng.choice([-1, 1], shape)
        return a.astype(dt)
    lo, hi = {"any": (-3, 3), "positive": (0.1, 3), "nonzero": (0.5, 3), "small": (0, 3)}[domain]

    def part(k: int) -> np.ndarray:
        p = np.random.default_rng(seed + k).uniform(lo, hi, shape)
        if domain == "nonzero":
            p = p * np.random.default_rng(seed + k + 7).choice([-1, 1], shape)
        if specials and domain == "any" and p.size >= 8:
            values = SPECIALS if dt.kind == "f" or complex_inf else FINITE_SPECIALS
            flat = p.reshape(-1)
            pos = np.random.default_rng(seed + k + 13).choice(flat.size, len(values), replace=False)
            flat[pos] = values
        return p

    out = np.empty(shape, dt)
    if dt.kind == "c":  # set the parts: inf * 1j would make nans
        out.real, out.imag = part(1), part(2)
    else:
        out[...] = part(1)
    return out


def layouts(base: np.ndarray) -> dict[str, np.ndarray]:
    """Views equal to `base` (a 2-D array) with the strides numpy code produces: C and Fortran order,
    a transpose, stepped and negative-stepped slices, and a stride-0 broadcast of its first row."""
    n, m = base.shape
    big = np.zeros((2 * n + 1, 3 * m + 2), base.dtype)
    stepped = big[1::2, ::3][:n, :m]
    stepped[...] = base
    rev = np.zeros_like(big)
    neg = rev[::-2, ::-3][:n, :m]
    neg[...] = base
    row = np.broadcast_to(base[:1], base.shape)
    out = {"C": np.ascontiguousarray(base), "F": np.asfortranarray(base), "T": np.ascontiguousarray(base.T).T,
           "stepped": stepped, "negative": neg, "broadcast": row}
    return out


def reference(fn: Callable, *args: Any) -> Any:
    """fn on numpy arrays with numpy's floating-point warnings silenced (nan/inf are data here)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def assert_same(got: Any, want: Any, rtol: float | None = None, what: str = "") -> None:
    """Same type, dtype, shape; exact for ints/bools; `rtol` (atol = rtol) for inexact; nan and inf
    at the same positions (for complex: nan as a whole, then real and imaginary parts)."""
    where = f"{what}: " if what else ""
    assert isinstance(got, np.ndarray), f"{where}compiled result is {type(got).__name__}, not an ndarray"
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"{where}dtype {got.dtype} != numpy's {want.dtype}"
    assert got.shape == want.shape, f"{where}shape {got.shape} != numpy's {want.shape}"
    if want.dtype.kind in "biu" or rtol is None:
        np.testing.assert_array_equal(got, want, err_msg=where)
        return
    if want.dtype.kind == "c":  # a complex nan is nan in either part; which part is not specified
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{where}complex nan positions")
        ok = ~np.isnan(want)
        got, want = got[ok], want[ok]
        parts = [(got.real, want.real), (got.imag, want.imag)]
    else:
        parts = [(got, want)]
    for g, w in parts:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True, err_msg=where)


def rtol_for(dtype: Any, transcendental: bool) -> float | None:
    name = np.dtype(dtype).name
    return (RTOL_TRANS if transcendental else RTOL_ARITH).get(name)
