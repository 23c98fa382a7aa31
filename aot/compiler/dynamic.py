"""Symbolic shapes while capturing: the ShapeEnv behind traced arrays.

Dims that are to stay dynamic get size symbols (0 and 1 specialise; equal sizes share a symbol);
user code sees them as SymInts (so `if x.shape[0] > 10:` records a guard), the front end and the
ir shape rules see sympy expressions and ask this object (an `ir.symbols.ShapeDecider`) whenever
they must compare two dims. At the end, the ShapeEnv's guards compile into one check over the
call's array arguments.
"""
from __future__ import annotations

import math

from ir.logger import get_logger
from ir.symbols import SymbolInfo, is_static, norm_dim

log = get_logger(__name__)


class DynamicShapes:
    """Owns the ShapeEnv of one capture; implements ShapeDecider for the rules."""

    def __init__(self):
        from ..shapes.env import ShapeEnv

        self.env = ShapeEnv()
        self.placeholders: list[tuple] = []  # per array input: its dims (int or SymInt)
        self.sources: list[str] = []
        self.symbolic: dict[int, set[int]] = {}  # leaf index -> dims that became symbols

    # --- inputs --------------------------------------------------------------------------------
    def input_dims(self, leaf: int, source: str, shape: tuple, dynamic_dims) -> tuple:
        """ir dims for one array input: ints for static dims, symbols for dynamic ones."""
        from ..shapes.constraints import TensorProperty, TensorPropertySource, as_source

        base = as_source(source)
        dims = []
        for d, n in enumerate(shape):
            if dynamic_dims is True or d in dynamic_dims:
                e = self.env.create_symbol(int(n), TensorPropertySource(base, TensorProperty.SIZE, d))
                e = int(e) if e.is_Integer else e
            else:
                e = int(n)
            if not is_static(e):
                self.symbolic.setdefault(leaf, set()).add(d)
            dims.append(e)
        self.placeholders.append(tuple(self.symint(e) for e in dims))
        self.sources.append(source)
        return tuple(dims)

    # --- ShapeDecider --------------------------------------------------------------------------
    def eq(self, a, b) -> bool:
        import sympy

        return bool(self.env.evaluate_expr(sympy.Eq(sympy.sympify(a), sympy.sympify(b))))

    def le(self, a, b) -> bool:
        import sympy

        return bool(self.env.evaluate_expr(sympy.Le(sympy.sympify(a), sympy.sympify(b))))

    def specialize(self, dim) -> int:
        import sympy

        hint = int(self.env.size_hint(dim))
        self.env.evaluate_expr(sympy.Eq(dim, hint))
        return hint

    # --- values ------------------------------------------------------------------------------------
    def symint(self, dim):
        """What user code sees for a dim: an int, or a SymInt that guards when branched on."""
        dim = norm_dim(dim)
        if is_static(dim):
            return dim
        dim = self.env.replace(dim)
        if dim.is_Integer:
            return int(dim)
        return self.env.create_symintnode(dim, hint=int(self.env.size_hint(dim)))

    def expr_of(self, value):
        """sympy/int form of a dim-like value coming from user code (SymInt, int, numpy int)."""
        node = getattr(value, "node", None)
        if node is not None and hasattr(node, "expr"):
            return norm_dim(self.env.replace(node.expr))
        return value

    def canonical(self, shape: tuple) -> tuple:
        """Dims with the ShapeEnv's replacements applied (after `s1 == s0` was guarded, s1 -> s0)."""
        return tuple(d if is_static(d) else norm_dim(self.env.simplify(d)) for d in shape)

    # --- results ---------------------------------------------------------------------------------
    def guard_checker(self):
        """check(*arrays) over the array inputs, True exactly when every shape guard holds."""
        return self.env.produce_guard_checker(self.placeholders, self.sources, ignore_static=True)

    def guard_texts(self, sources: list[str] | None = None) -> list[str]:
        """Readable guards over the inputs' sources (or over the given source names)."""
        return self.env.produce_guards(self.placeholders, sources or self.sources, ignore_static=True)

    def symbol_infos(self) -> list[SymbolInfo]:
        out = []
        for sym, val in self.env.var_to_val.items():
            if sym in self.env.replacements:
                continue
            vr = self.env.var_to_range.get(sym)
            lo = int(vr.lower) if vr is not None and math.isfinite(vr.lower) else 0
            hi = int(vr.upper) if vr is not None and math.isfinite(vr.upper) else None
            out.append(SymbolInfo(str(sym), lo, hi, int(val)))
        return out


class KnownFacts:
    """A ShapeDecider for after tracing (lowering, passes, codegen): it answers only what the
    guards and ranges already imply, and refuses anything that would need a new guard."""

    def __init__(self, dyn: DynamicShapes):
        self.env = dyn.env

    def _known(self, rel) -> bool:
        if self.env.statically_known_true(rel):
            return True
        import sympy

        if self.env.statically_known_true(sympy.Not(rel)):
            return False
        raise ValueError(f"the shape fact {rel} is not implied by the guards of this entry")

    def eq(self, a, b) -> bool:
        """Equal only when the guards imply it (an unknown answer is "not known equal", which
        every rule treats conservatively: no rewrite, or the shape error tracing would raise)."""
        import sympy

        return bool(self.env.statically_known_true(sympy.Eq(sympy.sympify(a), sympy.sympify(b))))

    def le(self, a, b) -> bool:
        import sympy

        return self._known(sympy.Le(sympy.sympify(a), sympy.sympify(b)))

    def specialize(self, dim) -> int:
        raise ValueError(f"the symbolic size {dim} cannot be specialised after tracing")
