"""Trace a function for export: the capture of aot.compile, with chosen dims symbolic.

Dynamic dims become sympy size symbols named after their `aot.Dim`, so the graph, the ir, the
header and the error messages all speak of `N`. Arrays captured from closures or modules are
frozen into the graph as constants (a library carries its weights). Any decision the front end
cannot take for a symbolic size (aot.frontend.shapes raises SymbolicShapeError) becomes an
ExportError naming the dim and suggesting a fix.

Seam for the ShapeEnv: when aot.compile's capture takes a ShapeEnv, such decisions are answered
from the example sizes and recorded as guards; `Traced.guards` then carries them (sympy booleans
over the Dim symbols) and the library checks them at run time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ir import dtypes as D
from ir.symbols import deciding, size_symbol

from ..compiler.capture import CaptureTracer, GraphBreak, TracedArray, ValMeta, _order_placeholders
from ..frontend.core import ops as core_ops
from ..frontend.shapes import SymbolicShapeError
from ..fx import GraphModule

_AOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from ..fx._pytree import tree_flatten, tree_unflatten
from .decider import RangeDecider
from .dims import Dim, ExportError


def ranges_of(dims) -> dict[str, tuple[int, int | None]]:
    return {d.name: (d.min, d.max) for d in dims.values()}


@dataclass
class Traced:
    gm: GraphModule
    input_index: list[int]  # flat leaf index of each graph input
    input_names: list[str]
    leaf_kinds: list  # "array" or ("const", value) per flat leaf
    in_spec: Any
    out_spec: Any
    out_template: list  # ("graph", k) | ("input", leaf) | ("const", value)
    dims: dict  # (leaf, dim) -> Dim
    guards: list = field(default_factory=list)


def trace_for_export(
    fn, args: tuple, kwargs: dict, dims: dict[tuple[int, int], Dim], leaf_names: list[str]
) -> Traced:
    leaves, spec = tree_flatten((args, kwargs))
    tracer = CaptureTracer()
    traced, index, kinds, names = [], [], [], []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, np.ndarray):
            shape = tuple(
                size_symbol(dims[(i, k)].name) if (i, k) in dims else int(n) for k, n in enumerate(leaf.shape)
            )
            meta = ValMeta(_dtype(leaf, leaf_names[i]), shape)
            traced.append(tracer.placeholder(_placeholder_name(leaf_names[i], i), meta))
            index.append(i)
            names.append(leaf_names[i])
            kinds.append("array")
        else:
            traced.append(leaf)
            kinds.append(("const", leaf))
    targs, tkwargs = tree_unflatten(traced, spec)
    try:
        with deciding(RangeDecider(ranges_of(dims))):
            result = fn(*targs, **tkwargs)
            gm, template = _finish(tracer, traced, index, result)
    except SymbolicShapeError as e:
        raise ExportError(_suggest(str(e), dims, leaf_names)) from None
    except GraphBreak as e:
        raise ExportError(f"cannot export {getattr(fn, '__qualname__', fn)}: {e}") from None
    except TypeError as e:
        if "Relational" not in str(e):
            raise
        reason = f"the code branches on a dynamic size ({e}) at {_user_line(e)}"
        raise ExportError(_suggest(reason, dims, leaf_names)) from None
    return Traced(gm, index, names, kinds, spec, tree_flatten(result)[1], template, dims)


def _finish(tracer: CaptureTracer, traced: list, index: list[int], result):
    out_leaves, _ = tree_flatten(result)
    arg_nodes = [t.node for t in traced if isinstance(t, TracedArray)]
    graph_outs, template = [], []
    for leaf in out_leaves:
        if isinstance(leaf, TracedArray) and leaf.node in arg_nodes:
            template.append(("input", index[arg_nodes.index(leaf.node)]))
        elif isinstance(leaf, TracedArray):
            template.append(("graph", len(graph_outs)))
            graph_outs.append(leaf.node)
        elif isinstance(leaf, np.ndarray):
            template.append(("graph", len(graph_outs)))
            graph_outs.append(tracer.lift(leaf).node)
        else:
            template.append(("const", leaf))
    _order_placeholders(tracer)
    tracer.graph.output(tuple(graph_outs))
    _freeze_lifted(tracer)
    return GraphModule({}, tracer.graph), template


def _freeze_lifted(tracer: CaptureTracer) -> None:
    """Replace each lifted placeholder (parameter, captured global array) by a constant node."""
    g = tracer.graph
    for node, fetch in zip(tracer._lifted_nodes, tracer.lifted, strict=True):
        value = np.ascontiguousarray(fetch())
        with g.inserting_after(node):
            const = g.call_function(
                core_ops.constant, (), {"value": value, "dtype": D.from_numpy(value.dtype)}
            )
        const.meta["val"] = node.meta["val"]
        node.replace_all_uses_with(const)
        g.erase_node(node)
    tracer.lifted.clear()
    tracer._lifted_nodes.clear()


def _user_line(exc: BaseException) -> str:
    """`file:line: source` of the innermost traceback frame outside aot and sympy."""
    import linecache
    import traceback

    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if f"{os.sep}sympy{os.sep}" not in f.filename and not f.filename.startswith(_AOT_DIR)
    ]
    if not frames:
        return "<unknown>"
    f = frames[-1]
    return f"{f.filename}:{f.lineno}: {linecache.getline(f.filename, f.lineno).strip()}"


def _placeholder_name(label: str, i: int) -> str:
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in label).strip("_")
    return name if name.isidentifier() else f"arg{i}"


def _dtype(arr: np.ndarray, label: str):
    try:
        return D.from_numpy(arr.dtype)
    except TypeError as e:
        raise TypeError(f"argument {label}: {e}") from None


def _suggest(reason: str, dims: dict, leaf_names: list[str]) -> str:
    where = {d.name: f"{leaf_names[i]}.shape[{k}]" for (i, k), d in dims.items()}
    mentioned = [n for n in where if _mentions(reason, n)]
    fixes = [f"make {where[n]} static (drop Dim {n!r} from dynamic_shapes)" for n in mentioned]
    if " == " in reason and len(mentioned) == 2:
        a, b = mentioned
        fixes.insert(0, f"if {where[a]} and {where[b]} are always equal, use one Dim for both")
    if not fixes:
        fixes = ["make the dims involved static (remove them from dynamic_shapes)"]
    return (
        f"a dynamic dim cannot stay dynamic: {reason}. Suggested fixes: "
        + "; or ".join(fixes)
        + ". (Dims: "
        + ", ".join(f"{n} = {w}" for n, w in where.items())
        + ")"
    )


def _mentions(text: str, name: str) -> bool:
    import re

    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None
