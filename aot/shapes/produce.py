"""From a ShapeEnv's state to the guards of one artifact, as text and as a compiled checker.

Each input dim gets a *slot* (a fresh symbol standing for "dim j of input i"). A size symbol is
bound to the first slot where it appears; later appearances become equalities between slots.
Recorded guards and symbol ranges are then rewritten over slots, so one list of sympy booleans
serves both the readable text (`L['x'].size()[0]`) and the compiled checker (`a0_0`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import sympy

from aot.shapes.constraints import (
    ConstraintViolationError,
    RelaxedUnspecConstraint,
    StrictMinMaxConstraint,
    TensorProperty,
    TensorPropertySource,
    as_source,
    input_source,
)
from aot.shapes.guards import compile_guard_checker, to_python
from aot.shapes.sym_node import SymInt
from aot.shapes.value_ranges import bound_sympy
from ir.logger import get_logger

log = get_logger(__name__)


def _is_scalar(placeholder) -> bool:
    return isinstance(placeholder, (int, SymInt)) and not hasattr(placeholder, "shape")


def _shape_of(placeholder) -> tuple:
    """An input's dims: an array's `.shape`, or a sequence of sizes standing for one."""
    if isinstance(placeholder, (list, tuple)):
        return tuple(placeholder)
    if hasattr(placeholder, "shape"):
        return tuple(placeholder.shape)
    raise TypeError(
        f"produce_guards: a placeholder must be an array, a shape or an int, got {type(placeholder).__name__}"
    )


@dataclass
class GuardPlan:
    env: object
    slot_sources: dict = field(default_factory=dict)  # slot -> Source
    slot_locals: dict = field(default_factory=dict)  # slot -> local name in the checker
    ranks: list = field(default_factory=list)  # per input: rank, or None for a scalar input
    local_names: list = field(default_factory=list)  # per input: its dims' local names
    symbol_to_slot: dict = field(default_factory=dict)
    dim_slots: dict = field(default_factory=dict)  # (input, dim) -> (slot, value)
    exprs: list = field(default_factory=list)  # sympy booleans over slots
    ranges: list = field(default_factory=list)  # (lower | None, slot, upper | None)

    @classmethod
    def build(cls, env, placeholders, sources, *, ignore_static: bool) -> GuardPlan:
        if len(placeholders) != len(sources):
            raise ValueError(f"produce_guards: {len(placeholders)} placeholders but {len(sources)} sources")
        plan = cls(env)
        by_source = {src.name(): sym for sym, srcs in env.var_to_sources.items() for src in srcs}
        pending = []  # (slot, expr) checked once every symbol is bound
        for i, (value, source) in enumerate(zip(placeholders, sources)):
            for slot, dim in plan._add_input(i, value, input_source(source)):
                sym = by_source.get(plan.slot_sources[slot].name())
                if sym is not None and not isinstance(dim, SymInt):
                    # a concrete input whose dim the env made symbolic under the same source name
                    dim = env.create_symintnode(sym, hint=int(dim))
                if isinstance(dim, SymInt):
                    expr = env.simplify(dim.node.expr)
                    if expr.is_Symbol and expr not in plan.symbol_to_slot:
                        plan.symbol_to_slot[expr] = slot
                        continue
                    pending.append((slot, expr))
                elif not ignore_static:
                    plan.exprs.append(sympy.Eq(slot, int(dim), evaluate=False))
        for slot, expr in pending:
            plan.exprs.append(sympy.Eq(slot, plan.over_slots(expr), evaluate=False))
        plan._add_recorded_guards()
        plan._add_ranges()
        return plan

    def _add_input(self, i: int, value, base):
        if _is_scalar(value):
            slot = sympy.Symbol(f"a{i}", integer=True)
            self.ranks.append(None)
            self.local_names.append([f"a{i}"])
            self.slot_sources[slot], self.slot_locals[slot] = base, f"a{i}"
            self.dim_slots[(i, None)] = (slot, value)
            return [(slot, value)]
        shape = _shape_of(value)
        self.ranks.append(len(shape))
        names, pairs = [], []
        for j, dim in enumerate(shape):
            slot = sympy.Symbol(f"a{i}_{j}", integer=True)
            names.append(f"a{i}_{j}")
            self.slot_sources[slot] = TensorPropertySource(base, TensorProperty.SIZE, j)
            self.slot_locals[slot] = f"a{i}_{j}"
            self.dim_slots[(i, j)] = (slot, dim)
            pairs.append((slot, dim))
        self.local_names.append(names)
        return pairs

    def over_slots(self, expr):
        unbound = expr.free_symbols - set(self.symbol_to_slot)
        if unbound:
            names = ", ".join(sorted(map(str, unbound)))
            raise ValueError(
                f"produce_guards: symbols {names} do not appear as a size of any input, so guards on "
                "them cannot be checked; pass the inputs they came from"
            )
        return expr.xreplace(self.symbol_to_slot)

    def _add_recorded_guards(self) -> None:
        seen = set()
        for guard in self.env.guards:
            expr = self.env.simplify(guard.expr)
            if expr is sympy.true or expr in seen:
                continue  # implied by a replacement (e.g. an equality now printed as slot equality)
            if expr is sympy.false:
                raise ConstraintViolationError(f"guard {guard.expr} recorded at {guard.stack} is now false")
            if expr.free_symbols & self.env.unbacked_symbols:
                continue  # data-dependent: checked by runtime asserts, not by input guards
            seen.add(expr)
            if bound_sympy(expr, self.env.var_to_range).lower == 1:
                continue  # implied by the symbol ranges, which are emitted as guards of their own
            self.exprs.append(self.over_slots(expr))

    def _add_ranges(self) -> None:
        for sym, slot in self.symbol_to_slot.items():
            vr = self.env.var_to_range.get(sym)
            if vr is None:
                continue
            lower = None if math.isinf(vr.lower) else int(vr.lower)
            upper = None if math.isinf(vr.upper) else int(vr.upper)
            if lower is not None or upper is not None:
                self.ranges.append((lower, slot, upper))

    # ---- outputs ---------------------------------------------------------------------------------
    def readable(self, source_ref=None) -> list[str]:
        ref = source_ref or (lambda source: source.name())
        names = {slot: ref(source) for slot, source in self.slot_sources.items()}
        out = [to_python(expr, names) for expr in self.exprs]
        for lower, slot, upper in self.ranges:
            parts = ([str(lower)] if lower is not None else []) + [names[slot]]
            parts += [str(upper)] if upper is not None else []
            out.append(" <= ".join(parts))
        return out

    def python_expr(self) -> str:
        parts = [to_python(expr, self.slot_locals) for expr in self.exprs]
        for lower, slot, upper in self.ranges:
            name = self.slot_locals[slot]
            parts.append(" <= ".join(([str(lower)] if lower is not None else []) + [name]
                                     + ([str(upper)] if upper is not None else [])))
        return " and ".join(f"({p})" for p in parts) if parts else "True"

    def checker(self):
        return compile_guard_checker(self.ranks, self.python_expr(), self.local_names)


# ---- user constraints ---------------------------------------------------------------------------
def check_constraints(env, plan: GuardPlan, constraint_inputs, equalities_inputs) -> None:
    """Raise ConstraintViolationError when the guards contradict what the user declared dynamic."""
    if constraint_inputs is not None:
        from aot.shapes.dim_constraints import DimConstraints

        problems, warnings_only, marked = [], True, {}
        for i, per_dim in enumerate(constraint_inputs):
            for j, constraint in enumerate(per_dim or ()):
                if constraint is None:
                    continue
                slot, dim = plan.dim_slots[(i, j)]
                problem = _dim_problem(env, plan.slot_sources[slot], dim, constraint)
                if isinstance(dim, SymInt) and dim.node.expr.is_Symbol:
                    marked[dim.node.expr] = constraint
                if problem:
                    problems.append(problem)
                    warnings_only &= constraint.warn_only
        if problems:
            dc = DimConstraints.from_env(env, marked_dynamic=set(marked))
            message = "Constraints violated!\n" + "\n".join(f"  - {p}" for p in problems)
            message += "\n" + dc.prettify_results()
            if warnings_only:
                log.warning("%s", message)
            else:
                raise ConstraintViolationError(message)
    if equalities_inputs is not None:
        _check_equalities(env, plan, equalities_inputs)


def _dim_problem(env, source, dim, constraint) -> str | None:
    name = source.name()
    expr = env.simplify(dim.node.expr) if isinstance(dim, SymInt) else sympy.Integer(int(dim))
    if isinstance(constraint, RelaxedUnspecConstraint):
        return None  # specialisation is allowed
    if not isinstance(constraint, StrictMinMaxConstraint):
        return None
    if expr.is_number:
        return (f"You marked {name} as dynamic but your code specialized it to be a constant "
                f"({int(expr)}). Remove the dynamic marking or make the code shape-generic.")
    vr = env.bound_sympy(expr)
    if not constraint.vr.issubset(vr):
        return (f"Not all values of {name} in the specified range {constraint.vr} satisfy the "
                f"generated guards; they allow {vr}.")
    return None


def _check_equalities(env, plan: GuardPlan, equalities) -> None:
    def expr_of(source):
        name = as_source(source).name()
        for slot, src in plan.slot_sources.items():
            if src.name() == name:
                return slot
        raise KeyError(f"equality constraint names {name}, which is not an input size")

    slot_value = {slot: (env.simplify(d.node.expr) if isinstance(d, SymInt) else sympy.Integer(int(d)))
                  for slot, d in plan.dim_slots.values()}
    for a, b in equalities.source_pairs:
        if sympy.expand(slot_value[expr_of(a)] - slot_value[expr_of(b)]) != 0:
            raise ConstraintViolationError(
                f"{as_source(a).name()} and {as_source(b).name()} were declared equal, but the "
                "traced program does not require them to be")
    for source, root, fn in equalities.derived_equalities:
        want = fn(slot_value[expr_of(root)])
        if sympy.expand(slot_value[expr_of(source)] - want) != 0:
            raise ConstraintViolationError(f"{as_source(source).name()} was declared equal to {want}")


# ---- evaluating the text form -------------------------------------------------------------------
class _SizeView:
    """What `L['t0']` stands for in guard text: `.size()` is the numpy shape."""

    __slots__ = ("_shape",)

    def __init__(self, shape):
        self._shape = shape

    def size(self):
        return self._shape

    def dim(self) -> int:
        return len(self._shape)


_EVAL_GLOBALS = {"math": math, "__builtins__": {"min": min, "max": max, "abs": abs}}


def evaluate_guards_expression(code: str, args) -> bool:
    """Evaluate guard text (over `L['t0']`, ...) against concrete inputs; slow path, for debugging."""
    local = {f"t{i}": (a if _is_scalar(a) else _SizeView(_shape_of(a))) for i, a in enumerate(args)}
    return bool(eval(code, dict(_EVAL_GLOBALS), {"L": local}))  # noqa: S307 - guard text we produced
