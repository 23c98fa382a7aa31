"""np.apply_along_axis and np.apply_over_axes, by tracing the user's function while tracing
(numpy/lib/_shape_base_impl.py's algorithms).

np.apply_along_axis traces func1d once per 1-D slice and stacks the results as numpy's buffer
does (the first result's dtype and shape; later ones are cast and broadcast into it). That unrolls
one copy of func1d per slice, so the number of slices must be known at trace time and at most
MAX_SLICES; more raise UnsupportedError. This is an interim until aot.func.vmap can trace func1d
once over a batch dimension. np.apply_over_axes calls func once per listed axis, as numpy does.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ir import dtypes as irdt

from .emitter import Emitter, abstract_of
from .numpy_shape import expand_dims, reshape, transpose
from .numpy_ufuncs import emit
from .operands import UnsupportedError, cast, constant, normalize_axis, scalar_like, to_value
from .shapes import prod, static_int

MAX_SLICES = 256  # func1d traced once per slice: beyond this the unrolled graph costs too much to compile


def _as_value(em: Emitter, r: Any):
    return r if em.is_value(r) else constant(em, np.asarray(r))


def np_apply_along_axis(em: Emitter, func1d: Callable, axis: Any, arr: Any, *args: Any, **kwargs: Any):
    """func1d traced on each 1-D slice (at most MAX_SLICES), stacked as numpy does: an interim until
    aot.func.vmap traces it once over the batch."""
    x = to_value(em, arr)
    nd = abstract_of(x).ndim
    ax = normalize_axis(axis, nd)
    inner = transpose(em, x, [d for d in range(nd) if d != ax] + [ax])  # the iteration axis last
    outer = abstract_of(inner).shape[:-1]
    count = static_int(prod(outer), "the number of np.apply_along_axis's slices")
    if count == 0:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    if count > MAX_SLICES:
        raise UnsupportedError(f"np.apply_along_axis over {count} slices: traced code unrolls func1d once "
                               f"per slice, up to {MAX_SLICES}; vectorise func1d over the other axes instead "
                               f"(most numpy functions take axis=), until aot.func.vmap exists")
    outer = tuple(static_int(d, "np.apply_along_axis's iteration dims") for d in outer)
    rows = reshape(em, inner, (count, abstract_of(inner).shape[-1]))
    first = None
    results = []
    for i in range(count):
        row = emit(em, "take", rows, scalar_like(em, i, irdt.int64), axis=0)
        r = _as_value(em, func1d(row, *args, **kwargs))
        if first is None:
            first = abstract_of(r)
        elif tuple(abstract_of(r).shape) != tuple(first.shape):
            r = emit(em, "broadcast_to", r, shape=tuple(first.shape))
        results.append(cast(em, r, first.dtype))  # numpy's buffer has the first result's dtype
    buff = reshape(em, emit(em, "stack", *results, axis=0), outer + tuple(first.shape))
    bnd, rnd = abstract_of(buff).ndim, first.ndim
    dims = list(range(bnd))
    perm = dims[:ax] + dims[bnd - rnd:] + dims[ax:bnd - rnd]  # numpy's buff_permute
    return transpose(em, buff, perm)


def np_apply_over_axes(em: Emitter, func: Callable, a: Any, axes: Any):
    val = to_value(em, a)
    n = abstract_of(val).ndim
    for axis in ((axes,) if np.ndim(axes) == 0 else tuple(axes)):
        axis = int(axis)
        if axis < 0:
            axis += n
        res = _as_value(em, func(val, axis))
        if abstract_of(res).ndim != abstract_of(val).ndim:
            res = expand_dims(em, res, axis)
            if abstract_of(res).ndim != abstract_of(val).ndim:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


# numpy functions that are not one core op
DECOMPOSITIONS = {np.apply_along_axis: np_apply_along_axis, np.apply_over_axes: np_apply_over_axes}
