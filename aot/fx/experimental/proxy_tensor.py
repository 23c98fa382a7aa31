"""make_fx: trace a numpy function into a GraphModule of aot's core ops (torch's proxy_tensor).

tracing_mode:
  "real"     trace with the given arrays; node.meta["val"] holds the real intermediate arrays.
  "fake"     trace shapes and dtypes only; node.meta["val"] holds (dtype, shape).
  "symbolic" dims are size symbols (a ShapeEnv, 0/1 specialised, duck sized); node.meta["val"]
             holds symbolic shapes and the graph runs on other sizes: symbolic sizes inside op
             attributes are computed from the inputs' shapes by `sym_size` nodes.
The GraphModule takes the flattened arguments of `f` and returns its output structure. Arrays `f`
captures from outside become constants (`get_attr` nodes).
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from .._pytree import tree_flatten, tree_unflatten
from .. import Graph, GraphModule

__all__ = ["make_fx", "sym_size"]

_MODES = ("real", "fake", "symbolic")


def sym_size(x, dim: int) -> int:
    """x.shape[dim]: a size read at run time in graphs traced with tracing_mode="symbolic"."""
    return x.shape[dim]


def make_fx(f: Callable, decomposition_table=None, tracing_mode: str = "real", _allow_non_fake_inputs=False,
            pre_dispatch: bool = False, record_module_stack: bool = False, **kwargs) -> Callable:
    if tracing_mode not in _MODES:
        raise ValueError(f"make_fx: tracing_mode must be one of {_MODES}, got {tracing_mode!r}")
    if decomposition_table:
        raise NotImplementedError("make_fx: decomposition_table is not supported; graphs hold aot's core ops")

    def wrapped(*args):
        from ...compiler.capture import capture

        leaves, spec = tree_flatten(args)
        cap = capture(f, args, {}, leaves, spec, dynamic=tracing_mode == "symbolic")
        if cap.mutations:
            raise NotImplementedError("make_fx: the function updates an argument in place, which a graph "
                                      "(a pure function of its inputs) cannot express; return the new value")
        gm = _rebuild(cap, leaves)
        if tracing_mode == "real":
            _record_real_values(gm, leaves)
        return gm

    return wrapped


def _rebuild(cap, leaves: list) -> GraphModule:
    """The capture's graph with one placeholder per flattened argument, lifted arrays as constants,
    symbolic attributes as sym_size arithmetic, and f's output structure."""
    old = cap.gm.graph
    g = Graph()
    env: dict = {}
    consts: dict[str, Any] = {}
    old_ph = [n for n in old.nodes if n.op == "placeholder"]
    arg_ph = old_ph[: len(cap.input_index)]
    array_pos = {leaf: k for k, leaf in enumerate(cap.input_index)}
    for i in range(len(leaves)):
        node = g.placeholder(f"arg{i}")
        if i in array_pos:
            src = arg_ph[array_pos[i]]
            node.meta.update(src.meta)
            env[src] = node
    for k, (src, fetch) in enumerate(zip(old_ph[len(cap.input_index):], cap.lifted)):
        name = f"_tensor_constant{k}"
        consts[name] = fetch()
        env[src] = g.get_attr(name)
        env[src].meta.update(src.meta)
    sizes = _SymSizes(g, [env[n] for n in arg_ph]) if cap.dyn is not None else None
    for n in old.nodes:
        if n.op in ("placeholder", "output"):
            continue
        kwargs = {k: sizes.materialize(v) for k, v in n.kwargs.items()} if sizes else dict(n.kwargs)
        new = g.call_function(n.target, tuple(env[a] if hasattr(a, "op") else a for a in n.args), kwargs)
        new.meta.update(n.meta)
        env[n] = new
    outs = old.output_node().args[0]
    flat = []
    for kind, k in cap.out_template:
        if kind == "graph":
            flat.append(env[outs[k]])
        elif kind == "input":
            flat.append(g_placeholder(g, k))
        else:
            flat.append(k)
    g.output(tree_unflatten(flat, cap.out_spec))
    gm = GraphModule(consts, g)
    gm.meta["shape_env"] = cap.dyn.env if cap.dyn is not None else None
    gm.meta["dynamic"] = cap.dyn  # lets aot's lowering use the guards as facts
    return gm


def g_placeholder(g: Graph, i: int):
    return [n for n in g.nodes if n.op == "placeholder"][i]


class _SymSizes:
    """Turns sympy size expressions in attributes into graph arithmetic over `sym_size` nodes."""

    def __init__(self, g: Graph, placeholders: list):
        self.g = g
        self.sources: dict = {}  # symbol -> (placeholder, dim)
        for ph in placeholders:
            for d, dim in enumerate(ph.meta["val"].shape):
                if getattr(dim, "is_Symbol", False):
                    self.sources.setdefault(dim, (ph, d))
        self.cache: dict = {}

    def materialize(self, v):
        if isinstance(v, (tuple, list)):
            return type(v)(self.materialize(x) for x in v)
        if hasattr(v, "free_symbols") and v.free_symbols:
            return self._expr(v)
        return v

    def _expr(self, e):
        import sympy

        if e in self.cache:
            return self.cache[e]
        if e.is_Integer:
            return int(e)
        if e.is_Symbol:
            ph, d = self.sources[e]
            out = self.g.call_function(sym_size, (ph, d))
        elif isinstance(e, sympy.floor):
            num, den = sympy.together(e.args[0]).as_numer_denom()
            out = self.g.call_function(operator.floordiv, (self._expr(num), self._expr(den)))
        else:
            fn = {sympy.Add: operator.add, sympy.Mul: operator.mul, sympy.Mod: operator.mod,
                  sympy.Max: max, sympy.Min: min}.get(type(e))
            if fn is None:
                raise NotImplementedError(f"make_fx: cannot express the size {e} in the graph")
            args = [self._expr(a) for a in e.args]
            out = args[0]
            for a in args[1:]:
                out = self.g.call_function(fn, (out, a))
        self.cache[e] = out
        return out


def _record_real_values(gm: GraphModule, leaves: list) -> None:
    """tracing_mode="real": keep each node's real value (torch keeps the real tensor in meta["val"])."""
    from ..interpreter import Interpreter

    class _Recorder(Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            if n.op != "output":
                n.meta["val"] = out
            return out

    _Recorder(gm).run(*leaves)
