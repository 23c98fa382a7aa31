"""`replace_pattern`: find every non-overlapping occurrence of a pattern graph and splice in a replacement.

Matching follows use-def structure (ops, targets, argument wiring), never node names. A pattern
placeholder matches any node; a placeholder used twice must match the same node twice.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ir.logger import get_logger

from ..nn.module import Module
from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule, _assign_attr
from .node import Node

__all__ = ["Match", "replace_pattern"]

logger = get_logger(__name__)


class Match(NamedTuple):
    anchor: Node  # the node of the original graph that matched the pattern's output
    nodes_map: dict[Node, Node]  # pattern node -> original graph node


def _as_graph_module(obj: Callable | Graph | GraphModule) -> GraphModule:
    if isinstance(obj, GraphModule):
        return obj
    if isinstance(obj, Graph):
        return GraphModule(Module(), obj)
    return symbolic_trace(obj)


class _Matcher:
    def __init__(self, pattern: Graph) -> None:
        self.pattern_nodes = [n for n in pattern.nodes if n.op != "output"]
        out = pattern.output_node().args[0]
        if not isinstance(out, Node):
            raise NotImplementedError("replace_pattern supports patterns that return a single value")
        if out.op == "placeholder":
            raise ValueError("the pattern must compute something: its output is one of its inputs")
        self.anchor = out

    def match(self, gn: Node) -> dict[Node, Node] | None:
        nodes_map: dict[Node, Node] = {}
        if not self._match_nodes(self.anchor, gn, nodes_map):
            return None
        inside = {g for p, g in nodes_map.items() if p.op != "placeholder"}
        for p, g in nodes_map.items():
            # values computed inside the match may not escape it, except through the anchor
            if p.op != "placeholder" and p is not self.anchor and any(u not in inside for u in g.users):
                return None
        return nodes_map

    def _match_nodes(self, pn: Node, gn: Node, nodes_map: dict[Node, Node]) -> bool:
        if pn in nodes_map:
            return nodes_map[pn] is gn
        if pn.op == "placeholder":
            nodes_map[pn] = gn
            return True
        if pn.op != gn.op or not _same_target(pn, gn) or gn in nodes_map.values():
            return False
        if len(pn.args) != len(gn.args) or set(pn.kwargs) != set(gn.kwargs):
            return False
        snapshot = dict(nodes_map)
        nodes_map[pn] = gn
        pairs = [*zip(pn.args, gn.args, strict=True), *((pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs)]
        ok = all(self._match_args(a, b, nodes_map) for a, b in pairs)
        if not ok:
            nodes_map.clear()
            nodes_map.update(snapshot)
        return ok

    def _match_args(self, pa: Any, ga: Any, nodes_map: dict[Node, Node]) -> bool:
        if isinstance(pa, Node):
            return isinstance(ga, Node) and self._match_nodes(pa, ga, nodes_map)
        if isinstance(pa, (tuple, list)):
            return (isinstance(ga, (tuple, list)) and isinstance(ga, tuple) == isinstance(pa, tuple)
                    and len(pa) == len(ga)
                    and all(self._match_args(a, b, nodes_map) for a, b in zip(pa, ga, strict=True)))
        if isinstance(pa, dict):
            return (isinstance(ga, dict) and set(pa) == set(ga)
                    and all(self._match_args(pa[k], ga[k], nodes_map) for k in pa))
        if isinstance(pa, slice):
            fields = ("start", "stop", "step")
            return isinstance(ga, slice) and all(
                self._match_args(getattr(pa, f), getattr(ga, f), nodes_map) for f in fields)
        if isinstance(pa, np.ndarray) or isinstance(ga, np.ndarray):
            return isinstance(ga, np.ndarray) and isinstance(pa, np.ndarray) and pa.dtype == ga.dtype \
                and np.array_equal(pa, ga)
        return type(pa) is type(ga) and pa == ga


def _same_target(pn: Node, gn: Node) -> bool:
    if pn.op == "get_attr":
        return True  # attribute names differ between pattern and target modules
    return pn.target == gn.target


def replace_pattern(gm: GraphModule, pattern: Callable | GraphModule,
                    replacement: Callable | GraphModule) -> list[Match]:
    """Replace each non-overlapping match of `pattern` in `gm` with `replacement`; recompiles `gm`.

    Both may be callables (traced with `symbolic_trace`) or GraphModules; their inputs correspond
    by position.
    """
    pattern_gm, replacement_gm = _as_graph_module(pattern), _as_graph_module(replacement)
    matcher = _Matcher(pattern_gm.graph)
    pattern_phs = [n for n in pattern_gm.graph.nodes if n.op == "placeholder"]
    repl_phs = [n for n in replacement_gm.graph.nodes if n.op == "placeholder"]
    if len(pattern_phs) != len(repl_phs):
        raise ValueError(f"pattern takes {len(pattern_phs)} inputs but replacement takes {len(repl_phs)}")
    graph = gm.graph
    claimed: set[Node] = set()
    matches: list[Match] = []
    for gn in graph.nodes:
        if gn in claimed or gn.op in ("placeholder", "output"):
            continue
        nodes_map = matcher.match(gn)
        if nodes_map is None:
            continue
        inner = {g for p, g in nodes_map.items() if p.op != "placeholder"}
        if inner & claimed:
            continue
        claimed |= inner
        matches.append(Match(gn, nodes_map))
    for m in matches:
        _splice(gm, m, matcher, pattern_phs, repl_phs, replacement_gm)
    gm.recompile()
    logger.debug("replace_pattern: %d matches", len(matches))
    return matches


def _splice(gm: GraphModule, m: Match, matcher: _Matcher, pattern_phs: list[Node], repl_phs: list[Node],
            replacement_gm: GraphModule) -> None:
    graph = gm.graph
    val_map: dict[Node, Any] = {r: m.nodes_map[p] for r, p in zip(repl_phs, pattern_phs, strict=True)}
    for node in replacement_gm.graph.nodes:
        if node.op in ("get_attr", "call_module") and not hasattr(gm, node.target):
            _assign_attr(replacement_gm.get_submodule(node.target) if node.op == "call_module"
                         else getattr(replacement_gm, node.target), gm, node.target)
    with graph.inserting_before(m.anchor):
        new_out = graph.graph_copy(replacement_gm.graph, val_map)
    if isinstance(new_out, Node):
        m.anchor.replace_all_uses_with(new_out)
    elif m.anchor.users:
        raise NotImplementedError("replace_pattern: the replacement must return a single node")
    for pn in reversed(matcher.pattern_nodes):
        if pn.op != "placeholder":
            gn = m.nodes_map[pn]
            if not gn.users:
                graph.erase_node(gn)
