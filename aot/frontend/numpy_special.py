"""np.digitize, np.unwrap and np.i0 by decomposition, with numpy's formulas
(numpy/lib/_function_base_impl.py) and dtypes.

np.digitize is np.searchsorted on the bins (reversed for decreasing ones). Constant bins have their
direction decided while tracing (numpy's own check); traced bins have both answers computed and
the direction chosen at run time, failing with numpy's ValueError when the bins are neither
increasing nor decreasing (the `require` op). np.i0 is numpy's Chebyshev series on both sides of
8, chosen with where (numpy's piecewise evaluates each side on its elements only: the same values).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib import _function_base_impl as _numpy_impl  # numpy's i0 coefficients and bin check

from ir import dtypes as irdt

from . import numpy_reductions as red
from .emitter import Emitter, abstract_of
from .indexing import slice_axis
from .numpy_scans import np_cumsum, np_diff
from .numpy_shape import flip
from .numpy_sorting import np_searchsorted
from .numpy_ufuncs import apply_ufunc, emit
from .operands import UnsupportedError, cast, normalize_axis, result_dtype, scalar_like, to_value
from .static_args import is_traced

_I0_SMALL = tuple(float(c) for c in _numpy_impl._i0A)  # Chebyshev coefficients on [0, 8]
_I0_LARGE = tuple(float(c) for c in _numpy_impl._i0B)  # and on (8, inf) in 32/x


# --- digitize -------------------------------------------------------------------------------------------

def np_digitize(em: Emitter, x: Any, bins: Any, right: bool = False):
    xv = to_value(em, x)
    if abstract_of(xv).dtype.is_complex:
        raise TypeError("x may not be complex")
    b = to_value(em, bins)
    bv = abstract_of(b)
    if bv.ndim != 1:
        raise ValueError("object too deep for desired array" if bv.ndim > 1 else
                         "object of too small depth for desired array")
    if bv.dtype.is_complex:  # numpy checks the bins as float64
        raise TypeError(f"Cannot cast array data from dtype('{bv.dtype.numpy}') to dtype('float64') "
                        f"according to the rule 'safe'")
    side = "left" if right else "right"  # numpy's: the arguments of searchsorted are swapped
    n = bv.shape[0]
    if not is_traced(em, bins):
        mono = _numpy_impl._monotonicity(np.asarray(bins, np.float64))
        if mono == 0:
            raise ValueError("bins must be monotonically increasing or decreasing")
        if mono == 1:
            return np_searchsorted(em, b, xv, side)
        return apply_ufunc(em, np.subtract, n, np_searchsorted(em, flip(em, b, (0,)), xv, side))
    up, ok = _direction(em, b)
    increasing = np_searchsorted(em, b, xv, side)
    decreasing = apply_ufunc(em, np.subtract, n, np_searchsorted(em, flip(em, b, (0,)), xv, side))
    out = emit(em, "where", up, increasing, decreasing)
    return emit(em, "require", out, ok, status="BINS_NOT_MONOTONIC_EITHER_WAY")


def _direction(em: Emitter, b: Any):
    """(increasing, monotonic) as numpy's check decides them (in float64): the first pair of
    unequal neighbours sets the direction (a NaN first edge: decreasing), and no later pair may go
    the other way. Empty and constant bins count as increasing."""
    f = cast(em, b, irdt.float64)
    lo, hi = slice_axis(em, f, 0, None, -1), slice_axis(em, f, 0, 1, None)
    ne, lt, gt = (emit(em, op, lo, hi) for op in ("ne", "lt", "gt"))
    first = emit(em, "eq", np_cumsum(em, cast(em, ne, irdt.int64)), scalar_like(em, 1, irdt.int64))
    down_first = emit(em, "logical_and", emit(em, "logical_and", ne, first), emit(em, "logical_not", lt))
    up = emit(em, "logical_not", _any(em, down_first))
    no_descent, no_ascent = emit(em, "logical_not", _any(em, gt)), emit(em, "logical_not", _any(em, lt))
    ok = emit(em, "logical_or", emit(em, "logical_and", up, no_descent),
              emit(em, "logical_and", emit(em, "logical_not", up), no_ascent))
    return up, ok


def _any(em: Emitter, v: Any):
    return red.reduce(em, "any", v, (0,), False)


# --- unwrap ---------------------------------------------------------------------------------------------

def np_unwrap(em: Emitter, p: Any, discont: Any = None, axis: Any = -1, *, period: Any = 2 * np.pi):
    if is_traced(em, period):
        raise UnsupportedError("np.unwrap: `period` must be known at trace time (it decides the result "
                               "dtype's arithmetic); pass a Python or numpy scalar")
    pv = to_value(em, p)
    nd = abstract_of(pv).ndim
    dd = np_diff(em, pv, axis=axis)
    ax = normalize_axis(axis, nd)
    if discont is None:
        discont = period / 2
    dtype = result_dtype(em, dd, period)
    if dtype.is_int:
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high, boundary_ambiguous = period / 2, True
    interval_low = -interval_high

    def u(ufunc, *args):
        return apply_ufunc(em, ufunc, *args)

    ddmod = u(np.add, u(np.mod, u(np.subtract, dd, interval_low), period), interval_low)
    if boundary_ambiguous:  # numpy's copyto: |dd| == period/2 keeps dd's sign
        at_low = emit(em, "logical_and", u(np.equal, ddmod, interval_low), u(np.greater, dd, 0))
        ddmod = emit(em, "where", at_low, to_value(em, interval_high, abstract_of(ddmod).dtype), ddmod)
    ph_correct = u(np.subtract, ddmod, dd)
    small = u(np.less, u(np.absolute, dd), discont)
    ph_correct = emit(em, "where", small, to_value(em, 0, abstract_of(ph_correct).dtype), ph_correct)
    rest = u(np.add, slice_axis(em, pv, ax, 1, None), np_cumsum(em, ph_correct, ax))
    head = slice_axis(em, pv, ax, 0, 1)
    return emit(em, "concatenate", cast(em, head, dtype), cast(em, rest, dtype), axis=ax)


# --- i0 -------------------------------------------------------------------------------------------------

def np_i0(em: Emitter, x: Any):
    v = to_value(em, x)
    dt = abstract_of(v).dtype
    if dt.is_complex:
        raise TypeError("i0 not supported for complex values")
    if not dt.is_float:
        v = cast(em, v, irdt.float64)
    v = apply_ufunc(em, np.absolute, v)

    def u(ufunc, *args):
        return apply_ufunc(em, ufunc, *args)

    ex = u(np.exp, v)
    small = u(np.multiply, ex, _chbevl(em, u(np.subtract, u(np.true_divide, v, 2.0), 2), _I0_SMALL))
    series = _chbevl(em, u(np.subtract, u(np.true_divide, 32.0, v), 2.0), _I0_LARGE)
    large = u(np.true_divide, u(np.multiply, ex, series), u(np.sqrt, v))
    return emit(em, "where", u(np.less_equal, v, 8.0), small, large)


def _chbevl(em: Emitter, x: Any, vals: tuple[float, ...]):
    """numpy's Clenshaw recurrence, term by term in numpy's order (Python float coefficients: weak)."""
    b0, b1, b2 = vals[0], 0.0, 0.0
    for c in vals[1:]:
        b2, b1 = b1, b0
        b0 = apply_ufunc(em, np.add, apply_ufunc(em, np.subtract, apply_ufunc(em, np.multiply, x, b1), b2), c)
    return apply_ufunc(em, np.multiply, 0.5, apply_ufunc(em, np.subtract, b0, b2))


# numpy functions that are not one core op
DECOMPOSITIONS = {np.digitize: np_digitize, np.unwrap: np_unwrap, np.i0: np_i0}
