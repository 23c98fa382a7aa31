"""Guard production: readable text, one expression, and the compiled checker."""
from __future__ import annotations

import functools
import timeit

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aot.fx.experimental.symbolic_shapes import (
    ConstraintViolationError,
    DimDynamic,
    EqualityConstraint,
    RelaxedUnspecConstraint,
    ShapeEnv,
    StrictMinMaxConstraint,
    ValueRanges,
    canonicalize_bool_expr,
    sym_max,
)
from aot.shapes.guards import to_python

SHAPES = [(6, 5), (6, 3), (11,)]


def program(x, y, z):
    """Shape logic that branches on sizes; returns the decisions it took."""
    taken = [x[0] > 4, x[1] * 2 == z[0] - 1, (x[0] + y[1]) % 3 == 0, sym_max(x[1], y[1]) < 9,
             x[0] // 2 >= y[1]]
    return [bool(t) for t in taken]


def traced():
    env = ShapeEnv()
    sizes = [env.create_symbolic_sizes(shape, name) for shape, name in zip(SHAPES, "xyz")]
    decisions = program(*sizes)
    return env, sizes, decisions


def test_produce_guards_text():
    env, sizes, _ = traced()
    guards = env.produce_guards(sizes, ["x", "y", "z"])
    assert guards == [
        "L['y'].size()[0] == L['x'].size()[0]",
        "L['z'].size()[0] == 2*L['x'].size()[1] + 1",
        "(L['x'].size()[0] + L['y'].size()[1]) % 3 == 0",
        "max(L['x'].size()[1], L['y'].size()[1]) < 9",
        "L['x'].size()[0] // 2 >= L['y'].size()[1]",
        "5 <= L['x'].size()[0]",
        "2 <= L['x'].size()[1]",
        "2 <= L['y'].size()[1]",
    ]


def test_static_dims_and_zero_one_are_guarded():
    env = ShapeEnv()
    x = env.create_symbolic_sizes((20, 1), "x", dynamic_dims=[DimDynamic.STATIC, DimDynamic.DUCK])
    assert env.produce_guards([x], ["x"]) == ["L['x'].size()[0] == 20", "L['x'].size()[1] == 1"]
    assert env.produce_guards([x], ["x"], ignore_static=True) == []


def test_concrete_arrays_are_matched_by_source_name():
    env, sizes, _ = traced()
    arrays = [np.empty(s) for s in SHAPES]
    assert env.produce_guards(arrays, ["x", "y", "z"]) == env.produce_guards(sizes, ["x", "y", "z"])


def test_guards_expression_round_trip():
    env, sizes, _ = traced()
    code = env.produce_guards_expression(sizes)
    assert "L['t0'].size()[0]" in code
    assert env.evaluate_guards_expression(code, [np.empty(s) for s in SHAPES])
    assert not env.evaluate_guards_expression(code, [np.empty((6, 5)), np.empty((7, 3)), np.empty((11,))])
    assert ShapeEnv().produce_guards_expression([]) is None


def test_scalar_inputs():
    env = ShapeEnv()
    n = env.create_unspecified_symint_and_symbol(7, "L['n']")
    assert n > 3
    assert env.produce_guards([n, 5], ["n", "k"]) == ["L['k'] == 5", "4 <= L['n']"]  # the guard n > 3 became n's range
    check = env.produce_guard_checker([n, 5])
    assert check(8, 5) and not check(2, 5) and not check(8, 6)


def _all_guards_hold(env, sizes, shapes) -> bool:
    """Oracle, by sympy substitution: every symbol takes the value at its first source."""
    values = {}
    for dims, shape in zip(sizes, shapes):
        if len(dims) != len(shape):
            return False
        for dim, val in zip(dims, shape):
            if isinstance(dim, int):
                if dim != val:
                    return False
            else:
                values.setdefault(dim.node._expr, val)
    conditions = [g.expr for g in env.guards]
    conditions += [sympy.Eq(s, r) for s, r in env.replacements.items()]
    for sym, vr in env.var_to_range.items():
        conditions += [sympy.Ge(sym, vr.lower), sympy.Le(sym, vr.upper)]
    for dims, shape in zip(sizes, shapes):
        conditions += [sympy.Eq(d.node._expr, v) for d, v in zip(dims, shape) if not isinstance(d, int)]
    return all(bool(c.xreplace({k: sympy.Integer(v) for k, v in values.items()})) for c in conditions)


@functools.cache
def _traced_with_checker():
    env, sizes, decisions = traced()  # neither the checker nor the oracle changes the env
    return env, sizes, decisions, env.produce_guard_checker(sizes)


dims = st.integers(min_value=0, max_value=14)


@settings(max_examples=300, deadline=None)
@given(st.tuples(dims, dims), st.tuples(dims, dims), st.tuples(dims), st.booleans())
def test_checker_accepts_exactly_when_guards_hold(xs, ys, zs, reuse_hint_equalities):
    if reuse_hint_equalities:  # steer towards accepted inputs
        ys, zs = (xs[0], ys[1]), (2 * xs[1] + 1,)
    env, sizes, decisions, check = _traced_with_checker()
    shapes = [xs, ys, zs]
    accepted = check(*(np.empty(s) for s in shapes))
    assert accepted == _all_guards_hold(env, sizes, shapes)
    assert accepted == check.check_sizes(*xs, *ys, *zs)
    if accepted:  # the same branches are taken with plain ints
        assert program(*shapes) == decisions


def test_checker_rejects_wrong_rank_and_non_arrays():
    env, sizes, _ = traced()
    check = env.produce_guard_checker(sizes)
    good = [np.empty(s) for s in SHAPES]
    assert check(*good)
    assert not check(np.empty((6, 5, 1)), *good[1:])
    assert not check("x", *good[1:])
    with pytest.raises(TypeError):
        check(*good[:2])


def test_checker_timing():
    env, sizes, _ = traced()
    check = env.produce_guard_checker(sizes)
    args = [np.empty(s) for s in SHAPES]
    n = 20000
    per_call = min(timeit.repeat("check(x, y, z)", globals={"check": check, "x": args[0], "y": args[1], "z": args[2]},
                                 number=n, repeat=3)) / n
    print(f"\nguard checker, 3 inputs, {len(check.expr.split(' and '))} conditions: {per_call * 1e6:.2f} us/call")
    print(check.source)


# torch's documented canonical form: Gt/Ge become Lt/Le, integer factors are divided out, and the
# terms with negative coefficients move to the lhs.
a, b = sympy.symbols("a b", integer=True)


@pytest.mark.parametrize("expr, expected", [
    (a > 10, "10 < a"),
    (a >= b + 2, "b + 2 <= a"),
    (a < b, "a < b"),
    (a - b <= 3, "a <= b + 3"),
    (sympy.Eq(6 * a, 4 * b), "Eq(3*a, 2*b)"),
    (sympy.Ne(2 * a + 4, 0), "Ne(a + 2, 0)"),
    (2 * a > 4 * b, "2*b < a"),
    (sympy.Or(a > 3, b < 2), "(3 < a) | (b < 2)"),
    (sympy.And(a > 3, sympy.Not(b >= 2)), "(3 < a) & (b < 2)"),
    (a + 1, "a + 1"),  # not boolean: unchanged
])
def test_canonicalize_bool_expr(expr, expected):
    assert str(canonicalize_bool_expr(expr)) == expected


def test_canonicalize_is_idempotent_and_equivalent():
    for expr in [a > 10, 3 * a + 6 >= 9 * b, sympy.Eq(a, b + 1), sympy.Ne(-a, b)]:
        once = canonicalize_bool_expr(expr)
        assert canonicalize_bool_expr(once) == once
        for va in range(-3, 4):
            for vb in range(-3, 4):
                sub = {a: va, b: vb}
                assert bool(expr.subs(sub)) == bool(once.subs(sub))


def test_to_python_printing():
    names = {a: "A", b: "B"}
    assert to_python(sympy.Mod(a + b, 3), names) == "(A + B) % 3"
    assert to_python(a - 2 * b, names) == "A - 2*B"
    assert to_python(sympy.Piecewise((a, b > 2), (b, True)), names) == "(A if B > 2 else B)"
    assert to_python(sympy.Not(sympy.Eq(a, b)), names) == "A != B"
    with pytest.raises(KeyError, match="no source"):
        to_python(a + sympy.Symbol("c"), names)


def test_constraint_inputs_violation_and_equalities():
    env = ShapeEnv()
    strict = StrictMinMaxConstraint(warn_only=False, vr=ValueRanges(2, 64))
    x = env.create_symbolic_sizes((8, 4), "x", dynamic_dims=[DimDynamic.DYNAMIC] * 2, constraint_sizes=[strict, None])
    int(x[0])  # specialises the dim the user declared dynamic
    with pytest.raises(ConstraintViolationError, match="specialized it to be a constant"):
        env.produce_guards([x], ["x"], constraint_inputs=[[strict, None]])
    env.produce_guards([x], ["x"], constraint_inputs=[[RelaxedUnspecConstraint(warn_only=False), None]])
    y = env.create_symbolic_sizes((4,), "y", dynamic_dims=[DimDynamic.DYNAMIC])
    eq = EqualityConstraint(source_pairs=[("L['x'].size()[1]", "L['y'].size()[0]")])
    with pytest.raises(ConstraintViolationError, match="declared equal"):
        env.produce_guards([x, y], ["x", "y"], equalities_inputs=eq)
    assert x[1] == y[0]
    env.produce_guards([x, y], ["x", "y"], equalities_inputs=eq)


def test_warn_only_constraint_logs_instead_of_raising(caplog):
    env = ShapeEnv()
    soft = StrictMinMaxConstraint(warn_only=True, vr=ValueRanges(2, 64))
    x = env.create_symbolic_sizes((8,), "x", dynamic_dims=[DimDynamic.DYNAMIC], constraint_sizes=[soft])
    assert x[0] < 32  # narrows the range below what the user declared
    with caplog.at_level("WARNING", logger="aot.shapes.produce"):
        env.produce_guards([x], ["x"], constraint_inputs=[[soft]])
    assert "Not all values of L['x'].size()[0]" in caplog.text and "Suggested fixes" in caplog.text
