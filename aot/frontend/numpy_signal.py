"""np.convolve and np.correlate (numpy's multiarray correlate: the shorter operand slides over the
longer one) on the correlate1d row (aot/ops/signal.py), and np.interp by
decomposition into searchsorted, take and elementwise ops (numpy's compiled_interp(_complex), its
special cases and its NaN retries included)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ir import dtypes as irdt

from .emitter import Emitter, abstract_of
from .numpy_shape import reshape
from .numpy_ufuncs import apply_ufunc, emit
from .operands import UnsupportedError, cast, result_dtype, scalar_like, to_value
from .shapes import dim_equals, dim_le, dims_equal, static_int
from .static_args import is_traced

_MODES = {"v": 0, "s": 1, "f": 2}
F64, C128, I64 = irdt.float64, irdt.complex128, irdt.int64


def _mode(mode: Any) -> int:
    if isinstance(mode, str):
        try:
            return _MODES[mode.lower()[0]]
        except (KeyError, IndexError):
            raise ValueError(f"mode must be one of 'valid', 'same' or 'full', got {mode!r}") from None
    if mode not in (0, 1, 2):
        raise ValueError("mode must be 0, 1, or 2")
    return int(mode)


def _vector(em: Emitter, x: Any):
    v = to_value(em, x)
    n = abstract_of(v).ndim
    if n > 1:
        raise ValueError("object too deep for desired array")
    return reshape(em, v, (1,)) if n == 0 else v


def _flip(em: Emitter, v: Any):
    return emit(em, "flip", v, axes=(0,))


def correlate(em: Emitter, a: Any, v: Any, mode: int):
    """numpy's _pyarray_correlate for len(a) >= len(v): v slides over a with an overhang of n_left
    positions before and n_right after (valid: none; same: len(v) // 2 and the rest; full:
    len(v) - 1 each)."""
    if mode == 0:
        return emit(em, "correlate1d", a, v, left=0, right=0)
    m = static_int(abstract_of(v).shape[0], "the length of the shorter operand of np.convolve/np.correlate")
    left, right = (m // 2, m - m // 2 - 1) if mode == 1 else (m - 1, m - 1)
    return emit(em, "correlate1d", a, v, left=left, right=right)


def _operands(em: Emitter, a: Any, v: Any):
    x, y = _vector(em, a), _vector(em, v)
    dt = result_dtype(em, x, y)
    return cast(em, x, dt), cast(em, y, dt)


def np_convolve(em: Emitter, a: Any, v: Any, mode: Any = "full"):
    x, y = _operands(em, a, v)
    if not dim_le(abstract_of(y).shape[0], abstract_of(x).shape[0]):
        x, y = y, x
    if dim_equals(abstract_of(x).shape[0], 0):
        raise ValueError("a cannot be empty")
    if dim_equals(abstract_of(y).shape[0], 0):
        raise ValueError("v cannot be empty")
    return correlate(em, x, _flip(em, y), _mode(mode))


def np_correlate(em: Emitter, a: Any, v: Any, mode: Any = "valid"):
    x, y = _operands(em, a, v)
    if abstract_of(y).dtype.is_complex:
        y = emit(em, "conj", y)
    if dim_equals(abstract_of(x).shape[0], 0):
        raise ValueError("first array argument cannot be empty")
    if dim_equals(abstract_of(y).shape[0], 0):
        raise ValueError("second array argument cannot be empty")
    m = _mode(mode)
    if dim_le(abstract_of(y).shape[0], abstract_of(x).shape[0]):
        return correlate(em, x, y, m)
    return _flip(em, correlate(em, y, x, m))  # numpy swaps the operands and reverses the result


# --- interp -------------------------------------------------------------------------------------------

def _points(em: Emitter, x: Any, what: str):
    v = to_value(em, x)
    if abstract_of(v).dtype.is_complex:
        raise TypeError(f"Cannot cast array data from dtype('{abstract_of(v).dtype.numpy}') to "
                        f"dtype('float64') according to the rule 'safe'")
    return cast(em, v, F64)


def _at(em: Emitter, v: Any, i: int):
    n = abstract_of(v).shape[0]
    k = i % n if isinstance(n, int) else (n + i if i < 0 else i)
    return emit(em, "reshape", emit(em, "slice", v, starts=(k,), stops=(k + 1,), steps=(1,)), shape=())


def _fill_value(em: Emitter, value: Any, default: Any, dt: irdt.DType):
    if value is None:
        return default
    if em.is_value(value):
        return cast(em, value, dt)
    return scalar_like(em, complex(value) if dt.is_complex else float(value), dt)


def np_interp(em: Emitter, x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None):
    fv = to_value(em, fp)
    dt = C128 if abstract_of(fv).dtype.is_complex else F64
    fv = cast(em, fv, dt)
    xv, xpv = _points(em, x, "x"), _points(em, xp, "xp")
    if abstract_of(xpv).ndim != 1 or abstract_of(fv).ndim != 1:
        raise ValueError("object too deep for desired array" if period is None else
                         "Data points must be 1-D sequences")
    if not dim_equals(abstract_of(xpv).shape[0], 0) and not _same_length(xpv, fv):
        raise ValueError("fp and xp are not of the same length" + ("" if period is not None else "."))
    if period is not None:
        if is_traced(em, period):
            raise UnsupportedError("np.interp: `period` must be a number known at trace time")
        if period == 0:
            raise ValueError("period must be a non-zero value")
        xv, xpv, fv = _periodic(em, xv, xpv, fv, abs(period))
        left = right = None
    shape = abstract_of(xv).shape
    if dim_equals(abstract_of(xpv).shape[0], 0):
        if not any(dim_equals(d, 0) for d in shape):
            raise ValueError("array of sample points is empty")
        return cast(em, xv, dt)
    flat = reshape(em, xv, (-1,))
    out = _interp_flat(em, flat, xpv, fv, dt, left, right)
    return reshape(em, out, shape)


def _same_length(xp: Any, fp: Any) -> bool:
    return dims_equal(abstract_of(xp).shape[0], abstract_of(fp).shape[0])


def _periodic(em: Emitter, x: Any, xp: Any, fp: Any, period: float):
    """numpy's periodic wrap: x and xp modulo the period, xp sorted (fp with it) and extended by one
    point on each side."""
    x = apply_ufunc(em, np.remainder, x, period)
    xp = apply_ufunc(em, np.remainder, xp, period)
    order = emit(em, "argsort", xp, axis=0)
    xp, fp = emit(em, "take", xp, order, axis=0), emit(em, "take", fp, order, axis=0)
    n = abstract_of(xp).shape[0]
    first_x, last_x = _part(em, xp, 0, 1), _part(em, xp, n - 1, n)
    xp = emit(em, "concatenate", apply_ufunc(em, np.subtract, last_x, period), xp,
              apply_ufunc(em, np.add, first_x, period), axis=0)
    fp = emit(em, "concatenate", _part(em, fp, n - 1, n), fp, _part(em, fp, 0, 1), axis=0)
    return x, xp, fp


def _part(em: Emitter, v: Any, start: Any, stop: Any):
    return emit(em, "slice", v, starts=(start,), stops=(stop,), steps=(1,))


def _interp_flat(em: Emitter, x: Any, xp: Any, fp: Any, dt: irdt.DType, left: Any, right: Any):
    n = abstract_of(xp).shape[0]
    lval = _fill_value(em, left, _at(em, fp, 0), dt)
    rval = _fill_value(em, right, _at(em, fp, -1), dt)
    if isinstance(n, int) and n == 1:
        x0, y0 = _at(em, xp, 0), _at(em, fp, 0)
        r = emit(em, "where", emit(em, "gt", x, x0), rval, y0)
        return emit(em, "where", emit(em, "lt", x, x0), lval, r)
    c = emit(em, "searchsorted", xp, x, side="right")  # how many sample points are <= x
    one = scalar_like(em, 1, I64)
    j = emit(em, "sub", c, one)
    last = _size(em, n - 2)
    jc = emit(em, "maximum", emit(em, "minimum", j, last), scalar_like(em, 0, I64))
    jn = emit(em, "add", jc, one)
    x0, x1 = emit(em, "take", xp, jc, axis=0), emit(em, "take", xp, jn, axis=0)
    y0, y1 = emit(em, "take", fp, jc, axis=0), emit(em, "take", fp, jn, axis=0)
    if dt.is_complex:
        inv = emit(em, "div", scalar_like(em, 1.0, F64), emit(em, "sub", x1, x0))
        parts = [_lerp(em, x, x0, x1, emit(em, part, y0), emit(em, part, y1), inv=inv)
                 for part in ("real", "imag")]
        r = emit(em, "complex", *parts)
        nan_x = emit(em, "complex", x, scalar_like(em, 0.0, F64))
    else:
        r, nan_x = _lerp(em, x, x0, x1, y0, y1), x
    r = emit(em, "where", emit(em, "eq", x0, x), y0, r)  # avoid a non-finite interpolation at a sample point
    r = emit(em, "where", emit(em, "eq", c, _size(em, n)), y1, r)
    r = emit(em, "where", emit(em, "gt", x, _at(em, xp, -1)), rval, r)
    r = emit(em, "where", emit(em, "eq", c, scalar_like(em, 0, I64)), lval, r)
    return emit(em, "where", emit(em, "isnan", x), nan_x, r)


def _size(em: Emitter, n: Any):
    """A 0-d int64 of a size (computed at run time when symbolic)."""
    return scalar_like(em, n, I64) if isinstance(n, int) else emit(em, "full", shape=(), value=n, dtype=I64)


def _lerp(em: Emitter, x, x0, x1, y0, y1, inv=None):
    """slope * (x - x0) + y0, retried from the right end when nan, and y0 when still nan with equal
    ends (numpy's order of operations: the slope is (y1 - y0) / (x1 - x0), or times inv)."""
    dy = emit(em, "sub", y1, y0)
    slope = emit(em, "div", dy, emit(em, "sub", x1, x0)) if inv is None else emit(em, "mul", dy, inv)
    r = emit(em, "add", emit(em, "mul", slope, emit(em, "sub", x, x0)), y0)
    retry = emit(em, "add", emit(em, "mul", slope, emit(em, "sub", x, x1)), y1)
    r = emit(em, "where", emit(em, "isnan", r), retry, r)
    flat = emit(em, "logical_and", emit(em, "isnan", r), emit(em, "eq", y0, y1))
    return emit(em, "where", flat, y0, r)


# numpy functions that are not one core op
DECOMPOSITIONS = {np.convolve: np_convolve, np.correlate: np_correlate, np.interp: np_interp}
