"""Histogram counts in one pass over the samples (the kernels of codegen/graph_histogram.py).

- `histogram_uniform(x, edges, first_k, last_k, first_s, denom, start, step, delta, stop[, w])`:
  np.histogram's equal-width bins (numpy/lib/_histograms_impl.py), with the dtypes numpy computes
  each step in carried by the operands: a sample is kept when first_k <= x <= last_k (compared in
  their dtype); its bin is ((x as edges' dtype as first_s's - first_s) as denom's / denom) * nb
  truncated, the last edge's samples in the last bin, then corrected against the edges (one down
  when x < edges[i], one up when x >= edges[i + 1] below the last bin). The kernel computes an
  edge as np.linspace does (start, step, delta, stop in linspace's dtype: i * step + start, or
  i / nb * delta + start when step is 0, the last one stop; cast to the edges' dtype), which are
  the values of `edges`.
- `histogram_edges(x, edges[, w])`: explicit edges (ascending): bin i holds edges[i] <= x <
  edges[i + 1], the last bin also its right edge; x and the edges compare in the edges' dtype
  (the front end casts them to the common one, numpy's comparison dtype).

Samples outside (NaNs included) are dropped. Counts are int64; with weights, each bin's sum is
accumulated in float64 and cast to the weights' dtype, as numpy's bincount (reassociated: the
kernels add in per-thread partial histograms).
"""
from __future__ import annotations

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import OPDEFS, OpError
from ir.symbols import is_static

from ._define import defop, fmt_dtypes, within_rules
from ._transforms import emit, full, iota, reshape, to_front, to_front_of

HIST_TRAITS = {"opaque_kernel"}
UNIFORM_OPERANDS = 10  # x, edges, the range compared, first subtracted, denom, linspace's four


def _result_dtype(op: str, dtypes: list[DType], n_fixed: int) -> DType:
    float_edges = n_fixed > 2  # equal-width edges are floats (numpy's bin type), and linspace's values
    if float_edges and not all(d.is_float for d in dtypes[6:n_fixed]):
        raise OpError(f"{op}: linspace's start, step, delta and stop must be floats, got dtypes "
                      f"({fmt_dtypes(dtypes)})")
    if float_edges and any(d.is_bool for d in dtypes[2:6]):  # numpy subtracts and divides in these
        raise OpError(f"{op}: the range, first edge and bin width must be numbers, got dtypes "
                      f"({fmt_dtypes(dtypes)})")
    if any(d.is_complex for d in dtypes) or dtypes[1].is_bool or (float_edges and not dtypes[1].is_float):
        raise OpError(f"{op}: expected real samples, {'float' if float_edges else 'real'} edges and real "
                      f"weights, got dtypes ({fmt_dtypes(dtypes)})")
    return dtypes[n_fixed] if len(dtypes) > n_fixed else D.int64


def _result_shape(op: str, shapes: list[tuple], n_fixed: int) -> tuple:
    x, edges = tuple(shapes[0]), tuple(shapes[1])
    if len(x) != 1 or len(edges) != 1 or any(tuple(s) for s in shapes[2:n_fixed]):
        raise OpError(f"{op}: expected 1-D samples and edges and 0-d bounds, got shapes {list(shapes)}")
    if len(shapes) > n_fixed + 1 or (len(shapes) == n_fixed + 1 and tuple(shapes[n_fixed]) != x):
        raise OpError(f"{op}: the weights must have the samples' shape, got shapes {list(shapes)}")
    if not is_static(edges[0]) or edges[0] < 2:
        raise OpError(f"{op}: expected a static number of edges (at least 2), got {edges[0]}")
    return (edges[0] - 1,)


def _counts(idx: np.ndarray, w, nb: int, dtype) -> np.ndarray:
    if w is None:
        return np.bincount(idx, minlength=nb).astype(np.int64)
    return np.bincount(idx, np.asarray(w, np.float64), minlength=nb).astype(dtype)


def _uniform_reference(x, edges, first_k, last_k, first_s, denom, start, step, delta, stop, *w):
    """np.histogram's equal-bin counts (its arithmetic, step by step in the operands' dtypes)."""
    x, edges = np.asarray(x), np.asarray(edges)
    nb = edges.shape[0] - 1
    kd, bt, sd, fd = first_k.dtype, edges.dtype, first_s.dtype, denom.dtype
    xk = x.astype(kd)
    keep = (xk >= first_k) & (xk <= last_k)
    t = x[keep].astype(bt)
    with np.errstate(all="ignore"):
        f = ((t.astype(sd) - first_s).astype(fd) / denom) * fd.type(nb)
    idx = np.minimum(f.astype(np.int64), nb - 1)
    idx = np.maximum(np.where(t < edges[idx], idx - 1, idx), 0)
    idx = np.where((t >= edges[idx + 1]) & (idx != nb - 1), idx + 1, idx)
    return _counts(idx, np.asarray(w[0])[keep] if w else None, nb, w[0].dtype if w else None)


def _edges_reference(x, edges, *w):
    """Counts over explicit edges (numpy's searchsorted of the edges in the sorted samples)."""
    x, edges = np.asarray(x).astype(np.asarray(edges).dtype), np.asarray(edges)
    nb = edges.shape[0] - 1
    idx = np.searchsorted(edges, x, side="right") - 1
    idx = np.where(x == edges[-1], nb - 1, idx)
    keep = (idx >= 0) & (idx < nb)
    return _counts(idx[keep], np.asarray(w[0])[keep] if w else None, nb, w[0].dtype if w else None)


# --- the transforms' rules ----------------------------------------------------------------------
# The counts are piecewise constant in the samples and edges (zero derivative, JAX's convention for
# such ops); with weights each bin is the sum of its samples' weights, linear in them: the jvp is
# the histogram of the weights' tangent, the vjp gathers each sample's bin's cotangent. The batching
# rule computes every sample's bin (the kernels' arithmetic, as the references spell it) and counts
# all examples with one bincount, example b's bins at offset b * (bins + 1) (the last one collecting
# the dropped samples).
def _cast(x, dt):
    return x if x.meta.dtype == dt else emit("cast", x, dtype=dt)


def _at(edges, idx):
    """edges[idx]: per-example edges (B, E) with (B, n) bins, or shared ones."""
    if edges.ndim == idx.ndim:
        return emit("take_along_axis", edges, idx, axis=edges.ndim - 1)
    return emit("take", edges, idx, axis=0)


def _uniform_bins(x, edges, first_k, last_k, first_s, denom):
    """(bin, counted) of each sample: _uniform_reference's steps in its dtypes (bounds broadcast)."""
    nb = edges.meta.shape[-1] - 1
    xk = _cast(x, first_k.meta.dtype)
    keep = (xk >= first_k) & (xk <= last_k)
    t = _cast(x, edges.meta.dtype)
    t = np.where(keep, t, _cast(first_s, t.meta.dtype))  # dropped samples: no nan or inf to cast
    f = _cast(_cast(t, first_s.meta.dtype) - first_s, denom.meta.dtype) / denom
    f = f * full(f, (), nb, f.meta.dtype)
    idx = np.minimum(emit("cast", f, dtype=D.int64), nb - 1)
    idx = np.maximum(np.where(t < _at(edges, idx), idx - 1, idx), 0)
    idx = np.where((t >= _at(edges, idx + 1)) & (idx != nb - 1), idx + 1, idx)
    return idx, keep


def _edge_bins(x, edges):
    """(bin, counted) of each sample: _edges_reference's searchsorted (per-example edges batched)."""
    nb = edges.meta.shape[-1] - 1
    x = _cast(x, edges.meta.dtype)
    if edges.ndim == 1:
        c = emit("searchsorted", edges, x, side="right")
    else:
        c = OPDEFS["searchsorted"].batch([edges, x], [0, 0], side="right")[0]
    idx = np.where(x == edges[..., nb:], nb - 1, c - 1)
    return idx, (idx >= 0) & (idx < nb)


def _bins(name, ops):
    return _uniform_bins(*ops[:6]) if name == "histogram_uniform" else _edge_bins(*ops[:2])


def _hist_vjp(name: str, n_fixed: int):
    def vjp(g, *ops, out):
        if len(ops) == n_fixed:
            return (None,) * n_fixed
        idx, keep = _bins(name, ops)
        return (None,) * n_fixed + (np.where(keep, emit("take", g, np.where(keep, idx, 0), axis=0), 0),)

    return vjp


def _hist_jvp(name: str, n_fixed: int):
    def jvp(ts, *ops, out):
        if len(ops) == n_fixed or ts[n_fixed] is None:
            return None
        return emit(name, *ops[:n_fixed], ts[n_fixed])

    return jvp


def _hist_batch(name: str, n_fixed: int):
    def batch(vals, dims):
        b = next(v.meta.shape[d] for v, d in zip(vals, dims) if d is not None)
        ops = []
        for i, (v, d) in enumerate(zip(vals, dims)):
            if d is not None:
                v = to_front(v, d)
                v = reshape(v, (b, 1)) if v.ndim == 1 else v  # a bound: one per example
            elif i in (0, n_fixed):  # samples and weights: one row per example
                v = to_front_of(v, None, b)
            ops.append(v)
        idx, keep = _bins(name, ops)
        nb = ops[1].meta.shape[-1] - 1
        rows = reshape(iota(ops[0], b), (b, 1)) * (nb + 1)
        pos = reshape(np.where(keep, idx, nb) + rows, (b * ops[0].meta.shape[1],))
        w = [reshape(ops[n_fixed], pos.meta.shape)] if len(ops) > n_fixed else []
        counts = emit("bincount", pos, *w, length=b * (nb + 1))
        out = reshape(counts, (b, nb + 1))[:, :nb]
        return _cast(out, ops[n_fixed].meta.dtype if w else D.int64), 0

    return batch


def _rules(name: str, n_fixed: int) -> dict:
    return {"vjp": _hist_vjp(name, n_fixed), "jvp": _hist_jvp(name, n_fixed), "batch": _hist_batch(name, n_fixed)}


defop("histogram_uniform", arity=None, min_arity=UNIFORM_OPERANDS,
      dtype_rule=lambda dtypes: _result_dtype("histogram_uniform", dtypes, UNIFORM_OPERANDS),
      shape_rule=lambda shapes: _result_shape("histogram_uniform", shapes, UNIFORM_OPERANDS),
      ref=within_rules("histogram_uniform", _uniform_reference), traits=HIST_TRAITS,
      markers={"no_frontend_name": "np.histogram (a decomposition) counts equal-width bins with it"},
      **_rules("histogram_uniform", UNIFORM_OPERANDS),
      doc="np.histogram's counts over equal-width bins, in one pass")
defop("histogram_edges", arity=None, min_arity=2,
      dtype_rule=lambda dtypes: _result_dtype("histogram_edges", dtypes, 2),
      shape_rule=lambda shapes: _result_shape("histogram_edges", shapes, 2),
      ref=within_rules("histogram_edges", _edges_reference), traits=HIST_TRAITS,
      markers={"no_frontend_name": "np.histogram (a decomposition) counts explicit bins with it"},
      **_rules("histogram_edges", 2),
      doc="np.histogram's counts over explicit edges, in one pass")
