"""Assembling arrays from pieces, by decomposition into concatenations, takes, reshapes and wheres
(numpy's own algorithms, numpy/_core/shape_base.py, numpy/lib/_function_base_impl.py,
_index_tricks_impl.py, _core/numeric.py): np.block, np.insert, np.choose, np.piecewise, np.ix_,
np.fromfunction and np.from_dlpack; np.mask_indices is computed by numpy while tracing (TRACE_TIME).

What decides a result's shape is a trace-time value: np.block's list structure, np.insert's `obj`,
np.fromfunction's `shape`; a traced one raises UnsupportedError naming the argument.
np.choose(mode="raise") checks its indices at run time (numpy's ValueError, the `require` op).
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ir import dtypes as irdt

from . import numpy_reductions as red
from .emitter import Emitter, abstract_of
from .indexing import slice_axis
from .numpy_shape import broadcast_to, expand_dims, np_concatenate, np_moveaxis, reshape, take
from .numpy_ufuncs import emit
from .operands import (
    UnsupportedError,
    cast,
    constant,
    index_arg,
    no_out,
    normalize_axis,
    result_dtype,
    scalar_like,
    to_dtype,
    to_value,
)
from .shapes import broadcast_shapes, fmt_shape, static_int
from .static_args import is_traced

I64 = irdt.int64


def _static(em: Emitter, value: Any, fname: str, what: str) -> Any:
    if is_traced(em, value):
        raise UnsupportedError(f"{fname}: `{what}` must be known at trace time (the result's shape depends "
                               f"on it); pass Python values or numpy arrays")
    return value


# --- block ------------------------------------------------------------------------------------------

def _block_index(index: list) -> str:
    return "arrays" + "".join(f"[{i}]" for i in index if i is not None)


def _block_depths(em: Emitter, arrays: Any, index: list) -> tuple[list, int]:
    """numpy's _block_check_depths_match: (index of the first leaf, largest leaf ndim); an index
    ending in None marks an empty list."""
    if type(arrays) is tuple:
        raise TypeError(f"{_block_index(index)} is a tuple. Only lists can be used to arrange blocks, and "
                        f"np.block does not allow implicit conversion from tuple to ndarray.")
    if type(arrays) is list and not arrays:
        return index + [None], 0
    if type(arrays) is not list:
        return index, abstract_of(arrays).ndim if em.is_value(arrays) else np.ndim(arrays)
    first, ndim = _block_depths(em, arrays[0], index + [0])
    for i, a in enumerate(arrays[1:], 1):
        at, nd = _block_depths(em, a, index + [i])
        ndim = max(ndim, nd)
        if len(at) != len(first):
            raise ValueError(f"List depths are mismatched. First element was at depth {len(first)}, but "
                             f"there is an element at depth {len(at)} ({_block_index(at)})")
        if at[-1] is None:
            first = at
    return first, ndim


def np_block(em: Emitter, arrays: Any):
    """Concatenations from the innermost lists outwards (the last axis first); leaves are promoted
    to the result's ndim by leading unit dims, Python scalars as numpy arrays (not weak)."""
    bottom, arr_ndim = _block_depths(em, arrays, [])
    if bottom and bottom[-1] is None:
        raise ValueError(f"List at {_block_index(bottom)} cannot be empty")
    depth = len(bottom)
    ndim = max(arr_ndim, depth)

    def build(a: Any, level: int):
        if level < depth:
            return np_concatenate(em, [build(x, level + 1) for x in a], -(depth - level))
        v = a if em.is_value(a) else constant(em, np.asarray(a))
        missing = ndim - abstract_of(v).ndim
        return expand_dims(em, v, tuple(range(missing))) if missing else v

    return build(arrays, 0)


# --- insert ---------------------------------------------------------------------------------------------

def np_insert(em: Emitter, arr: Any, obj: Any, values: Any, axis: Any = None):
    x = to_value(em, arr)
    if axis is None:
        x = reshape(em, x, (-1,)) if abstract_of(x).ndim != 1 else x
        axis = 0
    nd = abstract_of(x).ndim
    ax = normalize_axis(axis, nd)
    obj = _static(em, obj, "np.insert", "obj")
    n = static_int(abstract_of(x).shape[ax], "the length of the axis np.insert inserts into")
    if isinstance(obj, slice):
        indices = np.arange(*obj.indices(n), dtype=np.intp)
    else:
        indices = np.array(obj)
        if indices.dtype == bool:
            if indices.ndim != 1:
                raise ValueError("boolean array argument obj to insert must be one dimensional")
            indices = np.flatnonzero(indices)
        elif indices.ndim > 1:
            raise ValueError("index array argument obj to insert must be one dimensional or scalar")
    dt = abstract_of(x).dtype
    if indices.size == 1:
        return _insert_at(em, x, obj, indices, values, ax, n)
    if indices.size == 0 and not isinstance(obj, np.ndarray):
        indices = indices.astype(np.intp)
    if indices.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    indices = np.where(indices < 0, indices + n, indices).astype(np.int64)
    numnew = len(indices)
    if numnew == 0:
        return x
    indices[np.argsort(indices, kind="stable")] += np.arange(numnew)
    total = n + numnew
    bad = indices[(indices < -total) | (indices >= total)]
    if bad.size:
        raise IndexError(f"index {bad[0]} is out of bounds for axis 0 with size {total}")
    keep = np.ones(total, bool)
    keep[indices] = False
    if keep.sum() != n:  # numpy's boolean assignment of arr into the remaining slots
        raise ValueError(f"shape mismatch: value array of shape {fmt_shape(abstract_of(x).shape)} could not "
                         f"be broadcast to indexing result of shape ({int(keep.sum())},)")
    gather = np.empty(total, np.int64)
    gather[keep] = np.arange(n)
    gather[indices] = n + np.arange(numnew)  # later duplicates win, as numpy's assignment
    slot = tuple(numnew if k == ax else d for k, d in enumerate(abstract_of(x).shape))
    v = _assigned(em, to_value(em, values, dt), slot)
    joined = emit(em, "concatenate", x, v, axis=ax)
    return take(em, joined, gather, ax)


def _insert_at(em: Emitter, x: Any, obj: Any, indices: np.ndarray, values: Any, ax: int, n: int):
    """One insertion point: values (at least x's ndim; a scalar obj moves their first axis to `ax`)
    broadcast into the slot before x[index]."""
    index = operator.index(indices.item())
    if index < -n or index > n:
        raise IndexError(f"index {obj} is out of bounds for axis {ax} with size {n}")
    index += n if index < 0 else 0
    nd = abstract_of(x).ndim
    v = to_value(em, values, abstract_of(x).dtype)
    if abstract_of(v).ndim < nd:
        v = expand_dims(em, v, tuple(range(nd - abstract_of(v).ndim)))
    if indices.ndim == 0:
        v = np_moveaxis(em, v, 0, ax)
    numnew = abstract_of(v).shape[ax]
    slot = tuple(numnew if k == ax else d for k, d in enumerate(abstract_of(x).shape))
    v = _assigned(em, v, slot)
    parts = [slice_axis(em, x, ax, 0, index), v, slice_axis(em, x, ax, index, None)]
    return emit(em, "concatenate", *parts, axis=ax)


def _assigned(em: Emitter, v: Any, shape: tuple):
    """v as numpy's assignment into a `shape` slot broadcasts it (leading unit dims dropped)."""
    vs = abstract_of(v).shape
    while len(vs) > len(shape) and vs[0] == 1:
        v, vs = reshape(em, v, vs[1:]), vs[1:]
    try:
        return broadcast_to(em, v, shape)
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {fmt_shape(vs)} could not be broadcast to "
                         f"indexing result of shape {fmt_shape(shape)}") from None


# --- choose ---------------------------------------------------------------------------------------------

_CHOOSE_CHAIN = 8  # up to this many choices: a chain of wheres (one fused loop); more: a gather


def np_choose(em: Emitter, a: Any, choices: Any, out: Any = None, mode: str = "raise"):
    no_out("np.choose", out)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    idx = to_value(em, a)
    idt = abstract_of(idx).dtype
    if not (idt.is_int or idt.is_bool):
        raise TypeError(f"Cannot cast array data from dtype('{idt.numpy}') to dtype('int64') according to "
                        f"the rule 'safe'")
    if em.is_value(choices):
        c = choices
        n = static_int(abstract_of(c).shape[0], "the number of np.choose's choices") if abstract_of(c).ndim \
            else 0
        items = [emit(em, "take", c, scalar_like(em, i, I64), axis=0) for i in range(n)]
    else:
        items = list(choices)
    if not items:
        raise ValueError("0-length sequence.")
    dt = result_dtype(em, *items)
    vals = [to_value(em, c, dt) for c in items]
    idx = cast(em, idx, I64)
    n = len(vals)
    shape = broadcast_shapes(abstract_of(idx).shape, *(abstract_of(v).shape for v in vals))
    if mode == "wrap":
        idx = emit(em, "mod", idx, scalar_like(em, n, I64))
    elif mode == "clip":
        idx = emit(em, "clip", idx, scalar_like(em, 0, I64), scalar_like(em, n - 1, I64))
    else:
        inside = emit(em, "logical_and", emit(em, "ge", idx, scalar_like(em, 0, I64)),
                      emit(em, "lt", idx, scalar_like(em, n, I64)))
        ok = red.reduce(em, "all", inside, tuple(range(abstract_of(inside).ndim)), False)
        idx = emit(em, "require", idx, ok, status="INVALID_CHOICE")
    if n > _CHOOSE_CHAIN:
        stacked = emit(em, "stack", *(broadcast_to(em, v, shape) for v in vals), axis=0)
        where = expand_dims(em, broadcast_to(em, idx, shape), 0)
        picked = emit(em, "take_along_axis", stacked, where, axis=0)
        return reshape(em, picked, shape)
    res = vals[-1]
    for k in range(n - 2, -1, -1):
        res = emit(em, "where", emit(em, "eq", idx, scalar_like(em, k, I64)), vals[k], res)
    return broadcast_to(em, res, shape)


# --- piecewise ------------------------------------------------------------------------------------------

def np_piecewise(em: Emitter, x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any):
    """y = zeros_like(x), then each piece where its condition holds (a later condition wins, as
    numpy's assignments in order). A callable is traced once on the whole of x and its result
    selected with where: numpy calls it on x[cond] only, which gives the same values for the
    elementwise functions piecewise is meant for (a function of the selection's length or
    order, such as np.cumsum, differs)."""
    xv = to_value(em, x)
    xa = abstract_of(xv)
    conds = _conditions(em, condlist, xa.ndim)
    n, n2 = len(conds), len(funclist)
    if n == n2 - 1:
        none = conds[0] if n == 1 else red.reduce(em, "any", emit(em, "stack", *conds, axis=0), (0,), False)
        conds = conds + [emit(em, "logical_not", none) if n else scalar_like(em, True, irdt.bool_)]
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = emit(em, "full_like", xv, value=0, dtype=xa.dtype)
    for k, (cond, func) in enumerate(zip(conds, funclist)):
        if tuple(abstract_of(cond).shape) != tuple(xa.shape) and abstract_of(cond).ndim:
            raise IndexError(f"boolean index did not match indexed array: condition {k} has shape "
                             f"{fmt_shape(abstract_of(cond).shape)}, x {fmt_shape(xa.shape)}")
        piece = func(xv, *args, **kw) if callable(func) else func
        y = emit(em, "where", cond, _assigned(em, to_value(em, piece, xa.dtype), xa.shape), y)
    return y


def _conditions(em: Emitter, condlist: Any, x_ndim: int) -> list:
    """numpy's reading of condlist: a scalar or a single condition becomes a list of one; each
    condition is cast to bool."""
    if em.is_value(condlist):
        c = condlist
        if abstract_of(c).ndim == 0 or (x_ndim != 0 and abstract_of(c).ndim == 1):
            items = [c]
        else:
            m = static_int(abstract_of(c).shape[0], "the number of np.piecewise's conditions")
            items = [emit(em, "take", c, scalar_like(em, i, I64), axis=0) for i in range(m)]
    elif np.isscalar(condlist) or (x_ndim != 0 and not isinstance(condlist[0], (list, np.ndarray))
                                   and not em.is_value(condlist[0])):
        items = [condlist]
    else:
        items = list(condlist)
    return [_as_bool(em, c) for c in items]


def _as_bool(em: Emitter, c: Any):
    v = to_value(em, c) if em.is_value(c) else constant(em, np.asarray(c, dtype=bool))
    d = abstract_of(v).dtype
    return v if d.is_bool else emit(em, "ne", v, scalar_like(em, 0, d))


# --- ix_, fromfunction, from_dlpack -----------------------------------------------------------------------

def np_ix_(em: Emitter, *args: Any):
    nd = len(args)
    out = []
    for k, new in enumerate(args):
        if is_traced(em, new):
            v = new
            if abstract_of(v).ndim != 1:
                raise ValueError("Cross index must be 1 dimensional")
            if abstract_of(v).dtype.is_bool:
                raise UnsupportedError("np.ix_ of a traced boolean array: its nonzero() has a data-dependent "
                                       "length; pass integer indices (or a numpy bool array)")
        else:
            arr = np.asarray(new)
            if not isinstance(new, np.ndarray) and arr.size == 0:
                arr = arr.astype(np.intp)
            if arr.ndim != 1:
                raise ValueError("Cross index must be 1 dimensional")
            if arr.dtype == bool:
                arr = np.flatnonzero(arr)
            v = constant(em, arr)
        out.append(reshape(em, v, (1,) * k + (-1,) + (1,) * (nd - k - 1)))
    return tuple(out)


def np_fromfunction(em: Emitter, function: Callable, shape: Any, *, dtype: Any = float, like: Any = None,
                    **kwargs: Any):
    """`function` traced once on the index grids (numpy's np.indices(shape, dtype))."""
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    dims = tuple(index_arg(_static(em, d, "np.fromfunction", "shape"), "shape") for d in dims)
    dt = to_dtype(dtype, "dtype")
    if dt.is_bool and any(n > 2 for n in dims):
        raise TypeError("arange() is only supported for booleans when the result has at most length 2.")
    grids = []
    for k, n in enumerate(dims):
        g = reshape(em, emit(em, "iota", n=n, dtype=I64), (1,) * k + (n,) + (1,) * (len(dims) - k - 1))
        grids.append(cast(em, broadcast_to(em, g, dims), dt))
    return function(*grids, **kwargs)


def np_from_dlpack(em: Emitter, x: Any, /, *, device: Any = None, copy: Any = None):
    """A traced array exchanged through DLPack is the array itself (immutable: a copy is never seen)."""
    if device not in (None, "cpu"):
        raise ValueError(f"np.from_dlpack: unsupported device {device!r} (traced arrays are on the CPU)")
    return to_value(em, x)


# functions of Python scalars only: numpy computes them while tracing (a constant in the graph)
TRACE_TIME = (np.mask_indices,)

# numpy functions that are not one core op
DECOMPOSITIONS = {
    np.block: np_block, np.insert: np_insert, np.choose: np_choose, np.piecewise: np_piecewise,
    np.ix_: np_ix_, np.fromfunction: np_fromfunction, np.from_dlpack: np_from_dlpack,
}
