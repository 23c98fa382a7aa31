"""Shared helpers of the translations: operand kinds, weak scalars, constants, casts, axes, errors."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ir import dtypes as irdt
from ir.dtypes import DType
from ir.symbols import exact_ratio, size_is_int

from .emitter import Emitter, abstract_of

AxisError = np.exceptions.AxisError


class FrontendError(TypeError):
    """A numpy call that the front end cannot translate; the message names the function/argument."""


class UnsupportedError(FrontendError, NotImplementedError):
    """A numpy function, argument or mode that traced code does not support."""


# --- operand kinds -------------------------------------------------------------------------------

def is_python_scalar(x: Any) -> bool:
    """bool/int/float/complex written in Python: weak under NEP 50 (np.float64 is not)."""
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def is_size_expr(x: Any) -> bool:
    """A symbolic size in user arithmetic (`x * x.shape[0]`, `len(x)`): an int known at run time,
    weak like a Python int."""
    return hasattr(x, "free_symbols") and not isinstance(x, (np.ndarray, np.generic))


def to_dtype(dt: Any, what: str = "dtype") -> DType:
    """An ir DType from anything numpy accepts as a dtype; TypeError naming `what` otherwise."""
    try:
        return irdt.from_numpy(dt)
    except TypeError as e:
        raise irdt.UnsupportedDTypeError(f"{what}: {e}") from None


def np_dtype_arg(em: Emitter, x: Any) -> Any:
    """What np.result_type / ufunc.resolve_dtypes should see for `x` (Python scalars stay weak)."""
    if em.is_value(x):
        return abstract_of(x).dtype.numpy
    if isinstance(x, bool):
        return np.dtype(bool)  # bool is the lowest kind: weak and strong bool promote alike
    if is_python_scalar(x):
        return type(x)
    if is_size_expr(x):
        return int if size_is_int(x) else float
    return np.asarray(x).dtype


def result_dtype(em: Emitter, *xs: Any) -> DType:
    """numpy 2 result type of the operands (NEP 50: Python scalars are weak)."""
    args = []
    for x in xs:
        if em.is_value(x):
            args.append(abstract_of(x).dtype)
        elif is_python_scalar(x):
            args.append(x)
        elif is_size_expr(x):
            args.append(0 if size_is_int(x) else 0.0)  # a weak Python int or float
        else:
            args.append(np.asarray(x).dtype)
    return irdt.result_type(*args)


# --- constants and casts -------------------------------------------------------------------------

def _scalar_in(value: Any, dtype: DType) -> Any:
    """A Python scalar converted to `dtype` as numpy would for a weak scalar (ints are range-checked)."""
    if isinstance(value, int) and not isinstance(value, bool) and (dtype.is_int or dtype.is_bool):
        # a bool loop (logical ops) still converts the int to numpy's default int first
        info = np.iinfo(dtype.numpy if dtype.is_int else np.int64)
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python integer {value} out of bounds for {info.dtype}")
    return dtype.numpy.type(value).item()


def constant(em: Emitter, value: Any, dtype: DType | None = None):
    """A `constant` op for a Python scalar or a numpy array (dtype defaults to numpy's); a size
    expression becomes a 0-d `full` computed at run time."""
    if is_size_expr(value):
        integer = size_is_int(value)
        dtype = dtype or (irdt.int64 if integer else irdt.float64)
        if dtype.is_bool:
            return em.emit("ne", [constant(em, value), constant(em, 0)], {})
        if integer or exact_ratio(value) is not None:  # computed (and checked) at run time
            full_dtype = dtype if integer or not dtype.is_int else irdt.float64
            return cast(em, em.emit("full", [], {"shape": (), "value": value, "dtype": full_dtype}), dtype)
        return cast(em, _size_arithmetic(em, value), dtype)
    if is_python_scalar(value):
        dtype = dtype or to_dtype(np.asarray(value).dtype, "constant")
        return em.emit("constant", [], {"value": _scalar_in(value, dtype), "dtype": dtype})
    arr = np.asarray(value)
    dtype = dtype or to_dtype(arr.dtype, "constant")
    arr = arr.astype(dtype.numpy, copy=False)
    if arr.ndim == 0:
        return em.emit("constant", [], {"value": arr.item(), "dtype": dtype})
    return em.emit("constant", [], {"value": arr, "dtype": dtype})


def _size_arithmetic(em: Emitter, expr: Any):
    """A float64 value computing an expression of sizes with float constants (`0.5 * n + 1`):
    integer subexpressions come from the sizes at run time, the rest is float arithmetic (sympy
    may have regrouped the user's terms, so the last bit can differ from Python's)."""
    if size_is_int(expr):
        return em.emit("full", [], {"shape": (), "value": expr, "dtype": irdt.float64})
    if expr.is_Number:
        return constant(em, float(expr), irdt.float64)
    args = [_size_arithmetic(em, a) for a in expr.args]
    if expr.is_Add or expr.is_Mul:
        out = args[0]
        for a in args[1:]:
            out = em.emit("add" if expr.is_Add else "mul", [out, a], {})
        return out
    if expr.is_Pow:
        if expr.exp == -1:
            return em.emit("div", [constant(em, 1.0, irdt.float64), args[0]], {})
        return em.emit("pow", args, {})
    raise UnsupportedError(f"the size expression {expr} cannot be computed in compiled code")


def cast(em: Emitter, v: Any, dtype: DType):
    """v as `dtype` (numpy's unsafe astype); no op when it already is."""
    if abstract_of(v).dtype == dtype:
        return v
    return em.emit("cast", [v], {"dtype": dtype})


def to_value(em: Emitter, x: Any, dtype: DType | None = None):
    """A value of this emitter for any operand, cast to `dtype` when given."""
    if em.is_value(x):
        return x if dtype is None else cast(em, x, dtype)
    return constant(em, x, dtype)


def full(em: Emitter, shape: tuple, value: Any, dtype: DType):
    return em.emit("full", [], {"shape": tuple(shape), "value": _scalar_in(value, dtype), "dtype": dtype})


def full_like(em: Emitter, x: Any, value: Any, dtype: DType | None = None):
    dtype = dtype or abstract_of(x).dtype
    return em.emit("full_like", [x], {"value": _scalar_in(value, dtype), "dtype": dtype})


def scalar_like(em: Emitter, value: Any, dtype: DType):
    """A 0-d constant of `dtype` (used to build decompositions such as x * ln2)."""
    return em.emit("constant", [], {"value": dtype.numpy.type(value).item(), "dtype": dtype})


# --- axes ----------------------------------------------------------------------------------------

def index_arg(x: Any, argname: str) -> int:
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"{argname} must be an integer, got {type(x).__name__}") from None


def normalize_axis(axis: Any, rank: int, argname: str = "axis") -> int:
    """A non-negative axis; numpy's AxisError when out of range."""
    a = index_arg(axis, argname)
    if not -rank <= a < rank:
        raise AxisError(a, rank, argname if argname != "axis" else None)
    return a % rank


def normalize_axes(axis: Any, rank: int, argname: str = "axis") -> tuple[int, ...]:
    """None -> every axis; int or sequence -> sorted unique non-negative axes."""
    if axis is None:
        return tuple(range(rank))
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = [normalize_axis(a, rank, argname) for a in items]
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in '{argname}'")
    return tuple(out)


def no_out(fname: str, out: Any = None) -> None:
    """Reject `out=`: traced arrays are immutable, results are returned."""
    if out is not None:
        raise UnsupportedError(f"{fname}: the `out` argument is not supported in traced code (arrays are "
                               f"immutable there); use the returned array instead")
