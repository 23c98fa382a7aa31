"""ShapeEnv: the symbolic-shape environment (torch.fx.experimental.symbolic_shapes.ShapeEnv).

It creates size symbols for input dims, keeps each symbol's hint (`var_to_val`) and value range
(`var_to_range`), and answers questions about symbolic expressions. An answer that the ranges,
replacements and earlier guards do not already imply is taken from the hints and recorded as a
guard; guards become the conditions under which a compiled artifact may be reused.
"""
from __future__ import annotations

import contextlib
import operator
import os
import sys
from collections import defaultdict

import sympy

from aot.shapes import produce
from aot.shapes.constraints import (
    ConstraintViolationError,
    DimDynamic,
    GuardOnDataDependentSymNode,
    StatelessSymbolicContext,
    StrictMinMaxConstraint,
    TensorProperty,
    TensorPropertySource,
    as_source,
    input_source,
)
from aot.shapes.guards import ShapeGuard, canonicalize_bool_expr, to_python
from aot.shapes.sym_node import SymBool, SymFloat, SymInt, SymNode
from aot.shapes.value_ranges import INF, ValueRanges, bound_sympy, is_bool_expr
from ir.logger import INFO, get_logger
from ir.symbols import size_symbol

log = get_logger(__name__)
guard_log = get_logger("aot.guards")
_THIS_PACKAGE = os.path.dirname(os.path.abspath(__file__))

_REL_BOUND = {  # k*s + c REL 0, solved as s REL t: how t bounds s
    sympy.Lt: lambda t: ValueRanges(-INF, _ceil(t) - 1),
    sympy.Le: lambda t: ValueRanges(-INF, _floor(t)),
    sympy.Gt: lambda t: ValueRanges(_floor(t) + 1, INF),
    sympy.Ge: lambda t: ValueRanges(_ceil(t), INF),
}
_FLIP = {sympy.Lt: sympy.Gt, sympy.Le: sympy.Ge, sympy.Gt: sympy.Lt, sympy.Ge: sympy.Le}


def _floor(t) -> int:
    return int(sympy.floor(t))


def _ceil(t) -> int:
    return int(sympy.ceiling(t))


def _py(value):
    """A sympy number or boolean as the Python value it stands for."""
    if value is sympy.true or value is sympy.false:
        return bool(value)
    if isinstance(value, (bool, int, float)):
        return value
    if value.is_Integer:
        return int(value)
    return float(value)


def _user_frame() -> str:
    """`file:line in fn` of the first caller outside this package (where the guard came from)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _THIS_PACKAGE:
        frame = frame.f_back
    if frame is None:
        return ""
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


class ShapeEnv:
    """Size symbols, their hints and ranges, replacements, and the guards recorded on them."""

    def __init__(self, *, specialize_zero_one: bool = True, duck_shape: bool = True,
                 assume_static_by_default: bool = False):
        self.specialize_zero_one = specialize_zero_one
        self.duck_shape = duck_shape
        self.assume_static_by_default = assume_static_by_default
        self.guards: list[ShapeGuard] = []
        self.var_to_val: dict = {}
        self.var_to_range: dict = {}
        self.var_to_sources: dict = defaultdict(list)
        self.replacements: dict = {}
        self.val_to_var: dict[int, object] = {}
        self.unbacked_symbols: set = set()
        self.size_like: set = set()
        self.deferred_runtime_asserts: list = []
        self.frozen = False
        self._suppress_depth = 0
        self._facts: dict = {}  # canonical boolean -> its known truth value
        self._symbol_order: dict = {}  # symbol -> creation index (older symbols are representatives)

    # ---- creating symbols --------------------------------------------------------------------------
    def _default_value_range(self) -> ValueRanges:
        return ValueRanges(2 if self.specialize_zero_one else 0, INF)

    def create_symbol(self, val, source, dynamic_dim: DimDynamic = DimDynamic.DUCK, constraint_dim=None,
                      positive: bool | None = True, do_not_specialize_zero_one: bool = False):
        """The sympy expression for a dim of size `val` from `source`: a symbol, or an Integer when
        the dim is static or (by default) 0 or 1. With duck sizing, equal sizes share a symbol."""
        if dynamic_dim is DimDynamic.UNBACKED:
            raise ValueError("create_symbol: use create_unbacked_symint for DimDynamic.UNBACKED")
        val = operator.index(val)
        source = as_source(source)
        if dynamic_dim is DimDynamic.STATIC:
            return sympy.Integer(val)
        if positive and val < 0:
            raise ValueError(f"create_symbol: size {val} from {source.name()} is negative")
        specialize = self.specialize_zero_one and not do_not_specialize_zero_one
        if positive and specialize and val in (0, 1):
            return sympy.Integer(val)
        duck = self.duck_shape and dynamic_dim is DimDynamic.DUCK and positive
        if duck and val in self.val_to_var:
            sym = self.val_to_var[val]
            self.var_to_sources[sym].append(source)
            self._apply_dim_constraint(sym, val, source, constraint_dim)
            return sym
        sym = self._new_symbol(val, positive)
        if positive:
            vr = self._default_value_range() if specialize else ValueRanges(0, INF)
        else:
            vr = ValueRanges.unknown()
        self.var_to_range[sym] = vr
        self.var_to_sources[sym].append(source)
        self._apply_dim_constraint(sym, val, source, constraint_dim)
        if duck:
            self.val_to_var[val] = sym
        if dynamic_dim in (DimDynamic.SIZE_LIKE, DimDynamic.OBLIVIOUS_SIZE):
            self.size_like.add(sym)
        log.debug("create_symbol %s = %d for %s", sym, val, source.name())
        return sym

    def _new_symbol(self, val: int, positive: bool | None):
        name = f"s{len(self.var_to_val)}"
        if positive and val > 0:
            sym = size_symbol(name)
        elif positive:
            sym = sympy.Symbol(name, integer=True, nonnegative=True)
        else:
            sym = sympy.Symbol(name, integer=True)
        self.var_to_val[sym] = sympy.Integer(val)
        self._symbol_order[sym] = len(self._symbol_order)
        return sym

    def _apply_dim_constraint(self, sym, val: int, source, constraint_dim) -> None:
        if not isinstance(constraint_dim, StrictMinMaxConstraint):
            return
        if val not in constraint_dim.vr:
            raise ConstraintViolationError(
                f"{source.name()} = {val} is outside the range {constraint_dim.vr} it was declared with"
            )
        try:
            self.var_to_range[sym] = self.var_to_range[sym] & constraint_dim.vr
        except ValueError as e:
            raise ConstraintViolationError(
                f"{source.name()}: range {constraint_dim.vr} excludes every value allowed by "
                f"{self.var_to_range[sym]}"
            ) from e

    def create_symintnode(self, sym, hint: int | None, source=None):
        """A SymInt for `sym` (a plain int when `sym` is an Integer)."""
        if isinstance(sym, int) or sym.is_Integer:
            return int(sym)
        return SymInt(SymNode(sym, self, int, hint))

    def create_symfloatnode(self, sym, hint: float | None, source=None):
        if sym.is_number:
            return float(sym)
        return SymFloat(SymNode(sym, self, float, hint))

    def create_symboolnode(self, sym):
        if sym is sympy.true or sym is sympy.false:
            return bool(sym)
        return SymBool(SymNode(sym, self, bool, self.size_hint(sym, allow_none=True)))

    def create_unspecified_symint_and_symbol(self, value: int, source, dynamic_dim=DimDynamic.DUCK):
        """A SymInt for a Python int input (any sign, no 0/1 specialisation)."""
        sym = self.create_symbol(value, source, dynamic_dim, positive=None)
        return self.create_symintnode(sym, hint=value, source=source)

    def create_symbolic_sizes(self, shape, source, dynamic_dims=None, constraint_sizes=None,
                              symbolic_context: StatelessSymbolicContext | None = None):
        """Sizes (ints or SymInts) for an input of shape `shape` named by `source` (`"x"` or a Source)."""
        shape = tuple(shape.shape) if hasattr(shape, "shape") else tuple(shape)
        base = input_source(source)
        if symbolic_context is not None:
            dynamic_dims, constraint_sizes = symbolic_context.dynamic_sizes, symbolic_context.constraint_sizes
        default = DimDynamic.STATIC if self.assume_static_by_default else DimDynamic.DUCK
        dynamic_dims = list(dynamic_dims) if dynamic_dims is not None else [default] * len(shape)
        constraint_sizes = list(constraint_sizes) if constraint_sizes is not None else [None] * len(shape)
        if not len(dynamic_dims) == len(constraint_sizes) == len(shape):
            raise ValueError(
                f"create_symbolic_sizes: shape {shape} has {len(shape)} dims but got "
                f"{len(dynamic_dims)} dynamic_dims and {len(constraint_sizes)} constraint_sizes"
            )
        sizes = []
        for i, (val, dyn, constraint) in enumerate(zip(shape, dynamic_dims, constraint_sizes)):
            dim_source = TensorPropertySource(base, TensorProperty.SIZE, i)
            sym = self.create_symbol(val, dim_source, dyn, constraint)
            sizes.append(self.create_symintnode(sym, hint=int(val), source=dim_source))
        return sizes

    def create_symbolic_sizes_strides_storage_offset(self, ex, source, symbolic_context=None):
        """(sizes, strides, storage_offset) for a numpy array; strides count elements, like torch.

        C-contiguous arrays get strides derived from the symbolic sizes; other layouts keep their
        concrete strides (a symbolic stride would be a guess about how the caller made the view).
        """
        sizes = self.create_symbolic_sizes(ex.shape, source, symbolic_context=symbolic_context)
        if ex.flags.c_contiguous:
            strides, acc = [], 1
            for size in reversed(sizes):
                strides.append(acc)
                acc = acc * size
            strides.reverse()
        else:
            strides = [s // ex.itemsize for s in ex.strides]
        return sizes, strides, 0

    def create_unbacked_symint(self) -> SymInt:
        """A SymInt for a data-dependent size: no hint, range (-inf, inf) until constrained."""
        sym = sympy.Symbol(f"u{len(self.unbacked_symbols)}", integer=True)
        self.unbacked_symbols.add(sym)
        self.var_to_range[sym] = ValueRanges.unknown()
        self._symbol_order[sym] = len(self._symbol_order)
        log.debug("create_unbacked_symint %s", sym)
        return SymInt(SymNode(sym, self, int, None))

    def create_unbacked_symbool(self) -> SymBool:
        sym = sympy.Symbol(f"u{len(self.unbacked_symbols)}", integer=True)
        self.unbacked_symbols.add(sym)
        self.var_to_range[sym] = ValueRanges(0, 1)
        self._symbol_order[sym] = len(self._symbol_order)
        return SymBool(SymNode(sympy.Eq(sym, 1), self, bool, None))

    def is_unbacked_symint(self, sym) -> bool:
        return sym in self.unbacked_symbols

    def constrain_symbol_range(self, sym, lower, upper) -> None:
        """Narrow `sym`'s range to [lower, upper] (None = unbounded on that side)."""
        vr = ValueRanges(-INF if lower is None else lower, INF if upper is None else upper)
        hint = self.var_to_val.get(sym)
        if hint is not None and int(hint) not in vr:
            raise ValueError(f"constrain_range: value {int(hint)} of {sym} is outside [{lower}, {upper}]")
        self._update_range(sym, vr)

    # ---- simplification and hints ----------------------------------------------------------------
    def replace(self, expr):
        """`expr` with every replacement applied (replacement values are kept fully resolved)."""
        if not self.replacements or not getattr(expr, "free_symbols", None):
            return expr
        return expr.xreplace(self.replacements)

    def simplify(self, expr):
        """Apply replacements, then drop Mod/Min/Max whose outcome the value ranges decide."""
        expr = self.replace(sympy.sympify(expr))
        if expr.has(sympy.Mod, sympy.Min, sympy.Max):
            expr = expr.replace(lambda e: isinstance(e, (sympy.Mod, sympy.Min, sympy.Max)), self._simplify_node)
        return expr

    def _simplify_node(self, node):
        if isinstance(node, sympy.Mod):
            a, b = (self.bound_sympy(arg) for arg in node.args)
            if a.lower >= 0 and b.lower > 0 and a.upper < b.lower:
                return node.args[0]
            return node
        pick_low = isinstance(node, sympy.Min)
        for arg in node.args:
            others = [o for o in node.args if o is not arg]
            rel = sympy.Le if pick_low else sympy.Ge
            if all(self._static_truth(rel(arg, o)) is True for o in others):
                return arg
        return node

    def size_hint(self, expr, *, allow_none: bool = False):
        """The value of `expr` at the hints (what the traced inputs had)."""
        result = self.replace(sympy.sympify(expr)).xreplace(self.var_to_val)
        if result.free_symbols:
            if allow_none:
                return None
            raise GuardOnDataDependentSymNode(
                f"size_hint: {expr} depends on unbacked symbols {sorted(map(str, result.free_symbols))}"
            )
        return _py(sympy.simplify(result) if not (result.is_number or is_bool_expr(result)) else result)

    def _ranges(self, size_oblivious: bool = False) -> dict:
        if not size_oblivious:
            return self.var_to_range
        # size-oblivious: an unbacked size-like symbol is reasoned about as if it were >= 2
        ranges = dict(self.var_to_range)
        for sym in self.size_like & self.unbacked_symbols:
            ranges[sym] = ranges[sym] & ValueRanges(2, INF)
        return ranges

    def bound_sympy(self, expr, size_oblivious: bool = False) -> ValueRanges:
        """The range `expr` can take given every symbol's range."""
        return bound_sympy(self.replace(sympy.sympify(expr)), self._ranges(size_oblivious))

    def _static_truth(self, expr, size_oblivious: bool = False):
        """The value of `expr` when ranges, replacements and known facts decide it, else None."""
        if expr is sympy.true or expr is sympy.false:
            return bool(expr)
        if expr.is_number:
            return _py(expr)
        if is_bool_expr(expr):
            fact = self._facts.get(canonicalize_bool_expr(expr))
            if fact is not None:
                return fact
        vr = bound_sympy(expr, self._ranges(size_oblivious))
        if vr.is_singleton():
            return bool(vr.lower) if is_bool_expr(expr) else _py(sympy.sympify(vr.lower))
        return None

    def _maybe_evaluate_static(self, expr, size_oblivious: bool = False):
        return self._static_truth(self.simplify(expr), size_oblivious)

    def statically_known_true(self, expr) -> bool:
        """True when `expr` is implied by what is known; never adds a guard."""
        return self._maybe_evaluate_static(sympy.sympify(expr)) is True

    # ---- guards ----------------------------------------------------------------------------------
    def evaluate_expr(self, orig_expr, hint=None, fx_node=None, size_oblivious: bool = False):
        """The concrete value of `orig_expr`, recording a guard unless it is already implied."""
        expr = self.simplify(sympy.sympify(orig_expr))
        static = self._static_truth(expr, size_oblivious)
        if static is not None:
            return static
        if expr.free_symbols & self.unbacked_symbols:
            raise GuardOnDataDependentSymNode(
                f"Could not guard on data-dependent expression {expr} (unbacked symbols "
                f"{sorted(str(s) for s in expr.free_symbols & self.unbacked_symbols)}); use "
                "constrain_range, expect_true or guard_size_oblivious to say what is known"
            )
        concrete = _py(hint) if hint is not None else self.size_hint(expr)
        if is_bool_expr(expr):
            guard = expr if concrete else sympy.Not(expr)
        else:
            guard = sympy.Eq(expr, concrete)
        self._record_guard(guard)
        return concrete

    def _record_guard(self, guard) -> None:
        if self._suppress_depth:
            return
        if self.frozen:
            log.warning("Ignored guard %s: the ShapeEnv is frozen, this could result in accuracy problems",
                        guard)
            return
        self._maybe_guard_rel(guard)
        stack = _user_frame()
        self.guards.append(ShapeGuard(guard, stack))
        self._add_fact(guard)
        if guard_log.isEnabledFor(INFO):
            guard_log.info("eval %s [guard added] at %s", self.readable(guard), stack)

    def readable(self, expr) -> str:
        """`expr` printed over the sources of its symbols (`L['x'].size()[0] > 10`)."""
        names = {s: (self.var_to_sources[s][0].name() if self.var_to_sources.get(s) else str(s))
                 for s in expr.free_symbols}
        return to_python(expr, names)

    def _add_fact(self, guard) -> None:
        self._facts[canonicalize_bool_expr(guard)] = True
        self._facts[canonicalize_bool_expr(sympy.Not(guard))] = False
        if isinstance(guard, sympy.And):
            for arg in guard.args:
                self._add_fact(arg)

    def expect_true(self, expr, hint=None) -> bool:
        """Assume `expr` holds: guard on it if it has a hint, else defer it to a runtime assert."""
        expr = self.simplify(sympy.sympify(expr))
        static = self._static_truth(expr)
        if static is not None:
            return bool(static)
        if expr.free_symbols & self.unbacked_symbols or hint is None:
            self.deferred_runtime_asserts.append(ShapeGuard(expr, _user_frame()))
            self._maybe_guard_rel(expr)
            self._add_fact(expr)
            return True
        return bool(self.evaluate_expr(expr, hint))

    def defer_runtime_assert(self, expr, msg: str = "") -> bool:
        return self.expect_true(expr)

    def _maybe_guard_rel(self, guard) -> None:
        """Learn from a guard that now holds: equalities become replacements, and inequalities on
        one symbol narrow its range."""
        if isinstance(guard, sympy.And):
            for arg in guard.args:
                self._maybe_guard_rel(arg)
            return
        if not isinstance(guard, sympy.Rel):
            return
        diff = sympy.expand(guard.lhs - guard.rhs)  # guard says: diff REL 0
        if isinstance(guard, sympy.Eq):
            self._try_replacement(diff)
        self._refine_range(type(guard), diff)

    def _refine_range(self, rel, diff) -> None:
        if len(diff.free_symbols) != 1:
            return
        (sym,) = diff.free_symbols
        k = diff.coeff(sym)
        c = diff - k * sym
        if not (k.is_Integer and k != 0 and c.is_number and c.is_real):
            return
        t = -c / k
        if rel is sympy.Eq:
            if t.is_Integer:
                self._update_range(sym, ValueRanges.wrap(int(t)))
            return
        if rel is sympy.Ne:
            vr = self.var_to_range.get(sym)
            if vr is not None and t.is_Integer and int(t) in (vr.lower, vr.upper) and not vr.is_singleton():
                shrunk = ValueRanges(vr.lower + 1, vr.upper) if int(t) == vr.lower else ValueRanges(
                    vr.lower, vr.upper - 1)
                self._update_range(sym, shrunk)
            return
        rel = _FLIP[rel] if k < 0 else rel
        self._update_range(sym, _REL_BOUND[rel](t))

    def _update_range(self, sym, vr: ValueRanges) -> None:
        old = self.var_to_range.get(sym, ValueRanges.unknown())
        try:
            new = old & vr
        except ValueError:
            log.warning("guard on %s contradicts its range %s (new bound %s); range left unchanged", sym, old, vr)
            return
        self.var_to_range[sym] = new
        if new.is_singleton() and sym not in self.replacements:
            self._set_replacement(sym, sympy.Integer(int(new.lower)))

    def _try_replacement(self, diff) -> None:
        """`diff == 0` holds: replace its newest symbol that appears linearly with coefficient +-1."""
        candidates = sorted(diff.free_symbols, key=lambda s: (s in self.unbacked_symbols,
                                                                self._symbol_order.get(s, -1)), reverse=True)
        for sym in candidates:
            k = diff.coeff(sym)
            rest = diff - k * sym
            if k in (1, -1) and sym not in rest.free_symbols:
                self._set_replacement(sym, sympy.expand(-rest / k))
                return

    def _set_replacement(self, sym, value) -> None:
        value = self.replace(value)
        if sym in value.free_symbols or sym in self.replacements:
            return
        if value.is_Symbol and sym in self.var_to_range:
            try:
                self.var_to_range[value] = self.var_to_range.get(value, ValueRanges.unknown()) & self.var_to_range[sym]
            except ValueError:
                log.warning("replacement %s -> %s: ranges are disjoint", sym, value)
        self.replacements[sym] = value
        for key, old in self.replacements.items():
            self.replacements[key] = old.xreplace({sym: value})
        log.debug("set_replacement %s = %s", sym, value)

    @contextlib.contextmanager
    def suppress_guards(self):
        """Within this block, evaluate_expr answers but records no guard."""
        self._suppress_depth += 1
        try:
            yield
        finally:
            self._suppress_depth -= 1

    def freeze(self) -> None:
        """No more guards: later guard requests are answered, logged as ignored, and not recorded."""
        self.frozen = True

    # ---- producing guards -------------------------------------------------------------------------
    def produce_guards(self, placeholders, sources, source_ref=None, *, constraint_inputs=None,
                       equalities_inputs=None, ignore_static: bool = False) -> list[str]:
        """Readable guards (Python over `sources`) that hold exactly when the traced assumptions
        do: static sizes, duck-sized equalities, recorded guards and symbol ranges."""
        plan = produce.GuardPlan.build(self, placeholders, sources, ignore_static=ignore_static)
        produce.check_constraints(self, plan, constraint_inputs, equalities_inputs)
        return plan.readable(source_ref)

    def produce_guards_expression(self, placeholders, sources=None, *, ignore_static: bool = False) -> str | None:
        """All guards as one Python expression (None if there are none). Without `sources` it is over
        `L['t0']`, `L['t1']`, ..., the form evaluate_guards_expression reads."""
        sources = sources or [f"t{i}" for i in range(len(placeholders))]
        guards = self.produce_guards(placeholders, sources, ignore_static=ignore_static)
        return " and ".join(f"({g})" for g in guards) if guards else None

    def evaluate_guards_expression(self, code: str, args) -> bool:
        """Evaluate a produce_guards_expression string against concrete inputs."""
        return produce.evaluate_guards_expression(code, args)

    def produce_guard_checker(self, placeholders, sources=None, *, ignore_static: bool = False):
        """A compiled checker (see compile_guard_checker): `checker(*arrays)` is True exactly when all guards hold.

        `placeholders` are the traced inputs' symbolic shapes (arrays with SymInt shapes, or the
        size lists create_symbolic_sizes returned); `sources` name concrete arrays instead.
        """
        sources = sources or [f"t{i}" for i in range(len(placeholders))]
        plan = produce.GuardPlan.build(self, placeholders, sources, ignore_static=ignore_static)
        return plan.checker()

    def evaluate_guards_for_args(self, placeholders, args, *, ignore_static: bool = False) -> bool:
        return self.produce_guard_checker(placeholders, ignore_static=ignore_static)(*args)

    def format_guards(self) -> str:
        return "\n".join(f" - {self.readable(g.expr)}  # {g.stack}" for g in self.guards)

    def __repr__(self) -> str:
        return f"ShapeEnv({len(self.var_to_val)} symbols, {len(self.guards)} guards)"

