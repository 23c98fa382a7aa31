"""Selection: order statistics without a full sort (native kernels: codegen/graph_select.py).

- `select_kth(x, idx, axis=)`: the elements of sort(x, axis) at positions idx along the axis (a
  negative index counts from the end). idx is int64, either (Q,) (the same positions for every
  lane) or x's shape with the axis replaced by Q (positions per lane); the result has x's shape
  with the axis replaced by Q. np.median, np.percentile, np.quantile and their nan forms gather
  their order statistics with it.
- `partition(x, kth=, axis=)` / `argpartition`: np.partition / np.argpartition with static kth.
  The arrangement numpy leaves open is fixed here, so that the kernel and the reference agree to
  the bit: with u_0 < ... < u_r the distinct values at the kth positions, each lane holds the
  elements < u_0, then those == u_0, then those in (u_0, u_1), ..., each group in input order
  (a stable three-way partition around every kth value; a valid np.partition result).

Real dtypes only (complex lanes take the sort). The order is numpy's with ties broken as a total
order: -0.0 before 0.0, every NaN last (a refinement of numpy's order, so each result is one numpy
may give). The references compute that order from the elements' bits, as the kernels do.
"""
from __future__ import annotations

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError
from ir.symbols import is_static

from ._define import constant_value, defop, fmt_dtypes, within_rules
from ._shapes import check_axis, check_int_tuple, numel
from ._transforms import (
    along,
    around,
    axis_batch,
    broadcast_to,
    emit,
    not_differentiable,
    reshape,
    scatter_add_rows,
    to_front_of,
    wrap_index,
)

SELECT_TRAITS = {"opaque_kernel", "sort"}


def _real_dtype(op: str, dt: DType) -> None:
    if dt.is_complex:
        raise OpError(f"{op}: not defined for complex dtype {dt}; complex lanes take the sort")


# --- the total order -------------------------------------------------------------------------------
def order_keys(x: np.ndarray) -> np.ndarray:
    """Unsigned keys whose integer order is the total order (numpy's, -0.0 < 0.0, NaNs last)."""
    x = np.asarray(x)
    if x.dtype.kind == "b":
        return x.astype(np.uint8)
    if x.dtype.kind in "iu":
        bits = x.dtype.itemsize * 8
        return (x.astype(np.int64) + (1 << (bits - 1))).astype(np.uint64) if bits < 64 else \
            x.view(np.uint64) ^ np.uint64(1 << 63)
    u = np.dtype(f"u{x.dtype.itemsize}")
    bits = np.ascontiguousarray(x).view(u)
    sign = u.type(1 << (x.dtype.itemsize * 8 - 1))
    key = np.where(bits & sign, ~bits, bits | sign)
    return np.where(np.isnan(x), np.iinfo(u).max, key).astype(u)


def _sorted_order(x: np.ndarray, axis: int) -> np.ndarray:
    return np.argsort(order_keys(x), axis=axis, kind="stable")


# --- select_kth ------------------------------------------------------------------------------------
def _select_dtype(dtypes: list[DType], *, axis) -> DType:
    x, idx = dtypes
    _real_dtype("select_kth", x)
    if idx != D.int64:
        raise OpError(f"select_kth: positions must be int64, got dtypes ({fmt_dtypes(dtypes)})")
    return x


def _select_shape(shapes: list[tuple], *, axis) -> tuple:
    x, idx = tuple(shapes[0]), tuple(shapes[1])
    axis = check_axis("select_kth", axis, len(x))
    rest = x[:axis] + x[axis + 1:]
    if len(idx) == 1:
        return x[:axis] + idx + x[axis + 1:]
    if len(idx) != len(x) or idx[:axis] + idx[axis + 1:] != rest:
        raise OpError(f"select_kth: positions must be (Q,) or x's shape {x} with axis {axis} replaced, "
                      f"got {idx}")
    return idx


def _select_reference(x, idx, *, axis):
    """np.sort(x, axis)[..., idx, ...] in the total order (negative positions from the end)."""
    x, idx = np.asarray(x), np.asarray(idx)
    s = np.take_along_axis(x, _sorted_order(x, axis), axis=axis)
    n = x.shape[axis]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"select_kth: a position is out of range for an axis of length {n}")
    if idx.ndim == 1 and x.ndim > 1:
        return np.take(s, idx, axis=axis)
    return np.take_along_axis(s, idx, axis=axis)


def _select_raises(op) -> bool:
    """IndexError unless the positions are constants within a static axis."""
    idx, n = constant_value(op.operands[1]), op.operands[0].type.shape[op.attrs["axis"]]
    if idx is None or not is_static(n):
        return True
    return bool(idx.size) and not (-n <= idx.min() and idx.max() < n)


def _sources(x, idx, axis: int):
    """Where along the axis of x each selected element comes from: the stable sort's permutation at
    the (wrapped) positions, per lane. Ties are kept apart as that sort keeps them."""
    pos = wrap_index(idx, x.meta.shape[axis])
    if pos.ndim == 1 and x.ndim > 1:
        shape = tuple(x.meta.shape)
        pos = broadcast_to(along(pos, axis, x.ndim), shape[:axis] + tuple(pos.meta.shape) + shape[axis + 1:])
    return emit("take_along_axis", emit("argsort", x, axis=axis), pos, axis=axis)


def _select_vjp(g, x, idx, *, out, axis):
    """The cotangent of each selected element added at its source (a position asked twice adds up)."""
    axis %= x.ndim
    shape = tuple(x.meta.shape)
    pre, post, q = numel(shape[:axis]), numel(shape[axis + 1:]), out.meta.shape[axis]
    rows = scatter_add_rows(reshape(g, (pre, q, post)), reshape(_sources(x, idx, axis), (pre, q, post)),
                            shape[axis])
    return reshape(rows, shape), None


def _select_jvp(ts, x, idx, *, out, axis):
    axis %= x.ndim
    return None if ts[0] is None else emit("take_along_axis", ts[0], _sources(x, idx, axis), axis=axis)


def _select_batch(vals, dims, *, axis):
    """Shared (Q,) positions keep the batch dim where it is; otherwise the positions become per-lane
    ones (x's shape with the axis replaced by Q) with the batch dim in front of both."""
    (x, idx), (dx, di) = vals, dims
    axis %= x.ndim - (dx is not None)
    per_lane = idx.ndim - (di is not None) > 1
    if di is None and not per_lane:
        return emit("select_kth", x, idx, axis=around(axis, dx)), dx
    b = x.meta.shape[dx] if dx is not None else idx.meta.shape[di]
    x, idx = to_front_of(x, dx, b), to_front_of(idx, di, b)
    if not per_lane:  # (B, Q): the same positions for each lane of an example
        shape = tuple(x.meta.shape)
        q = idx.meta.shape[1]
        idx = reshape(idx, (b,) + (1,) * axis + (q,) + (1,) * (x.ndim - axis - 2))
        idx = broadcast_to(idx, shape[:axis + 1] + (q,) + shape[axis + 2:])
    return emit("select_kth", x, idx, axis=axis + 1), 0


defop("select_kth", arity=2, dtype_rule=_select_dtype, shape_rule=_select_shape,
      ref=within_rules("select_kth", _select_reference),
      attrs={"axis": REQUIRED}, traits=SELECT_TRAITS, raises=_select_raises,
      vjp=_select_vjp, jvp=_select_jvp, batch=_select_batch,
      markers={"no_frontend_name": "np.median, np.percentile, np.quantile and their nan forms gather "
                                   "their order statistics with it"},
      doc="the elements of sort(x, axis) at positions idx along axis")


# --- partition / argpartition -----------------------------------------------------------------------
def _partition_dtype(op: str, index: bool):
    def rule(dtypes: list[DType], *, kth, axis) -> DType:
        _real_dtype(op, dtypes[0])
        return D.int64 if index else dtypes[0]

    rule.__name__ = rule.__qualname__ = f"_{op}_dtype"
    return rule


def _partition_shape(op: str):
    def rule(shapes: list[tuple], *, kth, axis) -> tuple:
        shape = tuple(shapes[0])
        axis = check_axis(op, axis, len(shape))
        kth = check_int_tuple(op, kth, "kth")
        n = shape[axis]
        if not kth:
            raise OpError(f"{op}: kth must name at least one position")
        if is_static(n) and any(not -n <= k < n for k in kth):
            raise OpError(f"{op}: kth {kth} out of bounds for an axis of length {n}")
        return shape

    rule.__name__ = rule.__qualname__ = f"_{op}_shape"
    return rule


def partition_order(x, kth: tuple, axis: int) -> np.ndarray:
    """The stable three-way partition's order (indices along axis) around the values at kth."""
    x = np.asarray(x)
    keys = np.moveaxis(order_keys(x), axis, -1)
    n = keys.shape[-1]
    pos = [k + n if k < 0 else k for k in kth]
    vals = np.sort(np.sort(keys, axis=-1)[..., pos], axis=-1)
    first = np.ones(vals.shape, bool)
    first[..., 1:] = vals[..., 1:] != vals[..., :-1]  # count each distinct value once
    k, v, f = keys[..., :, None], vals[..., None, :], first[..., None, :]
    below = np.sum((v < k) & f, axis=-1)
    equal = np.any(v == k, axis=-1)
    order = np.argsort(2 * below + equal, axis=-1, kind="stable")
    return np.moveaxis(order, -1, axis)


def _partition_reference(x, *, kth, axis):
    x = np.asarray(x)
    return np.take_along_axis(x, partition_order(x, tuple(kth), axis), axis=axis)


def _argpartition_reference(x, *, kth, axis):
    return partition_order(x, tuple(kth), axis)


def _partition_vjp(g, x, *, out, kth, axis):
    """out = x[argpartition(x)] along the axis: back through the inverse permutation."""
    order = emit("argpartition", x, kth=kth, axis=axis)
    return (emit("take_along_axis", g, emit("argsort", order, axis=axis), axis=axis),)


def _partition_jvp(ts, x, *, out, kth, axis):
    return emit("take_along_axis", ts[0], emit("argpartition", x, kth=kth, axis=axis), axis=axis)


defop("partition", arity=1, dtype_rule=_partition_dtype("partition", False),
      shape_rule=_partition_shape("partition"), ref=within_rules("partition", _partition_reference),
      attrs={"kth": REQUIRED, "axis": REQUIRED}, traits=SELECT_TRAITS, numpy_names=("partition",),
      doc="numpy.partition(x, kth, axis): a stable three-way partition around the kth values",
      vjp=_partition_vjp, jvp=_partition_jvp, batch=axis_batch("partition"))
defop("argpartition", arity=1, dtype_rule=_partition_dtype("argpartition", True),
      shape_rule=_partition_shape("argpartition"), ref=within_rules("argpartition", _argpartition_reference),
      attrs={"kth": REQUIRED, "axis": REQUIRED}, traits=SELECT_TRAITS, numpy_names=("argpartition",),
      doc="numpy.argpartition(x, kth, axis): the order of partition's stable three-way partition",
      markers=not_differentiable("an integer result (a permutation)"), batch=axis_batch("argpartition"))
