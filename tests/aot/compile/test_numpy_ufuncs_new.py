"""The ufuncs added with the everyday numpy functions: the rows gcd, lcm, ldexp (and frexp's exponent),
the decomposed two-output ufuncs (np.modf, np.frexp, np.divmod) and vector gufuncs (np.vecdot,
np.matvec, np.vecmat), `ufunc.outer` of every binary ufunc and `ufunc.at`'s refusal; against numpy
through backend="eager", the compiled default backend and a library. Exact results are compared
to the bit (signs of zero and nan positions included)."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import aot
from aot.frontend.numpy_ufuncs import ALL_UFUNCS

from ._support import make

BACKENDS = ["eager", "llvm"]
INT_SPECIALS = [0, 1, -1, 2, -7, 12, -18, 100, 97, 2**31 - 1, -(2**31)]
FLOAT_SPECIALS = [
    0.0,
    -0.0,
    np.inf,
    -np.inf,
    np.nan,
    1.0,
    -1.5,
    0.75,
    3.0,
    -2.0,
    7.25,
    1e-5,
    -1e300,
    2.5e-310,
]


def _flat(t):
    if isinstance(t, (tuple, list)):
        return [y for z in t for y in _flat(z)]
    return [t]


def same_bits(got, want, what: str = "") -> None:
    """Equal dtypes, shapes and values, the sign of zero and nan positions included."""
    gs, ws = _flat(got), _flat(want)
    assert len(gs) == len(ws), what
    for k, (g, w) in enumerate(zip(gs, ws)):
        where = f"{what}[{k}]"
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (
            f"{where}: {g.dtype}{g.shape}, numpy {w.dtype}{w.shape}"
        )
        np.testing.assert_array_equal(g, w, err_msg=where)
        if w.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=f"{where} signs")


def run(fn, backend, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return aot.compile(fn, backend=backend)(*args)


def numpy_of(fn, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _pairs(values, dtype):
    with np.errstate(over="ignore"):  # -1e300 in float32 is -inf
        v = np.array(values, dtype)
    return np.repeat(v, len(v)), np.tile(v, len(v))


# --- gcd, lcm ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_gcd_lcm(dtype, backend):
    x, y = _pairs(INT_SPECIALS, dtype)
    fn = lambda a, b: (np.gcd(a, b), np.lcm(a, b), np.gcd(a, 6), np.lcm(a[::3], b[::3]), np.gcd(a > 0, b))
    same_bits(run(fn, backend, x, y), numpy_of(fn, x, y), dtype)


def test_gcd_refuses_floats_and_bools():
    for args in ((np.ones(2), np.ones(2)), (np.ones(2, bool), np.ones(2, bool))):
        with pytest.raises(TypeError):
            aot.compile(np.gcd)(*args)


# --- ldexp, frexp, modf, divmod ---------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ldexp_frexp_modf(dtype, backend):
    fi = np.finfo(dtype)
    with np.errstate(over="ignore"):
        x = np.array(FLOAT_SPECIALS + [fi.max, fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal], dtype)
    n32 = np.array([3, -2, 1, 0, 5, -1074, 1074, 200, -200, 0, 1, -3, 2, 60, -149, 149, 1, 0], np.int32)
    n64 = n32.astype(np.int64) * np.array([1] * 16 + [2**40, -(2**40)])

    def fn(a, k, m):
        return (
            np.ldexp(a, k),
            np.ldexp(a, m),
            np.ldexp(a, 3),
            np.ldexp(k, k),
            np.frexp(a),
            np.modf(a),
            np.frexp(k),
            np.modf(k),
            np.modf(a[::-2]),
        )

    same_bits(run(fn, backend, x, n32, n64), numpy_of(fn, x, n32, n64), dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_divmod(dtype, backend):
    values = INT_SPECIALS[:9] if dtype.startswith("int") else FLOAT_SPECIALS
    x, y = _pairs(values, dtype)
    fn = lambda a, b: (np.divmod(a, b), np.divmod(a, 3), divmod(a, b))
    same_bits(run(fn, backend, x, y), numpy_of(fn, x, y), dtype)


# --- vector gufuncs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128", "bool"])
def test_vecdot_matvec_vecmat(dtype, backend):
    a, v = make(dtype, (2, 3, 4), seed=1, specials=False), make(dtype, (4,), seed=2, specials=False)
    w = make(dtype, (3,), seed=3, specials=False)
    fn = lambda p, q, r: (
        np.vecdot(p, q),
        np.vecdot(p[0], p[1]),
        np.matvec(p, q),
        np.matvec(p[0], q),
        np.vecmat(r, p),
        np.vecmat(r[None], p[1]),
        np.vecdot(p.transpose(0, 2, 1), r),
    )
    want = numpy_of(fn, a, v, w)
    got = run(fn, backend, a, v, w)
    for k, (g, e) in enumerate(zip(got, want)):
        assert g.dtype == e.dtype and g.shape == e.shape, k
        np.testing.assert_allclose(g, e, rtol=2e-6 if dtype == "float32" else 1e-12, err_msg=str(k))
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        run(lambda p, q: np.vecdot(p, q), backend, a, w)


# --- ufunc.outer and ufunc.at -----------------------------------------------------------------------


def _binary_ufuncs():
    return sorted({u for u in ALL_UFUNCS if u.nin == 2 and u.signature is None}, key=lambda u: u.__name__)


def _outer_program(ufuncs):
    def fn(a, b, i, j):
        out = []
        for u in ufuncs:
            p, q = (i, j) if u.__name__ in _INT_ONLY else (a, b)
            out.append(u.outer(p, q))
        return tuple(out)

    return fn


_INT_ONLY = {
    "gcd",
    "lcm",
    "left_shift",
    "right_shift",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_outer_of_every_binary_ufunc(backend):
    ufuncs = [u for u in _binary_ufuncs() if u is not np.ldexp]
    a, b = np.array([1.5, -2.0, 0.0, 3.0]), np.array([[0.5, 2.0, -1.0], [4.0, 0.25, 1.0]])
    i, j = np.array([3, -4, 12, 0], np.int32), np.array([[2, 5, 1], [6, 0, 3]], np.int32)
    fn = _outer_program(ufuncs)
    got, want = run(fn, backend, a, b, i, j), numpy_of(fn, a, b, i, j)
    for u, g, w in zip(ufuncs, got, want):
        for gg, ww in zip(_flat(g), _flat(w)):
            assert gg.dtype == ww.dtype and gg.shape == ww.shape == (4, 2, 3), u.__name__
            np.testing.assert_allclose(gg, ww, rtol=1e-14, equal_nan=True, err_msg=u.__name__)
    same_bits(
        run(lambda p, k: (np.ldexp.outer(p, k), np.multiply.outer(p, 2.0)), backend, a, i),
        (np.ldexp.outer(a, i), np.multiply.outer(a, 2.0)),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_ufunc_at_and_outer_errors(backend):
    def f(a):
        b = a.copy()
        np.add.at(b, [0, 1, 1], 1.0)  # ufunc.at updates b in place (aot/frontend/assignment.py)
        return b
    np.testing.assert_array_equal(run(f, backend, np.zeros(3)), [1.0, 2.0, 0.0])
    with pytest.raises(ValueError, match="binary"):
        run(lambda a: np.sin.outer(a, a), backend, np.zeros(3))


# --- the library path -------------------------------------------------------------------------------


def _library_fns(a, k):
    return (
        np.gcd(k, 6),
        np.lcm(k, k + 1),
        np.ldexp(a, k),
        np.frexp(a),
        np.modf(a),
        np.divmod(a, 2.5),
        np.vecdot(a, a),
        np.subtract.outer(a[:3], a[:2]),
    )


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    a = np.array([1.5, -0.0, np.inf, np.nan, 3.0, -7.25, 2.5e-310, 1e300])
    k = np.array([3, -2, 1, 0, 5, 7, 100, -1], np.int64)
    lib = aot.aot_load(aot.aot_compile(_library_fns, (a, k), path=tmp_path / "ufuncs_new.so"))
    same_bits(lib(a, k), numpy_of(_library_fns, a, k), "library")
