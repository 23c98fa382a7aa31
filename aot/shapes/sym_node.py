"""SymInt, SymFloat, SymBool: Python numbers backed by a sympy expression (torch's SymNode design).

A `SymNode` holds the expression, its ShapeEnv, its Python type and a *hint* (the concrete value
seen while tracing). Arithmetic builds new nodes without guarding; turning a symbolic value into a
Python value (`bool()`, `int()`, `float()`, indexing) asks the ShapeEnv, which returns the hint's
answer and records a guard. sympy is imported on first use, so this module is cheap to import.
"""
from __future__ import annotations

import builtins
import math
import numbers
import operator

from ir.symbols import sympy as _sympy


def _fns():
    from aot.shapes import sympy_functions

    return sympy_functions


def _sympify_const(value):
    sp = _sympy()
    if isinstance(value, bool):
        return sp.true if value else sp.false
    if isinstance(value, int):
        return sp.Integer(value)
    return sp.Float(value)


# ---- expression builders: name -> (sympy builder, hint function) -------------------------------
def _floordiv_expr(a, b, pytype):
    sp = _sympy()
    if pytype is float:
        return sp.floor(a / b)
    return _fns().FloorDiv(a, b)


def _pow_expr(a, b, pytype):
    return _sympy().Pow(a, b)


_ARITH = {
    "add": (lambda a, b, t: a + b, operator.add),
    "sub": (lambda a, b, t: a - b, operator.sub),
    "mul": (lambda a, b, t: a * b, operator.mul),
    "mod": (lambda a, b, t: _sympy().Mod(a, b), operator.mod),
    "floordiv": (_floordiv_expr, operator.floordiv),
    "truediv": (lambda a, b, t: a / b, operator.truediv),
    "pow": (_pow_expr, operator.pow),
    "min": (lambda a, b, t: _sympy().Min(a, b), builtins.min),
    "max": (lambda a, b, t: _sympy().Max(a, b), builtins.max),
}
_COMPARE = {
    "eq": ("Eq", operator.eq),
    "ne": ("Ne", operator.ne),
    "lt": ("Lt", operator.lt),
    "le": ("Le", operator.le),
    "gt": ("Gt", operator.gt),
    "ge": ("Ge", operator.ge),
}
_LOGIC = {"and": ("And", lambda a, b: a and b), "or": ("Or", lambda a, b: a or b)}


class SymNode:
    """One symbolic value: expression, ShapeEnv, Python type (int/float/bool) and hint."""

    __slots__ = ("_expr", "shape_env", "pytype", "_hint", "fx_node")

    def __init__(self, expr, shape_env, pytype, hint, fx_node=None):
        if pytype not in (int, float, bool):
            raise TypeError(f"SymNode: pytype must be int, float or bool, got {pytype!r}")
        self._expr = expr
        self.shape_env = shape_env
        self.pytype = pytype
        self._hint = hint
        self.fx_node = fx_node

    @property
    def expr(self):
        """The expression with the ShapeEnv's current replacements applied."""
        return self.shape_env.replace(self._expr)

    @property
    def hint(self):
        return self._hint

    def has_hint(self) -> bool:
        return self._hint is not None

    def is_int(self) -> bool:
        return self.pytype is int

    def is_float(self) -> bool:
        return self.pytype is float

    def is_bool(self) -> bool:
        return self.pytype is bool

    def is_constant(self) -> bool:
        return bool(self.expr.is_number) or self.expr in (_sympy().true, _sympy().false)

    def maybe_as_int(self) -> int | None:
        expr = self.expr
        return int(expr) if expr.is_Integer else None

    def maybe_as_bool(self) -> bool | None:
        expr = self.expr
        sp = _sympy()
        return True if expr is sp.true else (False if expr is sp.false else None)

    def str(self) -> str:
        return builtins.str(self.expr)

    def __str__(self) -> str:
        return self.str()

    def __repr__(self) -> str:
        return f"SymNode({self.str()}, pytype={self.pytype.__name__}, hint={self._hint})"

    # -- construction --
    def wrap_int(self, value: int) -> SymNode:
        return SymNode(_sympify_const(int(value)), self.shape_env, int, int(value))

    def wrap_float(self, value: float) -> SymNode:
        return SymNode(_sympify_const(float(value)), self.shape_env, float, float(value))

    def wrap_bool(self, value: bool) -> SymNode:
        return SymNode(_sympify_const(bool(value)), self.shape_env, bool, bool(value))

    def _derive(self, expr, pytype, hint_fn, *others: SymNode) -> SymNode:
        hints = [self._hint, *(o._hint for o in others)]
        hint = None if any(h is None for h in hints) else hint_fn(*hints)
        return SymNode(expr, self.shape_env, pytype, hint)

    # -- operations --
    def arith(self, name: str, other: SymNode) -> SymNode:
        build, hint_fn = _ARITH[name]
        pytype = int if self.pytype is not float and other.pytype is not float else float
        if name == "truediv":
            pytype = float
        elif name == "pow" and pytype is int and not self.shape_env.statically_known_true(
            _sympy().Ge(other._expr, 0)
        ):
            pytype = float  # int ** negative int is a float in Python
        if pytype is float and name == "pow":
            hint_fn = lambda a, b: float(a) ** b  # noqa: E731
        expr = build(self._expr, other._expr, pytype)
        return self._derive(expr, pytype, hint_fn, other)

    def compare(self, name: str, other: SymNode) -> SymNode:
        rel, hint_fn = _COMPARE[name]
        expr = getattr(_sympy(), rel)(self._expr, other._expr)
        return self._derive(expr, bool, hint_fn, other)

    def logic(self, name: str, other: SymNode) -> SymNode:
        op, hint_fn = _LOGIC[name]
        return self._derive(getattr(_sympy(), op)(self._expr, other._expr), bool, hint_fn, other)

    def neg(self) -> SymNode:
        return self._derive(-self._expr, self.pytype, operator.neg)

    def abs(self) -> SymNode:
        return self._derive(_sympy().Abs(self._expr), self.pytype, builtins.abs)

    def sym_not(self) -> SymNode:
        return self._derive(_sympy().Not(self._expr), bool, operator.not_)

    def to_int(self, how: str) -> SymNode:
        """float -> int by `trunc`, `floor` or `ceil` (round half to even is `round`)."""
        sp = _sympy()
        build = {"trunc": _fns().TruncToInt, "floor": sp.floor, "ceil": sp.ceiling}[how]
        hint_fn = {"trunc": math.trunc, "floor": math.floor, "ceil": math.ceil}[how]
        return self._derive(build(self._expr), int, hint_fn)

    def to_float(self) -> SymNode:
        return self._derive(_sympy().Float(1.0) * self._expr, float, float)

    def ite(self, then: SymNode, otherwise: SymNode) -> SymNode:
        sp = _sympy()
        expr = sp.Piecewise((then._expr, self._expr), (otherwise._expr, True))
        pytype = float if float in (then.pytype, otherwise.pytype) else then.pytype
        return self._derive(expr, pytype, lambda c, t, f: t if c else f, then, otherwise)

    # -- specialisation: these record guards --
    def guard_bool(self, file: str | None = None, line: int | None = None) -> bool:
        return bool(self.shape_env.evaluate_expr(self._expr, self._hint))

    def guard_int(self, file: str | None = None, line: int | None = None) -> int:
        return int(self.shape_env.evaluate_expr(self._expr, self._hint))

    def guard_float(self, file: str | None = None, line: int | None = None) -> float:
        return float(self.shape_env.evaluate_expr(self._expr, self._hint))

    def guard_size_oblivious(self, file: str | None = None, line: int | None = None) -> bool:
        return bool(self.shape_env.evaluate_expr(self._expr, self._hint, size_oblivious=True))

    def expect_true(self, file: str | None = None, line: int | None = None) -> bool:
        return self.shape_env.expect_true(self._expr, self._hint)


# ---- the Python number types ------------------------------------------------------------------
def _as_node(like: SymNode, value):
    """`value` as a SymNode in `like`'s ShapeEnv, or NotImplemented for non-numbers."""
    if isinstance(value, (SymInt, SymFloat, SymBool)):
        return value.node
    if isinstance(value, bool):
        return like.wrap_bool(value)
    if isinstance(value, numbers.Integral):
        return like.wrap_int(int(value))
    if isinstance(value, numbers.Real):
        return like.wrap_float(float(value))
    return NotImplemented


def wrap_node(node: SymNode):
    """The SymInt/SymFloat/SymBool for a node."""
    return {int: SymInt, float: SymFloat, bool: SymBool}[node.pytype](node)


def _binary_method(kind: str, name: str, reflected: bool = False):
    def method(self, other):
        other_node = _as_node(self.node, other)
        if other_node is NotImplemented:
            return NotImplemented
        lhs, rhs = (other_node, self.node) if reflected else (self.node, other_node)
        if kind == "arith" and (lhs.pytype is bool or rhs.pytype is bool):
            raise TypeError(f"symbolic {name} on a bool operand is not supported; use sym_ite")
        return wrap_node(getattr(lhs, kind)(name, rhs))

    method.__name__ = f"__{'r' if reflected else ''}{name}__"
    return method


class _SymNumber:
    __slots__ = ("node",)

    def __init__(self, node: SymNode):
        if not isinstance(node, SymNode):
            raise TypeError(f"{type(self).__name__} wraps a SymNode, got {type(node).__name__}")
        self.node = node

    def __repr__(self) -> str:
        return self.node.str()

    __str__ = __repr__

    def __neg__(self):
        return wrap_node(self.node.neg())

    def __pos__(self):
        return self

    def __abs__(self):
        return wrap_node(self.node.abs())

    # the hooks torch's sym_max/sym_min call
    __sym_max__ = _binary_method("arith", "max")
    __sym_min__ = _binary_method("arith", "min")


for _name in _ARITH:
    if _name in ("min", "max"):
        continue
    setattr(_SymNumber, f"__{_name}__", _binary_method("arith", _name))
    setattr(_SymNumber, f"__r{_name}__", _binary_method("arith", _name, reflected=True))
for _name in _COMPARE:
    setattr(_SymNumber, f"__{_name}__", _binary_method("compare", _name))


class SymInt(_SymNumber):
    """A symbolic Python int. Unhashable, as in torch: hashing would have to guard."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return builtins.bool(self != 0)

    def __int__(self) -> int:
        return self.node.guard_int()

    def __index__(self) -> int:
        return self.node.guard_int()

    def __float__(self) -> float:
        return float(self.node.guard_int())

    def __trunc__(self):
        return self

    def __floor__(self):
        return self

    def __ceil__(self):
        return self

    def __round__(self, ndigits=None):
        return self

    def __hash__(self):
        raise TypeError("unhashable type: non-nested SymInt")


class SymFloat(_SymNumber):
    """A symbolic Python float."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return builtins.bool(self != 0.0)

    def __float__(self) -> float:
        return self.node.guard_float()

    def __int__(self) -> int:
        return int(self.__trunc__())

    def __trunc__(self):
        return SymInt(self.node.to_int("trunc"))

    def __floor__(self):
        return SymInt(self.node.to_int("floor"))

    def __ceil__(self):
        return SymInt(self.node.to_int("ceil"))

    def is_integer(self):
        return wrap_node(self.node.compare("eq", self.node.to_int("floor")))

    def __hash__(self):
        return hash(builtins.float(self))


class SymBool:
    """A symbolic Python bool. `bool()` guards; `&`, `|` and `~` (sym_not) stay symbolic."""

    __slots__ = ("node",)

    def __init__(self, node: SymNode):
        self.node = node

    def __repr__(self) -> str:
        return self.node.str()

    __str__ = __repr__

    def __bool__(self) -> bool:
        return self.node.guard_bool()

    def __and__(self, other):
        other_node = _as_node(self.node, other)
        return NotImplemented if other_node is NotImplemented else SymBool(self.node.logic("and", other_node))

    def __or__(self, other):
        other_node = _as_node(self.node, other)
        return NotImplemented if other_node is NotImplemented else SymBool(self.node.logic("or", other_node))

    __rand__ = __and__
    __ror__ = __or__

    def __invert__(self):
        return SymBool(self.node.sym_not())

    def __eq__(self, other):
        other_node = _as_node(self.node, other)
        return NotImplemented if other_node is NotImplemented else SymBool(self.node.compare("eq", other_node))

    def __ne__(self, other):
        other_node = _as_node(self.node, other)
        return NotImplemented if other_node is NotImplemented else SymBool(self.node.compare("ne", other_node))

    def __hash__(self):
        constant = self.node.maybe_as_bool()
        return hash(constant if constant is not None else builtins.bool(self))


SymTypes = (SymInt, SymFloat, SymBool)


# ---- torch.sym_* functions ----------------------------------------------------------------------
def sym_not(a):
    """Symbolic `not a` (no guard)."""
    if isinstance(a, SymBool):
        return SymBool(a.node.sym_not())
    return not a


def sym_ite(cond, then, otherwise):
    """Symbolic `then if cond else otherwise` (no guard on `cond`)."""
    if not isinstance(cond, SymBool):
        return then if cond else otherwise
    then_node = _as_node(cond.node, then)
    else_node = _as_node(cond.node, otherwise)
    if then_node is NotImplemented or else_node is NotImplemented:
        raise TypeError("sym_ite: both branches must be numbers")
    return wrap_node(cond.node.ite(then_node, else_node))


def sym_int(a):
    """Symbolic `int(a)`: truncation toward zero, without a guard."""
    if isinstance(a, SymInt):
        return a
    if isinstance(a, SymFloat):
        return SymInt(a.node.to_int("trunc"))
    return int(a)


def sym_float(a):
    """Symbolic `float(a)`, without a guard."""
    if isinstance(a, SymFloat):
        return a
    if isinstance(a, SymInt):
        return SymFloat(a.node.to_float())
    return float(a)


def sym_max(a, b):
    """Symbolic `max(a, b)`; plain `max` would guard on the comparison."""
    if isinstance(a, (SymInt, SymFloat)):
        return a.__sym_max__(b)
    if isinstance(b, (SymInt, SymFloat)):
        return b.__sym_max__(a)
    return builtins.max(a, b)


def sym_min(a, b):
    """Symbolic `min(a, b)`; plain `min` would guard on the comparison."""
    if isinstance(a, (SymInt, SymFloat)):
        return a.__sym_min__(b)
    if isinstance(b, (SymInt, SymFloat)):
        return b.__sym_min__(a)
    return builtins.min(a, b)
