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
from ._shapes import check_axis, numel
from ._transforms import (
    around,
    axis_batch,
    broadcast_to,
    emit,
    iota,
    move_axis,
    not_differentiable,
    reshape,
    scatter_add_rows,
    size_value,
    to_front,
    to_front_of,
)

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


# --- the transforms' rules ----------------------------------------------------------------------
def _sort_vjp(g, x, *, out, axis):
    """out = x[argsort(x)] along the axis: the cotangent goes back through the inverse permutation."""
    order = emit("argsort", x, axis=axis)
    return (emit("take_along_axis", g, emit("argsort", order, axis=axis), axis=axis),)


def _sort_jvp(ts, x, *, out, axis):
    return emit("take_along_axis", ts[0], emit("argsort", x, axis=axis), axis=axis)


defop("sort", arity=1, dtype_rule=_same_dtype, shape_rule=_sort_shape("sort"),
      ref=lambda x, *, axis: np.sort(x, axis=axis, kind="stable"), attrs={"axis": REQUIRED},
      traits=SORT_TRAITS, numpy_names=("sort",), doc="numpy.sort(x, axis, kind='stable')",
      vjp=_sort_vjp, jvp=_sort_jvp, batch=axis_batch("sort"))
defop("argsort", arity=1, dtype_rule=_index_dtype, shape_rule=_sort_shape("argsort"),
      ref=lambda x, *, axis: np.argsort(x, axis=axis, kind="stable"), attrs={"axis": REQUIRED},
      traits=SORT_TRAITS, numpy_names=("argsort",), doc="numpy.argsort(x, axis, kind='stable')",
      markers=not_differentiable("an integer result (a permutation)"), batch=axis_batch("argsort"))


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


def _searchsorted_batch(vals, dims, *, side="left"):
    """Batched values alone keep their batch dim. Batched sorted rows: every row and value replaced by
    its rank among all of them (a sort and searchsorted of the lot: equal values equal ranks, numpy's
    order, nans included), offset by the row's number times the count, so the rows laid end to end
    are one sorted array in which each value's search stays within its row."""
    (a, v), (da, dv) = vals, dims
    if da is None:
        return emit("searchsorted", a, v, side=side), dv
    dt = promote(a.meta.dtype, v.meta.dtype)
    a, v = (x if x.meta.dtype == dt else emit("cast", x, dtype=dt) for x in (a, v))
    a = to_front(a, da)
    b, n = a.meta.shape
    v = to_front_of(v, dv, b)
    flat = (reshape(a, (b * n,)), reshape(v, (numel(v.meta.shape),)))
    pool = emit("sort", emit("concatenate", *flat, axis=0), axis=0)
    total = pool.meta.shape[0]
    row = iota(a, b)
    offset = reshape(row * size_value(a, total), (b, 1))
    keys = emit("add", emit("searchsorted", pool, a, side="left"), offset)
    vrow = reshape(row, (b,) + (1,) * (v.ndim - 1))
    vkeys = emit("add", emit("searchsorted", pool, v, side="left"), vrow * size_value(a, total))
    got = emit("searchsorted", reshape(keys, (b * n,)), vkeys, side=side)
    return emit("sub", got, vrow * size_value(a, n)), 0


defop("searchsorted", arity=2, dtype_rule=_searchsorted_dtype, shape_rule=_searchsorted_shape,
      ref=lambda a, v, *, side: np.searchsorted(a, v, side=side), attrs={"side": "left"},
      traits=SORT_TRAITS, numpy_names=("searchsorted",), doc="numpy.searchsorted(a, v, side)",
      markers=not_differentiable("an integer result (insertion indices)"), batch=_searchsorted_batch)


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


def _take_along_vjp(g, x, idx, *, out, axis):
    """A scatter-add of g at the taken positions into zeros of x's shape broadcast to the output's
    other dims (the interpreter sums those back to x's)."""
    shape = tuple(out.meta.shape)
    pre, m, post = numel(shape[:axis]), shape[axis], numel(shape[axis + 1:])
    idx = reshape(broadcast_to(idx, shape), (pre, m, post))
    n = x.meta.shape[axis]
    rows = scatter_add_rows(reshape(g, (pre, m, post)), idx, n)
    return reshape(rows, (*shape[:axis], n, *shape[axis + 1:])), None


def _take_along_jvp(ts, x, idx, *, out, axis):
    return None if ts[0] is None else emit("take_along_axis", ts[0], idx, axis=axis)


def _take_along_batch(vals, dims, *, axis):
    """Both operands batched at one dim (an unbatched one gains a unit dim there: broadcasting)."""
    (x, idx), (dx, di) = vals, dims
    d = dx if dx is not None else di
    if dx is None:
        x = reshape(x, (*x.meta.shape[:d], 1, *x.meta.shape[d:]))
    elif di is None:
        idx = reshape(idx, (*idx.meta.shape[:d], 1, *idx.meta.shape[d:]))
    else:
        idx = move_axis(idx, di, d)
    return emit("take_along_axis", x, idx, axis=around(axis, d)), d


defop("take_along_axis", arity=2, dtype_rule=_take_along_dtype, shape_rule=_take_along_shape,
      ref=lambda x, idx, *, axis: np.take_along_axis(x, idx, axis=axis), attrs={"axis": REQUIRED},
      traits={"layout", "gather"}, numpy_names=("take_along_axis",), raises=_take_along_raises,
      vjp=_take_along_vjp, jvp=_take_along_jvp, batch=_take_along_batch)
