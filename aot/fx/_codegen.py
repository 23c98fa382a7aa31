"""Python source generation for a `Graph` (torch.fx's `CodeGen`), numpy flavoured.

The generated `forward` is plain, readable Python: operators print as operators, numpy functions
as `numpy.<name>(...)`, submodule calls as `self.<path>(...)`. Values are dropped (`x = None`)
after their last use so that large intermediate arrays are freed as early as in eager code.
"""
from __future__ import annotations

import builtins
import importlib
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ir.records import field, record

from . import _pytree
from ._namespace import Namespace, sanitize, snake_case
from .node import Node

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["CodeGen", "PyTreeCodeGen", "PythonCode"]

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
           operator.lshift: "<<", operator.rshift: ">>", operator.and_: "&", operator.or_: "|",
           operator.xor: "^", operator.eq: "==", operator.ne: "!=", operator.lt: "<",
           operator.le: "<=", operator.gt: ">", operator.ge: ">="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}
# modules whose functions print fully qualified (`numpy.fft.fft`), like torch.* in torch.fx
_QUALIFIED_ROOTS = ("numpy", "math", "operator", "aot", "builtins")


@record
class PythonCode:
    """Generated source, the globals it needs, and per-global import statements (for to_folder)."""

    src: str
    globals: dict[str, Any]
    imports: dict[str, str | None] = field(default_factory=dict)
    _lineno_map: dict[int, int | None] | None = None


def _resolve_qualified(obj: Any) -> tuple[str, str] | None:
    """(module, qualname) through which `obj` can be imported back, or None."""
    if isinstance(obj, np.ufunc):
        return ("numpy", obj.__name__) if getattr(np, obj.__name__, None) is obj else None
    mod_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if mod_name is None or qualname is None or "<" in qualname:
        return None
    if mod_name == "_operator":
        mod_name = "operator"
    try:
        target: Any = importlib.import_module(mod_name)
        for part in qualname.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError):
        return None
    return (mod_name, qualname) if target is obj else None


def _format_slice(s: slice, fmt: Callable[[Any], str]) -> str:
    start = "" if s.start is None else fmt(s.start)
    stop = "" if s.stop is None else fmt(s.stop)
    return f"{start}:{stop}" if s.step is None else f"{start}:{stop}:{fmt(s.step)}"


class _Emitter:
    """Per-generation state: the name space for globals and the globals collected so far."""

    def __init__(self, namespace: Namespace) -> None:
        self.namespace = namespace
        self.globals: dict[str, Any] = {"inf": math.inf, "nan": math.nan, "numpy": np, "np": np}
        self.imports: dict[str, str | None] = {"inf": "from math import inf", "nan": "from math import nan",
                                                "numpy": "import numpy", "np": "import numpy as np"}
        self._by_id: dict[int, str] = {}

    def add_global(self, name_hint: str, obj: Any) -> str:
        """Name under which the generated code reaches `obj`, registering what it needs."""
        if id(obj) in self._by_id:
            return self._by_id[id(obj)]
        if getattr(builtins, getattr(obj, "__name__", ""), None) is obj:
            return obj.__name__
        resolved = _resolve_qualified(obj)
        if resolved is not None and resolved[0].split(".")[0] in _QUALIFIED_ROOTS:
            mod_name, qualname = resolved
            root = mod_name.split(".")[0]
            self.globals[root] = importlib.import_module(root)
            self.imports[root] = f"import {mod_name}" if root not in self.imports else self.imports[root]
            if mod_name != root and f"import {mod_name}" not in self.imports[root].splitlines():
                self.imports[root] += f"\nimport {mod_name}"
            name = f"{mod_name}.{qualname}"
        else:
            name = self.namespace.create_name(name_hint)
            self.globals[name] = obj
            self.imports[name] = (f"from {resolved[0]} import {resolved[1]} as {name}"
                                  if resolved and "." not in resolved[1] else None)
        self._by_id[id(obj)] = name
        return name

    def fmt(self, a: Any) -> str:
        """Python source for an argument value."""
        if isinstance(a, Node):
            return a.name
        if isinstance(a, tuple):
            items = [self.fmt(x) for x in a]
            return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"
        if isinstance(a, list):
            return "[" + ", ".join(self.fmt(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{self.fmt(k)}: {self.fmt(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({self.fmt(a.start)}, {self.fmt(a.stop)}, {self.fmt(a.step)})"
        if a is Ellipsis:
            return "..."
        if isinstance(a, (bool, int, str, type(None))):
            return repr(a)
        if isinstance(a, complex) and not (math.isfinite(a.real) and math.isfinite(a.imag)):
            return f"complex({a.real!r}, {a.imag!r})"  # repr's (-inf-infj) is no Python expression
        if isinstance(a, (float, complex)):
            return repr(a)  # inf/nan print as names bound in the globals
        if isinstance(a, np.generic) and type(a).__module__ == "numpy" and a.dtype.kind in "biufc":
            return f"numpy.{type(a).__name__}({a.item()!r})"
        if isinstance(a, np.dtype) and not a.fields:
            return f"numpy.dtype({a.str!r})"
        if isinstance(a, np.ndarray):
            return self.add_global("_array_constant", a)
        hint = getattr(a, "__name__", None) or type(a).__name__
        return self.add_global(snake_case(sanitize(hint)), a)

    def fmt_index(self, idx: Any) -> str:
        """`x[...]` subscript text: slices as `a:b:c`, tuples without parentheses."""
        if isinstance(idx, slice):
            return _format_slice(idx, self.fmt)
        if isinstance(idx, tuple) and not hasattr(idx, "_fields"):
            if not idx:
                return "()"
            parts = [self.fmt_index(i) if isinstance(i, slice) else self.fmt(i) for i in idx]
            return ", ".join(parts) + ("," if len(parts) == 1 else "")
        return self.fmt(idx)

    def call_args(self, args: tuple, kwargs: dict) -> str:
        parts = [self.fmt(a) for a in args] + [f"{k}={self.fmt(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)


def format_target(base: str, target: str) -> str:
    """`self.a.b`, using getattr() for path parts that are not identifiers (Sequential's `0`)."""
    out = base
    for part in target.split("."):
        out = f"{out}.{part}" if part.isidentifier() else f"getattr({out}, {part!r})"
    return out


class CodeGen:
    """Turns a node list into a `forward` function; subclasses change signature and I/O handling."""

    def __init__(self) -> None:
        self._body_transformer: Callable[[list[str]], list[str]] | None = None

    def gen_fn_def(self, free_vars: list[str], maybe_return_annotation: str) -> str:
        if not free_vars or free_vars[0] != "self":
            free_vars = ["self", *free_vars]
        return f"def forward({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args: Any, emitter: _Emitter) -> str:
        return f"return {emitter.fmt(output_args)}"

    def process_inputs(self, *args: Any) -> Any:
        return args

    def process_outputs(self, outputs: Any) -> Any:
        return outputs

    def additional_globals(self) -> list[tuple[str, Any]]:
        return []

    def _gen_python_code(self, nodes: Iterable[Node], root_module: str, namespace: Namespace,
                         *, verbose: bool = False) -> PythonCode:
        nodes = list(nodes)
        em = _Emitter(namespace)
        for name, value in self.additional_globals():
            em.globals[name] = value
            em.imports.setdefault(name, None)
        free_vars: list[str] = []
        body: list[str] = []
        lineno_map: dict[int, int | None] = {}
        to_delete = _values_to_delete_after(nodes)
        return_ann = ""
        for idx, node in enumerate(nodes):
            lineno_map[len(body) + 1] = idx
            if node.op == "placeholder":
                free_vars.append(self._placeholder_decl(node, em, body))
            elif node.op == "output":
                if node.type is not None:
                    return_ann = f" -> {em.fmt(node.type)}"
                body.append(self.generate_output(node.args[0], em))
                continue
            else:
                line = self._emit_node(node, root_module, em)
                if line is not None:
                    body.append(line)
            dead = to_delete.get(node)
            if dead and node.op != "placeholder":
                body[-1] += ";  " + " = ".join(n.name for n in dead) + " = None"
        if self._body_transformer is not None:
            body = self._body_transformer(body)
        fn_def = self.gen_fn_def(free_vars, return_ann)
        lines = body or ["pass"]
        src = "\n" + fn_def + "\n" + "\n".join("    " + ln for ln in lines) + "\n"
        # one leading newline: generated line k+2 is body line k
        lineno_map = {k + 2: v for k, v in lineno_map.items()}
        return PythonCode(src, em.globals, em.imports, lineno_map)

    def _placeholder_decl(self, node: Node, em: _Emitter, body: list[str]) -> str:
        raw = str(node.target)
        decl = raw
        if node.type is not None and not raw.startswith("*"):
            decl += f": {em.fmt(node.type)}"
        if node.args:  # PEP 8: `x=1`, but `x: int = 1`
            decl += f"{' = ' if ':' in decl else '='}{em.fmt(node.args[0])}"
        if node.name != raw.lstrip("*"):
            body.append(f"{node.name} = {raw.lstrip('*')}")
        return decl

    def _emit_node(self, node: Node, root: str, em: _Emitter) -> str | None:
        target = node.target
        if node.op == "get_attr":
            return f"{node.name} = {format_target(root, str(target))}"
        if node.op == "call_module":
            return f"{node.name} = {format_target(root, str(target))}({em.call_args(node.args, node.kwargs)})"
        if node.op == "call_method":
            recv, *rest = node.args
            recv_src = em.fmt(recv)
            if not isinstance(recv, Node) and not recv_src.isidentifier():
                recv_src = f"({recv_src})"
            return f"{node.name} = {recv_src}.{target}({em.call_args(tuple(rest), node.kwargs)})"
        if node.op != "call_function":
            raise ValueError(f"cannot generate code for node {node.format_node()}: unknown op {node.op!r}")
        return f"{node.name} = {self._call_function_expr(node, em)}"

    def _call_function_expr(self, node: Node, em: _Emitter) -> str:
        target, args = node.target, node.args
        if not node.kwargs:
            if target in _BINARY and len(args) == 2:
                return f"{em.fmt(args[0])} {_BINARY[target]} {em.fmt(args[1])}"
            if target in _UNARY and len(args) == 1:
                return f"{_UNARY[target]}{em.fmt(args[0])}"
            if target is operator.getitem and len(args) == 2:
                return f"{em.fmt(args[0])}[{em.fmt_index(args[1])}]"
            if (target is builtins.getattr and len(args) == 2 and isinstance(args[1], str)
                    and args[1].isidentifier() and isinstance(args[0], Node)):
                return f"{em.fmt(args[0])}.{args[1]}"
        if isinstance(getattr(target, "__self__", None), np.ufunc):  # np.add.reduce and friends
            fn = f"{em.add_global(target.__self__.__name__, target.__self__)}.{target.__name__}"
        else:
            fn = em.add_global(snake_case(sanitize(getattr(target, "__name__", "fn"))), target)
        return f"{fn}({em.call_args(args, node.kwargs)})"


def _values_to_delete_after(nodes: list[Node]) -> dict[Node, list[Node]]:
    """For each node, the values whose last use it is (so the code can drop them right after)."""
    seen: set[Node] = set()
    out: dict[Node, list[Node]] = {}
    for node in reversed(nodes):
        if node.op == "output":
            seen.update(node.all_input_nodes)
            continue
        for inp in node.all_input_nodes:
            if inp not in seen:
                seen.add(inp)
                out.setdefault(node, []).append(inp)
        if not node.users and node.op != "placeholder":
            out.setdefault(node, []).insert(0, node)
    return out


class PyTreeCodeGen(CodeGen):
    """Code generator for graphs whose inputs/outputs were pytree-flattened (concrete_args with PH)."""

    def __init__(self, orig_args: list[str], in_spec: _pytree.TreeSpec,
                 out_spec: _pytree.TreeSpec | None = None) -> None:
        super().__init__()
        self.orig_args = list(orig_args)
        self.in_spec = in_spec
        self.out_spec = out_spec

    def process_inputs(self, *args: Any) -> Any:
        return tuple(_pytree.tree_flatten_spec(tuple(args), self.in_spec))

    def process_outputs(self, outputs: Any) -> Any:
        if self.out_spec is None:
            return outputs
        return _pytree.tree_unflatten(list(outputs), self.out_spec)

    def additional_globals(self) -> list[tuple[str, Any]]:
        return [("fx_pytree", _pytree)]

    def gen_fn_def(self, free_vars: list[str], maybe_return_annotation: str) -> str:
        fn_def = super().gen_fn_def(self.orig_args, maybe_return_annotation)
        if free_vars:
            args = ", ".join(self.orig_args) + ("," if len(self.orig_args) == 1 else "")
            names = [v.split("=")[0].split(":")[0].strip() for v in free_vars]
            fn_def += (f"\n    {', '.join(names)}, = fx_pytree.tree_flatten_spec(({args}), "
                       "self._in_spec)")
        return fn_def

    def generate_output(self, output_args: Any, emitter: _Emitter) -> str:
        if self.out_spec is None:
            return super().generate_output(output_args, emitter)
        return f"return fx_pytree.tree_unflatten({emitter.fmt(output_args)}, self._out_spec)"
