"""Scans: np.cumsum and np.cumprod (and ndarray.cumsum/cumprod) are the `scan` row with a reduction
record's kind; np.nancumsum, np.nancumprod, np.cumulative_sum, np.cumulative_prod, np.diff and
np.ediff1d decompose (DECOMPOSITIONS), as numpy writes them (numpy/lib/_nanfunctions_impl.py,
numpy/_core/fromnumeric.py, numpy/lib/_function_base_impl.py).

`accumulate` is ufunc.accumulate as core ops (aot/frontend/numpy_ufunc_methods.py calls it): the loop
dtype is numpy's own answer for the operand dtype and `dtype=`, and the fold is one `scan` whose
kind is the ufunc's row (or the reduction record that row is: add -> sum, maximum -> max).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ir.dtypes import DType
from ir.reductions import REDUCTIONS
from ir.scans import record_rows

from .emitter import Emitter, abstract_of
from .indexing import slice_axis
from .numpy_shape import np_concatenate, reshape
from .numpy_ufuncs import _BY_KIND, UFUNC_CORE, apply_ufunc, emit
from .operands import (
    UnsupportedError,
    cast,
    full,
    no_out,
    normalize_axis,
    scalar_like,
    to_dtype,
    to_value,
)
from .registry import translates

_NoValue = np._NoValue
_BOOL_KINDS = {"sum": "any", "prod": "all"}  # numpy's bool add and multiply are logical or / and
# ufuncs numpy computes with another row's loop (decomposed ufuncs: numpy_ufuncs._DECOMPOSED)
_LOOP_ROWS = {np.float_power: "pow", np.fmax: "maximum", np.fmin: "minimum"}


def scan(em: Emitter, x: Any, kind: str, axis: int, dtype: DType):
    """The core scan of `x` along the normalised `axis` in `dtype`: the scan converts on load (the
    `cast` row's conversion, as numpy's loops cast), except to bool, the truth value (as_dtype)."""
    if dtype.is_bool:
        x = as_dtype(em, x, dtype)
    attrs = {} if abstract_of(x).dtype == dtype else {"dtype": dtype}
    return emit(em, "scan", x, kind=kind, axis=axis, **attrs)


def as_dtype(em: Emitter, x: Any, dt: DType):
    """x in dtype `dt` as numpy's loops cast it (to bool: the truth value, imaginary part included)."""
    src = abstract_of(x).dtype
    if dt.is_bool and not src.is_bool:
        return emit(em, "ne", x, scalar_like(em, 0, src))
    return cast(em, x, dt)


# --- np.cumsum, np.cumprod ---------------------------------------------------------------------------

def _cumulative(fname: str, kind: str):
    def translate(em: Emitter, a: Any, axis: Any = None, dtype: Any = None, out: Any = None):
        no_out(f"np.{fname}", out)
        x = to_value(em, a)
        av = abstract_of(x)
        if axis is None or av.ndim == 0:  # numpy scans a 0-d array as 1-d
            x = reshape(em, x, (-1,) if axis is None else (1,))
        ax = 0 if axis is None else normalize_axis(axis, max(av.ndim, 1))
        acc = to_dtype(dtype, "dtype") if dtype is not None else REDUCTIONS[kind].result(av.dtype)
        return scan(em, x, _BOOL_KINDS[kind] if acc.is_bool else kind, ax, acc)

    translate.__name__ = translate.__qualname__ = f"np_{fname}"
    return translate


np_cumsum = translates("scan", "cumsum")(_cumulative("cumsum", "sum"))
np_cumprod = translates("scan", "cumprod")(_cumulative("cumprod", "prod"))


def _nan_to(em: Emitter, a: Any, value: int):
    """numpy's _replace_nan: nan elements of an inexact array replaced by `value`."""
    x = to_value(em, a)
    dt = abstract_of(x).dtype
    if not dt.is_inexact:
        return x
    return emit(em, "where", emit(em, "isnan", x), scalar_like(em, value, dt), x)


def np_nancumsum(em: Emitter, a: Any, axis: Any = None, dtype: Any = None, out: Any = None):
    return np_cumsum(em, _nan_to(em, a, 0), axis, dtype, out)


def np_nancumprod(em: Emitter, a: Any, axis: Any = None, dtype: Any = None, out: Any = None):
    return np_cumprod(em, _nan_to(em, a, 1), axis, dtype, out)


# --- ufunc.accumulate ---------------------------------------------------------------------------------

def method_dtype(ufunc: np.ufunc, method: str, src: DType, dtype: Any, **kwargs: Any) -> DType:
    """The result dtype of ufunc.<method> (reduce, accumulate) on `src` operands with `dtype=`, asked
    of numpy on a one-element array: its loop choice (add upcasts small ints) and errors are numpy's."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = getattr(ufunc, method)(np.ones(1, src.numpy), dtype=dtype, **kwargs)
    return to_dtype(np.asarray(r).dtype, f"np.{ufunc.__name__}.{method}")


def combine_kind(ufunc: np.ufunc, dt: DType) -> str:
    """The scan kind folding `ufunc` in loop dtype `dt`: its row, or the record that row is."""
    core = UFUNC_CORE.get(ufunc) or _LOOP_ROWS.get(ufunc)
    if core is None:
        raise UnsupportedError(f"np.{ufunc.__name__}.accumulate is not supported in traced code (no op row "
                               f"computes np.{ufunc.__name__})")
    core = _BY_KIND.get((core, dt.kind), core)  # on bools: add is logical_or, ...
    return record_rows().get(core, core)


def fold(em: Emitter, ufunc: np.ufunc, x: Any, axis: int, dt: DType):
    """numpy's sequential fold of `ufunc` along `axis` in loop dtype `dt` (ufunc.accumulate)."""
    if ufunc in (np.fmax, np.fmin) and dt.is_inexact:
        return _nan_ignoring(em, ufunc, as_dtype(em, x, dt), axis)
    return scan(em, x, combine_kind(ufunc, dt), axis, dt)


def _nan_ignoring(em: Emitter, ufunc: np.ufunc, x: Any, axis: int):
    """fmax/fmin.accumulate: max/min with nans as the kind's far end, then nan while every element
    so far is nan (numpy keeps the first such element: fmax(a, b) is a when both are nan)."""
    dt = abstract_of(x).dtype
    kind = "max" if ufunc is np.fmax else "min"
    far = float("-inf") if kind == "max" else float("inf")
    isnan = emit(em, "isnan", x)
    end = scalar_like(em, complex(far, far) if dt.is_complex else far, dt)
    best = scan(em, emit(em, "where", isnan, end, x), kind, axis, dt)
    all_nan = scan(em, isnan, "all", axis, abstract_of(isnan).dtype)
    return emit(em, "where", all_nan, slice_axis(em, x, axis, 0, 1), best)


def accumulate(em: Emitter, ufunc: np.ufunc, a: Any, axis: Any = 0, dtype: Any = None):
    """ufunc.accumulate(a, axis=axis, dtype=dtype) with numpy's checks."""
    x = to_value(em, a)
    av = abstract_of(x)
    if ufunc.nin != 2 or ufunc.nout != 1:
        raise ValueError("accumulate only supported for binary functions")
    if av.ndim == 0:
        raise TypeError("cannot accumulate on a scalar")
    if axis is None or (isinstance(axis, (tuple, list)) and len(axis) != 1):
        if axis is None and av.ndim == 1:
            axis = 0
        else:
            raise ValueError("accumulate does not allow multiple axes")
    if isinstance(axis, (tuple, list)):
        axis = axis[0]
    ax = normalize_axis(axis, av.ndim)
    return fold(em, ufunc, x, ax, method_dtype(ufunc, "accumulate", av.dtype, dtype))


# --- np.cumulative_sum, np.cumulative_prod -------------------------------------------------------------

def _cumulative_func(fname: str, ufunc: np.ufunc):
    def translate(em: Emitter, x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                  include_initial: bool = False):
        no_out(f"np.{fname}", out)
        v = to_value(em, x)
        if abstract_of(v).ndim == 0:
            v = reshape(em, v, (1,))
        av = abstract_of(v)
        if axis is None:
            if av.ndim >= 2:
                raise ValueError("For arrays which have more than one dimension ``axis`` argument is "
                                 "required.")
            axis = 0
        ax = normalize_axis(axis, av.ndim)
        res = accumulate(em, ufunc, v, ax, dtype)
        if not include_initial:
            return res
        shape = list(av.shape)
        shape[ax] = 1
        first = full(em, tuple(shape), ufunc.identity, abstract_of(res).dtype)
        return np_concatenate(em, [first, res], axis=ax)

    translate.__name__ = translate.__qualname__ = f"np_{fname}"
    return translate


np_cumulative_sum = _cumulative_func("cumulative_sum", np.add)
np_cumulative_prod = _cumulative_func("cumulative_prod", np.multiply)


# --- np.diff -------------------------------------------------------------------------------------------

def _edge(em: Emitter, value: Any, like_shape: tuple, axis: int):
    """A prepend/append operand: an array, or a scalar broadcast to `like_shape` with length 1 on axis."""
    v = to_value(em, value)
    if abstract_of(v).ndim:
        return v
    shape = list(like_shape)
    shape[axis] = 1
    return emit(em, "broadcast_to", v, shape=tuple(shape))


def np_diff(em: Emitter, a: Any, n: Any = 1, axis: Any = -1, prepend: Any = _NoValue, append: Any = _NoValue):
    n = _order(n)
    if n == 0:
        return a
    x = to_value(em, a)
    av = abstract_of(x)
    if av.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = normalize_axis(axis, av.ndim)
    parts = [x]
    if prepend is not _NoValue:
        parts.insert(0, _edge(em, prepend, av.shape, ax))
    if append is not _NoValue:
        parts.append(_edge(em, append, av.shape, ax))
    if len(parts) > 1:
        x = np_concatenate(em, parts, axis=ax)
    op = "ne" if abstract_of(x).dtype.is_bool else "sub"
    for _ in range(n):
        x = emit(em, op, slice_axis(em, x, ax, 1, None), slice_axis(em, x, ax, None, -1))
    return x


def _order(n: Any) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)):
        raise TypeError(f"np.diff: n must be an integer, got {type(n).__name__}")
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    return int(n)


def np_ediff1d(em: Emitter, ary: Any, to_end: Any = None, to_begin: Any = None):
    """The differences of the flattened array (numpy's subtract, in its dtype), between to_begin and
    to_end (flattened, cast to that dtype where numpy's same_kind rule allows)."""
    x = reshape(em, to_value(em, ary), (-1,))
    dt = abstract_of(x).dtype
    diff = apply_ufunc(em, np.subtract, slice_axis(em, x, 0, 1, None), slice_axis(em, x, 0, None, -1))
    parts = [_edge_values(em, to_begin, dt, "to_begin"), cast(em, diff, dt),
             _edge_values(em, to_end, dt, "to_end")]
    parts = [p for p in parts if p is not None]
    return parts[0] if len(parts) == 1 else emit(em, "concatenate", *parts, axis=0)


def _edge_values(em: Emitter, values: Any, dt: DType, argname: str):
    if values is None:
        return None
    v = to_value(em, values) if em.is_value(values) else to_value(em, np.asanyarray(values))
    if not np.can_cast(abstract_of(v).dtype.numpy, dt.numpy, casting="same_kind"):
        raise TypeError(f"dtype of `{argname}` must be compatible with input `ary` under the `same_kind` "
                        f"rule.")
    return cast(em, reshape(em, v, (-1,)), dt)


DECOMPOSITIONS = {np.nancumsum: np_nancumsum, np.nancumprod: np_nancumprod, np.diff: np_diff,
                  np.ediff1d: np_ediff1d}
for _name, _fn in (("cumulative_sum", np_cumulative_sum), ("cumulative_prod", np_cumulative_prod)):
    if hasattr(np, _name):  # numpy >= 2.1
        DECOMPOSITIONS[getattr(np, _name)] = _fn

