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
from ir.symbols import is_static

from ._define import check_dtype_attr, defop
from ._shapes import check_axis
from ._transforms import along, as_int64, axis_batch, conj, emit, iota


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


# --- the transforms' rules ----------------------------------------------------------------------
# The kinds' derivatives: sum and sub are linear; prod is exact where x has zeros (torch's method:
# division only before a lane's first zero, the first zero's term from the product that skips it);
# max/min give each output's derivative to the elements that attain it so far, k ties 1/k each (the
# max reduction's rule, JAX's convention, applied to each prefix); any other elementwise kind
# differentiates numpy's fold out[i] = f(out[i-1], x[i]) with the row's own partials, a linear
# recurrence solved by a log-depth (Hillis-Steele) scan, exact and division-free.
def _scan(x, kind, axis, dtype=None):
    return emit("scan", x, kind=kind, axis=axis, dtype=dtype)


def _flip(x, axis):
    return emit("flip", x, axes=(axis,))


def _rscan(x, kind, axis, dtype=None):
    """The scan from the end of the axis (a suffix sum, min...)."""
    return _flip(_scan(_flip(x, axis), kind, axis, dtype), axis)


def _part(x, axis, start, stop):
    return x[(slice(None),) * axis + (slice(start, stop),)]


def _shift(x, axis, d: int = 1):
    """x moved d places along the axis, its first d elements repeated in front (values kept benign)."""
    return emit("concatenate", _part(x, axis, 0, d), _part(x, axis, None, -d), axis=axis)


def _positions(x, axis):
    return along(iota(x, x.meta.shape[axis]), axis, x.ndim)


def _take(x, idx, axis):
    return emit("take_along_axis", x, idx, axis=axis)


def _acc(x, out):
    """x in the scan's accumulation dtype (the derivative of its cast is the interpreter's)."""
    return x if x.meta.dtype == out.meta.dtype else emit("cast", x, dtype=out.meta.dtype)


def _sum_vjp(g, x, *, out, axis, **_):
    return (_rscan(g, "sum", axis),)


def _sub_vjp(g, x, *, out, axis, **_):
    """out[i] = x[0] - x[1] - ... - x[i]."""
    total = _rscan(g, "sum", axis)
    return (np.where(_positions(x, axis) == 0, total, -total),)


def _prod_parts(x, axis):
    """(before the lane's first zero, at it, x with 1 from the first zero on, the cumprod skipping
    the first zero)."""
    zero = x == 0
    seen = _scan(zero, "sum", axis, D.int64)
    before, first = seen == 0, zero & (seen == 1)
    return before, first, np.where(before, x, 1), _scan(np.where(first, 1, x), "prod", axis)


def _prod_vjp(g, x, *, out, axis, **_):
    """d out[i] / d x[j] = prod of x[k], k <= i, k != j (j <= i): out[i] / x[j] before the first
    zero; at it the cumprod skipping it; after it zero."""
    x = _acc(x, out)
    before, first, safe, skip = _prod_parts(x, axis)
    lead = np.where(before, _rscan(g * conj(out), "sum", axis) / conj(safe), 0)
    return (lead + np.where(first, _rscan(g * conj(skip), "sum", axis), 0),)


def _prod_jvp(ts, x, *, out, axis, **_):
    x, t = _acc(x, out), _acc(ts[0], out)
    before, first, safe, skip = _prod_parts(x, axis)
    t_first = emit("sum", np.where(first, t, 0), axes=(axis,), keepdims=True)
    return np.where(before, out * _scan(np.where(before, t / safe, 0), "sum", axis), t_first * skip)


def _attaining(x, out, axis):
    """For a running max/min: where x attains it (hit), each output's number of attaining elements
    so far (count, 1 where none: a nan), and the run of equal outputs each position lies in (by its
    first and last positions): the elements attaining out[i] are the hits of i's run up to i."""
    k = _positions(x, axis)
    hit = x == out
    new = (k == 0) | (out != _shift(out, axis))  # a run of equal outputs starts
    start = _scan(np.where(new, k, 0), "max", axis)
    ends = emit("concatenate", _part(new, axis, 1, None), np.ones_like(_part(new, axis, 0, 1)), axis=axis)
    end = _rscan(np.where(ends, k, np.iinfo(np.int64).max), "min", axis)
    hits = _scan(hit, "sum", axis, D.int64)
    count = hits - _take(hits - as_int64(hit), start, axis)
    count = emit("cast", np.where(count > 0, count, 1), dtype=out.meta.dtype.real_dtype)
    return hit, count, start, end


def _chooser_vjp(g, x, *, out, axis, **_):
    """x[j], a hit, receives g[i] / count[i] from every i >= j of its run."""
    hit, count, _, end = _attaining(_acc(x, out), out, axis)
    w = g / count
    after = _rscan(w, "sum", axis)
    return (np.where(hit, after - _take(after - w, end, axis), 0),)


def _chooser_jvp(ts, x, *, out, axis, **_):
    hit, count, start, _ = _attaining(_acc(x, out), out, axis)
    t = np.where(hit, _acc(ts[0], out), 0)
    upto = _scan(t, "sum", axis)
    return (upto - _take(upto - t, start, axis)) / count


def _fold_partials(kind: str, x, out, axis):
    """(A, B): d out[i] = A[i] d out[i-1] + B[i] d x[i], numpy's fold out[i] = kind(out[i-1], x[i])
    differentiated with the row's own jvp (A[0] = 0, B[0] = 1: out[0] = x[0])."""
    d = OPDEFS[kind]
    if d.jvp is None:
        why = d.markers.get("not_differentiable", "it has no jvp rule")
        raise OpError(f"scan: kind {kind!r} has no derivative ({why})")
    prev, one = _shift(out, axis), np.ones_like(out)
    parts = []
    for ts in ([one, None], [None, one]):
        p = d.jvp(ts, prev, x, out=out)
        parts.append(np.zeros_like(out) if p is None else np.broadcast_to(p, out.meta.shape))
    first = _positions(x, axis) == 0
    return np.where(first, 0, parts[0]), np.where(first, 1, parts[1])


def _linear_recurrence(a, u, axis):
    """z[i] = a[i] z[i-1] + u[i] (z[-1] = 0) along the axis: log2(n) doubling steps composing the
    affine maps z -> a z + u of ever longer ranges (exact, no division)."""
    n = a.meta.shape[axis]
    if not is_static(n):
        raise OpError("scan: the derivative of an elementwise kind needs a static axis length")
    step = 1
    while step < n:
        pad = tuple((step, 0) if i == axis else (0, 0) for i in range(a.ndim))
        u = u + a * emit("pad", _part(u, axis, 0, n - step), pad_width=pad, value=0)
        if 2 * step < n:
            a = a * emit("pad", _part(a, axis, 0, n - step), pad_width=pad, value=1)
        step *= 2
    return u


def _fold_vjp(g, x, *, out, kind, axis, **_):
    """The adjoint recurrence w[j] = g[j] + conj(A[j+1]) w[j+1], from the end; dx = conj(B) w."""
    a, b = _fold_partials(kind, _acc(x, out), out, axis)
    coef = emit("pad", _part(_flip(conj(a), axis), axis, 0, -1),
                pad_width=tuple((1, 0) if i == axis else (0, 0) for i in range(a.ndim)), value=0)
    w = _flip(_linear_recurrence(coef, _flip(g, axis), axis), axis)
    return (conj(b) * w,)


def _fold_jvp(ts, x, *, out, kind, axis, **_):
    a, b = _fold_partials(kind, _acc(x, out), out, axis)
    return _linear_recurrence(a, b * _acc(ts[0], out), axis)


_VJPS = {"sum": _sum_vjp, "sub": _sub_vjp, "prod": _prod_vjp, "max": _chooser_vjp, "min": _chooser_vjp}
_JVPS = {"prod": _prod_jvp, "max": _chooser_jvp, "min": _chooser_jvp}


def _scan_vjp(g, x, *, out, kind, axis, dtype=None):
    return (_VJPS.get(kind, _fold_vjp))(g, x, out=out, kind=kind, axis=axis % x.ndim)


def _scan_jvp(ts, x, *, out, kind, axis, dtype=None):
    if kind in ("sum", "sub"):  # linear: the scan of the tangent
        return emit("scan", ts[0], kind=kind, axis=axis, dtype=dtype)
    return (_JVPS.get(kind, _fold_jvp))(ts, x, out=out, kind=kind, axis=axis % x.ndim)


defop("scan", arity=1, dtype_rule=_scan_dtype, shape_rule=_scan_shape, ref=_scan_reference,
      attrs={"kind": REQUIRED, "axis": REQUIRED, "dtype": None}, traits={"scan", "opaque_kernel"},
      numpy_names=("cumsum", "cumprod"), raises=_scan_raises, vjp=_scan_vjp, jvp=_scan_jvp,
      batch=axis_batch("scan"))
