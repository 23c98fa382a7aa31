"""Minimal pytrees over tuple, list and dict, enough for `concrete_args` flattening.

A `TreeSpec` records the container structure; leaves are everything else. None is a leaf (so
that a None in `concrete_args` can be checked at call time). Specs are plain data
(picklable, comparable) so that generated code can keep them as module attributes.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ir.records import Record

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_map", "tree_flatten_spec"]

_CONTAINERS = (tuple, list, dict)


class TreeSpec(Record):
    """`kind` is 'tuple', 'list', 'dict', 'namedtuple' or 'leaf'; `context` holds dict keys (the
    class of a namedtuple)."""

    __slots__ = ("kind", "context", "children_specs")

    def __init__(self, kind: str, context: tuple = (), children_specs: tuple = ()):
        self.kind, self.context, self.children_specs = kind, context, children_specs

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children_specs)

    def is_leaf(self) -> bool:
        return self.kind == "leaf"

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        inner = ", ".join(repr(c) for c in self.children_specs)
        if self.kind == "dict":
            pairs = zip(self.context, self.children_specs, strict=True)
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in pairs)
            return "{" + inner + "}"
        if self.kind == "namedtuple":
            return f"{self.context[0].__name__}({inner})"
        return f"({inner})" if self.kind == "tuple" else f"[{inner}]"


LeafSpec = TreeSpec("leaf")


def tree_flatten(tree: Any) -> tuple[list, TreeSpec]:
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list) -> TreeSpec:
    if isinstance(tree, dict):
        keys = tuple(tree)
        return TreeSpec("dict", keys, tuple(_flatten(tree[k], leaves) for k in keys))
    if type(tree) in (tuple, list):
        return TreeSpec(type(tree).__name__, (), tuple(_flatten(v, leaves) for v in tree))
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):  # a namedtuple (np.linalg's results)
        return TreeSpec("namedtuple", (type(tree),), tuple(_flatten(v, leaves) for v in tree))
    leaves.append(tree)
    return LeafSpec


def tree_unflatten(leaves: list, spec: TreeSpec) -> Any:
    it = iter(leaves)
    out = _unflatten(it, spec)
    if next(it, _END) is not _END:
        raise ValueError(f"tree_unflatten: more leaves than the spec {spec!r} holds")
    return out


_END = object()


def _unflatten(it: Any, spec: TreeSpec) -> Any:
    if spec.kind == "leaf":
        value = next(it, _END)
        if value is _END:
            raise ValueError("tree_unflatten: fewer leaves than the spec holds")
        return value
    children = [_unflatten(it, c) for c in spec.children_specs]
    if spec.kind == "dict":
        return dict(zip(spec.context, children, strict=True))
    if spec.kind == "namedtuple":
        return spec.context[0](*children)
    return tuple(children) if spec.kind == "tuple" else children


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def tree_flatten_spec(tree: Any, spec: TreeSpec) -> list:
    """Flatten `tree` following `spec` (dict leaves in the spec's key order), checking structure."""
    if spec.kind == "leaf":
        return [tree]
    if spec.kind == "dict":
        if not isinstance(tree, dict) or set(tree) != set(spec.context):
            raise TypeError(f"expected a dict with keys {list(spec.context)}, got {tree!r:.80}")
        items = [tree[k] for k in spec.context]
    else:
        if not isinstance(tree, _CONTAINERS[:2]) or len(tree) != len(spec.children_specs):
            raise TypeError(f"expected a {spec.kind} of {len(spec.children_specs)} items, got {tree!r:.80}")
        items = list(tree)
    out: list = []
    for item, child in zip(items, spec.children_specs, strict=True):
        out.extend(tree_flatten_spec(item, child))
    return out
