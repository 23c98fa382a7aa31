"""`correlate1d(a, v, left=, right=)`: numpy's multiarray correlation of a with v (no conjugation),
out[k] = sum_j a[k - left + j] * v[j] over the j that fall inside a, for k in
[0, len(a) + left + right - len(v)]: a slides under v with `left` and `right` positions of overhang
(mode "valid": 0 and 0; "same": len(v) // 2 and the rest; "full": len(v) - 1 each). The overhang
is not zero padding: numpy's products stop at a's ends, so infinities there do not make NaNs.
np.convolve and np.correlate are built on it (the front end flips, swaps and conjugates). Its
kernel (codegen/graph_signal.py) is the direct method, vectorised across outputs."""
from __future__ import annotations

import numpy as np

from ir.dtypes import DType
from ir.opdef import OpError
from ir.symbols import is_static, norm_dim

from ._define import defop, promote
from ._shapes import is_int
from ._transforms import conj, emit, iota, reshape, to_front


def _correlate_dtype(dtypes: list[DType], *, left, right) -> DType:
    return promote(*dtypes)


def _correlate_shape(shapes: list[tuple], *, left, right) -> tuple:
    a, v = (tuple(s) for s in shapes)
    if len(a) != 1 or len(v) != 1:
        raise OpError(f"correlate1d: expected 1-D operands, got shapes {a} and {v}")
    n, m = a[0], v[0]
    if not (is_int(left) and is_int(right) and 0 <= left < max(m, 1) and 0 <= right < max(m, 1)) \
            if is_static(m) else not (is_int(left) and is_int(right) and left == right == 0):
        raise OpError(f"correlate1d: left and right must be ints in [0, {m}), got {left!r} and {right!r}")
    if is_static(m) and m == 0:
        raise OpError("correlate1d: the second operand is empty")
    if is_static(n) and is_static(m) and n < m:
        raise OpError(f"correlate1d: the first operand ({n}) is shorter than the second ({m})")
    return (norm_dim(n + left + right - m + 1),)


def _correlate_reference(a, v, *, left, right):
    """numpy's correlation without conjugation, np.convolve(a, v[::-1], "full"), from the output
    whose overhang on the left is `left`."""
    a, v = np.asarray(a), np.asarray(v)
    if a.ndim != 1 or v.ndim != 1 or len(a) < len(v) or not len(v):
        raise ValueError("correlate1d: expected 1-D operands with len(a) >= len(v) > 0")
    if not (0 <= left < len(v) and 0 <= right < len(v)):
        raise ValueError(f"correlate1d: the overhang ({left}, {right}) must lie in [0, {len(v)})")
    start = len(v) - 1 - left
    return np.convolve(a, v[::-1], "full")[start:start + len(a) + left + right - len(v) + 1]


# --- the transforms' rules ----------------------------------------------------------------------
def _pad(x, lo, hi):
    """x zero-padded along its last dim."""
    if not (lo or hi):
        return x
    return emit("pad", x, pad_width=((0, 0),) * (x.ndim - 1) + ((lo, hi),), value=0)


def _correlate(a, v, left, right):
    """correlate1d(a, v, left, right) for any overhang: where the row's own constraints (a at least as
    long as v, overhangs shorter than v) fail, a padded with zeros and the valid correlation."""
    n, m = a.meta.shape[0], v.meta.shape[0]
    fits = is_static(n) and is_static(m) and n >= m and 0 <= left < m and 0 <= right < m
    if fits or not (left or right):  # (no overhang: the operands' lengths fit, symbolic or not)
        return emit("correlate1d", a, v, left=left, right=right)
    return emit("correlate1d", _pad(a, left, right), v, left=0, right=0)


def _correlate_vjp(g, a, v, *, out, left=0, right=0):
    """out[k] = sum_j a[k - left + j] v[j]: the adjoint in a correlates g with v reversed (and
    conjugated), overhanging by len(v) - 1 - left and - right; the adjoint in v correlates conj(a)
    with g with the same overhangs."""
    m = v.meta.shape[0]
    if not is_static(m):
        raise OpError("correlate1d: the derivative needs a static length of the second operand")
    da = _correlate(g, emit("flip", conj(v), axes=(0,)), m - 1 - left, m - 1 - right)
    dv = _correlate(conj(a), g, left, right)
    return da, dv


def _correlate_jvp(ts, a, v, *, out, left=0, right=0):
    terms = []
    if ts[0] is not None:
        terms.append(emit("correlate1d", ts[0], v, left=left, right=right))
    if ts[1] is not None:
        terms.append(emit("correlate1d", a, ts[1], left=left, right=right))
    return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def _windows(a, length: int, m: int, axis: int):
    """Every window a[k:k + m] for k < length along `axis` (a new dim of m after it): a gather."""
    k = iota(a, length)
    idx = emit("add", reshape(k, (length, 1)), reshape(iota(a, m), (1, m)))
    return emit("take", a, idx, axis=axis)


def _correlate_batch(vals, dims, *, left=0, right=0):
    """No per-example loop. Batched signals, one kernel: the examples, each padded by the overhangs,
    laid end to end make one signal whose valid correlation holds every example's at a stride (the
    padding keeps the windows inside one example). Batched kernels: the windows of the padded
    signal(s) (length x len(v) of them, a gather) times the kernels, a matmul."""
    (a, v), (da, dv) = vals, dims
    m = v.meta.shape[0 if dv is None else 1 - dv]
    if not is_static(m):
        raise OpError("correlate1d: vmap needs a static length of the second operand")
    if dv is None:
        x = _pad(to_front(a, da), left, right)
        b, s = x.meta.shape
        flat = emit("correlate1d", reshape(x, (b * s,)), v, left=0, right=m - 1)
        return reshape(flat, (b, s))[:, :norm_dim(s - m + 1)], 0
    x = _pad(a if da is None else to_front(a, da), left, right)
    length = norm_dim(x.meta.shape[-1] - m + 1)
    if not is_static(length):
        raise OpError("correlate1d: vmap over the second operand needs static lengths")
    w = _windows(x, length, m, x.ndim - 1)  # (length, m), or (B, length, m)
    if da is None:
        k = to_front(v, dv)  # (B, m)
        return emit("matmul", k, emit("transpose", w, perm=(1, 0))), 0
    k = to_front(v, dv)
    out = emit("matmul", w, reshape(k, (*k.meta.shape, 1)))
    return reshape(out, out.meta.shape[:2]), 0


defop("correlate1d", arity=2, dtype_rule=_correlate_dtype, shape_rule=_correlate_shape,
      ref=_correlate_reference, attrs={"left": 0, "right": 0}, traits={"opaque_kernel"},
      markers={"no_frontend_name": "np.convolve and np.correlate decompose into flip, conj and it"},
      vjp=_correlate_vjp, jvp=_correlate_jvp, batch=_correlate_batch)
