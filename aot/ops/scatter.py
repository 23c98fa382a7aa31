"""Scatter-add: `bincount(x, [weights], length=N)` counts (or sums the weights of) each value of the
1-D integer x into N bins, as np.bincount(x, weights, minlength=N) when every value lies in [0, N).

The output length is the static attribute N (numpy's output grows with the largest value, which
traced code cannot hold); a negative value or one >= N fails at run time with numpy's ValueError
(entry statuses BINCOUNT_NEGATIVE / BINCOUNT_TOO_LARGE). Counts are int64, weighted sums float64
(numpy casts the weights to double; complex weights are refused, as numpy does)."""
from __future__ import annotations

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError
from ir.status import ENTRY

from ._define import defop, fmt_dtypes
from ._shapes import check_dim, numel
from ._transforms import as_int64, emit, iota, reshape, size_value, to_front_of

_MESSAGES = {s.name: s.message for s in ENTRY}


def _bincount_dtype(dtypes: list[DType], *, length) -> DType:
    if dtypes[0].kind not in "bi" or any(d.is_complex for d in dtypes[1:]):
        raise OpError(f"bincount: expected integer values and real weights, got dtypes "
                      f"({fmt_dtypes(dtypes)})")
    return D.float64 if len(dtypes) == 2 else D.int64


def _bincount_shape(shapes: list[tuple], *, length) -> tuple:
    x = tuple(shapes[0])
    if len(x) != 1 or len(shapes) > 2 or (len(shapes) == 2 and tuple(shapes[1]) != x):
        raise OpError(f"bincount: expected 1-D values and weights of their shape, got shapes {list(shapes)}")
    return (check_dim("bincount", length, "length"),)


def _bincount_reference(x, *weights, length):
    """np.bincount(x, weights, minlength=length), refusing values outside [0, length)."""
    x = np.asarray(x)
    if x.size and x.min() < 0:
        raise ValueError(_MESSAGES["BINCOUNT_NEGATIVE"])
    if x.size and x.max() >= length:
        raise ValueError(_MESSAGES["BINCOUNT_TOO_LARGE"])
    return np.bincount(x, *weights, minlength=int(length))


# --- the transforms' rules ----------------------------------------------------------------------
def _bincount_vjp(g, x, *w, out, length):
    """A weighted count is linear in the weights: weight i's cotangent is its bin's, g[x[i]]."""
    return (None,) if not w else (None, emit("take", g, x, axis=0))


def _bincount_jvp(ts, x, *w, out, length):
    return None if not w or ts[1] is None else emit("bincount", x, ts[1], length=length)


def _bincount_batch(vals, dims, *, length):
    """One bincount of B * length bins, example b's values offset by b * length; a value outside
    [0, length) is sent outside [0, B * length) (negative ones stay) to fail as it would alone."""
    b = next(v.meta.shape[d] for v, d in zip(vals, dims) if d is not None)
    rows = [to_front_of(v, d, b) for v, d in zip(vals, dims)]
    x = as_int64(rows[0])
    n = size_value(x, length)
    shifted = np.where(x >= n, x + b * n, x + reshape(iota(x, b), (b, 1)) * n)
    flat = [reshape(np.where(x < 0, x, shifted), (numel(x.meta.shape),))]
    flat += [reshape(w, (numel(w.meta.shape),)) for w in rows[1:]]
    return reshape(emit("bincount", *flat, length=b * length), (b, length)), 0


defop("bincount", arity=None, min_arity=1, dtype_rule=_bincount_dtype, shape_rule=_bincount_shape,
      ref=_bincount_reference, attrs={"length": REQUIRED}, traits={"opaque_kernel"},
      numpy_names=("bincount",), raises=lambda op: True, vjp=_bincount_vjp, jvp=_bincount_jvp,
      batch=_bincount_batch)
