"""In-place updates as values: `scatter(x, idx, upd, kind, unique)` is x with, for p = 0, 1, ... in
order, x[idx[p]] replaced by upd[p] (kind None: numpy's `x[idx] = upd`, the last write of a
repeated index wins) or combined with it, x[idx[p]] = kind(x[idx[p]], upd[p]) (numpy's unbuffered
`ufunc.at`: a repeated index combines every time). `kind` is a scan kind (ir/scans.py: a reduction
record such as sum or max, or a binary elementwise row that keeps the dtype such as sub), or a unary
elementwise row that keeps the dtype (np.negative.at: x[idx[p]] = kind(x[idx[p]]), upd unused).

x, idx and upd are 1-D: the front end (aot/frontend/assignment.py) turns every `x[key] = v`,
np.put, np.place and ufunc.at into flat positions of x. A negative index counts from the end; one
out of range fails with IndexError. `unique` promises the positions are distinct (basic indexing),
which lets codegen write them on threads."""
from __future__ import annotations

import numpy as np

from ir.dtypes import DType
from ir.opdef import OPDEFS, OpError
from ir.scans import check_kind, record
from ir import dtypes as D
from ir.symbols import dims_equal, is_static

from ._define import defop, fmt_dtypes


def _scatter_dtype(dtypes: list[DType], *, kind, unique) -> DType:
    x, idx, upd = dtypes
    if not idx.is_int:
        raise OpError(f"scatter: indices must be integers, got dtypes ({fmt_dtypes(dtypes)})")
    if upd != x:
        raise OpError(f"scatter: the updates must have the array's dtype, got dtypes ({fmt_dtypes(dtypes)})")
    d = OPDEFS.get(kind) if isinstance(kind, str) else None
    if d is not None and d.arity == 1 and d.has("elementwise"):  # a unary ufunc's .at: x[j] = f(x[j])
        if d.dtype_rule([x]) != x:
            raise OpError(f"scatter: kind {kind!r} maps {x} to {d.dtype_rule([x])}; an update keeps the dtype")
    elif kind is not None:
        check_kind("scatter", kind, x)
    return x


def _scatter_shape(shapes: list[tuple], *, kind, unique) -> tuple:
    x, idx, upd = (tuple(s) for s in shapes)
    if len(x) != 1 or len(idx) != 1 or len(upd) != 1 or not dims_equal(idx[0], upd[0]):
        raise OpError(f"scatter: expected a 1-D array and 1-D indices and updates of one length, got shapes "
                      f"{list(shapes)}")
    if is_static(x[0]) and x[0] == 0 and not (is_static(idx[0]) and idx[0] == 0):
        raise OpError(f"scatter: cannot update {idx[0]} positions of an empty array")
    return x


def _combine(kind):
    rec = record(kind)
    if rec is not None:
        return lambda a, b: rec.ufunc(a, b)
    ref = OPDEFS[kind].reference
    return (lambda a, b: ref(a)) if OPDEFS[kind].arity == 1 else ref


def _scatter_reference(x, idx, upd, *, kind, unique):
    """x with the updates applied in order (IndexError for an index out of range)."""
    x, idx, upd = np.asarray(x), np.asarray(idx), np.asarray(upd)
    try:  # the dtypes the row defines (numpy itself would cast)
        _scatter_dtype([D.from_numpy(a.dtype) for a in (x, idx, upd)], kind=kind, unique=unique)
    except OpError as e:
        raise TypeError(str(e)) from None
    try:
        _scatter_shape([x.shape, idx.shape, upd.shape], kind=kind, unique=unique)
    except OpError as e:
        raise ValueError(str(e)) from None
    out = np.array(x, copy=True)
    n = out.shape[0]
    idx = idx.astype(np.int64)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"index {idx[bad][0]} is out of bounds for axis 0 with size {n}")
    if kind is None:
        out[idx] = upd  # numpy assigns in order: the last of repeated indices wins
        return out
    step = _combine(kind)
    for j, v in zip(idx.tolist(), np.asarray(upd)):
        out[j] = step(out[j], v)
    return out


def _scatter_raises(op) -> bool:
    """Indices are read at run time (IndexError); an integer power can raise too."""
    return True


defop("scatter", arity=3, dtype_rule=_scatter_dtype, shape_rule=_scatter_shape, ref=_scatter_reference,
      attrs={"kind": None, "unique": False}, traits={"opaque_kernel"}, raises=_scatter_raises,
      markers={"no_frontend_name": "x[key] = v, np.put, np.place, np.put_along_axis, np.fill_diagonal and "
                                   "ufunc.at decompose into it (aot/frontend/assignment.py)"})
