"""A function traced inside the capture that calls it, as a graph of core ops the transforms read.

A transform called on traced arrays (inside aot.compile's capture, aot.export's, or another
transform's) traces its function with a `SubTracer` whose placeholders stand for the arguments.
Arrays of the enclosing captures that the function uses (closures: the primal values a pullback
reads, a vmapped function's unmapped weights) become placeholders too, its free variables; the
interpreters (_interpret.py) map every placeholder back to the enclosing capture's values, so what a
transform emits lands in the graph that called it and composes with whatever transforms that one.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ir.records import field, record

from ..compiler import nested
from ..compiler.capture import CaptureTracer, GraphBreak, TracedArray, user_frame_summary
from ..compiler.creations import creating
from ..fx._pytree import tree_flatten, tree_unflatten


class TransformError(ValueError):
    """A transform was applied to what it does not accept; the message names the argument."""


class SubTracer(CaptureTracer):
    """The capture of a transformed function, nested in `parent` (and sharing its shape env)."""

    def __init__(self, parent: CaptureTracer, what: str):
        super().__init__(parent.dyn)
        self.parent = parent
        self.outer = (parent, *parent.outer)
        self.what = what  # the transform, for messages
        self.free: dict = {}  # (id, node) of an outer array -> (placeholder array, outer array)
        self.closed = False  # the function returned: its arrays may not be used any more

    def emit(self, op, operands, attrs):
        if self.closed:
            raise TransformError(f"{self.what}: an array traced inside the transformed function is used after the "
                                 f"function returned (kept in a global or a closure); return it instead "
                                 f"(at {user_frame_summary()})")
        return super().emit(op, operands, attrs)

    def as_value(self, v):
        if isinstance(v, TracedArray) and v._tracer is not self:
            return self._free(v)
        return super().as_value(v)

    def _free(self, v: TracedArray) -> TracedArray:
        if v._tracer not in self.outer:
            raise TransformError(f"{self.what}: an array traced inside another transformed function is used after "
                                 f"that function returned (kept in a global or a closure); return it instead "
                                 f"(at {user_frame_summary()})")
        key = (id(v), v.node)
        hit = self.free.get(key)
        if hit is None:
            hit = self.free[key] = (self.placeholder(f"free_{len(self.free)}", v.meta), v)
        return hit[0]

    def assign(self, target, new) -> None:
        if isinstance(target, TracedArray) and target._tracer is not self:
            raise GraphBreak(f"{self.what}: an in-place update of an array from outside the transformed "
                             f"function at {user_frame_summary()}; pass it as an argument, or copy it first")
        super().assign(target, new)


@record
class Traced:
    """A traced function: its graph, and how its placeholders and outputs map to the caller's values."""

    tracer: SubTracer
    inputs: list  # per flat argument leaf: its placeholder node, or None (a constant leaf)
    in_spec: Any
    outputs: list  # per flat result leaf: ("node", node) or ("const", value)
    out_spec: Any
    nodes: list = field(default_factory=list)  # the call_function nodes, in order

    @property
    def free(self) -> list:
        """(placeholder node, outer array) of each free variable."""
        return [(ph.node, outer) for ph, outer in self.tracer.free.values()]

    @property
    def lifted(self) -> list:
        """(placeholder node, fetch) of each array captured from Python (a global, a parameter)."""
        return list(zip(self.tracer._lifted_nodes, self.tracer.lifted, strict=True))


def is_array(x) -> bool:
    return isinstance(x, (TracedArray, np.ndarray))


def trace(fn, args: tuple, parent: CaptureTracer, what: str, metas: list | None = None) -> Traced:
    """Trace fn(*args) inside `parent`. Array leaves (of `parent`, or numpy arrays it lifts) become
    placeholders, typed `metas[i]` where given (vmap's per-example types); other leaves stay as they are."""
    leaves, spec = tree_flatten(args)
    sub = SubTracer(parent, what)
    traced, inputs = [], []
    for i, leaf in enumerate(leaves):
        if is_array(leaf):
            meta = metas[i] if metas is not None and metas[i] is not None else parent.as_value(leaf).meta
            ph = sub.placeholder(f"arg{i}", meta)
            traced.append(ph)
            inputs.append(ph.node)
        else:
            traced.append(leaf)
            inputs.append(None)
    with nested.running(sub), creating(sub):
        try:
            result = fn(*tree_unflatten(traced, spec))
        except GraphBreak as e:
            if str(e).startswith(f"{what}: "):
                raise
            raise GraphBreak(f"{what}: {e}") from None
        out_leaves, out_spec = tree_flatten(result)
        outputs = []
        for leaf in out_leaves:
            if is_array(leaf) or isinstance(leaf, np.generic):  # a numpy scalar: a 0-d constant
                outputs.append(("node", sub.as_value(leaf).node))
            elif hasattr(leaf, "node") and sub.dyn is not None:  # a SymInt: a number in this shape env
                outputs.append(("const", sub.dyn.specialize(sub.dyn.expr_of(leaf))))
            else:
                outputs.append(("const", leaf))
        updated = [i for i, t in enumerate(traced) if isinstance(t, TracedArray) and t.node.op != "placeholder"]
    sub.closed = True
    if updated:
        raise GraphBreak(f"{what}: the function updates its argument #{updated[0]} in place; transforms need "
                         f"functions that return new values (copy the argument first)")
    nodes = [n for n in sub.graph.nodes if n.op == "call_function"]
    return Traced(sub, inputs, spec, outputs, out_spec, nodes)


def op_name(node) -> str | None:
    return None if node.target is operator.getitem else node.target.name
