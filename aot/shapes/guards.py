"""Guards: what they are, how they print, and the compiled checker that tests them at call time.

A guard is a sympy boolean over size symbols that held while tracing. It prints as Python code
over the sources of its symbols (`L['x'].size()[0] == L['y'].size()[0]`), and all guards of a
graph compile into one Python function over the input arrays, built once per artifact.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import sympy


@dataclass(frozen=True)
class ShapeGuard:
    """A recorded guard: `expr` held while tracing; `stack` says which code asked for it."""

    expr: object
    stack: str = field(default="", compare=False)


# ---- printing sympy as Python source ----------------------------------------------------------
def to_python(expr, names: dict) -> str:
    """Python source for `expr`, printing each free symbol as `names[symbol]` (ir.size_render's
    Python emitter: the walk that generated code and the C wrapper render sizes with too)."""
    from ir.size_render import python_source

    return python_source(expr, {str(s): src for s, src in names.items()})


# ---- canonical form -----------------------------------------------------------------------------
def canonicalize_bool_expr(expr):
    """Canonicalize a boolean expression by transforming it into a lt / le inequality and moving
    all the non-constant terms to the rhs (torch's documented form). And / Or / Not go through
    CNF and each relation is canonicalized recursively.

    `s0 > 10` -> `10 < s0`; `a + 2 >= b` -> `b <= a + 2`; `Eq(6*x, 4*y)` -> `Eq(3*x, 2*y)` (integer
    factors are divided out; terms with negative coefficients move to the lhs); Eq/Ne keep their type.
    """
    if not isinstance(expr, (sympy.Rel, sympy.And, sympy.Or, sympy.Not)):
        return expr
    if isinstance(expr, (sympy.And, sympy.Or, sympy.Not)):
        expr = sympy.logic.boolalg.to_cnf(expr)
    return _canonicalize_impl(expr)


def _canonicalize_impl(expr):
    if isinstance(expr, (sympy.And, sympy.Or)):
        return type(expr)(*map(canonicalize_bool_expr, expr.args))
    if not isinstance(expr, sympy.Rel):
        return expr
    opposite = {sympy.Gt: sympy.Lt, sympy.Ge: sympy.Le}
    if type(expr) in opposite:
        rhs, rel = expr.lhs - expr.rhs, opposite[type(expr)]
    else:
        rhs, rel = expr.rhs - expr.lhs, type(expr)
    rhs = _reduce_to_lowest_terms(sympy.expand(rhs))
    lhs = sympy.S.Zero
    if isinstance(rhs, sympy.Add):
        neg = [-t for t in rhs.args if _is_neg(t)]
        pos = [t for t in rhs.args if not _is_neg(t)]
        lhs, rhs = sympy.Add(*neg), sympy.Add(*pos)
    elif _is_neg(rhs):
        lhs, rhs = -rhs, sympy.S.Zero
    return rel(lhs, rhs, evaluate=False)


def _is_neg(term) -> bool:
    return bool((term.is_Number and term.is_negative) or (
        isinstance(term, sympy.Mul) and term.args[0].is_Number and term.args[0].is_negative
    ))


def _reduce_to_lowest_terms(expr):
    """Divide out the integer factor common to all terms: 6*x + 4*y -> 3*x + 2*y."""

    def coefficient(term) -> int:
        if term.is_Integer:
            return abs(int(term))
        if term.is_Mul and term.args[0].is_Integer:
            return abs(int(term.args[0]))
        return 1

    terms = expr.args if expr.is_Add else (expr,)
    factor = math.gcd(*(coefficient(t) for t in terms))
    if factor <= 1:
        return expr
    return sympy.Add(*(t / factor for t in terms))


# ---- compiled checker ---------------------------------------------------------------------------
def compile_guard_checker(ranks: list[int | None], expr: str, names: list[list[str]]):
    """All guards of an artifact as one compiled Python function (built once, called per call).

    `check(*args)` takes the call's inputs (arrays, or ints for scalar inputs) and returns True
    exactly when every guard holds; `check.check_sizes(*sizes)` takes the flattened sizes instead
    (the dims of input 0, then input 1, ...; a scalar input contributes itself). `check.source`
    is the generated code. A plain function, not an object with `__call__`: it is on the hot path.
    """
    params = [f"a{i}" for i in range(len(ranks))]
    unpack = []
    for i, (rank, dims) in enumerate(zip(ranks, names)):
        if rank is None:
            unpack.append(f"        {dims[0]} = a{i}")
        elif rank == 0:
            unpack.append(f"        if a{i}.shape != (): return False")
        else:
            unpack.append(f"        {', '.join(dims)}{',' if rank == 1 else ''} = a{i}.shape")
    flat = [n for dims in names for n in dims]
    source = (
        f"def check({', '.join(params)}):\n"
        "    try:\n" + "\n".join(unpack or ["        pass"]) + "\n"
        "    except (AttributeError, ValueError, TypeError):\n"
        "        return False  # not an array, or the wrong rank\n"
        f"    return {expr}\n\n"
        f"def check_sizes({', '.join(flat)}):\n"
        f"    return {expr}\n"
    )
    namespace: dict = {"math": math}
    exec(compile(source, "<aot guards>", "exec"), namespace)  # noqa: S102 - text we generated
    check = namespace["check"]
    check.check_sizes = namespace["check_sizes"]
    check.source, check.expr, check.ranks = source, expr, list(ranks)
    return check
