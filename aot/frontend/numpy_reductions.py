"""Reductions: sum, prod, max, min, any, all, argmax, argmin as core ops; mean, var, std and
count_nonzero by decomposition, following numpy's own formulas (numpy/_core/_methods.py) so that
accumulation dtypes and results match."""
from __future__ import annotations

from typing import Any

import numpy as np

from ir import dtypes as irdt
from ir.dtypes import DType
from ir.reductions import REDUCTIONS
from ir.structural import reduced_shape
from ir.symbols import is_static, sympy

from .emitter import Emitter, abstract_of
from .numpy_ufuncs import apply_ufunc, emit
from .operands import (
    UnsupportedError,
    scalar_like,
    cast,
    full,
    no_out,
    normalize_axes,
    normalize_axis,
    to_dtype,
    to_value,
)
from .shapes import dim_equals, prod, static_int

_NoValue = np._NoValue


def _keepdims(keepdims: Any) -> bool:
    return False if keepdims is _NoValue else bool(keepdims)


def _no_where(fname: str, where: Any) -> None:
    if where is not _NoValue and where is not True:
        raise UnsupportedError(f"np.{fname}: the `where` argument is not supported in traced code")


def ufunc_axes(axis: Any, rank: int) -> tuple[int, ...]:
    """Axes of a ufunc reduction: numpy also accepts a plain int axis 0 or -1 of a 0-d array
    (reducing over nothing), though not inside a tuple."""
    if rank == 0 and isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) and axis in (0, -1):
        return ()
    return normalize_axes(axis, rank)


def reduce(em: Emitter, op: str, x: Any, axes: tuple[int, ...], keepdims: bool):
    """Core reduction `op` over `axes` (already normalised)."""
    if not axes:
        return _combine_identity(em, op, x)
    return emit(em, op, x, axes=tuple(sorted(axes)), keepdims=keepdims)


def _combine_identity(em: Emitter, op: str, x: Any):
    """A reduction over no axes: numpy still combines each element with the identity, which shows
    for floats (0.0 + -0.0 is +0.0) and complex infinities (1 * (inf-1j) is inf+nanj)."""
    kind, dt = REDUCTIONS[op], abstract_of(x).dtype
    if kind.identity not in ("zero", "one") or kind.ufunc is None or not dt.is_inexact:
        return x  # max/min keep x; any/all reduce bools
    return apply_ufunc(em, kind.ufunc, x, scalar_like(em, 0 if kind.identity == "zero" else 1, dt))


def sum_in(em: Emitter, x: Any, axes: tuple[int, ...], keepdims: bool, acc: DType):
    """sum accumulated and returned in `acc` (the core op widens small ints by itself)."""
    return cast(em, reduce(em, "sum", cast(em, x, acc), axes, keepdims), acc)


def _empty_with_initial(em: Emitter, av, axes: tuple[int, ...], keepdims: bool, initial: Any, dt: DType):
    """Reducing a zero-size axis with `initial`: every result element is `initial`."""
    shape = reduced_shape(tuple(av.shape), axes, keepdims)
    return full(em, shape, np.asarray(initial).astype(dt.numpy).item(), dt)


def sum_dtype(x_dt: DType, dtype: Any) -> DType:
    """numpy's accumulator of add/multiply.reduce (`dtype=`, else the sum record's rule)."""
    if dtype is not None:
        return to_dtype(dtype, "dtype")
    return REDUCTIONS["sum"].result(x_dt)


def _sum_like(fname: str, core: str, ufunc: np.ufunc):
    def translate(em: Emitter, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
                  keepdims: Any = _NoValue, initial: Any = _NoValue, where: Any = _NoValue):
        no_out(f"np.{fname}", out)
        _no_where(fname, where)
        x = to_value(em, a)
        av = abstract_of(x)
        axes = ufunc_axes(axis, av.ndim)
        acc = sum_dtype(av.dtype, dtype)
        r = cast(em, reduce(em, core, cast(em, x, acc), axes, _keepdims(keepdims)), acc)
        if initial is not _NoValue:
            r = apply_ufunc(em, ufunc, r, initial)
            r = cast(em, r, acc)
        return r

    translate.__name__ = f"np_{fname}"
    return translate


np_sum = _sum_like("sum", "sum", np.add)
np_prod = _sum_like("prod", "prod", np.multiply)


def _extremum(fname: str, core: str, bool_core: str, ufunc: np.ufunc):
    def translate(em: Emitter, a: Any, axis: Any = None, out: Any = None, keepdims: Any = _NoValue,
                  initial: Any = _NoValue, where: Any = _NoValue):
        no_out(f"np.{fname}", out)
        _no_where(fname, where)
        x = to_value(em, a)
        av = abstract_of(x)
        axes = ufunc_axes(axis, av.ndim)
        if any(dim_equals(av.shape[i], 0) for i in axes):
            if initial is _NoValue:
                raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} which has no "
                                 f"identity")
            return _empty_with_initial(em, av, axes, _keepdims(keepdims), initial, av.dtype)
        r = reduce(em, bool_core if av.dtype.is_bool else core, x, axes, _keepdims(keepdims))
        if initial is not _NoValue:
            r = cast(em, apply_ufunc(em, ufunc, r, initial), av.dtype)
        return r

    translate.__name__ = f"np_{fname}"
    return translate


np_max = _extremum("max", "max", "any", np.maximum)
np_min = _extremum("min", "min", "all", np.minimum)


def _any_all(fname: str):
    def translate(em: Emitter, a: Any, axis: Any = None, out: Any = None, keepdims: Any = _NoValue, *,
                  where: Any = _NoValue):
        no_out(f"np.{fname}", out)
        _no_where(fname, where)
        x = to_value(em, a)
        axes = ufunc_axes(axis, abstract_of(x).ndim)
        return reduce(em, fname, cast(em, x, irdt.bool_), axes, _keepdims(keepdims))

    translate.__name__ = f"np_{fname}"
    return translate


np_any = _any_all("any")
np_all = _any_all("all")


def _arg_extremum(fname: str):
    def translate(em: Emitter, a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = _NoValue):
        no_out(f"np.{fname}", out)
        x = to_value(em, a)
        av = abstract_of(x)
        keep = _keepdims(keepdims)
        if isinstance(axis, (tuple, list)):
            raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
        if axis is None or ufunc_axes(axis, av.ndim) == ():  # a 0-d array's axis 0/-1 is its one element
            if any(dim_equals(d, 0) for d in av.shape):
                raise ValueError(f"attempt to get {fname} of an empty sequence")
            flat = emit(em, "reshape", x, shape=(prod(av.shape),)) if av.ndim != 1 else x
            r = emit(em, fname, flat, axis=0, keepdims=False)
            return emit(em, "reshape", r, shape=(1,) * av.ndim) if keep else r
        ax = normalize_axis(axis, av.ndim)
        if dim_equals(av.shape[ax], 0):
            raise ValueError(f"attempt to get {fname} of an empty sequence")
        return emit(em, fname, x, axis=ax, keepdims=keep)

    translate.__name__ = f"np_{fname}"
    return translate


np_argmax = _arg_extremum("argmax")
np_argmin = _arg_extremum("argmin")


def _count(av, axes: tuple[int, ...]):
    """Elements reduced over: an int, or a size expression when the axes are symbolic."""
    return prod(av.shape[i] for i in axes)


def _divisor(em: Emitter, like: Any, n: Any):
    """n as numpy divides by it: a weak Python int, or, for a symbolic size, a 0-d array of `like`'s
    dtype holding the size computed at run time (the same value numpy's weak int converts to)."""
    if is_static(n):
        return n
    dt = abstract_of(like).dtype
    return emit(em, "full", shape=(), value=n, dtype=dt if dt.is_inexact else irdt.float64)


def np_mean(em: Emitter, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: Any = _NoValue, *, where: Any = _NoValue):
    no_out("np.mean", out)
    _no_where("mean", where)
    x = to_value(em, a)
    av = abstract_of(x)
    axes = normalize_axes(axis, av.ndim)
    acc = to_dtype(dtype, "dtype") if dtype is not None else (
        av.dtype if av.dtype.is_inexact else irdt.float64)
    s = sum_in(em, x, axes, _keepdims(keepdims), acc)
    return _divide_unsafe(em, s, _count(av, axes))


def _divide_unsafe(em: Emitter, s: Any, n: int):
    """s / n cast back to s's dtype (numpy's true_divide(..., out=s, casting='unsafe'))."""
    dt = abstract_of(s).dtype
    return cast(em, apply_ufunc(em, np.true_divide, s, _divisor(em, s, n)), dt)


def np_var(em: Emitter, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: Any = _NoValue, *, where: Any = _NoValue, mean: Any = _NoValue,
           correction: Any = _NoValue):
    return _var(em, "var", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def np_std(em: Emitter, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: Any = _NoValue, *, where: Any = _NoValue, mean: Any = _NoValue,
           correction: Any = _NoValue):
    v = _var(em, "std", a, axis, dtype, out, ddof, keepdims, where, mean, correction)
    return apply_ufunc(em, np.sqrt, v)


def _var(em: Emitter, fname: str, a, axis, dtype, out, ddof, keepdims, where, mean, correction):
    no_out(f"np.{fname}", out)
    _no_where(fname, where)
    if mean is not _NoValue:
        raise UnsupportedError(f"np.{fname}: the `mean` argument is not supported in traced code")
    if correction is not _NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    x = to_value(em, a)
    av = abstract_of(x)
    axes = normalize_axes(axis, av.ndim)
    if dtype is None and not av.dtype.is_inexact:
        dtype = np.float64
    acc = sum_dtype(av.dtype, dtype)
    n = _count(av, axes)
    arrmean = _divide_unsafe(em, sum_in(em, x, axes, True, acc), n)
    d = apply_ufunc(em, np.subtract, x, arrmean)
    ddt = abstract_of(d).dtype
    if ddt.is_complex:
        re, im = emit(em, "real", d), emit(em, "imag", d)
        sq = emit(em, "add", emit(em, "mul", re, re), emit(em, "mul", im, im))
    else:
        sq = emit(em, "mul", d, d)
    ret = sum_in(em, sq, axes, _keepdims(keepdims), sum_dtype(abstract_of(sq).dtype, dtype))
    count = max(n - ddof, 0) if is_static(n) else sympy().Max(n - ddof, 0)
    return apply_ufunc(em, np.true_divide, ret, _divisor(em, ret, count))


def np_count_nonzero(em: Emitter, a: Any, axis: Any = None, *, keepdims: bool = False):
    x = to_value(em, a)
    av = abstract_of(x)
    nz = cast(em, x, irdt.bool_)
    return reduce(em, "sum", cast(em, nz, irdt.int64), normalize_axes(axis, av.ndim), keepdims)


def np_ptp(em: Emitter, a: Any, axis: Any = None, out: Any = None, keepdims: Any = _NoValue):
    no_out("np.ptp", out)
    hi = np_max(em, a, axis, keepdims=keepdims)
    lo = np_min(em, a, axis, keepdims=keepdims)
    return apply_ufunc(em, np.subtract, hi, lo)


FUNCTIONS = {
    np.sum: np_sum, np.prod: np_prod, np.max: np_max, np.amax: np_max, np.min: np_min, np.amin: np_min,
    np.any: np_any, np.all: np_all, np.argmax: np_argmax, np.argmin: np_argmin, np.mean: np_mean,
    np.var: np_var, np.std: np_std, np.count_nonzero: np_count_nonzero, np.ptp: np_ptp,
}
