"""`FxGraphDrawer`: a GraphModule as a Graphviz picture (torch.fx.passes.graph_drawer's API).

torch returns pydot graphs; here the graphs are `ir.dot.Dot` objects with pydot's output methods
(`to_string`, `create_svg`, `create_png`, `write_svg`, ...), so drawing needs no pydot and only
rendering needs Graphviz's `dot` (`ir.dot.GraphvizNotFound` otherwise).

A node is a record as torch draws it: its name, op kind, target (a numpy function by its qualified
name, `numpy.sin`; a module by its class), constant arguments, user count, and the dtype and shape
of its value: from `meta["tensor_meta"]` (written by `ShapeProp`) or else from `meta["val"]`
(written by make_fx and by the tracer of aot.compile / aot.export). Edges go from each node to its
users. A `call_module` node's parameters and buffers are drawn as nodes of their own, and a
submodule that is itself a GraphModule gets a graph of its own (`get_submod_dot_graph`).
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np

from ir.dot import Dot, Record, hash_color
from ir.logger import get_logger
from ir.symbols import dim_str

from ...nn.module import Module
from ...nn.parameter import Parameter
from ..graph_module import GraphModule
from ..node import Node, _format_arg, _qualified_name, map_arg

__all__ = ["FxGraphDrawer"]

log = get_logger(__name__)

_COLOR_MAP = {"placeholder": "AliceBlue", "call_module": "LemonChiffon1", "get_param": "Yellow2",
              "get_attr": "LightGrey", "output": "PowderBlue"}
_DEFAULT_COLOR = "#CAFFE3"
_WEIGHT_COLOR = "Salmon"
_FRAME = re.compile(r'^File "(.+)", line (\d+), in (.+)$')


class _ParsedStackTrace(NamedTuple):
    file: str
    lineno: str
    code: str


def _parse_stack_trace(stack_trace: str | None) -> _ParsedStackTrace | None:
    """The innermost `File "...", line N, in f` frame of a formatted traceback and its code line."""
    if not stack_trace:
        return None
    lines = stack_trace.strip().split("\n")
    for idx in range(len(lines) - 2, -1, -1):
        m = _FRAME.match(lines[idx].strip())
        if m:
            return _ParsedStackTrace(m.group(1), m.group(2), lines[idx + 1].strip())
    return None


class FxGraphDrawer:
    """Draws `graph_module` (and each GraphModule it calls) as DOT graphs named after `name`."""

    def __init__(self, graph_module: GraphModule, name: str, ignore_getattr: bool = False,
                 ignore_parameters_and_buffers: bool = False, skip_node_names_in_args: bool = True,
                 parse_stack_trace: bool = False, dot_graph_shape: str | None = None,
                 normalize_args: bool = False):
        if not isinstance(graph_module, GraphModule):
            raise TypeError(f"FxGraphDrawer(graph_module): expected an aot.fx.GraphModule, got "
                            f"{type(graph_module).__name__}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"FxGraphDrawer(name): expected a non-empty str, got {name!r}")
        if dot_graph_shape is not None and (not isinstance(dot_graph_shape, str) or not dot_graph_shape):
            raise ValueError(f"FxGraphDrawer(dot_graph_shape): expected a Graphviz shape name such as "
                             f"'record' or 'box', got {dot_graph_shape!r}")
        self._name = name
        self.dot_graph_shape = dot_graph_shape if dot_graph_shape is not None else "record"
        self.normalize_args = normalize_args
        options = (ignore_getattr, ignore_parameters_and_buffers, skip_node_names_in_args, parse_stack_trace)
        self._dot_graphs = {name: self._to_dot(graph_module, name, *options)}
        for node in graph_module.graph.nodes:
            if node.op != "call_module":
                continue
            leaf = self._get_leaf_node(graph_module, node)
            if isinstance(leaf, GraphModule):
                sub = f"{name}_{node.target}"
                self._dot_graphs[sub] = self._to_dot(leaf, sub, *options)

    # --- torch's API ---------------------------------------------------------------------------
    def get_dot_graph(self, submod_name: str | None = None) -> Dot:
        return self.get_main_dot_graph() if submod_name is None else self.get_submod_dot_graph(submod_name)

    def get_main_dot_graph(self) -> Dot:
        return self._dot_graphs[self._name]

    def get_submod_dot_graph(self, submod_name: str) -> Dot:
        key = f"{self._name}_{submod_name}"
        if key not in self._dot_graphs:
            subs = [k[len(self._name) + 1:] for k in self._dot_graphs if k != self._name]
            raise KeyError(f"get_submod_dot_graph({submod_name!r}): no GraphModule submodule of that name "
                           f"was drawn; drawn submodules: {subs}")
        return self._dot_graphs[key]

    def get_all_dot_graphs(self) -> dict[str, Dot]:
        return dict(self._dot_graphs)

    # --- drawing -------------------------------------------------------------------------------
    def _to_dot(self, gm: GraphModule, name: str, ignore_getattr: bool, ignore_parameters_and_buffers: bool,
                skip_node_names_in_args: bool, parse_stack_trace: bool) -> Dot:
        dot = Dot(name, rankdir="TB")
        nodes = [n for n in gm.graph.nodes if not (ignore_getattr and n.op == "get_attr")]
        for node in nodes:
            label = self._get_node_label(gm, node, skip_node_names_in_args, parse_stack_trace)
            dot.add_node(node.name, label=self._label(label), **self._get_node_style(node))
            if node.op == "call_module" and not ignore_parameters_and_buffers:
                leaf = self._get_leaf_node(gm, node)
                if not isinstance(leaf, GraphModule):
                    self._add_weights(dot, node, leaf)
        for node in nodes:
            for user in node.users:
                dot.add_edge(node.name, user.name)
        log.debug("drew graph %r: %d nodes", name, len(nodes))
        return dot

    def _add_weights(self, dot: Dot, node: Node, leaf: Any) -> None:
        """One node per parameter and buffer of the module a call_module node calls."""
        if not isinstance(leaf, Module):
            return
        weights = [(n, p, "parameter") for n, p in leaf.named_parameters()]
        weights += [(n, b, "buffer") for n, b in leaf.named_buffers() if not isinstance(b, Parameter)]
        for pname, value, kind in weights:
            wname = f"{node.name}.{pname}"
            tensor = f"{np.asarray(value).dtype}{list(np.shape(value))}"
            label = Record([wname, f"op_code=get_{kind}", tensor])
            dot.add_node(wname, label=self._label(label), shape=self.dot_graph_shape, fillcolor=_WEIGHT_COLOR,
                         style="filled,rounded", fontcolor="#000000")
            dot.add_edge(wname, node.name)

    def _label(self, record: Record) -> Record | str:
        # record syntax only means something to record shapes; others get the fields as lines
        return record if self.dot_graph_shape in ("record", "Mrecord") else record.text()

    def _get_node_style(self, node: Node) -> dict:
        color = _COLOR_MAP.get(node.op) or hash_color(self._typename(node.target))
        return {"shape": self.dot_graph_shape, "fillcolor": color, "style": "filled,rounded",
                "fontcolor": "#000000"}

    def _get_leaf_node(self, module: Any, node: Node) -> Any:
        obj = module
        for atom in str(node.target).split("."):
            if not hasattr(obj, atom):
                raise RuntimeError(f"{obj!r} does not have attribute {atom!r} (call_module target "
                                   f"{node.target!r} of node {node.name!r})")
            obj = getattr(obj, atom)
        return obj

    def _typename(self, target: Any) -> str:
        if isinstance(target, Module):
            return f"{type(target).__module__}.{type(target).__qualname__}"
        if isinstance(target, str):
            return target
        return _qualified_name(target)

    def _get_node_label(self, module: GraphModule, node: Node, skip_node_names_in_args: bool,
                        parse_stack_trace: bool) -> Record:
        fields = [f"name=%{node.name}", f"op_code={node.op}"]
        if node.op == "call_module":
            leaf = self._get_leaf_node(module, node)
            fields.append(self._typename(leaf))
            extra = self._module_constants(leaf)
            if extra:
                fields.append(extra)
        else:
            fields.append(f"target={self._typename(node.target)}")
            args, kwargs = self._arguments(module, node)
            fields += self._args_fields(args, kwargs, skip_node_names_in_args)
            fields.append(f"num_users={len(node.users)}")
        fields += self._meta_fields(node)
        if parse_stack_trace:
            parsed = _parse_stack_trace(node.stack_trace)
            if parsed is not None:
                fields.append(f"file={_shorten_file_name(parsed.file)}:{parsed.lineno} {parsed.code}")
        return Record(fields)

    def _module_constants(self, leaf: Any) -> str:
        if hasattr(leaf, "__constants__"):
            return "\n".join(f"{c}: {getattr(leaf, c)}" for c in leaf.__constants__)
        extra = getattr(leaf, "extra_repr", None)
        return extra() if callable(extra) else ""

    def _arguments(self, module: GraphModule, node: Node) -> tuple[tuple, dict]:
        if self.normalize_args:
            pair = node.normalized_arguments(module, normalize_to_only_use_kwargs=True)
            if pair is not None:
                return pair.args, pair.kwargs
        return node.args, node.kwargs

    def _args_fields(self, args: tuple, kwargs: dict, skip_node_names: bool) -> list[str]:
        def has_node(v: Any) -> bool:
            found = []
            map_arg(v, found.append)
            return bool(found)

        out = []
        for head, items, close in (("args=(", [(None, a) for a in args], ")"),
                                   ("kwargs={", list(kwargs.items()), "}")):
            if skip_node_names:
                items = [(k, v) for k, v in items if not has_node(v)]
            if not items:
                continue
            texts = [(f"{k}: " if k is not None else "") + _format_arg(v, max_list_len=8) for k, v in items]
            if len(texts) == 1:
                out.append(f"{head}{texts[0]}{',' if close == ')' else ''}{close}")
            else:
                out.append(head + "\n" + ",\n".join(texts) + ",\n" + close)
        return out

    def _meta_fields(self, node: Node) -> list[str]:
        meta = node.meta.get("tensor_meta")
        if meta is None:
            meta = node.meta.get("val")
        fields: list[str] = []
        _describe(meta, fields)
        return fields


def _describe(meta: Any, out: list[str]) -> None:
    """dtype/shape (and ShapeProp's requires_grad/stride) fields of each array inside `meta`."""
    if meta is None:
        return
    if hasattr(meta, "dtype") and hasattr(meta, "shape"):
        dtype = getattr(meta.dtype, "numpy", meta.dtype)  # ir DTypes (make_fx "fake", the tracer)
        out.append(f"dtype={np.dtype(dtype)}")
        out.append(f"shape={_shape(meta.shape)}")
        if hasattr(meta, "requires_grad") and hasattr(meta, "stride"):  # ShapeProp's TensorMetadata
            out.append(f"requires_grad={meta.requires_grad}")
            out.append(f"stride={tuple(meta.stride)}")
        return
    if isinstance(meta, dict):
        meta = list(meta.values())
    if isinstance(meta, (tuple, list)):
        for item in meta:
            _describe(item, out)
    # scalars (sizes read by sym_size, Python numbers) carry no array metadata


def _shape(shape: Any) -> str:
    dims = [dim_str(d) if isinstance(d, int) or hasattr(d, "free_symbols") else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _shorten_file_name(full_file_name: str, truncate_to_last_n: int = 2) -> str:
    parts = full_file_name.split("/")
    return "/".join(parts[-truncate_to_last_n:]) if len(parts) >= truncate_to_last_n else full_file_name
