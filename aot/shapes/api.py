"""Module-level helpers of torch.fx.experimental.symbolic_shapes, over ints and Sym* values.

Each accepts plain Python numbers too, so shape code can call them without knowing whether a
size is symbolic. Only the `guard_*` functions and `expect_true` may record guards.
"""
from __future__ import annotations

from aot.shapes.sym_node import SymBool, SymFloat, SymInt, SymTypes, sym_ite, wrap_node
from ir.symbols import sympy as _sympy


def is_symbolic(a) -> bool:
    """True for a SymInt/SymFloat/SymBool whose value is not a known constant."""
    return isinstance(a, SymTypes) and not a.node.is_constant()


def is_concrete_int(a) -> bool:
    """True when `a` is an int, or a SymInt whose expression is an integer constant."""
    if isinstance(a, bool):
        return False
    if isinstance(a, int):
        return True
    return isinstance(a, SymInt) and a.node.expr.is_Integer


def is_concrete_float(a) -> bool:
    if isinstance(a, float):
        return True
    return isinstance(a, SymFloat) and a.node.expr.is_number


def is_concrete_bool(a) -> bool:
    if isinstance(a, bool):
        return True
    return isinstance(a, SymBool) and a.node.maybe_as_bool() is not None


def free_symbols(val) -> set:
    """The sympy symbols `val` (a Sym*, a sympy expression, or a sequence of them) depends on."""
    if isinstance(val, SymTypes):
        return set(val.node.expr.free_symbols)
    if hasattr(val, "free_symbols"):
        return set(val.free_symbols)
    if isinstance(val, (list, tuple)):
        out: set = set()
        for item in val:
            out |= free_symbols(item)
        return out
    if hasattr(val, "shape") and not isinstance(val, (int, float)):
        return free_symbols(list(val.shape))
    return set()


def has_free_symbols(val) -> bool:
    return bool(free_symbols(val))


def free_unbacked_symbols(val) -> set:
    syms = free_symbols(val)
    # unbacked symbols are named u0, u1, ... (torch tells symbol kinds apart by prefix the same way)
    return {s for s in syms if s.name.startswith("u")}


def has_free_unbacked_symbols(val) -> bool:
    return bool(free_unbacked_symbols(val))


def fx_placeholder_vals(graph) -> list:
    """The example values (`meta['val']`) of a graph's placeholders."""
    return [n.meta.get("val") for n in graph.nodes if n.op == "placeholder"]


def hint_int(a, fallback: int | None = None) -> int:
    """The hint of a SymInt (its value while tracing), without guarding."""
    if isinstance(a, SymInt):
        hint = a.node.shape_env.size_hint(a.node.expr, allow_none=True)
        if hint is None:
            if fallback is None:
                raise ValueError(f"hint_int: {a} has no hint (it is data-dependent); pass fallback=")
            return fallback
        return int(hint)
    return int(a)


def statically_known_true(x) -> bool:
    """True only when `x` is known true without adding a guard (False means "unknown or false")."""
    if isinstance(x, SymBool):
        return x.node.shape_env.statically_known_true(x.node.expr)
    return bool(x)


def definitely_true(a) -> bool:
    """True when `a` is known true; guards only if it has a hint and is not decidable statically."""
    if isinstance(a, SymBool):
        node = a.node
        if node.has_hint():
            return guard_bool(a)
        return node.shape_env.statically_known_true(node.expr)
    return bool(a)


def definitely_false(a) -> bool:
    if isinstance(a, SymBool):
        node = a.node
        if node.has_hint():
            return not guard_bool(a)
        return node.shape_env.statically_known_true(_sympy().Not(node.expr))
    return not bool(a)


def guard_bool(a) -> bool:
    if isinstance(a, SymBool):
        return a.node.guard_bool()
    if not isinstance(a, bool):
        raise TypeError(f"guard_bool expects a bool or SymBool, got {type(a).__name__}")
    return a


def guard_int(a) -> int:
    if isinstance(a, SymInt):
        return a.node.guard_int()
    if isinstance(a, bool) or not isinstance(a, int):
        raise TypeError(f"guard_int expects an int or SymInt, got {type(a).__name__}")
    return a


def guard_float(a) -> float:
    if isinstance(a, SymFloat):
        return a.node.guard_float()
    if not isinstance(a, float):
        raise TypeError(f"guard_float expects a float or SymFloat, got {type(a).__name__}")
    return a


def guard_size_oblivious(expr) -> bool:
    """Like guard_bool, but an unbacked size-like symbol is treated as >= 2 (so `u0 == 1` is False)."""
    if isinstance(expr, SymBool):
        return expr.node.guard_size_oblivious()
    if not isinstance(expr, bool):
        raise TypeError(f"guard_size_oblivious expects a bool or SymBool, got {type(expr).__name__}")
    return expr


def expect_true(a) -> bool:
    """Assume `a`: guards when it has a hint, else records a deferred runtime assert."""
    if isinstance(a, SymBool):
        return a.node.expect_true()
    return bool(a)


def sym_eq(x, y):
    """`x == y` for ints, Sym* values and (elementwise, same length) lists/tuples of them."""
    if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
        if len(x) != len(y):
            return False
        result = True
        for a, b in zip(x, y):
            result = _sym_and(result, sym_eq(a, b))
        return result
    if isinstance(x, (tuple, list)) or isinstance(y, (tuple, list)):
        raise TypeError(f"sym_eq: cannot compare {type(x).__name__} with {type(y).__name__}")
    return x == y


def _sym_and(a, b):
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    return a & b


def _shape_env_of(*values):
    for v in values:
        if isinstance(v, SymTypes):
            return v.node.shape_env
    return None


def constrain_range(a, *, min: int | None, max: int | None = None) -> None:  # noqa: A002 - torch's names
    """Declare that `a` lies in [min, max]; later guards on `a` are decided with this range."""
    if min is None:
        min = -float("inf")  # noqa: A001
    if max is None:
        max = float("inf")  # noqa: A001
    if max < min:
        raise ValueError(f"constrain_range: max {max} < min {min}")
    if isinstance(a, SymInt):
        expr = a.node.expr
        if not expr.is_Symbol:
            raise ValueError(f"constrain_range: {a} is an expression; constrain the symbol it is built from")
        a.node.shape_env.constrain_symbol_range(
            expr, None if min == -float("inf") else min, None if max == float("inf") else max)
        return
    if not (min <= a <= max):
        raise ValueError(f"Invalid value {a} for range [{min}:{max}]")


def constrain_unify(a, b) -> None:
    """Declare that `a` and `b` are equal: one is replaced by the other from now on."""
    env = _shape_env_of(a, b)
    if env is None:
        if a != b:
            raise ValueError(f"constrain_unify: {a} != {b}")
        return
    lhs = a.node.expr if isinstance(a, SymTypes) else _sympy().Integer(a)
    rhs = b.node.expr if isinstance(b, SymTypes) else _sympy().Integer(b)
    env.expect_true(_sympy().Eq(lhs, rhs))


def canonicalize_bool_expr(expr):
    from aot.shapes.guards import canonicalize_bool_expr as impl

    return impl(expr)


__all__ = [
    "canonicalize_bool_expr", "constrain_range", "constrain_unify", "definitely_false", "definitely_true",
    "expect_true", "free_symbols", "free_unbacked_symbols", "fx_placeholder_vals", "guard_bool",
    "guard_float", "guard_int", "guard_size_oblivious", "has_free_symbols", "has_free_unbacked_symbols",
    "hint_int", "is_concrete_bool", "is_concrete_float", "is_concrete_int", "is_symbolic", "statically_known_true",
    "sym_eq", "sym_ite", "wrap_node",
]
