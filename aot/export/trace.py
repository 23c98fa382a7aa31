"""Trace a function for export: the capture of aot.compile, with chosen dims symbolic.

Dynamic dims become sympy size symbols named after their `aot.Dim`, so the graph, the ir, the
header and the error messages all speak of `N`. Arrays captured from closures or modules are
frozen into the graph as constants (a library carries its weights). Shape questions go to a
ShapeEnv (aot/export/decider.py): answered from the example sizes, each decision the declared
ranges do not imply recorded as a guard; aot/export/guards.py turns the guards into runtime
checks (`Traced.guards`) or an ExportError suggesting a fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ir import dtypes as D
from ir.symbols import deciding

from ..compiler.capture import (
    CaptureTracer,
    GraphBreak,
    TracedArray,
    ValMeta,
    _order_placeholders,
    updated_arrays,
)
from ..compiler.conversions import traced_conversions
from ..compiler.creations import creating
from ..frontend.core import ops as core_ops
from ..fx import GraphModule
from ..fx._pytree import tree_flatten, tree_unflatten
from .decider import ExportShapes
from .dims import Dim, ExportError
from .guards import runtime_guards


@dataclass
class Traced:
    gm: GraphModule
    input_index: list[int]  # flat leaf index of each graph input
    input_names: list[str]
    leaf_kinds: list  # "array" or ("const", value) per flat leaf
    in_spec: Any
    out_spec: Any
    out_template: list  # ("graph", k) | ("const", value)
    dims: dict  # (leaf, dim) -> Dim
    input_shapes: list  # per graph input: its declared dims (ints and Dim symbols)
    guards: list = field(default_factory=list)  # sympy booleans over the Dim symbols
    shapes: ExportShapes | None = None  # the trace's ShapeEnv (also gm.meta["dynamic"])


def trace_for_export(
    fn, args: tuple, kwargs: dict, dims: dict[tuple[int, int], Dim], leaf_names: list[str]
) -> Traced:
    leaves, spec = tree_flatten((args, kwargs))
    shapes = ExportShapes()
    tracer = CaptureTracer(shapes)
    traced, index, kinds, names, declared = [], [], [], [], []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, np.ndarray):
            mine = {k: d for (j, k), d in dims.items() if j == i}
            shape = shapes.export_dims(i, leaf_names[i], leaf.shape, mine)
            declared.append(shape)
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
        with deciding(shapes), traced_conversions(TracedArray), creating(tracer):  # np.asarray, np.zeros & co
            result = fn(*targs, **tkwargs)
            if updated_arrays(tracer, traced):
                raise ExportError(f"cannot export {getattr(fn, '__qualname__', fn)}: it updates an argument (or "
                                  f"a captured array) in place, which a library function's outputs cannot "
                                  f"express; return the new value instead")
            gm, template = _finish(tracer, traced, index, result)
    except GraphBreak as e:
        raise ExportError(f"cannot export {getattr(fn, '__qualname__', fn)}: {e}") from None
    guards = runtime_guards(shapes, _dim_sources(dims, leaf_names))
    gm.meta["dynamic"] = shapes  # lowering (build_ir) may use what the guards imply, and ask nothing new
    return Traced(gm, index, names, kinds, spec, tree_flatten(result)[1], template, dims, declared, guards, shapes)


def _finish(tracer: CaptureTracer, traced: list, index: list[int], result):
    out_leaves, _ = tree_flatten(result)
    graph_outs, template = [], []
    for leaf in out_leaves:
        if isinstance(leaf, TracedArray):  # an input returned as it is: the library writes a copy
            template.append(("graph", len(graph_outs)))
            graph_outs.append(leaf.node)
        elif isinstance(leaf, np.ndarray):
            template.append(("graph", len(graph_outs)))
            graph_outs.append(tracer.lift(leaf).node)
        elif hasattr(leaf, "node"):  # a SymInt result: a library returns arrays, so specialise it
            template.append(("const", tracer.dyn.specialize(tracer.dyn.expr_of(leaf))))
        else:
            template.append(("const", leaf))
    _order_placeholders(tracer)
    for node in tracer.graph.nodes:  # after `M == N` was guarded, the graph speaks of N alone
        if node.op == "placeholder":
            m = node.meta["val"]
            node.meta["val"] = ValMeta(m.dtype, tracer.dyn.canonical(m.shape))
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


def _placeholder_name(label: str, i: int) -> str:
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in label).strip("_")
    return name if name.isidentifier() else f"arg{i}"


def _dtype(arr: np.ndarray, label: str):
    try:
        return D.from_numpy(arr.dtype)
    except TypeError as e:
        raise TypeError(f"argument {label}: {e}") from None


def _dim_sources(dims: dict, leaf_names: list[str]) -> dict[str, str]:
    """Dim name -> where it first occurs (`x.shape[0]`)."""
    out: dict[str, str] = {}
    for (i, k), d in dims.items():
        out.setdefault(d.name, f"{leaf_names[i]}.shape[{k}]")
    return out
