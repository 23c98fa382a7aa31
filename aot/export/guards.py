"""Sorting the guards an export trace recorded: runtime checks, or errors with a suggested fix.

- A guard that pins a Dim to one size (N == 5, or N >= 5 with max=5) is an ExportError: the dim
  cannot stay dynamic ("make x.shape[0] static").
- A guard that only moves a Dim's bounds (N > 3 with min=1) is an ExportError suggesting the range
  the code needs (aot.Dim("N", min=4)), as torch.export does: the declared range is the
  contract the header and `range_constraints` state, and must not silently be narrower.
- Everything else no Dim range can express (N == M, N % 2 == 0, N != 7) is kept as a runtime
  guard: `ExportedProgram.guards`, checked by `.module()` and by the compiled library.
"""

from __future__ import annotations

import math

from ir.symbols import sympy

from .dims import Dim, ExportError

_BOUNDS = ("StrictLessThan", "LessThan", "StrictGreaterThan", "GreaterThan")


def readable(guard) -> str:
    """A guard as Python over the Dim names: `N % 2 == 0`, `M == N`."""
    from ..shapes.guards import to_python

    try:
        return to_python(guard, {s: s.name for s in guard.free_symbols}).replace("math.", "")
    except NotImplementedError:
        return str(guard)


def runtime_guards(shapes, where: dict[str, str]) -> list:
    """The guards to check at run time (sympy booleans over the Dim symbols); raises ExportError
    for guards that specialise or narrow a Dim. `where`: Dim name -> `x.shape[0]`."""
    problems, keep = [], []
    recorded = shapes.recorded()
    for name, sym in shapes.dim_symbols.items():
        value = shapes.env.replace(sym)
        if value.is_Integer:
            problems.append(_specialised(name, int(value), sym, recorded, shapes.declared[name], where))
    for g in recorded:
        problem = _problem(shapes, g, where)
        if problem is not None:
            problems.append(problem)
        elif g.expr not in keep:
            keep.append(g.expr)
    if problems:
        raise ExportError("some dynamic dims cannot be exported as declared:\n  - " + "\n  - ".join(problems))
    return keep


def _problem(shapes, g, where: dict[str, str]) -> str | None:
    """Why a guard on one Dim cannot be a runtime check (None: it can)."""
    syms = g.expr.free_symbols
    if len(syms) != 1:
        return None  # a relation between Dims
    (sym,) = syms
    if shapes.env.replace(sym).is_Integer:
        return None  # the Dim is specialised: reported once, with all its guards
    if type(g.expr).__name__ in _BOUNDS:
        return _narrowed(shapes, sym, g, where)
    return _pinned(sym, g, where) if _pins(g.expr) else None


def _pins(expr) -> bool:
    """f(N) == c without a modulo (e.g. N // 2 == 4, from int() of a size): finitely many N pass."""
    if type(expr).__name__ != "Equality":
        return False
    lhs, rhs = expr.args
    other = rhs if lhs.is_number else (lhs if rhs.is_number else None)
    return other is not None and not other.has(sympy().Mod)


def _pinned(sym, g, where: dict[str, str]) -> str:
    return (
        f"{where[sym.name]} (Dim {sym.name!r}) is pinned to the few sizes where {readable(g.expr)}{_at(g)}. "
        f"Suggested fix: make {where[sym.name]} static (drop Dim {sym.name!r} from dynamic_shapes)"
    )


def _specialised(name: str, value: int, sym, recorded, dim: Dim, where: dict[str, str]) -> str:
    causes = [g for g in recorded if sym in g.expr.free_symbols]
    fixes = [f"make {where[name]} static (drop Dim {name!r} from dynamic_shapes)"]
    lo, hi = _guard_bounds(sym, [g.expr for g in causes])
    if (lo, hi) != (dim.min, dim.max) and (hi is None or lo < hi):
        fixes.append(f"use {_dim_text(name, lo, hi)} if the code only supports those sizes")
    return (
        f"{where[name]} (Dim {name!r}) is specialised to {value} by "
        + "; ".join(f"the guard {readable(g.expr)}{_at(g)}" for g in causes)
        + ". Suggested fixes: "
        + "; or ".join(fixes)
    )


def _narrowed(shapes, sym, g, where: dict[str, str]) -> str:
    name, dim = sym.name, shapes.declared[sym.name]
    vr = shapes.env.var_to_range[sym]
    lo, hi = int(vr.lower), (int(vr.upper) if math.isfinite(vr.upper) else None)
    return (
        f"not every size of {where[name]} in the range of {dim} satisfies the guard "
        f"{readable(g.expr)}{_at(g)}. Suggested fix: use {_dim_text(name, lo, hi)}"
    )


def _guard_bounds(sym, guards) -> tuple[int, int | None]:
    """The range of `sym` that its single-symbol bound guards allow (ignoring the declared one)."""
    lo, hi = 1, None
    for e in guards:
        if e.free_symbols != {sym} or type(e).__name__ not in _BOUNDS + ("Equality",):
            continue
        diff = sympy().expand(e.lhs - e.rhs)
        k = diff.coeff(sym)
        if not (k.is_Integer and (diff - k * sym).is_number):
            continue
        t = -(diff - k * sym) / k  # the guard says: sym REL t (flipped when k < 0)
        op = type(e).__name__ if k > 0 else _FLIP.get(type(e).__name__, "Equality")
        if op in ("GreaterThan", "StrictGreaterThan", "Equality"):
            lo = max(lo, int(sympy().floor(t)) + 1 if op == "StrictGreaterThan" else int(sympy().ceiling(t)))
        if op in ("LessThan", "StrictLessThan", "Equality"):
            bound = int(sympy().ceiling(t)) - 1 if op == "StrictLessThan" else int(sympy().floor(t))
            hi = bound if hi is None else min(hi, bound)
    return lo, hi


_FLIP = {
    "StrictLessThan": "StrictGreaterThan",
    "LessThan": "GreaterThan",
    "StrictGreaterThan": "StrictLessThan",
    "GreaterThan": "LessThan",
}


def _dim_text(name: str, lo: int, hi: int | None) -> str:
    args = [repr(name)] + ([f"min={lo}"] if lo > 1 else []) + ([f"max={hi}"] if hi is not None else [])
    return f"aot.Dim({', '.join(args)})"


def _at(g) -> str:
    return f" (at {g.stack})" if g.stack else ""
