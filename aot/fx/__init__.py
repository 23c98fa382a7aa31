"""aot.fx: torch.fx's tracing and graph-transformation API, with numpy arrays in place of tensors."""
from __future__ import annotations

import importlib

from . import graph, immutable_collections, node, passes, proxy, subgraph_rewriter  # noqa: F401 (public)
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "wrap", "Graph", "Node", "GraphModule", "Proxy", "Tracer", "PH", "Interpreter",
           "Transformer", "replace_pattern", "subgraph_rewriter", "passes", "map_arg", "has_side_effect",
           "graph", "node", "proxy", "immutable_collections"]


def __getattr__(name: str):
    # `aot.fx.experimental` (symbolic shapes, make_fx) pulls in more machinery; load it on first use
    if name == "experimental":
        return importlib.import_module("aot.fx.experimental")
    raise AttributeError(f"module 'aot.fx' has no attribute {name!r}")
