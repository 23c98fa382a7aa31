"""Compaction: `compact(values, mask, fill, size=N)` is numpy's values[mask] cut or padded to N rows.

values has rank >= 1 and mask is a 1-D bool of values' first dim (or both are 0-d: numpy's x[m]
of a 0-d x, one row or none): the selected rows (slices along axis 0) come first, in order; when
fewer than N are selected the rest of the N rows hold `fill` (a 0-d operand of values' dtype, so it
may be computed: the smallest unique value, a traced fill_value); when more, only the first N are
kept. N is a static or symbolic size.

It is the core of jax's `size=`/`fill_value=` extension of numpy's data-dependent functions
(aot/frontend/numpy_sized.py: nonzero, unique, the set functions, extract, compress), which give
numpy's result padded with fill_value, or its first `size` entries.
"""
from __future__ import annotations

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError
from ir.symbols import dims_equal, is_static

from ._define import defop, fmt_dtypes
from ._shapes import check_dim
from ._transforms import (
    as_int64,
    emit,
    full,
    iota,
    move_axis,
    reshape,
    size_value,
    to_front,
    to_front_of,
    zeros_like,
)


def _compact_dtype(dtypes: list[DType], *, size) -> DType:
    values, mask, fill = dtypes
    if not mask.is_bool or fill != values:
        raise OpError(f"compact: expected (values, a bool mask, a fill value of the values' dtype), got "
                      f"dtypes ({fmt_dtypes(dtypes)})")
    return values


def _compact_shape(shapes: list[tuple], *, size) -> tuple:
    values, mask, fill = (tuple(s) for s in shapes)
    rows = (values == mask == ()) or (len(mask) == 1 and values and dims_equal(mask[0], values[0]))
    if not rows or fill != ():
        raise OpError(f"compact: expected values of rank >= 1 and a 1-D mask of their first dim (or both "
                      f"0-d), and a 0-d fill value, got shapes {values}, {mask} and {fill}")
    return (check_dim("compact", size, "size"),) + values[1:]


def _compact_reference(values, mask, fill, *, size):
    """values[mask] cut to its first `size` rows, or padded to `size` rows with `fill`."""
    if mask.dtype != np.bool_ or fill.dtype != values.dtype:
        raise TypeError(f"compact: expected a bool mask and a fill of dtype {values.dtype}, got {mask.dtype} "
                        f"and {fill.dtype}")
    if fill.ndim or mask.ndim != min(values.ndim, 1):
        raise ValueError(f"compact: expected a 0-d fill and a mask of rank {min(values.ndim, 1)}, got shapes "
                         f"{fill.shape} and {mask.shape}")
    if mask.shape != values.shape[:1]:  # (numpy lets an empty mask index a length-1 axis)
        raise IndexError(f"compact: a mask of shape {mask.shape} for values of shape {values.shape}")
    picked = values[mask]
    out = np.empty((int(size),) + values.shape[1:], values.dtype)
    k = min(len(out), len(picked))
    out[:k] = picked[:k]
    out[k:] = fill
    return out


# --- the transforms' rules ----------------------------------------------------------------------
def _rows_like(x, k: int):
    """x shaped to broadcast along axis 0 of rank-k arrays."""
    return reshape(x, tuple(x.meta.shape) + (1,) * (k - x.ndim))


def _as_rows(values, mask):
    """A 0-d pair as one row (numpy's x[m] of a 0-d x: one row or none)."""
    return (reshape(values, (1,)), reshape(mask, (1,))) if values.ndim == 0 else (values, mask)


def _padding(mask, size):
    """Which of the result's rows hold the fill: those past the number selected."""
    count = emit("sum", as_int64(mask), axes=(0,), keepdims=False)
    return iota(mask, size) >= count


def _compact_vjp(g, values, mask, fill, *, out, size):
    """Selected row r (the p-th selected, p < size) receives row p of g; the fill, the padding rows."""
    if is_static(size) and size == 0:
        return zeros_like(values), None, zeros_like(fill)
    v, m = _as_rows(values, mask)
    pos = emit("scan", m, kind="sum", axis=0, dtype=D.int64) - 1  # each row's place among the selected
    kept = m & (pos < size_value(m, size))
    rows = emit("take", g, np.where(kept, pos, 0), axis=0)
    dv = reshape(np.where(_rows_like(kept, v.ndim), rows, 0), values.meta.shape)
    pad = np.where(_rows_like(_padding(m, size), g.ndim), g, 0)
    return dv, None, emit("sum", pad, axes=tuple(range(g.ndim)), keepdims=False)


def _compact_jvp(ts, values, mask, fill, *, out, size):
    if ts[0] is None and ts[2] is None:
        return None
    tv, tf = (zeros_like(x) if t is None else t for t, x in ((ts[0], values), (ts[2], fill)))
    return emit("compact", tv, mask, tf, size=size)


def _compact_batch(vals, dims, *, size):
    """A shared mask: the examples side by side in dim 1, one compact (a batched fill where the
    padding rows are). Per-example masks: one compact of all the examples' rows (example-major),
    from which each example's first `size` selected rows are gathered (its offset: the number the
    examples before it selected), the rest of its rows its fill."""
    (values, mask, fill), (dv, dm, df) = vals, dims
    if values.ndim - (dv is not None) == 0:  # per-example 0-d pairs: one row each
        values, mask = (reshape(x, (*x.meta.shape, 1) if d is not None else (1,))
                        for x, d in ((values, dv), (mask, dm)))
        dv, dm = (None if dv is None else 0), (None if dm is None else 0)
    b = next(v.meta.shape[d] for v, d in zip(vals, dims) if d is not None)
    zero = full(values, (), 0, values.meta.dtype)
    if dm is None:
        shape = tuple(values.meta.shape)
        v = move_axis(values, dv, 1) if dv is not None else reshape(values, (shape[0], 1, *shape[1:]))
        got = emit("compact", v, mask, zero if df is not None else fill, size=size)
        if df is None:
            return got, 1
        pad = _rows_like(_padding(mask, size), got.ndim)
        return np.where(pad, reshape(fill, (1, b) + (1,) * (got.ndim - 2)), got), 1
    v = to_front_of(values, dv, b)
    m = to_front(mask, dm)
    n, rest = v.meta.shape[1], tuple(v.meta.shape[2:])
    picked = emit("compact", reshape(v, (b * n, *rest)), reshape(m, (b * n,)), zero, size=b * n)
    counts = emit("sum", as_int64(m), axes=(1,), keepdims=False)
    offsets = emit("scan", counts, kind="sum", axis=0, dtype=D.int64) - counts
    k = reshape(iota(m, size), (1, size))
    kept = k < reshape(counts, (b, 1))
    src = np.where(kept, reshape(offsets, (b, 1)) + k, 0)
    rows = reshape(emit("take", picked, reshape(src, (b * size,)), axis=0), (b, size, *rest))
    f = reshape(to_front(fill, df), (b,) + (1,) * (len(rest) + 1)) if df is not None else fill
    return np.where(_rows_like(kept, rows.ndim), rows, f), 0


defop("compact", arity=3, dtype_rule=_compact_dtype, shape_rule=_compact_shape, ref=_compact_reference,
      attrs={"size": REQUIRED}, traits={"opaque_kernel"},
      markers={"no_frontend_name": "the size= forms of nonzero, unique, the set functions, extract and "
                                   "compress decompose into it (aot/frontend/numpy_sized.py)"},
      vjp=_compact_vjp, jvp=_compact_jvp, batch=_compact_batch)
