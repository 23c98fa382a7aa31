"""Creation functions: zeros/ones/full/empty (and *_like) are the full and full_like rows' (registered
against them); arange, linspace, eye/identity and the tri masks decompose (DECOMPOSITIONS)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ir import dtypes as irdt

from .emitter import Emitter, abstract_of
from .numpy_shape import _shape_arg, broadcast_to, expand_dims
from .numpy_ufuncs import emit
from .operands import (
    UnsupportedError,
    cast,
    full,
    full_like,
    is_python_scalar,
    scalar_like,
    to_dtype,
    to_value,
)
from .registry import translates


def _unsupported_order(fname: str, order: str) -> None:
    if order not in ("C", "K", "A"):
        raise UnsupportedError(f"{fname}: only C order is supported in traced code, got order={order!r}")


def _filled(fname: str, value: Any, default_dtype: Any = float):
    def translate(em: Emitter, shape: Any, dtype: Any = default_dtype, order: str = "C", *,
                  device: Any = None, like: Any = None):
        _unsupported_order(f"np.{fname}", order)
        return full(em, _shape_arg(shape), value, to_dtype(dtype, "dtype"))

    translate.__name__ = f"np_{fname}"
    return translate


np_zeros = translates("full", "zeros")(_filled("zeros", 0))
np_ones = translates("full", "ones")(_filled("ones", 1))
np_empty = translates("full", "empty")(_filled("empty", 0))  # traced code never reads uninitialised memory


@translates("full", "full")
def np_full(em: Emitter, shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", *,
            device: Any = None, like: Any = None):
    _unsupported_order("np.full", order)
    shape = _shape_arg(shape)
    if em.is_value(fill_value):
        v = fill_value if dtype is None else cast(em, fill_value, to_dtype(dtype, "dtype"))
        return broadcast_to(em, v, shape)
    dt = to_dtype(dtype if dtype is not None else np.asarray(fill_value).dtype, "dtype")
    return full(em, shape, np.asarray(fill_value).astype(dt.numpy).item(), dt)


def _filled_like(fname: str, value: Any):
    def translate(em: Emitter, a: Any, dtype: Any = None, order: str = "K", subok: bool = True,
                  shape: Any = None, *, device: Any = None):
        return _like(em, f"np.{fname}", a, value, dtype, order, shape)

    translate.__name__ = f"np_{fname}"
    return translate


def _like(em: Emitter, fname: str, a: Any, value: Any, dtype: Any, order: str, shape: Any):
    _unsupported_order(fname, order)
    x = to_value(em, a)
    dt = to_dtype(dtype, "dtype") if dtype is not None else abstract_of(x).dtype
    value = np.asarray(value).astype(dt.numpy).item()
    if shape is not None:
        return full(em, _shape_arg(shape), value, dt)
    return full_like(em, x, value, dt)


np_zeros_like = translates("full_like", "zeros_like")(_filled_like("zeros_like", 0))
np_ones_like = translates("full_like", "ones_like")(_filled_like("ones_like", 1))
np_empty_like = translates("full_like", "empty_like")(_filled_like("empty_like", 0))


@translates("full_like", "full_like")
def np_full_like(em: Emitter, a: Any, fill_value: Any, dtype: Any = None, order: str = "K",
                 subok: bool = True, shape: Any = None, *, device: Any = None):
    if em.is_value(fill_value):
        x = to_value(em, a)
        dt = to_dtype(dtype, "dtype") if dtype is not None else abstract_of(x).dtype
        return broadcast_to(em, cast(em, fill_value, dt), abstract_of(x).shape if shape is None else shape)
    return _like(em, "np.full_like", a, fill_value, dtype, order, shape)


# --- ranges ---------------------------------------------------------------------------------------

def _number(x: Any, argname: str):
    if is_python_scalar(x) or isinstance(x, np.generic):
        return x
    raise UnsupportedError(f"{argname} must be a Python or numpy number known at trace time, got "
                           f"{type(x).__name__}")


def np_arange(em: Emitter, start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *,
              device: Any = None, like: Any = None):
    """start + i * delta with numpy's length and dtype (delta = (start + step) - start, as numpy)."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    start, stop, step = (_number(v, n) for v, n in ((start, "start"), (stop, "stop"), (step, "step")))
    if step == 0:
        raise ZeroDivisionError("division by zero")  # numpy's message for step=0
    if dtype is None:
        dtype = np.result_type(*(np.asarray(v) for v in (start, stop, step)))
    dt = to_dtype(dtype, "dtype")
    n = max(0, math.ceil((stop - start) / step))
    if dt.is_bool:
        if n > 2:
            raise TypeError("arange() is only supported for booleans when the result has at most length 2.")
        return to_value(em, np.arange(start, stop, step, dtype=bool))
    if dt.is_complex:  # numpy's own (odd: the length comes from the real parts) values, as a constant
        return to_value(em, np.arange(start, stop, step, dtype=dt.numpy))
    first = dt.numpy.type(start)
    delta = dt.numpy.type(dt.numpy.type(start + step) - first)
    i = emit(em, "iota", n=n, dtype=dt)
    y = emit(em, "mul", i, scalar_like(em, delta, dt)) if delta != 1 else i
    return emit(em, "add", y, scalar_like(em, first, dt)) if first != 0 else y


def np_linspace(em: Emitter, start: Any, stop: Any, num: int = 50, endpoint: bool = True,
                retstep: bool = False, dtype: Any = None, axis: int = 0, *, device: Any = None):
    start, stop = _number(start, "start"), _number(stop, "stop")
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if axis != 0:
        raise UnsupportedError("np.linspace: only axis=0 is supported in traced code")
    dt = to_dtype(np.result_type(np.asarray(start), np.asarray(stop), float), "dtype")
    div = (num - 1) if endpoint else num
    delta = dt.numpy.type(stop) - dt.numpy.type(start)
    step = delta / div if div > 0 else np.nan
    i = emit(em, "iota", n=num, dtype=dt)
    if div > 0 and step == 0:
        y = emit(em, "mul", emit(em, "div", i, scalar_like(em, div, dt)), scalar_like(em, delta, dt))
    else:  # numpy multiplies by delta when the step is undefined (num <= 1 with endpoint)
        y = emit(em, "mul", i, scalar_like(em, step if div > 0 else delta, dt))
    y = emit(em, "add", y, scalar_like(em, start, dt))
    if endpoint and num > 1:
        last = emit(em, "eq", i, scalar_like(em, num - 1, dt))
        y = emit(em, "where", last, scalar_like(em, stop, dt), y)
    if dtype is not None:
        out = to_dtype(dtype, "dtype")
        if out.is_int:
            y = emit(em, "floor", y)
        y = cast(em, y, out)
    return (y, step) if retstep else y


# --- matrices from index arithmetic ----------------------------------------------------------------

def _index_grid(em: Emitter, n: Any, m: Any):
    rows = expand_dims(em, emit(em, "iota", n=n, dtype=irdt.int64), (1,))
    cols = expand_dims(em, emit(em, "iota", n=m, dtype=irdt.int64), (0,))
    return rows, cols


def np_eye(em: Emitter, N: Any, M: Any = None, k: int = 0, dtype: Any = float, order: str = "C", *,
           device: Any = None, like: Any = None):
    _unsupported_order("np.eye", order)
    rows, cols = _index_grid(em, N, N if M is None else M)
    diag = emit(em, "eq", emit(em, "sub", cols, rows), scalar_like(em, k, irdt.int64))
    return cast(em, diag, to_dtype(dtype, "dtype"))


def np_identity(em: Emitter, n: Any, dtype: Any = None, *, like: Any = None):
    return np_eye(em, n, dtype=float if dtype is None else dtype)


def _tri_mask(lower: bool):
    def translate(em: Emitter, m: Any, k: int = 0):
        x = to_value(em, m)
        shape = abstract_of(x).shape
        if not shape:
            raise TypeError("tri() missing 1 required positional argument: 'N'")
        # numpy's mask is tri(*m.shape[-2:]): a 1-d m is the row of an n x n result
        rows, cols = _index_grid(em, shape[-2] if len(shape) >= 2 else shape[-1], shape[-1])
        d = emit(em, "sub", cols, rows)
        mask = emit(em, "le" if lower else "ge", d, scalar_like(em, k, irdt.int64))
        return emit(em, "where", mask, x, full_like(em, x, 0))

    translate.__name__ = "np_tril" if lower else "np_triu"
    return translate


np_tril = _tri_mask(lower=True)
np_triu = _tri_mask(lower=False)


# functions of Python scalars and shapes only: numpy computes them while tracing (a constant in the
# graph). Not with a size read from a dynamic shape (numpy's math on a SymInt fails).
TRACE_TIME = (np.bartlett, np.blackman, np.hamming, np.hanning, np.kaiser, np.indices, np.broadcast_shapes,
              np.geomspace, np.logspace, np.tril_indices, np.triu_indices, np.diag_indices)

# numpy functions that are not one core op (the row-named ones register with @translates)
DECOMPOSITIONS = {
    np.arange: np_arange, np.linspace: np_linspace, np.eye: np_eye, np.identity: np_identity,
    np.tril: np_tril, np.triu: np_triu,
}
