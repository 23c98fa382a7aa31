"""Reductions: sum, prod, max, min, any, all, argmax, argmin as core ops (each registered against its
row, which names its numpy callables: np.amax is the max row's too); mean, var, std, ptp and
count_nonzero by decomposition (DECOMPOSITIONS), following numpy's own formulas
(numpy/_core/_methods.py) so that accumulation dtypes and results match."""
from __future__ import annotations

from typing import Any

import numpy as np

from ir import dtypes as irdt
from ir.dtypes import DType
from ir.reductions import REDUCTIONS
from ir.structural import reduced_shape
from ir.symbols import is_static, sympy

from .emitter import Emitter, abstract_of
from .numpy_shape import broadcast_to
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
from .registry import translates
from .shapes import dim_equals, prod, static_int

_NoValue = np._NoValue


def where_mask(em: Emitter, where: Any, x: Any, fname: str):
    """numpy's `where=` of a reduction as a bool value of x's shape, or None for everything."""
    if where is _NoValue or where is True or (isinstance(where, np.ndarray) and where.ndim == 0 and where):
        return None
    w = to_value(em, where)
    if not abstract_of(w).dtype.is_bool:
        w = cast(em, w, irdt.bool_)  # numpy casts the mask with casting="safe": bool-like values only
    shape = tuple(abstract_of(x).shape)
    try:
        return broadcast_to(em, w, shape)
    except ValueError:
        raise ValueError(f"np.{fname}: `where` of shape {tuple(abstract_of(w).shape)} cannot be broadcast to "
                         f"the array's shape {shape}") from None


def masked(em: Emitter, x: Any, mask: Any, fill: Any):
    """x where `mask` (None: everywhere), else `fill` (in x's dtype)."""
    if mask is None:
        return x
    return emit(em, "where", mask, x, scalar_like(em, fill, abstract_of(x).dtype))


def mask_count(em: Emitter, x: Any, mask: Any, axes: tuple[int, ...], keepdims: bool):
    """Elements reduced over (numpy's rcount): a static or symbolic size without a mask, else an
    int64 value counting the mask's True entries over `axes`."""
    if mask is None:
        return _count(abstract_of(x), axes)
    return reduce(em, "sum", cast(em, mask, irdt.int64), axes, keepdims)


def _keepdims(keepdims: Any) -> bool:
    return False if keepdims is _NoValue else bool(keepdims)


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
        x = to_value(em, a)
        av = abstract_of(x)
        axes = ufunc_axes(axis, av.ndim)
        acc = sum_dtype(av.dtype, dtype)
        x = masked(em, cast(em, x, acc), where_mask(em, where, x, fname), 0 if core == "sum" else 1)
        r = cast(em, reduce(em, core, x, axes, _keepdims(keepdims)), acc)
        if initial is not _NoValue:
            r = apply_ufunc(em, ufunc, r, initial)
            r = cast(em, r, acc)
        return r

    translate.__name__ = f"np_{fname}"
    return translate


np_sum = translates("sum")(_sum_like("sum", "sum", np.add))
np_prod = translates("prod")(_sum_like("prod", "prod", np.multiply))


def _extremum(fname: str, core: str, bool_core: str, ufunc: np.ufunc):
    def translate(em: Emitter, a: Any, axis: Any = None, out: Any = None, keepdims: Any = _NoValue,
                  initial: Any = _NoValue, where: Any = _NoValue):
        no_out(f"np.{fname}", out)
        x = to_value(em, a)
        av = abstract_of(x)
        axes = ufunc_axes(axis, av.ndim)
        mask = where_mask(em, where, x, fname)
        if mask is not None:
            if initial is _NoValue:
                raise ValueError(f"reduction operation '{ufunc.__name__}' does not have an identity, so to use a "
                                 f"where mask one has to specify 'initial'")
            x = masked(em, x, mask, np.asarray(initial).astype(av.dtype.numpy).item())
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


np_max = translates("max")(_extremum("max", "max", "any", np.maximum))  # np.max and np.amax
np_min = translates("min")(_extremum("min", "min", "all", np.minimum))


def _any_all(fname: str):
    def translate(em: Emitter, a: Any, axis: Any = None, out: Any = None, keepdims: Any = _NoValue, *,
                  where: Any = _NoValue):
        no_out(f"np.{fname}", out)
        x = to_value(em, a)
        axes = ufunc_axes(axis, abstract_of(x).ndim)
        x = masked(em, cast(em, x, irdt.bool_), where_mask(em, where, x, fname), fname == "all")
        return reduce(em, fname, x, axes, _keepdims(keepdims))

    translate.__name__ = f"np_{fname}"
    return translate


np_any = translates("any")(_any_all("any"))
np_all = translates("all")(_any_all("all"))


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


np_argmax = translates("argmax")(_arg_extremum("argmax"))
np_argmin = translates("argmin")(_arg_extremum("argmin"))


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
    x = to_value(em, a)
    av = abstract_of(x)
    axes = normalize_axes(axis, av.ndim)
    acc = to_dtype(dtype, "dtype") if dtype is not None else (
        av.dtype if av.dtype.is_inexact else irdt.float64)
    mask = where_mask(em, where, x, "mean")
    s = sum_in(em, masked(em, cast(em, x, acc), mask, 0), axes, _keepdims(keepdims), acc)
    return _divide_unsafe(em, s, mask_count(em, x, mask, axes, _keepdims(keepdims)))


def _divide_unsafe(em: Emitter, s: Any, n: Any):
    """s / n cast back to s's dtype (numpy's true_divide(..., out=s, casting='unsafe')); n is a size,
    or an int64 value counting a mask (divided by in the promoted dtype, as numpy's intp count is)."""
    dt = abstract_of(s).dtype
    return cast(em, apply_ufunc(em, np.true_divide, s, n if em.is_value(n) else _divisor(em, s, n)), dt)


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
    mask = where_mask(em, where, x, fname)
    arrmean = _divide_unsafe(em, sum_in(em, masked(em, cast(em, x, acc), mask, 0), axes, True, acc),
                             mask_count(em, x, mask, axes, True))
    d = apply_ufunc(em, np.subtract, x, arrmean)
    ddt = abstract_of(d).dtype
    if ddt.is_complex:
        re, im = emit(em, "real", d), emit(em, "imag", d)
        sq = emit(em, "add", emit(em, "mul", re, re), emit(em, "mul", im, im))
    else:
        sq = emit(em, "mul", d, d)
    sq = masked(em, sq, mask, 0)
    ret = sum_in(em, sq, axes, _keepdims(keepdims), sum_dtype(abstract_of(sq).dtype, dtype))
    if mask is not None:  # numpy: true_divide(ret, maximum(rcount - ddof, 0), casting="unsafe")
        dof = apply_ufunc(em, np.maximum, apply_ufunc(em, np.subtract, mask_count(em, x, mask, axes, _keepdims(keepdims)),
                                                      ddof), 0)
        return _divide_unsafe(em, ret, dof)
    n = _count(av, axes)
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


# numpy functions that are not one core op (the row-named ones register with @translates)
DECOMPOSITIONS = {np.mean: np_mean, np.var: np_var, np.std: np_std, np.count_nonzero: np_count_nonzero,
                  np.ptp: np_ptp}
