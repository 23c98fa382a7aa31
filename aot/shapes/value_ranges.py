"""Interval arithmetic over sympy expressions (torch.utils._sympy.value_ranges, reduced).

`bound_sympy(expr, ranges)` gives a `ValueRanges` that contains every value `expr` can take when
each symbol lies in its range. ShapeEnv uses it to decide conditions statically (after the guard
`s0 >= 2`, the condition `s0 > 1` is known true and needs no new guard). Bounds are Python
ints/floats with `math.inf` for "unbounded"; booleans are the ranges [0, 0], [1, 1] and [0, 1].
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import sympy

from aot.shapes.sympy_functions import FloorDiv, TruncToInt

INF = math.inf


@dataclass(frozen=True, slots=True)
class ValueRanges:
    lower: int | float
    upper: int | float
    is_bool: bool = False

    def __post_init__(self):
        if self.lower > self.upper:
            raise ValueError(f"empty value range [{self.lower}, {self.upper}]")

    @staticmethod
    def wrap(value) -> ValueRanges:
        if isinstance(value, bool):
            return ValueRanges(int(value), int(value), True)
        return ValueRanges(value, value)

    @staticmethod
    def unknown() -> ValueRanges:
        return ValueRanges(-INF, INF)

    @staticmethod
    def unknown_bool() -> ValueRanges:
        return ValueRanges(0, 1, True)

    def is_singleton(self) -> bool:
        return self.lower == self.upper

    def __contains__(self, value) -> bool:
        return self.lower <= value <= self.upper

    def issubset(self, other: ValueRanges) -> bool:
        return other.lower <= self.lower and self.upper <= other.upper

    def __and__(self, other: ValueRanges) -> ValueRanges:
        """Intersection; raises ValueError when the ranges are disjoint."""
        return ValueRanges(max(self.lower, other.lower), min(self.upper, other.upper), self.is_bool)

    def __or__(self, other: ValueRanges) -> ValueRanges:
        return ValueRanges(min(self.lower, other.lower), max(self.upper, other.upper), self.is_bool)

    def __str__(self) -> str:
        return f"[{self.lower}, {self.upper}]"


def _mul(a, b):
    # 0 * inf is 0 here: a factor that is exactly zero zeroes the product whatever the other is
    if a == 0 or b == 0:
        return 0
    return a * b


def _floordiv(a, b):
    if math.isinf(b):
        if math.isinf(a):
            return INF if (a > 0) == (b > 0) else -INF
        return 0 if (a >= 0) == (b > 0) else -1
    if math.isinf(a):
        return INF if (a > 0) == (b > 0) else -INF
    return a // b


def _corners(fn, a: ValueRanges, b: ValueRanges) -> ValueRanges:
    values = [fn(x, y) for x in (a.lower, a.upper) for y in (b.lower, b.upper)]
    return ValueRanges(min(values), max(values))


def vr_add(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    return ValueRanges(a.lower + b.lower, a.upper + b.upper)


def vr_neg(a: ValueRanges) -> ValueRanges:
    return ValueRanges(-a.upper, -a.lower)


def vr_mul(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    return _corners(_mul, a, b)


def vr_floordiv(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    if 0 in b:
        return ValueRanges.unknown()
    return _corners(_floordiv, a, b)


def vr_truediv(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    if 0 in b:
        return ValueRanges.unknown()
    return vr_mul(a, vr_reciprocal(b))


def vr_reciprocal(a: ValueRanges) -> ValueRanges:
    if 0 in a:
        return ValueRanges.unknown()
    lo = 0.0 if math.isinf(a.upper) else 1 / a.upper
    hi = 0.0 if math.isinf(a.lower) else 1 / a.lower
    return ValueRanges(min(lo, hi), max(lo, hi))


def vr_mod(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    """Python's modulo: with a positive divisor the result lies in [0, divisor - 1]."""
    if a.is_singleton() and b.is_singleton() and not math.isinf(a.lower) and b.lower != 0:
        return ValueRanges.wrap(a.lower % b.lower)
    if b.lower <= 0:
        return ValueRanges.unknown()
    if a.lower >= 0 and a.upper < b.lower:
        return a  # a % b == a when 0 <= a < b
    top = b.upper - 1
    if a.lower >= 0:
        top = min(top, a.upper)
    return ValueRanges(0, top)


def vr_pow(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    if not b.is_singleton() or math.isinf(b.lower):
        if a.lower >= 1 and b.lower >= 0:  # base >= 1, exponent >= 0: monotone in both
            return ValueRanges(a.lower**b.lower, INF if math.isinf(b.upper) else a.upper**b.upper)
        return ValueRanges.unknown()
    n = b.lower
    if n == 0:
        return ValueRanges.wrap(1)
    if n < 0:
        return vr_reciprocal(vr_pow(a, ValueRanges.wrap(-n)))
    if a.lower >= 0 or (n % 2 == 1 and float(n).is_integer()):
        return ValueRanges(a.lower**n, a.upper**n)  # monotone increasing
    if a.upper <= 0:
        return ValueRanges(a.upper**n, a.lower**n)
    return ValueRanges(0, max(a.lower**n, a.upper**n))  # even power over an interval holding 0


def vr_min(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    return ValueRanges(min(a.lower, b.lower), min(a.upper, b.upper))


def vr_max(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    return ValueRanges(max(a.lower, b.lower), max(a.upper, b.upper))


def vr_abs(a: ValueRanges) -> ValueRanges:
    if a.lower >= 0:
        return a
    if a.upper <= 0:
        return vr_neg(a)
    return ValueRanges(0, max(-a.lower, a.upper))


def _monotone(fn):
    def apply(a: ValueRanges) -> ValueRanges:
        lo = a.lower if math.isinf(a.lower) else fn(a.lower)
        hi = a.upper if math.isinf(a.upper) else fn(a.upper)
        return ValueRanges(lo, hi)

    return apply


vr_floor = _monotone(math.floor)
vr_ceil = _monotone(math.ceil)
vr_trunc = _monotone(math.trunc)


# ---- booleans ---------------------------------------------------------------------------------
_TRUE = ValueRanges(1, 1, True)
_FALSE = ValueRanges(0, 0, True)
_MAYBE = ValueRanges(0, 1, True)


def _decided(value: bool | None) -> ValueRanges:
    return _MAYBE if value is None else (_TRUE if value else _FALSE)


def vr_compare(op, diff: ValueRanges) -> ValueRanges:
    """Truth range of `lhs op rhs` given the range of `lhs - rhs`."""
    always = op(diff.lower, 0) and op(diff.upper, 0)
    never = not op(diff.lower, 0) and not op(diff.upper, 0)
    if op in (operator.eq, operator.ne):
        # equality is decided only by a singleton difference or one that excludes 0
        if diff.is_singleton():
            return _decided(op(diff.lower, 0))
        if 0 not in diff:
            return _decided(op is operator.ne)
        return _MAYBE
    return _decided(True if always else (False if never else None))


def vr_not(a: ValueRanges) -> ValueRanges:
    return ValueRanges(1 - a.upper, 1 - a.lower, True)


def vr_and(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    return ValueRanges(min(a.lower, b.lower), min(a.upper, b.upper), True)


def vr_or(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    return ValueRanges(max(a.lower, b.lower), max(a.upper, b.upper), True)


# ---- sympy evaluation ----
def is_bool_expr(expr) -> bool:
    """True for relations and logic (not for Symbols, which sympy also makes `Boolean`)."""
    return isinstance(expr, sympy.logic.boolalg.Boolean) and not isinstance(expr, sympy.Expr)


# -------------------------------------------------------------------------
_RELATIONS = {
    sympy.Eq: operator.eq,
    sympy.Ne: operator.ne,
    sympy.Lt: operator.lt,
    sympy.Le: operator.le,
    sympy.Gt: operator.gt,
    sympy.Ge: operator.ge,
}


def default_range(symbol) -> ValueRanges:
    """The range sympy's assumptions on a symbol imply (size symbols are positive integers)."""
    if symbol.is_positive:
        return ValueRanges(1, INF)
    if symbol.is_nonnegative:
        return ValueRanges(0, INF)
    return ValueRanges.unknown()


def bound_sympy(expr, ranges: dict | None = None) -> ValueRanges:
    """The range of `expr` when each free symbol lies in `ranges[symbol]` (default: assumptions)."""
    ranges = ranges or {}
    return _bound(sympy.sympify(expr), ranges)


def _bound(expr, ranges: dict) -> ValueRanges:
    if expr is sympy.true:
        return _TRUE
    if expr is sympy.false:
        return _FALSE
    if expr.is_Symbol:
        return ranges.get(expr) or default_range(expr)
    if expr.is_Number:
        return _number(expr)
    rule = _RULES.get(expr.func)
    if rule is not None:
        return rule(expr, ranges)
    if expr.func in _RELATIONS:
        return vr_compare(_RELATIONS[expr.func], _bound(sympy.expand(expr.lhs - expr.rhs), ranges))
    return ValueRanges.unknown_bool() if is_bool_expr(expr) else ValueRanges.unknown()


def _number(expr) -> ValueRanges:
    if expr.is_Integer:
        return ValueRanges.wrap(int(expr))
    if expr is sympy.oo:
        return ValueRanges(INF, INF)
    if expr is sympy.S.NegativeInfinity:
        return ValueRanges(-INF, -INF)
    if expr.is_finite:
        return ValueRanges.wrap(float(expr))
    return ValueRanges.unknown()


def _fold(fn):
    def rule(expr, ranges):
        args = [_bound(arg, ranges) for arg in expr.args]
        acc = args[0]
        for arg in args[1:]:
            acc = fn(acc, arg)
        return acc

    return rule


def _pow_rule(expr, ranges):
    base, exp = expr.args
    if exp.is_Integer and int(exp) == -1:
        return vr_reciprocal(_bound(base, ranges))
    return vr_pow(_bound(base, ranges), _bound(exp, ranges))


def _unary(fn):
    return lambda expr, ranges: fn(_bound(expr.args[0], ranges))


def _binary(fn):
    return lambda expr, ranges: fn(_bound(expr.args[0], ranges), _bound(expr.args[1], ranges))


def _piecewise_rule(expr, ranges):
    acc = None
    for value, cond in expr.args:
        truth = _bound(cond, ranges)
        if truth.upper == 0:
            continue  # branch never taken
        vr = _bound(value, ranges)
        acc = vr if acc is None else acc | vr
        if truth.lower == 1:
            break  # this branch always taken: later ones are unreachable
    return acc if acc is not None else ValueRanges.unknown()


_RULES = {
    sympy.Add: _fold(vr_add),
    sympy.Mul: _fold(vr_mul),
    sympy.Pow: _pow_rule,
    sympy.Mod: _binary(vr_mod),
    FloorDiv: _binary(vr_floordiv),
    sympy.Min: _fold(vr_min),
    sympy.Max: _fold(vr_max),
    sympy.Abs: _unary(vr_abs),
    sympy.floor: _unary(vr_floor),
    sympy.ceiling: _unary(vr_ceil),
    TruncToInt: _unary(vr_trunc),
    sympy.Piecewise: _piecewise_rule,
    sympy.And: _fold(vr_and),
    sympy.Or: _fold(vr_or),
    sympy.Not: _unary(vr_not),
}
