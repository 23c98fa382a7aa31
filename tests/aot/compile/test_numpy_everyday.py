"""The everyday numpy functions (aot/frontend/numpy_nan.py, numpy_stats.py, numpy_arrays.py,
numpy_signal.py and their rows: bincount, correlate1d, diagonal) against numpy: values, dtypes and
numpy's errors, through backend="eager", the compiled default backend, dynamic shapes and one
library build. Each program batches several calls, so that a dtype costs one compile."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import aot
from aot.frontend import UnsupportedError

from ._support import make

BACKENDS = ["eager", "llvm"]


def dtypes(fast: list[str], slow: list[str]) -> list:
    """The dtypes a test runs over: `slow` ones only with -m slow (each compile costs a second)."""
    return fast + [pytest.param(d, marks=pytest.mark.slow) for d in slow]


RTOL = {"float32": 2e-5, "complex64": 2e-5, "float64": 1e-12, "complex128": 1e-12}


def _flat(t):
    if isinstance(t, (tuple, list)):
        return [y for z in t for y in _flat(z)]
    return [t]


def check(got, want, rtol=None, what=""):
    """Same structure, dtypes, shapes; exact for bools and ints, else within rtol (the result dtype's
    default), nan positions included. Python bools/ints numpy returns may come back as 0-d arrays."""
    gs, ws = _flat(got), _flat(want)
    assert len(gs) == len(ws), f"{what}: {len(gs)} results, numpy {len(ws)}"
    for k, (g, w) in enumerate(zip(gs, ws)):
        where = f"{what}[{k}]"
        if isinstance(w, (bool, int)) and not isinstance(w, np.generic):
            assert np.asarray(g).item() == w, where
            continue
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, f"{where}: dtype {g.dtype}, numpy {w.dtype}"
        assert g.shape == w.shape, f"{where}: shape {g.shape}, numpy {w.shape}"
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=where)
        else:
            tol = rtol if rtol is not None else RTOL[w.dtype.name]
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True, err_msg=where)


def numpy_of(fn, *args):
    """numpy's results, on copies (np.nan_to_num(copy=False) writes into its argument)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*(np.array(a, copy=True) for a in args))


def run(fn, backend, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return aot.compile(fn, backend=backend, **kwargs)(*args)


def _data(dtype, shape=(4, 6), seed=0):
    x = make(dtype, shape, seed=seed)
    if np.dtype(dtype).kind in "fc":
        x[0, 1] = np.nan  # a NaN in some rows and columns, none in others
    return x


# --- nan-reductions ---------------------------------------------------------------------------------


def _nan_program(x):
    out = []
    for axis, keep in ((None, False), (0, False), (-1, True), ((0, 1), False)):
        out += [
            np.nansum(x, axis=axis, keepdims=keep),
            np.nanprod(x, axis=axis, keepdims=keep),
            np.nanmean(x, axis=axis, keepdims=keep),
            np.nanvar(x, axis=axis, keepdims=keep),
            np.nanstd(x, axis=axis, ddof=1, keepdims=keep),
        ]
        if x.dtype.kind != "c":
            out += [np.nanmax(x, axis=axis, keepdims=keep), np.nanmin(x, axis=axis, keepdims=keep)]
    if x.dtype.kind != "c":
        out += [np.nanargmax(x), np.nanargmin(x, axis=0), np.nanargmax(x, axis=-1, keepdims=True)]
    return tuple(out)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64", "int64", "bool", "complex128"], ["float32", "int32"]))
def test_nan_reductions(dtype, backend):
    x = _data(dtype)
    if dtype == "bool":  # numpy refuses bool variance arithmetic in places: sums and extremes only
        fn = lambda a: (np.nansum(a), np.nanmax(a, axis=0), np.nanargmin(a), np.nanmean(a, axis=1))
    else:
        fn = _nan_program
    check(run(fn, backend, x), numpy_of(fn, x), what=dtype)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_reductions_dtype_views_and_infs(backend):
    x = make("float32", (6, 8), seed=3)
    x[::3, 1] = np.nan

    def fn(a):
        v = a[::2].T  # a strided, transposed view
        return (
            np.nansum(a, axis=1, dtype=np.float64),
            np.nanmean(v, axis=0, dtype=np.float64),
            np.nanvar(v, axis=1, dtype=np.float64),
            np.nanmax(v, axis=0),
            np.nanargmin(v, axis=1),
            np.nansum(a, axis=0, initial=2.0),
            np.nanmax(a, axis=1, initial=-100.0),
        )

    check(run(fn, backend, x), numpy_of(fn, x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_all_nan_slices(backend):
    x = np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, -2.0]])
    fn = lambda a: (
        np.nanmax(a, axis=1),
        np.nanmin(a, axis=1),
        np.nanmean(a, axis=1),
        np.nanvar(a, axis=1),
        np.nanmax(a, axis=0),
        np.nansum(a, axis=1),
    )
    check(run(fn, backend, x), numpy_of(fn, x))
    for f in (lambda a: np.nanargmax(a, axis=1), lambda a: np.nanargmin(a), lambda a: np.nanargmax(a[:1])):
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            run(f, backend, x if f(np.ones((2, 3))).ndim else x[:1])
    y = np.array([[np.nan, np.nan, np.nan], [1.0, 2.0, -2.0]])
    np.testing.assert_array_equal(run(lambda a: np.nanargmax(a, axis=0), backend, y), [1, 1, 1])
    with pytest.raises(ValueError, match="fmax"):
        run(lambda a: np.nanmax(a, axis=0), backend, np.ones((0, 3)))


# --- average ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64", "int32"], ["float32", "complex128"]))
def test_average(dtype, backend):
    x = make(dtype, (3, 4), seed=1, specials=False)
    w4, w34 = np.arange(1.0, 5.0), make("float32", (3, 4), seed=2, domain="positive")

    def fn(a):
        return (
            np.average(a),
            np.average(a, axis=0),
            np.average(a, axis=1, weights=w4),
            np.average(a, weights=w34),
            np.average(a, axis=1, weights=w4, returned=True),
            np.average(a, axis=(0, 1), weights=w34, keepdims=True),
            np.average(a, returned=True),
            np.average(a, axis=0, weights=np.arange(1, 4), returned=True, keepdims=True),
        )

    check(run(fn, backend, x), numpy_of(fn, x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_average_errors(backend):
    x = np.ones((3, 4))
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        run(lambda a, w: np.average(a, axis=1, weights=w), backend, x, np.array([1.0, -1.0, 0.0, 0.0]))
    with pytest.raises(TypeError, match="Axis must be specified"):
        run(lambda a: np.average(a, weights=np.ones(4)), backend, x)
    with pytest.raises(ValueError, match="Shape of weights"):
        run(lambda a: np.average(a, axis=1, weights=np.ones(3)), backend, x)


# --- bincount ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_bincount(backend):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 9, 40)
    w = rng.standard_normal(40).astype(np.float32)
    fn = lambda a, b: (
        np.bincount(a, minlength=9),
        np.bincount(a, weights=b, minlength=12),
        np.bincount(a[::3], b[::3].astype(np.int32), minlength=10),
        np.bincount(a > 4, minlength=2),
        np.bincount(a[:0], minlength=3),
    )
    check(run(fn, backend, x, w), numpy_of(fn, x, w))
    x32 = x.astype(np.int32)
    check(run(lambda a: np.bincount(a, minlength=9), backend, x32), np.bincount(x32, minlength=9))


def test_bincount_threaded_path():
    """Many values into few bins take private per-thread histograms (codegen/graph_scatter.py)."""
    rng = np.random.default_rng(1)
    x = rng.integers(0, 20, 300_000)
    w = rng.standard_normal(300_000)
    f = aot.compile(lambda a, b: (np.bincount(a, minlength=20), np.bincount(a, b, minlength=20)))
    got = f(x, w)
    check(got, (np.bincount(x, minlength=20), np.bincount(x, w, minlength=20)), rtol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bincount_errors(backend):
    f = lambda a: np.bincount(a, minlength=5)
    with pytest.raises(ValueError, match="no negative elements"):
        run(f, backend, np.array([1, -1, 2]))
    with pytest.raises(ValueError, match="minlength"):
        run(f, backend, np.array([1, 5]))
    with pytest.raises(UnsupportedError, match="minlength"):
        run(lambda a: np.bincount(a), backend, np.array([1, 2]))
    with pytest.raises(TypeError):
        run(f, backend, np.array([1.0, 2.0]))
    with pytest.raises(TypeError):
        run(lambda a: np.bincount(a, np.ones(2, complex), minlength=3), backend, np.array([1, 2]))
    with pytest.raises(ValueError, match="same length"):
        run(lambda a: np.bincount(a, np.ones(3), minlength=3), backend, np.array([1, 2]))


# --- histograms -------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64"], ["float32", "int64"]))
def test_histogram_equal_bins(dtype, backend):
    x = make(dtype, (50,), seed=4, specials=False) * (1 if dtype == "int64" else 2)
    w32, wc = make("float32", (50,), seed=5), make("complex128", (50,), seed=6, specials=False)

    def fn(a):
        return (
            np.histogram(a),
            np.histogram(a, bins=7, range=(-2, 2.5)),
            np.histogram(a, bins=4, range=(-1.0, 1.0), weights=w32),
            np.histogram(a, bins=5, weights=wc),
            np.histogram(a, bins=6, density=True),
            np.histogram(a, bins=3, range=(0, 2), weights=np.ones(50, np.int32), density=True),
            np.histogram_bin_edges(a, bins=4),
        )

    check(run(fn, backend, x), numpy_of(fn, x), rtol=RTOL["float32"] if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_histogram_edges_nan_and_empty(backend):
    x = make("float64", (40,), seed=7)  # nan and infinities: outside every given range
    fn = lambda a: (
        np.histogram(a, bins=5, range=(-1, 1)),
        np.histogram(a, bins=[-3, -1, 0, 0.5, 3]),
        np.histogram(a, bins=np.array([0, 1, 1, 2]), weights=np.arange(40.0)),
        np.histogram(a[:0]),
        np.histogram(a[:0], bins=3, range=(2, 2)),
    )
    check(run(fn, backend, x), numpy_of(fn, x))
    with pytest.raises(ValueError, match="range of the data is not finite"):
        run(lambda a: np.histogram(a, bins=3), backend, x)
    with pytest.raises(ValueError, match="monotonically"):
        run(lambda a: np.histogram(a, bins=[0, 2, 1]), backend, x)
    with pytest.raises(ValueError, match="max must be larger"):
        run(lambda a: np.histogram(a, bins=3, range=(1, 0)), backend, x)
    with pytest.raises(UnsupportedError, match="data-dependent number of bins"):
        run(lambda a: np.histogram(a, bins="auto"), backend, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_histogram2d_and_dd(backend):
    x, y = make("float64", (30,), seed=8, specials=False), make("float32", (30,), seed=9, specials=False)
    w = make("float64", (30,), seed=10, domain="positive")

    def fn(a, b):
        return (
            np.histogram2d(a, b),
            np.histogram2d(a, b, bins=[3, 4], range=[(-2, 2), (-1, 3)], weights=w),
            np.histogram2d(a, b, bins=[2, [-3.0, 0.0, 1.0, 3.0]], density=True),
            np.histogramdd(np.stack([a, a * 2], axis=1), bins=(2, 3)),
        )

    check(run(fn, backend, x, y), numpy_of(fn, x, y), rtol=2e-6)


# --- tile, repeat, grids ------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64"], ["int32", "bool", "complex64"]))
def test_tile_repeat_meshgrid_kron(dtype, backend):
    x = make(dtype, (3, 4), seed=11)

    def fn(a):
        v = a[:, ::2]
        return (
            np.tile(a, 2),
            np.tile(v, (2, 1, 3)),
            np.tile(a[0], (3, 1)),
            np.tile(a, (1, 0)),
            np.repeat(a, 2),
            np.repeat(v, 3, axis=1),
            np.repeat(a, [1, 0, 2], axis=0),
            np.repeat(a, [2], axis=-1),
            a.repeat(2, axis=0),
            np.meshgrid(a[0], a[1, :3]),
            np.meshgrid(a[0], a[1, :2], a[2, :1], indexing="ij"),
            np.meshgrid(a[0], a[1, :3], sparse=True),
            np.kron(a, v),
            np.kron(a[0], a[1]),
            np.kron(a[:2, :2], 3),
            np.tril(a[0]),
            np.triu(a, -1),
            np.tri(3, 5, 1, dtype=np.int32),
        )

    check(run(fn, backend, x), numpy_of(fn, x))


# --- diagonals, trace, cross ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64", "bool"], ["int32", "complex128"]))
def test_diagonals_and_trace(dtype, backend):
    x = make(dtype, (4, 5, 3), seed=12)

    def fn(a):
        m = a[:, :, 0]
        out = (
            np.diagonal(m),
            np.diagonal(m, 2),
            np.diagonal(m, -3),
            np.diagonal(a, 1, 0, 2),
            np.diagonal(a, -1, 2, 1),
            m.T.diagonal(1),
            np.diag(m, -1),
            np.diag(m[0]),
            np.diag(m[1], 2),
            np.diag(m[2], -1),
            np.diagflat(m[:2, :2]),
            np.diagflat(m[0], -2),
            np.diagonal(m, 7),
        )
        if dtype != "bool":
            out += (np.trace(m), np.trace(a, 1, 0, 2), np.trace(m, -1, dtype=np.float64), m.trace())
        return out

    check(run(fn, backend, x), numpy_of(fn, x))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64"], ["int64", "complex64"]))
def test_cross(dtype, backend):
    a, b = make(dtype, (4, 3), seed=13, specials=False), make(dtype, (4, 3), seed=14, specials=False)

    def fn(p, q):
        return (
            np.cross(p, q),
            np.cross(p[:, :2], q[:, :2]),
            np.cross(p[:, :2], q),
            np.cross(p, q[:, 1:]),
            np.cross(p.T, q.T, axisa=0, axisb=0, axisc=0),
            np.cross(p[0], q),
            np.cross(p.T, q.T, axis=0),
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        check(run(fn, backend, a, b), numpy_of(fn, a, b))
    with pytest.raises(ValueError, match="incompatible dimensions"):
        run(lambda p: np.cross(p, p), backend, np.ones((2, 4)))


# --- convolve, correlate, interp --------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64", "int32"], ["float32", "int64", "complex128", "bool"]))
def test_convolve_correlate(dtype, backend):
    a, v = make(dtype, (37,), seed=15, specials=False), make(dtype, (5,), seed=16, specials=False)

    def fn(p, q):
        return tuple(
            f(x, y, mode)
            for f in (np.convolve, np.correlate)
            for x, y in ((p, q), (q, p), (p[::2], q[:4]))
            for mode in ("full", "same", "valid")
        )

    check(run(fn, backend, a, v), numpy_of(fn, a, v), rtol=1e-4 if dtype == "float32" else 1e-11)


@pytest.mark.parametrize("backend", BACKENDS)
def test_convolve_specials_and_errors(backend):
    a = np.array([np.inf, 1.0, 2.0, -np.inf, 3.0, np.nan, 4.0, 5.0, 6.0, np.inf])
    v = np.array([1.0, 0.0, 2.0])
    fn = lambda p, q: (np.convolve(p, q), np.correlate(p, q, "same"), np.convolve(p[:1], q, "same"))
    check(run(fn, backend, a, v), numpy_of(fn, a, v))
    with pytest.raises(ValueError, match="cannot be empty"):
        run(lambda p: np.convolve(p[:0], p), backend, a)
    with pytest.raises(ValueError, match="mode"):
        run(lambda p: np.convolve(p, p, mode=5), backend, a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_interp(backend):
    x = np.concatenate([make("float64", (20,), seed=17) * 2, [-1.0, 0.5, 2.0, 3.0, 4.0]])
    xp, fp = np.array([-1.0, 0.0, 0.5, 2.0, 2.0, 3.0]), np.array([1.0, 2.0, np.inf, 5.0, 6.0, -1.0])
    fc = np.array([1 + 1j, 2j, 3.0, 4 - 1j, 5.0, 6j])

    def fn(p):
        return (
            np.interp(p, xp, fp),
            np.interp(p, xp, fc, left=7j, right=-1.0),
            np.interp(p, [0.0], [3.0]),
            np.interp(p.reshape(5, 5), xp, fp, left=-5.0),
            np.interp(p[3], xp, fp),
            np.interp(p, [0, 1, 2, 3], [0, 1, 4, 9], period=2.5),
            np.interp(p.astype(np.int32), xp, fp),
        )

    check(run(fn, backend, x), numpy_of(fn, x))
    with pytest.raises(ValueError, match="same length"):
        run(lambda p: np.interp(p, [0.0, 1.0], [1.0]), backend, x)
    with pytest.raises(ValueError, match="period"):
        run(lambda p: np.interp(p, [0.0, 1.0], [1.0, 2.0], period=0), backend, x)


# --- special values, comparisons, rounding -----------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "dtype", dtypes(["float64", "complex64", "int32"], ["float32", "complex128", "bool"])
)
def test_nan_to_num_and_classes(dtype, backend):
    x = make(dtype, (4, 5), seed=18, complex_inf=True)

    def fn(a):
        out = (
            np.nan_to_num(a),
            np.nan_to_num(a, nan=-1.0, posinf=5.0, neginf=-5.0),
            np.iscomplex(a),
            np.isreal(a),
        )
        if dtype[0] != "c":
            out += (np.isposinf(a), np.isneginf(a))
        return out + (np.nan_to_num(a.T, copy=False),)  # last: numpy writes into a

    check(run(fn, backend, x), numpy_of(fn, x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_allclose_array_equal(backend):
    x = make("float64", (3, 4), seed=19)

    def fn(a, b):
        return (
            np.allclose(a, b),
            np.allclose(a, b, equal_nan=True),
            np.allclose(a, a + 1e-9),
            np.array_equal(a, b),
            np.array_equal(a, b, equal_nan=True),
            np.array_equal(a, a[:2]),
            np.array_equiv(a, a[0]),
            np.array_equiv(a[0], b[:1]),
            np.array_equiv(a, a[:, :2]),
            np.array_equal(a.astype(np.int32), b > 0),
        )

    for b in (x.copy(), np.where(np.isnan(x), 0.0, x), x + 1e-3):
        check(run(fn, backend, x, b), numpy_of(fn, x, b))


@pytest.mark.parametrize("backend", BACKENDS)
def test_round_decimals(backend):
    f = np.array([2.675, 1.005, -0.5, 0.5, 1.5, 2.5, -2.5, 1234.5678, np.nan, np.inf, 1e300])
    i = np.array([15, 25, -15, -25, 149, 2**62 + 1], np.int64)

    def fn(a, b):
        return (
            np.round(a, 2),
            np.round(a, -2),
            np.around(a.astype(np.float32), 1),
            np.round(a + 1j * a, 1),
            np.round(b, -1),
            np.round(b.astype(np.int32), -2),
            np.round(b, 3),
            a.round(1),
        )

    check(run(fn, backend, f, i), numpy_of(fn, f, i), rtol=0)


# --- dynamic shapes and the library path ------------------------------------------------------------------


def _everyday(a, v, k):
    return (
        np.nansum(a, axis=0),
        np.nanargmin(a),
        np.nanvar(a, ddof=1),
        np.average(a, weights=a * 0 + 2.0),
        np.bincount(k, minlength=8),
        np.histogram(a, bins=4, range=(-2, 2)),
        np.convolve(a, v),
        np.correlate(a, v, "same"),
        np.diag(a[:3]),
        np.trace(np.outer(a, v)),
        np.repeat(a, 2),
        np.cross(a[:3], v[:3]),
    )


def test_dynamic_shapes():
    f = aot.compile(_everyday, dynamic=True)
    rng = np.random.default_rng(20)
    for n in (9, 12, 17):
        a = rng.standard_normal(n)
        a[n // 2] = np.nan
        v, k = rng.standard_normal(4), rng.integers(0, 8, n)
        check(f(a, v, k), numpy_of(_everyday, a, v, k), rtol=1e-12)
    assert f.cache_info()["compiles"] <= 2


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    rng = np.random.default_rng(21)
    a = rng.standard_normal(10)
    a[3] = np.nan
    v, k = rng.standard_normal(4), rng.integers(0, 8, 10)
    lib = aot.aot_load(aot.aot_compile(_everyday, (a, v, k), path=tmp_path / "everyday.so"))
    check(lib(a, v, k), numpy_of(_everyday, a, v, k), rtol=1e-12)
    bad = k.copy()
    bad[0] = 9
    with pytest.raises(Exception, match="minlength"):
        lib(a, v, bad)
