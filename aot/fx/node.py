"""`Node`: one operation in a `Graph`, kept in a doubly linked list and linked to its users."""
from __future__ import annotations

import builtins
import inspect
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from .immutable_collections import immutable_dict, immutable_list

if TYPE_CHECKING:
    from .graph import Graph

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect", "Argument", "Target"]

Target = Union[Callable[..., Any], str]  # noqa: UP007 - evaluated at runtime on 3.10
Argument = Any  # nested tuple/list/dict/slice of Nodes and Python/numpy constants

_OPCODES = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root")

# Functions whose calls must survive dead-code elimination even when their result is unused.
_side_effectful_functions: set[Callable] = {operator.setitem, builtins.print}
# Methods that mutate their receiver in place (numpy's in-place ndarray API).
_side_effectful_methods = {"fill", "sort", "partition", "put", "itemset", "resize", "setfield",
                           "setflags", "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__"}


def has_side_effect(fn: Callable) -> Callable:
    """Mark `fn` as impure so that `eliminate_dead_code` keeps its calls (usable as a decorator)."""
    _side_effectful_functions.add(fn)
    return fn


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply `fn` to every leaf of the nested tuple/list/dict/slice `a`, keeping its structure."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(elem, fn) for elem in a)
        # namedtuples keep their type
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return immutable_list(map_aggregate(elem, fn) for elem in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply `fn` to every `Node` inside the argument structure `a`."""
    if not callable(fn):
        raise TypeError("map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _qualified_name(fn: Any) -> str:
    """`module.qualname` of a callable, for printing (the code generator resolves its own names)."""
    if getattr(fn, "__module__", None) == "_operator":
        return f"operator.{fn.__name__}"
    if isinstance(fn, np.ufunc):
        return f"numpy.{fn.__name__}"
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    if mod in ("builtins", ""):
        return name
    return f"{mod}.{name}"


def _format_arg(arg: Any, max_list_len: float = float("inf")) -> str:
    if isinstance(arg, (list, tuple)):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) <= max_list_len else f", ...[total_len={len(arg)}]"
        if isinstance(arg, list):
            return f"[{items}{more}]"
        return f"({items}{',' if len(arg) == 1 else ''}{more})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + arg.name
    return repr(arg)


class Node:
    """One operation: `op` is the opcode, `target` what it calls, `args`/`kwargs` its operands.

    `users` maps each node reading this node's value to None (an ordered set); it is kept up to
    date by every write to `args`/`kwargs`.
    """

    def __init__(self, graph: Graph, name: str, op: str, target: Target, args: tuple, kwargs: dict,
                 return_type: Any | None = None) -> None:
        if op not in _OPCODES:
            raise ValueError(f"Node op must be one of {_OPCODES[:-1]}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"call_function target {target!r} of node {name!r} is not callable")
        if op in ("call_method", "call_module", "get_attr", "placeholder") and not isinstance(target, str):
            raise ValueError(f"{op} target of node {name!r} must be a str, got {type(target).__name__}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict[Node, None] = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self.users: dict[Node, None] = {}
        self.type = return_type
        self._prev: Node = self
        self._next: Node = self
        self._erased = False
        self.meta: dict[str, Any] = {}
        self._update_args_kwargs(map_arg(args, lambda x: x), map_arg(kwargs, lambda x: x))

    # --- linked list ----------------------------------------------------------------------
    @property
    def next(self) -> Node:
        return self._next

    @property
    def prev(self) -> Node:
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move or insert `x` immediately before this node."""
        if x is self:
            raise ValueError("cannot prepend a node to itself")
        if x.graph is not self.graph:
            raise ValueError(f"node {x.name!r} belongs to another graph than {self.name!r}")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move or insert `x` immediately after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # --- operands -------------------------------------------------------------------------
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, a: tuple) -> None:
        self._update_args_kwargs(map_arg(tuple(a), lambda x: x), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict) -> None:
        self._update_args_kwargs(self._args, map_arg(dict(k), lambda x: x))

    @property
    def all_input_nodes(self) -> list[Node]:
        """The distinct nodes read by this node, in order of first appearance."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx: int, arg: Argument) -> None:
        if not 0 <= idx <= len(self.args):
            raise IndexError(f"insert_arg index {idx} out of range for {len(self.args)} args")
        self.args = self.args[:idx] + (arg,) + self.args[idx:]

    def update_kwarg(self, key: str, arg: Argument) -> None:
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args: tuple, new_kwargs: dict) -> None:
        self._args, self._kwargs = new_args, new_kwargs
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        map_arg(self._args, self._input_nodes.setdefault)
        map_arg(self._kwargs, self._input_nodes.setdefault)
        for new in self._input_nodes:
            new.users.setdefault(self)

    # --- rewriting ------------------------------------------------------------------------
    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] = lambda user: True,
                              *, propagate_meta: bool = False) -> list[Node]:
        """Make every user (for which `delete_user_cb` is true) read `replace_with`; returns them."""
        if propagate_meta:
            if replace_with.meta:
                raise ValueError("propagate_meta=True needs replace_with to have empty meta")
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if user is replace_with or not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        def swap(n: Node) -> Node:
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # --- queries --------------------------------------------------------------------------
    @property
    def stack_trace(self) -> str | None:
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace: str | None) -> None:
        self.meta["stack_trace"] = trace

    def is_impure(self) -> bool:
        """True when removing this node could change behaviour even if its value is unused."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful_functions or "out" in self.kwargs
        if self.op == "call_method":
            return self.target in _side_effectful_methods or "out" in self.kwargs
        if self.op == "call_module":
            root = self.graph.owning_module
            if root is None:
                return False
            return bool(getattr(root.get_submodule(self.target), "_is_impure", False))
        return False

    def normalized_arguments(self, root: Any = None, arg_types: tuple | None = None,
                             kwarg_types: dict | None = None,
                             normalize_to_only_use_kwargs: bool = False) -> ArgsKwargsPair | None:
        """Bind args/kwargs to the target's signature; None when the signature is unknown."""
        if self.op == "call_function":
            fn = self.target
        elif self.op == "call_module" and root is not None:
            fn = root.get_submodule(self.target).forward
        else:
            return None
        try:
            sig = inspect.signature(fn)
            bound = sig.bind(*self.args, **self.kwargs)
        except (TypeError, ValueError):
            return None
        bound.apply_defaults()
        if normalize_to_only_use_kwargs:
            return ArgsKwargsPair((), dict(bound.arguments))
        return ArgsKwargsPair(tuple(bound.args), dict(bound.kwargs))

    def format_node(self, placeholder_names: list[str] | None = None,
                    maybe_return_typename: list[str] | None = None) -> str | None:
        """One line in the style of `Graph.__str__`: `%add : [num_users=1] = call_function[...]`."""
        if self.op == "placeholder":
            if placeholder_names is not None:
                placeholder_names.append(str(self.target))
                return None
            default = f" = {self.args[0]!r}" if self.args else ""
            head = f"%{self.name} : [num_users={len(self.users)}]"
            return f"{head} = placeholder[target={self.target}]{default}"
        if self.op == "output":
            if self.type is not None and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {_qualified_name(self.type)}"
            return f"return {_format_arg(self.args[0] if len(self.args) == 1 else self.args)}"
        target = self.target if isinstance(self.target, str) else _qualified_name(self.target)
        return (f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={target}]"
                f"(args = {_format_arg(self.args, 20)}, kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self) -> str:
        return self.name


class ArgsKwargsPair(tuple):
    """(args, kwargs) returned by `Node.normalized_arguments`."""

    def __new__(cls, args: tuple, kwargs: dict) -> ArgsKwargsPair:
        return super().__new__(cls, (args, kwargs))

    @property
    def args(self) -> tuple:
        return self[0]

    @property
    def kwargs(self) -> dict:
        return self[1]
