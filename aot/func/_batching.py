"""vmap: a traced function's graph replayed on batched values with each row's batching rule.

Each value carries its batch dim (None: the same for every example); a node whose operands are
all unbatched is emitted as it is, once for the whole batch."""
from __future__ import annotations

import operator

from ir.opdef import OPDEFS, MissingRule

from ._interpret import emit_node
from ._trace import Traced


def batch_replay(t: Traced, tracer, env: dict, dims: dict) -> None:
    """Fill env (node -> value) and dims (node -> batch dim) for every node of t."""
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
        d = OPDEFS[node.target.name]
        if d.batch is None:
            raise MissingRule("batch", node.target.name)
        env[node], dims[node] = d.batch(vals, ds, **node.kwargs)


def _at(d, i):
    return d[i] if isinstance(d, tuple) else d
