"""The nan-reductions (np.nansum ... np.nanargmin) by decomposition, following numpy's own formulas
(numpy/lib/_nanfunctions_impl.py): NaNs are replaced by the reduction's neutral value, and integer
and bool arrays, which hold no NaNs, take the plain reduction.

An all-NaN slice gives NaN from nanmax/nanmin (numpy also warns: compiled code does not), and
makes nanargmax/nanargmin fail at run time with numpy's ValueError (the `require` op)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ir import dtypes as irdt

from . import numpy_reductions as red
from .emitter import Emitter, abstract_of
from .numpy_shape import squeeze, take
from .numpy_ufuncs import apply_ufunc, emit
from .operands import cast, no_out, scalar_like, to_dtype, to_value
from .shapes import dim_equals

_NoValue = np._NoValue


def replace_nan(em: Emitter, a: Any, value: float):
    """numpy's _replace_nan: (a with NaNs set to `value`, the NaN mask); the mask is None for dtypes
    that hold no NaNs."""
    x = to_value(em, a)
    dt = abstract_of(x).dtype
    if not dt.is_inexact:
        return x, None
    mask = emit(em, "isnan", x)
    return emit(em, "where", mask, scalar_like(em, value, dt), x), mask


def _nan_sum_like(fname: str, plain, neutral: int):
    def translate(em: Emitter, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
                  keepdims: Any = _NoValue, initial: Any = _NoValue, where: Any = _NoValue):
        x, _ = replace_nan(em, a, neutral)
        return plain(em, x, axis, dtype, out, keepdims, initial, where)

    translate.__name__ = f"np_{fname}"
    return translate


np_nansum = _nan_sum_like("nansum", red.np_sum, 0)
np_nanprod = _nan_sum_like("nanprod", red.np_prod, 1)


def _nan_extremum(fname: str, plain, greater: bool):
    """np.fmax.reduce / np.fmin.reduce: NaNs lose to every number; an all-NaN slice is NaN (with
    `initial`, numpy's fmax(initial, nan) gives initial)."""
    def translate(em: Emitter, a: Any, axis: Any = None, out: Any = None, keepdims: Any = _NoValue,
                  initial: Any = _NoValue, where: Any = _NoValue):
        no_out(f"np.{fname}", out)
        x = to_value(em, a)
        av = abstract_of(x)
        if not av.dtype.is_inexact:
            return plain(em, x, axis, out, keepdims, initial, where)
        axes = red.ufunc_axes(axis, av.ndim)
        if initial is _NoValue and any(dim_equals(av.shape[i], 0) for i in axes):
            op = "fmax" if greater else "fmin"
            raise ValueError(f"zero-size array to reduction operation {op} which has no identity")
        loser = -np.inf if greater else np.inf
        fill = complex(loser, loser) if av.dtype.is_complex else loser
        nan = emit(em, "isnan", x)
        filled = emit(em, "where", nan, scalar_like(em, fill, av.dtype), x)
        r = plain(em, filled, axis, None, keepdims, initial, where)
        if initial is not _NoValue:
            return r
        all_nan = red.np_all(em, nan, axis, None, keepdims, where=where)
        return emit(em, "where", all_nan, _all_nan_value(em, x, axes, keepdims, where), r)

    translate.__name__ = f"np_{fname}"
    return translate


def _all_nan_value(em: Emitter, x: Any, axes: tuple[int, ...], keepdims: Any, where: Any):
    """What an all-NaN slice gives: numpy's fmax.reduce starts from the slice's first element and
    keeps it against every other NaN, so a complex slice gives that element (nan-infj, not nan+0j);
    NaN itself where the first element is not known now (a `where`, a length that is a symbol)."""
    av = abstract_of(x)
    static = all(isinstance(av.shape[i], int) and av.shape[i] > 0 for i in axes)
    if not av.dtype.is_complex or where is not _NoValue or not axes or not static:
        return scalar_like(em, np.nan, av.dtype)
    first = x
    for i in axes:
        first = take(em, first, [0], i)
    return first if red._keepdims(keepdims) else squeeze(em, first, axes)


np_nanmax = _nan_extremum("nanmax", red.np_max, greater=True)
np_nanmin = _nan_extremum("nanmin", red.np_min, greater=False)


def _nan_arg_extremum(fname: str, plain, fill: float):
    def translate(em: Emitter, a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = _NoValue):
        no_out(f"np.{fname}", out)
        x, mask = replace_nan(em, a, fill)
        if mask is None:
            return plain(em, x, axis, keepdims=keepdims)
        if any(dim_equals(d, 0) for d in abstract_of(x).shape):  # numpy: argmax's own error
            return plain(em, x, axis, keepdims=keepdims)
        r = plain(em, x, axis, keepdims=keepdims)
        all_nan = red.np_all(em, mask, axis)
        ok = emit(em, "logical_not", red.np_any(em, all_nan))
        return emit(em, "require", r, ok, status="ALL_NAN_SLICE")

    translate.__name__ = f"np_{fname}"
    return translate


np_nanargmax = _nan_arg_extremum("nanargmax", red.np_argmax, -np.inf)
np_nanargmin = _nan_arg_extremum("nanargmin", red.np_argmin, np.inf)


def _inexact_dtype(dtype: Any):
    if dtype is None:
        return None
    dt = to_dtype(dtype, "dtype")
    if not dt.is_inexact:
        raise TypeError("If a is inexact, then dtype must be inexact")
    return dt


def divide_by_count(em: Emitter, total: Any, count: Any):
    """numpy's _divide_by_count: total / count computed in their promoted dtype, cast back to
    total's dtype."""
    return cast(em, apply_ufunc(em, np.true_divide, total, count), abstract_of(total).dtype)


def np_nanmean(em: Emitter, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
               keepdims: Any = _NoValue, *, where: Any = _NoValue):
    no_out("np.nanmean", out)
    arr, mask = replace_nan(em, a, 0)
    if mask is None:
        return red.np_mean(em, arr, axis, dtype, None, keepdims, where=where)
    dtype = _inexact_dtype(dtype)
    cnt = red.np_sum(em, emit(em, "logical_not", mask), axis, irdt.int64.numpy, None, keepdims, where=where)
    tot = red.np_sum(em, arr, axis, dtype, None, keepdims, where=where)
    return divide_by_count(em, tot, cnt)


def np_nanvar(em: Emitter, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
              keepdims: Any = _NoValue, *, where: Any = _NoValue, mean: Any = _NoValue,
              correction: Any = _NoValue):
    return _nanvar(em, "nanvar", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def np_nanstd(em: Emitter, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
              keepdims: Any = _NoValue, *, where: Any = _NoValue, mean: Any = _NoValue,
              correction: Any = _NoValue):
    return apply_ufunc(em, np.sqrt, _nanvar(em, "nanstd", a, axis, dtype, out, ddof, keepdims, where, mean,
                                            correction))


def _nanvar(em: Emitter, fname: str, a, axis, dtype, out, ddof, keepdims, where, mean, correction):
    no_out(f"np.{fname}", out)
    arr, mask = replace_nan(em, a, 0)
    if mask is None:
        return red.np_var(em, arr, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                          correction=correction)
    dtype = _inexact_dtype(dtype)
    if correction is not _NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    cnt = red.np_sum(em, emit(em, "logical_not", mask), axis, irdt.int64.numpy, None, True, where=where)
    if mean is not _NoValue:
        avg = to_value(em, mean)
    else:
        avg = divide_by_count(em, red.np_sum(em, arr, axis, dtype, None, True, where=where), cnt)
    dt = abstract_of(arr).dtype
    d = cast(em, apply_ufunc(em, np.subtract, arr, avg), dt)  # np.subtract(..., out=arr, casting="unsafe")
    d = emit(em, "where", mask, scalar_like(em, 0, dt), d)
    if dt.is_complex:
        sqr = emit(em, "real", emit(em, "mul", d, emit(em, "conj", d)))
    else:
        sqr = emit(em, "mul", d, d)
    var = red.np_sum(em, sqr, axis, dtype, None, keepdims, where=where)
    if abstract_of(var).ndim < abstract_of(cnt).ndim:
        cnt = red.np_sum(em, cnt, axis, None, None, False)  # keepdims=False: drop the kept unit dims
    dof = apply_ufunc(em, np.subtract, cnt, ddof)
    var = divide_by_count(em, var, dof)
    bad = apply_ufunc(em, np.less_equal, dof, 0)
    return emit(em, "where", bad, scalar_like(em, np.nan, abstract_of(var).dtype), var)


# numpy functions that are not one core op
DECOMPOSITIONS = {
    np.nansum: np_nansum, np.nanprod: np_nanprod, np.nanmax: np_nanmax, np.nanmin: np_nanmin,
    np.nanargmax: np_nanargmax, np.nanargmin: np_nanargmin, np.nanmean: np_nanmean, np.nanvar: np_nanvar,
    np.nanstd: np_nanstd,
}
