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

from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError
from ir.symbols import dims_equal

from ._define import defop, fmt_dtypes
from ._shapes import check_dim


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


defop("compact", arity=3, dtype_rule=_compact_dtype, shape_rule=_compact_shape, ref=_compact_reference,
      attrs={"size": REQUIRED}, traits={"opaque_kernel"},
      markers={"no_frontend_name": "the size= forms of nonzero, unique, the set functions, extract and "
                                   "compress decompose into it (aot/frontend/numpy_sized.py)"})
