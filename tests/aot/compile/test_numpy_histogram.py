"""np.histogram's one-pass kernels (aot/ops/histogram.py, codegen/kernels/histogram.py) against
numpy: counts to the bit on adversarial samples (every edge, the floats next to them, the last
edge, outside the range, NaNs and infinities), in each dtype numpy's arithmetic takes (Python or
numpy scalar ranges, float32 and integer samples), with equal-width bins from a static range or
from the data, explicit edges, weights, density, strided and empty samples, dynamic shapes, the
eager backend and a library; the threaded path (per-chunk partial histograms) on long inputs.
"""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import aot


def _adversarial(edges: np.ndarray, dtype, seed: int, n_random: int = 500) -> np.ndarray:
    """The edges, their neighbours in `dtype`, random samples in and around the range, the
    specials; shuffled."""
    rng = np.random.default_rng(seed)
    e = np.asarray(edges).astype(dtype)
    lo, hi = float(e[0]), float(e[-1])
    parts = [e, np.nextafter(e, np.array(np.inf, dtype)), np.nextafter(e, np.array(-np.inf, dtype)),
             rng.uniform(lo - (hi - lo) / 4, hi + (hi - lo) / 4, n_random).astype(dtype)]
    if np.dtype(dtype).kind == "f":
        parts.append(np.array([np.nan, np.inf, -np.inf, -0.0], dtype))
    x = np.concatenate(parts).astype(dtype)
    return x[rng.permutation(x.size)]


def _same(got, want, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: {got.dtype}{got.shape} {want.dtype}{want.shape}"
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-12 if want.dtype.itemsize >= 8 else 2e-6, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


RANGES = [(-4.0, 4.0, 64), (0.1, 0.3, 7), (1e6, 1e6 + 3.0, 1000), (1e4, 1e4 + 3.0, 700), (-1e-9, 2e-9, 3),
          (np.float32(-1), np.float32(2), 10)]


@pytest.mark.parametrize("k", range(len(RANGES)))
def test_uniform_bins_exact_on_edges(k):
    """Static ranges (Python floats are weak, numpy ones are not), float64 and float32 samples."""
    lo, hi, nb = RANGES[k]
    e64 = np.histogram_bin_edges(np.zeros(1), nb, (lo, hi))
    x64 = _adversarial(e64, np.float64, k)
    try:
        x32 = _adversarial(np.histogram_bin_edges(np.zeros(1, np.float32), nb, (lo, hi)), np.float32, k + 10)
    except ValueError:  # too many bins for float32 there: the compiled function raises it too
        with pytest.raises(ValueError, match="Too many bins"):
            aot.compile(lambda b: np.histogram(b, bins=nb, range=(lo, hi))[0])(x64.astype(np.float32))
        x32 = x64  # (float64: the second histogram repeats the first)

    def fn(a, b):
        return np.histogram(a, bins=nb, range=(lo, hi)), np.histogram(b, bins=nb, range=(lo, hi))[0]

    got, want = aot.compile(fn)(x64, x32), fn(x64, x32)
    _same(got[0][0], want[0][0], "float64 counts")
    _same(got[0][1], want[0][1], "float64 edges")
    _same(got[1], want[1], "float32 counts")


def test_integer_and_bool_samples():
    xi = np.random.default_rng(1).integers(-20, 20, 400).astype(np.int32)
    xl = np.concatenate([np.arange(-10, 11), np.random.default_rng(2).integers(-10**12, 10**12, 300)]).astype(np.int64)
    xb = np.random.default_rng(3).random(50) < 0.3

    def fn(i, l, b):
        return (np.histogram(i, bins=8, range=(-10, 10))[0], np.histogram(i, bins=5, range=(-2.5, 7.5))[0],
                np.histogram(l, bins=10)[0], np.histogram(l, bins=7, range=(np.int64(-10), np.int64(10)))[0],
                np.histogram(b, bins=3)[0])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy converts the bools with a warning
        got, want = aot.compile(fn)(xi, xl, xb), fn(xi, xl, xb)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        _same(g, w, f"output {k}")


def test_range_from_the_data_and_nan():
    """Edges from the min and max at run time (one value: +-0.5); a NaN there is numpy's ValueError,
    while with a range NaNs are dropped."""
    x = _adversarial(np.linspace(-3, 5, 9), np.float64, 4)
    finite = x[np.isfinite(x)]
    one = np.full(5, 2.5)

    def fn(a, c):
        return np.histogram(a, bins=9)[0], np.histogram(a, bins=4)[1], np.histogram(c, bins=3)

    got, want = aot.compile(fn)(finite, one), fn(finite, one)
    _same(got[0], want[0], "counts")
    _same(got[1], want[1], "edges")
    _same(got[2][0], want[2][0], "one value")
    _same(got[2][1], want[2][1], "one value's edges")
    f = aot.compile(lambda a: np.histogram(a, bins=4)[0])
    with pytest.raises(ValueError):
        np.histogram(x, bins=4)
    with pytest.raises(ValueError, match="finite"):
        f(x)
    _same(aot.compile(lambda a: np.histogram(a, bins=4, range=(-1.0, 1.0))[0])(x),
          np.histogram(x, bins=4, range=(-1.0, 1.0))[0], "NaNs dropped")


def test_explicit_edges():
    edges = np.array([-2.0, -0.5, 0.0, 0.0, 1.0, 3.0])  # a repeated edge: an empty bin
    ie = np.array([-3, 0, 2, 10])
    x = _adversarial(edges, np.float64, 5)
    xi = np.random.default_rng(6).integers(-5, 12, 200)

    def fn(a, b, e):
        return (np.histogram(a, bins=edges)[0], np.histogram(b, bins=ie)[0], np.histogram(b, bins=edges)[0],
                np.histogram(a, bins=e)[0], np.histogram(a.astype(np.float32), bins=edges)[0])

    got, want = aot.compile(fn)(x, xi, edges[::-1][::-1].copy()), fn(x, xi, edges)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        _same(g, w, f"output {k}")


def test_weights_and_density():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(3000)
    w, wi, wb, wf = rng.random(3000), rng.integers(-3, 5, 3000), rng.random(3000) < 0.5, rng.random(3000).astype(np.float32)
    wc = w + 1j * rng.random(3000)

    def fn(a, w, wi, wb, wf, wc):
        r = (-2.0, 2.0)
        return (np.histogram(a, 16, r, weights=w)[0], np.histogram(a, 16, r, weights=wi)[0],
                np.histogram(a, 16, r, weights=wb)[0], np.histogram(a, 16, r, weights=wf)[0],
                np.histogram(a, 16, r, weights=wc)[0], np.histogram(a, 16, r, density=True)[0],
                np.histogram(a, [-1.0, 0.0, 2.0], weights=w)[0], np.histogram(a, 5, density=True, weights=w)[0])

    args = (x, w, wi, wb, wf, wc)
    for k, (g, want) in enumerate(zip(aot.compile(fn)(*args), fn(*args), strict=True)):
        _same(g, want, f"output {k}")


def test_strided_empty_and_2d_samples():
    rng = np.random.default_rng(8)
    base = rng.standard_normal((40, 30))

    def fn(a, e):
        return (np.histogram(a[::3, ::-2], bins=6, range=(-2.0, 2.0))[0], np.histogram(a.T, bins=5)[0],
                np.histogram(a[0, ::7], bins=4, range=(-1.0, 1.0), weights=a[1, ::7])[0],
                np.histogram(e, bins=3), np.histogram(e, bins=3, range=(0.0, 6.0))[0])

    e = np.zeros(0)
    got, want = aot.compile(fn)(base, e), fn(base, e)
    _same(got[0], want[0], "stepped")
    _same(got[1], want[1], "transposed")
    _same(got[2], want[2], "strided weights")
    _same(got[3][0], want[3][0], "empty")
    _same(got[3][1], want[3][1], "empty's edges")
    _same(got[4], want[4], "empty with a range")


def test_threaded_partials_dynamic_and_eager():
    """Long inputs count in per-chunk partial histograms (built for 4 threads, whatever this machine
    has); a dynamic length reuses one compile; the eager backend runs the rows' references."""
    fn = lambda a: np.histogram(a, bins=50, range=(-3.0, 3.0))[0]
    x = _adversarial(np.linspace(-3, 3, 51), np.float64, 9, n_random=300_000)
    _same(aot.compile(fn, options={"num_threads": 4})(x), fn(x), "threaded")
    f = aot.compile(lambda a: np.histogram(a, bins=20)[0], dynamic=True)
    eager = aot.compile(fn, backend="eager")
    for n in (5, 77, 4096):
        y = np.random.default_rng(n).standard_normal(n)
        _same(f(y), np.histogram(y, bins=20)[0], f"dynamic n={n}")
        _same(eager(y), fn(y), f"eager n={n}")
    assert f.cache_info()["compiles"] <= 2


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    def fn(x, w):
        counts, edges = np.histogram(x, bins=8, weights=w)
        return np.histogram(x, bins=32, range=(-2.0, 2.0))[0], counts, edges, np.histogram(x, [-1.0, 0.0, 0.5, 1.0])[0]

    x, w = np.random.default_rng(10).standard_normal(100), np.random.default_rng(11).random(100)
    path = aot.aot_compile(fn, (x, w), dynamic_shapes={"x": {0: aot.Dim("N", min=1, max=10**6)},
                                                      "w": {0: aot.Dim("N", min=1, max=10**6)}},
                           path=tmp_path / "histogram.so")
    lib = aot.aot_load(path)
    for n in (100, 3, 70_000):
        x = _adversarial(np.linspace(-2, 2, 33), np.float64, n, n_random=n)
        x = x[np.isfinite(x)]
        w = np.random.default_rng(n).random(x.size)
        got, want = lib(x, w), fn(x, w)
        for k, what in enumerate(("counts", "weighted", "edges", "explicit")):
            _same(got[k], want[k], f"n={n} {what}")
