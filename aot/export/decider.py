"""Shape decisions during export: answered only from the Dims' ranges, never by guessing.

torch.export forbids guards that narrow a dynamic dim beyond its declared range; in the same way,
a question the ranges cannot settle (is N == 1? is N <= M?) raises SymbolicShapeError, which
export turns into an error suggesting a fix. Implements ir.symbols.ShapeDecider.
"""

from __future__ import annotations

from ir.symbols import norm_dim, size_symbol, sympy

from ..frontend.shapes import SymbolicShapeError


class RangeDecider:
    def __init__(self, ranges: dict[str, tuple[int, int | None]]):
        from ..shapes.value_ranges import INF, ValueRanges

        self.ranges = {
            size_symbol(n): ValueRanges(lo, INF if hi is None else hi) for n, (lo, hi) in ranges.items()
        }

    def _bound(self, expr):
        from ..shapes.value_ranges import bound_sympy

        return bound_sympy(sympy().expand(expr), self.ranges)

    def eq(self, a, b) -> bool:
        diff = norm_dim(sympy().simplify(sympy().sympify(a) - sympy().sympify(b)))
        if isinstance(diff, int):
            return diff == 0
        r = self._bound(diff)
        if 0 not in r:
            return False
        if r.is_singleton():
            return True
        raise SymbolicShapeError(f"cannot decide whether {a} == {b} from the dims' ranges")

    def le(self, a, b) -> bool:
        r = self._bound(sympy().sympify(b) - sympy().sympify(a))
        if r.lower >= 0:
            return True
        if r.upper < 0:
            return False
        raise SymbolicShapeError(f"cannot decide whether {a} <= {b} from the dims' ranges")

    def specialize(self, dim) -> int:
        r = self._bound(dim)
        if r.is_singleton():
            return int(r.lower)
        raise SymbolicShapeError(f"the code needs a concrete value for the size {dim}")
