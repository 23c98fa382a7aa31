"""ufunc methods (`np.subtract.accumulate(x)`, `np.add.reduce(x, axis=1)`) as core ops.

numpy hands them to `__array_ufunc__` with method="accumulate", "reduce", ...; the staged array
(staged.py) and the capture tracer (aot/compiler/capture.py) look the method up in UFUNC_METHODS,
one translation per method name, called as `fn(emitter, ufunc, *inputs, **kwargs)`.

reduceat with indices known at trace time is numpy's rule piece by piece: piece i reduces
a[indices[i]:indices[i+1]] along the axis (the last runs to the end), or is the one element
a[indices[i]] where indices[i] >= indices[i+1]; traced indices are refused.

accumulate is numpy's sequential fold (numpy_scans.accumulate: one `scan`). reduce of the ufuncs that
are reductions (add, multiply, maximum, minimum, logical_and, logical_or) is their reduction row
(numpy_reductions); of any other binary ufunc it is the last element of the fold, started from
`initial` or the ufunc's identity (numpy starts there whenever it has one: np.hypot.reduce([-3.])
is 3.0), over one axis, or several merged into one for the reorderable ufuncs.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ir.structural import reduced_shape

from . import numpy_reductions as red
from .assignment import ufunc_at
from .emitter import Emitter, abstract_of
from .indexing import slice_axis
from .numpy_scans import accumulate, as_dtype, fold, method_dtype
from .numpy_shape import np_concatenate, reshape, transpose
from .numpy_ufunc_outer import ufunc_outer
from .numpy_ufuncs import apply_ufunc
from .operands import UnsupportedError, full, no_out, normalize_axis, to_value
from .shapes import dim_equals, prod, static_int

_NoValue = np._NoValue


def _binary(ufunc: np.ufunc, method: str) -> None:
    if ufunc.nin != 2 or ufunc.nout != 1 or ufunc.signature is not None:
        raise ValueError(f"{method} only supported for binary functions")


def _no_where(ufunc: np.ufunc, method: str, where: Any) -> None:
    if where is not True:
        raise UnsupportedError(f"np.{ufunc.__name__}.{method}: the `where` argument is not supported in "
                               f"traced code; use np.where on the operand")


# --- accumulate -----------------------------------------------------------------------------------

def ufunc_accumulate(em: Emitter, ufunc: np.ufunc, array: Any, axis: Any = 0, dtype: Any = None,
                     out: Any = None):
    _binary(ufunc, "accumulate")
    no_out(f"np.{ufunc.__name__}.accumulate", out)
    return accumulate(em, ufunc, array, axis, dtype)


# --- reduce ---------------------------------------------------------------------------------------

def reorderable(ufunc: np.ufunc) -> bool:
    """numpy reduces over several axes only for ufuncs with an identity, or maximum-like ones."""
    return ufunc.identity is not None or ufunc in (np.maximum, np.minimum, np.fmax, np.fmin)


def _sum_like(fn: Callable) -> Callable:
    def routed(em, ufunc, x, axis, dtype, keepdims, initial):
        return fn(em, x, axis, dtype, keepdims=keepdims, initial=initial)
    return routed


def _extremum(fn: Callable) -> Callable:
    def routed(em, ufunc, x, axis, dtype, keepdims, initial):
        v = to_value(em, x)
        v = as_dtype(em, v, method_dtype(ufunc, "reduce", abstract_of(v).dtype, dtype))
        return fn(em, v, axis, keepdims=keepdims, initial=initial)
    return routed


def _logical(fn: Callable) -> Callable:
    def routed(em, ufunc, x, axis, dtype, keepdims, initial):
        v = to_value(em, x)
        dt = method_dtype(ufunc, "reduce", abstract_of(v).dtype, dtype)
        r = fn(em, as_dtype(em, v, dt), axis, keepdims=keepdims)
        return r if initial is _NoValue else apply_ufunc(em, ufunc, initial, r, dtype=dt.numpy)
    return routed


# the ufuncs that are reductions: their rows, through numpy_reductions' translations
_REDUCTION_ROWS: dict[np.ufunc, Callable] = {
    np.add: _sum_like(red.np_sum), np.multiply: _sum_like(red.np_prod),
    np.maximum: _extremum(red.np_max), np.minimum: _extremum(red.np_min),
    np.logical_and: _logical(red.np_all), np.logical_or: _logical(red.np_any),
}


def ufunc_reduce(em: Emitter, ufunc: np.ufunc, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
                 keepdims: bool = False, initial: Any = _NoValue, where: Any = True):
    _binary(ufunc, "reduce")
    no_out(f"np.{ufunc.__name__}.reduce", out)
    _no_where(ufunc, "reduce", where)
    if initial is None:  # numpy: no initial value, not even the identity
        initial, start = _NoValue, None
    else:
        start = ufunc.identity if initial is _NoValue else initial
    if ufunc in _REDUCTION_ROWS:
        return _REDUCTION_ROWS[ufunc](em, ufunc, array, axis, dtype, bool(keepdims), initial)
    if em.is_value(start):
        raise UnsupportedError(f"np.{ufunc.__name__}.reduce: `initial` must be a scalar known when tracing")
    x = to_value(em, array)
    av = abstract_of(x)
    dt = method_dtype(ufunc, "reduce", av.dtype, dtype)
    axes = red.ufunc_axes(axis, av.ndim)
    if len(axes) > 1 and not reorderable(ufunc):
        raise ValueError(f"reduction operation '{ufunc.__name__}' is not reorderable, so at most one axis "
                         f"may be specified")
    shape = reduced_shape(av.shape, axes, bool(keepdims))
    if any(dim_equals(av.shape[a], 0) for a in axes):
        if start is None:
            raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} which has no identity")
        return full(em, shape, start, dt)
    if not axes:  # numpy still combines each element with the start value
        x = as_dtype(em, x, dt)
        return x if start is None else apply_ufunc(em, ufunc, start, x, dtype=dt.numpy)
    return reshape(em, _last_of_fold(em, ufunc, x, axes, dt, start), shape)


def _last_of_fold(em: Emitter, ufunc: np.ufunc, x: Any, axes: tuple, dt, start: Any):
    """The fold of x over `axes` (moved last, merged in C order) from `start`: its last element."""
    av = abstract_of(x)
    kept = [k for k in range(av.ndim) if k not in axes]
    y = transpose(em, x, kept + sorted(axes))
    if len(axes) > 1:
        y = reshape(em, y, tuple(av.shape[k] for k in kept) + (prod(av.shape[a] for a in axes),))
    y = as_dtype(em, y, dt)
    k = len(kept)
    if start is not None:
        lead = full(em, tuple(abstract_of(y).shape[:k]) + (1,), start, dt)
        y = np_concatenate(em, [lead, y], axis=k)
    return slice_axis(em, fold(em, ufunc, y, k, dt), k, -1, None)


# --- reduceat: with indices known at trace time, numpy's rule piece by piece -------------------------

MAX_PIECES = 256  # each piece is a reduction of its own: beyond this, compile time outgrows the gain


def ufunc_reduceat(em: Emitter, ufunc: np.ufunc, array: Any, indices: Any, axis: Any = 0, dtype: Any = None,
                   out: Any = None):
    name = f"np.{ufunc.__name__}.reduceat"
    if ufunc.nin != 2 or ufunc.nout != 1:
        raise ValueError("reduceat only supported for binary functions")
    no_out(name, out)
    if em.is_value(indices) and not isinstance(indices, np.ndarray):
        raise UnsupportedError(f"{name}: traced indices are not supported (the segments depend on the data); pass "
                               f"indices known when tracing, or use np.cumsum differences for sums")
    idx = np.asarray(indices)
    if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
        raise TypeError(f"{name}: indices must be a 1-D sequence of integers")
    if idx.size > MAX_PIECES:
        raise UnsupportedError(f"{name}: {idx.size} indices; traced code supports up to {MAX_PIECES} pieces")
    x = to_value(em, array)
    av = abstract_of(x)
    ax = normalize_axis(axis, av.ndim)
    n = static_int(av.shape[ax], f"{name}'s axis length")
    bad = [int(i) for i in idx if not 0 <= i < n]
    if bad:
        raise IndexError(f"index {bad[0]} out-of-bounds in {ufunc.__name__}.reduceat [0, {n})")
    dt = method_dtype(ufunc, "reduceat", av.dtype, dtype, indices=[0])
    pieces = []
    for i, start in enumerate(idx.tolist()):
        stop = idx[i + 1] if i + 1 < idx.size else n
        if start < stop:
            part = slice_axis(em, x, ax, start, stop)
            pieces.append(ufunc_reduce(em, ufunc, part, axis=ax, dtype=dt.numpy, keepdims=True))
        else:
            pieces.append(as_dtype(em, slice_axis(em, x, ax, start, start + 1), dt))
    if not pieces:
        return as_dtype(em, slice_axis(em, x, ax, 0, 0), dt)
    return np_concatenate(em, [as_dtype(em, p, dt) for p in pieces], axis=ax)


# method name -> translation `fn(emitter, ufunc, *inputs, **kwargs)` (ufunc.outer, ... join here)
UFUNC_METHODS: dict[str, Callable[..., Any]] = {"accumulate": ufunc_accumulate, "reduce": ufunc_reduce,
                                                "reduceat": ufunc_reduceat}
UFUNC_METHODS.update(outer=ufunc_outer, at=ufunc_at)  # numpy_ufunc_outer.py, assignment.py


def translate_ufunc_method(em: Emitter, ufunc: np.ufunc, method: str, *args: Any, **kwargs: Any):
    """`ufunc.<method>(*args, **kwargs)` as core ops; UnsupportedError for a method without one."""
    fn = UFUNC_METHODS.get(method)
    if fn is None:
        raise UnsupportedError(f"np.{ufunc.__name__}.{method} is not supported in traced code")
    try:
        _signature(fn).bind(em, ufunc, *args, **kwargs)
    except TypeError as e:  # name numpy's method, not the translation
        raise TypeError(f"np.{ufunc.__name__}.{method}(): {e}") from None
    return fn(em, ufunc, *args, **kwargs)


@functools.cache
def _signature(fn: Callable) -> inspect.Signature:
    return inspect.signature(fn)
