"""Every comparison of dims in the front end goes through here.

Today dims are Python ints (or sympy expressions that are structurally equal). When the symbolic
shape environment lands, these functions are the one seam it takes over: it answers from the size
hints and records a guard for each decision (torch's `ShapeEnv.evaluate_expr`), so the front end
never branches on a symbolic size directly.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ir.symbols import current_decider, is_static, norm_dim, sympy
from ir.symbols import dims_equal as _dims_equal

Dim = Any  # int or sympy expression


class SymbolicShapeError(TypeError):
    """A decision about a symbolic dim that needs a ShapeEnv (not available in this context)."""


def _undecidable(what: str) -> SymbolicShapeError:
    return SymbolicShapeError(f"cannot decide {what} without a shape environment")


def dims_equal(a: Dim, b: Dim) -> bool:
    """a == b, as a guarded decision."""
    a, b = norm_dim(a), norm_dim(b)
    if is_static(a) and is_static(b):
        return a == b
    if _dims_equal(a, b):
        return True
    if current_decider() is not None:
        return False  # the decider answered (and guarded) inside _dims_equal
    raise _undecidable(f"whether {a} == {b}")


def same_dim(a: Dim, b: Dim) -> bool:
    """a == b known without asking the shape environment (equal ints, or the same expression).
    For choices that only skip work (is this slice or reshape a no-op?): a guard there would
    narrow the compiled artifact for nothing."""
    a, b = norm_dim(a), norm_dim(b)
    if is_static(a) and is_static(b):
        return a == b
    return not is_static(a) and not is_static(b) and sympy().expand(a - b) == 0


def dim_equals(a: Dim, value: int) -> bool:
    """a == value for a concrete int (e.g. size 0 or 1, which change broadcasting semantics)."""
    a = norm_dim(a)
    if is_static(a):
        return a == value
    decider = current_decider()
    if decider is not None:
        return decider.eq(a, value)
    raise _undecidable(f"whether {a} == {value}")


def dim_le(a: Dim, b: Dim) -> bool:
    """a <= b, as a guarded decision."""
    a, b = norm_dim(a), norm_dim(b)
    if is_static(a) and is_static(b):
        return a <= b
    diff = norm_dim(sympy().simplify(b - a))
    if is_static(diff):
        return diff >= 0
    decider = current_decider()
    if decider is not None:
        return decider.le(a, b)
    raise _undecidable(f"whether {a} <= {b}")


def static_int(d: Dim, what: str) -> int:
    """A dim that must be concrete here (a Python int), e.g. a length chosen by value."""
    d = norm_dim(d)
    if not is_static(d):
        decider = current_decider()
        if decider is not None:
            return decider.specialize(d)  # guards d == its current value
        raise _undecidable(f"{what} (it is the symbolic size {d})")
    return d


def prod(dims: Iterable[Dim]) -> Dim:
    n: Any = 1
    for d in dims:
        n = n * d
    return norm_dim(n)


def div_exact(total: Dim, part: Dim) -> Dim:
    """total / part where part divides total (reshape's -1); None when it does not."""
    total, part = norm_dim(total), norm_dim(part)
    if is_static(total) and is_static(part):
        if part == 0 or total % part:
            return None
        return total // part
    sp = sympy()
    q = norm_dim(sp.cancel(total / part))
    if is_static(q) or q.is_integer:
        return q
    decider = current_decider()
    if decider is not None:  # guard on divisibility, then the quotient is exact
        return norm_dim(sp.floor(total / part)) if decider.eq(sp.Mod(total, part), 0) else None
    raise _undecidable(f"whether {part} divides {total}")


def shapes_equal(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(dims_equal(x, y) for x, y in zip(a, b))


def fmt_shape(shape: tuple) -> str:
    """numpy's spelling of a shape in error messages: (2,3) / (4,)."""
    inner = ",".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def broadcast_shapes(*shapes: tuple) -> tuple:
    """numpy broadcasting, with numpy's error message."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[Dim] = []
    for i in range(rank):
        dim: Dim = 1
        for s in shapes:
            k = i - (rank - len(s))
            if k < 0 or dim_equals(s[k], 1):
                continue
            if dim_equals(dim, 1):
                dim = s[k]
            elif not dims_equal(dim, s[k]):
                listed = " ".join(fmt_shape(x) for x in shapes)
                raise ValueError(f"operands could not be broadcast together with shapes {listed} ")
        out.append(norm_dim(dim))
    return tuple(out)
