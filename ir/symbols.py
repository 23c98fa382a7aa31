"""Size symbols. sympy is imported lazily so that `import ir` (and `import aot`) stays fast."""
from __future__ import annotations

import contextlib
import contextvars
import functools
from typing import Any, Protocol

from .records import record


@functools.cache
def sympy():
    import sympy as _sympy

    return _sympy


def is_static(dim: Any) -> bool:
    return isinstance(dim, int)


def norm_dim(dim: Any):
    """Python int for concrete dims (also numpy/sympy integers), the sympy expression otherwise."""
    if isinstance(dim, bool):
        raise TypeError(f"a dimension cannot be a bool: {dim!r}")
    if isinstance(dim, int):
        return dim
    if hasattr(dim, "__index__") and not hasattr(dim, "free_symbols"):
        return int(dim)
    if hasattr(dim, "free_symbols"):
        if dim.is_Integer:
            return int(dim)
        return dim
    raise TypeError(f"a dimension must be an int or a sympy expression, got {type(dim).__name__}")


def size_symbol(name: str):
    """The sympy symbol for a size: integer and positive, so sympy can simplify with it."""
    return sympy().Symbol(name, integer=True, positive=True)


def dim_str(dim) -> str:
    """Textual form of a dimension, without spaces (used inside `f32[s0,2*s0+1]`)."""
    if isinstance(dim, int):
        return str(dim)
    return str(dim).replace(" ", "")


class ShapeDecider(Protocol):
    """Answers questions about symbolic sizes during tracing, recording a guard for each answer
    (aot's ShapeEnv). Rules never branch on a symbolic size without asking it."""

    def eq(self, a, b) -> bool: ...

    def le(self, a, b) -> bool: ...

    def specialize(self, dim) -> int: ...


_decider: contextvars.ContextVar[ShapeDecider | None] = contextvars.ContextVar("aot_shape_decider", default=None)


def current_decider() -> ShapeDecider | None:
    return _decider.get()


@contextlib.contextmanager
def deciding(decider: ShapeDecider | None):
    """Install `decider` for the rules evaluated inside the block."""
    token = _decider.set(decider)
    try:
        yield decider
    finally:
        _decider.reset(token)


def dims_equal(a, b) -> bool:
    """a == b for dims. Without a decider, symbolic dims are equal only when structurally equal;
    with one (while tracing), the decider answers from the size hints and records a guard."""
    a, b = norm_dim(a), norm_dim(b)
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if not isinstance(a, int) and not isinstance(b, int) and (a == b or sympy().expand(a - b) == 0):
        return True
    d = _decider.get()
    return d.eq(a, b) if d is not None else False


@record(frozen=True, slots=True)
class SymbolInfo:
    """A size symbol declared at module top: `sym s0 : range [2, inf) hint 64`."""

    name: str
    lower: int = 0
    upper: int | None = None  # None = unbounded
    hint: int | None = None


def size_is_int(expr) -> bool:
    """Whether a size expression is integer-valued by construction (sympy's own assumptions stay
    unknown for e.g. Mod(n, n - 5)); a float constant anywhere makes it a float."""
    if isinstance(expr, int) or expr.is_Integer or (expr.is_Symbol and expr.is_integer):
        return True
    if expr.is_Number:
        return False
    name = type(expr).__name__
    if name in ("Add", "Mul", "Mod", "FloorDiv", "floor", "ceiling", "Max", "Min"):
        return all(size_is_int(a) for a in expr.args) or name in ("floor", "ceiling")
    if name == "Pow":  # an integer to a non-negative integer power (2**n too)
        return size_is_int(expr.base) and bool(expr.exp.is_integer) and bool(expr.exp.is_nonnegative)
    return bool(expr.is_integer)


def exact_ratio(expr):
    """(numerator, denominator) integer expressions whose true quotient is `expr` (a size
    expression such as n/3, 1.0/(n*m) or floor(n/2)/n), or None when `expr` involves other
    floats. Dividing the two as doubles rounds once, as Python's int / int does."""
    sp = sympy()
    whole = {f: sp.Integer(int(f)) for f in expr.atoms(sp.Float) if float(f).is_integer()}  # 1.0, x**-1.0
    num, den = sp.fraction(sp.together(expr.xreplace(whole) if whole else expr))
    return (num, den) if num.is_integer and den.is_integer else None


def int_emittable(expr) -> bool:
    """Whether generated code can compute the integer size expression `expr`: the operations
    ir.size_render.INTEGER_OPS (what codegen/llvm/sizes.py emits; powers only with constant
    exponents)."""
    from .size_render import int_renderable

    return int_renderable(expr)
