"""Sorting and searching: sort, argsort (stable, along one normalised axis), searchsorted (a sorted
1-D array and values of any shape) and take_along_axis (a gather along one axis with numpy's
broadcasting of the other dims).

Orders are numpy's: NaNs sort to the end, -0.0 equals 0.0 (equal elements keep their order: the
stable result, which numpy's every sort kind may give), and complex numbers sort by real then
imaginary part with numpy's NaN classes (R+Rj < R+nanj < nan+Rj < nan+nanj). The references run
numpy's stable sort, so the interpreter and the eager backend agree with the native kernels.
"""
from __future__ import annotations

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError, broadcast_shapes
from ir.symbols import is_static

from ._define import constant_value, defop, fmt_dtypes, promote
from ._shapes import check_axis

SORT_TRAITS = {"opaque_kernel", "sort"}


def _same_dtype(dtypes: list[DType], **_) -> DType:
    return dtypes[0]


def _index_dtype(dtypes: list[DType], **_) -> DType:
    return D.int64  # numpy's intp


def _sort_shape(op: str):
    def rule(shapes: list[tuple], *, axis) -> tuple:
        shape = tuple(shapes[0])
        check_axis(op, axis, len(shape))
        return shape

    rule.__name__ = rule.__qualname__ = f"_{op}_shape"
    return rule


defop("sort", arity=1, dtype_rule=_same_dtype, shape_rule=_sort_shape("sort"),
      ref=lambda x, *, axis: np.sort(x, axis=axis, kind="stable"), attrs={"axis": REQUIRED},
      traits=SORT_TRAITS, numpy_names=("sort",), doc="numpy.sort(x, axis, kind='stable')")
defop("argsort", arity=1, dtype_rule=_index_dtype, shape_rule=_sort_shape("argsort"),
      ref=lambda x, *, axis: np.argsort(x, axis=axis, kind="stable"), attrs={"axis": REQUIRED},
      traits=SORT_TRAITS, numpy_names=("argsort",), doc="numpy.argsort(x, axis, kind='stable')")


# --- searchsorted ----------------------------------------------------------------------------------
SIDES = ("left", "right")


def _searchsorted_dtype(dtypes: list[DType], *, side) -> DType:
    if side not in SIDES:
        raise OpError(f"searchsorted: side must be one of {SIDES}, got {side!r}")
    promote(*dtypes)  # numpy compares in the common dtype
    return D.int64


def _searchsorted_shape(shapes: list[tuple], *, side) -> tuple:
    a, v = tuple(shapes[0]), tuple(shapes[1])
    if len(a) != 1:
        raise OpError(f"searchsorted: the sorted operand must be 1-D, got shape {a}")
    return v


defop("searchsorted", arity=2, dtype_rule=_searchsorted_dtype, shape_rule=_searchsorted_shape,
      ref=lambda a, v, *, side: np.searchsorted(a, v, side=side), attrs={"side": "left"},
      traits=SORT_TRAITS, numpy_names=("searchsorted",), doc="numpy.searchsorted(a, v, side)")


# --- take_along_axis -------------------------------------------------------------------------------
def _take_along_dtype(dtypes: list[DType], *, axis) -> DType:
    x, idx = dtypes
    if not idx.is_int:
        raise OpError(f"take_along_axis: indices must be integers, got dtypes ({fmt_dtypes(dtypes)})")
    return x


def _take_along_shape(shapes: list[tuple], *, axis) -> tuple:
    x, idx = tuple(shapes[0]), tuple(shapes[1])
    if len(x) != len(idx):
        raise OpError(f"take_along_axis: indices must have the rank of the array: shapes {x} and {idx}")
    axis = check_axis("take_along_axis", axis, len(x))
    rest = broadcast_shapes(x[:axis] + x[axis + 1:], idx[:axis] + idx[axis + 1:], op="take_along_axis")
    n = idx[axis]
    if is_static(x[axis]) and x[axis] == 0 and not (is_static(n) and n == 0) \
            and not any(is_static(d) and d == 0 for d in rest):
        raise OpError(f"take_along_axis: cannot take {n} indices from the empty axis {axis} of shape {x}")
    return rest[:axis] + (n,) + rest[axis:]


def _take_along_raises(op) -> bool:
    """IndexError unless the indices are constants within a static axis."""
    idx, n = constant_value(op.operands[1]), op.operands[0].type.shape[op.attrs["axis"]]
    if idx is None or not is_static(n):
        return idx is None or idx.size > 0
    return bool(idx.size) and not (-n <= idx.min() and idx.max() < n)


defop("take_along_axis", arity=2, dtype_rule=_take_along_dtype, shape_rule=_take_along_shape,
      ref=lambda x, idx, *, axis: np.take_along_axis(x, idx, axis=axis), attrs={"axis": REQUIRED},
      traits={"layout", "gather"}, numpy_names=("take_along_axis",), raises=_take_along_raises)
