"""The polynomial functions (aot/frontend/numpy_polynomials.py; np.polyval: numpy_numeric.py) against
numpy: values, dtypes and errors through backend="eager" and the compiled default backend, one
library build, and the run-time check where numpy would trim leading zeros (a length that depends
on the values). Programs batch the calls so that a dtype costs one compile."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import aot
from aot.frontend import UnsupportedError

from ._support import make
from .test_numpy_everyday import BACKENDS, check, dtypes, numpy_of, run


def _polys(p, q, x):
    out = [
        np.polyadd(p, q),
        np.polysub(p, q[:2]),
        np.polyadd(p, 1),
        np.polysub([1, 2], q),
        np.polymul(p, q),
        np.polymul(q, [2, 0]),
        np.polymul(p, [0, 0, 3]),  # constant coefficients: trimmed while tracing, as numpy's poly1d
        np.polyder(p),
        np.polyder(p, 3),
        np.polyder(p, 0),
        np.polyder(q[:1]),  # a constant's derivative: empty
        np.polyint(p),
        np.polyint(p, 2, [1, 2]),
        np.polyint(q, 3, 0.5),
        np.polyint(p, 0),
        np.polyval(p, x),
        np.polyval(q, 2),
        np.polyval(p[::-2], x[::2]),
    ]
    if p.dtype.kind != "c":
        out += [np.poly(p), np.poly(x[:3])]
    return tuple(out)


def _inputs(dtype, seed=0):
    p = make(dtype, (5,), seed=seed, domain="nonzero")  # nonzero leading coefficients
    q = make(dtype, (3,), seed=seed + 1, domain="nonzero")
    return p, q, make(dtype, (6,), seed=seed + 2, specials=False)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64", "int32"], ["float32", "complex128"]))
def test_polynomials(dtype, backend):
    args = _inputs(dtype, 1)
    check(run(_polys, backend, *args), numpy_of(_polys, *args), rtol=2e-5 if dtype == "float32" else 1e-11,
          what=dtype)


@pytest.mark.parametrize("dtype", ["int64", "float32", "complex64", "complex128"])
def test_polynomials_eager_dtypes(dtype):
    args = _inputs(dtype, 2)
    check(run(_polys, "eager", *args), numpy_of(_polys, *args), rtol=2e-5 if "64" not in dtype else 1e-11,
          what=dtype)


def _division(u, v):
    return (np.polydiv(u, v), np.polydiv(v, u), np.polydiv(u, v[:1]), np.polydiv(u, [2.0]),
            np.polydiv(u[:3], v))


@pytest.mark.parametrize("backend", BACKENDS)
def test_polydiv(backend):
    f = aot.compile(_division, backend=backend)
    u, v = make("float64", (5,), seed=3, domain="nonzero"), make("float64", (3,), seed=4, domain="nonzero")
    check(f(u, v), numpy_of(_division, u, v), rtol=1e-11)
    exact = np.polymul([1.0, 1, 4], [1.0, 0, 2])  # remainder 0: numpy trims it to one coefficient
    with pytest.raises(ValueError, match="leading zero coefficients"):
        f(exact, np.array([1.0, 1, 4]))
    by_linear = np.polymul([1.0, 2, 3], [1.0, -1])  # remainder 0 of length 1: numpy's length
    g = aot.compile(lambda a, b: np.polydiv(a, b), backend=backend)
    check(g(by_linear, np.array([1.0, -1])), np.polydiv(by_linear, [1.0, -1]), rtol=1e-11)
    check(g(np.array([2.0, 1]), np.array([1.0, 1, 1])), np.polydiv([2.0, 1], [1.0, 1, 1]))  # deg u < deg v


@pytest.mark.parametrize("backend", BACKENDS)
def test_polymul_checks_leading_zeros(backend):
    f = aot.compile(lambda a, b: np.polymul(a, b), backend=backend)
    a, b = np.array([2.0, 0, 1]), np.array([1.0, 3])
    check(f(a, b), np.polymul(a, b))
    with pytest.raises(ValueError, match="leading zero coefficients"):
        f(np.array([0.0, 1, 2]), b)


def _fits(x, y, w):
    return np.polyfit(x, y, 3), np.polyfit(x, np.stack([y, y * x], axis=1), 1, w=w)


def _fits_full(x, y, w):
    y2 = np.stack([y, y * x], axis=1)
    c, res, rank, s, rcond = np.polyfit(x, y, 2, full=True)
    return (c, res, rank, s, rcond, np.polyfit(x, y, 2, w=w), np.polyfit(x, y, 2, cov=True),
            np.polyfit(x, y2, 1, cov="unscaled"), np.polyfit(x.astype(np.float32), y.astype(np.float32), 1))


def _fit_data():
    x = np.linspace(-1.0, 2.0, 9)
    return x, np.sin(x) + 0.1 * x ** 3, np.linspace(1.0, 2.0, 9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_polyfit(backend):
    args = _fit_data()
    check(run(_fits, backend, *args), numpy_of(_fits, *args), rtol=1e-6)


@pytest.mark.parametrize("backend", ["eager", pytest.param("llvm", marks=pytest.mark.slow)])
def test_polyfit_full_and_cov(backend):
    """full=True (rank and singular values too), cov=True and "unscaled", float32; each fit is one
    SVD kernel to compile, so the compiled backend runs with -m slow."""
    args = _fit_data()
    check(run(_fits_full, backend, *args), numpy_of(_fits_full, *args), rtol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_poly_of_a_matrix(backend):
    a = make("float64", (4, 4), seed=5, specials=False)
    check(run(np.poly, backend, a), np.poly(a), rtol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors(backend):
    p = np.array([1.0, 2, 3])
    cases = [
        (ValueError, "Order of derivative must be positive", lambda a: np.polyder(a, -1)),
        (ValueError, "Order of integral must be positive", lambda a: np.polyint(a, -1)),
        (ValueError, "k must be a scalar or a rank-1 array", lambda a: np.polyint(a, 3, [1, 2])),
        (ValueError, "expected deg >= 0", lambda a: np.polyfit(a, a, -1)),
        (TypeError, "expected 1D vector for x", lambda a: np.polyfit(a[None], a, 1)),
        (TypeError, "expected x and y to have same length", lambda a: np.polyfit(a, a[:2], 1)),
        (TypeError, "expected a 1-d array for weights", lambda a: np.polyfit(a, a, 1, w=a[None])),
        (ValueError, "must exceed order", lambda a: np.polyfit(a, a, 2, cov=True)),
        (ValueError, "input must be 1d or non-empty square 2d array", lambda a: np.poly(a[None])),
        (ValueError, "Polynomial must be 1d only", lambda a: np.polymul(a[None], a)),
        (UnsupportedError, "complex roots", lambda a: np.poly(a * 1j)),
        (UnsupportedError, "`deg` must be known at trace time", lambda a: np.polyfit(a, a, a.astype(int)[0])),
    ]
    for exc, match, fn in cases:
        with pytest.raises(exc, match=match):
            run(fn, backend, p)


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    def fn(p, q, x, u, v):
        return (np.polyadd(p, q), np.polymul(p, q), np.polyder(p, 2), np.polyint(q, 2, [1, 2]), np.polyval(p, x),
                np.poly(x[:3])) + _division(u, v)

    args = _inputs("float64", 6) + (make("float64", (5,), seed=9, domain="nonzero"),
                                    make("float64", (3,), seed=10, domain="nonzero"))
    lib = aot.aot_load(aot.aot_compile(fn, args, path=tmp_path / "polynomials.so"))
    check(lib(*args), numpy_of(fn, *args), rtol=1e-11)
    bad = list(args)
    bad[0] = np.concatenate([[0.0], args[0][1:]])
    with pytest.raises(ValueError, match="leading zero coefficients numpy would trim"):
        lib(*bad)
