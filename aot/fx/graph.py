"""`Graph`: an ordered, editable list of `Node`s plus the code generator that turns it into Python."""
from __future__ import annotations

import copy
import inspect
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ir.logger import get_logger

from ._codegen import CodeGen, PythonCode
from ._namespace import Namespace, sanitize, snake_case
from .node import Argument, Node, Target, _format_arg, map_aggregate, map_arg

if TYPE_CHECKING:
    from ..nn import Module

__all__ = ["Graph", "PythonCode", "CodeGen", "map_arg"]

logger = get_logger(__name__)


class _NodeList:
    """Live view of a graph's nodes; iteration tolerates erasing or inserting the current node."""

    def __init__(self, graph: Graph, direction: str = "_next") -> None:
        self._graph = graph
        self._direction = direction

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        cur = getattr(root, self._direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            # an erased node keeps its old links, so we can step on from it
            cur = getattr(cur, self._direction)

    def __reversed__(self) -> _NodeList:
        return _NodeList(self._graph, "_prev" if self._direction == "_next" else "_next")

    def __repr__(self) -> str:
        return f"[{', '.join(n.name for n in self)}]"


class _InsertPoint:
    """Sets the graph's insertion point now; `with` restores the previous one on exit."""

    def __init__(self, graph: Graph, new_insert: Callable[[Node], None]) -> None:
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        self.graph._insert = self.orig_insert


class _OnGenerateCode:
    """Installs a body transformer now; `with` restores the previous one on exit."""

    def __init__(self, graph: Graph, make_transformer: Callable) -> None:
        self.codegen = graph._codegen
        self.old = self.codegen._body_transformer
        self.codegen._body_transformer = make_transformer(self.old)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        self.codegen._body_transformer = self.old


def _target_to_name(target: Target) -> str:
    if isinstance(target, str):
        return snake_case(target.lstrip("*").replace(".", "_"))
    owner = getattr(target, "__self__", None)
    if isinstance(owner, np.ufunc):
        return f"{owner.__name__}_{target.__name__}"
    return snake_case(sanitize(getattr(target, "__name__", type(target).__name__)))


class Graph:
    """A doubly linked list of nodes (a sentinel root closes the ring) and its code generator."""

    def __init__(self, owning_module: Module | None = None, tracer_cls: type | None = None,
                 tracer_extras: dict | None = None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._namespace = Namespace()
        self._len = 0
        self._insert: Callable[[Node], None] = self._root.prepend
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()
        self._co_fields: dict[str, Any] = {}

    @property
    def owning_module(self) -> Module | None:
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod: Module | None) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    def output_node(self) -> Node:
        """The graph's `output` node (a method, as in torch.fx)."""
        out = self._root._prev
        if out.op != "output":
            raise RuntimeError("graph has no output node (its last node is not 'output')")
        return out

    # --- building ------------------------------------------------------------------------
    def create_node(self, op: str, target: Target, args: tuple | None = None,
                    kwargs: dict | None = None, name: str | None = None,
                    type_expr: Any | None = None) -> Node:
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise TypeError(f"create_node({op!r}): args must be a tuple and kwargs a dict")
        name = self._namespace.create_name(name or _target_to_name(target))
        node = Node(self, name, op, target, args, kwargs, type_expr)
        self._insert(node)
        self._len += 1
        return node

    def placeholder(self, name: str, type_expr: Any | None = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any | None = None) -> Node:
        self._warn_if_missing(qualified_name, "get_attr")
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any | None = None) -> Node:
        self._warn_if_missing(module_name, "call_module")
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None, kwargs: dict | None = None,
                    type_expr: Any | None = None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable[..., Any], args: tuple | None = None,
                      kwargs: dict | None = None, type_expr: Any | None = None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any | None = None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def _warn_if_missing(self, qualname: str, op: str) -> None:
        root = self._owning_module
        if root is not None and _fetch_path(root, qualname) is _MISSING:
            warnings.warn(f"{op} target {qualname!r} does not exist on the owning module "
                          f"{type(root).__name__}; add it before running the graph", stacklevel=3)

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        if n is None:
            return self.inserting_after(self._root)
        self._check_owned(n)
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        if n is None:
            return self.inserting_before(self._root)
        self._check_owned(n)
        return _InsertPoint(self, n.append)

    def _check_owned(self, n: Node) -> None:
        if n.graph is not self:
            raise ValueError(f"node {n.name!r} does not belong to this graph")

    # --- editing -------------------------------------------------------------------------
    def erase_node(self, to_erase: Node) -> None:
        self._check_owned(to_erase)
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {list(to_erase.users)}!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        # drop its uses so that its inputs' `users` stay exact
        to_erase._update_args_kwargs(map_arg(to_erase.args, lambda n: None),
                                     map_arg(to_erase.kwargs, lambda n: None))

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase nodes whose values are unused and that have no side effect; True if any went."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and not node.users:
                self.erase_node(node)
                changed = True
        return changed

    def find_nodes(self, *, op: str, target: Target | None = None, sort: bool = True) -> list[Node]:
        """Nodes with this op (and target, when given); always in graph order here."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x) -> Node:
        """Copy `node` (from any graph) into this one, mapping its input nodes with `arg_transform`."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g: Graph, val_map: dict[Node, Node], return_output_node: bool = False) -> Any:
        """Append all of `g` except its output; returns the output value mapped into this graph."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict) -> Graph:
        g = Graph(tracer_cls=self._tracer_cls)
        copied = g.graph_copy(self, {}, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if copied is not None:
            out_val, old_out = copied
            new_out = g.output(out_val, type_expr=old_out.type)
            new_out.meta = copy.copy(old_out.meta)
        return g

    def __getstate__(self) -> dict[str, Any]:
        """Nodes as flat records (a linked list would pickle recursively, one level per node)."""
        records = [(n.name, n.op, n.target, map_arg(n.args, _NodeRef.of), map_arg(n.kwargs, _NodeRef.of),
                    n.type, n.meta) for n in self.nodes]
        return {"nodes": records, "codegen": self._codegen, "tracer_cls": self._tracer_cls}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(tracer_cls=state["tracer_cls"])  # type: ignore[misc]
        self._codegen = state["codegen"]
        by_name: dict[str, Node] = {}
        for name, op, target, args, kwargs, type_expr, meta in state["nodes"]:
            def resolve(a: Any) -> Any:
                return by_name[a.name] if isinstance(a, _NodeRef) else a

            args = map_aggregate(args, resolve)
            kwargs = map_aggregate(kwargs, resolve)
            node = self.create_node(op, target, args, kwargs, name, type_expr)
            node.meta = meta
            by_name[name] = node

    # --- checking and printing ----------------------------------------------------------
    def lint(self) -> None:
        """Check ownership, use-def links, topological order, unique names and attribute targets."""
        seen: set[Node] = set()
        names: set[str] = set()
        for node in self.nodes:
            where = f"node {node.format_node()}"
            if node.graph is not self:
                raise RuntimeError(f"{where} does not belong to this graph")
            if node.name in names:
                raise RuntimeError(f"{where}: duplicate node name {node.name!r}")
            names.add(node.name)
            for inp in node.all_input_nodes:
                if inp.graph is not self:
                    raise RuntimeError(f"{where} reads {inp.name!r}, which belongs to another graph")
                if inp not in seen:
                    raise RuntimeError(f"{where} reads {inp.name!r} before it is defined "
                                       "(not in topological order, or erased)")
                if node not in inp.users:
                    raise RuntimeError(f"{where} is missing from the users of {inp.name!r}")
            if node.op == "output" and node.next is not self._root:
                raise RuntimeError(f"{where}: the output node must be the last node")
            self._lint_target(node, where)
            seen.add(node)

    def _lint_target(self, node: Node, where: str) -> None:
        str_target_ops = ("call_method", "get_attr", "call_module", "placeholder")
        if node.op in str_target_ops and not isinstance(node.target, str):
            raise RuntimeError(f"{where}: target must be a str, got {type(node.target).__name__}")
        if node.op == "call_function" and not callable(node.target):
            raise RuntimeError(f"{where}: call_function target is not callable")
        root = self._owning_module
        if root is None or node.op not in ("get_attr", "call_module"):
            return
        value = _fetch_path(root, node.target)
        if value is _MISSING:
            raise RuntimeError(f"{where}: target {node.target!r} does not exist on the owning module")
        from ..nn import Module

        if node.op == "call_module" and not isinstance(value, Module):
            raise RuntimeError(f"{where}: call_module target {node.target!r} is not a Module")

    def __str__(self) -> str:
        lines = ["graph():"]
        lines += ["    " + s for n in self.nodes if (s := n.format_node())]
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """Print the nodes as a table (opcode, name, target, args, kwargs), as torch.fx does."""
        try:
            from tabulate import tabulate
        except ImportError as e:
            raise ImportError("Graph.print_tabular needs the 'tabulate' package "
                              "(pip install tabulate)") from e
        rows = [[n.op, n.name, n.target if isinstance(n.target, str) else _target_label(n.target),
                 _format_arg(n.args), _format_arg(n.kwargs)] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    # --- code generation ------------------------------------------------------------------
    def python_code(self, root_module: str, *, verbose: bool = False) -> PythonCode:
        """Source of `forward` (with `root_module` as the name of the module argument) and its globals."""
        return self._codegen._gen_python_code(self.nodes, root_module, self._namespace.copy(),
                                              verbose=verbose)

    def on_generate_code(self, make_transformer: Callable) -> _OnGenerateCode:
        """Install `make_transformer(previous)`: a function from body lines to body lines."""
        return _OnGenerateCode(self, make_transformer)

    def set_codegen(self, codegen: CodeGen) -> None:
        self._codegen = codegen

    def process_inputs(self, *args: Any) -> Any:
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out: Any) -> Any:
        return self._codegen.process_outputs(out)


def _target_label(target: Any) -> str:
    from .node import _qualified_name

    return _qualified_name(target)


class _NodeRef:
    """Stand-in for a Node inside pickled arguments."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    @staticmethod
    def of(node: Node) -> _NodeRef:
        return _NodeRef(node.name)

    def __reduce__(self) -> Any:
        return (_NodeRef, (self.name,))


_MISSING = object()


def _fetch_path(root: Any, qualname: str) -> Any:
    obj = root
    for atom in qualname.split("."):
        obj = getattr(obj, atom, _MISSING)
        if obj is _MISSING:
            return _MISSING
    return obj
