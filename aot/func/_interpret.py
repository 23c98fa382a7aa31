"""Replaying a traced function's graph into the capture that called it.

`bind` maps the traced function's placeholders to the caller's values (its arguments, the outer
arrays it closed over, the arrays it lifted from Python); `emit_node` re-emits one node there.
The reverse, forward and batching interpreters run these, adding each row's rule alongside.
"""
from __future__ import annotations

import operator

from ..compiler.capture import CaptureTracer, TracedArray
from ..ops._transforms import broadcast_to, emit, sum_to
from ._trace import Traced


def bind(t: Traced, tracer: CaptureTracer, args: list) -> dict:
    """node -> caller value for the placeholders; args: the caller's value per flat argument leaf."""
    env = {}
    for node, a in zip(t.inputs, args, strict=True):
        if node is not None:
            env[node] = tracer.as_value(a)
    for node, outer in t.free:
        env[node] = tracer.as_value(outer)  # an array of a capture further out is lifted in turn
    for node, fetch in t.lifted:
        env[node] = tracer.lift(fetch(), fetch)
    return env


def emit_node(tracer: CaptureTracer, node, vals: list):
    if node.target is operator.getitem:
        return vals[0][node.args[1]]
    return tracer.emit(node.target.name, vals, dict(node.kwargs))


def operands(node, env: dict) -> list:
    return [env[a] for a in node.args[:1]] if node.target is operator.getitem else [env[a] for a in node.args]


def replay(t: Traced, tracer: CaptureTracer, env: dict) -> dict:
    """Emit every node of `t` into `tracer` (env: the bound placeholders; filled in place)."""
    for node in t.nodes:
        env[node] = emit_node(tracer, node, operands(node, env))
    return env


def results(t: Traced, env: dict) -> list:
    """The traced function's flat result leaves, as caller values (constants as they are)."""
    return [env[v] if kind == "node" else v for kind, v in t.outputs]


def tracer_of(*values) -> CaptureTracer:
    """The capture emitting for these values: the innermost one any of them is seen from."""
    for v in values:
        if isinstance(v, TracedArray):
            return v.tracer
    raise TypeError("no traced array among the values")


def fit(v, like, *, summed: bool):
    """A rule's cotangent (summed=True: over the dims broadcasting added) or tangent (broadcast) as
    `like`'s: its shape, its dtype (complex to real: the real part, torch's convention)."""
    if tuple(v.meta.shape) != tuple(like.meta.shape):
        if summed and v.ndim >= like.ndim:
            v = sum_to(v, like.meta.shape)
        if tuple(v.meta.shape) != tuple(like.meta.shape):
            v = broadcast_to(v, like.meta.shape)
    if v.meta.dtype.is_complex and not like.meta.dtype.is_complex:
        v = emit("real", v)
    if v.meta.dtype != like.meta.dtype:
        v = emit("cast", v, dtype=like.meta.dtype)
    return v
