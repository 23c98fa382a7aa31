"""Fused regions of a captured graph: the elementwise cone feeding a node, as a GraphModule of its own
compiled with symbolic sizes, and the example chunks that compile it for each pattern of chunk
sizes (aot.compile specialises sizes 0 and 1; 2 and up share one entry)."""
from __future__ import annotations

import itertools

import numpy as np

from ..fx import Graph, GraphModule

# ops a region may hold besides elementwise ones: creations of one element (broadcast scalars)
SCALAR_CREATIONS = ("constant", "full", "full_like")


def op_name(node) -> str | None:
    return getattr(node.target, "name", None) if node.op == "call_function" else None


def traits(node) -> frozenset:
    target = node.target if node.op == "call_function" else None
    opdef = getattr(target, "opdef", None)
    return opdef.traits if opdef is not None else frozenset()


def fusible(node) -> bool:
    """Whether `node` computes elementwise, so that a chunk of it needs only chunks of its operands."""
    if "elementwise" in traits(node):
        return True
    return op_name(node) in SCALAR_CREATIONS and all(d == 1 for d in node.meta["val"].shape)


def node_arrays(node) -> list:
    """The fx nodes among a node's operands (positional and keyword), in order, once each."""
    out = []
    for a in [*node.args, *node.kwargs.values()]:
        for x in a if isinstance(a, (tuple, list)) else (a,):
            if hasattr(x, "op") and x not in out:
                out.append(x)
    return out


def cone(result, pending: set) -> tuple[list, list]:
    """(the nodes computing `result` inside its region, in graph order; the region's inputs): the
    region extends through the nodes in `pending` (fusible ones not computed on their own). A
    `result` not pending is the region's one input, and it has no members."""
    if result not in pending:
        return [], [result]
    members, inputs, stack = set(), [], [result]
    while stack:
        n = stack.pop()
        if n in members:
            continue
        members.add(n)
        for a in node_arrays(n):
            if a in pending:
                stack.append(a)
            elif a not in inputs:
                inputs.append(a)
    order = {n: i for i, n in enumerate(result.graph.nodes)}
    inputs.sort(key=order.__getitem__)
    return sorted(members, key=order.__getitem__), inputs


def region_module(members: list, inputs: list, result, tail=None) -> GraphModule:
    """A GraphModule computing `result` from `inputs` through `members`; `tail(graph, value)` adds
    the step after it (a partial reduction, an FFT) and returns its node."""
    g = Graph()
    env = {}
    for i, n in enumerate(inputs):
        env[n] = g.placeholder(f"in{i}")
        env[n].meta["val"] = n.meta["val"]
    for n in members:
        env[n] = g.node_copy(n, lambda a: env[a])
    out = env[result]
    if tail is not None:
        out = tail(g, out)
    g.output(out)
    return GraphModule({}, g)


def reduce_module(op: str, attrs: dict) -> GraphModule:
    """A GraphModule of one reduction op on one input of `rank` dims (an aggregate step)."""
    from ..frontend.core import ops

    g = Graph()
    x = g.placeholder("in0")
    g.output(g.call_function(ops[op], (x,), dict(attrs)))
    return GraphModule({}, g)


def arg_partial_module(op: str, axis: int) -> GraphModule:
    """A GraphModule giving one chunk's (max, argmax) along `axis` (or min, argmin), kept as dims."""
    from ..frontend.core import ops

    g = Graph()
    x = g.placeholder("in0")
    value = g.call_function(ops[op[3:]], (x,), {"axes": (axis,), "keepdims": True})
    index = g.call_function(ops[op], (x,), {"axis": axis, "keepdims": True})
    g.output((value, index))
    return GraphModule({}, g)


def example_patterns(chunks: list[tuple], fixed: dict[int, int] | None = None) -> list[tuple]:
    """Per pattern of chunk sizes along each output dim (0, 1, 2 or more), one size per dim that
    stands for it. Sizes of 2 and up are distinct per dim and from the `fixed` dims' sizes (dim ->
    size, kept), so that aot's symbolic shapes do not take two dims for one."""
    fixed = fixed or {}
    stand_ins = (n for n in itertools.count(2) if n not in fixed.values())
    per_dim = []
    for d, c in enumerate(chunks):
        if d in fixed:
            per_dim.append([fixed[d]])
        else:
            many = next(stand_ins)
            per_dim.append(sorted({s if s < 2 else many for s in c}))
    return list(itertools.product(*per_dim))


def example_block(shape_of_output: tuple, operand_shape: tuple, dtype) -> np.ndarray:
    """A zero chunk of an operand aligned to the output's trailing dims (its size-1 dims broadcast)."""
    lead = len(shape_of_output) - len(operand_shape)
    shape = tuple(1 if n == 1 else shape_of_output[lead + d] for d, n in enumerate(operand_shape))
    return np.zeros(shape, dtype)
