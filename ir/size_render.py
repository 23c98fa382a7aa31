"""Size expressions (sympy) rendered into another language: one walk, one emitter per language.

Symbolic dims (`2*s0 + 1`, `floor(s0/2)`, `Max(s0 - 1, 0)`, `Mod(s0, s1)`) and the guards over
them are computed by generated code (LLVM IR: codegen/llvm/sizes.py), by the C wrapper of a
library (aot/export/cexpr.py) and by Python (output shapes in runtime/buffers.py, guards in
aot/shapes/guards.py). `render(expr, emitter)` walks the expression once, deciding what each node
means, and calls the emitter's leaf methods with the already rendered operands; an emitter only
spells the operations in its language.

Meaning (the contract every emitter keeps): integers of unbounded size as Python computes them;
`floordiv` and `mod` are Python's `//` and `%` (the quotient rounds toward negative infinity, the
remainder takes the divisor's sign) and a zero divisor is Python's ZeroDivisionError (generated
code: the entry's division-by-zero status; the C wrapper: the entry's status). `floor(n/d)` and
`ceiling(n/d)` of integer n and d are exact integer divisions, never float ones. Python also
renders what only it can compute (true division, rationals, floats, `**` of an expression,
Piecewise, abs, trunc); the other emitters leave those unimplemented and rendering raises
SizeRenderError (a ValueError and a NotImplementedError) naming the node.

Order: the terms of a sum are sorted (numbers last) and negative ones are subtracted, max/min and
and/or arguments are sorted, so the Python text reads like `2*s0 - 1` and is deterministic.

sympy is imported lazily (ir.symbols.sympy): importing this module costs nothing.
"""
from __future__ import annotations

from .symbols import sympy

__all__ = ["INTEGER_OPS", "PythonEmitter", "SizeEmitter", "SizeRenderError", "int_renderable", "python_source",
           "render"]


class SizeRenderError(ValueError, NotImplementedError):
    """The emitter's language cannot express this node of a size expression."""


class _NotSupported(Exception):
    """Raised by SizeEmitter's default methods; render() turns it into SizeRenderError."""


_RELATIONS = {
    "Equality": "==",
    "Unequality": "!=",
    "StrictLessThan": "<",
    "LessThan": "<=",
    "StrictGreaterThan": ">",
    "GreaterThan": ">=",
}


class SizeEmitter:
    """The leaf operations of a size expression in one language; values are whatever the
    language's emitter builds (text, LLVM values). Every method not overridden is unsupported,
    except the compound ones defined here from the basic ones (`sum`, `product`, `sub`, `neg`,
    `pow`). `integer` gets a Python int, `symbol` a symbol's name."""

    def unsupported(self, expr) -> SizeRenderError:
        """The error for a node this emitter cannot render (subclasses word it for their users)."""
        return SizeRenderError(f"cannot render the size expression {expr} ({type(expr).__name__})")

    def _no(self, *args):
        raise _NotSupported

    # atoms
    integer = symbol = rational = float = boolean = _no
    # integer arithmetic
    add = mul = floordiv = mod = ceildiv = _no
    max = min = _no  # n-ary: max(*values)
    # Python-only arithmetic
    truediv = pow_expr = abs = floor = ceil = trunc = _no
    # booleans
    compare = and_ = or_ = not_ = select = _no  # compare(op, a, b) with op one of == != < <= > >=

    def sub(self, a, b):
        return self.add(a, self.neg(b))

    def neg(self, a):
        return self.mul(self.integer(-1), a)

    def sum(self, terms: list):
        """terms: [(negative, value)]: value is subtracted when negative (the first one negated)."""
        (negative, out), *rest = terms
        out = self.neg(out) if negative else out
        for negative, v in rest:
            out = self.sub(out, v) if negative else self.add(out, v)
        return out

    def product(self, factors: list):
        out, *rest = factors
        for v in rest:
            out = self.mul(out, v)
        return out

    def pow(self, base, n: int):
        """base ** n for an integer constant n >= 0."""
        return self.product([base] * n) if n else self.integer(1)


# what generated code computes (codegen/llvm/sizes.py implements exactly these leaves; the
# compound methods of SizeEmitter derive from them)
INTEGER_OPS = ("integer", "symbol", "add", "sub", "neg", "mul", "floordiv", "mod", "max", "min")


def render(expr, emitter: SizeEmitter):
    """`expr` (a sympy expression, or an int) in the emitter's language."""
    sp = sympy()
    return _Walk(emitter, sp).visit(sp.sympify(expr))


def _accept(self, *args):
    return None


_Probe = type("_Probe", (SizeEmitter,), {name: _accept for name in INTEGER_OPS})  # renders nothing


def int_renderable(expr) -> bool:
    """Whether generated code can compute the integer size expression `expr` (INTEGER_OPS)."""
    if isinstance(expr, int):
        return True
    try:
        render(expr, _Probe())
    except SizeRenderError:
        return False
    return True


class _Walk:
    def __init__(self, em: SizeEmitter, sp):
        self.em, self.sp = em, sp

    def visit(self, e):
        try:
            return self._node(e)
        except _NotSupported:
            raise self.em.unsupported(e) from None

    def _node(self, e):
        sp, em = self.sp, self.em
        if e is sp.true or e is sp.false:
            return em.boolean(e is sp.true)
        if e.is_Symbol:
            return em.symbol(e.name)
        if e.is_Integer:
            return em.integer(int(e))
        if e.is_Rational:
            return em.rational(int(e.p), int(e.q))
        if e.is_Float:
            return em.float(float(e))
        kind = type(e).__name__
        method = getattr(self, "_" + kind, None)
        if method is not None:
            return method(e)
        if kind in _RELATIONS:
            return em.compare(_RELATIONS[kind], self.visit(e.lhs), self.visit(e.rhs))
        raise _NotSupported

    def _sorted(self, args):
        return sorted(args, key=self.sp.default_sort_key)

    def _Add(self, e):
        terms = sorted(e.args, key=lambda t: (t.is_Number, self.sp.default_sort_key(t)))
        out = []
        for t in terms:
            negative = bool(t.could_extract_minus_sign())
            out.append((negative, self.visit(-t if negative else t)))
        return self.em.sum(out)

    def _Mul(self, e):
        coeff, factors = e.as_coeff_mul()
        if coeff.is_negative:
            return self.em.neg(self.visit(-e))
        numer = [f for f in factors if not (f.is_Pow and f.exp.is_negative)]
        denom = [1 / f for f in factors if f.is_Pow and f.exp.is_negative]
        head = [] if coeff == 1 else [coeff]
        out = self.em.product([self.visit(f) for f in head + numer]) if head or numer else self.em.integer(1)
        for d in denom:
            out = self.em.truediv(out, self.visit(d))
        return out

    def _Pow(self, e):
        base, exp = e.args
        if exp.is_negative:
            return self.em.truediv(self.em.integer(1), self.visit(base ** -exp))
        if exp.is_Integer:
            return self.em.pow(self.visit(base), int(exp))
        return self.em.pow_expr(self.visit(base), self.visit(exp))

    def _Mod(self, e):
        return self.em.mod(self.visit(e.args[0]), self.visit(e.args[1]))

    _PythonMod = _Mod

    def _FloorDiv(self, e):
        return self.em.floordiv(self.visit(e.args[0]), self.visit(e.args[1]))

    def _CeilDiv(self, e):
        return self.em.ceildiv(self.visit(e.args[0]), self.visit(e.args[1]))

    def _ratio(self, e):
        """(numerator, denominator) of floor's/ceiling's argument when both are integers."""
        num, den = self.sp.together(e.args[0]).as_numer_denom()
        return (num, den) if _integral(num) and _integral(den) else None

    def _floor(self, e):
        r = self._ratio(e)
        if r is None:
            return self.em.floor(self.visit(e.args[0]))
        return self.visit(r[0]) if r[1] == 1 else self.em.floordiv(self.visit(r[0]), self.visit(r[1]))

    def _ceiling(self, e):
        r = self._ratio(e)
        if r is None:
            return self.em.ceil(self.visit(e.args[0]))
        return self.visit(r[0]) if r[1] == 1 else self.em.ceildiv(self.visit(r[0]), self.visit(r[1]))

    def _TruncToInt(self, e):
        return self.em.trunc(self.visit(e.args[0]))

    def _Abs(self, e):
        return self.em.abs(self.visit(e.args[0]))

    def _Max(self, e):
        return self.em.max(*[self.visit(a) for a in self._sorted(e.args)])

    def _Min(self, e):
        return self.em.min(*[self.visit(a) for a in self._sorted(e.args)])

    def _And(self, e):
        return self.em.and_(*[self.visit(a) for a in self._sorted(e.args)])

    def _Or(self, e):
        return self.em.or_(*[self.visit(a) for a in self._sorted(e.args)])

    def _Not(self, e):
        return self.em.not_(self.visit(e.args[0]))

    def _Piecewise(self, e):
        *branches, (last, _) = e.args
        out = self.visit(last)
        for value, cond in reversed(branches):
            out = self.em.select(self.visit(cond), self.visit(value), out)
        return out


_INTEGRAL_NODES = ("Add", "Mul", "Max", "Min", "Mod", "PythonMod", "FloorDiv")


def _integral(e) -> bool:
    """Whether `e` is integer-valued by construction (symbols count unless declared otherwise:
    sizes are integers)."""
    if e.is_Integer:
        return True
    if e.is_Symbol:
        return e.is_integer is not False
    if e.is_Number:
        return False
    kind = type(e).__name__
    if kind in _INTEGRAL_NODES:
        return all(_integral(a) for a in e.args)
    if kind in ("floor", "ceiling", "TruncToInt", "CeilDiv"):
        return True
    if kind == "Pow":
        return _integral(e.base) and e.exp.is_Integer and int(e.exp) >= 0
    return bool(e.is_integer)


# ---- Python source ----------------------------------------------------------------------------
# precedence of the text an emitter method returns (higher binds tighter)
_OR, _AND, _NOT, _CMP, _ADD, _MUL, _UNARY, _POW = range(1, 9)
_ATOM = 10


def _wrap(v: tuple[str, int], prec: int) -> str:
    text, p = v
    return text if p >= prec else f"({text})"


class PythonEmitter(SizeEmitter):
    """Python source (values: (text, precedence)). `names` maps symbol names to the source that
    reads them (`L['x'].size()[0]`); None prints symbols as their names. Floor, ceil and trunc of
    non-integers call `math.floor`, `math.ceil`, `math.trunc` (the namespace must bind `math`)."""

    def __init__(self, names: dict[str, str] | None = None):
        self.names = names

    def unsupported(self, expr) -> SizeRenderError:
        return SizeRenderError(f"cannot print {type(expr).__name__} ({expr}) as Python")

    def integer(self, v):
        return str(v), (_ATOM if v >= 0 else _UNARY)

    def symbol(self, name):
        if self.names is None:
            return name, _ATOM
        if name not in self.names:
            raise KeyError(f"no source for symbol {name} (known: {sorted(self.names)})")
        return self.names[name], _ATOM

    def rational(self, p, q):
        return f"{p}/{q}", _MUL

    def float(self, v):
        return repr(v), _ATOM

    def boolean(self, v):
        return str(v), _ATOM

    def sum(self, terms):
        parts = []
        for negative, v in terms:
            text = _wrap(v, _MUL)
            if not parts:
                parts.append(f"-{text}" if negative else text)
            else:
                parts.append(f" - {text}" if negative else f" + {text}")
        return "".join(parts), _ADD

    def add(self, a, b):
        return f"{_wrap(a, _ADD)} + {_wrap(b, _MUL)}", _ADD

    def sub(self, a, b):
        return f"{_wrap(a, _ADD)} - {_wrap(b, _MUL)}", _ADD

    def neg(self, a):
        return f"-{_wrap(a, _UNARY)}", _UNARY

    def product(self, factors):
        return "*".join(_wrap(f, _UNARY) for f in factors), _MUL

    def mul(self, a, b):
        return f"{_wrap(a, _MUL)}*{_wrap(b, _UNARY)}", _MUL

    def truediv(self, a, b):
        return f"{_wrap(a, _MUL)}/{_wrap(b, _POW)}", _MUL

    def floordiv(self, a, b):
        return f"{_wrap(a, _MUL)} // {_wrap(b, _UNARY)}", _MUL

    def mod(self, a, b):
        return f"{_wrap(a, _MUL)} % {_wrap(b, _UNARY)}", _MUL

    def ceildiv(self, a, b):
        return self.neg(self.floordiv(self.neg(a), b))

    def pow(self, base, n):
        return f"{_wrap(base, _ATOM)}**{n}", _POW

    def pow_expr(self, base, exp):
        return f"{_wrap(base, _ATOM)}**{_wrap(exp, _POW)}", _POW

    def _call(self, fn, args):
        return f"{fn}({', '.join(a[0] for a in args)})", _ATOM

    def max(self, *args):
        return self._call("max", args)

    def min(self, *args):
        return self._call("min", args)

    def abs(self, a):
        return self._call("abs", [a])

    def floor(self, a):
        return self._call("math.floor", [a])

    def ceil(self, a):
        return self._call("math.ceil", [a])

    def trunc(self, a):
        return self._call("math.trunc", [a])

    def compare(self, op, a, b):
        return f"{_wrap(a, _ADD)} {op} {_wrap(b, _ADD)}", _CMP

    def and_(self, *args):
        return " and ".join(_wrap(a, _AND + 1) for a in args), _AND

    def or_(self, *args):
        return " or ".join(_wrap(a, _OR + 1) for a in args), _OR

    def not_(self, a):
        return f"not {_wrap(a, _NOT)}", _NOT

    def select(self, cond, a, b):
        return f"({a[0]} if {cond[0]} else {b[0]})", _ATOM


def python_source(expr, names: dict[str, str] | None = None) -> str:
    """Python source computing `expr` (with Python's semantics: `//`, `%`, ZeroDivisionError)."""
    if isinstance(expr, int):
        return str(expr)
    return render(expr, PythonEmitter(names))[0]
