"""Shape arithmetic shared by the rows: attribute checks and dims that may be sympy expressions.

Static dims stay Python ints (fast path, no sympy); a symbolic operand switches to sympy's Max, Min
and floor, which simplify with the size symbols' assumptions (integer, positive).
"""
from __future__ import annotations

import functools
import operator
from typing import Any

from ir.opdef import OpError
from ir.symbols import current_decider, is_static, norm_dim, sympy


def smax(a: Any, b: Any):
    a, b = norm_dim(a), norm_dim(b)
    return max(a, b) if is_static(a) and is_static(b) else norm_dim(sympy().Max(a, b))


def smin(a: Any, b: Any):
    a, b = norm_dim(a), norm_dim(b)
    return min(a, b) if is_static(a) and is_static(b) else norm_dim(sympy().Min(a, b))


def floordiv(a: Any, b: int):
    a = norm_dim(a)
    return a // b if is_static(a) else norm_dim(sympy().floor(a / b))


def numel(shape: tuple):
    return norm_dim(functools.reduce(operator.mul, shape, 1))


def is_negative(op: str, d: Any) -> bool:
    """Sign of an index bound; a symbolic one whose sign sympy cannot decide is an error."""
    d = norm_dim(d)
    if is_static(d):
        return d < 0
    if d.is_negative:
        return True
    if d.is_nonnegative:
        return False
    decider = current_decider()  # while tracing: decided from the size hints, with a guard
    if decider is not None:
        return not decider.le(0, d)
    raise OpError(f"{op}: cannot decide the sign of index {d}; normalise it in the front end")


def is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def check_int_tuple(op: str, value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not all(is_int(a) for a in value):
        raise OpError(f"{op}: {what} must be a tuple of ints, got {value!r}")
    return tuple(value)


def check_axes(op: str, axes: Any, rank: int, what: str = "axes") -> tuple[int, ...]:
    """Axes normalised by the front end: ints in [0, rank), no duplicates."""
    axes = check_int_tuple(op, axes, what)
    for a in axes:
        if not 0 <= a < rank:
            raise OpError(f"{op}: {what} {axes} must be normalised into [0, {rank}) for rank {rank}")
    if len(set(axes)) != len(axes):
        raise OpError(f"{op}: duplicate entries in {what} {axes}")
    return axes


def check_axis(op: str, axis: Any, rank: int, what: str = "axis") -> int:
    if not is_int(axis) or not 0 <= axis < rank:
        raise OpError(f"{op}: {what} must be an int normalised into [0, {rank}), got {axis!r}")
    return axis


def check_dim(op: str, d: Any, what: str = "dimension"):
    """A size given as an attribute: a non-negative int or a sympy expression."""
    try:
        d = norm_dim(d)
    except TypeError:
        raise OpError(f"{op}: {what} must be an int or a sympy expression, got {d!r}") from None
    if (is_static(d) and d < 0) or (not is_static(d) and d.is_negative):
        raise OpError(f"{op}: {what} must be non-negative, got {d}")
    return d


def check_shape(op: str, shape: Any, what: str = "shape") -> tuple:
    if not isinstance(shape, (tuple, list)):
        raise OpError(f"{op}: {what} must be a tuple of dims, got {shape!r}")
    return tuple(check_dim(op, d, f"{what} entry") for d in shape)


def reduced_shape(shape: tuple, axes: tuple[int, ...], keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def slice_length(op: str, n: Any, start: Any, stop: Any, step: int):
    """len(range(n)[start:stop:step]) with Python's clamping (slice.indices), symbolic or not."""
    if step > 0:
        lower, upper = 0, n
    else:
        lower, upper = -1, norm_dim(n - 1)

    def bound(i: Any, default: Any):
        if i is None:
            return default
        i = norm_dim(i)
        return smax(i + n, lower) if is_negative(op, i) else smin(i, upper)

    start = bound(start, upper if step < 0 else lower)
    stop = bound(stop, lower if step < 0 else upper)
    if step > 0:
        return smax(0, floordiv(stop - start + step - 1, step))
    return smax(0, floordiv(start - stop - step - 1, -step))
