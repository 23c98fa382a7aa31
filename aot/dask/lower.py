"""A captured graph lowered onto dask.array (see the package docstring).

A Plan is made once per argument signature: the capture (on stand-ins of the full shapes) and the
compiled regions, keyed by the node they compute. Each call walks the graph with the call's
arrays: a node's value is a dask array, a numpy constant, or pending (fusible, computed inside the
region of whichever node needs it).
"""
from __future__ import annotations

import threading
import uuid

import numpy as np

from ir.logger import get_logger

from .._pytree import tree_flatten, tree_unflatten
from ..frontend import UnsupportedError
from . import blocks, is_dask_array, regions
from .regions import node_arrays, op_name

log = get_logger(__name__)

PENDING = object()  # a fusible node's value: computed inside a region
# dask.array's own operation for each layout op (operand, attrs) -> dask array
_LAYOUT = {
    "transpose": lambda x, a: x.transpose(a["perm"]),
    "reshape": lambda x, a: x.reshape(tuple(a["shape"])),
    "expand_dims": lambda x, a: _da().expand_dims(x, tuple(a["axes"])),
    "squeeze": lambda x, a: x.squeeze(axis=tuple(a["axes"])),
    "flip": lambda x, a: _da().flip(x, tuple(a["axes"])),
    "broadcast_to": lambda x, a: _da().broadcast_to(x, tuple(a["shape"])),
    "slice": lambda x, a: x[tuple(slice(*t) for t in zip(a["starts"], a["stops"], a["steps"]))],
}
_ARG_REDUCTIONS = ("argmax", "argmin")
_REDUCTIONS = ("sum", "prod", "max", "min", "any", "all")
_FFTS = ("fft", "rfft", "irfft")
_plans_lock = threading.Lock()


def _da():
    import dask.array as da

    return da


def signature_of(leaves: list) -> tuple:
    out = []
    for x in leaves:
        if is_dask_array(x):
            out.append(("dask", x.dtype.str, x.shape, x.chunks))
        elif isinstance(x, np.ndarray):
            out.append(("numpy", x.dtype.str, x.shape))
        else:
            out.append(("value", type(x).__name__, repr(x)))
    return tuple(out)


def plan_for(cf, args: tuple, kwargs: dict):
    leaves, spec = tree_flatten((args, kwargs)) if kwargs else tree_flatten(args)
    key = signature_of(leaves)
    with _plans_lock:
        plans = cf.__dict__.setdefault("_dask_plans", {})
        plan = plans.get(key)
        if plan is None:
            plan = plans[key] = Plan(cf, args, kwargs, leaves, spec)
    return plan


def _stand_in(x):
    """A numpy array of dask array `x`'s shape and dtype holding one element (the capture reads
    shapes and dtypes only)."""
    return np.broadcast_to(np.zeros((), x.dtype), x.shape) if is_dask_array(x) else x


class Plan:
    def __init__(self, cf, args, kwargs, leaves, spec):
        from ..compiler.capture import capture

        self.cf = cf
        stand = [_stand_in(x) for x in leaves]
        sargs = tree_unflatten(stand, spec)
        sargs, skw = sargs if kwargs else (sargs, {})
        self.cap = capture(cf._fn, sargs, skw, stand, spec, module=cf._module, dynamic=False)
        if self.cap.mutations:
            raise UnsupportedError("aot.compile with dask arrays: the function updates an argument in place; "
                                   "dask arrays are immutable (return the new value instead)")
        self.compiled: dict = {}  # (step, node name) -> (aot.compile'd region, its dask token)
        self.token = uuid.uuid4().hex
        self._lock = threading.Lock()

    def run(self, args: tuple, kwargs: dict):
        leaves, _ = tree_flatten((args, kwargs)) if kwargs else tree_flatten(args)
        inputs = [leaves[i] for i in self.cap.input_index] + [f() for f in self.cap.lifted]
        outs = _Lowering(self, inputs).outputs()
        flat = [outs[k] if kind == "graph" else (leaves[k] if kind == "input" else k)
                for kind, k in self.cap.out_template]
        return tree_unflatten(flat, self.cap.out_spec)

    def region_fn(self, key, make, examples):
        """(the compiled region under `key`, made by `make()` and compiled for each example call;
        its token)."""
        with self._lock:
            got = self.compiled.get(key)
            if got is None:
                from ..compiler.api import CompiledFunction

                # one thread per task: dask runs the chunks in parallel
                fn = CompiledFunction(make(), dynamic=True, options={"num_threads": 1})
                for ex in examples:
                    fn(*ex)
                got = self.compiled[key] = (fn, f"{self.token}-{'-'.join(map(str, key))}")
        return got


class _Lowering:
    """One walk of the plan's graph over one call's arrays."""

    def __init__(self, plan: Plan, inputs: list):
        self.plan, self.vals, self.pending = plan, {}, set()
        placeholders = [n for n in plan.cap.gm.graph.nodes if n.op == "placeholder"]
        for node, x in zip(placeholders, inputs, strict=True):
            self.vals[node] = x

    def outputs(self) -> list:
        for node in self.plan.cap.gm.graph.nodes:
            if node.op == "call_function":
                self.vals[node] = self._value(node)
            elif node.op == "output":
                return [self.materialize(a) for a in node.args[0]]
        raise AssertionError("graph without an output")

    def _value(self, node):
        if not any(_lazy(self.vals[a]) or self.vals[a] is PENDING for a in node_arrays(node)):
            return self._eager(node)
        name = op_name(node)
        if regions.fusible(node):
            self.pending.add(node)
            return PENDING
        if name in _REDUCTIONS:
            return self._reduce(node)
        if name in _ARG_REDUCTIONS:
            return self._arg_reduce(node)
        if name in _FFTS:
            return self._fft(node)
        if name in _LAYOUT:
            x = self.materialize(node.args[0])
            try:
                return self._checked(node, _LAYOUT[name](x, node.kwargs))
            except (NotImplementedError, ValueError) as e:  # dask.array's own limits (a reshape)
                raise UnsupportedError(f"aot.compile with dask arrays: {name} of a {x.shape} array in chunks "
                                       f"{x.chunks} (graph node {node.name}): dask.array cannot: "
                                       f"{str(e).splitlines()[0]}") from e
        if name in ("concatenate", "stack"):
            parts = [self.materialize(a) for a in node.args]
            return self._checked(node, getattr(_da(), name)(parts, axis=node.kwargs["axis"]))
        raise UnsupportedError(f"aot.compile with dask arrays: {name or node.target} (graph node "
                               f"{node.name}) "
                               "is not mapped onto dask.array; compute it on numpy arrays (e.g. after "
                               ".compute()) or map it with dask.array.map_blocks")

    def _eager(self, node):
        """A node over numpy constants only: computed now, with the op's numpy reference."""
        def resolve(a):
            if isinstance(a, (tuple, list)):
                return type(a)(resolve(x) for x in a)
            return self.vals[a] if hasattr(a, "op") else a

        return node.target(*resolve(list(node.args)), **{k: resolve(v) for k, v in node.kwargs.items()})

    def _checked(self, node, arr):
        meta = node.meta["val"]
        if tuple(arr.shape) != tuple(meta.shape) or arr.dtype != meta.dtype.numpy:
            raise AssertionError(f"dask gave {node.name} {arr.dtype}{arr.shape}; aot's rules "
                                 f"{meta.dtype.numpy}{meta.shape}")
        return arr

    def materialize(self, node):
        """`node`'s value as a dask array (or the numpy constant it is)."""
        if self.vals[node] is PENDING:
            self.vals[node] = self._blockwise(node, node, ("map", node.name))
            self.pending.discard(node)
        return self.vals[node]

    def _blockwise(self, value, node, key, tail=None, adjust=None, fixed=None, wrap=None, skip_empty=False):
        """`value`'s region, then `tail` (giving `node`), as one blockwise task per chunk. `adjust`:
        output chunk sizes that differ from the region's (dim -> size); `fixed`: dims that must be
        one chunk (dim -> size); `wrap(fn)`: the task around the compiled region; `skip_empty`: the
        task takes empty chunks itself (no compile for them)."""
        da = _da()
        members, inputs = regions.cone(value, self.pending)
        ndim = len(value.meta["val"].shape)
        pairs = [self._blockwise_arg(self.vals[i], ndim) for i in inputs]
        chunks, arrays = da.core.unify_chunks(*[p for pair in pairs for p in pair])
        pairs = [(a, ind) for a, (_, ind) in zip(arrays, pairs)]
        out_chunks = [chunks.get(d, (value.meta["val"].shape[d],)) for d in range(ndim)]
        for d in fixed or {}:
            if len(out_chunks[d]) != 1:
                raise ValueError(f"aot.compile with dask arrays: {op_name(node)} along axis {d} needs that "
                                 f"axis in one chunk (it has {len(out_chunks[d])} chunks: "
                                 f"{out_chunks[d][:4]}...); rechunk first, e.g. x.rechunk({{{d}: -1}})")
        shapes = [s for s in regions.example_patterns(out_chunks, fixed) if not (skip_empty and 0 in s)]
        examples = [[regions.example_block(s, a.shape, a.dtype) if ind is not None else a for a, ind in pairs]
                    for s in shapes]
        fn, token = self.plan.region_fn(key, lambda: regions.region_module(members, inputs, value, tail),
                                        examples)
        task = (wrap or blocks.Task)(fn, token)
        return da.blockwise(task, tuple(range(ndim)), *[p for pair in pairs for p in pair],
                            token=f"aot-{key[0]}", dtype=node.meta["val"].dtype.numpy, adjust_chunks=adjust,
                            meta=_meta(node), align_arrays=False, concatenate=True)

    @staticmethod
    def _blockwise_arg(x, ndim: int) -> tuple:
        """(array, its dims' indices) of a region input, aligned to the output's trailing dims;
        numpy constants with no dim over 1 go to every task whole."""
        if not _lazy(x):
            if not any(n > 1 for n in np.shape(x)):
                return np.asarray(x), None
            x = _da().asarray(x)
        return x, tuple(range(ndim - x.ndim, ndim))

    def _reduce(self, node):
        """A reduction: its region and a partial reduction per chunk, then compiled aggregates."""
        name, operand = op_name(node), node.args[0]
        axes, keepdims = tuple(node.kwargs["axes"]), node.kwargs.get("keepdims", False)

        def tail(g, value):
            return g.call_function(node.target, (value,), {"axes": axes, "keepdims": True})

        shape = operand.meta["val"].shape
        if name in blocks.NO_IDENTITY and any(shape[a] == 0 for a in axes):  # as numpy refuses it
            raise ValueError(f"zero-size array to reduction operation {name}imum which has no identity")
        dt = node.meta["val"].dtype.numpy
        partials = self._blockwise(operand, node, ("partial", node.name), tail, {a: 1 for a in axes},
                                   wrap=lambda fn, token: blocks.Partial(fn, token, name, axes, dt),
                                   skip_empty=name in blocks.NO_IDENTITY)
        combine = self._aggregate_fn(node, name, axes, True, partials)
        aggregate = self._aggregate_fn(node, name, axes, keepdims, partials)
        res = _da().reduction(partials, blocks.identity, aggregate, axis=axes, keepdims=keepdims, dtype=dt,
                              combine=combine, concatenate=True, meta=_meta(node),
                              name=f"aot-{name}-{_tokenize(aggregate, partials)}")
        return self._checked(node, res)

    def _aggregate_fn(self, node, name, axes, keepdims, partials):
        """The compiled reduction of concatenated partials (dask's combine and aggregate steps)."""
        along = [(1, 2) if d in axes and len(c) > 1 else ((1,) if d in axes else c)
                 for d, c in enumerate(partials.chunks)]
        examples = [[np.zeros(s, partials.dtype)] for s in regions.example_patterns(along)]

        def make():
            return regions.reduce_module(name, {"axes": axes, "keepdims": keepdims})

        return blocks.Aggregate(*self.plan.region_fn(("aggregate", node.name, keepdims), make, examples))

    def _arg_reduce(self, node):
        """argmax/argmin along an axis: per chunk a compiled (value, index) pair, then the first
        best pair of the chunks."""
        da = _da()
        name, x = op_name(node), self.materialize(node.args[0])
        axis, keepdims = node.kwargs["axis"], node.kwargs.get("keepdims", False)
        pair = np.float64 if x.dtype.kind in "fc" else np.int64
        nonempty = [c if d != axis else tuple(n for n in c if n) or (1,) for d, c in enumerate(x.chunks)]
        examples = [[np.zeros(s, x.dtype)] for s in regions.example_patterns(nonempty)]
        fn, token = self.plan.region_fn(("arg", node.name), lambda: regions.arg_partial_module(name, axis),
                                        examples)
        chunks = tuple((2,) * len(c) if d == axis else c for d, c in enumerate(x.chunks))
        pairs = da.map_blocks(blocks.ArgPartial(fn, token, axis, pair), x, chunks=chunks, dtype=pair,
                              meta=np.empty((0,) * x.ndim, pair), name=f"aot-{name}-{_tokenize(token, x)}")
        steps = {}
        for final in (False, True):
            along = [(2, 6) if d == axis else c for d, c in enumerate(chunks)]  # one pair, or several
            ex = [[np.zeros(s, pair)] for s in regions.example_patterns(along, {})]

            def make(final=final):
                return blocks.arg_combine(name[3:], axis, keepdims if final else True, final, x.ndim)

            steps[final] = blocks.Aggregate(*self.plan.region_fn(("argcombine", node.name, final), make, ex))
        res = da.reduction(pairs, blocks.identity, steps[True], axis=(axis,), keepdims=keepdims,
                           dtype=np.int64, combine=steps[False], concatenate=True, meta=_meta(node),
                           name=f"aot-{name}-{_tokenize(token, pairs)}")
        return self._checked(node, res)

    def _fft(self, node):
        operand, axis = node.args[0], node.kwargs["axis"]

        def tail(g, value):
            return g.call_function(node.target, (value,), dict(node.kwargs))

        n_in, n_out = operand.meta["val"].shape[axis], node.meta["val"].shape[axis]
        return self._checked(node, self._blockwise(operand, node, ("fft", node.name), tail, {axis: n_out},
                                                   fixed={axis: n_in}))


def _meta(node) -> np.ndarray:
    """An empty array of `node`'s dtype and rank: dask's `meta`, from aot's rules."""
    val = node.meta["val"]
    return np.empty((0,) * len(val.shape), val.dtype.numpy)


def _tokenize(*parts) -> str:
    from dask.base import tokenize

    return tokenize(*parts)


_lazy = is_dask_array
