"""`diagonal(x, offset=, axis1=, axis2=)`: numpy's diagonal as a view (strides s1 + s2 from the first
element of the offset diagonal): the other dims in order, then the diagonal's length. np.trace and
np.diag of a matrix are built on it."""
from __future__ import annotations

import numpy as np

from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError

from ._define import defop
from ._shapes import check_axis, is_int, smax, smin
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


defop("diagonal", arity=1, dtype_rule=_diagonal_dtype, shape_rule=_diagonal_shape, ref=_diagonal_reference,
      attrs={"offset": 0, "axis1": REQUIRED, "axis2": REQUIRED}, traits={*VIEW, "read_only"},
      numpy_names=("diagonal",))
