"""The transform rules of the signal, scan, sorting, selection, histogram, compaction and bincount
rows through the numpy calls users write: np.fft.fft/ifft/rfft/irfft (n, norm), np.correlate,
np.convolve, np.cumsum, np.cumprod, ufunc.accumulate, np.sort, np.argsort, np.searchsorted,
np.partition, np.median, np.percentile, np.histogram, np.bincount and the size= forms (np.nonzero,
np.extract, np.compress).

grad (float64; complex128 where the op takes it: torch's convention, dL/dRe + i dL/dIm) and
jacrev/jacfwd against central finite differences; vmap against a loop over the examples, for
in_dims 0, 1 and mixtures with None; aot.compile(func.grad(f)) against the eager gradient."""
from __future__ import annotations

import numpy as np
import pytest

import aot
from aot import func
from aot.ops._transforms import emit
from aot.ops.selection_ops import _select_reference
from ir.opdef import OPDEFS, OpError

from ._fd import TOL, H, close, fd_grad, fd_jac  # noqa: F401


def rng(seed=0):
    return np.random.default_rng(seed)








def real_loss(fn, out_shape, seed=1):
    """sum(real(w1 * out)) + sum(imag(w2 * out)): every real and imaginary part of the output."""
    r = rng(seed)
    w1, w2 = r.standard_normal(out_shape), r.standard_normal(out_shape)
    return lambda *a: np.sum(np.real(fn(*a)) * w1) + np.sum(np.imag(fn(*a)) * w2)


def check_grad(fn, x, reference=None):
    """grad of a real loss of fn against finite differences (of `reference`, numpy's fn by default)."""
    loss = real_loss(fn, np.shape((reference or fn)(x)))
    ref_loss = real_loss(reference or fn, np.shape((reference or fn)(x)))
    close(func.grad(loss)(x), fd_grad(ref_loss, x))


def check_jac(fn, x, reference=None):
    jac = fd_jac(reference or fn, x)
    close(func.jacrev(fn)(x), jac)
    close(func.jacfwd(fn)(x), jac)


def check_vmap(fn, args, in_dims, reference=None, exact=False):
    """vmap(fn) against a loop of `reference` (fn) over the examples."""
    reference = reference or fn
    b = next(np.shape(a)[d] for a, d in zip(args, in_dims) if d is not None)
    loop = [reference(*[a if d is None else np.take(a, i, axis=d) for a, d in zip(args, in_dims)])
            for i in range(b)]
    got = func.vmap(fn, in_dims=in_dims)(*args)
    if isinstance(got, tuple):
        for k, g in enumerate(got):
            _same(g, np.stack([r[k] for r in loop]), exact)
    else:
        _same(got, np.stack(loop), exact)


def _same(got, want, exact):
    assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# --- np.fft -----------------------------------------------------------------------------------------
FFTS = {"fft": np.fft.fft, "ifft": np.fft.ifft, "rfft": np.fft.rfft, "irfft": np.fft.irfft}


@pytest.mark.parametrize("kind", list(FFTS))
@pytest.mark.parametrize("n", [None, 4, 5, 9])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_fft_grad(kind, n, norm):
    """n crops (4, 5) or zero-pads (9) the 6 points; rfft's and irfft's Hermitian weighting."""
    r = rng(3)
    x = r.standard_normal((2, 6))
    if kind != "rfft":
        x = x + 1j * r.standard_normal(x.shape)
    check_grad(lambda v: FFTS[kind](v, n=n, axis=1, norm=norm), x)


def test_fft_of_real_input_and_axis_0():
    x = rng(4).standard_normal((5, 3))
    for kind in ("fft", "ifft", "rfft"):
        check_grad(lambda v: FFTS[kind](v, n=6, axis=0, norm="ortho"), x)


def test_rfft_vjp_is_not_irfft():
    """The middle bins of rfft's cotangent count once (not twice, as irfft would read them)."""
    g = rng(5).standard_normal(4) + 1j * rng(6).standard_normal(4)
    x = rng(7).standard_normal(6)
    _, pull = func.vjp(lambda v: np.fft.rfft(v), x)
    (got,) = pull(g)
    dft = np.exp(-2j * np.pi * np.outer(np.arange(4), np.arange(6)) / 6)  # rfft's matrix
    close(got, np.real(dft.conj().T @ g), 1e-12)
    assert not np.allclose(got, np.fft.irfft(g, n=6) * 6)


def test_fft_jacobians_and_jvp():
    x = rng(8).standard_normal(5)
    check_jac(lambda v: np.fft.irfft(np.fft.rfft(v, n=8) * np.arange(1, 6), n=7, norm="ortho"), x)
    check_jac(lambda v: np.real(np.fft.ifft(np.fft.fft(v) ** 2, n=6)), x)
    t = rng(9).standard_normal(5)
    _, tan = func.jvp(lambda v: np.fft.rfft(v, n=4, norm="forward"), (x,), (t,))
    close(tan, np.fft.rfft(t, n=4, norm="forward"), 1e-12)


@pytest.mark.parametrize("in_dim", [0, 1, 2])
def test_fft_vmap(in_dim):
    x = rng(10).standard_normal((3, 4, 6))
    xc = x + 1j * rng(11).standard_normal(x.shape)
    check_vmap(lambda v: np.fft.fft(v, n=5, axis=-1, norm="ortho"), (xc,), (in_dim,))
    check_vmap(lambda v: np.fft.ifft(v, axis=0), (xc,), (in_dim,))
    check_vmap(lambda v: np.fft.rfft(v, n=7, axis=1), (x,), (in_dim,))
    check_vmap(lambda v: np.fft.irfft(v, axis=0, norm="forward"), (xc,), (in_dim,))
    check_vmap(lambda v: np.fft.rfft2(v), (x,), (in_dim,))


def test_fft_grad_compiled_matches_eager():
    x = rng(12).standard_normal((2, 6))
    loss = real_loss(lambda u: np.fft.rfft(u, n=7, axis=1, norm="ortho"), (2, 4))
    close(aot.compile(func.grad(loss))(x), func.grad(loss)(x), 1e-12)


# --- np.correlate / np.convolve ---------------------------------------------------------------------
@pytest.mark.parametrize("fn", [np.correlate, np.convolve])
@pytest.mark.parametrize("mode", ["valid", "same", "full"])
@pytest.mark.parametrize("sizes", [(7, 3), (6, 4), (3, 5), (4, 1)])
def test_correlate_grad(fn, mode, sizes):
    r = rng(sum(sizes))
    a, v = (r.standard_normal(s) + 1j * r.standard_normal(s) for s in sizes)
    out = fn(a, v, mode)
    loss = real_loss(lambda a, v: fn(a, v, mode), out.shape)
    ga, gv = func.grad(loss, argnums=(0, 1))(a, v)
    close(ga, fd_grad(lambda a: loss(a, v), a))
    close(gv, fd_grad(lambda v: loss(a, v), v))


def test_correlate_jacobians():
    a, v = rng(13).standard_normal(6), rng(14).standard_normal(3)
    check_jac(lambda a: np.convolve(a, v, "same"), a)
    check_jac(lambda v: np.correlate(a, v, "full"), v)


@pytest.mark.parametrize("mode", ["valid", "same", "full"])
def test_correlate_vmap(mode):
    r = rng(15)
    A, V = r.standard_normal((3, 7)), r.standard_normal((4, 3))
    a, v = A[0], V[:, 0]
    for fn in (np.correlate, np.convolve):
        f = lambda a, v: fn(a, v, mode)
        check_vmap(f, (A, v), (0, None))
        check_vmap(f, (A.T, v), (1, None))
        check_vmap(f, (a, V), (None, 1))
        check_vmap(f, (a, V.T), (None, 0))
        check_vmap(f, (A, V), (0, 1))
        check_vmap(f, (V.T, A), (0, 0))  # the short operand first: numpy swaps them


# --- scans ------------------------------------------------------------------------------------------
SCANS = {
    "cumsum": lambda x: np.cumsum(x, axis=-1),
    "cumprod": lambda x: np.cumprod(x, axis=1),
    "cummax": lambda x: np.maximum.accumulate(x, axis=1),
    "cummin": lambda x: np.minimum.accumulate(x, axis=-1),
    "sub": lambda x: np.subtract.accumulate(x, axis=1),
    "div": lambda x: np.divide.accumulate(x, axis=1),
    "pow": lambda x: np.power.accumulate(x, axis=1),
    "logaddexp": lambda x: np.logaddexp.accumulate(x, axis=1),
    "hypot": lambda x: np.hypot.accumulate(x, axis=1),
}
COMPLEX_SCANS = ("cumsum", "cumprod", "sub", "div")


@pytest.mark.parametrize("kind", list(SCANS))
def test_scan_grad_and_jacobians(kind):
    r = rng(16)
    x = r.uniform(0.5, 1.5, (3, 6))
    check_grad(SCANS[kind], x)
    check_jac(SCANS[kind], x)
    if kind in COMPLEX_SCANS:
        check_grad(SCANS[kind], x + 1j * r.uniform(-0.5, 0.5, x.shape))


def test_cumprod_with_zeros_is_exact():
    x = rng(17).uniform(0.5, 1.5, (4, 6))
    x[0, 0] = x[1, 2] = x[1, 4] = x[2, 5] = x[3, 1] = x[3, 2] = 0.0  # first, middle, repeated, last
    check_grad(SCANS["cumprod"], x)
    check_jac(SCANS["cumprod"], x)
    xc = x + 1j * (x != 0) * rng(18).uniform(-0.5, 0.5, x.shape)
    check_grad(SCANS["cumprod"], xc)


def test_cummax_ties_share_like_the_max_of_each_prefix():
    """JAX's convention for max, per prefix: out[i] = max(x[:i+1]) shares its derivative among the
    k elements attaining it so far, 1/k each."""
    x = np.array([[1.0, 3.0, 2.0, 3.0, 3.0, 0.5], [2.0, 2.0, 1.0, 2.0, 4.0, 4.0]])
    w = rng(19).standard_normal(x.shape)
    got = func.grad(lambda v: np.sum(np.maximum.accumulate(v, axis=1) * w))(x)
    want = np.zeros_like(x)
    for row in range(2):
        for i in range(6):
            hit = x[row, :i + 1] == x[row, :i + 1].max()
            want[row, :i + 1] += w[row, i] * hit / hit.sum()
    close(got, want, 1e-12)
    close(func.jacfwd(lambda v: np.minimum.accumulate(-v, axis=1))(x),
          -func.jacrev(lambda v: np.maximum.accumulate(v, axis=1))(x), 1e-12)


def test_scan_with_dtype_and_long_axis():
    x = rng(20).uniform(0.9, 1.1, 40)
    got = func.grad(lambda v: np.sum(np.cumsum(v.astype(np.float32), dtype=np.float64)))(x)
    close(got, np.arange(40.0, 0, -1))
    check_grad(lambda v: np.power.accumulate(v), x[:37])  # 6 doubling steps, n not a power of 2


@pytest.mark.parametrize("in_dim", [0, 1, 2])
def test_scan_vmap(in_dim):
    x = rng(21).uniform(0.5, 1.5, (3, 4, 5))
    check_vmap(SCANS["div"], (x,), (in_dim,))
    x[0, 1, 2] = x[2, 2, 2] = 0.0
    for kind in ("cumsum", "cumprod", "cummax"):
        check_vmap(SCANS[kind], (x,), (in_dim,))
    check_vmap(lambda v: func.grad(lambda u: np.sum(np.cumprod(u) ** 2))(v[0]), (x,), (in_dim,))


def test_scan_kind_without_derivative_fails_at_rule_time(monkeypatch):
    monkeypatch.setattr(OPDEFS["hypot"], "jvp", None)
    with pytest.raises(OpError, match="kind 'hypot'"):
        func.grad(lambda v: np.sum(np.hypot.accumulate(v)))(np.ones(3))


# --- sort, argsort, searchsorted -------------------------------------------------------------------
def test_sort_grad_scatters_through_the_permutation():
    x = rng(22).standard_normal((3, 5))
    w = rng(23).standard_normal(x.shape)
    for axis in (0, 1, -1):
        got = func.grad(lambda v: np.sum(np.sort(v, axis=axis) * w))(x)
        want = np.zeros_like(x)
        np.put_along_axis(want, np.argsort(x, axis=axis), w, axis=axis)
        close(got, want, 0)
    check_grad(lambda v: np.sort(v, axis=0), x)
    check_jac(lambda v: np.sort(v, axis=1), x)
    xc = x + 1j * rng(24).standard_normal(x.shape)
    check_grad(lambda v: np.sort(v, axis=1), xc)


def test_argsort_and_searchsorted_are_not_differentiable():
    x = rng(25).standard_normal(5)
    g = func.grad(lambda v: np.sum(np.take_along_axis(v, np.argsort(v), 0) ** 2))(x)
    close(g, 2 * x, 1e-12)
    e = np.linspace(-2, 2, 5)
    close(func.grad(lambda v: np.sum(v * np.searchsorted(e, v)))(x), np.searchsorted(e, x), 0)


@pytest.mark.parametrize("in_dim", [0, 1, 2])
def test_sort_vmap(in_dim):
    x = rng(26).standard_normal((3, 4, 5))
    x[1, 2, 3] = np.nan
    check_vmap(lambda v: np.sort(v, axis=-1), (x,), (in_dim,), exact=True)
    check_vmap(lambda v: np.argsort(v, axis=0), (x,), (in_dim,), exact=True)
    check_vmap(lambda v: func.grad(lambda u: np.sum(np.sort(u, axis=0)[0]))(v), (x,), (in_dim,))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_vmap(side):
    r = rng(27)
    A = np.sort(r.integers(0, 5, (4, 6)).astype(float), axis=1)
    A[1, -1] = np.nan
    V = r.integers(-1, 6, (4, 3)).astype(float)
    V[2, 0] = np.nan
    f = lambda a, v: np.searchsorted(a, v, side=side)
    check_vmap(f, (A, V), (0, 0), exact=True)
    check_vmap(f, (A, V[0]), (0, None), exact=True)
    check_vmap(f, (A[0], V), (None, 0), exact=True)
    check_vmap(f, (A.T, V.T), (1, 1), exact=True)
    check_vmap(f, (A, V[:, :2].T), (0, 1), exact=True)
    check_vmap(lambda a, v: np.searchsorted(a, v, side=side), (A[0], V[:, 0]), (None, 0), exact=True)


# --- partition, median, percentile (select_kth) ----------------------------------------------------
QUANTILES = {
    "median": lambda x: np.median(x, axis=1),
    "median0": lambda x: np.median(x, axis=0),
    "percentile": lambda x: np.percentile(x, [10, 50, 90], axis=1),
    "nanmedian": lambda x: np.nanmedian(x, axis=1),
    "nanpercentile": lambda x: np.nanpercentile(x, [25, 75], axis=1),
    "quantile": lambda x: np.quantile(x, 0.3),
}


@pytest.mark.parametrize("name", list(QUANTILES))
def test_order_statistics(name):
    x = rng(28).standard_normal((3, 7))
    check_grad(QUANTILES[name], x)
    check_jac(QUANTILES[name], x)
    X = rng(29).standard_normal((4, 3, 7))
    X[1, 0, 2] = np.nan
    check_vmap(QUANTILES[name], (X,), (1,))


def test_partition():
    """Our partition's arrangement is one numpy may give, not numpy's: the traced function (the
    rows' references) is the reference for the finite differences and the loop."""
    x = rng(30).standard_normal((4, 7))
    f = lambda v: np.partition(v, (1, 4), axis=1)
    compiled = aot.compile(f, backend="eager")
    check_grad(f, x, reference=compiled)
    check_jac(f, x, reference=compiled)
    X = rng(31).standard_normal((4, 3, 7))
    check_vmap(f, (X,), (1,), reference=compiled, exact=True)
    argp = lambda v: np.argpartition(v, 2, axis=-1)
    check_vmap(argp, (X,), (2,), reference=aot.compile(argp, backend="eager"), exact=True)


def test_select_kth_vmap_with_batched_positions():
    """Positions batched (per example, or per lane) and mixtures with None, on the row directly."""
    r = rng(32)
    x, X = r.standard_normal((3, 7)), r.standard_normal((4, 3, 7))
    X[1, 0, 2] = np.nan
    Q, q = r.integers(-7, 7, (4, 2)), np.array([1, -2])
    QL = r.integers(-7, 7, (4, 3, 2))
    f = lambda x, i: emit("select_kth", x, i, axis=1)
    ref = lambda x, i: _select_reference(x, i, axis=1)
    for args, dims in [((x, Q), (None, 0)), ((X, Q), (0, 0)), ((X, q), (0, None)),
                       ((X.transpose(1, 2, 0), Q.T), (2, 1)), ((X, QL), (0, 0)),
                       ((x, QL.transpose(1, 2, 0)), (None, 2)), ((X, QL[0]), (0, None))]:
        check_vmap(f, args, dims, reference=ref, exact=True)


# --- np.histogram -----------------------------------------------------------------------------------
BINS = [dict(bins=5), dict(bins=4, range=(-1.0, 1.0)), dict(bins=np.array([-2.0, -0.5, 0.0, 0.3, 2.0]))]


@pytest.mark.parametrize("kw", BINS, ids=["data-range", "range", "edges"])
def test_histogram_weights_derivative(kw):
    """Counts are piecewise constant (no derivative); weighted sums are linear in the weights."""
    r = rng(33)
    x, w = r.standard_normal(20), r.standard_normal(20)
    counts, edges = np.histogram(x, **kw)
    gw = r.standard_normal(counts.shape)
    got = func.grad(lambda w: np.sum(np.histogram(x, weights=w, **kw)[0] * gw))(w)
    bins = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(counts) - 1)
    inside = (x >= edges[0]) & (x <= edges[-1])
    close(got, np.where(inside, gw[bins], 0), 0)
    check_jac(lambda w: np.histogram(x, weights=w, **kw)[0], w)
    close(func.grad(lambda x: np.sum(np.histogram(x, weights=w, **kw)[0]))(x), np.zeros_like(x), 0)


@pytest.mark.parametrize("kw", BINS, ids=["data-range", "range", "edges"])
def test_histogram_vmap(kw):
    r = rng(34)
    X, W = r.standard_normal((4, 20)), r.standard_normal((20, 4))
    X[1, 3] = np.nan if "range" in kw else X[1, 3]
    check_vmap(lambda x: np.histogram(x, **kw), (X,), (0,), exact=True)
    h = lambda x, w: np.histogram(x, weights=w, **kw)[0]
    check_vmap(h, (X, W), (0, 1))
    check_vmap(h, (X[0], W), (None, 1))
    check_vmap(h, (X.T, W[:, 0]), (1, None))


def test_histogram_vmap_over_edges():
    r = rng(35)
    x = r.standard_normal(20)
    E = np.sort(r.uniform(-2, 2, (4, 5)), axis=1)
    check_vmap(lambda e: np.histogram(x, bins=e)[0], (E,), (0,), exact=True)
    check_vmap(lambda x, e: np.histogram(x, bins=e)[0], (r.standard_normal((20, 4)), E.T), (1, 1), exact=True)


# --- size= (compact) --------------------------------------------------------------------------------
def _sized(values, mask, size, fill):
    picked = values[mask]
    out = np.full((size,) + values.shape[1:], fill, values.dtype)
    k = min(size, len(picked))
    out[:k] = picked[:k]
    return out


@pytest.mark.parametrize("size", [0, 2, 3, 8])
def test_extract_grad(size):
    r = rng(36)
    x = r.standard_normal(6)
    c = x > 0
    w = r.standard_normal(size)
    loss = lambda x, f: np.sum(np.extract(c, x, size=size, fill_value=f) * w)
    ref = lambda x, f: np.sum(_sized(x, c, size, f) * w)  # numpy has no size=
    gx, gf = func.grad(loss, argnums=(0, 1))(x, np.array(2.5))
    close(gx, fd_grad(lambda x: ref(x, 2.5), x))
    close(gf, fd_grad(lambda f: ref(x, f), np.array(2.5)))
    if size:
        check_jac(lambda x: np.extract(c, x, size=size, fill_value=1.0), x,
                  reference=lambda x: _sized(x, c, size, 1.0))
    m = r.standard_normal((5, 2))
    check_grad(lambda m: np.compress(m[:, 0] > 0, m, axis=0, size=size), m,
               reference=lambda m: _sized(m, m[:, 0] > 0, size, 0))


@pytest.mark.parametrize("size", [0, 2, 3, 8])
def test_sized_vmap(size):
    r = rng(37)
    X, F = r.standard_normal((4, 6)), r.standard_normal(4)
    per_example = lambda x, f: np.extract(x > 0, x, size=size, fill_value=f)
    ref = lambda x, f: _sized(x, x > 0, size, f)
    check_vmap(per_example, (X, 1.5), (0, None), reference=ref, exact=True)
    check_vmap(per_example, (X.T, F), (1, 0), reference=ref, exact=True)
    shared = lambda x, f: np.extract(X[0] > 0, x, size=size, fill_value=f)
    ref = lambda x, f: _sized(x, X[0] > 0, size, f)
    check_vmap(shared, (X, 1.5), (0, None), reference=ref, exact=True)
    check_vmap(shared, (X, F), (0, 0), reference=ref, exact=True)
    check_vmap(shared, (X[1], F), (None, 0), reference=ref, exact=True)
    check_vmap(lambda x: np.nonzero(x > 0, size=size, fill_value=-1)[0], (X,), (0,),
               reference=lambda x: _sized(np.arange(6), x > 0, size, -1), exact=True)
    M = r.standard_normal((4, 5, 3))
    check_vmap(lambda m: np.compress(m[:, 0] > 0, m, axis=0, size=size), (M.transpose(1, 2, 0),), (2,),
               reference=lambda m: _sized(m, m[:, 0] > 0, size, 0), exact=True)


# --- np.bincount ------------------------------------------------------------------------------------
def test_bincount_weights_derivative():
    r = rng(38)
    x, w, g = r.integers(0, 5, 9), r.standard_normal(9), r.standard_normal(6)
    close(func.grad(lambda w: np.sum(np.bincount(x, w, minlength=6) * g))(w), g[x], 0)
    check_jac(lambda w: np.bincount(x, w, minlength=6), w)


def test_bincount_vmap():
    r = rng(39)
    X, W = r.integers(0, 5, (4, 9)), r.standard_normal((9, 4))
    check_vmap(lambda x: np.bincount(x, minlength=6), (X,), (0,), exact=True)
    f = lambda x, w: np.bincount(x, w, minlength=6)
    check_vmap(f, (X, W), (0, 1))
    check_vmap(f, (X[0], W), (None, 1))
    check_vmap(f, (X.T, W[:, 0]), (1, None))
    check_vmap(lambda w: func.grad(lambda u: np.sum(np.bincount(X[0], u, minlength=6) ** 2))(w), (W,), (1,))


@pytest.mark.parametrize("bad", [6, 9, -1])
def test_bincount_vmap_keeps_the_range_error(bad):
    """An example's value outside [0, minlength) must not land in a neighbour's bins."""
    X = rng(40).integers(0, 5, (4, 9))
    X[0, 3] = bad
    with pytest.raises(ValueError):
        func.vmap(lambda x: np.bincount(x, minlength=6))(X)


# --- compiled ---------------------------------------------------------------------------------------
def test_sort_grad_compiled_matches_eager():
    x = rng(41).standard_normal((3, 6))
    w = rng(42).standard_normal(x.shape)
    loss = lambda v: np.sum(np.sort(v, axis=1) * w) + np.sum(np.median(v, axis=0) ** 2)
    close(aot.compile(func.grad(loss))(x), func.grad(loss)(x), 1e-12)
