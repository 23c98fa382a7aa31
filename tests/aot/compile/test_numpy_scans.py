"""Scans against numpy: np.cumsum, np.cumprod (and the ndarray methods), np.nancumsum, np.nancumprod,
np.cumulative_sum/prod, np.diff, ufunc.accumulate of every binary ufunc numpy allows it on, and
ufunc.reduce (routed to the reduction rows, or the last element of the fold), through the eager
backend, compiled code (static and dynamic shapes, threaded paths) and one shared library.

numpy's accumulate is a sequential fold, and so is aot's: float sums match numpy bit for bit
(assert_array_equal), whatever the thread count; only chained transcendentals get a tolerance.
"""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import aot

from ._support import SUPPORTED, assert_same, make

DTYPES = ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
BACKENDS = ("eager", "llvm")
# folds of these round in libm, and their errors compound along the axis
TRANSCENDENTAL = {np.power, np.float_power, np.arctan2, np.hypot, np.logaddexp, np.logaddexp2}
RTOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-11, "complex128": 1e-11}
BINARY = (np.add, np.subtract, np.multiply, np.divide, np.floor_divide, np.remainder, np.fmod, np.power,
          np.float_power, np.maximum, np.minimum, np.fmax, np.fmin, np.logical_and, np.logical_or,
          np.logical_xor, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift,
          np.arctan2, np.hypot, np.logaddexp, np.logaddexp2, np.copysign, np.nextafter, np.heaviside,
          np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)


def quiet(fn, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def run(fn, *args, backend="llvm", **options):
    """fn compiled; fullgraph: no eager fallback, which would hide a missing translation."""
    return quiet(aot.compile(fn, backend=backend, fullgraph=True, **options), *args)


def check_all(got, want, rtols=None, what=""):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert_same(g, w, None if rtols is None else rtols[k], what=f"{what} #{k}")


def _complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


# --- cumsum / cumprod / nancum* ------------------------------------------------------------------------

def _cumulative(x):
    return (np.cumsum(x), np.cumsum(x, axis=0), np.cumsum(x, axis=-1), np.cumprod(x, axis=1), x.cumsum(0),
            x.cumprod(), np.nancumsum(x, axis=0), np.nancumprod(x, -1), np.cumsum(x.T, axis=1),
            np.cumsum(x.T),
            np.cumsum(x[::2, ::-3], axis=0), np.cumsum(x, axis=1, dtype=np.float64),
            np.cumprod(x, axis=0, dtype=np.complex128), np.cumsum(x, dtype=bool), np.cumprod(x[0]),
            np.cumulative_sum(x, axis=0), np.cumulative_prod(x[1], include_initial=True))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cumsum_cumprod(dtype, backend):
    x = make(dtype, (6, 5), seed=1, domain="any" if np.dtype(dtype).kind != "i" else "small")
    want = quiet(_cumulative, x)
    got = run(_cumulative, x, backend=backend)
    # complex products round in a formula numpy may order differently (sums and real products: exact)
    products = (3, 5, 7, 14, 16)
    rtols = [RTOL.get(dtype) if _complex(dtype) and k in products else None for k in range(len(want))]
    rtols[12] = RTOL["complex128"]  # cumprod(dtype=complex128)
    check_all(got, want, rtols, f"{backend} {dtype}")


def test_cumsum_dtype_rules():
    """Small ints and bools accumulate in the platform int; dtype= wins; 0-d arrays scan as 1-d."""
    for dt, acc in [(np.bool_, np.int64), (np.int32, np.int64), (np.float32, np.float32), (np.complex64,
                                                                                           np.complex64)]:
        x = np.ones((2, 3), dt)
        fns = (np.cumsum, np.cumprod, np.add.accumulate, np.multiply.accumulate)
        for fn, got in zip(fns, run(lambda a: tuple(fn(a) for fn in fns), x), strict=True):
            assert got.dtype == fn(x).dtype == acc
    x = np.arange(6, dtype=np.int64)
    got = run(lambda a: (np.cumsum(a, dtype=np.int32), np.cumsum(a[2]), np.cumsum(a[2], axis=0)), x)
    check_all(got, (np.cumsum(x, dtype=np.int32), np.cumsum(x[2]), np.cumsum(x[2], axis=0)))


@pytest.mark.parametrize("shape", [(0,), (1,), (0, 3), (3, 0), (1, 1)])
def test_empty_and_one_element(shape):
    x = make("float64", shape, seed=2)

    def fn(a):
        return (np.cumsum(a, axis=-1), np.cumprod(a, axis=0), np.subtract.accumulate(a, axis=-1),
                np.fmax.accumulate(a), np.maximum.accumulate(a, axis=0), np.diff(a, axis=-1), np.cumsum(a))

    check_all(run(fn, x), quiet(fn, x), what=str(shape))


def test_nans_and_infinities():
    x = np.array([[1.0, np.nan, 2.0, np.inf, -np.inf, 3.0, np.nan],
                  [np.nan, np.nan, -0.0, 0.0, 5.0, np.nan, -1.0]])

    def fn(a):
        return (np.nancumsum(a, axis=1), np.nancumprod(a, axis=1), np.cumsum(a, axis=1), np.nancumsum(a),
                np.fmax.accumulate(a, axis=1), np.fmin.accumulate(a, axis=1),
                np.maximum.accumulate(a, axis=1),
                np.minimum.accumulate(a, axis=0), np.fmax.reduce(a, axis=1), np.fmin.reduce(a, axis=None))

    check_all(run(fn, x), quiet(fn, x))
    z = np.array([complex(np.nan, 1), 1 + 2j, complex(2, np.nan), 3 - 1j, complex(np.nan, np.nan)])
    zf = (lambda a: (np.nancumsum(a), np.fmax.accumulate(a), np.maximum.accumulate(a), np.fmin.accumulate(a)))
    check_all(run(zf, z), quiet(zf, z))


# --- ufunc.accumulate ----------------------------------------------------------------------------------

def _accepts(u: np.ufunc, dtype) -> bool:
    """numpy has u.accumulate for `dtype` operands with a result dtype aot holds."""
    try:
        return quiet(u.accumulate, np.ones(2, dtype)).dtype in SUPPORTED
    except (TypeError, ValueError):
        return False


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64", "complex128"])
def test_ufunc_accumulate(dtype, backend):
    ops = [u for u in BINARY if _accepts(u, dtype)]
    x = make(dtype, (5, 6), seed=3, domain="small" if np.dtype(dtype).kind == "i" else "any")

    def fn(a):
        return tuple(u.accumulate(a, axis=k % 2) for k, u in enumerate(ops))

    want = quiet(fn, x)
    rounded = TRANSCENDENTAL | ({np.multiply, np.divide} if _complex(dtype) else set())
    rtols = [RTOL.get(w.dtype.name) if u in rounded else None for u, w in zip(ops, want, strict=True)]
    check_all(run(fn, x, backend=backend), want, rtols, f"{backend} {dtype} {[u.__name__ for u in ops]}")


def test_accumulate_arguments():
    x = make("int32", (3, 4), seed=4, domain="small")

    def fn(a):
        return (np.add.accumulate(a, axis=-1), np.subtract.accumulate(a, axis=(1,)),
                np.divide.accumulate(a, dtype=np.float32), np.add.accumulate(a, dtype=np.int32),
                np.subtract.accumulate(a[0], axis=None), np.logical_and.accumulate(a.T),
                np.maximum.accumulate(a, 1, np.float64))

    check_all(run(fn, x), quiet(fn, x))
    for bad, err in [(lambda a: np.add.accumulate(a[0, 0]), TypeError),
                     (lambda a: np.add.accumulate(a, axis=(0, 1)), ValueError),
                     (lambda a: np.add.accumulate(a, axis=None), ValueError),
                     (lambda a: np.add.accumulate(a, axis=2), np.exceptions.AxisError),
                     (lambda a: np.cumsum(a, axis=-3), np.exceptions.AxisError),
                     (lambda a: np.subtract.accumulate(a > 0), TypeError),
                     (lambda a: np.equal.accumulate(a), TypeError),
                     (lambda a: np.negative.accumulate(a), ValueError)]:
        with pytest.raises(err):
            bad(x)
        with pytest.raises(err):
            run(bad, x)


def test_negative_power_raises_at_run_time():
    f = aot.compile(lambda a: np.power.accumulate(a), fullgraph=True)
    np.testing.assert_array_equal(f(np.array([2, 3, 2])), np.power.accumulate(np.array([2, 3, 2])))
    with pytest.raises(ValueError, match="negative integer powers"):
        f(np.array([2, -1, 3]))


def test_out_and_where_are_refused():
    x = np.ones(3)
    for fn in (lambda a: np.cumsum(a, out=a), lambda a: np.add.accumulate(a, out=a),
               lambda a: np.subtract.reduce(a, where=a > 0)):
        with pytest.raises(NotImplementedError):
            run(fn, x)


# --- ufunc.reduce --------------------------------------------------------------------------------------

def _reduces(a):
    return (np.subtract.reduce(a), np.subtract.reduce(a, axis=1, keepdims=True),
            np.subtract.reduce(a, axis=-1, initial=2.5), np.divide.reduce(a, axis=0),
            np.hypot.reduce(a, axis=None), np.hypot.reduce(a, axis=(0, 1), initial=None),
            np.logaddexp.reduce(a, axis=1), np.fmax.reduce(a, axis=(1, 0)), np.fmin.reduce(a, keepdims=True),
            np.copysign.reduce(a, axis=1), np.subtract.reduce(a, axis=()), np.hypot.reduce(a, axis=()),
            np.add.reduce(a), np.add.reduce(a, axis=None, keepdims=True, initial=1.0),
            np.multiply.reduce(a, axis=1, dtype=np.float32), np.maximum.reduce(a, axis=1),
            np.minimum.reduce(a, axis=(0, 1), initial=-1.0), np.logical_and.reduce(a, axis=0),
            np.logical_or.reduce(a, axis=None, keepdims=True), np.logical_and.reduce(a, initial=False),
            np.maximum.reduce(a, dtype=np.float32), np.subtract.reduce(a.T, axis=0),
            np.logical_xor.reduce(a, axis=(0, 1)))


def test_ufunc_reduce_float():
    x = make("float64", (4, 5), seed=5)
    want = quiet(_reduces, x)
    rtols = [RTOL["float64"] if k in (4, 5, 6, 11) else None for k in range(len(want))]
    rtols[14] = RTOL["float32"]
    check_all(run(_reduces, x), want, rtols)


@pytest.mark.parametrize("dtype", ["bool", "int32"])
def test_ufunc_reduce_bits(dtype):
    x = make(dtype, (3, 4), seed=6, domain="small")
    ops = [u for u in (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.logical_xor, np.subtract, np.add,
                       np.multiply, np.maximum, np.minimum, np.left_shift, np.equal, np.not_equal,
                       np.floor_divide) if _accepts(u, dtype)]

    def fn(a):
        out = []
        for u in ops:
            axes = (0, 1) if u.identity is not None or u in (np.maximum, np.minimum) else 1
            out += [u.reduce(a, axis=axes), u.reduce(a, axis=0, keepdims=True)]
        return tuple(out)

    check_all(run(fn, x), quiet(fn, x), what=str([u.__name__ for u in ops]))


def test_reduce_errors_and_empty_axes():
    x = np.ones((2, 0))
    ok = (lambda a: (np.subtract.reduce(a, axis=0), np.subtract.reduce(a, axis=1, initial=5.0),
                     np.bitwise_or.reduce(a.astype(np.int32), axis=1), np.hypot.reduce(a, axis=1),
                     np.logaddexp.reduce(a, axis=(0, 1), keepdims=True)))
    check_all(run(ok, x), quiet(ok, x))
    y = np.ones((2, 3))
    for bad, a in [(lambda a: np.subtract.reduce(a, axis=1), x),
                   (lambda a: np.maximum.reduce(a, axis=1), x),
                   (lambda a: np.subtract.reduce(a, axis=None), y),
                   (lambda a: np.subtract.reduce(a, axis=(0, 1)), y)]:
        with pytest.raises(ValueError):
            bad(a)
        with pytest.raises(ValueError):
            run(bad, a)
    z = np.float64(3.0)
    zf = (lambda a: (np.subtract.reduce(a), np.add.reduce(a, axis=None), np.hypot.reduce(a)))
    check_all(run(zf, np.asarray(z)), quiet(zf, np.asarray(z)))


# --- np.diff -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["bool", "int32", "float32", "complex128"])
def test_diff(dtype):
    x = make(dtype, (4, 6), seed=7)

    def fn(a):
        return (np.diff(a), np.diff(a, axis=0), np.diff(a, n=2), np.diff(a, n=0), np.diff(a, 3, axis=0),
                np.diff(a, n=7), np.diff(a.T), np.diff(a, prepend=a[:, :1]), np.diff(a, append=0, axis=0),
                np.diff(a[0], prepend=1, append=np.ones(2, a.dtype)),
                *((np.ediff1d(a), np.ediff1d(a[1:], to_end=a[0], to_begin=0)) if a.dtype != bool else ()))

    check_all(run(fn, x), quiet(fn, x), what=dtype)
    for n, err in [(-1, ValueError), (1.5, TypeError)]:
        with pytest.raises(err):
            run(lambda a: np.diff(a, n=n), x)
    with pytest.raises(ValueError):
        run(lambda a: np.diff(a[0, 0]), x)


# --- the threaded and vectorised paths, dynamic shapes ---------------------------------------------------

def _long(a, b, m):
    return (np.cumsum(a), np.cumprod(a), np.maximum.accumulate(b), np.fmin.accumulate(b),
            np.cumsum(b), np.cumsum(m, axis=1), np.minimum.accumulate(m, axis=1),
            np.bitwise_xor.accumulate(a), np.logical_or.accumulate(a > 3), np.cumsum(a[::-3]),
            np.cumsum(m, axis=0), np.subtract.accumulate(m, axis=0))


@pytest.mark.parametrize("threads", [1, 5])
def test_long_axes(threads):
    """Long axes with few lanes take the blocked scan for exact kinds (ints, max/min, bits, bools),
    and float sums stay sequential: every result equals numpy's to the bit."""
    n = 200_003
    rng = np.random.default_rng(8)
    a = rng.integers(-5, 6, n).astype(np.int64)
    b = rng.standard_normal(n)
    b[rng.integers(0, n, 20)] = np.nan
    m = rng.integers(-1000, 1000, (2, n // 2)).astype(np.int32)
    check_all(run(_long, a, b, m, options={"num_threads": threads}), quiet(_long, a, b, m), what=f"{threads}")


def test_vector_lanes():
    """Scans along a non-innermost axis fold adjacent lanes in vectors (odd widths: masked tails)."""
    x = make("float64", (37, 3, 67), seed=9)
    i = make("int32", (40, 13), seed=10)

    def fn(a, b):
        return (np.cumsum(a, axis=0), np.cumprod(a, axis=1), np.fmax.accumulate(a, axis=0),
                np.subtract.accumulate(a[:, :, 5:], axis=1), np.cumsum(b, axis=0), np.cumsum(b.T, axis=1),
                np.right_shift.accumulate(np.abs(b), axis=0), np.cumsum(a[::2], axis=0))

    check_all(run(fn, x, i, options={"num_threads": 2}), quiet(fn, x, i))


def _dynamic(a):
    return (np.cumsum(a, axis=0), np.cumsum(a), np.diff(a, axis=1), np.subtract.reduce(a, 1),
            np.hypot.accumulate(a, axis=1), np.cumsum(np.where(np.isfinite(a), a, 0.0), 1, np.int64),
            np.cumsum(np.isfinite(a)), np.maximum.accumulate(a.ravel()),
            np.ediff1d(a, to_begin=2.5, to_end=np.arange(3.0)))


def test_dynamic_shapes():
    """Symbolic sizes, the blocked scan's run-time choice included (long flattened int and max scans)."""
    f = aot.compile(_dynamic, dynamic=True, fullgraph=True, options={"num_threads": 4})
    for shape in [(3, 4), (5, 2), (2, 7), (70, 3000)]:  # size 1 would specialise
        x = make("float64", shape, seed=sum(shape))
        want, got = quiet(_dynamic, x), quiet(f, x)
        rtols = [None] * len(want)
        rtols[4] = RTOL["float64"]
        check_all(got, want, rtols, str(shape))
    assert f.cache_info()["compiles"] == 1


# --- one shared library ------------------------------------------------------------------------------------

def _library_fns(a, i, n):
    return (np.cumsum(a, axis=0), np.cumprod(a, axis=1), np.nancumsum(a), np.diff(a, 2), a.cumsum(1),
            np.subtract.accumulate(a, axis=1), np.fmax.accumulate(a, axis=0), np.hypot.reduce(a, axis=None),
            np.subtract.reduce(a, axis=0), np.cumsum(i), np.power.accumulate(i, axis=0),
            np.maximum.accumulate(i),
            np.cumulative_sum(i, axis=1, include_initial=True), np.cumsum(n), np.minimum.accumulate(n))


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    a = make("float64", (9, 5), seed=11)
    i = make("int32", (9, 5), seed=12, domain="small")
    n = np.random.default_rng(13).integers(-9, 10, 150_001)  # long: the blocked scan, on 4 threads
    lib = aot.aot_load(aot.aot_compile(_library_fns, (a, i, n), path=tmp_path / "scans.so",
                                       options={"num_threads": 4}))
    want = quiet(_library_fns, a, i, n)
    rtols = [None] * len(want)
    rtols[7] = RTOL["float64"]
    check_all(quiet(lib, a, i, n), want, rtols, "library")
    with pytest.raises(ValueError, match="negative integer powers"):
        lib(a, -i - 1, n)
