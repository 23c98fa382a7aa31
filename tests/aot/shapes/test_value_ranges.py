from __future__ import annotations

import itertools
import math

import pytest
import sympy

from aot.shapes.sympy_functions import FloorDiv, TruncToInt
from aot.shapes.value_ranges import INF, ValueRanges, bound_sympy, vr_floordiv, vr_mod, vr_mul, vr_pow

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
u = sympy.Symbol("u", integer=True)


def _samples(vr: ValueRanges):
    lo = vr.lower if not math.isinf(vr.lower) else -7
    hi = vr.upper if not math.isinf(vr.upper) else 9
    return range(int(lo), int(hi) + 1)


@pytest.mark.parametrize("op, fn", [
    (vr_mul, lambda a, b: a * b),
    (vr_floordiv, lambda a, b: a // b),
    (vr_mod, lambda a, b: a % b),
])
def test_binary_ops_contain_every_result(op, fn):
    ranges = [ValueRanges(-3, 4), ValueRanges(2, 5), ValueRanges(-6, -1), ValueRanges(0, 0), ValueRanges(7, 7)]
    for a, b in itertools.product(ranges, ranges):
        result = op(a, b)
        for x, y in itertools.product(_samples(a), _samples(b)):
            if y == 0:
                continue
            assert fn(x, y) in result, (a, b, x, y, result)


def test_pow_even_and_odd():
    assert vr_pow(ValueRanges(-3, 2), ValueRanges.wrap(2)) == ValueRanges(0, 9)
    assert vr_pow(ValueRanges(-3, 2), ValueRanges.wrap(3)) == ValueRanges(-27, 8)
    assert vr_pow(ValueRanges(2, INF), ValueRanges.wrap(2)) == ValueRanges(4, INF)


def test_bound_sympy_uses_ranges_and_assumptions():
    ranges = {s0: ValueRanges(2, INF), s1: ValueRanges(3, 10)}
    assert bound_sympy(s0 + 1, ranges) == ValueRanges(3, INF)
    assert bound_sympy(s1 * 2 - 1, ranges) == ValueRanges(5, 19)
    assert bound_sympy(FloorDiv(s1, 2), ranges) == ValueRanges(1, 5)
    assert bound_sympy(sympy.Mod(s0, 4), ranges) == ValueRanges(0, 3)
    assert bound_sympy(sympy.Min(s0, s1), ranges) == ValueRanges(2, 10)
    assert bound_sympy(sympy.Max(s0, s1), ranges) == ValueRanges(3, INF)
    assert bound_sympy(s0) == ValueRanges(1, INF)  # positive=True with no range given
    assert bound_sympy(u) == ValueRanges(-INF, INF)
    assert bound_sympy(TruncToInt(s1 / 2), ranges).lower == 1


def test_bound_sympy_relations_are_decided_on_the_difference():
    ranges = {s0: ValueRanges(2, INF)}
    assert bound_sympy(s0 > 1, ranges) == ValueRanges(1, 1, True)
    assert bound_sympy(s0 + 1 > s0, ranges).lower == 1  # separate bounds alone would not decide it
    assert bound_sympy(sympy.Eq(s0, 1), ranges).upper == 0
    assert bound_sympy(s0 > 5, ranges) == ValueRanges(0, 1, True)
    assert bound_sympy(sympy.And(s0 > 1, s0 < 1), ranges).upper == 0


def test_intersection_and_errors():
    assert (ValueRanges(0, 10) & ValueRanges(5, INF)) == ValueRanges(5, 10)
    with pytest.raises(ValueError, match="empty"):
        ValueRanges(0, 1) & ValueRanges(3, 4)
    assert ValueRanges(2, 3).issubset(ValueRanges(0, 5))
