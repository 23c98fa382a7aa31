"""np.apply_along_axis and np.apply_over_axes (aot/frontend/numpy_apply.py) against numpy: the user's
function traced per slice / per axis, results stacked as numpy stacks them, through backend="eager",
the compiled default backend, dynamic slice lengths and one library build; the slice-count limit."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import aot
from aot.frontend import UnsupportedError
from aot.frontend.numpy_apply import MAX_SLICES

from ._support import make
from .test_numpy_everyday import BACKENDS, check, dtypes, numpy_of, run


def _apply(x):
    v = x[::2].T  # a stepped, transposed view: (5, 2)
    return (
        np.apply_along_axis(np.sum, 0, x),
        np.apply_along_axis(lambda r: r[::-1] * 2, 1, x),
        np.apply_along_axis(lambda r: np.outer(r, r), -1, v),  # a 2-D result per slice
        np.apply_along_axis(lambda r: 1.5, 0, x),  # a Python scalar: numpy's float64
        np.apply_along_axis(np.cumsum, 1, v),
        np.apply_along_axis(lambda r, k: r * k, 0, x[:1], 3),  # extra arguments
        np.apply_along_axis(np.max, 1, x[:, :1]),
        np.apply_over_axes(np.sum, x, [0, 1]),
        np.apply_over_axes(np.max, v, 1),
        np.apply_over_axes(np.cumsum, x, [-1]),
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64", "int32"], ["complex128", "bool"]))
def test_apply(dtype, backend):
    x = make(dtype, (4, 5), seed=1)
    check(run(_apply, backend, x), numpy_of(_apply, x), what=dtype)


@pytest.mark.parametrize("dtype", ["bool", "int64", "float32", "complex64"])
def test_apply_eager_dtypes(dtype):
    x = make(dtype, (4, 5), seed=2)
    check(run(_apply, "eager", x), numpy_of(_apply, x), what=dtype)


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors(backend):
    with pytest.raises(UnsupportedError, match=f"over {MAX_SLICES + 1} slices"):
        run(lambda a: np.apply_along_axis(np.sum, 0, a), backend, np.ones((2, MAX_SLICES + 1)))
    with pytest.raises(ValueError, match="iteration dimensions are 0"):
        run(lambda a: np.apply_along_axis(np.sum, 0, a), backend, np.ones((3, 0)))
    with pytest.raises(ValueError, match="not returning an array of the correct shape"):
        run(lambda a: np.apply_over_axes(lambda v, ax: v.ravel(), a, 0), backend, np.ones((3, 2, 2)))
    with pytest.raises(np.exceptions.AxisError):
        run(lambda a: np.apply_along_axis(np.sum, 2, a), backend, np.ones((3, 2)))


def test_dynamic():
    """The slice length may be symbolic; the number of slices is pinned (one traced call each)."""
    def fn(x):
        return np.apply_along_axis(np.sum, 1, x), np.apply_over_axes(np.sum, x, 1)

    f = aot.compile(fn, dynamic=True)
    for n in (3, 6, 9):
        x = make("float64", (2, n), seed=n)
        check(f(x), numpy_of(fn, x), what=f"n={n}")
    assert f.cache_info()["compiles"] <= 2


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    x = make("float64", (4, 5), seed=3)
    lib = aot.aot_load(aot.aot_compile(_apply, (x,), path=tmp_path / "apply.so"))
    check(lib(x), numpy_of(_apply, x))
