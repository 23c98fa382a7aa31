"""Size symbols. sympy is imported lazily so that `import ir` (and `import aot`) stays fast."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any


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


def dims_equal(a, b) -> bool:
    """Structural equality of two dims; never guesses about symbols."""
    a, b = norm_dim(a), norm_dim(b)
    if isinstance(a, int) or isinstance(b, int):
        return a == b
    return a == b or sympy().expand(a - b) == 0


@dataclass(frozen=True, slots=True)
class SymbolInfo:
    """A size symbol declared at module top: `sym s0 : range [2, inf) hint 64`."""

    name: str
    lower: int = 0
    upper: int | None = None  # None = unbounded
    hint: int | None = None
