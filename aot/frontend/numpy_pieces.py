"""Splitting, joining and rearranging functions (numpy/lib/_shape_base_impl.py,
_function_base_impl.py and _core/numeric.py's formulas), by decomposition into slices, takes,
concatenations and transposes: np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit,
np.unstack, np.dstack, np.row_stack, np.append, np.delete, np.resize, np.rot90, np.rollaxis and
np.select. Split points, deleted indices and new shapes are trace-time values (the pieces'
shapes depend on them); a traced one raises UnsupportedError."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ir import dtypes as irdt

from .emitter import Emitter, abstract_of
from .indexing import slice_axis
from .numpy_shape import (
    flip,
    np_atleast_3d,
    np_concatenate,
    np_vstack,
    reshape,
    transpose,
)
from .numpy_ufuncs import emit
from .operands import AxisError, UnsupportedError, cast, constant, normalize_axis, result_dtype, to_value
from .shapes import broadcast_shapes, static_int
from .static_args import is_traced


def _static(em: Emitter, value: Any, fname: str, what: str) -> Any:
    if is_traced(em, value):
        raise UnsupportedError(f"{fname}: {what} must be known at trace time (the result's shapes depend "
                               f"on it)")
    return value


# --- splitting ----------------------------------------------------------------------------------------

def np_array_split(em: Emitter, ary: Any, indices_or_sections: Any, axis: Any = 0):
    x = to_value(em, ary)
    spec = _static(em, indices_or_sections, "np.array_split", "indices_or_sections")
    ax = normalize_axis(axis, abstract_of(x).ndim)
    n = abstract_of(x).shape[ax]
    try:
        points = [0] + [operator.index(i) for i in spec] + [n]
    except TypeError:
        sections = int(spec)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(static_int(n, "the length of a split axis"), sections)
        points = np.cumsum([0] + extras * [each + 1] + (sections - extras) * [each]).tolist()
    return [slice_axis(em, x, ax, points[i], points[i + 1]) for i in range(len(points) - 1)]


def np_split(em: Emitter, ary: Any, indices_or_sections: Any, axis: Any = 0):
    x = to_value(em, ary)
    spec = _static(em, indices_or_sections, "np.split", "indices_or_sections")
    try:
        len(spec)
    except TypeError:
        ax = normalize_axis(axis, abstract_of(x).ndim)
        n = static_int(abstract_of(x).shape[ax], "the length of a split axis")
        if n % spec:
            raise ValueError("array split does not result in an equal division") from None
    return np_array_split(em, x, spec, axis)


def _split_along(fname: str, min_ndim: int, axis_of):
    def translate(em: Emitter, ary: Any, indices_or_sections: Any):
        x = to_value(em, ary)
        nd = abstract_of(x).ndim
        if nd < min_ndim:
            what = {1: "1 or more", 2: "2 or more", 3: "3 or more"}[min_ndim]
            raise ValueError(f"{fname} only works on arrays of {what} dimensions")
        return np_split(em, x, indices_or_sections, axis_of(nd))

    translate.__name__ = f"np_{fname}"
    return translate


np_hsplit = _split_along("hsplit", 1, lambda nd: 1 if nd > 1 else 0)
np_vsplit = _split_along("vsplit", 2, lambda nd: 0)
np_dsplit = _split_along("dsplit", 3, lambda nd: 2)


def np_unstack(em: Emitter, x: Any, /, *, axis: int = 0):
    v = to_value(em, x)
    nd = abstract_of(v).ndim
    if nd == 0:
        raise ValueError("Input array must be at least 1-d.")
    ax = normalize_axis(axis, nd)
    n = static_int(abstract_of(v).shape[ax], "the length of an unstacked axis")
    return tuple(emit(em, "take", v, constant(em, np.int64(i), irdt.int64), axis=ax) for i in range(n))


# --- joining ------------------------------------------------------------------------------------------

def np_dstack(em: Emitter, tup: Any):
    arrs = np_atleast_3d(em, *tup)
    return np_concatenate(em, list(arrs) if isinstance(arrs, tuple) else [arrs], 2)


def np_row_stack(em: Emitter, tup: Any, *, dtype: Any = None, casting: str = "same_kind"):
    return np_vstack(em, tup, dtype=dtype, casting=casting)


def np_append(em: Emitter, arr: Any, values: Any, axis: Any = None):
    x, v = to_value(em, arr), to_value(em, values)
    if axis is None:
        x, v = reshape(em, x, (-1,)), reshape(em, v, (-1,))
        axis = 0
    return np_concatenate(em, [x, v], axis)


def np_delete(em: Emitter, arr: Any, obj: Any, axis: Any = None):
    x = to_value(em, arr)
    if axis is None:
        x, axis = reshape(em, x, (-1,)), 0
    ax = normalize_axis(axis, abstract_of(x).ndim)
    obj = _static(em, obj, "np.delete", "obj")
    n = static_int(abstract_of(x).shape[ax], "the length of the axis np.delete removes from")
    keep = np.ones(n, bool)
    if isinstance(obj, slice):
        keep[np.arange(n)[obj]] = False
    else:
        idx = np.asarray(obj)
        if idx.dtype == bool:
            if idx.shape != (n,):
                raise ValueError(f"boolean array argument obj to delete must be one dimensional and match "
                                 f"the axis length of {n}")
            keep = ~idx
        else:
            if idx.size and idx.dtype.kind not in "iu":
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            bad = idx[(idx < -n) | (idx >= n)]
            if bad.size:
                raise IndexError(f"index {bad.flat[0]} is out of bounds for axis {ax} with size {n}")
            keep[idx.astype(np.int64)] = False
    return emit(em, "take", x, constant(em, np.flatnonzero(keep).astype(np.int64), irdt.int64), axis=ax)


def np_resize(em: Emitter, a: Any, new_shape: Any):
    x = reshape(em, to_value(em, a), (-1,))
    shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    shape = tuple(operator.index(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    size, new = static_int(abstract_of(x).shape[0], "the size of a resized array"), int(np.prod(shape))
    if not size or not new:
        return emit(em, "full", shape=shape, value=0, dtype=abstract_of(x).dtype)
    reps = -(-new // size)
    y = np_concatenate(em, [x] * reps, 0) if reps > 1 else x
    return reshape(em, slice_axis(em, y, 0, 0, new), shape)


# --- rearranging ----------------------------------------------------------------------------------------

def np_rot90(em: Emitter, m: Any, k: int = 1, axes: Any = (0, 1)):
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    x = to_value(em, m)
    nd = abstract_of(x).ndim
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError("Axes must be different.")
    if axes[0] >= nd or axes[0] < -nd or axes[1] >= nd or axes[1] < -nd:
        raise ValueError(f"Axes={axes} out of range for array of ndim={nd}.")
    a0, a1 = axes[0] % nd, axes[1] % nd
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip(em, x, (a0, a1))
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(em, flip(em, x, (a1,)), perm)
    return flip(em, transpose(em, x, perm), (a1,))


def np_rollaxis(em: Emitter, a: Any, axis: Any, start: Any = 0):
    x = to_value(em, a)
    n = abstract_of(x).ndim
    axis = normalize_axis(axis, n)
    start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return x
    perm = [i for i in range(n) if i != axis]
    perm.insert(start, axis)
    return transpose(em, x, perm)


# --- selection ----------------------------------------------------------------------------------------

def np_select(em: Emitter, condlist: Any, choicelist: Any, default: Any = 0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choices = list(choicelist) + [default]
    dt = result_dtype(em, *choices)
    conds = [to_value(em, c) for c in condlist]
    for i, c in enumerate(conds):
        if not abstract_of(c).dtype.is_bool:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    vals = [to_value(em, c, dt) for c in choices]
    cshape = broadcast_shapes(*(abstract_of(c).shape for c in conds))
    vshape = broadcast_shapes(*(abstract_of(v).shape for v in vals))
    shape = cshape if not vshape else broadcast_shapes(cshape, vshape)
    out = emit(em, "broadcast_to", vals[-1], shape=tuple(shape)) if tuple(abstract_of(vals[-1]).shape) != \
        tuple(shape) else vals[-1]
    for c, v in zip(conds[::-1], vals[-2::-1]):  # the first condition that holds wins
        out = emit(em, "where", c, v, out)
    if tuple(abstract_of(out).shape) != tuple(shape):  # numpy's result takes the first pair's shape
        out = emit(em, "broadcast_to", out, shape=tuple(shape))
    return cast(em, out, dt)


# numpy functions that are not one core op
DECOMPOSITIONS = {
    np.split: np_split, np.array_split: np_array_split, np.hsplit: np_hsplit, np.vsplit: np_vsplit,
    np.dsplit: np_dsplit, np.dstack: np_dstack, np.append: np_append, np.delete: np_delete,
    np.resize: np_resize, np.rot90: np_rot90, np.rollaxis: np_rollaxis, np.select: np_select,
}
for _name, _fn in (("unstack", np_unstack), ("row_stack", np_row_stack)):
    if hasattr(np, _name):  # np.unstack: numpy >= 2.1; np.row_stack: deprecated
        DECOMPOSITIONS[getattr(np, _name)] = _fn
