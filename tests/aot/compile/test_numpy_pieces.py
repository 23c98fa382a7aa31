"""Splitting, joining and small numeric functions (aot/frontend/numpy_pieces.py, numpy_numeric.py)
against numpy: values, dtypes and errors through backend="eager" and the compiled default backend,
plus one library build. Programs batch the calls so that a dtype costs one compile."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import aot
from aot.frontend import UnsupportedError

from ._support import make
from .test_numpy_everyday import BACKENDS, check, dtypes, numpy_of, run


def _pieces(a):
    b = a.reshape(2, 2, 6)
    return (
        np.split(a, 2, axis=1),
        np.array_split(a, 3),
        np.array_split(a, [1, 5], axis=1),
        np.hsplit(a, 3),
        np.vsplit(a, [1]),
        np.split(a[0], [-2]),
        np.dsplit(b, 2),
        np.unstack(a, axis=1),
        np.dstack([a, a]),
        np.dstack([a[0], a[1]]),
        np.append(a, a[0]),
        np.append(a, a[:1], axis=0),
        np.delete(a, 1, axis=0),
        np.delete(a, [0, -1], axis=1),
        np.delete(a, slice(1, None, 2)),
        np.delete(a, np.array([True, False, True, False]), axis=0),
        np.resize(a, (3, 9)),
        np.resize(a[0], 4),
        np.rot90(a),
        np.rot90(a, 2),
        np.rot90(a, -1),
        np.rot90(b, 1, (2, 0)),
        np.rollaxis(b, 2),
        np.rollaxis(b, 0, 3),
        np.select([a > 0, a < -1], [a, a * 2]),
        np.select([a > 0], [1.5], default=-1),
        np.isin(a, [1, 2, 3]),
        np.isin(a, a[0], invert=True),
        np.tril_indices_from(a),
        np.diag_indices_from(a[:, :4]),
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", dtypes(["float64", "int32"], ["bool", "complex64"]))
def test_pieces(dtype, backend):
    x = make(dtype, (4, 6), seed=1)
    check(run(_pieces, backend, x), numpy_of(_pieces, x))


def _numeric(a, k):
    return (
        np.fix(a * 1.7),
        np.fix(k),
        np.polyval([1, -2, 3], a),
        np.polyval(a[0], 2.0),
        np.polyval(np.array([1.5, 2], np.float32), k),
        np.vander(a[0]),
        np.vander(k[0], 3, increasing=True),
        np.trapezoid(a),
        np.trapezoid(a, dx=0.5, axis=0),
        np.trapezoid(a, a[0]),
        np.trapezoid(k, k),
        np.cov(a),
        np.cov(a, rowvar=False),
        np.cov(a[0], a[1]),
        np.cov(k, bias=True),
        np.cov(a[0]),
        np.corrcoef(a),
        np.corrcoef(a[0], a[2]),
        np.corrcoef(a + 1j * k),
        np.unravel_index(np.argmax(a), a.shape),
        np.unravel_index(np.abs(k) % 6, (2, 3), order="F"),
        np.ravel_multi_index((np.abs(k) % 4, np.abs(k) % 6), (4, 6)),
        np.ravel_multi_index((k, k), (3, 4), mode=("wrap", "clip")),
        np.gradient(a),
        np.gradient(k, 0.5, axis=1),
        np.gradient(a, np.arange(4.0) * 0.5, np.cumsum(np.abs(a[0]) + 0.1), edge_order=2),
        np.gradient(a[0], a[1] * 0 + np.arange(6.0)),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_numeric(backend):
    a, k = make("float64", (4, 6), seed=2, specials=False), make("int64", (4, 6), seed=3)
    check(run(_numeric, backend, a, k), numpy_of(_numeric, a, k), rtol=1e-11)


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors(backend):
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(ValueError, match="equal division"):
        run(lambda a: np.split(a, 5, axis=1), backend, x)
    with pytest.raises(ValueError, match="only works on arrays of 2 or more"):
        run(lambda a: np.vsplit(a[0], 2), backend, x)
    with pytest.raises(IndexError, match="out of bounds"):
        run(lambda a: np.delete(a, 7, axis=1), backend, x)
    with pytest.raises(ValueError, match="Axes must be different"):
        run(lambda a: np.rot90(a, 1, (0, 0)), backend, x)
    with pytest.raises(ValueError, match="same length"):
        run(lambda a: np.select([a > 0], [a, a]), backend, x)
    with pytest.raises(ValueError, match="out of bounds"):
        run(lambda k: np.unravel_index(k, (2, 3)), backend, np.array([1, 6]))
    with pytest.raises(ValueError, match="invalid entry in coordinates"):
        run(lambda k: np.ravel_multi_index((k, k), (3, 4)), backend, np.array([0, 3]))
    with pytest.raises(UnsupportedError, match="np.repeat"):
        run(lambda a, r: np.repeat(a, r), backend, x, np.array([1, 2, 3]) + np.zeros(3, int))


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    a, k = make("float64", (4, 6), seed=4, specials=False), make("int64", (4, 6), seed=5)
    lib = aot.aot_load(aot.aot_compile(_numeric, (a, k), path=tmp_path / "numeric.so"))
    check(lib(a, k), numpy_of(_numeric, a, k), rtol=1e-11)
