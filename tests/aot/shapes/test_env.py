"""ShapeEnv: symbol creation, guards, replacements, value-range reasoning, unbacked symbols."""
from __future__ import annotations

import logging

import numpy as np
import pytest
import sympy

from aot.fx.experimental.symbolic_shapes import (
    ConstraintViolationError,
    DimDynamic,
    GuardOnDataDependentSymNode,
    LocalSource,
    ShapeEnv,
    StatelessSymbolicContext,
    StrictMinMaxConstraint,
    SymInt,
    TensorProperty,
    TensorPropertySource,
    ValueRanges,
)
from aot.shapes.value_ranges import INF


def test_create_symbol_ranges_hints_and_sources(env):
    src = TensorPropertySource(LocalSource("x"), TensorProperty.SIZE, 0)
    s = env.create_symbol(5, src)
    assert s.is_integer and s.is_positive
    assert env.var_to_val[s] == 5
    assert env.var_to_range[s] == ValueRanges(2, INF)
    assert env.var_to_sources[s][0].name() == "L['x'].size()[0]"
    assert env.create_symbol(5, "L['y'].size()[0]") is s  # duck sizing
    assert env.create_symbol(5, "L['z'].size()[0]", DimDynamic.DYNAMIC) is not s
    assert env.create_symbol(5, "L['w'].size()[0]", DimDynamic.STATIC) == 5


@pytest.mark.parametrize("value", [0, 1])
def test_zero_one_specialisation(value):
    assert ShapeEnv().create_symbol(value, "n") == value
    s = ShapeEnv(specialize_zero_one=False).create_symbol(value, "n")
    assert isinstance(s, sympy.Symbol)


def test_no_specialisation_gives_range_from_zero():
    env = ShapeEnv(specialize_zero_one=False)
    s = env.create_symbol(4, "n")
    assert env.var_to_range[s] == ValueRanges(0, INF)


def test_duck_shape_off_gives_distinct_symbols():
    env = ShapeEnv(duck_shape=False)
    assert env.create_symbol(5, "a") != env.create_symbol(5, "b")


def test_create_symbolic_sizes_and_contexts(env):
    sizes = env.create_symbolic_sizes(np.empty((4, 1, 4)), "x")
    assert isinstance(sizes[0], SymInt) and sizes[1] == 1 and sizes[0].node.expr == sizes[2].node.expr
    ctx = StatelessSymbolicContext([DimDynamic.STATIC, DimDynamic.DYNAMIC])
    static, dyn = env.create_symbolic_sizes((6, 4), "y", symbolic_context=ctx)
    assert static == 6 and dyn.node.expr != sizes[0].node.expr
    with pytest.raises(ValueError, match="dims"):
        env.create_symbolic_sizes((6, 4), "y", dynamic_dims=[DimDynamic.DUCK])
    with pytest.raises(ValueError, match="constraint_sizes"):
        StatelessSymbolicContext([DimDynamic.DUCK], [None, None])


def test_strides_are_symbolic_for_contiguous_arrays(env):
    sizes, strides, offset = env.create_symbolic_sizes_strides_storage_offset(np.empty((3, 4, 5)), "x")
    assert offset == 0
    assert [s.node.hint for s in strides[:2]] == [20, 5] and strides[2] == 1
    assert str(strides[0]) == "s1*s2"
    _, fstrides, _ = env.create_symbolic_sizes_strides_storage_offset(np.empty((3, 4), order="F"), "f")
    assert fstrides == [1, 3]


def test_strict_min_max_constraint(env):
    s = env.create_symbol(8, "n", DimDynamic.DYNAMIC, StrictMinMaxConstraint(warn_only=False, vr=ValueRanges(4, 64)))
    assert env.var_to_range[s] == ValueRanges(4, 64)
    with pytest.raises(ConstraintViolationError, match="outside"):
        env.create_symbol(100, "m", DimDynamic.DYNAMIC, StrictMinMaxConstraint(warn_only=False, vr=ValueRanges(4, 64)))


def test_evaluate_expr_records_guard_and_narrows_range(env):
    s = env.create_symbol(12, "n")
    assert env.evaluate_expr(s > 10) is True
    assert env.guards[0].expr == sympy.Gt(s, 10)
    assert env.var_to_range[s] == ValueRanges(11, INF)
    # implied by the range: answered without a new guard
    assert env.evaluate_expr(s > 5) is True and env.evaluate_expr(s >= 11) is True
    assert env.evaluate_expr(sympy.Eq(s, 3)) is False
    assert len(env.guards) == 1
    assert env.evaluate_expr(s < 20) is True
    assert env.var_to_range[s] == ValueRanges(11, 19)


def test_default_range_decides_small_comparisons(env):
    s = env.create_symbol(7, "n")
    assert env.evaluate_expr(s > 1) is True
    assert env.evaluate_expr(sympy.Ne(s, 1)) is True
    assert env.evaluate_expr(s + 1 > s) is True
    assert env.guards == []


def test_repeated_guard_is_a_known_fact(env):
    s, t = env.create_symbol(7, "n"), env.create_symbol(9, "m")
    assert env.evaluate_expr(sympy.Eq(sympy.Mod(s + t, 2), 0)) is True
    assert env.evaluate_expr(sympy.Eq(sympy.Mod(s + t, 2), 0)) is True
    assert env.evaluate_expr(sympy.Ne(sympy.Mod(s + t, 2), 0)) is False
    assert len(env.guards) == 1


def test_equality_guard_creates_replacement(env):
    s0, s1 = env.create_symbol(5, "a"), env.create_symbol(5, "b", DimDynamic.DYNAMIC)
    env.evaluate_expr(sympy.Eq(s0, s1))
    assert env.replacements == {s1: s0}
    assert env.simplify(s1 + 1) == s0 + 1
    assert env.evaluate_expr(s1 - s0) == 0 and len(env.guards) == 1


def test_integer_guard_specialises(env):
    s = env.create_symbol(6, "a")
    assert env.evaluate_expr(2 * s) == 12
    assert env.replacements[s] == 6
    assert env.var_to_range[s] == ValueRanges(6, 6)


def test_simplify_uses_ranges(env):
    s = env.create_symbol(6, "a")
    env.evaluate_expr(s < 8)
    assert env.simplify(sympy.Mod(s, 8)) == s
    assert env.simplify(sympy.Max(s, 1)) == s and env.simplify(sympy.Min(s, 10)) == s
    assert env.bound_sympy(s * 2) == ValueRanges(4, 14)
    assert env.size_hint(s * 3 + 1) == 19


def test_suppress_guards_and_freeze(env, caplog):
    s = env.create_symbol(6, "a")
    with env.suppress_guards():
        assert env.evaluate_expr(s > 4) is True
    assert env.guards == []
    env.freeze()
    with caplog.at_level(logging.WARNING, logger="aot.shapes.env"):
        assert env.evaluate_expr(s > 4) is True
    assert env.guards == [] and "frozen" in caplog.text


def test_guards_are_logged_with_sources(env, caplog):
    (n,) = env.create_symbolic_sizes((12,), "x")
    with caplog.at_level(logging.INFO, logger="aot.guards"):
        assert n > 10
    assert "L['x'].size()[0] > 10" in caplog.text and "[guard added]" in caplog.text


def test_unbacked_symint(env):
    u = env.create_unbacked_symint()
    assert env.is_unbacked_symint(u.node.expr) and u.node.hint is None
    with pytest.raises(GuardOnDataDependentSymNode, match="data-dependent"):
        bool(u > 3)
    assert env.expect_true(u.node.expr >= 0) is True
    assert env.deferred_runtime_asserts and env.var_to_range[u.node.expr].lower == 0
    assert env.statically_known_true(u.node.expr > -1)
    assert env.size_hint(u.node.expr, allow_none=True) is None
    with pytest.raises(GuardOnDataDependentSymNode):
        env.size_hint(u.node.expr)


def test_statically_known_true_never_guards(env):
    s = env.create_symbol(7, "n")
    assert env.statically_known_true(s >= 2)
    assert not env.statically_known_true(s > 5)  # true at the hint, but not known
    assert env.guards == []


def test_create_symintnode_and_unspecified_int(env):
    assert env.create_symintnode(sympy.Integer(3), hint=3) == 3
    n = env.create_unspecified_symint_and_symbol(-4, "L['k']")
    assert isinstance(n, SymInt) and n.node.hint == -4
    assert env.var_to_range[n.node.expr] == ValueRanges(-INF, INF)


def test_guard_origin_points_at_the_caller(env):
    (n,) = env.create_symbolic_sizes((12,), "x")
    assert n > 10
    assert __file__.rstrip("c") in env.guards[0].stack and "test_guard_origin_points_at_the_caller" in env.guards[0].stack


def test_numpy_consumes_symint_through_index(env):
    (n,) = env.create_symbolic_sizes((5,), "x")
    assert np.zeros(n).shape == (5,)
    assert env.replacements[n.node._expr] == 5  # a concrete size was needed: specialised


def test_duck_shape_off_keeps_equal_sizes_independent():
    env = ShapeEnv(duck_shape=False)
    x = env.create_symbolic_sizes((5,), "x")
    y = env.create_symbolic_sizes((5,), "y")
    assert env.produce_guards([x, y], ["x", "y"]) == ["2 <= L['x'].size()[0]", "2 <= L['y'].size()[0]"]
    duck = ShapeEnv()
    x, y = duck.create_symbolic_sizes((5,), "x"), duck.create_symbolic_sizes((5,), "y")
    assert duck.produce_guards([x, y], ["x", "y"]) == ["L['y'].size()[0] == L['x'].size()[0]",
                                                       "2 <= L['x'].size()[0]"]


def test_unbacked_symbool(env):
    b = env.create_unbacked_symbool()
    with pytest.raises(GuardOnDataDependentSymNode):
        bool(b)


def test_constraint_render():
    c = StrictMinMaxConstraint(warn_only=False, vr=ValueRanges(2, 8))
    assert c.render(TensorPropertySource(LocalSource("x"), TensorProperty.SIZE, 1)) == "2 <= L['x'].size()[1] <= 8"
    assert TensorPropertySource(LocalSource("x"), TensorProperty.STRIDE, 0).name() == "L['x'].stride()[0]"
