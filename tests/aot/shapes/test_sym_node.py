"""SymInt/SymFloat/SymBool: arithmetic matches Python on the hints, and only conversions guard."""
from __future__ import annotations

import math
import operator

import pytest
import sympy

from aot.fx.experimental.symbolic_shapes import (
    DimDynamic,
    ShapeEnv,
    SymBool,
    SymFloat,
    SymInt,
    SymNode,
    sym_float,
    sym_int,
    sym_ite,
    sym_max,
    sym_min,
    sym_not,
)


def _sym(env: ShapeEnv, value: int, name: str) -> SymInt:
    return env.create_symbolic_sizes((value,), name)[0]


ARITH = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod, operator.pow,
         operator.truediv]


@pytest.mark.parametrize("op", ARITH, ids=lambda op: op.__name__)
@pytest.mark.parametrize("other", [3, 2.5, "sym"])
def test_arithmetic_hint_and_type_match_python(env, op, other):
    a = _sym(env, 7, "a")
    b = _sym(env, 3, "b") if other == "sym" else other
    b_val = 3 if other == "sym" else other
    result = op(a, b)
    expected = op(7, b_val)
    assert result.node.hint == pytest.approx(expected)
    assert isinstance(result, SymFloat if isinstance(expected, float) else SymInt)
    assert env.guards == []  # arithmetic never guards
    # the expression agrees with the hint when evaluated at the hints
    assert float(env.size_hint(result.node.expr)) == pytest.approx(expected)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod])
def test_reflected_arithmetic(env, op):
    a = _sym(env, 7, "a")
    result = op(10, a)
    assert isinstance(result, SymInt)
    assert result.node.hint == op(10, 7)


def test_unary_ops(env):
    a = _sym(env, 7, "a")
    assert (-a).node.hint == -7 and str(-a) == "-s0"
    assert abs(-a).node.hint == 7
    assert (+a) is a
    f = a / 2
    assert isinstance(f, SymFloat) and f.node.hint == 3.5
    assert isinstance(math.floor(f), SymInt) and math.floor(f).node.hint == 3
    assert math.ceil(f).node.hint == 4
    assert math.trunc(-f).node.hint == -3


@pytest.mark.parametrize("op", [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge])
def test_comparisons_make_symbools_without_guards(env, op):
    a = _sym(env, 7, "a")
    result = op(a, 5)
    assert isinstance(result, SymBool)
    assert result.node.hint == op(7, 5)
    assert env.guards == []


def test_bool_records_guard_with_the_taken_branch(env):
    a = _sym(env, 7, "a")
    if a > 10:
        pytest.fail("hint 7 is not > 10")
    (guard,) = env.guards
    assert guard.expr == sympy.Le(a.node.expr, 10)  # the negation: the branch not taken
    b = _sym(env, 12, "b")
    assert bool(b > 10)
    assert env.guards[-1].expr == sympy.Gt(b.node.expr, 10)


def test_int_index_float_guard_equality(env):
    a = _sym(env, 7, "a")
    assert int(a * 2) == 14
    assert env.guards[-1].expr == sympy.Eq(2 * sympy.Symbol("s0", integer=True, positive=True), 14)
    assert [0] * 8 and list(range(10))[a] == 7  # __index__
    assert float(a) == 7.0
    assert float(a / 2) == 3.5


def test_symint_is_unhashable_symfloat_and_symbool_hash_by_value(env):
    a = _sym(env, 7, "a")
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
    assert hash(a / 2) == hash(3.5)
    assert hash(a > 3) == hash(True)


def test_symbool_logic_stays_symbolic(env):
    a = _sym(env, 7, "a")
    both = (a > 3) & (a < 10)
    either = (a > 30) | (a < 10)
    assert isinstance(both, SymBool) and both.node.hint is True
    assert isinstance(either, SymBool) and either.node.hint is True
    assert (~(a > 3)).node.hint is False
    assert env.guards == []


def test_sym_functions(env):
    a, b = _sym(env, 7, "a"), _sym(env, 3, "b")
    assert sym_max(a, b).node.hint == 7 and str(sym_max(a, b)) == "Max(s0, s1)"
    assert sym_min(a, 2).node.hint == 2
    assert sym_max(4, 9) == 9 and sym_min(4, 9) == 4
    assert sym_not(a > b).node.hint is False and sym_not(True) is False
    picked = sym_ite(a > b, a, b)
    assert isinstance(picked, SymInt) and picked.node.hint == 7
    assert sym_ite(False, 1, 2) == 2
    assert isinstance(sym_float(a), SymFloat) and sym_float(a).node.hint == 7.0
    assert isinstance(sym_int(a / 2), SymInt) and sym_int(a / 2).node.hint == 3
    assert sym_int(-3.5) == -3 and sym_float(2) == 2.0
    assert env.guards == []


def test_node_expr_applies_replacements(env):
    a = _sym(env, 7, "a")
    c = env.create_symbolic_sizes((7,), "c", dynamic_dims=[DimDynamic.DYNAMIC])[0]
    assert c.node.expr != a.node.expr  # DYNAMIC: a fresh symbol despite the equal size
    assert bool(a == c)
    assert c.node.expr == a.node.expr  # s1 is replaced by s0 after the guard
    assert repr(c) == "s0"


def test_symnode_validates_pytype(env):
    with pytest.raises(TypeError, match="pytype"):
        SymNode(sympy.Integer(1), env, str, 1)
    with pytest.raises(TypeError, match="SymNode"):
        SymInt(3)
