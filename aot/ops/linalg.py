"""matmul with numpy's semantics: 1-D operands are promoted (and the added dim removed), batch dims
broadcast, dtypes promote (bool @ bool is bool, as in numpy)."""
from __future__ import annotations

import numpy as np

from ir.opdef import OpError, broadcast_shapes
from ir.symbols import dims_equal

from ._define import defop, kind_rule
from ._transforms import conj, emit, reshape, to_front


def _matmul_vjp(g, a, b, *, out):
    """g @ b^H and a^H @ g, with numpy's 1-D promotion undone; an outer product (a vector operand's
    cotangent against the other's) is an elementwise product, which fuses, not a matmul over k = 1."""
    if a.ndim == 1 and b.ndim == 1:
        return g * conj(b), g * conj(a)
    if b.ndim == 1:  # (..., m, k) @ (k,)
        ga = g[..., :, None] * conj(b)
        gb = np.matmul(g, conj(a)) if a.ndim == 2 else np.matmul(g[..., None, :], conj(a))[..., 0, :]
        return ga, gb
    if a.ndim == 1:  # (k,) @ (..., k, n)
        ga = np.matmul(conj(b), g) if b.ndim == 2 else np.matmul(conj(b), g[..., :, None])[..., 0]
        return ga, conj(a)[:, None] * g[..., None, :]
    return np.matmul(g, np.swapaxes(conj(b), -1, -2)), np.matmul(np.swapaxes(conj(a), -1, -2), g)


def _matmul_jvp(ts, a, b, *, out):
    ta, tb = ts
    terms = [np.matmul(ta, b)] if ta is not None else []
    if tb is not None:
        terms.append(np.matmul(a, tb))
    return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def _pad_batch(x, k: int):
    """x (batch dim first) with k unit dims after the batch dim, so its own batch dims broadcast."""
    return reshape(x, (x.meta.shape[0], *(1,) * k, *x.meta.shape[1:])) if k > 0 else x


def _matmul_batch(vals, dims):
    (a, b), (da, db) = vals, dims
    la, lb = a.ndim - (da is not None), b.ndim - (db is not None)
    sa, sb = max(la - 2, 0), max(lb - 2, 0)  # each operand's own batch rank
    if db is None:
        x = to_front(a, da)
        if la == 1 and lb >= 2:  # the examples' vectors are the rows of one matrix
            out = emit("matmul", x, b)
            return out, out.ndim - 2
        return emit("matmul", _pad_batch(x, sb - sa) if la >= 2 else x, b), 0
    if da is None:
        y = to_front(b, db)
        if lb == 1 and a.ndim == 2:  # W @ x per example: X @ W^T, batch first and contiguous
            return emit("matmul", y, emit("transpose", a, perm=(1, 0))), 0
        if lb == 1:  # the examples' vectors are the columns of one matrix
            out = emit("matmul", a, emit("transpose", y, perm=(1, 0)))
            return out, out.ndim - 1
        return emit("matmul", a, _pad_batch(y, sa - sb)), 0
    x, y = to_front(a, da), to_front(b, db)
    x = x if la >= 2 else reshape(x, (x.meta.shape[0], 1, x.meta.shape[1]))
    y = y if lb >= 2 else reshape(y, (*y.meta.shape, 1))
    out = emit("matmul", _pad_batch(x, sb - sa), _pad_batch(y, sa - sb))
    shape = list(out.meta.shape)
    if lb == 1:
        shape.pop(-1)
    if la == 1:
        shape.pop(-1 if lb == 1 else -2)
    return reshape(out, shape), 0


def _matmul_shape(shapes: list[tuple]) -> tuple:
    a, b = (tuple(s) for s in shapes)
    if not a or not b:
        raise OpError(f"matmul: operands must have rank >= 1, got shapes {a} and {b}")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if not dims_equal(a2[-1], b2[-2]):
        raise OpError(f"matmul: contracted dims differ: {a2[-1]} (of {a}) vs {b2[-2]} (of {b})")
    batch = broadcast_shapes(a2[:-2], b2[:-2], op="matmul")
    return batch + a2[-2:-1] * (len(a) > 1) + b2[-1:] * (len(b) > 1)


defop("matmul", arity=2, dtype_rule=kind_rule("matmul", "bifc"), shape_rule=_matmul_shape, ref=np.matmul,
      traits={"contraction", "opaque_kernel"}, numpy_names=("matmul",), vjp=_matmul_vjp, jvp=_matmul_jvp,
      batch=_matmul_batch)
