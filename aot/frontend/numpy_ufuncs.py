"""numpy ufuncs -> core elementwise ops.

The loop dtypes come from numpy itself (`ufunc.resolve_dtypes`, with Python scalars passed as weak
`int`/`float`/`complex`), so promotion, `dtype=` and unsupported loops (e.g. `-` on bools) behave
exactly as in numpy. Operands are cast to the loop's input dtypes and Python scalars become
`constant` ops of that dtype, so every core op sees operands of one dtype.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from aot.ops import ALL_OPS
from ir.dtypes import DType
from ir.opdef import OPDEFS

from .emitter import Emitter, abstract_of
from .operands import (
    UnsupportedError,
    cast,
    constant,
    full_like,
    np_dtype_arg,
    result_dtype,
    scalar_like,
    to_dtype,
    to_value,
)
from .numpy_ufuncs_extra import DECOMPOSED as _EXTRA_DECOMPOSED
from .registry import translates


def _row_ufuncs() -> dict[np.ufunc, str]:
    """ufunc -> op, from the rows' numpy names (each row is the one place naming its ufuncs)."""
    out: dict[np.ufunc, str] = {}
    for op in ALL_OPS:
        if not OPDEFS[op].has("elementwise"):
            continue  # np.matmul is a (generalised) ufunc too, translated as linalg
        for name in OPDEFS[op].numpy_names:
            u = getattr(np, name, None)
            if isinstance(u, np.ufunc):
                out.setdefault(u, op)
    return out


# ufuncs that are one core op: the rows' own, and aliases numpy computes with another row's loop
UFUNC_CORE: dict[np.ufunc, str] = {
    **_row_ufuncs(),
    np.fabs: "abs",  # fabs has float loops only: ints and bools reach abs as float64
    np.rint: "round",  # round(decimals=0) is rint
}
_CORE_ATTRS = {np.rint: {"decimals": 0}}

# (core op, kind of the loop dtype) -> what numpy computes there: another op, or None (identity)
_BY_KIND: dict[tuple[str, str], str | None] = {
    ("add", "b"): "logical_or", ("mul", "b"): "logical_and",
    ("maximum", "b"): "logical_or", ("minimum", "b"): "logical_and",
    # on bools, bitwise ops are the logical ones (whose canonical forms the passes know)
    ("bitwise_and", "b"): "logical_and", ("bitwise_or", "b"): "logical_or",
    ("bitwise_xor", "b"): "logical_xor", ("invert", "b"): "logical_not",
    ("abs", "b"): None, ("floor", "b"): None, ("ceil", "b"): None, ("conj", "b"): None,
    ("floor", "i"): None, ("ceil", "i"): None, ("conj", "i"): None, ("conj", "f"): None,
}


def emit(em: Emitter, op: str, *operands: Any, **attrs: Any):
    """Shorthand used by the decompositions: em.emit(op, operands, attrs)."""
    return em.emit(op, list(operands), attrs)


def resolve_loop(em: Emitter, ufunc: np.ufunc, args: tuple, dtype: Any = None) -> tuple[list[DType], DType]:
    """numpy's loop for `ufunc(*args, dtype=dtype)`: input dtypes and the output dtype."""
    dts = tuple(np_dtype_arg(em, a) for a in args) + (None,) * ufunc.nout
    sig = None if dtype is None else (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout
    loop = ufunc.resolve_dtypes(dts) if sig is None else ufunc.resolve_dtypes(dts, signature=sig)
    what = f"np.{ufunc.__name__}"
    out = to_dtype(loop[-1], what)
    for d in loop[ufunc.nin:-1]:  # the other outputs of a two-output ufunc (np.frexp of bools: float16)
        to_dtype(d, what)
    # a float16 loop with a result the dialect holds (np.signbit of bools): float32 holds its inputs
    ins = [np.dtype(np.float32) if d == np.float16 else d for d in loop[:ufunc.nin]]
    return [to_dtype(d, what) for d in ins], out


def check_ufunc_kwargs(name: str, out: Any, where: Any, casting: str, order: str, signature: Any) -> None:
    if out is not None:
        raise UnsupportedError(f"np.{name}: the `out` argument is not supported in traced code (arrays are "
                               f"immutable there); use the returned array instead")
    if where is not True:
        raise UnsupportedError(f"np.{name}: the `where` argument is not supported in traced code; "
                               f"use np.where on the result")
    if casting != "same_kind" or order not in ("K", "C", "A") or signature is not None:
        raise UnsupportedError(f"np.{name}: the `casting`/`order`/`signature` arguments are not supported")


def apply_ufunc(em: Emitter, ufunc: np.ufunc, *args: Any, dtype: Any = None):
    """`ufunc(*args, dtype=dtype)` with numpy's semantics, as core ops."""
    if len(args) != ufunc.nin:
        raise TypeError(f"np.{ufunc.__name__} takes {ufunc.nin} positional argument(s), got {len(args)}")
    if not any(em.is_value(a) for a in args):
        r = ufunc(*args, dtype=dtype)  # constants only: numpy folds it now
        return tuple(constant(em, o) for o in r) if ufunc.nout > 1 else constant(em, r)
    if ufunc in _DECOMPOSED:
        ins, out_dt = resolve_loop(em, ufunc, args, dtype)
        vals = [to_value(em, a, dt) for a, dt in zip(args, ins)]
        r = _DECOMPOSED[ufunc](em, *vals)
        return r if ufunc.nout > 1 else cast(em, r, out_dt)  # several outputs: in their dtypes
    core = UFUNC_CORE.get(ufunc)
    if core is None:
        raise UnsupportedError(f"np.{ufunc.__name__} is not supported in traced code")
    ins, out_dt = resolve_loop(em, ufunc, args, dtype)
    if ufunc in _COMPARISONS and _int_out_of_range(em, args, ins):
        return _compare_out_of_range(em, ufunc, args, ins)
    vals = [to_value(em, a, dt) for a, dt in zip(args, ins)]  # (a Python int out of the dtype's range: OverflowError)
    if ufunc is np.power and ins[1].is_int and not em.is_value(args[1]) and np.any(np.asarray(args[1]) < 0) \
            and _surely_nonempty(em, args):
        raise ValueError("Integers to negative integer powers are not allowed.")  # numpy's check, made now
    return cast(em, _apply_core(em, core, vals, ins[0], _CORE_ATTRS.get(ufunc, {})), out_dt)


def _surely_nonempty(em: Emitter, args: tuple) -> bool:
    """Whether the broadcast result has elements for any sizes (numpy's per-element checks then
    fail for sure; otherwise the kernels check at run time)."""
    shapes = [abstract_of(a).shape if em.is_value(a) else np.shape(a) for a in args]
    return all(isinstance(d, int) and d > 0 for s in shapes for d in s)


_COMPARISONS = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)


def _int_out_of_range(em: Emitter, args: tuple, ins: list[DType]) -> bool:
    """A Python int that an integer array's own dtype cannot hold (a bool array's is not exempt)."""
    if not any(em.is_value(a) and abstract_of(a).dtype.is_int for a in args):
        return False
    return any(type(a) is int and dt.is_int and not np.iinfo(dt.numpy).min <= a <= np.iinfo(dt.numpy).max
               for a, dt in zip(args, ins))


def _compare_out_of_range(em: Emitter, ufunc: np.ufunc, args: tuple, ins: list[DType]):
    """An integer array against a Python int its dtype cannot hold (NEP 50 exempts comparisons
    from the overflow error): the answer is the same for every element, as numpy computes it."""
    (array,) = [a for a in args if em.is_value(a)]  # the other operand is the Python int
    probe = [np.zeros((), dt.numpy) if em.is_value(a) else a for a, dt in zip(args, ins)]
    answer = bool(ufunc(*probe))  # every in-range value compares alike against the out-of-range int
    return full_like(em, array, answer, to_dtype(bool))


def _apply_core(em: Emitter, core: str, vals: list, loop_dt: DType, attrs: dict):
    key = (core, loop_dt.kind)
    if key in _BY_KIND:
        alias = _BY_KIND[key]
        return vals[0] if alias is None else em.emit(alias, vals, attrs)
    return em.emit(core, vals, attrs)


def ufunc_translation(ufunc: np.ufunc) -> Callable:
    """The translation of `ufunc`, with numpy's keyword arguments."""
    def translate(em: Emitter, *args: Any, out: Any = None, where: Any = True, casting: str = "same_kind",
                  order: str = "K", dtype: Any = None, subok: bool = True, signature: Any = None):
        check_ufunc_kwargs(ufunc.__name__, out, where, casting, order, signature)
        return apply_ufunc(em, ufunc, *args, dtype=dtype)

    translate.__name__ = translate.__qualname__ = f"translate_{ufunc.__name__}"
    return translate


# --- ufuncs decomposed into core ops (operands already cast to the loop dtype) --------------------

def _c(em: Emitter, like: Any, value: float):
    return scalar_like(em, value, abstract_of(like).dtype)


def _scale(factor: float):
    def build(em, x):
        return emit(em, "mul", x, _c(em, x, factor))
    return build


def _fmax_fmin(core: str):
    def build(em, a, b):
        if not abstract_of(a).dtype.is_inexact:
            return emit(em, core, a, b)
        m = emit(em, core, a, b)
        return emit(em, "where", emit(em, "isnan", b), a, emit(em, "where", emit(em, "isnan", a), b, m))
    return build


def _float_power(em, a, b):
    return emit(em, "pow", a, b)


_DECOMPOSED: dict[np.ufunc, Callable] = {
    np.deg2rad: _scale(math.pi / 180), np.rad2deg: _scale(180 / math.pi),
    np.fmax: _fmax_fmin("maximum"), np.fmin: _fmax_fmin("minimum"),
    np.float_power: _float_power, np.positive: lambda em, x: x,
}
_ALIASES = {np.radians: np.deg2rad, np.degrees: np.rad2deg}
for _alias, _target in _ALIASES.items():
    if _alias is not _target:
        _DECOMPOSED[_alias] = _DECOMPOSED[_target]

_DECOMPOSED.update(_EXTRA_DECOMPOSED)  # two-output ufuncs and vector gufuncs (numpy_ufuncs_extra.py)
ALL_UFUNCS: tuple[np.ufunc, ...] = tuple(UFUNC_CORE) + tuple(_DECOMPOSED)


# --- elementwise functions that are not ufuncs -----------------------------------------------------
# np.where, np.clip, np.real and np.imag are one row each (@translates); np.angle, np.sinc and np.isclose
# decompose (DECOMPOSITIONS)

@translates("where")
def np_where(em: Emitter, condition: Any, x: Any = None, y: Any = None):
    if x is None and y is None:
        raise UnsupportedError("np.where(condition) with one argument has a data-dependent shape and is not "
                               "supported in traced code; use the 3-argument form np.where(condition, x, y)")
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    if not any(em.is_value(a) for a in (condition, x, y)):
        return constant(em, np.where(condition, x, y))
    dt = result_dtype(em, x, y)
    c = to_value(em, condition, to_dtype(bool))
    return emit(em, "where", c, to_value(em, x, dt), to_value(em, y, dt))


@translates("clip")
def np_clip(em: Emitter, a: Any, a_min: Any = np._NoValue, a_max: Any = np._NoValue, out: Any = None, *,
            min: Any = np._NoValue, max: Any = np._NoValue, **kwargs: Any):
    check_ufunc_kwargs("clip", out, kwargs.pop("where", True), kwargs.pop("casting", "same_kind"), "K", None)
    if kwargs:
        raise TypeError(f"np.clip got unexpected keyword argument(s) {sorted(kwargs)}")
    lo = _one_of("a_min", a_min, "min", min)
    hi = _one_of("a_max", a_max, "max", max)
    bounds = [b for b in (lo, hi) if b is not None]
    dt = result_dtype(em, a, *bounds)
    x = to_value(em, a, dt)
    if lo is None and hi is None:
        return x
    if lo is None:
        return emit(em, "minimum", x, to_value(em, hi, dt))
    if hi is None:
        return emit(em, "maximum", x, to_value(em, lo, dt))
    return emit(em, "clip", x, to_value(em, lo, dt), to_value(em, hi, dt))


def _one_of(name: str, value: Any, alias: str, alias_value: Any) -> Any:
    if value is not np._NoValue and alias_value is not np._NoValue:
        raise TypeError(f"np.clip: pass only one of `{name}` and `{alias}`")
    v = value if value is not np._NoValue else alias_value
    return None if v is np._NoValue else v


@translates("real")
def np_real(em: Emitter, val: Any):
    x = to_value(em, val)
    return emit(em, "real", x) if abstract_of(x).dtype.is_complex else x


@translates("imag")
def np_imag(em: Emitter, val: Any):
    x = to_value(em, val)
    if abstract_of(x).dtype.is_complex:
        return emit(em, "imag", x)
    return full_like(em, x, 0)


def np_angle(em: Emitter, z: Any, deg: bool = False):
    x = to_value(em, z)
    dt = abstract_of(x).dtype
    if dt.is_complex:
        re, im = emit(em, "real", x), emit(em, "imag", x)
    else:
        re = cast(em, x, dt if dt.is_float else to_dtype(np.float64))
        im = full_like(em, re, 0)
    out = emit(em, "arctan2", im, re)
    return _scale(180 / math.pi)(em, out) if deg else out


def np_sinc(em: Emitter, x: Any):
    x = to_value(em, x)
    dt = abstract_of(x).dtype
    if not dt.is_inexact:
        x = cast(em, x, to_dtype(np.float64))
    y = emit(em, "mul", x, _c(em, x, math.pi))
    zero = emit(em, "eq", x, _c(em, x, 0))
    safe = emit(em, "where", zero, _c(em, y, 1e-20), y)
    return emit(em, "where", zero, _c(em, y, 1), emit(em, "div", emit(em, "sin", safe), safe))


def np_isclose(em: Emitter, a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
               equal_nan: bool = False):
    dt = result_dtype(em, a, b, 1.0)
    x, y = to_value(em, a, dt), to_value(em, b, dt)
    diff = emit(em, "abs", emit(em, "sub", x, y))
    rdt = abstract_of(diff).dtype
    tol = emit(em, "add", scalar_like(em, atol, rdt), emit(em, "mul", scalar_like(em, rtol, rdt),
                                                          emit(em, "abs", y)))
    # numpy: (|x - y| <= atol + rtol * |y|) & isfinite(y) | (x == y): an infinite y is close only to itself
    within = emit(em, "logical_and", emit(em, "le", diff, tol), emit(em, "isfinite", y))
    close = emit(em, "logical_or", emit(em, "eq", x, y), within)
    if equal_nan:
        both = emit(em, "logical_and", emit(em, "isnan", x), emit(em, "isnan", y))
        close = emit(em, "logical_or", close, both)
    return close


# numpy functions that are not one core op (the row-named ones register with @translates)
DECOMPOSITIONS: dict[Callable, Callable] = {np.angle: np_angle, np.sinc: np_sinc, np.isclose: np_isclose}
