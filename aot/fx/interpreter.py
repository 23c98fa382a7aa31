"""`Interpreter` runs a GraphModule node by node; `Transformer` re-traces it into a new one."""
from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from ir.logger import get_logger

from ..nn.module import Module
from ._symbolic_trace import Tracer
from .graph import Graph
from .graph_module import GraphModule
from .node import Argument, Node, Target, map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]

logger = get_logger(__name__)


class Interpreter:
    """Executes `module.graph` with numpy; override `run_node` or the per-opcode methods.

    With `garbage_collect_values`, each value is dropped from the environment after its last use.
    """

    def __init__(self, module: Module, garbage_collect_values: bool = True,
                 graph: Graph | None = None) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.args_iter: Iterator[Any] = iter(())
        self.user_to_last_uses: dict[Node, list[Node]] = {}
        if garbage_collect_values:
            seen: set[Node] = set()
            for node in reversed(self.graph.nodes):
                for inp in node.all_input_nodes:
                    if inp not in seen:
                        seen.add(inp)
                        self.user_to_last_uses.setdefault(node, []).append(inp)

    def run(self, *args: Any, initial_env: dict[Node, Any] | None = None,
            enable_io_processing: bool = True) -> Any:
        """Run the graph on `args`; `initial_env` pre-seeds node values (those nodes are skipped)."""
        self.env = dict(initial_env) if initial_env is not None else {}
        if enable_io_processing:
            args = self.graph.process_inputs(*args)
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback and hasattr(e, "add_note"):  # Python >= 3.11
                    e.add_note(f"While executing {node.format_node()}")
                    if node.stack_trace:
                        e.add_note(f"Original traceback:\n{node.stack_trace}")
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, ()):
                    self.env.pop(dead, None)
            if node.op == "output":
                out = self.env[node]
                return self.graph.process_outputs(out) if enable_io_processing else out
        return None

    def boxed_run(self, args_list: list[Any]) -> Any:
        """Run with arguments taken out of `args_list` (which is cleared, freeing the caller's refs)."""
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n: Node) -> Any:
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # --- one method per opcode ------------------------------------------------------------
    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Any:
        if isinstance(target, str) and target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, "
                               "but one was not passed in!") from si

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(str(target))

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return target(*args, **kwargs)  # type: ignore[operator]

    def call_method(self, target: Target, args: tuple, kwargs: dict) -> Any:
        self_obj, *rest = args
        return getattr(self_obj, str(target))(*rest, **kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(str(target))(*args, **kwargs)

    def output(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return args[0]

    # --- helpers ----------------------------------------------------------------------------
    def fetch_attr(self, target: str) -> Any:
        obj: Any = self.module
        for i, atom in enumerate(target.split(".")):
            if not hasattr(obj, atom):
                path = ".".join(target.split(".")[:i])
                raise RuntimeError(f"Node referenced nonexistent target {target!r} ({atom!r} missing on "
                                   f"{path or 'the root module'})")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple, dict]:
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args: Argument, n: Node) -> Any:
        def load(n_arg: Node) -> Any:
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! "
                                   "Run Graph.lint() to diagnose such issues")
            return self.env[n_arg]

        return map_arg(args, load)


class _TransformerTracer(Tracer):
    """Appends to the Transformer's new graph; every module call stays a call_module node."""

    def __init__(self, graph: Graph, root: Module) -> None:
        super().__init__()
        self.graph = graph
        self.root = root
        self.tensor_attrs = {}

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        return True


class Transformer(Interpreter):
    """Interpreter whose values are Proxies: `transform()` returns a new GraphModule.

    Override the opcode methods to rewrite; unchanged nodes are copied with their `meta`.
    """

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module, garbage_collect_values=False)
        self.new_graph = Graph()
        self.new_graph.set_codegen(_copy_codegen(module.graph))
        self.tracer = _TransformerTracer(self.new_graph, module)

    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        default = args[0] if args else None
        kw = {"default_value": default} if args else {}
        return Proxy(self.new_graph.placeholder(str(target), **kw), self.tracer)

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        submod = self.fetch_attr(str(target))
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        if isinstance(result, Proxy) and result.node.op == n.op and not result.node.meta:
            result.node.meta.update(n.meta)  # preserve stack traces and metadata of kept nodes
        return result

    def transform(self) -> GraphModule:
        result = super().run(enable_io_processing=False)
        if result is not None:
            def strip_proxy(a: Any) -> Any:
                return a.node if isinstance(a, Proxy) else a

            self.new_graph.output(map_aggregate(result, strip_proxy))
        return GraphModule(self.module, self.new_graph)


def _copy_codegen(graph: Graph) -> Any:
    return copy.deepcopy(graph._codegen)
