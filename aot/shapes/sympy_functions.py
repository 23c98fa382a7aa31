"""sympy functions with Python integer semantics (torch.utils._sympy.functions, reduced).

sympy's `floor(a/b)` loses the fact that both operands are integers and prints as `floor`;
`FloorDiv(a, b)` keeps Python's `a // b` and prints as such.
"""
from __future__ import annotations

import math

import sympy


class FloorDiv(sympy.Function):
    """Python's `a // b` on integers (rounds toward negative infinity)."""

    nargs = (2,)
    is_integer = True
    precedence = 50  # same as Mul for printing

    @classmethod
    def eval(cls, base, divisor):
        if divisor.is_zero:
            raise ZeroDivisionError("integer division by zero in a symbolic size")
        if base.is_Integer and divisor.is_Integer:
            return sympy.Integer(int(base) // int(divisor))
        if divisor == 1:
            return base
        if base.is_zero:
            return sympy.Integer(0)
        if isinstance(base, FloorDiv) and divisor.is_Integer and base.args[1].is_Integer:
            # (a // b) // c == a // (b * c) for positive integers b, c
            if base.args[1] > 0 and divisor > 0:
                return FloorDiv(base.args[0], base.args[1] * divisor)
        if divisor.is_Integer and base.is_Mul and base.args[0].is_Integer:
            coeff = int(base.args[0])
            if coeff % int(divisor) == 0:  # (6*s) // 3 == 2*s
                return (coeff // int(divisor)) * sympy.Mul(*base.args[1:])
        return None

    def _sympystr(self, printer):
        base, divisor = self.args
        return f"({printer.doprint(base)}//{printer.doprint(divisor)})"


class TruncToInt(sympy.Function):
    """Python's `int(x)` on a float (rounds toward zero)."""

    nargs = (1,)
    is_integer = True

    @classmethod
    def eval(cls, value):
        if value.is_Number and value.is_finite:
            return sympy.Integer(math.trunc(float(value)) if value.is_Float else int(value))
        if value.is_integer:
            return value
        return None
