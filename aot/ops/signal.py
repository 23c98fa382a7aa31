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


defop("correlate1d", arity=2, dtype_rule=_correlate_dtype, shape_rule=_correlate_shape,
      ref=_correlate_reference, attrs={"left": 0, "right": 0}, traits={"opaque_kernel"},
      markers={"no_frontend_name": "np.convolve and np.correlate decompose into flip, conj and it"})
