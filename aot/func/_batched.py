"""torch.func.vmap: a function mapped over a batch dim of its arguments, with no per-example loop.

The function is traced on one example's types; its graph is then replayed on the whole batch with
the rows' batching rules (_batching.py), each value carrying its batch dim.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np
import numpy.random

from ..compiler.creations import current_capture
from ..fx._pytree import tree_flatten, tree_unflatten
from ..ops._transforms import broadcast_to, move_axis, reshape
from ._batching import batch_replay, dense
from ._interpret import bind
from ._onehot import OneHot
from ._trace import TransformError, is_array, trace

RANDOMNESS = ("error", "different", "same")


def _leaf_dims(in_dims, args: tuple, what: str) -> list:
    """One batch dim (or None) per flat leaf of args: in_dims is an int/None for all, or a tuple with
    one entry per argument, each an int/None or a pytree prefix of that argument."""
    if in_dims is None or isinstance(in_dims, int):
        return [in_dims] * len(tree_flatten(args)[0])
    if not isinstance(in_dims, (tuple, list)) or len(in_dims) != len(args):
        raise TransformError(f"{what}: in_dims is not compatible with the structure of the inputs: expected an "
                             f"int, None, or a tuple of {len(args)} entries (one per argument), got {in_dims!r}")
    out = []
    for k, (d, a) in enumerate(zip(in_dims, args)):
        out += _prefix(d, a, f"{what}: in_dims[{k}]")
    return out


def _prefix(d, tree, where: str) -> list:
    if d is None or isinstance(d, int):
        return [d] * len(tree_flatten(tree)[0])
    if isinstance(d, dict) and isinstance(tree, dict) and set(d) == set(tree):
        return [x for key in tree for x in _prefix(d[key], tree[key], f"{where}[{key!r}]")]
    if isinstance(d, (tuple, list)) and isinstance(tree, (tuple, list)) and len(d) == len(tree):
        return [x for i, (di, ti) in enumerate(zip(d, tree)) for x in _prefix(di, ti, f"{where}[{i}]")]
    raise TransformError(f"{where} = {d!r} does not match the structure of its argument")


def _batch_size(leaves: list, dims: list, what: str):
    sizes = []
    for i, (leaf, d) in enumerate(zip(leaves, dims)):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise TransformError(f"{what}: in_dims must hold ints or None, got {d!r}")
        if not is_array(leaf):
            raise TransformError(f"{what}: got in_dim={d} for an input that is not an array "
                                 f"({type(leaf).__name__}); use None for it")
        ndim = len(np.shape(leaf)) if not hasattr(leaf, "meta") else leaf.ndim
        if not -ndim <= d < ndim:
            raise TransformError(f"{what}: in_dim={d} is out of range for an input with {ndim} dims")
        sizes.append(leaf.shape[d % ndim] if hasattr(leaf, "meta") else np.shape(leaf)[d % ndim])
    if not sizes:
        raise TransformError(f"{what}: at least one input must be an array mapped over (in_dims are all None)")
    first = sizes[0]
    if any(int(s) != int(first) if _static(s) and _static(first) else False for s in sizes):
        raise TransformError(f"{what}: expected all mapped inputs to have the same size in the mapped dim, got "
                             f"sizes {[int(s) if _static(s) else s for s in sizes]}")
    return first


def _static(s) -> bool:
    return isinstance(s, (int, np.integer))


def vmap_traced(fn, args: tuple, in_dims, out_dims, chunk_size, what: str, randomness: str = "error",
                onehot: bool = False):
    """fn mapped over args (traced arrays, or numpy arrays the capture lifts), in the running capture.
    onehot: args is one array of unit arrays, the identity (a Jacobian's directions, _onehot.py)."""
    tracer = current_capture()
    leaves = tree_flatten(args)[0]
    dims = _leaf_dims(in_dims, args, what)
    size = _batch_size(leaves, dims, what)
    if chunk_size is not None and _static(size) and chunk_size < int(size):
        return _chunked(fn, args, leaves, dims, out_dims, int(chunk_size), int(size), what, randomness)
    vals = [tracer.as_value(x) if is_array(x) else x for x in leaves]
    dims = [None if d is None else d % v.ndim for v, d in zip(vals, dims)]
    metas = [_example_meta(v, d) if d is not None else None for v, d in zip(vals, dims)]
    with _random_calls(randomness, what):
        t = trace(fn, tree_unflatten(vals, tree_flatten(args)[1]), tracer, what, metas)
    env = bind(t, tracer, vals)
    bdims = {node: None for node in env}
    for node, d in zip(t.inputs, dims):
        if node is not None:
            bdims[node] = d
    if onehot:
        (node,), basis = [n for n in t.inputs if n is not None], vals[0]
        env[node] = OneHot(basis, tuple(basis.meta.shape[1:]), basis.meta.dtype, dense=basis)
    batch_replay(t, tracer, env, bdims)
    flat_dims = _out_dims(out_dims, t.out_spec, len(t.outputs), what)
    outs = []
    for (kind, v), od in zip(t.outputs, flat_dims):
        if kind != "node":
            raise TransformError(f"{what}: the function must return arrays, got {type(v).__name__}")
        outs.append(_place(dense(env[v]), bdims[v], od, size, what))
    return tree_unflatten(outs, t.out_spec)


def _example_meta(v, d):
    from ..compiler.capture import ValMeta

    shape = tuple(v.meta.shape)
    return ValMeta(v.meta.dtype, shape[:d] + shape[d + 1:])


def _out_dims(out_dims, spec, n: int, what: str) -> list:
    if out_dims is None or isinstance(out_dims, int):
        return [out_dims] * n
    dummy = tree_unflatten(list(range(n)), spec)
    if spec.kind in ("tuple", "list") and isinstance(out_dims, (tuple, list)):
        return _prefix(tuple(out_dims), tuple(dummy), f"{what}: out_dims")
    return _prefix(out_dims, dummy, f"{what}: out_dims")


def _place(v, bdim, od, size, what: str):
    """The batched result with its batch dim at `od` (None: the result must not be batched)."""
    if od is None:
        if bdim is not None:
            raise TransformError(f"{what}: out_dims=None for an output that depends on the mapped inputs")
        return v
    rank = v.ndim + (bdim is None)
    if not -rank <= od < rank:
        raise TransformError(f"{what}: out_dim={od} is out of range for an output with {rank} dims")
    od %= rank
    if bdim is None:  # the same for every example: repeated along a new batch dim
        shape = tuple(v.meta.shape)
        v = broadcast_to(reshape(v, (1, *shape)), (size, *shape))
        bdim = 0
    return move_axis(v, bdim, od)


def _chunked(fn, args, leaves, dims, out_dims, chunk: int, size: int, what: str, randomness: str):
    spec = tree_flatten(args)[1]
    parts = []
    for start in range(0, size, chunk):
        stop = min(start + chunk, size)
        sliced = [x if d is None else _take_range(x, d, start, stop) for x, d in zip(leaves, dims)]
        parts.append(vmap_traced(fn, tree_unflatten(sliced, spec), tuple(_prefix_back(dims, args)), out_dims,
                                 None, what, randomness))
    flat = [tree_flatten(p)[0] for p in parts]
    out_spec = tree_flatten(parts[0])[1]
    ods = _out_dims(out_dims, out_spec, len(flat[0]), what)
    joined = [np.concatenate([f[k] for f in flat], axis=od) for k, od in enumerate(ods)]
    return tree_unflatten(joined, out_spec)


def _prefix_back(dims: list, args: tuple):
    """The per-leaf dims as in_dims (one pytree per argument)."""
    out, pos = [], 0
    for a in args:
        leaves, spec = tree_flatten(a)
        out.append(tree_unflatten(dims[pos:pos + len(leaves)], spec))
        pos += len(leaves)
    return out


def _take_range(x, d: int, start: int, stop: int):
    key = (slice(None),) * (d % np.ndim(x) if not hasattr(x, "meta") else d % x.ndim) + (slice(start, stop),)
    return x[key]


# --- random calls under vmap ----------------------------------------------------------------------------
_RANDOM = threading.local()
_lock = threading.Lock()
_patched: dict = {}
_active = 0
_RANDOM_NAMES = ("rand", "randn", "random", "random_sample", "randint", "normal", "uniform", "standard_normal",
                 "choice", "permutation", "shuffle", "binomial", "poisson", "exponential", "beta", "gamma")


@contextlib.contextmanager
def _random_calls(randomness: str, what: str):
    """Under randomness="error", numpy's random functions raise while the function is traced."""
    global _active
    if randomness not in RANDOMNESS:
        raise TransformError(f"{what}: randomness must be one of {RANDOMNESS}, got {randomness!r}")
    if randomness == "different":
        raise TransformError(f"{what}: randomness='different' is not supported: numpy's random calls are traced as "
                             f"constants, drawn once; draw the batch's random numbers outside and pass them with "
                             f"in_dims=0")
    before = getattr(_RANDOM, "mode", None)
    _RANDOM.mode = randomness
    with _lock:
        if _active == 0:
            for name in _RANDOM_NAMES:
                original = getattr(np.random, name)
                _patched[name] = original
                setattr(np.random, name, _guarded(name, original))
        _active += 1
    try:
        yield
    finally:
        _RANDOM.mode = before
        with _lock:
            _active -= 1
            if _active == 0:
                for name, original in _patched.items():
                    setattr(np.random, name, original)
                _patched.clear()


def _guarded(name: str, original):
    def call(*args, **kwargs):
        if getattr(_RANDOM, "mode", None) == "error":
            raise TransformError(f"vmap: called np.random.{name} under vmap with randomness='error'; pass "
                                 f"randomness='same' for one draw shared by the batch, or draw outside vmap")
        return original(*args, **kwargs)

    call.__name__ = name
    return call


def make_vmap(transform_base):
    class VMap(transform_base):
        api = "vmap"

        def __init__(self, fn, in_dims=0, out_dims=0, randomness="error", chunk_size=None):
            super().__init__(fn)
            if randomness not in RANDOMNESS:
                raise TransformError(f"vmap: randomness must be one of {RANDOMNESS}, got {randomness!r}")
            if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
                raise TransformError(f"vmap: chunk_size must be a positive int or None, got {chunk_size!r}")
            self.in_dims, self.out_dims, self.randomness, self.chunk_size = in_dims, out_dims, randomness, chunk_size

        def traced(self, tracer, args, kwargs):
            fn = self.fn if not kwargs else (lambda *a: self.fn(*a, **kwargs))
            return vmap_traced(fn, args, self.in_dims, self.out_dims, self.chunk_size, "vmap", self.randomness)

    return VMap
