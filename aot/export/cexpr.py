"""Size expressions and guards (sympy) as C expressions over int64_t symbol variables.

The C emitter of ir.size_render (one walk of the expression for every language). The helpers
`aot_floordiv`, `aot_mod`, `aot_max`, `aot_min` are defined by the generated wrapper
(runtime/abi_wrapper.py SIZE_HELPERS) with Python's (= sympy's) semantics for negative operands;
a zero divisor gives 0 there, and the entry, computing the same sizes, fails with its
division-by-zero status.
"""

from __future__ import annotations

from ir.size_render import SizeEmitter, SizeRenderError, render
from ir.symbols import sympy


class CEmitter(SizeEmitter):
    """C text of int64_t arithmetic (values: strings)."""

    def unsupported(self, expr) -> SizeRenderError:
        return SizeRenderError(f"cannot express {expr} ({type(expr).__name__}) in C")

    def integer(self, v):
        return f"INT64_C({v})"

    def symbol(self, name):
        return name

    def boolean(self, v):
        return "1" if v else "0"

    def sum(self, terms):
        (negative, first), *rest = terms
        out = f"-{first}" if negative else first
        for negative, v in rest:
            out += f" - {v}" if negative else f" + {v}"
        return f"({out})"

    def add(self, a, b):
        return f"({a} + {b})"

    def sub(self, a, b):
        return f"({a} - {b})"

    def neg(self, a):
        return f"(-{a})"

    def product(self, factors):
        return "(" + " * ".join(factors) + ")"

    def mul(self, a, b):
        return f"({a} * {b})"

    def floordiv(self, a, b):
        return f"aot_floordiv({a}, {b})"

    def ceildiv(self, a, b):
        return f"(-aot_floordiv(-{a}, {b}))"

    def mod(self, a, b):
        return f"aot_mod({a}, {b})"

    def _fold(self, fn, args):
        out, *rest = args
        for a in rest:
            out = f"{fn}({out}, {a})"
        return out

    def max(self, *args):
        return self._fold("aot_max", args)

    def min(self, *args):
        return self._fold("aot_min", args)

    def compare(self, op, a, b):
        return f"({a} {op} {b})"

    def and_(self, *args):
        return "(" + " && ".join(args) + ")"

    def or_(self, *args):
        return "(" + " || ".join(args) + ")"

    def not_(self, a):
        return f"(!{a})"


def to_c(expr) -> str:
    """C text for an integer size expression or a boolean guard; ValueError when not expressible."""
    return render(expr, CEmitter())


def dim_to_c(d) -> int | str:
    """An int stays an int; a bare symbol is its name (the wrapper binds it); else C text."""
    if isinstance(d, int):
        return d
    sp = sympy()
    e = sp.sympify(d)
    if e.is_Integer:
        return int(e)
    return e.name if e.is_Symbol else to_c(e)
