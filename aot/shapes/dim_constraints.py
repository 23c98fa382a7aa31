"""DimConstraints: turn the guards on user-declared dynamic dims into suggested fixes.

torch.export asks users to declare dynamic dims (`Dim("N", min=2, max=4096)`). When tracing adds
guards that narrow or fix such a dim, this class explains what the program actually requires:
specialisations ("N must be specialized to 3 ..."), bounds ("N must be >= 3"), equalities between
dims ("M = 2*N") and divisibility ("N must be divisible by 2", written `N = 2*_N`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import sympy

from aot.shapes.constraints import LocalSource, TensorPropertySource, as_source
from aot.shapes.guards import canonicalize_bool_expr, to_python
from aot.shapes.value_ranges import INF, ValueRanges, is_bool_expr


@dataclass
class DimConstraints:
    """Collects guards (`add`) and solves them per symbol (`solve`)."""

    symbol_to_source: dict  # symbol -> list of Sources
    var_to_val: dict  # symbol -> hint
    marked_dynamic: set  # symbols the user declared dynamic
    source_name_to_debug_name: dict = field(default_factory=dict)  # "L['x'].size()[0]" -> "N"
    _specializations: dict = field(default_factory=dict)  # symbol -> int
    _bounds: dict = field(default_factory=dict)  # symbol -> ValueRanges
    _equalities: dict = field(default_factory=dict)  # symbol -> expression over older symbols
    _divisors: dict = field(default_factory=dict)  # symbol -> lcm of required divisors
    _others: list = field(default_factory=list)  # guards no rule understood
    _solved: bool = False

    @classmethod
    def from_env(cls, env, marked_dynamic=None, source_name_to_debug_name=None) -> DimConstraints:
        """DimConstraints holding every guard and replacement a ShapeEnv recorded."""
        dc = cls(dict(env.var_to_sources), dict(env.var_to_val),
                 set(marked_dynamic if marked_dynamic is not None else env.var_to_val),
                 dict(source_name_to_debug_name or {}))
        for sym, value in env.replacements.items():
            dc.add(sympy.Eq(sym, value))
        for guard in env.guards:
            dc.add(guard.expr)
        for sym, vr in env.var_to_range.items():
            if sym in env.var_to_val and sym not in env.replacements:
                dc._bounds[sym] = dc._bounds.get(sym, ValueRanges.unknown()) & vr
        return dc

    # ---- collecting ------------------------------------------------------------------------------
    def add(self, expr) -> bool:
        """Record one guard; returns whether a rule understood it (others are listed verbatim)."""
        expr = sympy.sympify(expr)
        if expr is sympy.true or not expr.free_symbols:
            return True
        if isinstance(expr, sympy.And):
            return all([self.add(arg) for arg in expr.args])
        self._solved = False
        if isinstance(expr, sympy.Eq) and self._add_divisibility(expr):
            return True
        if not isinstance(expr, sympy.Rel):
            self._others.append(expr)
            return False
        diff = sympy.expand(expr.lhs - expr.rhs)
        if len(diff.free_symbols) == 1 and self._add_univariate(type(expr), diff):
            return True
        if isinstance(expr, sympy.Eq) and self._add_equality(diff):
            return True
        self._others.append(expr)
        return False

    def add_equality(self, source, expr) -> None:
        """The dim at `source` equals `expr` (a number or an expression over known symbols)."""
        name = as_source(source).name()
        for sym, sources in self.symbol_to_source.items():
            if any(s.name() == name for s in sources):
                self.add(sympy.Eq(sym, expr))
                return
        raise KeyError(f"add_equality: no symbol has source {name}")

    def _add_divisibility(self, expr) -> bool:
        lhs, rhs = expr.lhs, expr.rhs
        if isinstance(rhs, sympy.Mod):
            lhs, rhs = rhs, lhs
        if isinstance(lhs, sympy.Mod) and rhs == 0 and lhs.args[0].is_Symbol and lhs.args[1].is_Integer:
            sym, k = lhs.args[0], int(lhs.args[1])
            self._divisors[sym] = math.lcm(self._divisors.get(sym, 1), k)
            return True
        return False

    def _add_univariate(self, rel, diff) -> bool:
        (sym,) = diff.free_symbols
        k = diff.coeff(sym)
        c = diff - k * sym
        if not (k.is_Integer and k != 0 and c.is_number):
            return False
        t = -c / k
        if rel is sympy.Eq:
            if not t.is_Integer:
                return False
            self._specializations[sym] = int(t)
            return True
        if rel is sympy.Ne:
            return False
        if k < 0:
            rel = {sympy.Lt: sympy.Gt, sympy.Le: sympy.Ge, sympy.Gt: sympy.Lt, sympy.Ge: sympy.Le}[rel]
        bound = {
            sympy.Lt: lambda: ValueRanges(-INF, int(sympy.ceiling(t)) - 1),
            sympy.Le: lambda: ValueRanges(-INF, int(sympy.floor(t))),
            sympy.Gt: lambda: ValueRanges(int(sympy.floor(t)) + 1, INF),
            sympy.Ge: lambda: ValueRanges(int(sympy.ceiling(t)), INF),
        }[rel]()
        self._bounds[sym] = self._bounds.get(sym, ValueRanges.unknown()) & bound
        return True

    def _add_equality(self, diff) -> bool:
        order = {s: i for i, s in enumerate(self.symbol_to_source)}
        for sym in sorted(diff.free_symbols, key=lambda s: order.get(s, -1), reverse=True):
            k = diff.coeff(sym)
            rest = diff - k * sym
            if k in (1, -1) and sym not in rest.free_symbols:
                self._equalities[sym] = sympy.expand(-rest / k)
                return True
        return False

    # ---- solving -----------------------------------------------------------------------------------
    def solve(self) -> None:
        """Fold bounds of singleton ranges into specialisations and substitute known constants."""
        for sym, vr in list(self._bounds.items()):
            if vr.is_singleton():
                self._specializations.setdefault(sym, int(vr.lower))
        for sym, expr in list(self._equalities.items()):
            value = expr.xreplace({s: sympy.Integer(v) for s, v in self._specializations.items()})
            if value.is_Integer:
                self._specializations.setdefault(sym, int(value))
                del self._equalities[sym]
        self._solved = True

    def forced_specializations(self) -> dict[str, int]:
        """Debug name -> value for each dim the user declared dynamic that the program fixed."""
        if not self._solved:
            self.solve()
        return {self._debug_name(s): v for s, v in self._specializations.items() if s in self.marked_dynamic}

    def specializations(self) -> dict:
        if not self._solved:
            self.solve()
        return dict(self._specializations)

    def violations(self) -> list[str]:
        """One readable line per requirement the guards put on a dim the user declared dynamic."""
        if not self._solved:
            self.solve()
        lines = []
        for sym in self._ordered(self.marked_dynamic):
            name = self._debug_name(sym)
            if sym in self._specializations:
                lines.append(f"{name} must be specialized to {self._specializations[sym]} because the "
                             "guards generated for it are too complex.")
                continue
            if sym in self._equalities:
                lines.append(f"{name} must be equal to {self._print(self._equalities[sym])}")
            vr = self._bounds.get(sym)
            if vr is not None and not math.isinf(vr.lower):
                lines.append(f"{name} must be >= {int(vr.lower)}")
            if vr is not None and not math.isinf(vr.upper):
                lines.append(f"{name} must be <= {int(vr.upper)}")
            if self._divisors.get(sym, 1) > 1:
                lines.append(f"{name} must be divisible by {self._divisors[sym]}")
        lines += [f"{self._print(e)} must hold" for e in self._others]
        return lines

    def prettify_results(self, original_signature=None, dynamic_shapes=None,
                         constraint_violation_error=None, forced_specializations=None) -> str:
        """Suggested fixes in torch.export's style: `N = Dim('N', min=2, max=4096)` and friends."""
        forced = self.forced_specializations() if forced_specializations is None else forced_specializations
        out = []
        if forced:
            out.append(f"Specializations unexpectedly required ({', '.join(sorted(forced))})!")
            out += [f"  - {n} must be specialized to {v} because the guards generated for it are too complex."
                    for n, v in sorted(forced.items())]
        fixes = self._suggested_fixes()
        if fixes:
            out.append("Suggested fixes:")
            out += [f"  {fix}" for fix in fixes]
        return "\n".join(out)

    def _suggested_fixes(self) -> list[str]:
        fixes = []
        for sym in self._ordered(self.marked_dynamic):
            name = self._debug_name(sym)
            if sym in self._specializations:
                fixes.append(f"{name} = {self._specializations[sym]}")
            elif sym in self._equalities:
                fixes.append(f"{name} = {self._print(self._equalities[sym])}")
            elif self._divisors.get(sym, 1) > 1:
                k = self._divisors[sym]
                fixes.append(f"_{name} = {self._dim_text('_' + name, self._bounds.get(sym), k)}")
                fixes.append(f"{name} = {k}*_{name}")
            else:
                fixes.append(f"{name} = {self._dim_text(name, self._bounds.get(sym), 1)}")
        return fixes

    @staticmethod
    def _dim_text(name: str, vr: ValueRanges | None, divisor: int) -> str:
        args = [repr(name)]
        if vr is not None and not math.isinf(vr.lower) and vr.lower > 0:
            args.append(f"min={-(-int(vr.lower) // divisor)}")
        if vr is not None and not math.isinf(vr.upper):
            args.append(f"max={int(vr.upper) // divisor}")
        return f"Dim({', '.join(args)})"

    # ---- naming ------------------------------------------------------------------------------------
    def _ordered(self, symbols) -> list:
        order = {s: i for i, s in enumerate(self.symbol_to_source)}
        return sorted(symbols, key=lambda s: (order.get(s, len(order)), str(s)))

    def _debug_name(self, sym) -> str:
        for source in self.symbol_to_source.get(sym, ()):
            name = self.source_name_to_debug_name.get(source.name())
            if name:
                return name
        sources = self.symbol_to_source.get(sym)
        if not sources:
            return str(sym)
        first = sources[0]
        # torch.export's default name for an unnamed dim: dim<index>_<input>, e.g. dim0_x
        if isinstance(first, TensorPropertySource) and isinstance(first.base, LocalSource):
            return f"dim{first.idx}_{first.base.local_name}"
        return first.name()

    def _print(self, expr) -> str:
        return to_python(canonicalize_bool_expr(expr) if is_bool_expr(expr) else expr,
                         {s: self._debug_name(s) for s in expr.free_symbols})
