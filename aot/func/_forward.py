"""Forward mode: tangents pushed through a traced function with each row's jvp rule."""
from __future__ import annotations

import operator

from ir.opdef import OPDEFS, MissingRule

from ._interpret import fit
from ._reverse import inexact
from ._trace import Traced


def fit_tangent(t, out):
    """A rule's tangent as the output's: broadcast to its shape, in its dtype."""
    return fit(t, out, summed=False)


def push_forward(t: Traced, env: dict, tangents: dict) -> dict:
    """node -> tangent (absent: zero) for every node, from the placeholders' `tangents`; env holds
    the caller's primal values (interpret.replay)."""
    tan = {n: v for n, v in tangents.items() if v is not None}
    for node in t.nodes:
        if node.target is operator.getitem:
            parent, i = node.args
            if parent in tan and tan[parent][i] is not None:
                tan[node] = tan[parent][i]
            continue
        ts = [tan.get(a) for a in node.args]
        if all(x is None for x in ts) or not inexact(node):
            continue
        out = _jvp(node, env, ts)
        if out is not None:
            tan[node] = out
    return tan


def _jvp(node, env: dict, ts: list):
    name = node.target.name
    d = OPDEFS[name]
    if d.jvp is None:
        if "not_differentiable" in d.markers:
            return None
        raise MissingRule("jvp", name)
    out = env[node]
    res = d.jvp(ts, *[env[a] for a in node.args], out=out, **node.kwargs)
    if res is None:
        return None
    if isinstance(out, tuple):
        return tuple(None if r is None or o.meta.dtype.kind not in "fc" else fit_tangent(r, o)
                     for r, o in zip(res, out))
    return fit_tangent(res, out)
