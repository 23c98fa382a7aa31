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

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import OPDEFS, OpError
from ir.scans import check_kind, record
from ir.symbols import dims_equal, is_static

from ._define import defop, fmt_dtypes
from ._transforms import (
    broadcast_to,
    conj,
    emit,
    full,
    iota,
    known_value,
    reshape,
    size_value,
    to_front,
    wrap_index,
)


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


# --- the transforms' rules ------------------------------------------------------------------------
# Every kind but the generic rows' is differentiated with repeated indices too: an overwrite's
# derivative goes to the last write (numpy's), a combining kind's is the fold's product rule, and
# max/min share it among ties (JAX's convention, as the max reduction: aot/ops/reduce.py).
def _at(v, idx):
    return emit("take", v, idx, axis=0)


def _put(base, idx, upd, kind, unique=False):
    return emit("scatter", base, idx, upd, kind=kind, unique=unique)


def _fill(like, n, value, dtype=None):
    return full(like, (n,), value, dtype or like.meta.dtype)


def _distinct(x, idx, unique: bool) -> bool:
    """Whether each position is written once: promised, or indices the traced code spelled."""
    if unique:
        return True
    v, n = known_value(idx), x.meta.shape[0]
    if v is None or not is_static(n) or n == 0:
        return False
    wrapped = v.astype(np.int64).ravel() % int(n)
    return np.unique(wrapped).size == wrapped.size


def _last_writes(x, idx, upd):
    """Per update, whether it is the last write to its position (the one numpy keeps)."""
    k = upd.meta.shape[0]
    ids = iota(idx, k)
    last = _put(_fill(ids, x.meta.shape[0], -1), idx, ids, "max")
    return emit("eq", _at(last, idx), ids)


def _as(v, like):
    return emit("cast", v, dtype=like.meta.dtype)


def _scalar(like, value):
    return full(like, (), value, like.meta.dtype)


def _coefficients(x, idx, upd, out, kind, unique):
    """(d out / d x, d out[idx[p]] / d upd[p]) of a combining kind, elementwise over x and upd."""
    n = x.meta.shape[0]
    if kind in ("max", "min"):  # ties (x and every update equal to the result) share the derivative
        hit_x, hit_u = _as(emit("eq", x, out), x), _as(emit("eq", upd, _at(out, idx)), x)
        count = emit("add", hit_x, _put(_fill(x, n, 0), idx, hit_u, "sum"))
        return emit("div", hit_x, count), emit("div", hit_u, _at(count, idx))
    ones = _fill(x, n, 1)
    if kind == "div":  # x / (u_1 u_2 ...): 1 / P and -out / u_p
        factor = emit("div", _scalar(x, 1), _put(ones, idx, upd, "prod"))
        return factor, emit("neg", emit("div", _at(out, idx), upd))
    # prod: x u_1 u_2 ...: P, and x times the other factors of u_p's position (zeros counted, not divided)
    prod = _put(ones, idx, upd, "prod")
    if _distinct(x, idx, unique):
        return prod, _at(x, idx)
    zero = emit("eq", upd, 0)
    zeros = _at(_put(_fill(x, n, 0), idx, _as(zero, x), "sum"), idx)
    one, nil = _scalar(x, 1), _scalar(x, 0)
    nonzero = _at(_put(ones, idx, emit("where", zero, one, upd), "prod"), idx)
    without = emit("div", nonzero, emit("where", zero, one, upd))  # a nonzero u_p divided out
    others = emit("where", zero, emit("where", emit("eq", zeros, 1), nonzero, nil),
                  emit("where", emit("eq", zeros, 0), without, nil))
    return prod, emit("mul", _at(x, idx), others)


_COMBINING = ("prod", "div", "max", "min")


def _row_rule(x, idx, upd, kind, unique, facet: str):
    """The elementwise row `kind` and its rule, for the generic kinds; they need distinct positions
    (a repeated one folds through intermediate values the scatter does not keep)."""
    d = OPDEFS[kind]
    rule = getattr(d, facet)
    if rule is None and "not_differentiable" not in d.markers:
        raise NotImplementedError(f"scatter: the kind {kind!r} has no {facet} rule")
    return d, rule, _distinct(x, idx, unique)


def _repeated_error(kind):
    return NotImplementedError(
        f"scatter of kind {kind!r} (a ufunc.at of that row) with indices that may repeat has no derivative "
        f"rule: a repeated position folds through intermediate values that are not kept. Spell distinct "
        f"indices as constants, or use np.add/subtract/multiply/divide/maximum/minimum.at or assignment")


def _scatter_vjp(g, x, idx, upd, *, out, kind, unique):
    if kind is None:  # written positions lose x's cotangent; each update gets its position's, if it won
        gx = _put(g, idx, _fill(g, upd.meta.shape[0], 0), None, unique)
        gu = _at(g, idx)
        if not _distinct(x, idx, unique):
            gu = emit("where", _last_writes(x, idx, upd), gu, _scalar(g, 0))
        return gx, None, gu
    if kind in ("sum", "sub"):
        gu = _at(g, idx)
        return g, None, (gu if kind == "sum" else emit("neg", gu))
    if kind in _COMBINING:
        a, b = _coefficients(x, idx, upd, out, kind, unique)
        return emit("mul", g, conj(a)), None, emit("mul", _at(g, idx), conj(b))
    d, rule, distinct = _row_rule(x, idx, upd, kind, unique, "vjp")
    if rule is None:
        return None, None, None
    gi, xi, oi = _at(g, idx), _at(x, idx), _at(out, idx)
    cts = rule(gi, xi, *((upd,) if d.arity == 2 else ()), out=oi)
    if not distinct and any(c is not None for c in cts):
        raise _repeated_error(kind)
    k = upd.meta.shape[0]
    ca = _fit(cts[0], k, g) if cts[0] is not None else _fill(g, k, 0)
    gu = _fit(cts[1], k, g) if d.arity == 2 and cts[1] is not None else None
    return _put(g, idx, ca, None, True), None, gu


def _fit(c, k, like):
    c = broadcast_to(c, (k,))
    return c if c.meta.dtype == like.meta.dtype else _as(c, like)


def _scatter_jvp(ts, x, idx, upd, *, out, kind, unique):
    tx, _, tu = ts
    n, k = x.meta.shape[0], upd.meta.shape[0]
    if kind is None or kind in ("sum", "sub"):  # linear in (x, upd)
        tx = _fill(out, n, 0) if tx is None else tx
        tu = _fill(out, k, 0) if tu is None else tu
        return _put(tx, idx, tu, kind, unique)
    if kind in _COMBINING:
        a, b = _coefficients(x, idx, upd, out, kind, unique)
        terms = [] if tx is None else [emit("mul", tx, a)]
        if tu is not None:
            terms.append(_put(_fill(out, n, 0), idx, emit("mul", tu, b), "sum"))
        return terms[0] if len(terms) == 1 else emit("add", *terms)
    d, rule, distinct = _row_rule(x, idx, upd, kind, unique, "jvp")
    if rule is None or (d.arity == 1 and tx is None):
        return None
    xi, oi = _at(x, idx), _at(out, idx)
    t = rule([None if tx is None else _at(tx, idx), *([tu] if d.arity == 2 else [])], xi,
             *((upd,) if d.arity == 2 else ()), out=oi)
    if t is None:
        t = _fill(out, k, 0)
    elif not distinct:
        raise _repeated_error(kind)
    return _put(_fill(out, n, 0) if tx is None else tx, idx, _fit(t, k, out), None, True)


def _scatter_batch(vals, dims, *, kind, unique):
    """The examples side by side in one flat (B * n) array, example b's positions offset by b * n
    (checked in range first, which the offsets would otherwise hide)."""
    (x, idx, upd), (dx, di, du) = vals, dims
    size = next(v.meta.shape[d] for v, d in zip(vals, dims) if d is not None)
    n = x.meta.shape[0 if dx is None else 1 - dx]
    k = idx.meta.shape[0 if di is None else 1 - di]

    def rows(v, d, length):
        return to_front(v, d) if d is not None else broadcast_to(reshape(v, (1, length)), (size, length))

    pos = wrap_index(idx, n)
    if not _in_range(idx, n):
        inside = emit("logical_and", emit("ge", pos, 0), emit("lt", pos, size_value(pos, n)))
        pos = emit("require", pos, emit("all", inside, axes=(0, 1)[:inside.ndim], keepdims=False),
                   status="INDEX_OUT_OF_RANGE")
    starts = emit("mul", reshape(iota(pos, size), (size, 1)), size_value(pos, n))
    pos = emit("add", starts, to_front(pos, di) if di is not None else reshape(pos, (1, k)))
    flat = _put(reshape(rows(x, dx, n), (size * n,)), reshape(pos, (size * k,)),
                reshape(rows(upd, du, k), (size * k,)), kind, unique)
    return reshape(flat, (size, n)), 0


def _in_range(idx, n) -> bool:
    v = known_value(idx)
    return v is not None and is_static(n) and (v.size == 0 or (-n <= v.min() and v.max() < n))


defop("scatter", arity=3, dtype_rule=_scatter_dtype, shape_rule=_scatter_shape, ref=_scatter_reference,
      attrs={"kind": None, "unique": False}, traits={"opaque_kernel"}, raises=_scatter_raises,
      markers={"no_frontend_name": "x[key] = v, np.put, np.place, np.put_along_axis, np.fill_diagonal and "
                                   "ufunc.at decompose into it (aot/frontend/assignment.py)"},
      vjp=_scatter_vjp, jvp=_scatter_jvp, batch=_scatter_batch)
