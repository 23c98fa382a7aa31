"""Textual form of the dialect (see ir/GRAMMAR.md): `print_module`, `print_func`, `print_op`.

Every op has a generic form `%r = "name"(%a) {attrs} : (types) -> types`; ops whose result type the
registry re-infers from identical operand types get the short form `%r = name %a, %b : type`. The
printer emits the short form only when the parser would rebuild the same op from it.
"""
from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from .core import Block, Func, Module, Operation, Value
from .dtypes import DType, from_numpy
from .opdef import OPDEFS, OpError, infer_result_types
from .symbols import SymbolInfo, dim_str
from .types import Type

INDENT = "  "
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.$]*\Z")
_NAME_BAD_CHARS = re.compile(r"[^A-Za-z0-9_.$]")


# --- names ---------------------------------------------------------------------------------------

class Namer:
    """Unique SSA names in one function: name hints (torch.fx `_Namespace`-style `x`, `x_1`) or numbers."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        self._used: set[str] = set()
        self._next = 0

    def define(self, v: Value) -> str:
        hint = v.name_hint
        if hint:
            base = _NAME_BAD_CHARS.sub("_", hint)
            if base[0].isdigit():  # bare numbers are reserved for unnamed values
                base = "v" + base
            name, k = base, 0
            while name in self._used:
                k += 1
                name = f"{base}_{k}"
        else:
            name = str(self._next)
            self._next += 1
            while name in self._used:  # cannot happen: hints never start with a digit
                name = str(self._next)
                self._next += 1
        self._used.add(name)
        self._names[id(v)] = name
        return "%" + name

    def is_defined(self, v: Value) -> bool:
        return id(v) in self._names

    def ref(self, v: Value) -> str:
        try:
            return "%" + self._names[id(v)]
        except KeyError:
            raise ValueError(f"value {v!r} is used before it is defined (or defined outside this function)") \
                from None


def quoted(s: str) -> str:
    """`s` as a string literal of the text form: json.dumps's output (importing json costs a first
    compile ~1.5 ms, and op names, symbols and most strings are plain ASCII, which it leaves as is)."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    import json

    return json.dumps(s)


def symbol_ref(name: str, sigil: str = "@") -> str:
    return sigil + (name if _IDENT_RE.match(name) else quoted(name))


# --- types and attributes ------------------------------------------------------------------------

def print_type(t: Type) -> str:
    return str(t)


def print_types(ts: list[Type]) -> str:
    return ", ".join(print_type(t) for t in ts)


def print_float(x: float) -> str:
    """repr round-trips exactly; inf, -inf, nan and -0.0 included (and the sign of a nan)."""
    x = float(x)
    return "-nan" if x != x and math.copysign(1.0, x) < 0 else repr(x)


def _is_sympy(v: Any) -> bool:
    return hasattr(v, "free_symbols") and hasattr(v, "func")


def print_attr(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return print_float(v)
    if isinstance(v, complex):
        return f"complex({print_float(v.real)}, {print_float(v.imag)})"
    if isinstance(v, str):
        return quoted(v)
    if isinstance(v, DType):
        return v.name
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(print_attr(x) for x in v) + "]"
    if isinstance(v, (np.ndarray, np.generic)):
        return print_dense(v)
    if _is_sympy(v):
        if getattr(v, "is_Integer", False):
            return str(int(v))
        return dim_str(v)
    raise TypeError(f"cannot print attribute value {v!r} of type {type(v).__name__}")


def _element(x: Any, dtype: DType) -> str:
    if dtype.is_bool:
        return "true" if x else "false"
    if dtype.is_int:
        return str(int(x))
    if dtype.is_complex:
        return f"({_real(x.real)}, {_real(x.imag)})"
    return _real(x)


def _real(x: Any) -> str:
    # str of a numpy float is the shortest text that parses back to the same value of its width
    if np.isnan(x):
        return "-nan" if np.signbit(x) else "nan"
    s = str(x)
    return s if any(c in s for c in ".ena") else s + ".0"


def print_dense(a: np.ndarray | np.generic) -> str:
    """`dense<f64[2,2]: [[1.0, 2.0], [3.0, 4.0]]>`; a numpy scalar prints as `dense<f32: 1.5>`."""
    dt = from_numpy(a.dtype)
    if isinstance(a, np.generic):
        return f"dense<{dt.name}: {_element(a, dt)}>"

    def rec(x: np.ndarray) -> str:
        if x.ndim == 0:
            return _element(x[()], dt)
        return "[" + ", ".join(rec(x[i]) for i in range(x.shape[0])) + "]"

    return f"dense<{dt.name}[{','.join(str(d) for d in a.shape)}]: {rec(a)}>"


def print_attrs(attrs: dict[str, Any], op_name: str = "") -> str:
    if not attrs:
        return ""
    items = []
    for k, v in attrs.items():
        try:
            items.append(f"{k if _IDENT_RE.match(k) else quoted(k)} = {print_attr(v)}")
        except TypeError as e:
            raise TypeError(f"{op_name}: attribute {k!r}: {e}") from None
    return " {" + ", ".join(items) + "}"


def print_symbol(info: SymbolInfo) -> str:
    hi = "inf)" if info.upper is None else f"{info.upper}]"
    hint = "" if info.hint is None else f" hint {info.hint}"
    return f"sym {info.name} : range [{info.lower}, {hi}{hint}"


# --- ops -----------------------------------------------------------------------------------------

def _short_form_ok(op: Operation) -> bool:
    """Short form `%r = name %a, %b {attrs} : T` iff the parser re-infers exactly T from it."""
    d = OPDEFS.get(op.name)
    if d is None or op.regions or len(op.results) != 1 or not op.operands:
        return False
    if not _IDENT_RE.match(op.name):
        return False
    t = op.results[0].type
    if any(v.type != t for v in op.operands):
        return False
    try:
        return infer_result_types(op.name, [t] * len(op.operands), d.full_attrs(op.attrs)) == [t]
    except (OpError, NotImplementedError, TypeError, ValueError):
        return False


def _is_short_terminator(op: Operation) -> bool:
    d = OPDEFS.get(op.name)
    return (d is not None and d.has("terminator") and not op.results and not op.attrs and not op.regions
            and _IDENT_RE.match(op.name) is not None)


def _loc(op: Operation) -> str:
    return f" loc({quoted(op.loc)})" if op.loc is not None else ""


def _print_op_lines(op: Operation, namer: Namer, indent: str, out: list[str], generic: bool) -> None:
    operands = ", ".join(namer.ref(v) for v in op.operands)
    if not generic and _is_short_terminator(op):
        types = f" : {print_types([v.type for v in op.operands])}" if op.operands else ""
        sep = " " if operands else ""
        out.append(f"{indent}{op.name}{sep}{operands}{types}{_loc(op)}")
        return
    short = not generic and _short_form_ok(op)
    results = ", ".join(namer.define(r) for r in op.results)
    lhs = f"{results} = " if results else ""
    if short:
        out.append(f"{indent}{lhs}{op.name} {operands}{print_attrs(op.attrs, op.name)} : "
                   f"{print_type(op.results[0].type)}{_loc(op)}")
        return
    rtypes = op.result_types
    rt = print_type(rtypes[0]) if len(rtypes) == 1 else f"({print_types(rtypes)})"
    head = (f"{indent}{lhs}{quoted(op.name)}({operands}){print_attrs(op.attrs, op.name)} : "
            f"({print_types([v.type for v in op.operands])}) -> {rt}")
    if not op.regions:
        out.append(head + _loc(op))
        return
    for i, region in enumerate(op.regions):
        out.append((head if i == 0 else f"{indent}}}") + " {")
        for k, block in enumerate(region.blocks):
            _print_block(block, f"^bb{k}", namer, indent, out, generic)
    out.append(f"{indent}}}{_loc(op)}")


def _print_block(block: Block, label: str, namer: Namer, indent: str, out: list[str], generic: bool) -> None:
    args = ", ".join(f"{namer.define(a)}: {print_type(a.type)}" for a in block.args)
    out.append(f"{indent}{label}({args}):")
    for op in block.ops:
        _print_op_lines(op, namer, indent + INDENT, out, generic)


def print_op(op: Operation, namer: Namer | None = None, indent: str = "", generic: bool = False) -> str:
    """One op (with its regions). Without a shared `namer`, operands defined elsewhere are numbered
    here in order of appearance, which is enough for messages."""
    if namer is None:
        namer = Namer()
        for v in op.operands:
            if not namer.is_defined(v):
                namer.define(v)
    out: list[str] = []
    _print_op_lines(op, namer, indent, out, generic)
    return "\n".join(out)


def print_func(f: Func, indent: str = "", generic: bool = False) -> str:
    namer = Namer()
    args = ", ".join(f"{namer.define(a)}: {print_type(a.type)}" for a in f.args)
    out = [f"{indent}func {symbol_ref(f.name)}({args}) -> ({print_types(f.result_types)}) {{"]
    for op in f.body.ops:
        _print_op_lines(op, namer, indent + INDENT, out, generic)
    out.append(f"{indent}}}")
    return "\n".join(out)


def print_module(m: Module, generic: bool = False) -> str:
    """The module's text; `generic=True` prints every op in the generic form (as mlir-opt
    --mlir-print-op-generic does)."""
    out = [f"module {symbol_ref(m.name)} {{"]
    for info in m.symbols.values():
        out.append(INDENT + print_symbol(info))
    for g in m.guards:
        out.append(f"{INDENT}guard {g}")
    for f in m.funcs.values():
        if len(out) > 1:
            out.append("")
        out.append(print_func(f, INDENT, generic))
    out.append("}")
    return "\n".join(out) + "\n"
