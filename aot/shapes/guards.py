"""Guards: what they are, how they print, and the compiled checker that tests them at call time.

A guard is a sympy boolean over size symbols that held while tracing. It prints as Python code
over the sources of its symbols (`L['x'].size()[0] == L['y'].size()[0]`), and all guards of a
graph compile into one Python function over the input arrays, built once per artifact.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import sympy

from aot.shapes.sympy_functions import FloorDiv, TruncToInt


@dataclass(frozen=True)
class ShapeGuard:
    """A recorded guard: `expr` held while tracing; `stack` says which code asked for it."""

    expr: object
    stack: str = field(default="", compare=False)


# ---- printing sympy as Python source ----------------------------------------------------------
_PREC_OR, _PREC_AND, _PREC_NOT, _PREC_CMP, _PREC_ADD, _PREC_MUL, _PREC_UNARY, _PREC_POW = range(1, 9)
_PREC_ATOM = 10
_REL_OPS = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Lt: "<", sympy.Le: "<=", sympy.Gt: ">", sympy.Ge: ">="}


def to_python(expr, names: dict) -> str:
    """Python source for `expr`, printing each free symbol as `names[symbol]`."""
    return _print(expr, names)[0]


def _wrap(printed: tuple[str, int], min_prec: int) -> str:
    text, prec = printed
    return text if prec >= min_prec else f"({text})"


def _print(expr, names: dict) -> tuple[str, int]:
    if expr is sympy.true or expr is sympy.false:
        return str(bool(expr)), _PREC_ATOM
    if expr.is_Symbol:
        if expr not in names:
            raise KeyError(f"no source for symbol {expr} (known: {sorted(map(str, names))})")
        return names[expr], _PREC_ATOM
    if expr.is_Integer:
        value = int(expr)
        return str(value), (_PREC_ATOM if value >= 0 else _PREC_UNARY)
    if expr.is_Rational:
        return f"{expr.p}/{expr.q}", _PREC_MUL
    if expr.is_Float:
        return repr(float(expr)), _PREC_ATOM
    printer = _PRINTERS.get(expr.func)
    if printer is not None:
        return printer(expr, names)
    if expr.func in _REL_OPS:
        lhs, rhs = _print(expr.lhs, names), _print(expr.rhs, names)
        return f"{_wrap(lhs, _PREC_ADD)} {_REL_OPS[expr.func]} {_wrap(rhs, _PREC_ADD)}", _PREC_CMP
    raise NotImplementedError(f"cannot print {type(expr).__name__} ({expr}) as a guard")


def _print_add(expr, names):
    terms = sorted(expr.args, key=lambda t: (t.is_Number, sympy.default_sort_key(t)))
    parts = []
    for term in terms:
        negative = term.could_extract_minus_sign()
        text = _wrap(_print(-term if negative else term, names), _PREC_MUL)
        if not parts:
            parts.append(f"-{text}" if negative else text)
        else:
            parts.append(f" - {text}" if negative else f" + {text}")
    return "".join(parts), _PREC_ADD


def _print_mul(expr, names):
    coeff, factors = expr.as_coeff_mul()
    if coeff.is_negative:
        return f"-{_wrap(_print(-expr, names), _PREC_UNARY)}", _PREC_UNARY
    numer = [f for f in factors if not (f.is_Pow and f.exp.is_negative)]
    denom = [1 / f for f in factors if f.is_Pow and f.exp.is_negative]
    head = [] if coeff == 1 else [coeff]
    num_text = "*".join(_wrap(_print(f, names), _PREC_UNARY) for f in head + numer) or "1"
    for d in denom:
        num_text = f"{num_text}/{_wrap(_print(d, names), _PREC_POW)}"
    return num_text, _PREC_MUL


def _print_pow(expr, names):
    base, exp = expr.args
    if exp.is_negative:
        return f"1/{_wrap(_print(base ** -exp, names), _PREC_POW)}", _PREC_MUL
    return f"{_wrap(_print(base, names), _PREC_ATOM)}**{_wrap(_print(exp, names), _PREC_POW)}", _PREC_POW


def _infix(op: str, prec: int):
    def printer(expr, names):
        left, right = (_print(a, names) for a in expr.args)
        return f"{_wrap(left, prec)} {op} {_wrap(right, prec + 1)}", prec

    return printer


def _call(fn: str):
    def printer(expr, names):
        return f"{fn}({', '.join(_print(a, names)[0] for a in expr.args)})", _PREC_ATOM

    return printer


def _print_minmax(fn: str):
    def printer(expr, names):
        args = sorted(expr.args, key=sympy.default_sort_key)
        return f"{fn}({', '.join(_print(a, names)[0] for a in args)})", _PREC_ATOM

    return printer


def _print_boolop(op: str, prec: int):
    def printer(expr, names):
        args = sorted(expr.args, key=sympy.default_sort_key)
        return f" {op} ".join(_wrap(_print(a, names), prec + 1) for a in args), prec

    return printer


def _print_not(expr, names):
    return f"not {_wrap(_print(expr.args[0], names), _PREC_NOT)}", _PREC_NOT


def _print_piecewise(expr, names):
    *branches, (last_value, _) = expr.args
    text = _print(last_value, names)[0]
    for value, cond in reversed(branches):
        text = f"({_print(value, names)[0]} if {_print(cond, names)[0]} else {text})"
    return text, _PREC_ATOM


_PRINTERS = {
    sympy.Add: _print_add,
    sympy.Mul: _print_mul,
    sympy.Pow: _print_pow,
    sympy.Mod: _infix("%", _PREC_MUL),
    FloorDiv: _infix("//", _PREC_MUL),
    sympy.Min: _print_minmax("min"),
    sympy.Max: _print_minmax("max"),
    sympy.Abs: _call("abs"),
    sympy.floor: _call("math.floor"),
    sympy.ceiling: _call("math.ceil"),
    TruncToInt: _call("math.trunc"),
    sympy.Piecewise: _print_piecewise,
    sympy.And: _print_boolop("and", _PREC_AND),
    sympy.Or: _print_boolop("or", _PREC_OR),
    sympy.Not: _print_not,
}


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
