"""Shape decisions during export: a ShapeEnv whose symbols are the Dims (implements
ir.symbols.ShapeDecider and what aot.compile's capture needs of `tracer.dyn`).

Questions the declared ranges settle are answered silently; any other is answered from the
example sizes and recorded as a guard (aot/export/guards.py then sorts the guards into runtime
checks and errors). User code sees SymInts for dynamic dims, so `if x.shape[0] > 3:` guards too.
"""

from __future__ import annotations

import linecache
import os
import sys

from ir.symbols import size_symbol, sympy

from ..compiler.dynamic import DynamicShapes
from ..shapes.env import ShapeEnv
from .dims import Dim

_PACKAGES = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), p) + os.sep
    for p in ("aot", "ir")
)


def _user_line() -> str:
    """`file:line: source` of the innermost caller outside aot, ir, numpy and sympy."""
    f = sys._getframe(1)
    while f is not None:
        name = os.path.abspath(f.f_code.co_filename)
        if not name.startswith(_PACKAGES) and not {"numpy", "sympy"} & set(name.split(os.sep)[-4:-1]):
            return f"{name}:{f.f_lineno}: {linecache.getline(name, f.f_lineno).strip()}"
        f = f.f_back
    return ""


class _DimEnv(ShapeEnv):
    """A ShapeEnv that names each symbol after its Dim (so guards and graphs speak of `N`) and
    neither specialises sizes 0/1 nor duck-sizes: which dims are equal is the user's to declare."""

    def __init__(self):
        super().__init__(specialize_zero_one=False, duck_shape=False)
        self._next_name: str | None = None

    def _new_symbol(self, val: int, positive):
        if self._next_name is None:  # not a Dim: the base class's s0, s1, ...
            return super()._new_symbol(val, positive)
        sym = size_symbol(self._next_name)
        self.var_to_val[sym] = sympy().Integer(val)
        self._symbol_order[sym] = len(self._symbol_order)
        return sym

    def _record_guard(self, guard) -> None:
        """As the base class, but the guard's `stack` is the user's line, not aot's."""
        from ..shapes.guards import ShapeGuard

        n = len(self.guards)
        super()._record_guard(guard)
        if len(self.guards) > n:
            self.guards[-1] = ShapeGuard(self.guards[-1].expr, _user_line())

    def dim_symbol(self, dim: Dim, size: int, source):
        from ..shapes.constraints import DimDynamic, StrictMinMaxConstraint
        from ..shapes.value_ranges import INF, ValueRanges

        vr = ValueRanges(dim.min, INF if dim.max is None else dim.max)
        self._next_name = dim.name
        try:
            return self.create_symbol(
                size,
                source,
                DimDynamic.DYNAMIC,
                StrictMinMaxConstraint(warn_only=False, vr=vr),
                do_not_specialize_zero_one=True,
            )
        finally:
            self._next_name = None


class ExportShapes(DynamicShapes):
    """The ShapeEnv of one export trace (`tracer.dyn` of the capture)."""

    def __init__(self):
        super().__init__()
        self.env = _DimEnv()
        self.dim_symbols: dict[str, object] = {}  # Dim name -> its symbol
        self.declared: dict[str, Dim] = {}

    def export_dims(self, leaf: int, label: str, shape: tuple, dims: dict[int, Dim]) -> tuple:
        """ir dims for one array input: ints for static dims, the Dim's symbol for dynamic ones."""
        from ..shapes.constraints import TensorProperty, TensorPropertySource, as_source

        out = []
        for k, n in enumerate(shape):
            d = dims.get(k)
            if d is None:
                out.append(int(n))
                continue
            source = TensorPropertySource(as_source(label), TensorProperty.SIZE, k)
            sym = self.dim_symbols.get(d.name)
            if sym is None:
                sym = self.dim_symbols[d.name] = self.env.dim_symbol(d, int(n), source)
                self.declared[d.name] = d
            else:
                self.env.var_to_sources[sym].append(source)
            self.symbolic.setdefault(leaf, set()).add(k)
            out.append(sym)
        self.placeholders.append(tuple(self.symint(e) for e in out))
        self.sources.append(label)
        return tuple(out)

    def recorded(self) -> list:
        """Every guard recorded while tracing (ShapeGuard: expr + where it was asked)."""
        return list(self.env.guards) + list(self.env.deferred_runtime_asserts)
