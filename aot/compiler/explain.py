"""aot.explain(fn, *args): what aot.compile would capture for these arguments, without running
native code: the graphs, their ops, the guards, and the reasons for any graph break."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..fx._pytree import tree_flatten
from .capture import GraphBreak, capture
from .guards import build_guards, leaf_sources


@dataclass
class ExplainOutput:
    graphs: list = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list[str] = field(default_factory=list)
    op_count: int = 0
    ops_per_graph: list[list[str]] = field(default_factory=list)
    out_guards: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            lines += [f"  {i + 1}. {r}" for i, r in enumerate(self.break_reasons)]
        for i, ops in enumerate(self.ops_per_graph):
            counts = Counter(ops)
            lines.append(f"Ops per Graph {i + 1}: " + ", ".join(f"{k} x{v}" if v > 1 else k for k, v in counts.items()))
        if self.out_guards:
            lines.append("Out Guards:")
            lines += [f"  {g}" for g in self.out_guards]
        return "\n".join(lines)


def explain(fn, *args, **kwargs) -> ExplainOutput:
    from .api import _unwrap_module

    body, module = _unwrap_module(fn)
    leaves, spec = tree_flatten((args, kwargs)) if kwargs else tree_flatten(args)
    out = ExplainOutput()
    try:
        cap = capture(body, args, kwargs, leaves, spec, module=module, dynamic=False)
    except GraphBreak as e:
        out.graph_break_count = 1
        out.break_reasons.append(str(e))
        return out
    ops = [getattr(n.target, "name", str(n.target)) for n in cap.gm.graph.nodes if n.op == "call_function"]
    out.graphs = [cap.gm]
    out.graph_count = 1
    out.ops_per_graph = [ops]
    out.op_count = len(ops)
    out.out_guards = build_guards(cap, leaves, names=leaf_sources(body, args, kwargs)).texts
    return out
