"""Reductions of masked selections (x[mask].sum()) and numpy's where= argument of reductions,
against numpy through the eager and compiled backends, dynamic shapes and a shared library;
the data-dependent constructs that stay unsupported name themselves and the alternative."""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import aot
from aot.frontend import UnsupportedError
from aot.compiler.capture import GraphBreak

RNG = np.random.default_rng(7)
X = RNG.standard_normal((6, 5))

SELECTIONS = {
    "sum": lambda x: x[x > 0].sum(),
    "np_sum": lambda x: np.sum(x[x > 0.5]),
    "prod": lambda x: x[np.abs(x) < 1].prod(),
    "mean": lambda x: x[x > 0].mean(),
    "max": lambda x: x[x < 0].max(),
    "np_min": lambda x: np.min(x[x < 0]),
    "amax_initial": lambda x: np.amax(x[x > 5], initial=-1.0),
    "var": lambda x: x[x > -0.5].var(),
    "std_ddof": lambda x: x[x > -0.5].std(ddof=1),
    "squares": lambda x: (x[x > 0] ** 2).sum(),
    "ufunc": lambda x: np.exp(x[x > 0]).mean(),
    "scaled": lambda x: (2.0 * x[x > 0] - 1).max(),
    "rows_sum": lambda x: x[x[:, 0] > 0].sum(axis=0),
    "rows_mean": lambda x: x[x[:, 0] > 0].mean(axis=0),
    "rows_all_axes": lambda x: x[x[:, 1] < 0].sum(axis=(0, 1)),
    "keepdims": lambda x: x[x > 0].sum(keepdims=True),
    "any": lambda x: (x[x > 0] > 1).any(),
    "all": lambda x: (x[x > 0] > 0).all(),
    "sum_dtype": lambda x: x[x > 0].sum(dtype=np.float32),
}


def _check(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = {np.float32: 1e-5, np.int64: 0, np.bool_: 0}.get(want.dtype.type, 1e-12)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selection_reductions_match_numpy(name, backend):
    fn = SELECTIONS[name]
    f = aot.compile(fn, backend=backend, fullgraph=True)
    for x in (X, X.T, X[::2]):  # non-contiguous views too
        _check(f(x), fn(x))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.complex128, np.bool_])
def test_selection_dtypes(dtype):
    x = (X * 10).astype(dtype) if dtype is not np.bool_ else X > -0.3
    m = X > 0
    fns = [lambda x, m: x[m].sum(), lambda x, m: x[m].mean(), lambda x, m: x[m].prod()]
    if dtype is not np.complex128:
        fns += [lambda x, m: x[m].max(), lambda x, m: x[m].min()]
    for fn in fns:
        _check(aot.compile(fn, fullgraph=True)(x, m), fn(x, m))


def test_empty_selection_max_raises_numpys_error_and_mean_is_nan():
    f = aot.compile(lambda x: x[x > 100].max())
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum which has no identity"):
        f(X)
    g = aot.compile(lambda x: np.min(x[x > 100]))
    with pytest.raises(ValueError, match="minimum"):
        g(X)
    assert f(X + 200) == (X + 200).max()  # the same entry, now with a selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(aot.compile(lambda x: x[x > 100].mean())(X))
        assert aot.compile(lambda x: x[x > 100].sum())(X) == 0.0


def test_known_mask_is_a_take_and_a_captured_one_is_read_per_call():
    mask = [True, False, True, True, False, False]
    _check(aot.compile(lambda x: x[mask], fullgraph=True)(X), X[mask])
    full = X > 0  # a captured array: read when the function runs, like other captured arrays
    f = aot.compile(lambda x: x[full].sum(), fullgraph=True)
    _check(f(X), X[full].sum())
    full[:] = ~full
    _check(f(X), X[full].sum())


def test_dynamic_shapes():
    f = aot.compile(lambda x: x[x > 0].sum() + x[x < 0].max(), dynamic=True)
    for n in (5, 9, 33):
        x = RNG.standard_normal(n)
        _check(f(x), x[x > 0].sum() + x[x < 0].max())
    assert f.cache_info()["compiles"] == 1


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    def fn(x):
        return x[x > 0].sum(), x[x < 0].max(), np.mean(x, where=x > 0)

    path = aot.aot_compile(fn, (X,), path=tmp_path / "masked.so")
    lib = aot.aot_load(path)
    for got, want in zip(lib(X), fn(X), strict=True):
        _check(got, want)
    with pytest.raises(ValueError, match="maximum"):
        lib(np.abs(X))


WHERE = {
    "sum": lambda a, w: np.sum(a, where=w),
    "sum_axis": lambda a, w: np.sum(a, axis=0, where=w),
    "prod": lambda a, w: np.prod(a, axis=1, where=w),
    "mean": lambda a, w: np.mean(a, where=w),
    "mean_keepdims": lambda a, w: np.mean(a, axis=1, where=w, keepdims=True),
    "var": lambda a, w: np.var(a, where=w),
    "std": lambda a, w: np.std(a, axis=1, where=w, ddof=1),
    "max": lambda a, w: np.max(a, axis=0, where=w, initial=-5),
    "any": lambda a, w: np.any(a, axis=0, where=w),
    "all": lambda a, w: np.all(a, where=w),
    "broadcast_row": lambda a, w: np.sum(a, axis=0, where=w[0]),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_, np.complex128])
@pytest.mark.parametrize("name", sorted(WHERE))
def test_where_argument_of_reductions(name, dtype):
    fn = WHERE[name]
    if dtype is np.complex128 and name == "max":
        pytest.skip("complex max needs ordering numpy defines lexicographically")
    a = (X * 10).astype(dtype) if dtype is not np.bool_ else X > 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's warnings for empty slices
        _check(aot.compile(fn, fullgraph=True)(a, X > 0.2), fn(a, X > 0.2))


def test_where_needs_initial_for_max_and_a_broadcastable_mask():
    with pytest.raises(ValueError, match="initial"):
        aot.compile(lambda a, w: np.max(a, where=w), fullgraph=True)(X, X > 0)
    with pytest.raises(ValueError, match="where"):
        aot.compile(lambda a, w: np.sum(a, where=w), fullgraph=True)(X, np.ones(4, bool))


@pytest.mark.parametrize("fn, what", [
    (lambda x: x[x > 0], "returning x[mask]"),
    (lambda x: len(x[x > 0]), "len(x[mask])"),
    (lambda x: x[x > 0].shape, "x[mask].shape"),
    (lambda x: x[x > 0].argmax(), "argmax"),
    (lambda x: x[x > 0] + x, "and an array"),
    (lambda x: np.nonzero(x), "np.nonzero"),
    (lambda x: np.unique(x), "np.unique"),
    (lambda x: x[x[:, 0] > 0].sum(axis=1), "over axis 1"),
])
def test_data_dependent_constructs_name_themselves(fn, what):
    with pytest.raises((UnsupportedError, GraphBreak), match="data") as info:
        aot.compile(fn, fullgraph=True)(X)
    assert what in str(info.value)


def test_unsupported_selection_falls_back_to_numpy_with_a_warning():
    f = aot.compile(lambda x: x[x > 0] * 2)
    with pytest.warns(RuntimeWarning, match="data-dependent"):
        np.testing.assert_array_equal(f(X), X[X > 0] * 2)
