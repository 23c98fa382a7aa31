"""np.average, np.bincount and the histograms (np.histogram_bin_edges, np.histogram2d, np.histogramdd,
and the edges np.histogram counts over: numpy_histogram.py) with a static bin count, following
numpy's own algorithms (numpy/lib/_function_base_impl.py, _histograms_impl.py, _twodim_base_impl.py).

np.bincount is the scatter-add row's (aot/ops/scatter.py): its output length must be static, so
`minlength` is required and every value must lie below it (checked at run time). histogramdd (and
np.histogram with complex weights) computes each sample's bin with elementwise ops (uniform bins: numpy's index arithmetic and its
corrections against the edges) or with searchsorted (explicit edges, histogramdd), then count with
bincount into one extra bin that collects the samples outside the range. Edges from a static
`range` are computed by numpy at trace time; edges from the data's min and max at run time, with
numpy's checks (a non-finite range, too many bins) failing through the `require` op."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ir import dtypes as irdt

from . import numpy_reductions as red
from .emitter import Emitter, abstract_of
from .numpy_shape import reshape, transpose
from .numpy_ufuncs import apply_ufunc, emit
from .operands import (
    UnsupportedError,
    cast,
    constant,
    normalize_axes,
    result_dtype,
    scalar_like,
    to_dtype,
    to_value,
)
from .registry import translates
from .shapes import dims_equal, prod, static_int
from .static_args import is_traced

_NoValue = np._NoValue
F64 = irdt.float64


def _require(em: Emitter, x: Any, ok: Any, status: str):
    return emit(em, "require", x, ok, status=status)


def _all(em: Emitter, cond: Any):
    return red.reduce(em, "all", cond, tuple(range(abstract_of(cond).ndim)), False)


# --- np.average ---------------------------------------------------------------------------------------

def np_average(em: Emitter, a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
               keepdims: Any = _NoValue):
    x = to_value(em, a)
    av = abstract_of(x)
    axes = None if axis is None else normalize_axes(axis, av.ndim)
    keep = {} if keepdims is _NoValue else {"keepdims": keepdims}
    if weights is None:
        avg = red.np_mean(em, x, axes, **keep)
        out = abstract_of(avg)
        scl = constant(em, prod(av.shape) / prod(out.shape), out.dtype)  # numpy: a.size / avg.size
        return (avg, _broadcast_like(em, scl, avg)) if returned else avg
    w = to_value(em, weights)
    wv = abstract_of(w)
    extra = (1.0,) if av.dtype.kind in "bi" else ()
    rdt = result_dtype(em, x, w, *extra)
    if not (wv.ndim == av.ndim and all(dims_equal(p, q) for p, q in zip(wv.shape, av.shape))):
        if axes is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        want = tuple(av.shape[i] for i in axes)
        if wv.ndim != len(want) or not all(dims_equal(p, q) for p, q in zip(wv.shape, want)):
            raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
        w = transpose(em, w, list(np.argsort(axes)))  # numpy's own (odd) alignment of the weights
        w = reshape(em, w, tuple(s if i in axes else 1 for i, s in enumerate(av.shape)))
    scl = red.np_sum(em, w, axes, rdt.numpy, **keep)
    total = red.np_sum(em, apply_ufunc(em, np.multiply, x, w, dtype=rdt.numpy), axes, **keep)
    ok = emit(em, "logical_not", red.np_any(em, apply_ufunc(em, np.equal, scl, 0.0)))
    avg = _require(em, apply_ufunc(em, np.true_divide, total, scl), ok, "WEIGHTS_SUM_TO_ZERO")
    return (avg, _broadcast_like(em, scl, avg)) if returned else avg


def _broadcast_like(em: Emitter, x: Any, like: Any):
    shape = abstract_of(like).shape
    if tuple(abstract_of(x).shape) == tuple(shape):
        return x
    return emit(em, "broadcast_to", x, shape=tuple(shape))


# --- np.bincount --------------------------------------------------------------------------------------

def _static_length(em: Emitter, minlength: Any) -> int:
    if is_traced(em, minlength):
        raise UnsupportedError("np.bincount: `minlength` must be a Python int known at trace time (it is the "
                               "output length of the compiled code)")
    n = operator.index(minlength)
    if n < 0:
        raise ValueError("'minlength' must not be negative")
    return n


@translates("bincount")
def np_bincount(em: Emitter, x: Any, /, weights: Any = None, minlength: Any = 0):
    if not any(is_traced(em, v) for v in (x, weights, minlength)):
        return constant(em, np.bincount(np.asarray(x), weights, minlength))  # constants: numpy answers now
    v = to_value(em, x)
    vv = abstract_of(v)
    if vv.ndim != 1:
        raise ValueError("object too deep for desired array" if vv.ndim > 1
                         else "object of too small depth for desired array")
    if not vv.dtype.kind in "bi":
        raise TypeError(f"Cannot cast array data from dtype('{vv.dtype.numpy}') to dtype('int64') "
                        f"according to the rule 'safe'")
    n = _static_length(em, minlength)
    if n == 0:
        raise UnsupportedError("np.bincount needs `minlength` in traced code: numpy's output length is "
                               "the largest value + 1, known only at run time, so compiled code takes "
                               "minlength as the static output length (every value must be below it; larger "
                               "ones raise ValueError)")
    return bincount(em, cast(em, v, irdt.int64), weights, n)


def bincount(em: Emitter, idx: Any, weights: Any, n: int):
    """The bincount row on int64 values: int64 counts, or float64 sums of the weights."""
    if weights is None:
        return emit(em, "bincount", idx, length=n)
    w = to_value(em, weights)
    wv = abstract_of(w)
    if wv.ndim != 1 or not dims_equal(wv.shape[0], abstract_of(idx).shape[0]):
        raise ValueError("The weights and list don't have the same length.")
    if wv.dtype.is_complex:
        raise TypeError(f"Cannot cast array data from dtype('{wv.dtype.numpy}') to dtype('float64') "
                        f"according to the rule 'safe'")
    return emit(em, "bincount", idx, w, length=n)


# --- bin edges ----------------------------------------------------------------------------------------

def _bin_count_arg(bins: Any, what: str = "`bins`") -> int:
    try:
        n = operator.index(bins)
    except TypeError as e:
        raise TypeError(f"{what} must be an integer, a string, or an array") from e
    if n < 1:
        raise ValueError(f"{what} must be positive, when an integer")
    return n


def _static_outer_edges(rng: Any):
    """numpy's _get_outer_edges for a given range: Python/numpy scalars."""
    first, last = rng
    if first > last:
        raise ValueError("max must be larger than min in range parameter.")
    if not (np.isfinite(first) and np.isfinite(last)):
        raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


class _Edges:
    """Equal-width bin edges: the edges value, the outer edges and their difference (trace-time numpy
    scalars, or 0-d values), the bin count, and the np.linspace they come from (start, stop, step,
    delta and its dtype) so that single edges can be recomputed elementwise (`edge_at`)."""

    def __init__(self, first, last, denom, n, lin):
        self.first, self.last, self.denom, self.n, self.lin = first, last, denom, n, lin
        self.edges = None


def _unsigned_subtract(a: Any, b: Any):
    """numpy's _unsigned_subtract of two trace-time scalars (integers subtract as unsigned); an
    unsigned result is given as the float64 of its value (what it promotes with floats to)."""
    dt = np.result_type(a, b)
    if dt.kind != "i":
        return np.subtract(a, b, dtype=dt)
    r = np.subtract(np.asarray(a, dt), np.asarray(b, dt), casting="unsafe", dtype=np.dtype(f"u{dt.itemsize}"))
    return np.float64(r)


class _Linspace:
    """np.linspace(start, stop, num) in dtype `dt` (numpy's arithmetic: i * step + start, or
    i / div * delta + start when the step underflows to zero; the last point is stop), for any
    float values i of the point indices. start, stop, step, delta: 0-d values of dt."""

    def __init__(self, start, stop, step, delta, num: int, dt: irdt.DType, zero_step):
        self.start, self.stop, self.step, self.delta = start, stop, step, delta
        self.num, self.dt, self.zero_step = num, dt, zero_step  # zero_step: a bool, or a 0-d bool value

    def at(self, em: Emitter, i: Any):
        div = scalar_like(em, self.num - 1, self.dt)
        tiny = lambda: emit(em, "mul", emit(em, "div", i, div), self.delta)
        if self.zero_step is True:
            y = tiny()
        elif self.zero_step is False:
            y = emit(em, "mul", i, self.step)
        else:
            y = emit(em, "where", self.zero_step, tiny(), emit(em, "mul", i, self.step))
        y = emit(em, "add", y, self.start)
        return emit(em, "where", emit(em, "eq", i, div), self.stop, y)

    def points(self, em: Emitter):
        return self.at(em, emit(em, "iota", n=self.num, dtype=self.dt))


def _static_linspace(em: Emitter, first: Any, last: Any, num: int) -> _Linspace:
    dt = np.linspace(first, last, 2).dtype  # numpy's result_type(start, stop, ensure_inexact)
    delta = np.subtract(last, first, dtype=dt)
    step = delta / (num - 1)
    values = (scalar_like(em, v, to_dtype(dt)) for v in (first, last, step, delta))
    return _Linspace(*values, num, to_dtype(dt), bool(step == 0))


def _uniform_edges(em: Emitter, x: Any, n: int, rng: Any, linspace_dtype: bool) -> _Edges:
    """numpy's equal-width edges over `rng` or the data's min and max. linspace_dtype: the edges take
    np.linspace's own dtype (histogramdd), else the bin type of np.histogram."""
    xv = abstract_of(x)
    if rng is not None or isinstance(xv.shape[0], int) and xv.shape[0] == 0:
        first, last = _static_outer_edges(rng) if rng is not None else (0, 1)
        dt = None if linspace_dtype else \
            _bin_type(np.result_type(first, last, np.empty(0, xv.dtype.numpy))).numpy
        edges = np.linspace(first, last, n + 1, endpoint=True, dtype=dt)
        if np.any(edges[:-1] >= edges[1:]) and not linspace_dtype:
            raise ValueError(f"Too many bins for data range. Cannot create {n} finite-sized bins.")
        e = _Edges(first, last, _unsigned_subtract(last, first), n, _static_linspace(em, first, last, n + 1))
        e.edges = constant(em, edges)
        return e
    dt = xv.dtype if xv.dtype.is_float else F64  # the min and max's dtype, made inexact by linspace
    lo, hi = red.np_min(em, x), red.np_max(em, x)
    finite = emit(em, "logical_and", emit(em, "isfinite", lo), emit(em, "isfinite", hi))
    lo = _require(em, lo, finite, "RANGE_NOT_FINITE")
    lo, hi = cast(em, lo, dt), cast(em, hi, dt)
    same = emit(em, "eq", lo, hi)
    half = scalar_like(em, 0.5, dt)
    lo = emit(em, "where", same, emit(em, "sub", lo, half), lo)
    hi = emit(em, "where", same, emit(em, "add", hi, half), hi)
    delta = emit(em, "sub", hi, lo)
    step = emit(em, "div", delta, scalar_like(em, n, dt))
    lin = _Linspace(lo, hi, step, delta, n + 1, dt, emit(em, "eq", step, scalar_like(em, 0, dt)))
    e = _Edges(lo, hi, delta, n, lin)
    edges = lin.points(em)
    if not linspace_dtype:
        inc = apply_ufunc(em, np.less, _part(em, edges, 0, n), _part(em, edges, 1, n + 1))
        edges = _require(em, edges, _all(em, inc), "TOO_MANY_BINS")
    e.edges = edges
    return e


def _bin_type(dt: np.dtype) -> irdt.DType:
    return to_dtype(np.result_type(dt, float) if np.issubdtype(dt, np.integer) or dt == np.bool_ else dt)


def _part(em: Emitter, v: Any, start: int, stop: int):
    return emit(em, "slice", v, starts=(start,), stops=(stop,), steps=(1,))


def _edges_array(em: Emitter, bins: Any, what: str = "`bins`", message: str | None = None):
    """Explicit edges: a constant (checked now) or a value (checked at run time)."""
    msg = message or f"{what} must increase monotonically, when an array"
    if not is_traced(em, bins):
        e = np.asarray(bins)
        if np.any(e[:-1] > e[1:]):
            raise ValueError(msg)
        return constant(em, e)
    e = bins
    n = static_int(abstract_of(e).shape[0], "the number of bin edges")
    ok = _all(em, apply_ufunc(em, np.less_equal, _part(em, e, 0, n - 1), _part(em, e, 1, n)))
    return _require(em, e, ok, "BINS_NOT_MONOTONIC")


# --- bins of the samples ------------------------------------------------------------------------------

def _uniform_bins(em: Emitter, x: Any, e: _Edges):
    """numpy's bin index of each sample for equal bins (n for the samples outside the range):
    ((x - first) / (last - first)) * n truncated, then corrected against the edges."""
    n, edges = e.n, e.edges
    bt = abstract_of(edges).dtype
    keep = emit(em, "logical_and", apply_ufunc(em, np.greater_equal, x, e.first),
                apply_ufunc(em, np.less_equal, x, e.last))
    t = cast(em, x, bt)
    f = apply_ufunc(em, np.multiply, apply_ufunc(em, np.true_divide, apply_ufunc(em, np.subtract, t, e.first),
                                                 e.denom), n)
    f = emit(em, "where", keep, f, scalar_like(em, 0, abstract_of(f).dtype))  # no cast of nan or inf to int
    idx = cast(em, f, irdt.int64)
    last_bin = scalar_like(em, n - 1, irdt.int64)
    idx = emit(em, "minimum", idx, last_bin)  # the right edge belongs to the last bin
    one = scalar_like(em, 1, irdt.int64)
    bt_cast = lambda i: cast(em, e.lin.at(em, cast(em, i, e.lin.dt)), bt)
    below = emit(em, "lt", t, bt_cast(idx))
    idx = emit(em, "where", below, emit(em, "sub", idx, one), idx)
    idx = emit(em, "maximum", idx, scalar_like(em, 0, irdt.int64))  # numpy's -1: only for dropped samples
    up = emit(em, "logical_and", emit(em, "ge", t, bt_cast(emit(em, "add", idx, one))),
              emit(em, "ne", idx, last_bin))
    idx = emit(em, "where", up, emit(em, "add", idx, one), idx)
    return emit(em, "where", keep, idx, scalar_like(em, n, irdt.int64))


def _count_right(em: Emitter, edges: Any, x: Any):
    """np.searchsorted(edges, x, side='right'), compared in the common dtype."""
    dt = result_dtype(em, edges, x)
    return emit(em, "searchsorted", cast(em, edges, dt), cast(em, x, dt), side="right")


def _last_edge(em: Emitter, edges: Any):
    n = abstract_of(edges).shape[0]
    return emit(em, "reshape", _part(em, edges, n - 1, n), shape=())


def _edge_bins(em: Emitter, x: Any, edges: Any):
    """numpy's bin of each sample for explicit edges (searchsorted of the sorted samples): bin c - 1
    for c edges <= x, the last edge itself in the last bin, nb for the samples outside."""
    nb = static_int(abstract_of(edges).shape[0], "the number of bin edges") - 1
    c = _count_right(em, edges, x)
    idx = emit(em, "sub", c, scalar_like(em, 1, irdt.int64))
    on_last = apply_ufunc(em, np.equal, x, _last_edge(em, edges))
    idx = emit(em, "where", on_last, scalar_like(em, nb - 1, irdt.int64), idx)
    outside = emit(em, "logical_or", emit(em, "lt", idx, scalar_like(em, 0, irdt.int64)),
                   emit(em, "ge", idx, scalar_like(em, nb, irdt.int64)))
    return emit(em, "where", outside, scalar_like(em, nb, irdt.int64), idx), nb


def _weighted_counts(em: Emitter, idx: Any, w: Any, n: int):
    """numpy's histogram counts in the weights' dtype (int64 without weights) over n bins, from bin
    indices where n collects the dropped samples."""
    if w is None:
        return _part(em, bincount(em, idx, None, n + 1), 0, n)
    wdt = abstract_of(w).dtype
    if wdt.is_complex:
        re = _part(em, bincount(em, idx, emit(em, "real", w), n + 1), 0, n)
        im = _part(em, bincount(em, idx, emit(em, "imag", w), n + 1), 0, n)
        return cast(em, emit(em, "complex", re, im), wdt)
    return cast(em, _part(em, bincount(em, idx, w, n + 1), 0, n), wdt)


def _ravel_data(em: Emitter, fname: str, a: Any, weights: Any):
    x = to_value(em, a)
    if abstract_of(x).dtype.is_complex:
        raise UnsupportedError(f"{fname} of complex data is not supported in traced code")
    if abstract_of(x).dtype.is_bool:
        x = cast(em, x, irdt.int64)  # numpy converts bools (to uint8) with a warning
    w = None
    if weights is not None:
        w = to_value(em, weights)
        xs, ws = abstract_of(x).shape, abstract_of(w).shape
        if len(xs) != len(ws) or not all(dims_equal(p, q) for p, q in zip(xs, ws)):
            raise ValueError("weights should have the same shape as a.")
        w = reshape(em, w, (-1,))
    return reshape(em, x, (-1,)), w


def _bins_of(em: Emitter, fname: str, x: Any, bins: Any, rng: Any):
    """(edges value, uniform _Edges or None) of np.histogram's `bins` and `range`."""
    if isinstance(bins, str):
        raise UnsupportedError(f"{fname}: bins={bins!r} (an estimator) gives a data-dependent number of "
                               f"bins, which traced code cannot hold; pass the number of bins or the edges")
    if not is_traced(em, bins) and np.ndim(bins) == 0:
        e = _uniform_edges(em, x, _bin_count_arg(bins), rng, linspace_dtype=False)
        return e.edges, e
    if np.ndim(bins) != 1:
        raise ValueError("`bins` must be 1d, when an array")
    return _edges_array(em, bins), None


def np_histogram_bin_edges(em: Emitter, a: Any, bins: Any = 10, range: Any = None, weights: Any = None):
    x, _ = _ravel_data(em, "np.histogram_bin_edges", a, weights)
    return _bins_of(em, "np.histogram_bin_edges", x, bins, range)[0]


def np_histogramdd(em: Emitter, sample: Any, bins: Any = 10, range: Any = None, density: Any = None,
                   weights: Any = None):
    cols = _sample_columns(em, sample)
    d = len(cols)
    if is_traced(em, bins):
        raise UnsupportedError("np.histogramdd: pass `bins` as a sequence with one entry per dimension")
    try:
        m = len(bins)
    except TypeError:
        bins, m = d * [bins], d
    if m != d:
        raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
    if range is None:
        range = (None,) * d
    elif len(range) != d:
        raise ValueError("range argument must have one entry per dimension")
    edges, counts = [], []
    for i, (col, b) in enumerate(zip(cols, bins)):
        if not is_traced(em, b) and np.ndim(b) == 0:
            if b < 1:
                raise ValueError(f"`bins[{i}]` must be positive, when an integer")
            try:
                nb = operator.index(b)
            except TypeError as e:
                raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from e
            edges.append(_uniform_edges(em, col, nb, range[i], linspace_dtype=True).edges)
        elif np.ndim(b) == 1:
            edges.append(_edges_array(em, b, message=f"`bins[{i}]` must be monotonically increasing, when an "
                                                     f"array"))
        else:
            raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")
        c = _count_right(em, edges[-1], col)
        on_edge = apply_ufunc(em, np.equal, col, _last_edge(em, edges[-1]))
        counts.append(emit(em, "sub", c, cast(em, on_edge, irdt.int64)))
    nbin = [static_int(abstract_of(e).shape[0], "the number of bin edges") + 1 for e in edges]
    flat = counts[0]
    for c, k in zip(counts[1:], nbin[1:]):  # np.ravel_multi_index(counts, nbin)
        flat = emit(em, "add", emit(em, "mul", flat, scalar_like(em, k, irdt.int64)), c)
    w = None if weights is None else reshape(em, to_value(em, weights), (-1,))
    hist = cast(em, bincount(em, flat, w, int(np.prod(nbin))), F64)
    hist = reshape(em, hist, tuple(nbin))
    hist = emit(em, "slice", hist, starts=(1,) * d, stops=tuple(k - 1 for k in nbin), steps=(1,) * d)
    if density:
        s = red.np_sum(em, hist)
        for i, e in enumerate(edges):
            de = apply_ufunc(em, np.subtract, _part(em, e, 1, nbin[i] - 1), _part(em, e, 0, nbin[i] - 2))
            shape = [1] * d
            shape[i] = nbin[i] - 2
            hist = apply_ufunc(em, np.true_divide, hist, reshape(em, de, tuple(shape)))
        hist = apply_ufunc(em, np.true_divide, hist, s)
    return hist, edges


def _sample_columns(em: Emitter, sample: Any) -> list:
    """histogramdd's sample as D columns of one dtype (an (N, D) array, or a sequence of D 1-D arrays
    that numpy stacks with np.atleast_2d(sample).T)."""
    if em.is_value(sample):
        s = sample
        sv = abstract_of(s)
        if sv.ndim != 2:
            raise UnsupportedError("np.histogramdd: expected an (N, D) sample or a sequence of 1-D arrays")
        k = static_int(sv.shape[1], "the sample's dimension")
        cols = [emit(em, "slice", s, starts=(0, i), stops=(None, i + 1), steps=(1, 1)) for i in range(k)]
        return [reshape(em, c, (-1,)) for c in cols]
    vals = [to_value(em, c) for c in sample]
    dt = result_dtype(em, *vals)
    if dt.is_complex:
        raise UnsupportedError("np.histogramdd of complex data is not supported in traced code")
    shapes = [abstract_of(v).shape for v in vals]
    if any(len(s) != 1 for s in shapes) or not all(dims_equal(s[0], shapes[0][0]) for s in shapes):
        raise UnsupportedError("np.histogramdd: expected 1-D sample arrays of one length")
    if dt.is_bool:
        dt = irdt.int64
    return [cast(em, v, dt) for v in vals]


def np_histogram2d(em: Emitter, x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None,
                   weights: Any = None):
    if is_traced(em, bins):
        n = abstract_of(bins).shape[0] if abstract_of(bins).ndim else 1
    else:
        try:
            n = len(bins)
        except TypeError:
            n = 1
    if n != 1 and n != 2:
        bins = [bins, bins]
    hist, edges = np_histogramdd(em, [x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


# numpy functions that are not one core op (np.bincount registers with @translates)
DECOMPOSITIONS = {
    np.average: np_average, np.histogram_bin_edges: np_histogram_bin_edges,
    np.histogramdd: np_histogramdd, np.histogram2d: np_histogram2d,
}
