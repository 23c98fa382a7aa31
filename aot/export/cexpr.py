"""Size expressions and guards (sympy) as C expressions over int64_t symbol variables.

The helpers `aot_floordiv`, `aot_mod`, `aot_max`, `aot_min` are defined by the generated wrapper
(runtime/abi_wrapper.py) with Python's (= sympy's) semantics for negative operands.
"""

from __future__ import annotations

from ir.symbols import sympy

_RELATIONS = {
    "Equality": "==",
    "Unequality": "!=",
    "StrictLessThan": "<",
    "LessThan": "<=",
    "StrictGreaterThan": ">",
    "GreaterThan": ">=",
}


def to_c(expr) -> str:
    """C text for an integer size expression or a boolean guard; ValueError when not expressible."""
    sp = sympy()
    e = sp.sympify(expr)
    kind = type(e).__name__
    if e is sp.true or e is sp.false:
        return "1" if e is sp.true else "0"
    if e.is_Integer:
        return f"INT64_C({int(e)})"
    if e.is_Symbol:
        return e.name
    if kind in _RELATIONS:
        return f"({to_c(e.lhs)} {_RELATIONS[kind]} {to_c(e.rhs)})"
    if isinstance(e, sp.And):
        return "(" + " && ".join(to_c(a) for a in e.args) + ")"
    if isinstance(e, sp.Or):
        return "(" + " || ".join(to_c(a) for a in e.args) + ")"
    if isinstance(e, sp.Not):
        return f"(!{to_c(e.args[0])})"
    if isinstance(e, sp.Add):
        return "(" + " + ".join(to_c(a) for a in e.args) + ")"
    if isinstance(e, sp.Mul):
        num, den = e.as_numer_denom()
        if den != 1:
            raise ValueError(f"size expression {e} is not an integer expression (it divides by {den})")
        return "(" + " * ".join(to_c(a) for a in e.args) + ")"
    if isinstance(e, sp.Pow) and e.exp.is_Integer and int(e.exp) > 0:
        return "(" + " * ".join([to_c(e.base)] * int(e.exp)) + ")"
    if isinstance(e, (sp.Max, sp.Min)):
        fn = "aot_max" if isinstance(e, sp.Max) else "aot_min"
        out = to_c(e.args[0])
        for a in e.args[1:]:
            out = f"{fn}({out}, {to_c(a)})"
        return out
    if isinstance(e, sp.Mod) or kind in ("PythonMod", "Mod"):
        return f"aot_mod({to_c(e.args[0])}, {to_c(e.args[1])})"
    if kind == "FloorDiv":
        return f"aot_floordiv({to_c(e.args[0])}, {to_c(e.args[1])})"
    if kind == "CeilDiv":
        return f"(-aot_floordiv(-{to_c(e.args[0])}, {to_c(e.args[1])}))"
    if isinstance(e, (sp.floor, sp.ceiling)):
        num, den = e.args[0].as_numer_denom()
        q = f"aot_floordiv({to_c(num)}, {to_c(den)})"
        if isinstance(e, sp.ceiling):
            q = f"(-aot_floordiv(-{to_c(num)}, {to_c(den)}))"
        return q
    raise ValueError(f"cannot express {e} ({kind}) in C")


def dim_to_c(d) -> int | str:
    """An int stays an int; a bare symbol is its name (the wrapper binds it); else C text."""
    if isinstance(d, int):
        return d
    sp = sympy()
    e = sp.sympify(d)
    if e.is_Integer:
        return int(e)
    return e.name if e.is_Symbol else to_c(e)
