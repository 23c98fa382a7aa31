"""Lower a captured fx graph of core ops to an ir function.

Every call_function node targets a core op (aot.frontend.core.ops.<name>) whose kwargs are the
op's attributes; its result type is re-inferred by the registry and must equal the type the
tracer recorded in meta["val"], so the two stages cannot silently disagree.
"""
from __future__ import annotations

import operator

import ir


class LoweringError(RuntimeError):
    pass


def _op_name(target) -> str | None:
    return getattr(target, "op_name", None) or getattr(target, "name", None)


def graph_to_ir(gm, name: str = "main", module: ir.Module | None = None) -> ir.Module:
    m = module or ir.Module(name)
    dyn = gm.meta.get("dynamic") if hasattr(gm, "meta") else None
    if dyn is not None:  # declare the size symbols (ranges, hints) and the guards over them
        for info in dyn.symbol_infos():
            m.declare_symbol(info)
        m.guards = [g.expr for g in dyn.env.guards if getattr(g.expr, "free_symbols", None)]
    nodes = list(gm.graph.nodes)
    ph = [n for n in nodes if n.op == "placeholder"]
    types = [n.meta["val"].ir_type for n in ph]
    f, b = ir.new_func(m, name, types, [n.name for n in ph])
    env = {n: a for n, a in zip(ph, f.args)}
    for n in nodes:
        if n.op == "placeholder":
            continue
        if n.op == "output":
            outs = n.args[0]
            outs = outs if isinstance(outs, (tuple, list)) else (outs,)
            b.ret(*[env[o] for o in outs])
            continue
        if n.op != "call_function":
            raise LoweringError(f"node {n.format_node()}: only call_function nodes of core ops can be lowered")
        b.loc = n.meta.get("loc")
        if n.target is operator.getitem:
            env[n] = env[n.args[0]][n.args[1]]
            continue
        opname = _op_name(n.target)
        if opname is None or opname not in ir.OPDEFS:
            raise LoweringError(f"node {n.format_node()}: target {n.target!r} is not a core op")
        attrs = dict(n.kwargs) if dyn is None else {k: _canonical_attr(dyn, v) for k, v in n.kwargs.items()}
        try:
            op = b.create(opname, [env[a] for a in n.args], attrs)
        except ir.OpError as e:
            where = f" (from {n.meta['loc']})" if n.meta.get("loc") else ""
            raise LoweringError(f"node {n.name} = {opname}{where}: {e}") from e
        env[n] = op.results[0] if len(op.results) == 1 else tuple(op.results)
    return m


def _canonical_attr(dyn, v):
    """An attribute with the ShapeEnv's final replacements applied: a size recorded in an
    attribute (n=2*x.shape[0]) before a later guard specialised its symbol must follow it."""
    if isinstance(v, (tuple, list)):
        return type(v)(_canonical_attr(dyn, x) for x in v)
    if getattr(v, "free_symbols", None):
        from ir.symbols import norm_dim

        e = dyn.env.simplify(v)
        return norm_dim(e) if getattr(e, "is_Integer", False) or e.free_symbols else e
    return v
