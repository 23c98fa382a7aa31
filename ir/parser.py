"""Recursive-descent parser for the textual form printed by ir/printer.py (grammar: ir/GRAMMAR.md).

`parse_module(text)` rebuilds a Module. Every op name must be registered; result types are read from
the text and checked against the op's dtype/shape rules where it has them. Size symbols become
`ir.symbols.size_symbol` sympy symbols (sympy is imported on first use, not at import time).
"""
from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from .core import Block, Func, Module, Operation, Region, Value
from .dtypes import ALL_DTYPES, DType
from .lexer import ParseError, Token, tokenize
from .opdef import OpError, infer_result_types, lookup
from .symbols import SymbolInfo, dims_equal, norm_dim, size_symbol, sympy
from .types import IndexType, ScalarType, TensorType, Type

__all__ = ["ParseError", "parse_module", "register_size_function"]

_DTYPES = {d.name: d for d in ALL_DTYPES}
_NUMBERED = re.compile(r"[0-9]+\Z")
_ATTR_END = {",", "]", "}", ">"}
# sympy functions that str() of a size expression or guard may contain
_SYMPY_FUNCS = ("floor", "ceiling", "Mod", "Max", "Min", "Abs", "Eq", "Ne", "Lt", "Le", "Gt", "Ge",
                "And", "Or", "Not")
# functions defined outside sympy (e.g. aot.shapes' FloorDiv), by the name str() prints them with
_SIZE_FUNCTIONS: dict[str, Any] = {}
_RELATIONS = {">=": "Ge", "<=": "Le", ">": "Gt", "<": "Lt", "==": "Eq", "!=": "Ne"}


def register_size_function(name: str, fn: Any) -> None:
    """Let size expressions call `name(...)`; "FloorDiv" also builds `a // b` (default: floor(a/b)).

    A front end with its own sympy functions registers them so that its dims print and parse back
    to the same expressions; `ir` itself never imports the front end.
    """
    _SIZE_FUNCTIONS[name] = fn


def parse_module(text: str) -> Module:
    """Parse one `module @name { ... }`; raises ParseError (`line:col: expected ...`)."""
    return Parser(text).module()


class Parser:
    def __init__(self, text: str):
        self.lines = text.split("\n")
        self.toks = tokenize(text)
        self.i = 0
        self.symbols: dict[str, Any] = {}

    # --- token helpers ------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Token:
        t = self.peek()
        self.i += 1
        return t

    def at(self, text: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t.text == text and t.kind in ("PUNCT", "IDENT")

    def error(self, msg: str, tok: Token | None = None) -> ParseError:
        tok = tok or self.peek()
        line = self.lines[tok.line - 1] if tok.line <= len(self.lines) else None
        return ParseError(msg, tok.line, tok.col, line)

    def expect(self, text: str, what: str | None = None) -> Token:
        if not self.at(text):
            raise self.error(f"expected {what or repr(text)}, got {self.peek().describe()}")
        return self.next()

    def expect_kind(self, kind: str, what: str) -> Token:
        if self.peek().kind != kind:
            raise self.error(f"expected {what}, got {self.peek().describe()}")
        return self.next()

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def comma_list(self, item, close: str) -> list:
        out = []
        if self.accept(close):
            return out
        out.append(item())
        while self.accept(","):
            out.append(item())
        self.expect(close, f"',' or {close!r}")
        return out

    # --- module level -------------------------------------------------------------------------
    def module(self) -> Module:
        self.expect("module", "'module'")
        m = Module(self.symbol_name("module name"))
        self.expect("{")
        while not self.accept("}"):
            tok = self.peek()
            if self.accept("sym"):
                info = self.sym_decl()
                if info.name in m.symbols:
                    raise self.error(f"symbol {info.name} is declared twice", tok)
                m.declare_symbol(info)
            elif self.accept("guard"):
                m.guards.append(self.expr())
            elif self.accept("func"):
                f = self.func()
                if f.name in m.funcs:
                    raise self.error(f"function @{f.name} is defined twice", tok)
                m.add_func(f)
            else:
                raise self.error(f"expected 'sym', 'guard', 'func' or '}}', got {tok.describe()}")
        self.expect_kind("EOF", "end of input after the module")
        return m

    def symbol_name(self, what: str) -> str:
        t = self.expect_kind("SYMBOL", f"{what} (@name)")
        return json.loads(t.text[1:]) if t.text[1] == '"' else t.text[1:]

    def sym_decl(self) -> SymbolInfo:
        tok = self.expect_kind("IDENT", "symbol name")
        if tok.text in _DTYPES or tok.text in ("index", "inf", "nan", "true", "false", "none"):
            raise self.error(f"symbol name {tok.text!r} is reserved", tok)
        self.expect(":")
        self.expect("range", "'range'")
        self.expect("[")
        lower = self.int_literal()
        self.expect(",")
        if self.accept("inf"):
            upper = None
            self.expect(")", "')' after inf")
        else:
            upper = self.int_literal()
            self.expect("]")
        hint = self.int_literal() if self.accept("hint") else None
        self.symbols[tok.text] = size_symbol(tok.text)
        return SymbolInfo(tok.text, lower, upper, hint)

    def int_literal(self) -> int:
        neg = self.accept("-")
        v = int(self.expect_kind("INT", "an integer").text)
        return -v if neg else v

    # --- functions, blocks, ops ---------------------------------------------------------------
    def func(self) -> Func:
        name = self.symbol_name("function name")
        self.expect("(")
        args = self.comma_list(self.typed_value, ")")
        self.expect("->", "'->' and the result types")
        if self.accept("("):
            results = self.comma_list(self.type, ")")
        else:
            results = [self.type()]
        f = Func(name, [t for _, t, _ in args], results, [_hint(n) for n, _, _ in args])
        scope: dict[str, Value] = {}
        for (n, _, tok), a in zip(args, f.args):
            self.define(scope, n, a, tok)
        self.expect("{")
        while not self.accept("}"):
            self.op(f.body, scope)
        return f

    def typed_value(self) -> tuple[str, Type, Token]:
        tok = self.expect_kind("VALUE", "an argument name (%name)")
        if "#" in tok.text:
            raise self.error("an argument name cannot have a result index", tok)
        self.expect(":")
        return tok.text[1:], self.type(), tok

    def define(self, scope: dict[str, Value], name: str, v: Value, tok: Token) -> None:
        if name in scope:
            raise self.error(f"redefinition of %{name}", tok)
        scope[name] = v

    def use(self, scope: dict[str, Value]) -> Value:
        tok = self.expect_kind("VALUE", "an operand (%name)")
        try:
            return scope[tok.text[1:]]
        except KeyError:
            raise self.error(f"use of undefined value {tok.text}", tok) from None

    def result_names(self) -> list[tuple[str, Token]]:
        first = self.next()
        if self.accept(":"):  # `%r:2 = ...`: results are referred to as %r#0, %r#1
            n = self.int_literal()
            return [(f"{first.text[1:]}#{k}", first) for k in range(n)]
        names = [(first.text[1:], first)]
        while self.accept(","):
            tok = self.expect_kind("VALUE", "a result name (%name)")
            names.append((tok.text[1:], tok))
        return names

    def op(self, block: Block, scope: dict[str, Value]) -> None:
        results = self.result_names() if self.peek().kind == "VALUE" else []
        if results:
            self.expect("=", "'=' after the result names")
        start = self.peek()
        if start.kind == "STRING":
            op = self.generic_op(scope, json.loads(self.next().text), len(results))
        elif start.kind == "IDENT":
            op = self.short_op(scope, self.next().text, len(results))
        else:
            raise self.error(f"expected an op name (\"name\" or name), got {start.describe()}")
        if len(op.results) != len(results):
            raise self.error(f"{op.name} has {len(op.results)} result(s), {len(results)} name(s) given",
                             start)
        for (name, tok), r in zip(results, op.results):
            base = name.split("#")[0]
            r.name_hint = _hint(base)
            self.define(scope, name, r, tok)
        block.append(op)

    def generic_op(self, scope: dict[str, Value], name: str, n_results: int) -> Operation:
        name_tok = self.toks[self.i - 1]
        self.expect("(", "'(' and the operands")
        operands = self.comma_list(lambda: self.use(scope), ")")
        attrs = self.attr_dict()
        self.expect(":", "':' and the op's function type")
        type_tok = self.peek()
        self.expect("(", "'(' and the operand types")
        operand_types = self.comma_list(self.type, ")")
        self.expect("->", "'->' and the result types")
        result_types = self.comma_list(self.type, ")") if self.accept("(") else [self.type()]
        self.check_operand_types(name, operands, operand_types, type_tok)
        regions = []
        while self.at("{"):
            regions.append(self.region(scope))
        return self.build(name, operands, result_types, attrs, regions, name_tok)

    def short_op(self, scope: dict[str, Value], name: str, n_results: int) -> Operation:
        name_tok = self.toks[self.i - 1]
        operands = []
        if self.peek().kind == "VALUE":
            operands.append(self.use(scope))
            while self.accept(","):
                operands.append(self.use(scope))
        attrs = self.attr_dict()
        types = []
        type_tok = self.peek()
        if self.accept(":"):
            types = [self.type()]
            while self.accept(","):
                types.append(self.type())
        if n_results == 0:  # `return %a, %b : t1, t2`: the types are the operands'
            self.check_operand_types(name, operands, types, type_tok)
            return self.build(name, operands, [], attrs, [], name_tok)
        if len(types) != 1 or not operands:
            raise self.error(f"{name}: the short form takes operands and one type; use the generic form "
                             f"\"{name}\"(...) : (...) -> ...", name_tok)
        self.check_operand_types(name, operands, types * len(operands), type_tok)
        return self.build(name, operands, types, attrs, [], name_tok)

    def check_operand_types(self, name: str, operands: list[Value], types: list[Type], tok: Token) -> None:
        if len(types) != len(operands):
            raise self.error(f"{name}: {len(operands)} operand(s) but {len(types)} operand type(s)", tok)
        for k, (v, t) in enumerate(zip(operands, types)):
            if v.type != t:
                raise self.error(f"{name}: operand #{k} has type {v.type}, the text says {t}", tok)

    def build(self, name: str, operands: list[Value], result_types: list[Type], attrs: dict,
              regions: list[Region], tok: Token) -> Operation:
        loc = None
        if self.accept("loc"):
            self.expect("(")
            loc = json.loads(self.expect_kind("STRING", "a location string").text)
            self.expect(")")
        self.check_against_registry(name, operands, result_types, attrs, regions, tok)
        return Operation(name, operands, result_types, attrs, regions, loc=loc)

    def check_against_registry(self, name, operands, result_types, attrs, regions, tok) -> None:
        try:
            d = lookup(name)
            d.check_arity(len(operands))
            full = d.full_attrs(attrs)
            if d.infer is None and (d.dtype_rule is None or d.shape_rule is None):
                return  # nothing to check the written types against
            inferred = infer_result_types(name, [v.type for v in operands], full, regions)
        except OpError as e:
            raise self.error(str(e), tok) from None
        except NotImplementedError:
            return
        if not d.has("terminator") and not _types_match(inferred, result_types):
            raise self.error(f"{name}: result types ({', '.join(map(str, result_types))}) differ from the "
                             f"inferred ({', '.join(map(str, inferred))})", tok)

    def region(self, scope: dict[str, Value]) -> Region:
        self.expect("{")
        region = Region()
        inner = dict(scope)  # values defined in the region are not visible after it
        while not self.accept("}"):
            label = self.expect_kind("BLOCK", "a block label (^bb0) or '}'")
            self.expect("(", "'(' and the block arguments")
            args = self.comma_list(self.typed_value, ")")
            self.expect(":", "':' after the block header")
            block = region.add_block(Block([t for _, t, _ in args], [_hint(n) for n, _, _ in args]))
            for (n, _, tok), a in zip(args, block.args):
                self.define(inner, n, a, tok)
            while not (self.at("}") or self.peek().kind == "BLOCK"):
                if self.peek().kind == "EOF":
                    raise self.error(f"expected '}}' closing the region opened at {label.line}:{label.col}")
                self.op(block, inner)
        if not region.blocks:
            raise self.error("a region needs at least one block")
        return region

    # --- types --------------------------------------------------------------------------------
    def type(self) -> Type:
        tok = self.peek()
        if self.accept("index"):
            return IndexType()
        if tok.kind != "IDENT" or tok.text not in _DTYPES:
            raise self.error(f"expected a type (one of {', '.join(_DTYPES)}, index), got {tok.describe()}")
        self.i += 1
        dtype = _DTYPES[tok.text]
        if not self.accept("["):
            return ScalarType(dtype)
        dims = self.comma_list(self.dim, "]")
        try:
            return TensorType(dtype, tuple(dims))
        except (TypeError, ValueError) as e:
            raise self.error(str(e), tok) from None

    def dim(self) -> Any:
        tok = self.peek()
        d = self.expr()
        if not isinstance(d, sympy().Expr) or d.is_Float:
            raise self.error(f"expected a dimension (integer or size expression), got {d}", tok)
        return norm_dim(d)

    # --- attributes ---------------------------------------------------------------------------
    def attr_dict(self) -> dict[str, Any]:
        attrs: dict[str, Any] = {}
        if not self.accept("{"):
            return attrs
        if self.accept("}"):
            return attrs
        while True:
            tok = self.peek()
            if tok.kind not in ("IDENT", "STRING"):
                raise self.error(f"expected an attribute name, got {tok.describe()}")
            self.i += 1
            key = json.loads(tok.text) if tok.kind == "STRING" else tok.text
            if key in attrs:
                raise self.error(f"attribute {key!r} given twice", tok)
            self.expect("=", f"'=' after attribute {key!r}")
            attrs[key] = self.attr()
            if self.accept("}"):
                return attrs
            self.expect(",", "',' or '}' in the attribute dictionary")

    def attr(self) -> Any:
        tok = self.peek()
        if self.float_ahead():
            return self.float_literal()
        if tok.kind == "STRING":
            self.i += 1
            return json.loads(tok.text)
        if tok.kind == "IDENT" and tok.text in _KEYWORD_ATTRS:
            self.i += 1
            return _KEYWORD_ATTRS[tok.text]
        if tok.kind == "IDENT" and tok.text in _DTYPES:
            self.i += 1
            return _DTYPES[tok.text]
        if self.accept("["):
            return tuple(self.comma_list(self.attr, "]"))
        if self.at("dense") and self.at("<", 1):
            return self.dense()
        if self.at("complex") and self.at("(", 1):
            self.i += 2
            re_, _, im = self.float_literal(), self.expect(","), self.float_literal()
            self.expect(")")
            return complex(re_, im)
        if tok.kind in ("INT", "IDENT") or tok.text in ("-", "("):
            v = self.expr()
            return int(v) if getattr(v, "is_Integer", False) else v
        raise self.error(f"expected an attribute value, got {tok.describe()}")

    def float_ahead(self) -> bool:
        k = 1 if self.at("-") else 0
        t = self.peek(k)
        return t.kind == "FLOAT" or (t.kind == "IDENT" and t.text in ("inf", "nan"))

    def float_literal(self) -> float:
        return float(self.number_text())

    def dense(self) -> np.ndarray | np.generic:
        """`dense<f64[2]: [1.0, 2.0]>`, or `dense<f32: 1.5>` for a numpy scalar."""
        self.i += 2
        tok = self.expect_kind("IDENT", "an element type")
        if tok.text not in _DTYPES:
            raise self.error(f"expected an element type, got {tok.describe()}", tok)
        dtype = _DTYPES[tok.text]
        shape = tuple(self.comma_list(self.int_literal, "]")) if self.accept("[") else None
        self.expect(":")
        flat: list[Any] = []
        self.dense_elements(shape or (), 0, dtype, flat)
        self.expect(">", "'>' closing dense<...>")
        arr = _make_array(flat, dtype)
        return arr[0] if shape is None else arr.reshape(shape)

    def dense_elements(self, shape: tuple, depth: int, dtype: DType, out: list) -> None:
        if depth == len(shape):
            out.append(self.dense_element(dtype))
            return
        self.expect("[", f"'[' (nesting level {depth} of {len(shape)})")
        for k in range(shape[depth]):
            if k:
                self.expect(",", f"',' ({shape[depth]} elements at nesting level {depth})")
            self.dense_elements(shape, depth + 1, dtype, out)
        self.expect("]", f"']' after {shape[depth]} elements at nesting level {depth}")

    def dense_element(self, dtype: DType) -> Any:
        if dtype.is_bool:
            if self.accept("true"):
                return True
            self.expect("false", "true or false")
            return False
        if dtype.is_complex:
            self.expect("(", "'(' starting a complex element (re, im)")
            re_ = self.number_text()
            self.expect(",")
            im = self.number_text()
            self.expect(")")
            return re_, im
        return self.number_text(integer=dtype.is_int)

    def number_text(self, integer: bool = False) -> str:
        sign = "-" if self.accept("-") else ""
        tok = self.next()
        ok = tok.kind == "INT" or (not integer and (tok.kind == "FLOAT" or tok.text in ("inf", "nan")))
        if not ok:
            raise self.error(f"expected {'an integer' if integer else 'a number'}, got {tok.describe()}", tok)
        return sign + tok.text

    # --- size expressions and guards ------------------------------------------------------------
    def expr(self) -> Any:
        """or_expr: sympy syntax as str() prints it (`2*s0 + 1`, `(s0 >= 2) & (s1 < 8)`, `Mod(s0,2)`)."""
        v = self.and_expr()
        while self.accept("|"):
            v = sympy().Or(v, self.and_expr())
        return v

    def and_expr(self) -> Any:
        v = self.not_expr()
        while self.accept("&"):
            v = sympy().And(v, self.not_expr())
        return v

    def not_expr(self) -> Any:
        if self.accept("~"):
            return sympy().Not(self.not_expr())
        return self.relation()

    def relation(self) -> Any:
        v = self.arith()
        t = self.peek()
        if t.kind == "PUNCT" and t.text in _RELATIONS:
            self.i += 1
            rhs = self.arith()
            # unevaluated: `s0 >= 1` is true for a positive symbol, but the guard should stay as written
            return getattr(sympy(), _RELATIONS[t.text])(v, rhs, evaluate=False)
        return v

    def arith(self) -> Any:
        v = self.term()
        while self.at("+") or self.at("-"):
            op = self.next().text
            rhs = self.term()
            v = v + rhs if op == "+" else v - rhs
        return v

    def term(self) -> Any:
        v = self.unary()
        while self.at("*") or self.at("/") or self.at("//"):
            op = self.next().text
            rhs = self.unary()
            if op == "//":
                floordiv = _SIZE_FUNCTIONS.get("FloorDiv")
                v = floordiv(v, rhs) if floordiv is not None else sympy().floor(v / rhs)
            else:
                v = v * rhs if op == "*" else v / rhs
        return v

    def unary(self) -> Any:
        if self.accept("-"):
            return -self.unary()
        base = self.atom()
        if self.accept("**"):
            return base ** self.unary()
        return base

    def atom(self) -> Any:
        sp = sympy()
        tok = self.next()
        if tok.kind == "INT":
            return sp.Integer(int(tok.text))
        if tok.kind == "FLOAT":
            return sp.Float(tok.text)
        if tok.text == "(" and tok.kind == "PUNCT":
            v = self.expr()
            self.expect(")")
            return v
        if tok.kind != "IDENT":
            raise self.error(f"expected a size expression, got {tok.describe()}", tok)
        if self.at("("):
            fn = _SIZE_FUNCTIONS.get(tok.text)
            if fn is None and tok.text in _SYMPY_FUNCS:
                fn = getattr(sp, tok.text)
            if fn is None:
                known = ", ".join([*_SYMPY_FUNCS, *_SIZE_FUNCTIONS])
                raise self.error(f"unknown function {tok.text!r} in expression; expected one of {known}", tok)
            self.i += 1
            return fn(*self.comma_list(self.expr, ")"))
        constants = {"True": sp.true, "False": sp.false, "oo": sp.oo}
        if tok.text in constants:
            return constants[tok.text]
        if tok.text in _DTYPES or tok.text in _KEYWORD_ATTRS:
            raise self.error(f"expected a size expression, got the keyword {tok.text!r}", tok)
        if tok.text not in self.symbols:
            self.symbols[tok.text] = size_symbol(tok.text)
        return self.symbols[tok.text]


_KEYWORD_ATTRS: dict[str, Any] = {"true": True, "false": False, "none": None}


def _hint(name: str) -> str | None:
    return None if _NUMBERED.match(name) else name


def _types_match(a: list[Type], b: list[Type]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if type(x) is not type(y) or getattr(x, "dtype", None) != getattr(y, "dtype", None):
            return False
        if isinstance(x, TensorType):
            if x.rank != y.rank or not all(dims_equal(p, q) for p, q in zip(x.shape, y.shape)):
                return False
    return True


def _make_array(flat: list, dtype: DType) -> np.ndarray:
    npdt = dtype.numpy
    if dtype.is_complex:
        real = dtype.real_dtype.numpy
        out = np.empty(len(flat), npdt)
        out.real = np.array([r for r, _ in flat], dtype=real) if flat else np.empty(0, real)
        out.imag = np.array([i for _, i in flat], dtype=real) if flat else np.empty(0, real)
        return out
    if dtype.is_int:
        return np.array([int(x) for x in flat], dtype=npdt)
    return np.array(flat, dtype=npdt) if flat else np.empty(0, npdt)
