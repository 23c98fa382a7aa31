"""Module-level helpers of symbolic_shapes, on plain numbers and on Sym* values."""
from __future__ import annotations

import types

import pytest
import sympy

import aot.fx.experimental.symbolic_shapes as ss
from aot.fx.experimental.symbolic_shapes import (
    GuardOnDataDependentSymNode,
    SymBool,
    SymInt,
    constrain_range,
    constrain_unify,
    definitely_false,
    definitely_true,
    expect_true,
    free_symbols,
    fx_placeholder_vals,
    guard_bool,
    guard_float,
    guard_int,
    guard_size_oblivious,
    has_free_symbols,
    has_free_unbacked_symbols,
    hint_int,
    is_concrete_bool,
    is_concrete_float,
    is_concrete_int,
    is_symbolic,
    statically_known_true,
    sym_eq,
)


@pytest.fixture
def n(env) -> SymInt:
    return env.create_symbolic_sizes((7,), "x")[0]


def test_all_names_exported():
    for name in ss.__all__:
        assert getattr(ss, name) is not None
    for name in ["ShapeEnv", "DimDynamic", "StrictMinMaxConstraint", "RelaxedUnspecConstraint", "EqualityConstraint",
                 "SymInt", "SymFloat", "SymBool", "DimConstraints", "canonicalize_bool_expr"]:
        assert name in ss.__all__


def test_concreteness(n):
    assert is_concrete_int(3) and not is_concrete_int(True) and not is_concrete_int(n)
    assert is_concrete_int(n - n)  # the expression folds to 0
    assert is_concrete_float(2.0) and not is_concrete_float(n / 2) and is_concrete_float((n - n) / 2)
    assert is_concrete_bool(False) and not is_concrete_bool(n > 3) and is_concrete_bool(n > 0)
    assert is_symbolic(n) and not is_symbolic(3) and not is_symbolic(n - n)


def test_free_symbols(env, n):
    u = env.create_unbacked_symint()
    assert free_symbols(n * 2) == {n.node.expr}
    assert has_free_symbols([1, n]) and not has_free_symbols([1, 2])
    assert has_free_unbacked_symbols(n + u) and not has_free_unbacked_symbols(n)
    assert free_symbols(types.SimpleNamespace(shape=(n, 3))) == {n.node.expr}


def test_hint_int(env, n):
    assert hint_int(n * 3) == 21 and hint_int(5) == 5
    u = env.create_unbacked_symint()
    assert hint_int(u, fallback=8192) == 8192
    with pytest.raises(ValueError, match="fallback"):
        hint_int(u)
    assert env.guards == []


def test_statically_known_true_adds_no_guards(env, n):
    assert statically_known_true(n >= 2)
    assert not statically_known_true(n == 7)
    assert statically_known_true(True) and not statically_known_true(False)
    assert env.guards == []


def test_definitely_true_false(env, n):
    assert definitely_true(n > 3) and len(env.guards) == 1
    assert definitely_false(n > 30) and len(env.guards) == 2
    u = env.create_unbacked_symint()
    assert not definitely_true(u > 3) and not definitely_false(u > 3)  # unknown, and no error
    assert definitely_true(True) and definitely_false(False)


def test_guard_functions(env, n):
    assert guard_bool(n > 3) is True
    assert guard_int(n + 1) == 8
    assert guard_float(n / 2) == 3.5
    assert guard_bool(True) and guard_int(4) == 4 and guard_float(1.5) == 1.5
    with pytest.raises(TypeError, match="guard_int"):
        guard_int(1.5)
    with pytest.raises(TypeError, match="guard_bool"):
        guard_bool(1)


def test_guard_size_oblivious(env):
    u = env.create_unbacked_symint()
    constrain_range(u, min=0, max=None)
    env.size_like.add(u.node.expr)
    with pytest.raises(GuardOnDataDependentSymNode):
        bool(u == 1)
    assert guard_size_oblivious(u == 1) is False  # a size is treated as >= 2, so never 0 or 1
    assert guard_size_oblivious(u >= 2) is True
    assert guard_size_oblivious(True) is True


def test_expect_true_on_unbacked_defers(env):
    u = env.create_unbacked_symint()
    assert expect_true(u < 100)
    assert env.deferred_runtime_asserts[-1].expr == (u.node.expr < 100)
    assert statically_known_true(u < 200)
    assert expect_true(True)


def test_sym_eq_elementwise(env, n):
    m = env.create_symbolic_sizes((7, 5), "y")
    result = sym_eq([n, 5], m)
    assert isinstance(result, SymBool) and result.node.hint is True
    assert str(result.node.expr) == "Eq(s1, 5)"  # 7 == 7 folds (duck sizing: both are s0)
    k = env.create_symbolic_sizes((9,), "z")[0]
    pair = sym_eq((n, 3), (k, 3))
    assert isinstance(pair, SymBool) and pair.node.expr == sympy.Eq(n.node.expr, k.node.expr)
    assert sym_eq([1, 2], [1, 2]) is True and sym_eq([1, 2], [1, 3]) is False and sym_eq([1], [1, 2]) is False
    assert env.guards == []
    with pytest.raises(TypeError):
        sym_eq([1], 1)


def test_constrain_range(env):
    u = env.create_unbacked_symint()
    constrain_range(u, min=2, max=10)
    assert statically_known_true(u >= 2) and statically_known_true(u < 11)
    assert bool(u > 20) is False  # out of range: decided without a hint or guard
    with pytest.raises(GuardOnDataDependentSymNode):
        bool(u > 5)
    n = env.create_symbolic_sizes((7,), "x")[0]
    with pytest.raises(ValueError, match="outside"):
        constrain_range(n, min=8, max=9)
    with pytest.raises(ValueError, match="Invalid value"):
        constrain_range(3, min=4, max=5)
    with pytest.raises(ValueError, match="max"):
        constrain_range(3, min=4, max=1)


def test_constrain_unify(env, n):
    u = env.create_unbacked_symint()
    constrain_unify(u, n)
    assert u.node.expr == n.node.expr  # the unbacked symbol is replaced by the backed one
    assert guard_int(u) == 7
    constrain_unify(3, 3)
    with pytest.raises(ValueError):
        constrain_unify(3, 4)


def test_fx_placeholder_vals():
    node = types.SimpleNamespace
    graph = node(nodes=[node(op="placeholder", meta={"val": 1}), node(op="call_function", meta={}),
                        node(op="placeholder", meta={"val": 2})])
    assert fx_placeholder_vals(graph) == [1, 2]


def test_bound_sympy_method(env, n):
    assert env.bound_sympy(n.node.expr * 2 + 1) == ss.ValueRanges(5, float("inf"))


def test_no_sympy_on_import():
    import subprocess
    import sys

    code = "import sys, aot, aot.shapes.sym_node, aot.shapes.api; assert 'sympy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_shape_env_repr_and_format(env, n):
    assert n > 3
    assert "1 symbols" in repr(env) and "L['x'].size()[0] > 3" in env.format_guards()
