"""jax's size= / fill_value= for numpy's data-dependent functions, against numpy through the compiled
(default), eager and library paths: np.nonzero / argwhere / flatnonzero / extract / compress (and the
nonzero / compress methods), np.unique and the unique_* functions, union1d / intersect1d / setdiff1d /
setxor1d (aot/frontend/numpy_sized.py on the `compact` op).

The reference is numpy's own result padded with fill_value to `size` entries, or its first `size`:
values exactly (NaNs at the same places), dtypes and shapes equal. Index results pad as jax's do
(unique's indices with the first index, its counts with 0, intersect1d's with the inputs' lengths).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import aot
from aot.compiler.capture import GraphBreak
from aot.frontend.operands import UnsupportedError

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]


def _paths(compiled: tuple) -> list:
    """Every dtype once: through the native code for `compiled`, the eager backend (the ops' numpy
    references, the same decomposition) for the others, which keeps the compile count small."""
    paths = [(d, "llvm" if d in compiled else "eager") for d in DTYPES]
    return [pytest.param(d, backend, id=f"{d}-{backend}") for d, backend in paths]


def _data(dtype: str, shape: tuple, seed: int = 0) -> np.ndarray:
    """Few distinct values (repeats, zeros), NaNs in floats and in either complex part, both zeros."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.4
    if dtype.startswith("int"):
        return rng.integers(-3, 4, shape).astype(dtype)
    real = (rng.integers(-3, 4, shape) * 0.5).astype(np.float64)
    flat = real.reshape(-1)
    if flat.size > 6:
        flat[[1, 4]] = np.nan
        flat[5] = -0.0
    if dtype.startswith("complex"):
        imag = rng.integers(-1, 2, shape).astype(np.float64)
        if imag.size > 6:
            imag.reshape(-1)[6] = np.nan
        return (real + 1j * imag).astype(dtype)
    return real.astype(dtype)


def _pad(a, size: int, fill) -> np.ndarray:
    """numpy's result `a` cut or padded to `size` entries along axis 0."""
    a = np.asarray(a)
    if len(a) >= size:
        return a[:size]
    with np.errstate(invalid="ignore"):
        f = np.asarray(fill).astype(a.dtype)
    return np.concatenate([a, np.full((size - len(a),) + a.shape[1:], f, a.dtype)])


def _first(a):
    return a[0] if len(a) else 0


def _same(got, want, what: str = "") -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, numpy {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, numpy {want.shape}"
    np.testing.assert_array_equal(got, want, err_msg=what)


def _check(got, want, what: str) -> None:
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if isinstance(w, tuple):
            _check(g, w, f"{what} output {k}")
        else:
            _same(g, w, f"{what} output {k}")


def _numpy(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


# --- nonzero, argwhere, flatnonzero -------------------------------------------------------------------
def _nonzero_family(x, v):
    return (np.nonzero(x, size=3), np.nonzero(x, size=20, fill_value=-1), np.nonzero(x, size=0),
            np.nonzero(x.T, size=6, fill_value=(7, 8)), np.argwhere(x, size=4, fill_value=9),
            np.argwhere(v, size=9),
            np.flatnonzero(x, size=14), np.flatnonzero(v[::2], size=2), v.nonzero(size=9, fill_value=5),
            np.nonzero(x[::2, ::-1], size=8))


def _nonzero_family_numpy(x, v):
    def nz(a, size, fills=(0, 0)):
        return tuple(_pad(i, size, f) for i, f in zip(np.nonzero(a), fills))

    return (nz(x, 3), nz(x, 20, (-1, -1)), nz(x, 0), nz(x.T, 6, (7, 8)), _pad(np.argwhere(x), 4, 9),
            _pad(np.argwhere(v), 9, 0), _pad(np.flatnonzero(x), 14, 0), _pad(np.flatnonzero(v[::2]), 2, 0),
            (_pad(v.nonzero()[0], 9, 5),), nz(x[::2, ::-1], 8))


@pytest.mark.parametrize("dtype, backend", _paths(("bool", "float64", "complex64")))
def test_nonzero_family(dtype, backend):
    """Sizes below, at and above the count (NaN counts as nonzero), tuple fills, strided views."""
    x, v = _data(dtype, (4, 5)), _data(dtype, (9,), seed=1)
    _check(aot.compile(_nonzero_family, backend=backend)(x, v), _nonzero_family_numpy(x, v), dtype)


def test_nonzero_of_3d_empty_and_one_element():
    x3 = _data("int32", (2, 3, 4), seed=2)
    f = aot.compile(lambda a, e, o, z: (np.nonzero(a, size=30), np.argwhere(e, size=2, fill_value=1),
                                        np.nonzero(o, size=2), np.flatnonzero(z, size=3),
                                        np.argwhere(z, size=2)))
    empty, one, zero_d = np.zeros((3, 0)), np.array([2.5]), np.array(4.0)
    want = (tuple(_pad(i, 30, 0) for i in np.nonzero(x3)), np.ones((2, 2), np.int64),
            (np.array([0, 0]),), np.array([0, 0, 0]), np.zeros((2, 0), np.int64))
    _check(f(x3, empty, one, zero_d), want, "3-d / empty / one element")


# --- extract, compress ----------------------------------------------------------------------------------
def _selections(x, c, short, long):
    return (np.extract(c, x, size=5), np.extract(c, x, size=20, fill_value=2), np.extract(short, x, size=3),
            np.compress(short, x, size=4), np.compress(c[:, 0], x, axis=0, size=2, fill_value=1),
            np.compress(short, x, axis=1, size=3), np.compress(long, x, axis=-1, size=6),
            x.compress(c[0], axis=1, size=2), np.compress(c[:, 1], x.T[::-1], axis=1, size=0))


def _selections_numpy(x, c, short, long):
    def along(r, axis, size, fill=0):
        return np.moveaxis(_pad(np.moveaxis(r, axis, 0), size, fill), 0, axis)

    return (_pad(np.extract(c, x), 5, 0), _pad(np.extract(c, x), 20, 2), _pad(np.extract(short, x), 3, 0),
            _pad(np.compress(short, x), 4, 0), _pad(np.compress(c[:, 0], x, axis=0), 2, 1),
            along(np.compress(short, x, axis=1), 1, 3), along(np.compress(long, x, axis=-1), 1, 6),
            along(x.compress(c[0], axis=1), 1, 2), along(np.compress(c[:, 1], x.T[::-1], axis=1), 1, 0))


@pytest.mark.parametrize("dtype, backend", _paths(("int32", "complex128")))
def test_extract_and_compress(dtype, backend):
    """Conditions as numpy reads them (nonzero values; a shorter one cuts, a longer one may be False
    past the end), every axis, the method, a transposed reversed view."""
    x, c = _data(dtype, (4, 5), seed=3), _data("bool", (4, 5), seed=4)
    short = np.array([2.0, 0.0, -1.0])
    long = np.array([1, 0, 1, 1, 0, 0, 0])
    args = (x, c, short, long)
    _check(aot.compile(_selections, backend=backend)(*args), _numpy(_selections_numpy, *args), dtype)


def test_a_condition_past_the_end_raises_index_error():
    f = aot.compile(lambda x, c: np.compress(c, x, axis=0, size=2))
    x = np.arange(6.0).reshape(3, 2)
    _same(f(x, np.array([0, 1, 0, 0])), _pad(np.compress([0, 1, 0, 0], x, axis=0), 2, 0))
    with pytest.raises(IndexError):
        np.compress([0, 1, 0, 1], x, axis=0)
    with pytest.raises(IndexError):
        f(x, np.array([0, 1, 0, 1]))


# --- unique ---------------------------------------------------------------------------------------------
def _unique_ref(a, size, equal_nan=True, fill=None):
    v, i, inv, c = np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                             equal_nan=equal_nan)
    values = _pad(v, size, _first(v) if fill is None else fill)
    return values, _pad(i, size, _first(i)), inv, _pad(c, size, 0)


def _unique_family(x, m):
    return (np.unique(x, True, True, True, size=3), np.unique(x, True, True, True, size=12),
            np.unique(x, return_counts=True, equal_nan=False, size=14, fill_value=1),
            np.unique(m, size=2), np.unique(m, return_inverse=True, size=30),
            tuple(np.unique_all(x, size=5)), np.unique_values(m.T, size=4),
            tuple(np.unique_counts(x[::2], size=8)), tuple(np.unique_inverse(m, size=1)))


def _unique_family_numpy(x, m):
    r3, r12 = _unique_ref(x, 3), _unique_ref(x, 12)
    u = _unique_ref(x, 14, equal_nan=False, fill=1)
    um, um30, ua = _unique_ref(m, 2), _unique_ref(m, 30), _unique_ref(x, 5, equal_nan=False)
    uc, ui = _unique_ref(x[::2], 8, equal_nan=False), _unique_ref(m, 1, equal_nan=False)
    return (r3, r12, (u[0], u[3]), um[0], (um30[0], um30[2].reshape(m.shape)), ua,
            _unique_ref(m.T, 4, equal_nan=False)[0], (uc[0], uc[3]), (ui[0], ui[2].reshape(m.shape)))


@pytest.mark.parametrize("dtype, backend", _paths(("float32",)))
def test_unique_family(dtype, backend):
    """Every return_* and unique_* result, NaNs collapsed (equal_nan, np.unique's default) or not (the
    unique_* functions), sizes below and above the count, 2-D inputs (the inverse keeps their shape)."""
    x, m = _data(dtype, (11,), seed=5), _data(dtype, (3, 4), seed=6)
    _check(aot.compile(_unique_family, backend=backend)(x, m), _unique_family_numpy(x, m), dtype)


# --- set functions ---------------------------------------------------------------------------------------
def _sets(a, b):
    return (np.union1d(a, b, size=4), np.union1d(a, b, size=30, fill_value=3), np.intersect1d(a, b, size=10),
            np.intersect1d(a, b, return_indices=True, size=6, fill_value=1), np.setdiff1d(a, b, size=9),
            np.setdiff1d(b, a, size=2, fill_value=2), np.setxor1d(a, b, size=16), np.setxor1d(a, b, size=1))


def _sets_numpy(a, b):
    u, i, x = np.union1d(a, b), np.intersect1d(a, b), np.setxor1d(a, b)
    v, i1, i2 = np.intersect1d(a, b, return_indices=True)
    return (_pad(u, 4, _first(u)), _pad(u, 30, 3), _pad(i, 10, _first(i)),
            (_pad(v, 6, 1), _pad(i1, 6, a.size), _pad(i2, 6, b.size)), _pad(np.setdiff1d(a, b), 9, 0),
            _pad(np.setdiff1d(b, a), 2, 2), _pad(x, 16, _first(x)), _pad(x, 1, _first(x)))


@pytest.mark.parametrize("dtype, backend", _paths(("int64",)))
def test_set_functions(dtype, backend):
    """Repeated values and NaNs (never members: NaN != NaN, as numpy compares), 2-D inputs flattened."""
    a, b = _data(dtype, (3, 4), seed=7), _data(dtype, (9,), seed=8)
    _check(aot.compile(_sets, backend=backend)(a, b), _sets_numpy(a, b), dtype)


def test_assume_unique():
    """assume_unique keeps setdiff1d's ar1 order and skips the unique step of the others."""
    a = np.array([5, -1, 3, 8, 0])
    b = np.array([3, 9, 8, 2])
    f = aot.compile(lambda p, q: (np.setdiff1d(p, q, assume_unique=True, size=4),
                                  np.setxor1d(p, q, assume_unique=True, size=8),
                                  np.intersect1d(p, q, assume_unique=True, return_indices=True, size=3)))
    v, i1, i2 = np.intersect1d(a, b, assume_unique=True, return_indices=True)
    xo = np.setxor1d(a, b, assume_unique=True)
    want = (_pad(np.setdiff1d(a, b, assume_unique=True), 4, 0), _pad(xo, 8, xo[0]),
            (_pad(v, 3, v[0]), _pad(i1, 3, 5), _pad(i2, 3, 4)))
    _check(f(a, b), want, "assume_unique")


def test_mixed_dtypes():
    """The values' dtype is the concatenation's; setdiff1d's is ar1's, compared in the common dtype."""
    a = np.array([5, -1, 3, 8, 0, 3], np.int32)
    b = np.array([3.0, 0.5, 8.0, 9.0])
    f = aot.compile(lambda p, q: (np.union1d(p, q, size=9), np.setdiff1d(p, q, size=4),
                                  np.intersect1d(p, q, size=2), np.setxor1d(q, p, size=6)), backend="eager")
    want = (_pad(np.union1d(a, b), 9, -1), _pad(np.setdiff1d(a, b), 4, 0), np.intersect1d(a, b),
            _pad(np.setxor1d(b, a), 6, -1))
    _check(f(a, b), want, "mixed dtypes")


def _edges(e, o, x, z, q):
    return (np.unique(e, True, True, True, size=2), np.unique(o, True, True, True, size=3),
            np.unique(e, size=2, fill_value=4), np.unique(x, return_counts=True, size=4),
            np.unique(z, return_counts=True, size=4), np.union1d(e, q, size=3),
            np.intersect1d(e, q, size=2, return_indices=True), np.setdiff1d(q, e, size=3),
            np.setxor1d(e, q, size=3), np.setdiff1d(e, q, size=2))


def test_empty_one_element_and_special_inputs():
    """Empty and 1-element inputs; -0.0 and 0.0 one value, complex NaNs (in either part) one value."""
    e, o, q = np.zeros(0), np.array([np.nan]), np.array([2.0, 1.0, 2.0])
    x = np.array([0.0, -0.0, np.nan, 1.0, -np.nan, 0.0])
    z = np.array([complex(np.nan, 1), complex(1, np.nan), 1 + 0j, complex(np.nan, np.nan), 1 + 0j])
    r, rz = _unique_ref(x, 4), _unique_ref(z, 4)
    empty_unique = (np.zeros(2), np.zeros(2, np.int64), np.zeros(0, np.int64), np.zeros(2, np.int64))
    empty_intersection = (np.zeros(2), np.zeros(2, np.int64), np.full(2, 3))
    want = (empty_unique, _unique_ref(o, 3), np.full(2, 4.0), (r[0], r[3]), (rz[0], rz[3]),
            np.array([1.0, 2.0, 1.0]), empty_intersection, np.array([1.0, 2.0, 0.0]),
            np.array([1.0, 2.0, 1.0]), np.zeros(2))
    _check(aot.compile(_edges)(e, o, x, z, q), want, "edges")


# --- paths: dynamic shapes, long masks, library -----------------------------------------------------------
def _dynamic(x, m):
    return (np.nonzero(m, size=x.shape[0])[0], np.unique(x, return_counts=True, size=4),
            np.extract(m, x, size=x.size, fill_value=-1), np.setdiff1d(x, x[::3], size=5))


def _dynamic_numpy(x, m):
    n = len(x)
    u, c = np.unique(x, return_counts=True)
    return (_pad(np.nonzero(m)[0], n, 0), (_pad(u, 4, u[0]), _pad(c, 4, 0)), _pad(np.extract(m, x), n, -1),
            _pad(np.setdiff1d(x, x[::3]), 5, 0))


def test_dynamic_shapes():
    """Symbolic lengths, with a static size and with a size read from the input's shape."""
    f = aot.compile(_dynamic, dynamic=True)
    for n in (7, 12, 40):
        rng = np.random.default_rng(n)
        x, m = rng.integers(0, 6, n).astype(np.float64), rng.random(n) < 0.5
        _check(f(x, m), _dynamic_numpy(x, m), f"n={n}")
    assert f.cache_info()["compiles"] == 1


def test_long_masks_take_the_blocked_path():
    """Masks of many blocks (counted in parallel, then written from the blocks' offsets), cut and
    padded, of rows (compress along an axis) and of elements."""
    rng = np.random.default_rng(0)
    n = 150_000
    x = rng.standard_normal(n)
    rows = rng.standard_normal((n // 4, 3))
    f = aot.compile(lambda a, r: (np.nonzero(a > 1.0, size=30_000), np.extract(a > -1.0, a, size=140_000),
                                  np.compress(r[:, 0] > 0, r, axis=0, size=20_000, fill_value=7.0)),
                    options={"num_threads": 4})  # built for 4 threads: up to 16 blocks, whatever the machine
    want = ((_pad(np.nonzero(x > 1.0)[0], 30_000, 0),), _pad(np.extract(x > -1.0, x), 140_000, 0),
            _pad(np.compress(rows[:, 0] > 0, rows, axis=0), 20_000, 7.0))
    _check(f(x, rows), want, "long")


def test_library(tmp_path):
    """One library of several size= functions with a dynamic length."""
    def fn(x, m):
        return _dynamic(x, m) + (np.argwhere(m, size=4),)

    x = np.arange(10.0)
    dims = {"x": {0: aot.Dim("N", min=2, max=4096)}, "m": {0: aot.Dim("N", min=2, max=4096)}}
    lib = aot.aot_load(aot.aot_compile(fn, (x, x > 4), dynamic_shapes=dims, path=tmp_path / "sized.so"))
    for n in (9, 50):
        rng = np.random.default_rng(n)
        x, m = rng.integers(0, 6, n).astype(np.float64), rng.random(n) < 0.5
        d = _dynamic_numpy(x, m)
        want = (d[0], *d[1], d[2], d[3], _pad(np.argwhere(m), 4, 0))  # the library's results are flat
        _check(lib(x, m), want, f"library n={n}")


# --- constants, refusals, argument errors ---------------------------------------------------------------
def test_constant_arguments_are_computed_while_tracing():
    table = np.array([4, 1, 4, 2])
    f = aot.compile(lambda x: x + np.unique(table, size=4, fill_value=0))
    _same(f(np.ones(4, np.int64)), np.array([2, 3, 5, 1]))


@pytest.mark.parametrize("fn, name", [
    (lambda x: np.nonzero(x), "np.nonzero"), (lambda x: np.unique(x, return_counts=True), "np.unique"),
    (lambda x: np.intersect1d(x, x), "np.intersect1d"), (lambda x: x.nonzero(), "np.nonzero"),
    (lambda x: np.compress(x > 0, x), "np.compress"), (lambda x: np.unique_values(x), "np.unique_values"),
])
def test_without_size_the_error_names_size(fn, name):
    with pytest.raises((UnsupportedError, GraphBreak), match="size=") as info:
        aot.compile(fn, fullgraph=True)(np.arange(4.0))
    assert name in str(info.value) and "data" in str(info.value)


def test_trim_zeros_stays_refused():
    """jax.numpy's trim_zeros has no size= either."""
    with pytest.raises((UnsupportedError, GraphBreak), match="np.trim_zeros"):
        aot.compile(lambda x: np.trim_zeros(x), fullgraph=True)(np.arange(4.0))


@pytest.mark.parametrize("fn, error, match", [
    (lambda x: np.nonzero(x, size=-1), ValueError, "non-negative"),
    (lambda x: np.nonzero(x, size=2.5), TypeError, "size must be an int"),
    (lambda x: np.nonzero(x, size=x), TypeError, "size must be an int"),
    (lambda x: np.nonzero(x[0], size=2), ValueError, "0d arrays"),
    (lambda x: np.nonzero(x, size=2, fill_value=(1, 2)), ValueError, "tuple of length 1"),
    (lambda x: np.argwhere(x, size=2, fill_value=np.ones(2)), ValueError, "fill_value"),
    (lambda x: np.compress(np.ones((2, 2)), x, size=2), ValueError, "1-d"),
    (lambda x: np.compress(x > 0, x, axis=1, size=2), np.exceptions.AxisError, "axis"),
    (lambda x: np.compress(x > 0, x, out=x, size=2), UnsupportedError, "out"),
    (lambda x: np.unique(x.reshape(2, 2), axis=0, size=2), UnsupportedError, "axis"),
])
def test_argument_errors(fn, error, match):
    with pytest.raises(error, match=match):
        aot.compile(fn, fullgraph=True)(np.arange(4.0))
