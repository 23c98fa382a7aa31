"""Selection in the front end: np.partition / np.argpartition as the partition rows (their argument
checks are numpy_sorting's, which calls `partition`), and `order_statistics`, which np.median,
np.percentile, np.quantile and their nan forms use to gather the sorted lanes' elements at some
positions without sorting (the select_kth row, aot/ops/selection_ops.py).

Complex lanes (the kernels order real keys only) and partitions around many kth values take the
sort, which is a valid partition for every kth.
"""
from __future__ import annotations

from typing import Any

from ir import dtypes as irdt

from .emitter import Emitter, abstract_of
from .numpy_shape import broadcast_to, take
from .numpy_ufuncs import emit
from .shapes import dim_equals

KTH_MAX = 16  # partitions around more kth values than this take the sort


def partition(em: Emitter, x: Any, axis: int, kth: list[int], arg: bool):
    """np.partition (arg: np.argpartition) of x along a normalised axis around checked kth."""
    xv = abstract_of(x)
    n = xv.shape[axis]
    if xv.dtype.is_complex or len(set(kth)) > KTH_MAX or not kth or dim_equals(n, 0):
        return emit(em, "argsort" if arg else "sort", x, axis=axis)
    if dim_equals(n, 1) and not arg:
        return x
    return emit(em, "argpartition" if arg else "partition", x, kth=tuple(int(k) for k in kth), axis=axis)


def order_statistics(em: Emitter, y: Any, axis: int, positions: list) -> list:
    """The elements of sort(y, axis) at each int64 array of `positions` (each (Q,) for every lane,
    or y's shape with the axis replaced by Q), gathered by one select_kth."""
    yv = abstract_of(y)
    if yv.dtype.is_complex:
        s = emit(em, "sort", y, axis=axis)
        return [_gather(em, s, p, axis) for p in positions]
    per_lane = any(abstract_of(p).ndim > 1 for p in positions)
    if per_lane:  # every request per lane: a shared (Q,) one broadcasts along the lanes
        shape = tuple(yv.shape)
        positions = [p if abstract_of(p).ndim > 1 else
                     broadcast_to(em, p, shape[:axis] + (abstract_of(p).shape[0],) + shape[axis + 1:])
                     for p in positions]
    where = axis if per_lane else 0
    sizes = [abstract_of(p).shape[where] for p in positions]
    idx = positions[0] if len(positions) == 1 else emit(em, "concatenate", *positions, axis=where)
    got = emit(em, "select_kth", y, cast_index(em, idx), axis=axis)
    if len(positions) == 1:
        return [got]
    out, start = [], 0
    for size in sizes:
        starts = [0] * yv.ndim
        stops: list = [None] * yv.ndim
        starts[axis], stops[axis] = start, start + size
        out.append(emit(em, "slice", got, starts=tuple(starts), stops=tuple(stops), steps=(1,) * yv.ndim))
        start = start + size
    return out


def cast_index(em: Emitter, idx: Any):
    if abstract_of(idx).dtype == irdt.int64:
        return idx
    return emit(em, "cast", idx, dtype=irdt.int64)


def _gather(em: Emitter, s: Any, idx: Any, axis: int):
    if abstract_of(idx).ndim == 1:
        return take(em, s, idx, axis)
    return emit(em, "take_along_axis", s, idx, axis=axis)
