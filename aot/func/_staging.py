"""Transforms called on numpy arrays: traced once per signature, then run from the cache.

A transform called outside any capture runs as aot.compile runs a function: captured (the transform
then works on traced arrays, _api.py), cached with its guards, and run by the eager backend (each
core op's numpy implementation), or by the llvm backend when the transformed function is itself
an aot.compile'd one (`grad(aot.compile(f))` compiles forward and backward into one native function).
"""
from __future__ import annotations

import functools
import operator
from collections import OrderedDict

import numpy as np

from ir.opdef import OPDEFS

from ..compiler.api import CompiledFunction
from ..compiler.backends import eager
from ..compiler.creations import current_capture

_CACHE: OrderedDict = OrderedDict()  # (api, function, options) -> CompiledFunction
_CACHE_SIZE = 256
CACHE_SIZE_LIMIT = 64  # signatures a staged transform keeps (static shapes: rules need not handle symbolic ones)


def stage(impl, fn, name: str) -> CompiledFunction:
    """A CompiledFunction running impl (which works on traced arrays) for numpy arguments."""
    inner = fn  # a transform of a transform: the innermost user function decides
    while hasattr(inner, "fn") and not isinstance(inner, CompiledFunction):
        inner = inner.fn
    if isinstance(inner, CompiledFunction):
        backend, options = inner._backend_name, dict(inner._options)
    else:
        backend, options = _eager_pruned, {}

    def make():
        return CompiledFunction(staged, backend=backend, dynamic=False, fullgraph=True, options=options,
                                cache_size_limit=CACHE_SIZE_LIMIT)

    @functools.wraps(getattr(fn, "__wrapped__", fn) if callable(fn) else impl, assigned=("__module__", "__doc__"))
    def staged(*args, **kwargs):
        if current_capture() is None:  # the cache is full and runs its function as it is: trace this call alone
            return make()(*args, **kwargs)
        return impl(*args, **kwargs)

    staged.__name__ = staged.__qualname__ = name
    return make()


def _eager_pruned(gm, example_inputs):
    """The captured graph run by numpy, node by node: each core op's reference with its attributes
    resolved once (the capture checked every type already), without the nodes no result needs (a
    rule's cotangent for an operand that needs none). Nodes that can raise stay, as numpy would raise."""
    def keeps(node) -> bool:
        d = OPDEFS.get(getattr(node.target, "name", None)) if node.op == "call_function" else None
        return node.op != "call_function" or (d is not None and d.raises is not None)

    changed = _drop_unit_products(gm.graph)
    if gm.graph.eliminate_dead_code(keeps) or changed:
        gm.recompile()
    if gm.meta.get("dynamic") is not None:  # sizes in attributes: the eager backend binds them per call
        return eager(gm, example_inputs)
    return _program(gm)


def _is_ones(node) -> bool:
    """A `full` of 1, through reshapes and broadcasts (a gradient's seed, a sum's cotangent)."""
    while node.op == "call_function" and getattr(node.target, "name", None) in ("reshape", "broadcast_to"):
        node = node.args[0]
    return getattr(node.target, "name", None) == "full" and node.kwargs.get("value") == 1


def _drop_unit_products(graph) -> bool:
    """x * 1 is x, to the bit, for real x of the product's type: the rules multiply cotangents by
    the ones a seed or a sum's backward spreads; numpy would compute each product over the array."""
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or getattr(node.target, "name", None) != "mul":
            continue
        val = node.meta.get("val")
        for i in (0, 1):
            one, x = node.args[i], node.args[1 - i]
            xv = x.meta.get("val")
            if _is_ones(one) and xv == val and val.dtype.kind == "f":
                node.replace_all_uses_with(x)
                changed = True
                break
    return changed


def _program(gm):
    slot, steps, n_in, outs = {}, [], 0, ()
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            slot[node], n_in = n_in, n_in + 1
        elif node.op == "output":
            res = node.args[0]
            outs = tuple(slot[r] for r in (res if isinstance(res, (tuple, list)) else (res,)))
        elif node.target is operator.getitem:
            steps.append((operator.getitem, (slot[node.args[0]],), {}, node.args[1]))
            slot[node] = n_in + len(steps) - 1
        else:
            d = OPDEFS[node.target.name]
            fn = _vector_math(node) or d.reference
            steps.append((fn, tuple(slot[a] for a in node.args), d.full_attrs(dict(node.kwargs)), None))
            slot[node] = n_in + len(steps) - 1

    release = _last_uses(steps, n_in, outs)

    def run(*args):
        env = list(args)
        for k, (fn, ins, attrs, index) in enumerate(steps):
            env.append(fn(*[env[i] for i in ins], **attrs) if index is None else env[ins[0]][index])
            for i in release[k]:  # dead: its memory serves the next results (no fresh pages per call)
                env[i] = None
        # a view of an argument (a reshape, a broadcast) is returned as a new array, as torch's are
        return tuple(np.array(env[i]) if env[i].base is not None else env[i] for i in outs)

    return run


# ops whose float64 numpy loop is scalar libm (numpy 2: sin and cos ~9x, log and log1p ~3.5x slower
# than the vector math of a compiled kernel on 1e6 elements, one core); on large float64 arrays the
# eager program runs them as one compiled kernel each, made on first use and cached on disk, as JAX's
# op-by-op mode compiles each primitive
_SCALAR_IN_NUMPY = frozenset({"sin", "cos", "log", "log1p"})
VECTOR_MATH_MIN_SIZE = 4096


def _vector_math(node):
    """The compiled kernel that runs `node` on its array, where numpy's own loop is scalar."""
    val = node.meta.get("val")
    if (getattr(node.target, "name", None) not in _SCALAR_IN_NUMPY or node.kwargs or len(node.args) != 1
            or val is None or val.dtype.numpy != np.float64 or any(not isinstance(d, int) for d in val.shape)
            or int(np.prod(val.shape)) < VECTOR_MATH_MIN_SIZE):
        return None
    return _math_kernel(node.target.name)


@functools.cache
def _math_kernel(name: str) -> CompiledFunction:
    from ..frontend.core import ops

    op = ops[name]
    return CompiledFunction(lambda a: op(a), dynamic=True)


def _last_uses(steps: list, n_in: int, outs: tuple) -> list[list[int]]:
    """Per step, the intermediate values (slots) no later step and no output reads."""
    last = {}
    for k, (_, ins, _, _) in enumerate(steps):
        for i in ins:
            last[i] = k
    release = [[] for _ in steps]
    for i, k in last.items():
        if i >= n_in and i not in outs:
            release[k].append(i)
    return release


def cached_stage(key: tuple, impl, fn, name: str) -> CompiledFunction:
    """stage(), kept per key (an API called anew per step, vjp(f, x) in a loop, does not retrace)."""
    try:
        hit = _CACHE.get(key)
    except TypeError:  # an unhashable function or option: no cache
        return stage(impl, fn, name)
    if hit is None:
        hit = _CACHE[key] = stage(impl, fn, name)
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return hit
