"""Sorting and searching against numpy through the compiled (default), eager and library paths:
np.sort / argsort / partition / argpartition / sort_complex / searchsorted / take_along_axis and
median / percentile / quantile with their nan forms.

Sorts are compared with numpy's stable sort (every kind gives that result, a valid answer for each),
to the bit for floats: NaNs last in input order with their payloads, -0.0 and 0.0 in input order.
Partitions are the partition rows' stable three-way partitions (aot/ops/selection_ops.py; complex
lanes: full sorts), checked against numpy in test_numpy_select.py. Quantiles must equal numpy
exactly (same formulas, same dtypes).
"""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import aot
from aot.frontend.operands import UnsupportedError
from aot.ops.selection_ops import partition_order

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]
REAL = ["int32", "int64", "float32", "float64"]


def _data(dtype: str, shape: tuple, seed: int = 0) -> np.ndarray:
    """Few distinct values (ties), and for floats NaNs (one negative, one with a payload), infinities
    and both zeros; complex parts take NaNs too."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("int"):
        return rng.integers(-5, 5, shape).astype(dtype)
    real = np.float32 if dtype in ("float32", "complex64") else np.float64
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.0, -0.0], real)
    payload = np.array([0x7FF8000000000123], np.int64).view(np.float64).astype(real)  # a NaN
    specials = np.concatenate([specials, payload])

    def part(k: int) -> np.ndarray:
        p = (np.random.default_rng(seed + k).integers(-6, 6, shape) * 0.5).astype(real)
        flat = p.reshape(-1)
        if flat.size >= 3 * specials.size:
            where = np.random.default_rng(seed + k + 9).choice(flat.size, specials.size, replace=False)
            flat[where] = specials
        return p

    if dtype.startswith("complex"):
        out = np.empty(shape, dtype)
        out.real, out.imag = part(1), part(2)
        return out
    return part(1)


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "c":
        a = a.view(a.real.dtype)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def _same(got, want, what: str = "") -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, numpy {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, numpy {want.shape}"
    np.testing.assert_array_equal(got, want, err_msg=what)


def _same_bits(got, want, what: str = "") -> None:
    _same(got, want, what)
    np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=f"{what} (bits)")


def _stable(fn, *a, **k):
    return fn(*a, **k, kind="stable")


# --- sort, argsort, partition -----------------------------------------------------------------------
def _sort_family(x, y):
    return (np.sort(x, kind="quicksort"), np.sort(x, axis=0), np.argsort(x), np.argsort(x, axis=None),
            np.partition(x, 3), np.argpartition(x, [0, -1], axis=0), np.sort(y, stable=True),
            y.argsort(axis=0), np.argsort(y, kind="stable"))


def _partition(x, kth, axis=-1, arg=False):
    """The partition rows' result (complex: the stable sort)."""
    if x.dtype.kind == "c":
        return _stable(np.argsort if arg else np.sort, x, axis=axis)
    order = partition_order(x, kth, axis % x.ndim)
    return order if arg else np.take_along_axis(x, order, axis=axis)


def _sort_family_numpy(x, y):
    return (_stable(np.sort, x), _stable(np.sort, x, axis=0), _stable(np.argsort, x),
            _stable(np.argsort, x, axis=None), _partition(x, (3,)), _partition(x, (0, -1), 0, True),
            _stable(np.sort, y), _stable(np.argsort, y, axis=0), _stable(np.argsort, y))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_family(dtype):
    """Rows of 150 (radix), 40 (rank counts) and 5 / 3 (insertion) elements, every dtype."""
    x, y = _data(dtype, (5, 150)), _data(dtype, (3, 40), seed=1)
    got = aot.compile(_sort_family)(x, y)
    for k, (g, w) in enumerate(zip(got, _sort_family_numpy(x, y), strict=True)):
        _same_bits(g, w, f"{dtype} output {k}")


@pytest.mark.parametrize("dtype", ["float64", "complex128", "int32"])
def test_eager_backend(dtype):
    x, y = _data(dtype, (4, 30)), _data(dtype, (3, 20), seed=2)
    got = aot.compile(_sort_family, backend="eager")(x, y)
    for k, (g, w) in enumerate(zip(got, _sort_family_numpy(x, y), strict=True)):
        _same_bits(g, w, f"eager {dtype} output {k}")


def test_nan_and_signed_zero_order():
    """NaNs (with payloads and signs) sort last in input order, -0.0 and 0.0 stay in input order."""
    nan_a = np.array([0x7FF8000000000001], np.int64).view(np.float64)[0]
    nan_b = -np.array([0x7FF800000000BEEF], np.int64).view(np.float64)[0]
    base = np.array([nan_a, 0.0, -0.0, 1.0, -np.inf, nan_b, -0.0, np.inf, 0.0, -1.0, np.nan, -0.0])
    x = np.tile(base, 25)  # 300: the radix path
    f = aot.compile(lambda a, b: (np.sort(a), np.argsort(a), np.sort(b), np.argsort(b)))
    for g, w in zip(f(x, base), (_stable(np.sort, x), _stable(np.argsort, x), _stable(np.sort, base),
                                  _stable(np.argsort, base))):
        _same_bits(g, w, "float64 specials")
    xs = x.astype(np.float32)
    for g, w in zip(f(xs, xs[:40]), (_stable(np.sort, xs), _stable(np.argsort, xs), _stable(np.sort, xs[:40]),
                                     _stable(np.argsort, xs[:40]))):
        _same_bits(g, w, "float32 specials")


def test_complex_nan_classes():
    """numpy's complex order: R+Rj < R+nanj < nan+Rj < nan+nanj, each class by its non-NaN part."""
    n = np.nan
    z = np.array([complex(n, 2), complex(1, n), complex(2, -1), complex(n, n), complex(-1, n), complex(2, -3),
                  complex(n, -5), complex(-0.0, 1), complex(0.0, 1), complex(n, n), complex(1, 1)])
    x = np.tile(z, 20)
    f = aot.compile(lambda a, b: (np.sort(a), np.argsort(a), np.argsort(b), np.sort_complex(b)))
    want = (_stable(np.sort, x), _stable(np.argsort, x), _stable(np.argsort, z), np.sort_complex(z))
    for g, w in zip(f(x, z), want):
        _same_bits(g, w, "complex order")


@pytest.mark.parametrize("dtype", ["int32", "float32", "bool"])
def test_sort_complex_dtypes(dtype):
    x = _data(dtype, (3, 7))
    _same(aot.compile(np.sort_complex)(x), np.sort_complex(x), dtype)


@pytest.mark.parametrize("shape", [(0,), (1,), (0, 3), (3, 0), (1, 1)])
def test_empty_and_one_element(shape):
    x = _data("float64", shape)

    def fn(a):
        return np.sort(a, axis=0), np.argsort(a), np.sort(a, axis=None), np.median(a, axis=0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = (_stable(np.sort, x, axis=0), _stable(np.argsort, x), _stable(np.sort, x, axis=None),
                np.median(x, axis=0))
        for g, w in zip(aot.compile(fn)(x), want):
            _same(g, w, str(shape))


def test_non_contiguous():
    base = _data("float64", (6, 150), seed=3)
    views = {"stepped and reversed": base[::2, ::-3], "transposed": base.T}

    def fn(a):
        return (np.sort(a, axis=0), np.argsort(a), np.median(a, axis=1),
                np.take_along_axis(a, np.argsort(a, axis=0), axis=0))

    f = aot.compile(fn)
    for name, v in views.items():
        with np.errstate(invalid="ignore"):
            want = (_stable(np.sort, v, axis=0), _stable(np.argsort, v), np.median(v, axis=1),
                    np.take_along_axis(v, _stable(np.argsort, v, axis=0), 0))
            for g, w in zip(f(v), want):
                _same_bits(g, w, name)
    b = np.broadcast_to(base[0], (3, 150))  # stride 0
    _same_bits(aot.compile(lambda a: np.argsort(a, axis=0))(b), _stable(np.argsort, b, axis=0), "broadcast")


def test_parallel_long_rows():
    """Rows long enough for the parallel radix sort (built for 4 threads, whatever this machine has)."""
    x = _data("float64", (300_001,), seed=4)
    f = aot.compile(lambda a, b: (np.sort(a), np.argsort(a), np.sort(b)), options={"num_threads": 4})
    xi = np.random.default_rng(5).integers(-1000, 1000, 270_000).astype(np.int32)
    got = f(x, xi)
    for g, w in zip(got, (_stable(np.sort, x), _stable(np.argsort, x), _stable(np.sort, xi))):
        _same_bits(g, w, "parallel")


def test_dynamic_shapes():
    def fn(x, v):
        s = np.sort(x[0])
        return (np.argsort(x, axis=1, kind="stable"), np.median(x, axis=1), np.median(x),
                np.quantile(x, [0.25, 0.5], axis=-1), np.percentile(x, 30, axis=1, method="nearest"),
                np.nanmedian(x, axis=1), np.searchsorted(s, v, side="right"))

    f = aot.compile(fn, dynamic=True)
    rng = np.random.default_rng(6)
    for n in (20, 37, 200):
        x = np.round(rng.standard_normal((3, n)), 1)
        x[1, :3] = np.nan
        v = rng.standard_normal(5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for k, (g, w) in enumerate(zip(f(x, v), fn(x, v), strict=True)):
                _same(g, w, f"n={n} output {k}")
    assert f.cache_info()["compiles"] <= 2


def test_lexsort():
    rng = np.random.default_rng(11)
    a, b = rng.integers(0, 3, (2, 60)), np.round(rng.standard_normal(60), 1)
    b[::7] = np.nan

    def fn(a, b):
        return np.lexsort((a[0], a[1], b)), np.lexsort(a), np.lexsort(a.reshape(2, 6, 10), axis=0)

    for k, (g, w) in enumerate(zip(aot.compile(fn)(a, b), fn(a, b), strict=True)):
        _same(g, w, f"output {k}")
    with pytest.raises(ValueError):
        aot.compile(lambda a: np.lexsort((a, a[:3])))(b)


# --- searchsorted, take_along_axis -------------------------------------------------------------------
def test_searchsorted():
    a = np.sort(np.array([3.0, -1.0, np.nan, 2.0, 2.0, -0.0, 0.0, np.inf, 5.0, 2.0]))
    v = np.array([[2.0, np.nan, -np.inf], [0.0, -0.0, 7.0]])
    ai = np.array([1, 3, 3, 5, 9], np.int32)
    order = np.argsort(np.array([4, 0, 3, 1, 2]))
    z = np.sort(np.array([1 + 1j, complex(np.nan, 0), 1 - 1j, complex(1, np.nan), 0j]))

    def fn(a, v, ai, order, z):
        return (np.searchsorted(a, v), np.searchsorted(a, v, side="right"), np.searchsorted(ai, 3.5),
                np.searchsorted(ai, v), ai.searchsorted(np.int64(3), side="right"),
                np.searchsorted(np.array([4, 0, 3, 1, 2]), [2, 5], sorter=order), np.searchsorted(z, z),
                np.searchsorted(a, 2.0))

    args = (a, v, ai, order, z)
    for backend in ("llvm", "eager"):
        for k, (g, w) in enumerate(zip(aot.compile(fn, backend=backend)(*args), fn(*args), strict=True)):
            _same(g, w, f"{backend} output {k}")


def test_take_along_axis():
    x = _data("float64", (4, 6), seed=7)
    idx = np.array([[0, -1, 2]])  # broadcast along axis 0, a negative index

    def fn(x, idx):
        return (np.take_along_axis(x, idx, axis=1), np.take_along_axis(x, np.argsort(x, axis=0), axis=0),
                np.take_along_axis(x, np.array([5, 0, -2]), axis=None),
                np.take_along_axis(x, np.argmax(x, axis=1, keepdims=True), axis=-1))

    for k, (g, w) in enumerate(zip(aot.compile(fn)(x, idx), fn(x, idx), strict=True)):
        _same(g, w, f"output {k}")
    with pytest.raises(IndexError):
        aot.compile(lambda a, i: np.take_along_axis(a, i, axis=1))(x, np.array([[6]]))
    with pytest.raises(IndexError):
        aot.compile(lambda a: np.take_along_axis(a, np.zeros((4, 1)), axis=1))(x)
    with pytest.raises(ValueError):
        aot.compile(lambda a: np.take_along_axis(a, np.zeros(3, int), axis=1))(x)


# --- median, percentile, quantile ------------------------------------------------------------------
ALL_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
               "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher",
               "midpoint", "nearest")


def _quantiles(methods, nan_methods=()):
    def fn(x):
        out = [np.median(x), np.median(x, axis=0), np.median(x, axis=(0, 1), keepdims=True),
               np.nanmedian(x, axis=1), np.percentile(x, [10, 90], axis=0),
               np.quantile(x, np.float32([0.2, 0.7]), axis=1), np.quantile(x, 1),
               np.nanquantile(x, [0.0, 0.5, 1.0], axis=1), np.nanpercentile(x, 35.0, axis=0, keepdims=True)]
        out += [np.quantile(x, [0.1, 0.5, 0.85], axis=1, method=m) for m in methods]
        out += [np.nanquantile(x, 0.4, axis=0, method=m) for m in nan_methods]
        return tuple(out)

    return fn


def _check_quantiles(dtype, fn):
    """Lanes with NaNs (the plain forms give NaN) and one all-NaN lane (the nan forms give NaN)."""
    x = _data(dtype, (5, 11), seed=8)
    if dtype.startswith("float"):
        x[2] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = fn(x)
        got = aot.compile(fn)(x)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        _same(g, w, f"{dtype} output {k}")


@pytest.mark.parametrize("dtype, methods", [("float64", ("lower", "midpoint", "inverted_cdf")),
                                            ("float32", ("nearest",)), ("int32", ("hazen", "higher")),
                                            ("int64", ())])
def test_median_quantile(dtype, methods):
    _check_quantiles(dtype, _quantiles(methods, methods[:1]))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_every_quantile_method(dtype):
    _check_quantiles(dtype, _quantiles(ALL_METHODS, ALL_METHODS))


def test_median_quantile_bool():
    x = _data("bool", (5, 11))

    def fn(a):
        return np.median(a, axis=0), np.quantile(a, 0.5, method="lower"), np.nanmedian(a)

    for k, (g, w) in enumerate(zip(aot.compile(fn)(x), fn(x), strict=True)):
        _same(g, w, f"bool output {k}")
    with pytest.raises(TypeError):  # numpy: boolean subtract
        aot.compile(lambda a: np.quantile(a, 0.5))(x)


def test_quantile_eager_and_long_lanes():
    """The eager backend, and nanmedian's two numpy paths (np.ma.median below 600 elements)."""
    x = _data("float64", (2, 700), seed=9)
    y = np.array([[1e308, 1.7e308, np.nan], [1.0, 2.0, 3.0]])  # (x + x) / 2 overflows in np.ma.median

    def fn(a, b):
        return np.nanmedian(a, axis=1), np.nanmedian(b, axis=1), np.quantile(a, 0.3, axis=1), np.median(b)

    for backend in ("llvm", "eager"):
        with np.errstate(over="ignore"):
            for k, (g, w) in enumerate(zip(aot.compile(fn, backend=backend)(x, y), fn(x, y), strict=True)):
                _same(g, w, f"{backend} output {k}")


# --- refusals and argument errors ------------------------------------------------------------------
def test_in_place_methods():  # numpy's a.sort() and friends update a (aot/frontend/assignment.py)
    def f(a):
        b = a[::-1].copy()
        b.sort()
        c = a[::-1].copy()
        c.partition(2)
        np.put_along_axis(c, np.array([0]), 9.0, axis=0)
        return b, c[2]
    x = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    got, want = aot.compile(f, fullgraph=True)(x), f(x)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def test_refused():
    x = np.arange(5.0)
    with pytest.raises(UnsupportedError, match="order"):
        aot.compile(lambda a: np.sort(a, order="f"))(x)
    with pytest.raises(UnsupportedError, match="traced q"):
        aot.compile(lambda a, q: np.quantile(a, q))(x, np.array(0.5))
    with pytest.raises(UnsupportedError, match="weights"):
        aot.compile(lambda a: np.quantile(a, 0.5, method="inverted_cdf", weights=np.ones(5)))(x)


ERRORS = [
    (lambda a: np.sort(a, kind="bogus"), ValueError),
    (lambda a: np.sort(a, kind=1), TypeError),
    (lambda a: np.sort(a, kind="stable", stable=True), ValueError),
    (lambda a: np.sort(a, axis=2), np.exceptions.AxisError),
    (lambda a: np.sort(a[0, 0]), np.exceptions.AxisError),
    (lambda a: np.argsort(a[0, 0], axis=1), np.exceptions.AxisError),
    (lambda a: np.partition(a, 4), ValueError),
    (lambda a: np.partition(a, -5), ValueError),
    (lambda a: np.partition(a, 1.0), TypeError),
    (lambda a: np.argpartition(a, True), ValueError),
    (lambda a: np.partition(a, 1, kind="quick"), ValueError),
    (lambda a: np.searchsorted(a, 1.0), ValueError),
    (lambda a: np.searchsorted(a[0], 1.0, side="middle"), ValueError),
    (lambda a: np.searchsorted(a[0], 1.0, sorter=np.array([0, 1])), ValueError),
    (lambda a: np.percentile(a, 101), ValueError),
    (lambda a: np.quantile(a, [-0.1]), ValueError),
    (lambda a: np.quantile(a, np.full((1, 1, 1), 0.5)), ValueError),
    (lambda a: np.quantile(a.astype(complex), 0.5), TypeError),
    (lambda a: np.quantile(a, 0.5, method="bogus"), ValueError),
    (lambda a: np.quantile(a[:, :0], 0.5, axis=1), IndexError),
    (lambda a: np.median(a, axis=(0, 0)), ValueError),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_argument_errors_match_numpy(k):
    fn, exc = ERRORS[k]
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(exc):
        fn(x)  # numpy's own error
    with pytest.raises(exc):
        aot.compile(fn)(x)


# --- a library -------------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    def fn(x, v, z):
        return (np.sort(x), np.argsort(x, axis=0), np.median(x, axis=1),
                np.nanquantile(x, [0.2, 0.8], axis=1), np.searchsorted(np.sort(x[0]), v),
                np.take_along_axis(x, np.argsort(x, axis=1), axis=1), np.sort(z), np.partition(v, 1))

    rng = np.random.default_rng(10)
    x, v, z = _data("float64", (3, 50)), rng.standard_normal(6), _data("complex64", (40,))
    path = aot.aot_compile(fn, (x, v, z), dynamic_shapes={"x": {1: aot.Dim("N", min=2, max=4096)}},
                           path=tmp_path / "sorting.so")
    lib = aot.aot_load(path)
    for n in (50, 9, 300):
        x = _data("float64", (3, n), seed=n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = (_stable(np.sort, x), _stable(np.argsort, x, axis=0), np.median(x, axis=1),
                    np.nanquantile(x, [0.2, 0.8], axis=1), np.searchsorted(_stable(np.sort, x[0]), v),
                    np.take_along_axis(x, _stable(np.argsort, x, axis=1), axis=1), _stable(np.sort, z),
                    _partition(v, (1,)))
        for k, (g, w) in enumerate(zip(lib(x, v, z), want, strict=True)):
            _same_bits(g, w, f"library n={n} output {k}")
