"""Scans: `scan(x, kind, axis, dtype)` is numpy's accumulate along one normalised `axis`, a
sequential fold out[0] = x[0], out[i] = op(out[i-1], x[i]) in `dtype` (None: x's dtype). x is cast
to `dtype` as the `cast` row casts, element by element as numpy's loops do (np.cumsum of int32 or
bool scans int64), so the conversion costs no pass of its own.

`kind` is a reduction record's name (sum, prod, max, min, any, all: the record's ufunc is the
meaning and its combine rule the lowering) or a binary elementwise row's name whose loop keeps the
dtype (sub, div, pow, ...: the row itself is the combine). ir/scans.py defines the kinds.
"""
from __future__ import annotations

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import OPDEFS, REQUIRED, OpError, may_raise
from ir.scans import check_kind, combine_body, record

from ._define import check_dtype_attr, defop
from ._shapes import check_axis


def _scan_dtype(dtypes: list[DType], *, kind, axis, dtype) -> DType:
    (dt,) = dtypes
    acc = dt if dtype is None else check_dtype_attr("scan", dtype)
    check_kind("scan", kind, acc)
    return acc


def _scan_shape(shapes: list[tuple], *, kind, axis, dtype) -> tuple:
    shape = tuple(shapes[0])
    if not shape:
        raise OpError("scan: the operand must have rank >= 1 (the front end makes a 0-d array 1-d)")
    check_axis("scan", axis, len(shape))
    return shape


def _scan_reference(x, *, kind, axis, dtype):
    """numpy's accumulate of `kind` along `axis` of x cast to `dtype`: the record's ufunc, or a fold
    of the row's reference."""
    x = np.asarray(x)
    acc = _scan_dtype([D.from_numpy(x.dtype)], kind=kind, axis=axis, dtype=dtype)  # the kinds it defines
    if acc.numpy != x.dtype:
        x = OPDEFS["cast"].reference(x, dtype=acc)
    rec = record(kind)
    if rec is not None:
        return rec.ufunc.accumulate(x, axis=axis, dtype=x.dtype)
    step = OPDEFS[kind].reference
    out = np.empty_like(x)
    src, dst = np.moveaxis(x, axis, 0), np.moveaxis(out, axis, 0)
    if src.shape[0]:
        dst[0] = src[0]
    for i in range(1, src.shape[0]):
        dst[i] = step(dst[i - 1], src[i])
    return out


def _scan_raises(op) -> bool:
    """An elementwise combine that can raise (an integer power) makes the scan raise."""
    kind = op.attrs["kind"]
    if record(kind) is not None:
        return False
    return any(may_raise(o) for o in combine_body(kind, op.results[0].type.dtype).ops)


defop("scan", arity=1, dtype_rule=_scan_dtype, shape_rule=_scan_shape, ref=_scan_reference,
      attrs={"kind": REQUIRED, "axis": REQUIRED, "dtype": None}, traits={"scan", "opaque_kernel"},
      numpy_names=("cumsum", "cumprod"), raises=_scan_raises)
