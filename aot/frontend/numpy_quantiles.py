"""np.median, np.percentile, np.quantile and their NaN-ignoring forms by decomposition: the reduced
axes are moved last and merged, and the order statistics the formulas need (NaNs sort to the end)
are selected from the lanes by one select_kth (numpy_selection.order_statistics: no full sort),
with numpy's own formulas (numpy/lib/_function_base_impl.py: _median, _quantile,
_get_indexes, _lerp and the methods' virtual indexes; _nanfunctions_impl.py) so that results and
dtypes match numpy's.

Sizes numpy holds as Python ints (the number of elements of a lane, or of its non-NaN ones) are
run-time values here when the lane length is symbolic or NaNs are ignored: `Count` keeps them weak
(they take the dtype of the other operand, as a Python int does under NEP 50). A scalar Python q
makes numpy interpolate with a Python float; that is reproduced by casting the weight to the
interpolation's dtype (what numpy's weak promotion does), so both give the same bits.

q must be known when tracing (Python scalars, lists or numpy arrays): numpy validates its values.
Refused: `out=`, `weights=`. Gaps: when a 0-d result holds a NaN numpy returns it in the input's
dtype where the interpolation's dtype is wider (a data-dependent dtype); float16 inputs are not a
dialect dtype.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ir import dtypes as irdt

from .emitter import Emitter, abstract_of
from .numpy_reductions import np_mean, np_sum
from .numpy_selection import order_statistics
from .numpy_shape import reshape, transpose
from .numpy_ufuncs import apply_ufunc, emit, np_where
from .operands import UnsupportedError, cast, constant, full, no_out, normalize_axes, result_dtype, to_value
from .shapes import dim_equals, dim_le, prod

_NoValue = np._NoValue
MA_MEDIAN_LIMIT = 600  # np.nanmedian takes np.ma.median below this lane length (numpy's _nanmedian)
METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
           "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint",
           "nearest")
_ALPHA_BETA = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}


class Count:
    """A Python int of numpy's code known only at run time (an int64 value): weak in arithmetic."""

    def __init__(self, value: Any):
        self.value = value


def _op(em: Emitter, ufunc: np.ufunc, *args: Any):
    """ufunc(*args) with a Count taking the place of a weak Python int (and Python ints kept so)."""
    if ufunc in (np.add, np.subtract) and all(type(a) is int for a in args):
        return args[0] + args[1] if ufunc is np.add else args[0] - args[1]
    if not any(isinstance(a, Count) for a in args):
        return apply_ufunc(em, ufunc, *args)
    others = [a for a in args if not isinstance(a, Count)]
    if ufunc in (np.add, np.subtract) and all(type(o) is int for o in others):
        return Count(apply_ufunc(em, ufunc, *(a.value if isinstance(a, Count) else a for a in args)))
    dt = result_dtype(em, 0, *others)
    return apply_ufunc(em, ufunc, *(cast(em, a.value, dt) if isinstance(a, Count) else a for a in args))


# --- lanes --------------------------------------------------------------------------------------
class Lanes:
    """The reduced axes of x moved last and merged into one of length n: shape kshape + (n,)."""

    def __init__(self, em: Emitter, x: Any, axis: Any):
        av = abstract_of(x)
        self.axes = normalize_axes(axis, av.ndim)
        keep = [k for k in range(av.ndim) if k not in self.axes]
        self.kshape = tuple(av.shape[k] for k in keep)
        self.keep_shape = tuple(1 if k in self.axes else av.shape[k] for k in range(av.ndim))
        self.n = prod(av.shape[k] for k in self.axes)
        self.axis_given = axis is not None
        y = transpose(em, x, keep + list(self.axes)) if av.ndim else x
        self.y = reshape(em, y, self.kshape + (self.n,))
        self.last = len(self.kshape)
        self.empty = dim_equals(prod(av.shape), 0)

    def select(self, em: Emitter, positions: list) -> list:
        """The sorted lanes' elements at each int64 array of positions ((Q,) for every lane, or
        kshape + (Q,) per lane; -1 the last), selected together: kshape + (Q,) each."""
        return order_statistics(em, self.y, self.last, positions)

    def finish(self, em: Emitter, r: Any, qshape: tuple, keepdims: bool):
        """r (kshape + (Q,)) as numpy's result: q's dims first, then the kept (or keepdims) dims."""
        rest = self.keep_shape if keepdims else self.kshape
        if not qshape:
            return reshape(em, r, rest)
        r = transpose(em, r, [self.last] + list(range(self.last)))
        return reshape(em, r, qshape + rest)

    def counts(self, em: Emitter):
        """Non-NaN elements per lane, kshape + (1,) (int64)."""
        valid = apply_ufunc(em, np.logical_not, apply_ufunc(em, np.isnan, self.y))
        return np_sum(em, cast(em, valid, irdt.int64), axis=self.last, keepdims=True)


def _index(em: Emitter, i: Any):
    """A (1,) int64 index from a Python int or a size expression (computed at run time)."""
    v = constant(em, i, irdt.int64)
    return reshape(em, v, (1,))


def _mean_dtype(dt):
    return dt if dt.is_inexact else irdt.float64


# --- median -------------------------------------------------------------------------------------
def _mean_of(em: Emitter, parts: list, last: int):
    """np.mean of the gathered elements (each kshape + (1,)), as numpy's _median takes it."""
    v = parts[0] if len(parts) == 1 else emit(em, "concatenate", *parts, axis=last)
    return np_mean(em, v, axis=last, keepdims=True)


def np_median(em: Emitter, a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False):
    no_out("np.median", out)
    x = to_value(em, a)
    dt = abstract_of(x).dtype
    ln = Lanes(em, x, axis)
    if dim_equals(ln.n, 0):  # the mean of nothing: nan (numpy warns)
        return full(em, ln.keep_shape if keepdims else ln.kshape, np.nan, _mean_dtype(dt))
    lo, hi = (ln.n - 1) // 2, ln.n // 2
    static = isinstance(ln.n, int)
    want = [constant(em, np.array(sorted({lo, hi})), irdt.int64)] if static else [_index(em, lo), _index(em, hi)]
    tail = dt.is_inexact  # numpy's _median_nancheck: a lane holding a NaN has it last
    got = ln.select(em, want + [_index(em, -1)] if tail else want)
    if static:
        r = _mean_of(em, got[:1], ln.last)
    else:  # the parity is known at run time
        vlo, vhi = got[0], got[1]
        odd = apply_ufunc(em, np.equal, want[0], want[1])
        r = np_where(em, odd, _mean_of(em, [vhi], ln.last), _mean_of(em, [vlo, vhi], ln.last))
    if tail:
        r = np_where(em, apply_ufunc(em, np.isnan, got[-1]), got[-1], r)
    return ln.finish(em, r, (), bool(keepdims))


def np_nanmedian(em: Emitter, a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                 keepdims: Any = _NoValue):
    no_out("np.nanmedian", out)
    keep = False if keepdims is _NoValue else bool(keepdims)
    x = to_value(em, a)
    dt = abstract_of(x).dtype
    if not dt.is_inexact:
        return np_median(em, x, axis, keepdims=keep)
    ln = Lanes(em, x, axis)
    if ln.empty:  # numpy answers np.nanmean
        return full(em, ln.keep_shape if keep else ln.kshape, np.nan, dt)
    cnt = ln.counts(em)
    ilo = apply_ufunc(em, np.floor_divide, apply_ufunc(em, np.subtract, cnt, 1), 2)
    ihi = apply_ufunc(em, np.floor_divide, cnt, 2)
    vlo, vhi = ln.select(em, [ilo, ihi])
    # np.ma.median (lanes along an axis of a >1-d array, shorter than 600) averages a lone middle
    # element with itself; np.median (the other lanes) takes it as it is
    ma = ln.axis_given and ln.last >= 1 and dim_le(ln.n, MA_MEDIAN_LIMIT - 1)
    odd = _mean_of(em, [vhi, vhi] if ma else [vhi], ln.last)
    r = np_where(em, apply_ufunc(em, np.equal, ilo, ihi), odd, _mean_of(em, [vlo, vhi], ln.last))
    r = np_where(em, apply_ufunc(em, np.equal, cnt, 0), np.nan, r)
    return ln.finish(em, r, (), keep)


# --- quantiles ----------------------------------------------------------------------------------
def _q_array(q: Any, percent: bool) -> tuple[np.ndarray, bool]:
    """q as numpy's _quantile sees it (and whether it is weak: a Python int or float), validated."""
    if hasattr(q, "dtype") and not isinstance(q, (np.ndarray, np.generic)):
        raise UnsupportedError("a traced q is not supported (numpy validates its values); pass Python "
                               "numbers, lists or numpy arrays")
    weak = type(q) in (int, float)
    arr = np.true_divide(q, 100) if percent else np.asanyarray(q)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"q must be real numbers, got dtype {arr.dtype}")
    with np.errstate(invalid="ignore"):
        valid = bool(np.all((arr >= 0) & (arr <= 1)))
    if not valid:
        raise ValueError("Percentiles must be in the range [0, 100]" if percent else
                         "Quantiles must be in the range [0, 1]")
    if arr.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    return arr, weak


def _discrete(em: Emitter, index: Any, odd_rule: bool):
    """numpy's _discrete_interpolation_to_boundaries (inverted_cdf, closest_observation)."""
    prev = apply_ufunc(em, np.floor, index)
    nxt = apply_ufunc(em, np.add, prev, 1)
    gamma = apply_ufunc(em, np.subtract, index, prev)
    cond = apply_ufunc(em, np.equal, gamma, 0)
    if odd_rule:
        odd = apply_ufunc(em, np.equal, apply_ufunc(em, np.remainder, prev, 2), 1)
        cond = apply_ufunc(em, np.logical_and, cond, odd)
    res = cast(em, np_where(em, cond, prev, nxt), irdt.int64)
    return np_where(em, apply_ufunc(em, np.less, res, 0), 0, res)


def _virtual_index(em: Emitter, method: str, n: Any, q: Any):
    """('take', indices) or ('lerp', virtual indexes, gamma rule) of `method` for lanes of n."""
    nm1 = _op(em, np.subtract, n, 1)
    if method in ("lower", "higher", "nearest"):
        ufunc = {"lower": np.floor, "higher": np.ceil, "nearest": np.rint}[method]
        return "take", cast(em, apply_ufunc(em, ufunc, _op(em, np.multiply, nm1, q)), irdt.int64)
    if method == "inverted_cdf":
        return "take", _discrete(em, _op(em, np.subtract, _op(em, np.multiply, n, q), 1), False)
    if method == "closest_observation":
        index = apply_ufunc(em, np.subtract, _op(em, np.subtract, _op(em, np.multiply, n, q), 1), 0.5)
        return "take", _discrete(em, index, True)
    if method == "linear":
        vi = _op(em, np.multiply, nm1, q)
        return ("take", vi) if abstract_of(vi).dtype.is_int else ("lerp", vi, None)
    if method == "midpoint":
        t = _op(em, np.multiply, nm1, q)
        vi = apply_ufunc(em, np.multiply, 0.5,
                         apply_ufunc(em, np.add, apply_ufunc(em, np.floor, t), apply_ufunc(em, np.ceil, t)))
        return "lerp", vi, "midpoint"
    if method == "averaged_inverted_cdf":
        return "lerp", _op(em, np.subtract, _op(em, np.multiply, n, q), 1), "averaged"
    alpha, beta = _ALPHA_BETA[method]
    corr = apply_ufunc(em, np.add, alpha, apply_ufunc(em, np.multiply, q, 1 - alpha - beta))
    vi = apply_ufunc(em, np.subtract, apply_ufunc(em, np.add, _op(em, np.multiply, n, q), corr), 1)
    return "lerp", vi, None


def _indexes(em: Emitter, vi: Any, n: Any):
    """numpy's _get_indexes: floor and floor + 1, both -1 (the last) at or past n - 1, 0 below 0."""
    prev = apply_ufunc(em, np.floor, vi)
    nxt = apply_ufunc(em, np.add, prev, 1)
    above = _op(em, np.greater_equal, vi, _op(em, np.subtract, n, 1))
    below = apply_ufunc(em, np.less, vi, 0)
    prev, nxt = (np_where(em, below, 0, np_where(em, above, -1, v)) for v in (prev, nxt))
    return prev, nxt


def _gamma(em: Emitter, vi: Any, prev: Any, rule: str | None):
    """numpy's _get_gamma: the fractional part, fixed by the method, in the virtual indexes' dtype."""
    vdt = abstract_of(vi).dtype
    gamma = apply_ufunc(em, np.subtract, vi, prev)
    if rule == "midpoint":
        integral = apply_ufunc(em, np.equal, apply_ufunc(em, np.remainder, vi, 1), 0)
        gamma = np_where(em, integral, 0.0, 0.5)
    elif rule == "averaged":
        gamma = np_where(em, apply_ufunc(em, np.equal, gamma, 0), 0.5, 1.0)
    return cast(em, gamma, vdt)


def _lerp(em: Emitter, a: Any, b: Any, t: Any, weak: bool):
    """numpy's _lerp; `weak`: t stands for a Python float (numpy's float(gamma) for a scalar q)."""
    diff = apply_ufunc(em, np.subtract, b, a)
    mask = apply_ufunc(em, np.greater_equal, t, 0.5)
    one_minus = apply_ufunc(em, np.subtract, 1.0 if weak else 1, t)
    if weak:  # a Python float operand converts to the array's dtype: cast it there
        to = result_dtype(em, a, 0.0)
        t, one_minus = cast(em, t, to), cast(em, one_minus, to)
    lerp = apply_ufunc(em, np.add, a, apply_ufunc(em, np.multiply, diff, t))
    dt = abstract_of(lerp).dtype
    back = cast(em, apply_ufunc(em, np.multiply, diff, one_minus), dt)
    alt = apply_ufunc(em, np.subtract, cast(em, b, dt), back)
    return np_where(em, mask, alt, lerp)


def _relative(em: Emitter, idx: Any, n: Any):
    """Indices from the end (-1) made absolute for lanes of n valid elements (ignored NaNs follow)."""
    if not isinstance(n, Count) or abstract_of(n.value).ndim == 0:
        return idx  # the gathers count -1 from the end of the lane
    return np_where(em, apply_ufunc(em, np.less, idx, 0), apply_ufunc(em, np.add, idx, n.value), idx)


def _quantile(em: Emitter, fname: str, a: Any, q: Any, axis: Any, method: str, keepdims: bool,
              ignore_nan: bool, percent: bool, out: Any, weights: Any):
    no_out(f"np.{fname}", out)
    if weights is not None:
        raise UnsupportedError(f"np.{fname}: `weights` is not supported in traced code")
    x = to_value(em, a)
    dt = abstract_of(x).dtype
    if dt.is_complex:
        raise TypeError("a must be an array of real numbers")
    qarr, weak = _q_array(q, percent)
    if method not in METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {dict.fromkeys(METHODS).keys()}")
    ignore_nan = ignore_nan and dt.is_inexact  # numpy's nan forms of int data are the plain ones
    ln = Lanes(em, x, axis)
    if ignore_nan and ln.empty:  # numpy answers np.nanmean
        return full(em, ln.keep_shape if keepdims else ln.kshape, np.nan, dt)
    if dim_equals(ln.n, 0):
        raise IndexError(f"index -1 is out of bounds for axis 0 with size {ln.n}")
    cnt = ln.counts(em) if ignore_nan else None
    if ignore_nan:
        n = Count(cnt)
    else:
        n = ln.n if isinstance(ln.n, int) else Count(constant(em, ln.n, irdt.int64))
    qv = constant(em, qarr.reshape(-1))
    kind, vi, *rule = _virtual_index(em, method, n, qv)
    if kind == "take":
        want = [_relative(em, vi, n)]
    else:
        prev, nxt = (cast(em, i, irdt.int64) for i in _indexes(em, vi, n))
        want = [_relative(em, i, n) for i in (prev, nxt)]
    tail = not ignore_nan and dt.is_inexact  # a lane holding a NaN has it last: numpy copies it
    got = ln.select(em, want + [_index(em, -1)] if tail else want)
    if kind == "take":
        r = got[0]
    else:
        r = _lerp(em, got[0], got[1], _gamma(em, vi, prev, rule[0]), weak)
    if ignore_nan:
        r = np_where(em, apply_ufunc(em, np.equal, cnt, 0), np.nan, r)
    elif tail:  # into that lane's results
        r = np_where(em, apply_ufunc(em, np.isnan, got[-1]), got[-1], r)
    return ln.finish(em, r, qarr.shape, bool(keepdims))


def np_quantile(em: Emitter, a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights: Any = None):
    return _quantile(em, "quantile", a, q, axis, method, keepdims, False, False, out, weights)


def np_percentile(em: Emitter, a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
                  weights: Any = None):
    return _quantile(em, "percentile", a, q, axis, method, keepdims, False, True, out, weights)


def np_nanquantile(em: Emitter, a: Any, q: Any, axis: Any = None, out: Any = None,
                   overwrite_input: bool = False, method: str = "linear", keepdims: Any = _NoValue, *,
                   weights: Any = None):
    keep = False if keepdims is _NoValue else bool(keepdims)
    return _quantile(em, "nanquantile", a, q, axis, method, keep, True, False, out, weights)


def np_nanpercentile(em: Emitter, a: Any, q: Any, axis: Any = None, out: Any = None,
                     overwrite_input: bool = False, method: str = "linear", keepdims: Any = _NoValue, *,
                     weights: Any = None):
    keep = False if keepdims is _NoValue else bool(keepdims)
    return _quantile(em, "nanpercentile", a, q, axis, method, keep, True, True, out, weights)


DECOMPOSITIONS = {np.median: np_median, np.nanmedian: np_nanmedian, np.quantile: np_quantile,
                  np.percentile: np_percentile, np.nanquantile: np_nanquantile,
                  np.nanpercentile: np_nanpercentile}
