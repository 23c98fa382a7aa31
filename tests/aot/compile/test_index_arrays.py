"""x[i, j] with several integer arrays (and ints) on adjacent dims: numpy's result, through the eager
and compiled backends and a library; an index out of range raises IndexError at run time."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import aot
from aot.frontend import UnsupportedError

RNG = np.random.default_rng(0)
X = RNG.standard_normal((5, 6, 3))
LAB = RNG.integers(0, 6, 5)

CASES = {
    "pick": lambda x, l: x[np.arange(5), l],  # the cross-entropy pick
    "negative": lambda x, l: x[np.arange(5), l - 6],
    "int_and_array": lambda x, l: x[2, l],
    "trailing_slice": lambda x, l: x[np.arange(5), l, 1:],
    "leading_slice": lambda x, l: x[1:3, l[:2], np.array([0, 2])],
    "three_arrays": lambda x, l: x[np.arange(5), l, l % 3],
    "broadcast": lambda x, l: x[np.arange(5)[:, None], np.array([[0, 1, 5]])],
    "tril_pairs": lambda x, l: x[:, :, 0][np.tril_indices(5, 0, 6)],
    "of_a_view": lambda x, l: x[::-1, ::2][np.arange(5), l // 2],
}


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy(name, backend):
    fn = CASES[name]
    got, want = aot.compile(fn, backend=backend, fullgraph=True)(X, LAB), fn(X, LAB)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_out_of_range_raises(backend):
    f = aot.compile(CASES["pick"], backend=backend)
    with pytest.raises(IndexError):
        f(X, LAB + 6)
    with pytest.raises(IndexError):
        f(X, LAB - 7)
    np.testing.assert_array_equal(f(X, LAB), X[np.arange(5), LAB])  # the same entry, in range again


def test_non_adjacent_arrays_are_refused():
    with pytest.raises(UnsupportedError, match="adjacent"):
        aot.compile(lambda x, l: x[np.arange(5), :, l % 3], fullgraph=True)(X, LAB)


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    fn = CASES["pick"]
    lib = aot.aot_load(aot.aot_compile(fn, (X, LAB), path=tmp_path / "pick.so"))
    np.testing.assert_array_equal(lib(X, LAB), fn(X, LAB))
    with pytest.raises(IndexError):
        lib(X, LAB + 6)
