"""np.digitize, np.unwrap and np.i0 (aot/frontend/numpy_special.py) against numpy: values, dtypes and
errors through backend="eager" and the compiled default backend, dynamic shapes and one library
build. Programs batch the calls so that a dtype costs one compile."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import aot
from aot.frontend import UnsupportedError

from ._support import make
from .test_numpy_everyday import BACKENDS, check, dtypes, numpy_of, run


def _special(x):
    v = x[::2].T  # a stepped, transposed view
    out = [
        np.digitize(x, [0, 1, 3]),
        np.digitize(v, np.array([3.0, 1, -1]), right=True),
        np.digitize(x, np.array([-1, 0, 0, 2])),
        np.digitize(x[0, 0], [0.5]),
        np.i0(x),
        np.i0(v * 4),  # both sides of numpy's split at 8
    ]
    if x.dtype != bool:
        out += [np.unwrap(x * 2), np.unwrap(v, axis=0), np.unwrap(x, discont=4, period=6),
                np.unwrap(v, period=4)]
    return tuple(out)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64", "int32"], ["float32", "int64", "bool"]))
def test_special(dtype, backend):
    x = make(dtype, (6, 5), seed=1)
    check(run(_special, backend, x), numpy_of(_special, x), what=dtype)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_special_eager_dtypes(dtype):
    """The other dtypes through the eager backend (the compiled one: -m slow)."""
    x = make(dtype, (6, 5), seed=2)
    check(run(_special, "eager", x), numpy_of(_special, x), what=dtype)


def _traced_bins(x, b):
    return np.digitize(x, b), np.digitize(x, b, right=True), np.digitize(x[:3], b[::-1])


BINS = {  # all of length 4: one compile serves them all
    "increasing": [-1.0, 0, 0, 2],
    "decreasing": [3.0, 2, 2, -1],
    "constant": [1.0, 1, 1, 1],
    "nan first": [np.nan, 2, 1, 0],  # numpy's check: decreasing
    "infinite": [-np.inf, 0, 0, np.inf],
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_traced_bins(backend):
    x = make("float64", (9,), seed=3)  # nan, +-inf, +-0 included
    f = aot.compile(_traced_bins, backend=backend)
    for name, bins in BINS.items():
        b = np.array(bins)
        check(f(x, b), numpy_of(_traced_bins, x, b), what=name)
    for bad in ([1.0, 0, 2, 3], [0.0, 1, 2, 1]):
        with pytest.raises(ValueError, match="monotonically increasing or decreasing"):
            f(x, np.array(bad))


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_and_one_element(backend):
    def fn(e, o):
        return (np.digitize(e, [1.0, 2]), np.i0(e), np.unwrap(e), np.unwrap(e, axis=0), np.unwrap(o),
                np.digitize(o, o), np.digitize(o, []), np.i0(o))

    e, o = np.zeros((0, 3)), np.array([2.5])
    check(run(fn, backend, e, o), numpy_of(fn, e, o))


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors(backend):
    x = np.linspace(-2, 2, 6)
    with pytest.raises(TypeError, match="x may not be complex"):
        run(lambda a: np.digitize(a + 1j, [0, 1]), backend, x)
    with pytest.raises(ValueError, match="object too deep"):
        run(lambda a: np.digitize(a, a.reshape(2, 3)), backend, x)
    with pytest.raises(ValueError, match="monotonically"):
        run(lambda a: np.digitize(a, [0, 2, 1]), backend, x)
    with pytest.raises(TypeError, match="i0 not supported for complex"):
        run(lambda a: np.i0(a * 1j), backend, x)
    with pytest.raises(ValueError, match="at least one dimensional"):
        run(lambda a: np.unwrap(a[0]), backend, x)
    with pytest.raises(UnsupportedError, match="period"):
        run(lambda a: np.unwrap(a, period=a[0]), backend, x)


def test_dynamic():
    def fn(x, b):
        return np.digitize(x, b), np.digitize(x, [0.0, 1.0], right=True), np.unwrap(x * 4), np.i0(x)

    f = aot.compile(fn, dynamic=True)
    for n in (5, 8, 11):
        x, b = make("float64", (n,), seed=n), np.sort(make("float64", (n - 2,), seed=n + 1, specials=False))
        check(f(x, b), numpy_of(fn, x, b), what=f"n={n}")
    assert f.cache_info()["compiles"] <= 2


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    def fn(x, b):
        return _special(x) + _traced_bins(x[0], b)

    x, b = make("float64", (6, 5), seed=4), np.array([3.0, 2, 0, -1])
    lib = aot.aot_load(aot.aot_compile(fn, (x, b), path=tmp_path / "special.so"))
    check(lib(x, b), numpy_of(fn, x, b))
    with pytest.raises(ValueError, match="neither increasing nor decreasing"):
        lib(x, np.array([0.0, 2, 1, 3]))
