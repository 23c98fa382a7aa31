"""vmap: a traced function's graph replayed on batched values with each row's batching rule.

Each value carries its batch dim (None: the same for every example); a node whose operands are
all unbatched is emitted as it is, once for the whole batch."""
from __future__ import annotations

import operator

from ir.opdef import OPDEFS, MissingRule

from . import _onehot
from ._interpret import emit_node
from ._onehot import OneHot
from ._trace import Traced


def batch_replay(t: Traced, tracer, env: dict, dims: dict) -> None:
    """Fill env (node -> value) and dims (node -> batch dim) for every node of t. A value may be a
    OneHot (a Jacobian's directions, _onehot.py) until an op needs it dense."""
    for node in t.nodes:
        if node.target is operator.getitem:
            parent, i = node.args
            env[node], dims[node] = env[parent][i], _at(dims[parent], i)
            continue
        ds = [dims[a] for a in node.args]
        vals = [env[a] for a in node.args]
        if all(d is None for d in ds):
            env[node], dims[node] = emit_node(tracer, node, vals), None
            continue
        if any(isinstance(v, OneHot) for v in vals):
            hit = _onehot.rule(node.target.name, vals, ds, node.kwargs)
            if hit is not None:
                env[node], dims[node] = hit
                continue
            vals = [dense(v) for v in vals]
        d = OPDEFS[node.target.name]
        if d.batch is None:
            raise MissingRule("batch", node.target.name)
        env[node], dims[node] = d.batch(vals, ds, **node.kwargs)


def dense(v):
    return v.materialise() if isinstance(v, OneHot) else v


def _at(d, i):
    return d[i] if isinstance(d, tuple) else d
