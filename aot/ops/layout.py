"""Layout ops: they move or replicate elements without arithmetic. Attributes arrive normalised
(non-negative axes, fully resolved shapes) from the front end; the rules check that and say so.

References return numpy's views where numpy does (broadcast_to's is read-only): callers that write
into a reference's result copy it first."""
from __future__ import annotations

import numpy as np

from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError, broadcast_shapes
from ir.symbols import dims_equal, is_static, norm_dim

from ._define import constant_value, defop, fmt_dtypes, promote
from ._shapes import (
    check_axes, check_axis, check_dim, check_int_tuple, check_shape, is_int, numel, slice_length,
)

LAYOUT = {"layout", "linear"}
VIEW = {*LAYOUT, "view"}  # codegen returns a view of the operand's memory (strides), never a copy
# (numpy's result is a view too, which in-place updates follow: aot/compiler/aliasing.py; "read_only":
# numpy's view refuses writes)


def _same_dtype(dtypes: list[DType], **_) -> DType:
    return dtypes[0]


def _promote_dtype(dtypes: list[DType], **_) -> DType:
    return promote(*dtypes)


def _fmt(shape: tuple) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


# --- broadcast_to / reshape / transpose ------------------------------------------------------------
def _broadcast_to_shape(shapes: list[tuple], *, shape) -> tuple:
    x, target = tuple(shapes[0]), check_shape("broadcast_to", shape)
    ok = len(x) <= len(target)
    if ok:
        out = broadcast_shapes(x, target, op="broadcast_to")
        ok = all(dims_equal(a, b) for a, b in zip(out, target))
    if not ok:
        raise OpError(f"broadcast_to: cannot broadcast shape {_fmt(x)} to {_fmt(target)}")
    return target


def _reshape_shape(shapes: list[tuple], *, shape) -> tuple:
    x, target = tuple(shapes[0]), check_shape("reshape", shape)
    if not dims_equal(numel(x), numel(target)):
        raise OpError(f"reshape: cannot reshape {_fmt(x)} ({numel(x)} elements) into {_fmt(target)} "
                      f"({numel(target)} elements)")
    return target


def _transpose_shape(shapes: list[tuple], *, perm) -> tuple:
    x = tuple(shapes[0])
    perm = check_int_tuple("transpose", perm, "perm")
    if sorted(perm) != list(range(len(x))):
        raise OpError(f"transpose: perm {perm} is not a permutation of the {len(x)} axes of {_fmt(x)}")
    return tuple(x[p] for p in perm)


defop("broadcast_to", arity=1, dtype_rule=_same_dtype, shape_rule=_broadcast_to_shape,
      ref=lambda x, *, shape: np.broadcast_to(x, tuple(shape)), attrs={"shape": REQUIRED},
      traits={*VIEW, "broadcast", "read_only"}, numpy_names=("broadcast_to",))
defop("reshape", arity=1, dtype_rule=_same_dtype, shape_rule=_reshape_shape,
      ref=lambda x, *, shape: np.reshape(x, tuple(shape)), attrs={"shape": REQUIRED}, traits=VIEW,
      numpy_names=("reshape", "ravel"))
defop("transpose", arity=1, dtype_rule=_same_dtype, shape_rule=_transpose_shape,
      ref=lambda x, *, perm: np.transpose(x, tuple(perm)), attrs={"perm": REQUIRED}, traits=VIEW,
      numpy_names=("transpose", "permute_dims", "swapaxes", "moveaxis", "matrix_transpose"))


# --- expand_dims / squeeze / flip ------------------------------------------------------------------
def _expand_dims_shape(shapes: list[tuple], *, axes) -> tuple:
    x = tuple(shapes[0])
    axes = set(check_axes("expand_dims", axes, len(x) + len(axes)))
    rest = iter(x)
    return tuple(1 if i in axes else next(rest) for i in range(len(x) + len(axes)))


def _squeeze_shape(shapes: list[tuple], *, axes) -> tuple:
    x = tuple(shapes[0])
    axes = check_axes("squeeze", axes, len(x))
    for a in axes:
        if x[a] != 1:
            raise OpError(f"squeeze: axis {a} of shape {_fmt(x)} has size {x[a]}, expected 1")
    return tuple(d for i, d in enumerate(x) if i not in axes)


def _flip_shape(shapes: list[tuple], *, axes) -> tuple:
    check_axes("flip", axes, len(shapes[0]))
    return tuple(shapes[0])


defop("expand_dims", arity=1, dtype_rule=_same_dtype, shape_rule=_expand_dims_shape,
      ref=lambda x, *, axes: np.expand_dims(x, tuple(axes)), attrs={"axes": REQUIRED}, traits=VIEW,
      numpy_names=("expand_dims",))
defop("squeeze", arity=1, dtype_rule=_same_dtype, shape_rule=_squeeze_shape,
      ref=lambda x, *, axes: np.squeeze(x, tuple(axes)), attrs={"axes": REQUIRED}, traits=VIEW,
      numpy_names=("squeeze",))
defop("flip", arity=1, dtype_rule=_same_dtype, shape_rule=_flip_shape,
      ref=lambda x, *, axes: np.flip(x, tuple(axes)), attrs={"axes": REQUIRED}, traits=VIEW,
      numpy_names=("flip", "fliplr", "flipud"))


# --- slice -----------------------------------------------------------------------------------------
def _slice_shape(shapes: list[tuple], *, starts, stops, steps) -> tuple:
    x = tuple(shapes[0])
    for what, v in (("starts", starts), ("stops", stops), ("steps", steps)):
        if not isinstance(v, (tuple, list)) or len(v) != len(x):
            raise OpError(f"slice: {what} must have one entry per dim of {_fmt(x)}, got {v!r}")
    out = []
    for n, a, b, c in zip(x, starts, stops, steps):
        if not is_int(c) or c == 0:
            raise OpError(f"slice: steps must be non-zero ints, got {steps!r}")
        for bound in (a, b):
            if bound is not None:
                _check_bound(bound)
        out.append(slice_length("slice", n, a, b, c))
    return tuple(out)


def _check_bound(bound) -> None:
    try:
        norm_dim(bound)
    except TypeError:
        raise OpError(f"slice: bounds must be ints, sympy expressions or None, got {bound!r}") from None


def _slice_reference(x, *, starts, stops, steps):
    idx = tuple(slice(_py(a), _py(b), c) for a, b, c in zip(starts, stops, steps))
    return np.asarray(x)[idx]


def _py(bound):
    return None if bound is None else int(bound)


defop("slice", arity=1, dtype_rule=_same_dtype, shape_rule=_slice_shape, ref=_slice_reference,
      attrs={"starts": REQUIRED, "stops": REQUIRED, "steps": REQUIRED}, traits=VIEW,
      markers={"no_frontend_name": "reached by basic indexing (x[1:3, ::-1])"})


# --- concatenate / stack ---------------------------------------------------------------------------
def _concatenate_shape(shapes: list[tuple], *, axis) -> tuple:
    first = tuple(shapes[0])
    axis = check_axis("concatenate", axis, len(first))
    total = 0
    for i, s in enumerate(shapes):
        same = len(s) == len(first) and all(dims_equal(a, b) for k, (a, b) in enumerate(zip(s, first))
                                             if k != axis)
        if not same:
            raise OpError(f"concatenate: operand #{i} has shape {_fmt(s)}, expected {_fmt(first)} "
                          f"except along axis {axis}")
        total = total + s[axis]
    return first[:axis] + (norm_dim(total),) + first[axis + 1:]


def _stack_shape(shapes: list[tuple], *, axis) -> tuple:
    first = tuple(shapes[0])
    axis = check_axis("stack", axis, len(first) + 1)
    for i, s in enumerate(shapes):
        if len(s) != len(first) or not all(dims_equal(a, b) for a, b in zip(s, first)):
            raise OpError(f"stack: operand #{i} has shape {_fmt(s)}, expected {_fmt(first)}")
    return first[:axis] + (len(shapes),) + first[axis:]


defop("concatenate", arity=None, min_arity=1, dtype_rule=_promote_dtype, shape_rule=_concatenate_shape,
      ref=lambda *xs, axis: np.concatenate(xs, axis=axis), attrs={"axis": REQUIRED}, traits=LAYOUT,
      numpy_names=("concatenate", "concat"))
defop("stack", arity=None, min_arity=1, dtype_rule=_promote_dtype, shape_rule=_stack_shape,
      ref=lambda *xs, axis: np.stack(xs, axis=axis), attrs={"axis": REQUIRED}, traits=LAYOUT,
      numpy_names=("stack",))


# --- pad -------------------------------------------------------------------------------------------
_SCALARS = (bool, int, float, complex, np.generic)


def _pad_dtype(dtypes: list[DType], *, pad_width, value) -> DType:
    if not isinstance(value, _SCALARS):
        raise OpError(f"pad: value must be a scalar, got {value!r}")
    if np.iscomplexobj(value) and not dtypes[0].is_complex:
        raise OpError(f"pad: complex value {value!r} for a {dtypes[0]} operand")
    return dtypes[0]


def _pad_shape(shapes: list[tuple], *, pad_width, value) -> tuple:
    x = tuple(shapes[0])
    ok = isinstance(pad_width, (tuple, list)) and len(pad_width) == len(x)
    ok = ok and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in pad_width)
    if not ok:
        raise OpError(f"pad: pad_width must hold one (before, after) pair per dim of {_fmt(x)}, "
                      f"got {pad_width!r}")
    widths = [(check_dim("pad", lo, "pad_width entry"), check_dim("pad", hi, "pad_width entry"))
              for lo, hi in pad_width]
    return tuple(norm_dim(d + lo + hi) for d, (lo, hi) in zip(x, widths))


def _pad_reference(x, *, pad_width, value):
    widths = tuple((int(lo), int(hi)) for lo, hi in pad_width)
    return np.pad(x, widths, mode="constant", constant_values=value)


defop("pad", arity=1, dtype_rule=_pad_dtype, shape_rule=_pad_shape, ref=_pad_reference,
      attrs={"pad_width": REQUIRED, "value": 0}, traits=LAYOUT, numpy_names=("pad",))


# --- take ------------------------------------------------------------------------------------------
def _take_dtype(dtypes: list[DType], *, axis) -> DType:
    x, idx = dtypes
    if idx.kind not in "bi":
        raise OpError(f"take: indices must be integers, got dtypes ({fmt_dtypes(dtypes)})")
    return x


def _take_shape(shapes: list[tuple], *, axis) -> tuple:
    x, idx = tuple(shapes[0]), tuple(shapes[1])
    axis = check_axis("take", axis, len(x))
    n = numel(idx)
    others_empty = any(is_static(d) and d == 0 for i, d in enumerate(x) if i != axis)
    if x[axis] == 0 and not (is_static(n) and n == 0) and not others_empty:  # numpy: nothing is taken
        raise OpError(f"take: cannot take {n} indices from the empty axis {axis} of shape {_fmt(x)}")
    return x[:axis] + idx + x[axis + 1:]


def _take_raises(op) -> bool:
    """IndexError unless the indices are constants within a static axis (numpy checks each index)."""
    idx, n = constant_value(op.operands[1]), op.operands[0].type.shape[op.attrs["axis"]]
    if idx is None or not is_static(n):
        return idx is None or idx.size > 0
    return bool(idx.size) and not (-n <= idx.min() and idx.max() < n)


defop("take", arity=2, dtype_rule=_take_dtype, shape_rule=_take_shape,
      ref=lambda x, idx, *, axis: np.take(x, idx, axis=axis), attrs={"axis": REQUIRED},
      traits={"layout", "gather"}, numpy_names=("take",), raises=_take_raises)
