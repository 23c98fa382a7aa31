"""jax.numpy's `size=` / `fill_value=` for numpy's data-dependent functions, in traced code.

np.nonzero, np.argwhere, np.flatnonzero (and ndarray.nonzero), np.extract, np.compress (and
ndarray.compress), np.unique with np.unique_values / unique_counts / unique_inverse / unique_all,
np.union1d, np.intersect1d, np.setdiff1d and np.setxor1d take `size=N` (an int, or a size of the
inputs such as `x.size`): the result has N entries, numpy's result padded with `fill_value` when
it has fewer, its first N when it has more. Without size= they raise UnsupportedError naming
size= and the alternatives (refusals.py). numpy's own signatures have no size=: while a function
is traced the tracer substitutes these numpy functions (aot/compiler/sized_calls.py).

fill_value defaults are jax's: 0 for nonzero / argwhere / flatnonzero indices, extract, compress
and setdiff1d; the smallest value of the result for unique, union1d, intersect1d and setxor1d (0
when the result is empty). Index results pad as jax's do: unique's indices with the index of the
smallest value's first occurrence, its counts with 0, intersect1d's indices with the inputs'
lengths (out of bounds); unique's inverse has the input's shape, as numpy 2's. unique_values'
order is numpy's "may vary": it is sorted here. unique takes axis=None (or the axis of a 1-D input).

Everything is one `compact` core op (aot/ops/compaction.py: values[mask], cut or padded to N rows)
of values and masks built from core ops: nonzero compacts the flat index and unravels it; unique
sorts (stable), marks the first of each run of equal values (NaNs as one run with equal_nan) and
compacts; the set functions sort their inputs, test membership by searchsorted and compact.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from ir import dtypes as irdt
from ir.dtypes import DType
from ir.symbols import is_static, norm_dim

from . import numpy_reductions as red
from .emitter import Emitter, abstract_of
from .numpy_shape import np_moveaxis, reshape
from .numpy_sorting import sort
from .numpy_ufuncs import apply_ufunc, emit
from .operands import UnsupportedError, cast, constant, full, is_size_expr, no_out, normalize_axis, to_value
from .refusals import refusal
from .shapes import dim_le, same_dim

I64 = irdt.int64
BOOL = irdt.bool_

# numpy 2's Array API unique functions return these named tuples (numpy < 2 has none of them)
_UNIQUE_API = ("unique_all", "unique_counts", "unique_inverse", "unique_values")
_RESULT = {n: type(getattr(np, n)(np.zeros(1))) for n in _UNIQUE_API[:3] if hasattr(np, n)}
# numpy 2: np.unique's inverse has the input's shape (numpy 1: flat)
_INVERSE_KEEPS_SHAPE = np.unique(np.zeros((1, 1)), return_inverse=True)[1].ndim == 2


# --- arguments ------------------------------------------------------------------------------------
def size_arg(em: Emitter, fname: str, size: Any):
    """The result length: a non-negative int or a size expression; None is the refusal."""
    if size is None:
        raise UnsupportedError(refusal(getattr(np, fname)))
    as_exprs = getattr(em, "sizes_as_exprs", None)  # a tracer's SymInt (x.nonzero(size=x.shape[0]))
    if as_exprs is not None:
        size = as_exprs((size,))[0]
    if is_size_expr(size):
        return norm_dim(size)
    if isinstance(size, bool) or (em.is_value(size) and not isinstance(size, np.generic)):
        raise TypeError(f"np.{fname}: size must be an int known when tracing, got {type(size).__name__}")
    try:
        n = operator.index(size)
    except TypeError:
        raise TypeError(f"np.{fname}: size must be an int, got {type(size).__name__}") from None
    if n < 0:
        raise ValueError(f"np.{fname}: size must be non-negative, got {n}")
    return n


def fill_arg(em: Emitter, fname: str, fill_value: Any, dtype: DType):
    """fill_value as a 0-d value of the result's dtype (cast as numpy's astype casts, as jax does)."""
    if em.is_value(fill_value) and not isinstance(fill_value, (np.ndarray, np.generic)):
        if abstract_of(fill_value).ndim:
            raise ValueError(f"np.{fname}: fill_value must be a scalar, got shape "
                             f"{abstract_of(fill_value).shape}")
        return cast(em, fill_value, dtype)
    arr = np.asarray(fill_value)
    if arr.ndim or arr.dtype.kind not in "biufc":
        raise ValueError(f"np.{fname}: fill_value must be a number, got {fill_value!r}")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a complex fill for a real result drops its imaginary part
        return constant(em, arr.astype(dtype.numpy), dtype)


# --- pieces ---------------------------------------------------------------------------------------
def compact(em: Emitter, values: Any, mask: Any, fill: Any, size: Any):
    return emit(em, "compact", values, mask, fill, size=size)


def _len(x: Any):
    return abstract_of(x).shape[0]


def _dtype(x: Any) -> DType:
    return abstract_of(x).dtype


def _empty(n: Any) -> bool:
    n = norm_dim(n)
    return is_static(n) and n == 0


def _flat(em: Emitter, a: Any):
    x = to_value(em, a)
    return x if abstract_of(x).ndim == 1 else reshape(em, x, (-1,))


def _iota(em: Emitter, n: Any):
    return emit(em, "iota", n=n, dtype=I64)


def _rows(em: Emitter, x: Any, start: Any, stop: Any):
    """x[start:stop] along axis 0."""
    nd = abstract_of(x).ndim
    return emit(em, "slice", x, starts=(start,) + (0,) * (nd - 1), stops=(stop,) + (None,) * (nd - 1),
                steps=(1,) * nd)


def _first(em: Emitter, x: Any):
    """x[0] of a non-empty 1-D x, as a 0-d view."""
    return reshape(em, _rows(em, x, 0, 1), ())


def _truth(em: Emitter, x: Any):
    """x != 0 (bool x as it is): numpy's nonzero test, NaN and either complex part included."""
    return x if _dtype(x).is_bool else apply_ufunc(em, np.not_equal, x, 0)


def _count(em: Emitter, mask: Any):
    return red.reduce(em, "sum", cast(em, mask, I64), (0,), False)


def _pad_with_first(em: Emitter, r: Any, count: Any):
    """r[k] for k < count, else r[0]: the smallest value of a sorted result as its padding (r[0] is
    the fill the compaction put there when nothing was selected)."""
    if _empty(_len(r)):
        return r
    keep = apply_ufunc(em, np.less, _iota(em, _len(r)), count)
    return emit(em, "where", keep, r, _first(em, r))


def _padded(em: Emitter, fname: str, values: Any, mask: Any, size: Any, fill_value: Any):
    """compact with fill_value, or by default padded with the result's smallest (first) value."""
    if fill_value is not None:
        return compact(em, values, mask, fill_arg(em, fname, fill_value, _dtype(values)), size)
    r = compact(em, values, mask, fill_arg(em, fname, 0, _dtype(values)), size)
    return _pad_with_first(em, r, _count(em, mask))


def run_starts(em: Emitter, aux: Any, equal_nan: bool):
    """For a sorted 1-D aux: True where a run of equal values starts (NaNs one run with equal_nan;
    -0.0 and 0.0 are equal), numpy's unique mask."""
    n = _len(aux)
    if _empty(n):
        return emit(em, "full_like", aux, value=False, dtype=BOOL)
    head = full(em, (1,), True, BOOL)
    if is_static(n) and n == 1:
        return head
    a, b = _rows(em, aux, 1, None), _rows(em, aux, 0, -1)
    new = apply_ufunc(em, np.not_equal, a, b)
    if equal_nan and _dtype(aux).is_inexact:
        both = apply_ufunc(em, np.logical_and, apply_ufunc(em, np.isnan, a), apply_ufunc(em, np.isnan, b))
        new = apply_ufunc(em, np.logical_and, new, apply_ufunc(em, np.logical_not, both))
    return emit(em, "concatenate", head, new, axis=0)


def sorted_with_order(em: Emitter, x: Any, with_order: bool):
    """(x sorted, the stable argsort or None) of a 1-D x."""
    if _empty(_len(x)):
        return x, (_iota(em, 0) if with_order else None)
    if not with_order:
        return sort(em, x, 0), None
    order = emit(em, "argsort", x, axis=0)
    return emit(em, "take_along_axis", x, order, axis=0), order


def _lookup(em: Emitter, s: Any, v: Any):
    """The first index of each v in the sorted non-empty 1-D s where it would go, clipped into s."""
    j = emit(em, "searchsorted", s, v, side="left")
    return apply_ufunc(em, np.minimum, j, norm_dim(_len(s) - 1))


def member(em: Emitter, v: Any, s: Any):
    """Whether each v is in the sorted 1-D s (of v's dtype): as numpy's isin, by ==, so a NaN never is."""
    if _empty(_len(s)):
        return emit(em, "full_like", v, value=False, dtype=BOOL)
    return apply_ufunc(em, np.equal, emit(em, "take", s, _lookup(em, s, v), axis=0), v)


def _and(em: Emitter, a: Any, b: Any):
    return apply_ufunc(em, np.logical_and, a, b)


def _not(em: Emitter, a: Any):
    return apply_ufunc(em, np.logical_not, a)


# --- nonzero, argwhere, flatnonzero -----------------------------------------------------------------
def _index_fills(fname: str, fill_value: Any, ndim: int) -> tuple:
    if fill_value is None:
        return (0,) * ndim
    if isinstance(fill_value, tuple):
        if len(fill_value) != ndim:
            raise ValueError(f"np.{fname}: fill_value must be a scalar or a tuple of length {ndim}; got "
                             f"{fill_value}")
        return fill_value
    return (fill_value,) * ndim


def nonzero_indices(em: Emitter, fname: str, x: Any, size: Any, fill_value: Any) -> tuple:
    """The index arrays of x's nonzero entries (C order), `size` each: the flat indices compacted
    (padded with -1), unravelled, and padded with the fills."""
    shape = abstract_of(x).shape
    fills = [fill_arg(em, fname, f, I64) for f in _index_fills(fname, fill_value, len(shape))]
    mask = _flat(em, _truth(em, x))
    flat_n = _len(mask)
    if len(shape) == 1:
        return (compact(em, _iota(em, flat_n), mask, fills[0], size),)
    flat = compact(em, _iota(em, flat_n), mask, fill_arg(em, fname, -1, I64), size)
    valid = apply_ufunc(em, np.greater_equal, flat, 0)
    out, stride = [], 1
    for k in range(len(shape) - 1, -1, -1):
        c = flat if stride == 1 else emit(em, "floordiv", flat, constant(em, stride, I64))
        if k:
            c = emit(em, "mod", c, constant(em, _divisor(shape[k]), I64))
        out.append(emit(em, "where", valid, c, fills[k]))
        stride = norm_dim(stride * _divisor(shape[k]))
    return tuple(out[::-1])


def _divisor(d: Any):
    """A dim as a divisor: a zero dim (no entries, every index padding) divides as 1."""
    return max(d, 1) if is_static(norm_dim(d)) else d


def np_nonzero(em: Emitter, a: Any, *, size: Any = None, fill_value: Any = None):
    n = size_arg(em, "nonzero", size)
    x = to_value(em, a)
    if abstract_of(x).ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() "
                         "instead.")
    return nonzero_indices(em, "nonzero", x, n, fill_value)


def np_flatnonzero(em: Emitter, a: Any, *, size: Any = None, fill_value: Any = None):
    n = size_arg(em, "flatnonzero", size)
    return nonzero_indices(em, "flatnonzero", _flat(em, a), n, fill_value)[0]


def np_argwhere(em: Emitter, a: Any, *, size: Any = None, fill_value: Any = None):
    n = size_arg(em, "argwhere", size)
    x = to_value(em, a)
    if abstract_of(x).ndim == 0:  # numpy: the indices of a 0-d array have no columns
        return full(em, (n, 0), 0, I64)
    return emit(em, "stack", *nonzero_indices(em, "argwhere", x, n, fill_value), axis=1)


# --- extract, compress ------------------------------------------------------------------------------
def _fit_condition(em: Emitter, cond: Any, x: Any):
    """numpy's condition against x's axis 0: a shorter one cuts x; a longer one may only be False
    past x (else IndexError, checked when the code runs)."""
    nc, nx = _len(cond), _len(x)
    if same_dim(nc, nx):
        return cond, x
    if dim_le(nc, nx):
        return cond, _rows(em, x, 0, nc)
    extra = red.reduce(em, "any", _rows(em, cond, nx, None), (0,), False)
    x = emit(em, "require", x, _not(em, extra), status="INDEX_OUT_OF_RANGE")
    return _rows(em, cond, 0, nx), x


def np_extract(em: Emitter, condition: Any, arr: Any, *, size: Any = None, fill_value: Any = 0):
    n = size_arg(em, "extract", size)
    x = _flat(em, arr)
    cond, x = _fit_condition(em, _truth(em, _flat(em, condition)), x)
    return compact(em, x, cond, fill_arg(em, "extract", fill_value, _dtype(x)), n)


def np_compress(em: Emitter, condition: Any, a: Any, axis: Any = None, out: Any = None, *, size: Any = None,
                fill_value: Any = 0):
    no_out("np.compress", out)
    n = size_arg(em, "compress", size)
    cond = to_value(em, condition)
    if abstract_of(cond).ndim != 1:
        raise ValueError("condition must be a 1-d array")
    x = to_value(em, a)
    if axis is None:
        x, ax = _flat(em, x), 0
    else:
        ax = normalize_axis(axis, abstract_of(x).ndim)
        x = np_moveaxis(em, x, ax, 0)
    cond, x = _fit_condition(em, _truth(em, cond), x)
    r = compact(em, x, cond, fill_arg(em, "compress", fill_value, _dtype(x)), n)
    return r if ax == 0 else np_moveaxis(em, r, 0, ax)


def _method_compress(em: Emitter, x: Any, condition: Any, axis: Any = None, out: Any = None, **kwargs: Any):
    return np_compress(em, condition, x, axis, out, **kwargs)


# --- unique -------------------------------------------------------------------------------------------
def unique_1d(em: Emitter, fname: str, x: Any, size: Any, fill_value: Any, equal_nan: bool, *,
              index: bool = False, inverse: bool = False, counts: bool = False) -> dict:
    """np.unique of a 1-D x with size=: {"values", and "index" / "inverse" / "counts" when asked}."""
    n = _len(x)
    aux, order = sorted_with_order(em, x, index or inverse)
    starts = run_starts(em, aux, equal_nan)
    if fill_value is not None:
        fill = fill_arg(em, fname, fill_value, _dtype(x))
    else:  # the smallest unique value
        fill = fill_arg(em, fname, 0, _dtype(x)) if _empty(n) else _first(em, aux)
    out = {"values": compact(em, aux, starts, fill, size)}
    if index:
        pad = fill_arg(em, fname, 0, I64) if _empty(n) else _first(em, order)
        out["index"] = compact(em, order, starts, pad, size)
    if inverse:
        out["inverse"] = _inverse(em, starts, order)
    if counts:  # run lengths from the run starts (padded with n)
        at = compact(em, _iota(em, n), starts, constant(em, n, I64), norm_dim(size + 1))
        out["counts"] = emit(em, "sub", _rows(em, at, 1, None), _rows(em, at, 0, size))
    return out


def _inverse(em: Emitter, starts: Any, order: Any):
    """Each element's index among the unique values: the run number of its sorted position."""
    if _empty(_len(starts)):
        return _iota(em, 0)
    run = emit(em, "sub", emit(em, "scan", cast(em, starts, I64), kind="sum", axis=0, dtype=I64),
               constant(em, 1, I64))
    return emit(em, "take_along_axis", run, emit(em, "argsort", order, axis=0), axis=0)


def _unique(em: Emitter, fname: str, ar: Any, size: Any, fill_value: Any, equal_nan: bool, axis: Any = None,
            **wanted: bool) -> dict:
    x = to_value(em, ar)
    shape = abstract_of(x).shape
    if axis is not None and (len(shape) != 1 or normalize_axis(axis, 1) != 0):
        raise UnsupportedError(f"np.{fname}: axis={axis!r} (unique slices) is not supported in traced code; "
                               f"size= takes axis=None (the flattened array) or the axis of a 1-D array")
    out = unique_1d(em, fname, _flat(em, x), size, fill_value, equal_nan, **wanted)
    if "inverse" in out and len(shape) != 1 and (_INVERSE_KEEPS_SHAPE or fname != "unique"):
        out["inverse"] = reshape(em, out["inverse"], shape)
    return out


def np_unique(em: Emitter, ar: Any, return_index: bool = False, return_inverse: bool = False,
              return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True, sorted: bool = True,
              size: Any = None, fill_value: Any = None):
    n = size_arg(em, "unique", size)
    out = _unique(em, "unique", ar, n, fill_value, bool(equal_nan), axis, index=bool(return_index),
                  inverse=bool(return_inverse), counts=bool(return_counts))
    res = tuple(out[k] for k in ("values", "index", "inverse", "counts") if k in out)
    return res[0] if len(res) == 1 else res


def np_unique_values(em: Emitter, x: Any, /, *, size: Any = None, fill_value: Any = None):
    return _unique(em, "unique_values", x, size_arg(em, "unique_values", size), fill_value, False)["values"]


def np_unique_counts(em: Emitter, x: Any, /, *, size: Any = None, fill_value: Any = None):
    out = _unique(em, "unique_counts", x, size_arg(em, "unique_counts", size), fill_value, False, counts=True)
    return _RESULT["unique_counts"](out["values"], out["counts"])


def np_unique_inverse(em: Emitter, x: Any, /, *, size: Any = None, fill_value: Any = None):
    n = size_arg(em, "unique_inverse", size)
    out = _unique(em, "unique_inverse", x, n, fill_value, False, inverse=True)
    return _RESULT["unique_inverse"](out["values"], out["inverse"])


def np_unique_all(em: Emitter, x: Any, /, *, size: Any = None, fill_value: Any = None):
    out = _unique(em, "unique_all", x, size_arg(em, "unique_all", size), fill_value, False, index=True,
                  inverse=True, counts=True)
    return _RESULT["unique_all"](out["values"], out["index"], out["inverse"], out["counts"])


# --- set functions --------------------------------------------------------------------------------------
def _common(em: Emitter, ar1: Any, ar2: Any):
    """Both inputs flattened, in the dtype of their concatenation."""
    a, b = _flat(em, ar1), _flat(em, ar2)
    dt = irdt.promote(_dtype(a), _dtype(b))
    return cast(em, a, dt), cast(em, b, dt)


def np_union1d(em: Emitter, ar1: Any, ar2: Any, *, size: Any = None, fill_value: Any = None):
    n = size_arg(em, "union1d", size)
    a, b = _common(em, ar1, ar2)
    return unique_1d(em, "union1d", emit(em, "concatenate", a, b, axis=0), n, fill_value, True)["values"]


def np_intersect1d(em: Emitter, ar1: Any, ar2: Any, assume_unique: bool = False,
                   return_indices: bool = False, *, size: Any = None, fill_value: Any = None):
    n = size_arg(em, "intersect1d", size)
    a, b = _common(em, ar1, ar2)
    s1, order1 = sorted_with_order(em, a, bool(return_indices))
    s2, order2 = sorted_with_order(em, b, bool(return_indices))
    keep = member(em, s1, s2)
    if not assume_unique:
        keep = _and(em, keep, run_starts(em, s1, True))
    values = _padded(em, "intersect1d", s1, keep, n, fill_value)
    if not return_indices:
        return values
    n1, n2 = _len(a), _len(b)
    i1 = compact(em, order1, keep, constant(em, n1, I64), n)
    # the first occurrence in ar2: the stable sort's first of the run
    in2 = emit(em, "full_like", s1, value=0, dtype=I64) if _empty(n2) else \
        emit(em, "take", order2, _lookup(em, s2, s1), axis=0)
    return values, i1, compact(em, in2, keep, constant(em, n2, I64), n)


def np_setdiff1d(em: Emitter, ar1: Any, ar2: Any, assume_unique: bool = False, *, size: Any = None,
                 fill_value: Any = 0):
    """ar1's values (its dtype; sorted unique unless assume_unique, which keeps ar1's order) not in ar2."""
    n = size_arg(em, "setdiff1d", size)
    a, b = _flat(em, ar1), _flat(em, ar2)
    dt = irdt.promote(_dtype(a), _dtype(b))
    v = a if assume_unique else sorted_with_order(em, a, False)[0]
    keep = _not(em, member(em, cast(em, v, dt), sorted_with_order(em, cast(em, b, dt), False)[0]))
    if not assume_unique:
        keep = _and(em, keep, run_starts(em, v, True))
    fill = fill_arg(em, "setdiff1d", 0 if fill_value is None else fill_value, _dtype(v))
    return compact(em, v, keep, fill, n)


def np_setxor1d(em: Emitter, ar1: Any, ar2: Any, assume_unique: bool = False, *, size: Any = None,
                fill_value: Any = None):
    """The values in exactly one input, sorted: each input's unique values not in the other,
    compacted (padded with the dtype's last value in sort order), sorted again, then cut to size."""
    n = size_arg(em, "setxor1d", size)
    a, b = _common(em, ar1, ar2)
    s1, s2 = sorted_with_order(em, a, False)[0], sorted_with_order(em, b, False)[0]
    k1, k2 = _not(em, member(em, s1, s2)), _not(em, member(em, s2, s1))
    if not assume_unique:
        k1, k2 = _and(em, k1, run_starts(em, s1, True)), _and(em, k2, run_starts(em, s2, True))
    both = emit(em, "concatenate", s1, s2, axis=0)
    keep = emit(em, "concatenate", k1, k2, axis=0)
    total = _len(both)
    if _empty(total):
        return _padded(em, "setxor1d", both, keep, n, fill_value)
    last = fill_arg(em, "setxor1d", _last_in_order(_dtype(both)), _dtype(both))
    picked = compact(em, both, keep, last, total)
    merged = sort(em, picked, 0)
    count = _count(em, keep)
    return _padded(em, "setxor1d", merged, apply_ufunc(em, np.less, _iota(em, total), count), n, fill_value)


def _last_in_order(dt: DType):
    """A value no other sorts after (numpy's order: NaNs last, complex nan+nanj last of all)."""
    if dt.is_bool:
        return True
    if dt.is_int:
        return int(np.iinfo(dt.numpy).max)
    return complex(np.nan, np.nan) if dt.is_complex else np.nan


# numpy functions whose size= form decomposes into core ops; the tracer substitutes them while
# tracing so that size= reaches these translations (aot/compiler/sized_calls.py)
DECOMPOSITIONS = {
    np.nonzero: np_nonzero, np.argwhere: np_argwhere, np.flatnonzero: np_flatnonzero, np.extract: np_extract,
    np.compress: np_compress, np.unique: np_unique, np.union1d: np_union1d, np.intersect1d: np_intersect1d,
    np.setdiff1d: np_setdiff1d, np.setxor1d: np_setxor1d,
}
for _name, _fn in zip(_UNIQUE_API, (np_unique_all, np_unique_counts, np_unique_inverse, np_unique_values)):
    if hasattr(np, _name):  # numpy >= 2.0
        DECOMPOSITIONS[getattr(np, _name)] = _fn
SIZED = tuple(DECOMPOSITIONS)
# ndarray methods (aot/frontend/methods.py)
METHODS = {"nonzero": lambda em, x, **kw: np_nonzero(em, x, **kw), "compress": _method_compress}
