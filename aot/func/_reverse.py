"""Reverse mode: the backward graph of a traced function, from each row's vjp rule.

`backward` walks the replayed nodes from the seeded outputs back to the wanted placeholders,
calling each row's vjp on the caller's values; only nodes that depend on a wanted input and hold
floating or complex values take part. Cotangents reaching a value several times are summed.
"""
from __future__ import annotations

import operator

from ir.opdef import OPDEFS, MissingRule

from ..ops._transforms import emit, zeros_like
from ._interpret import fit
from ._trace import Traced


def inexact(node) -> bool:
    """Whether a node holds floating or complex values (a multi-result node: one of them)."""
    val = node.meta["val"]
    return any(v.dtype.kind in "fc" for v in (val if isinstance(val, tuple) else (val,)))


def depending(t: Traced, sources) -> set:
    """The nodes whose value depends on one of `sources` (themselves included)."""
    out = set(sources)
    for node in t.nodes:
        if any(a in out for a in node.args[:1 if node.target is operator.getitem else None]
               if hasattr(a, "op")) and inexact(node):
            out.add(node)
    return out


def fit_cotangent(c, x):
    """A rule's cotangent for operand x, as x's: broadcast dims summed, x's dtype."""
    return fit(c, x, summed=True)


def _add(ct: dict, node, c) -> None:
    ct[node] = c if node not in ct else emit("add", ct[node], c)


def backward(t: Traced, env: dict, seeds: dict, wanted: list) -> list:
    """Cotangents of the `wanted` placeholders (None: zero) given the cotangents `seeds` of outputs
    (node -> array); env holds every node's value in the caller (interpret.replay)."""
    live = depending(t, wanted)
    ct = {n: fit_cotangent(g, env[n]) for n, g in seeds.items() if n in live and g is not None}
    for node in reversed(t.nodes):
        if node not in live or node not in ct:
            continue
        g = ct.pop(node)
        if node.target is operator.getitem:
            parent, i = node.args
            slots = list(ct.get(parent) or [None] * len(env[parent]))
            slots[i] = g if slots[i] is None else emit("add", slots[i], g)
            ct[parent] = slots
            continue
        _vjp(node, env, g, live, ct)
    return [ct.get(n) for n in wanted]


def _vjp(node, env: dict, g, live: set, ct: dict) -> None:
    name = node.target.name
    d = OPDEFS[name]
    if d.vjp is None:
        if "not_differentiable" in d.markers:
            return
        raise MissingRule("vjp", name)
    out = env[node]
    if isinstance(g, list):  # a multi-result op: zeros for the results no cotangent reached
        g = tuple(zeros_like(o) if c is None else c for c, o in zip(g, out))
    vals = [env[a] for a in node.args]
    cts = d.vjp(g, *vals, out=out, **node.kwargs)
    for a, c in zip(node.args, cts, strict=True):
        if c is not None and a in live:
            _add(ct, a, fit_cotangent(c, env[a]))
