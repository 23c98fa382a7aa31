"""Size expressions as i64 arithmetic: the LLVM emitter of ir.size_render.

The graph entry's `emit_sym_expr` (codegen/graph_base.py) renders symbolic dims through it; it
computes exactly ir.size_render.INTEGER_OPS (what ir.symbols.int_emittable accepts), with
Python's floor division and modulo.
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir as L

from ir.size_render import SizeEmitter, SizeRenderError, render

from .loops import i64
from .types import I64


class LlvmSizes(SizeEmitter):
    """i64 values in `builder`'s function. `symbols`: symbol name -> its i64 value; `on_zero(cond)`
    leaves the function with the division-by-zero status when the i1 `cond` holds."""

    def __init__(self, builder: L.IRBuilder, symbols: dict, on_zero: Callable, where: str = "the function"):
        self.b, self.symbols, self.on_zero, self.where = builder, symbols, on_zero, where

    def unsupported(self, expr) -> SizeRenderError:
        return SizeRenderError(f"cannot emit size expression {expr} ({type(expr).__name__}); the front end "
                               "specialises what ir.symbols.int_emittable rejects")

    def integer(self, v):
        return i64(v)

    def symbol(self, name):
        try:
            return self.symbols[name]
        except KeyError:
            raise ValueError(f"size symbol {name} is not a dim of any input of {self.where}") from None

    def add(self, a, b):
        return self.b.add(a, b)

    def sub(self, a, b):
        return self.b.sub(a, b)

    def neg(self, a):
        return self.b.sub(i64(0), a)

    def mul(self, a, b):
        return self.b.mul(a, b)

    def floordiv(self, a, b):
        return floor_divide(self.b, a, b, self.on_zero)[0]

    def mod(self, a, b):
        return floor_divide(self.b, a, b, self.on_zero)[1]

    def max(self, *args):
        return self._fold(">", args)

    def min(self, *args):
        return self._fold("<", args)

    def _fold(self, op, args):
        out, *rest = args
        for a in rest:
            out = self.b.select(self.b.icmp_signed(op, out, a), out, a)
        return out


def emit_size(builder: L.IRBuilder, expr, symbols: dict, on_zero: Callable,
              where: str = "the function") -> L.Value:
    """The i64 value of the sympy size expression `expr` (see LlvmSizes)."""
    return render(expr, LlvmSizes(builder, symbols, on_zero, where))


def floor_divide(b: L.IRBuilder, n: L.Value, d: L.Value, on_zero: Callable) -> tuple[L.Value, L.Value]:
    """Python's (n // d, n % d) on i64: the remainder takes the divisor's sign. A zero divisor
    calls `on_zero(d == 0)` (sdiv would trap: SIGFPE), as Python raises ZeroDivisionError."""
    on_zero(b.icmp_signed("==", d, i64(0)))
    minus_one = b.icmp_signed("==", d, i64(-1))  # INT64_MIN // -1 traps too; n // -1 is -n
    safe = b.select(minus_one, i64(1), d)
    q, r = b.sdiv(n, safe), b.srem(n, safe)
    fix = b.and_(b.icmp_signed("!=", r, i64(0)), b.icmp_signed("<", b.xor(r, safe), i64(0)))
    q, r = b.sub(q, b.zext(fix, I64)), b.select(fix, b.add(r, safe), r)
    return b.select(minus_one, b.sub(i64(0), n), q), b.select(minus_one, i64(0), r)
