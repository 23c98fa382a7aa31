"""torch.func's transforms for numpy functions: grad, grad_and_value, vjp, jvp, linearize, jacrev,
jacfwd, hessian, vmap.

Each transform traces its function inside the capture that called it (_trace.py) and writes the
transformed graph there with the rows' rules (_reverse, _forward, _batching), so transforms nest
and aot.compile / aot.export see one graph of core ops. Called on numpy arrays, a transform stages
itself (_staging.py): traced once per signature and run from the cache.
"""
from __future__ import annotations

import functools

import numpy as np

from ..compiler.creations import current_capture
from ..fx._pytree import tree_flatten, tree_unflatten
from ..ops._transforms import full, reshape, zeros_like
from . import _batched
from ._forward import push_forward
from ._interpret import bind, replay, results
from ._onehot import OneHot
from ._reverse import backward
from ._staging import cached_stage, stage
from ._trace import TransformError, is_array, trace


class Run:
    """fn(*args) traced and replayed in `tracer`: its graph, the caller's value of every node, and
    which placeholders stand for which argument."""

    def __init__(self, fn, args: tuple, tracer, what: str):
        self.what = what
        self.t = trace(fn, args, tracer, what)
        self.leaves = tree_flatten(args)[0]
        self.env = bind(self.t, tracer, self.leaves)
        replay(self.t, tracer, self.env)
        self.flat_out = results(self.t, self.env)
        self.arg_leaves, self.arg_specs = [], []  # per argument: its flat leaf indices, its structure
        start = 0
        for a in args:
            leaves, spec = tree_flatten(a)
            self.arg_leaves.append(list(range(start, start + len(leaves))))
            self.arg_specs.append(spec)
            start += len(leaves)

    def output(self, has_aux: bool):
        """(output pytree, its flat (kind, value) entries, aux or None)."""
        entries = self.t.outputs
        if not has_aux:
            return tree_unflatten(self.flat_out, self.t.out_spec), entries, None
        spec = self.t.out_spec
        if spec.kind not in ("tuple", "list") or len(spec.children_specs) != 2:
            raise TransformError(f"{self.what}(f, has_aux=True): f must return a pair (output, aux), got {spec!r}")
        n = spec.children_specs[0].num_leaves
        out = tree_unflatten(self.flat_out[:n], spec.children_specs[0])
        aux = tree_unflatten(self.flat_out[n:], spec.children_specs[1])
        return out, entries[:n], aux

    def wanted(self, argnums: tuple) -> list:
        """The placeholders of the leaves of the arguments `argnums`, checked differentiable."""
        nodes = []
        for k in argnums:
            for i in self.arg_leaves[k]:
                node = self.t.inputs[i]
                if node is None:
                    raise TransformError(f"{self.what}: argument {k} must be a floating-point or complex array "
                                         f"(or a pytree of them), got {type(self.leaves[i]).__name__}")
                dt = node.meta["val"].dtype
                if dt.kind not in "fc":
                    raise TransformError(f"{self.what}: argument {k} has dtype {dt}; only floating-point and "
                                         f"complex arrays can be differentiated")
                nodes.append(node)
        return nodes

    def per_arg(self, argnums: tuple, flat: list, int_argnums: bool):
        """Flat per-leaf values of the arguments `argnums` as their pytrees (one, or a tuple)."""
        out, pos = [], 0
        for k in argnums:
            n = len(self.arg_leaves[k])
            out.append(tree_unflatten(flat[pos:pos + n], self.arg_specs[k]))
            pos += n
        return out[0] if int_argnums else tuple(out)


def _argnums(argnums, nargs: int, what: str) -> tuple[tuple, bool]:
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums or not all(isinstance(k, int) for k in nums):
        raise TransformError(f"{what}: argnums must be an int or a non-empty tuple of ints, got {argnums!r}")
    norm = []
    for k in nums:
        if not -nargs <= k < nargs:
            raise TransformError(f"{what}: argnums {k} is out of range for a function called with {nargs} "
                                 f"positional argument(s)")
        norm.append(k % nargs)
    return tuple(norm), single


def _with_kwargs(fn, kwargs: dict):
    return functools.partial(fn, **kwargs) if kwargs else fn


def _ones_like(v):
    return full(v, v.meta.shape, 1, v.meta.dtype)


def _zeros_for(node, env):
    return zeros_like(env[node])


class Transform:
    """A transformed function: traced inside the calling capture, or staged for numpy arguments."""

    api = ""

    def __init__(self, fn):
        self.fn = fn
        self._staged = None
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args, **kwargs):
        tracer = current_capture()
        if tracer is not None:
            return self.traced(tracer, args, kwargs)
        if self._staged is None:
            self._staged = stage(self, self.fn, f"{self.api}({getattr(self.fn, '__name__', 'f')})")
        return self._staged(*args, **kwargs)

    def traced(self, tracer, args: tuple, kwargs: dict):
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<aot.func.{self.api} of {self.fn!r}>"


# --- reverse mode -----------------------------------------------------------------------------------
class _Grad(Transform):
    api = "grad"

    def __init__(self, fn, argnums=0, has_aux=False, with_value=False):
        super().__init__(fn)
        self.argnums, self.has_aux, self.with_value = argnums, has_aux, with_value
        self.api = "grad_and_value" if with_value else "grad"

    def traced(self, tracer, args, kwargs):
        nums, single = _argnums(self.argnums, len(args), self.api)
        run = Run(_with_kwargs(self.fn, kwargs), args, tracer, self.api)
        out, entries, aux = run.output(self.has_aux)
        wanted = run.wanted(nums)
        if len(entries) != 1 or not _scalar_output(entries[0]):
            raise TransformError(f"{self.api}(f)(*args): expected f(*args) to return a scalar (a 0-d real "
                                 f"floating-point array), got {_describe(out)}")
        kind, node = entries[0]
        seeds = {node: _ones_like(run.env[node])} if kind == "node" else {}
        cts = backward(run.t, run.env, seeds, wanted)
        grads = [c if c is not None else _zeros_for(n, run.env) for c, n in zip(cts, wanted)]
        g = run.per_arg(nums, grads, single)
        if self.with_value:
            return (g, (out, aux)) if self.has_aux else (g, out)
        return (g, aux) if self.has_aux else g


def _scalar_output(entry) -> bool:
    kind, v = entry
    if kind == "const":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    val = v.meta["val"]
    return not isinstance(val, tuple) and val.shape == () and val.dtype.kind == "f"


def _describe(out) -> str:
    leaves = tree_flatten(out)[0]
    if len(leaves) == 1 and hasattr(leaves[0], "meta"):
        m = leaves[0].meta
        return f"an array of shape {tuple(m.shape)} and dtype {m.dtype}"
    return f"{type(out).__name__} with {len(leaves)} leaves"


def grad(func, argnums=0, has_aux=False):
    """torch.func.grad: the gradient of a scalar function with respect to the arguments argnums."""
    return _Grad(func, argnums, has_aux)


def grad_and_value(func, argnums=0, has_aux=False):
    """torch.func.grad_and_value: (gradient, value), or (gradient, (value, aux)) with has_aux."""
    return _Grad(func, argnums, has_aux, with_value=True)


def _shape_of(x) -> tuple:
    """The shape of a traced array, a numpy array or a number."""
    return tuple(x.meta.shape) if hasattr(x, "meta") else tuple(np.shape(x))


def _seeds(entries: list, cts, out_spec, what: str) -> dict:
    leaves, spec = tree_flatten(cts)
    if spec != out_spec:
        raise TransformError(f"{what}: expected cotangents with the structure of the output {out_spec!r}, got {spec!r}")
    seeds = {}
    for (kind, node), c in zip(entries, leaves):
        if kind != "node" or c is None:
            continue
        if not is_array(c) and not isinstance(c, (int, float, complex)):
            raise TransformError(f"{what}: cotangents must be arrays, got {type(c).__name__}")
        val = node.meta["val"]
        if _shape_of(c) != tuple(val.shape):
            raise TransformError(f"{what}: a cotangent of shape {_shape_of(c)} for an output of shape "
                                 f"{tuple(val.shape)}")
        seeds[node] = c
    return seeds


def _pull(run: Run, entries: list, out_spec, nums: tuple, wanted: list, cts) -> tuple:
    """The cotangents of every primal (a tuple, one pytree each) for the output cotangents `cts`."""
    tracer = current_capture()
    seeds = {n: tracer.as_value(c) for n, c in _seeds(entries, cts, out_spec, "vjp_fn").items()}
    got = backward(run.t, run.env, seeds, wanted)
    grads = [c if c is not None else _zeros_for(n, run.env) for c, n in zip(got, wanted)]
    return run.per_arg(nums, grads, False)


def vjp(func, *primals, has_aux=False):
    """torch.func.vjp: (output, vjp_fn) or (output, vjp_fn, aux); vjp_fn(cotangents) returns the
    cotangents of the primals, a tuple with one pytree per primal."""
    tracer = current_capture()
    nums = tuple(range(len(primals)))
    if tracer is not None:
        run = Run(func, primals, tracer, "vjp")
        out, entries, aux = run.output(has_aux)
        spec = tree_flatten(out)[1]
        wanted = run.wanted(nums)

        def vjp_fn(cotangents):
            return _pull(run, entries, spec, nums, wanted, cotangents)

        return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)
    forward = cached_stage(("vjp.forward", func, has_aux), lambda *p: func(*p), func, "vjp")
    res = forward(*primals)
    out, aux = res if has_aux else (res, None)

    def traced_pull(primals, cotangents):
        return vjp(func, *primals, has_aux=has_aux)[1](cotangents)

    pull = cached_stage(("vjp.pull", func, has_aux), traced_pull, func, "vjp_fn")

    def vjp_fn(cotangents):
        return pull(primals, cotangents)

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


# --- forward mode -------------------------------------------------------------------------------------
def _tangent_seeds(run: Run, primals: tuple, tangents: tuple, what: str) -> dict:
    if not isinstance(tangents, (tuple, list)) or len(tangents) != len(primals):
        raise TransformError(f"{what}: expected one tangent per primal ({len(primals)}), got {tangents!r}"[:300])
    leaves, spec = tree_flatten(tuple(tangents))
    if spec != tree_flatten(tuple(primals))[1]:
        raise TransformError(f"{what}: the tangents' structure {spec!r} differs from the primals' "
                             f"{tree_flatten(tuple(primals))[1]!r}")
    nodes = run.wanted(tuple(range(len(primals))))
    tracer = current_capture()
    seeds = {}
    for node, tan, p in zip(nodes, leaves, run.leaves):
        if tan is None:
            continue
        if _shape_of(tan) != tuple(node.meta["val"].shape):
            raise TransformError(f"{what}: a tangent of shape {_shape_of(tan)} for a primal of shape "
                                 f"{tuple(node.meta['val'].shape)}")
        seeds[node] = tracer.as_value(tan)
    return seeds


def _tangents_out(run: Run, entries: list, tan: dict, spec):
    flat = []
    for kind, v in entries:
        if kind != "node":
            flat.append(0.0 if isinstance(v, float) else v)
            continue
        t = tan.get(v)
        flat.append(t if t is not None else zeros_like(run.env[v]))
    return tree_unflatten(flat, spec)


def jvp(func, primals, tangents, *, has_aux=False):
    """torch.func.jvp: (output, jvp_out) or (output, jvp_out, aux)."""
    if not isinstance(primals, (tuple, list)):
        raise TransformError(f"jvp: primals must be a tuple, got {type(primals).__name__}")
    tracer = current_capture()
    if tracer is None:
        staged = cached_stage(("jvp", func, has_aux),
                              lambda p, t: jvp(func, p, t, has_aux=has_aux), func, "jvp")
        return staged(tuple(primals), tuple(tangents))
    run = Run(func, tuple(primals), tracer, "jvp")
    out, entries, aux = run.output(has_aux)
    tan = push_forward(run.t, run.env, _tangent_seeds(run, tuple(primals), tangents, "jvp"))
    t_out = _tangents_out(run, entries, tan, tree_flatten(out)[1])
    return (out, t_out, aux) if has_aux else (out, t_out)


def linearize(func, *primals):
    """torch.func.linearize: (output, jvp_fn), jvp_fn(*tangents) -> the output's tangent."""
    tracer = current_capture()
    if tracer is None:
        out = cached_stage(("linearize.forward", func), lambda *p: func(*p), func, "linearize")(*primals)
        staged = cached_stage(("linearize", func), lambda p, t: jvp(func, p, t)[1], func, "jvp_fn")
        return out, lambda *tangents: staged(tuple(primals), tuple(tangents))
    run = Run(func, primals, tracer, "linearize")
    out, entries, _ = run.output(False)
    spec = tree_flatten(out)[1]

    def jvp_fn(*tangents):
        tan = push_forward(run.t, run.env, _tangent_seeds(run, primals, tangents, "linearize"))
        return _tangents_out(run, entries, tan, spec)

    return out, jvp_fn


def _zeros_of(p):
    leaves, spec = tree_flatten(p)
    return tree_unflatten([np.zeros_like(x) for x in leaves], spec)


# --- Jacobians -----------------------------------------------------------------------------------------
def _basis(like, shape, dtype):
    """The unit arrays of `shape`, stacked: prod(shape) directions (the identity, reshaped)."""
    return OneHot(like, tuple(shape), dtype).materialise()


class _Jacobian(Transform):
    def __init__(self, fn, argnums=0, has_aux=False, chunk_size=None, forward=False):
        super().__init__(fn)
        self.argnums, self.has_aux, self.chunk_size, self.forward = argnums, has_aux, chunk_size, forward
        self.api = "jacfwd" if forward else "jacrev"
        if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
            raise TransformError(f"{self.api}: chunk_size must be a positive int or None, got {chunk_size!r}")

    def traced(self, tracer, args, kwargs):
        nums, single = _argnums(self.argnums, len(args), self.api)
        run = Run(_with_kwargs(self.fn, kwargs), args, tracer, self.api)
        out, entries, aux = run.output(self.has_aux)
        wanted = run.wanted(nums)
        for kind, v in entries:
            if kind != "node" or v.meta["val"].dtype.kind not in "fc":
                raise TransformError(f"{self.api}: the function's outputs must be floating-point or complex arrays, "
                                     f"got {v if kind == 'const' else v.meta['val'].dtype}")
        jac = (self._forward if self.forward else self._reverse)(run, entries, wanted)
        # jac[o][i]: d output leaf o / d wanted leaf i, of shape out_shape + in_shape
        per_out = [run.per_arg(nums, row, single) for row in jac]
        res = tree_unflatten(per_out, tree_flatten(out)[1])
        return (res, aux) if self.has_aux else res

    def _reverse(self, run: Run, entries: list, wanted: list) -> list:
        rows = []
        for _, node in entries:
            o = run.env[node]
            oshape = tuple(o.meta.shape)

            def pull(ct, node=node):
                got = backward(run.t, run.env, {node: ct}, wanted)
                return [c if c is not None else _zeros_for(n, run.env) for c, n in zip(got, wanted)]

            basis = _basis(o, oshape, o.meta.dtype)
            cols = _mapped(pull, basis, 0, self.chunk_size, "jacrev")
            rows.append([reshape(c, (*oshape, *tuple(n.meta["val"].shape))) for c, n in zip(cols, wanted)])
        return rows

    def _forward(self, run: Run, entries: list, wanted: list) -> list:
        rows = [[None] * len(wanted) for _ in entries]
        for j, node in enumerate(wanted):
            x = run.env[node]
            ishape = tuple(x.meta.shape)

            def push(t, node=node):
                tan = push_forward(run.t, run.env, {node: t})
                return [tan.get(v) if tan.get(v) is not None else zeros_like(run.env[v]) for _, v in entries]

            basis = _basis(x, ishape, x.meta.dtype)
            outs = _mapped(push, basis, -1, self.chunk_size, "jacfwd")
            for k, ((_, v), o) in enumerate(zip(entries, outs)):
                rows[k][j] = reshape(o, (*tuple(v.meta["val"].shape), *ishape))
        return rows


def _mapped(fn, basis, out_dim: int, chunk_size, what: str) -> list:
    """fn (a pullback or pushforward) over the directions in basis; one direction (a scalar output,
    a scalar input) is a plain call: a batch of one would only add unit dims to every kernel."""
    if basis.meta.shape[0] == 1:
        return [reshape(v, (1, *v.meta.shape) if out_dim == 0 else (*v.meta.shape, 1))
                for v in fn(reshape(basis, tuple(basis.meta.shape[1:])))]
    whole = chunk_size is None or not isinstance(basis.meta.shape[0], int) or chunk_size >= basis.meta.shape[0]
    return _batched.vmap_traced(fn, (basis,), (0,), out_dim, chunk_size, what, onehot=whole)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """torch.func.jacrev: the Jacobian by reverse mode (one vjp per output element, vmapped)."""
    return _Jacobian(func, argnums, has_aux, chunk_size)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """torch.func.jacfwd: the Jacobian by forward mode (one jvp per input element, vmapped)."""
    return _Jacobian(func, argnums, has_aux, forward=True)


def hessian(func, argnums=0):
    """torch.func.hessian: jacfwd(jacrev(func, argnums), argnums)."""
    return jacfwd(jacrev(func, argnums), argnums)


VMap = _batched.make_vmap(Transform)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.func.vmap: func mapped over dim in_dims of its arguments, results batched at out_dims."""
    return VMap(func, in_dims, out_dims, randomness, chunk_size)
