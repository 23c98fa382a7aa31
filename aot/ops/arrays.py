"""`diagonal(x, offset=, axis1=, axis2=)`: numpy's diagonal as a view (strides s1 + s2 from the first
element of the offset diagonal): the other dims in order, then the diagonal's length. np.trace and
np.diag of a matrix are built on it."""
from __future__ import annotations

import numpy as np

from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError
from ir.symbols import norm_dim

from ._define import defop
from ._shapes import check_axis, is_int, smax, smin
from ._transforms import around, emit, full, iota, linear_jvp, reshape
from .layout import VIEW


def _diagonal_dtype(dtypes: list[DType], **_) -> DType:
    return dtypes[0]


def diagonal_length(n1, n2, offset: int):
    """Elements of the offset diagonal of an n1 x n2 matrix (sizes may be symbolic)."""
    return smax(0, smin(n1 - max(0, -offset), n2 - max(0, offset)))


def _diagonal_shape(shapes: list[tuple], *, offset, axis1, axis2) -> tuple:
    x = tuple(shapes[0])
    if len(x) < 2:
        raise OpError(f"diagonal: the operand must have at least 2 dims, got shape {x}")
    a1, a2 = check_axis("diagonal", axis1, len(x), "axis1"), check_axis("diagonal", axis2, len(x), "axis2")
    if a1 == a2 or not is_int(offset):
        raise OpError(f"diagonal: expected two different axes and an int offset, got {axis1}, {axis2}, "
                      f"{offset!r}")
    rest = tuple(d for i, d in enumerate(x) if i not in (a1, a2))
    return rest + (diagonal_length(x[a1], x[a2], offset),)


def _diagonal_reference(x, *, offset, axis1, axis2):
    return np.diagonal(x, offset, axis1, axis2)


def _diagonal_vjp(g, x, *, out, offset, axis1, axis2):
    """g on the offset diagonal of (n1, n2) zeros: g[k] sits in row k (offset >= 0) or column k
    (offset < 0), so g padded to that axis and broadcast along the other is masked to j - i == offset;
    then the two axes go back to axis1 and axis2."""
    rank, lead = x.ndim, g.ndim - 1
    a1, a2 = axis1 % rank, axis2 % rank
    n1, n2 = x.meta.shape[a1], x.meta.shape[a2]
    length, rest = g.meta.shape[-1], tuple(g.meta.shape[:-1])
    along = n1 if offset >= 0 else n2
    g = emit("pad", g, pad_width=((0, 0),) * lead + ((0, norm_dim(along - length)),), value=0)
    g = reshape(g, rest + ((along, 1) if offset >= 0 else (1, along)))
    on = emit("eq", emit("sub", reshape(iota(g, n2), (1, n2)), reshape(iota(g, n1), (n1, 1))), offset)
    full_g = emit("where", on, g, full(g, (), 0, g.meta.dtype))
    others = iter(range(lead))
    perm = tuple(lead if k == a1 else lead + 1 if k == a2 else next(others) for k in range(rank))
    return (emit("transpose", full_g, perm=perm),)


def _diagonal_batch(vals, dims, *, offset, axis1, axis2):
    d = dims[0]  # stays among the other dims, which keep their order in front of the diagonal
    a1, a2 = around(axis1, d), around(axis2, d)
    return emit("diagonal", vals[0], offset=offset, axis1=a1, axis2=a2), d - (a1 < d) - (a2 < d)


defop("diagonal", arity=1, dtype_rule=_diagonal_dtype, shape_rule=_diagonal_shape, ref=_diagonal_reference,
      attrs={"offset": 0, "axis1": REQUIRED, "axis2": REQUIRED}, traits={*VIEW, "read_only"},
      numpy_names=("diagonal",), vjp=_diagonal_vjp, jvp=linear_jvp("diagonal"), batch=_diagonal_batch)
