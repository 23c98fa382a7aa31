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
    check_axes,
    check_axis,
    check_dim,
    check_int_tuple,
    check_shape,
    is_int,
    numel,
    slice_length,
)
from ._transforms import (
    around,
    as_int64,
    broadcast_to,
    emit,
    linear_jvp,
    move_axis,
    reshape,
    scatter_add_rows,
    shift_axes,
    sum_to,
    to_front,
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


def _shape_batch(name: str):
    """broadcast_to / reshape of a batched x: the batch dim in front, the target shape behind it
    (broadcast_to's x first gains the unit dims numpy's right-aligned broadcasting adds)."""
    def batch(vals, dims, *, shape):
        x = to_front(vals[0], dims[0])
        b, rest = x.meta.shape[0], tuple(x.meta.shape[1:])
        if name == "broadcast_to" and len(rest) < len(shape):
            x = reshape(x, (b, *(1,) * (len(shape) - len(rest)), *rest))
        return emit(name, x, shape=(b, *shape)), 0

    return batch


def _transpose_vjp(g, x, *, out, perm):
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return (emit("transpose", g, perm=tuple(inverse)),)


def _transpose_batch(vals, dims, *, perm):
    d = dims[0]  # the batch dim stays where it is; the others move around it
    logical = [a for a in range(vals[0].ndim) if a != d]
    new = [logical[p] for p in perm]
    new.insert(d, d)
    return emit("transpose", vals[0], perm=tuple(new)), d


defop("broadcast_to", arity=1, dtype_rule=_same_dtype, shape_rule=_broadcast_to_shape,
      ref=lambda x, *, shape: np.broadcast_to(x, tuple(shape)), attrs={"shape": REQUIRED},
      traits={*VIEW, "broadcast", "read_only"}, numpy_names=("broadcast_to",),
      vjp=lambda g, x, *, out, shape: (sum_to(g, x.meta.shape),), jvp=linear_jvp("broadcast_to"),
      batch=_shape_batch("broadcast_to"))
defop("reshape", arity=1, dtype_rule=_same_dtype, shape_rule=_reshape_shape,
      ref=lambda x, *, shape: np.reshape(x, tuple(shape)), attrs={"shape": REQUIRED}, traits=VIEW,
      numpy_names=("reshape", "ravel"), vjp=lambda g, x, *, out, shape: (reshape(g, x.meta.shape),),
      jvp=linear_jvp("reshape"), batch=_shape_batch("reshape"))
defop("transpose", arity=1, dtype_rule=_same_dtype, shape_rule=_transpose_shape,
      ref=lambda x, *, perm: np.transpose(x, tuple(perm)), attrs={"perm": REQUIRED}, traits=VIEW,
      numpy_names=("transpose", "permute_dims", "swapaxes", "moveaxis", "matrix_transpose"),
      vjp=_transpose_vjp, jvp=linear_jvp("transpose"), batch=_transpose_batch)


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


def _axes_layout_batch(name: str):
    """expand_dims / squeeze of a batched x: batch dim in front, the axes shifted past it."""
    def batch(vals, dims, *, axes):
        return emit(name, to_front(vals[0], dims[0]), axes=shift_axes(tuple(axes))), 0

    return batch


defop("expand_dims", arity=1, dtype_rule=_same_dtype, shape_rule=_expand_dims_shape,
      ref=lambda x, *, axes: np.expand_dims(x, tuple(axes)), attrs={"axes": REQUIRED}, traits=VIEW,
      numpy_names=("expand_dims",), vjp=lambda g, x, *, out, axes: (reshape(g, x.meta.shape),),
      jvp=linear_jvp("expand_dims"), batch=_axes_layout_batch("expand_dims"))
defop("squeeze", arity=1, dtype_rule=_same_dtype, shape_rule=_squeeze_shape,
      ref=lambda x, *, axes: np.squeeze(x, tuple(axes)), attrs={"axes": REQUIRED}, traits=VIEW,
      numpy_names=("squeeze",), vjp=lambda g, x, *, out, axes: (reshape(g, x.meta.shape),),
      jvp=linear_jvp("squeeze"), batch=_axes_layout_batch("squeeze"))
def _flip_batch(vals, dims, *, axes):
    d = dims[0]  # the batch dim stays; the flipped axes step over it
    return emit("flip", vals[0], axes=tuple(around(a, d) for a in axes)), d


defop("flip", arity=1, dtype_rule=_same_dtype, shape_rule=_flip_shape,
      ref=lambda x, *, axes: np.flip(x, tuple(axes)), attrs={"axes": REQUIRED}, traits=VIEW,
      numpy_names=("flip", "fliplr", "flipud"), vjp=lambda g, x, *, out, axes: (emit("flip", g, axes=axes),),
      jvp=linear_jvp("flip"), batch=_flip_batch)


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


def _slice_positions(n, start, stop, step, length):
    """(first, stride, backwards) of the `length` elements a slice takes from an axis of n: the
    lowest position, the positive stride, and whether the slice walks the axis backwards."""
    if is_static(n):
        a, _, c = slice(_py(start), _py(stop), step).indices(int(n))
        if c > 0:
            return a, c, False
        return (a + (length - 1) * c if is_static(length) and length else 0), -c, True
    if step < 0 or (start is not None and is_static(start) and start < 0):
        raise NotImplementedError("slice: the derivative of a backward or negative-start slice of an axis of "
                                  f"symbolic length {n} (the front end gives positive steps and bounds)")
    return (0 if start is None else start), step, False


def _slice_vjp(g, x, *, out, starts, stops, steps):
    """g put back where the slice took it from, zeros elsewhere: per strided axis each element
    gains step - 1 zeros after it (pad and merge), then every axis is padded out to x's."""
    widths, backwards = [], []
    for axis, (n, a, b, c) in enumerate(zip(x.meta.shape, starts, stops, steps)):
        length = g.meta.shape[axis]
        first, step, back = _slice_positions(n, a, b, c, length)
        if back:
            backwards.append(axis)
        if step != 1 and not (is_static(length) and length == 0):
            g = _spread(g, axis, step)
            length = (length - 1) * step + 1
        widths.append((first, norm_dim(n - first - length)))
    if backwards:
        g = emit("flip", g, axes=tuple(backwards))
    return (emit("pad", g, pad_width=tuple(widths), value=0),)


def _spread(g, axis: int, step: int):
    """g with step - 1 zeros after each element along `axis` (the last element's cut off)."""
    shape = tuple(g.meta.shape)
    n = shape[axis]
    g = reshape(g, shape[:axis + 1] + (1,) + shape[axis + 1:])
    widths = tuple((0, step - 1) if k == axis + 1 else (0, 0) for k in range(len(shape) + 1))
    g = reshape(emit("pad", g, pad_width=widths, value=0), shape[:axis] + (n * step,) + shape[axis + 1:])
    return _take_range(g, axis, 0, (n - 1) * step + 1)


def _take_range(x, axis: int, start, stop):
    """x[..., start:stop, ...] along `axis` (bounds within the axis)."""
    rank = x.ndim
    return emit("slice", x, starts=tuple(start if k == axis else 0 for k in range(rank)),
                stops=tuple(stop if k == axis else x.meta.shape[k] for k in range(rank)), steps=(1,) * rank)


def _slice_batch(vals, dims, *, starts, stops, steps):
    x, d = vals[0], dims[0]  # the batch dim stays, taken whole

    def ins(t, v):
        return (*t[:d], v, *t[d:])

    return emit("slice", x, starts=ins(starts, 0), stops=ins(stops, x.meta.shape[d]), steps=ins(steps, 1)), d


defop("slice", arity=1, dtype_rule=_same_dtype, shape_rule=_slice_shape, ref=_slice_reference,
      attrs={"starts": REQUIRED, "stops": REQUIRED, "steps": REQUIRED}, traits=VIEW,
      markers={"no_frontend_name": "reached by basic indexing (x[1:3, ::-1])"},
      vjp=_slice_vjp, jvp=linear_jvp("slice"), batch=_slice_batch)


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


def _concatenate_vjp(g, *xs, out, axis):
    cts, start = [], 0
    for x in xs:
        stop = norm_dim(start + x.meta.shape[axis])
        cts.append(_take_range(g, axis, start, stop))
        start = stop
    return tuple(cts)


def _stack_vjp(g, *xs, out, axis):
    shape = tuple(g.meta.shape[:axis]) + tuple(g.meta.shape[axis + 1:])
    return tuple(reshape(_take_range(g, axis, i, i + 1), shape) for i in range(len(xs)))


def _batched_alike(vals, dims):
    """The operands batched at one dim d (the first batched operand's), unbatched ones repeated
    along it: (operands, d)."""
    d = next(k for k in dims if k is not None)
    size = next(v.meta.shape[k] for v, k in zip(vals, dims) if k is not None)
    out = []
    for v, k in zip(vals, dims):
        if k is None:
            shape = tuple(v.meta.shape)
            v = broadcast_to(reshape(v, (*shape[:d], 1, *shape[d:])), (*shape[:d], size, *shape[d:]))
        out.append(move_axis(v, k, d) if k is not None else v)
    return out, d


def _concatenate_batch(vals, dims, *, axis):
    vals, d = _batched_alike(vals, dims)
    return emit("concatenate", *vals, axis=around(axis, d)), d


def _stack_batch(vals, dims, *, axis):
    vals, d = _batched_alike(vals, dims)  # stacked at `axis` of the example: before the batch dim or after
    return emit("stack", *vals, axis=axis if axis <= d else axis + 1), d + (axis <= d)


defop("concatenate", arity=None, min_arity=1, dtype_rule=_promote_dtype, shape_rule=_concatenate_shape,
      ref=lambda *xs, axis: np.concatenate(xs, axis=axis), attrs={"axis": REQUIRED}, traits=LAYOUT,
      numpy_names=("concatenate", "concat"), vjp=_concatenate_vjp, jvp=linear_jvp("concatenate"),
      batch=_concatenate_batch)
defop("stack", arity=None, min_arity=1, dtype_rule=_promote_dtype, shape_rule=_stack_shape,
      ref=lambda *xs, axis: np.stack(xs, axis=axis), attrs={"axis": REQUIRED}, traits=LAYOUT,
      numpy_names=("stack",), vjp=_stack_vjp, jvp=linear_jvp("stack"), batch=_stack_batch)


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


def _pad_vjp(g, x, *, out, pad_width, value):
    starts = tuple(lo for lo, _ in pad_width)
    stops = tuple(norm_dim(lo + n) for lo, n in zip(starts, x.meta.shape))
    return (emit("slice", g, starts=starts, stops=stops, steps=(1,) * x.ndim),)


def _pad_jvp(ts, x, *, out, pad_width, value):
    return emit("pad", ts[0], pad_width=pad_width, value=0)  # the padding value is a constant


def _pad_batch(vals, dims, *, pad_width, value):
    d = dims[0]
    widths = (*pad_width[:d], (0, 0), *pad_width[d:])
    return emit("pad", vals[0], pad_width=tuple(widths), value=value), d


defop("pad", arity=1, dtype_rule=_pad_dtype, shape_rule=_pad_shape, ref=_pad_reference,
      attrs={"pad_width": REQUIRED, "value": 0}, traits=LAYOUT, numpy_names=("pad",),
      vjp=_pad_vjp, jvp=_pad_jvp, batch=_pad_batch)


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


def _take_vjp(g, x, idx, *, out, axis):
    """A scatter-add of g into zeros of x's shape at the taken rows (repeated indices add up)."""
    shape = tuple(x.meta.shape)
    pre, post, m = numel(shape[:axis]), numel(shape[axis + 1:]), numel(idx.meta.shape)
    rows = scatter_add_rows(reshape(g, (pre, m, post)), reshape(idx, (1, m, 1)), shape[axis])
    return reshape(rows, shape), None


def _take_jvp(ts, x, idx, *, out, axis):
    return None if ts[0] is None else emit("take", ts[0], idx, axis=axis)


def _take_batch(vals, dims, *, axis):
    (x, idx), (dx, di) = vals, dims
    if di is None:  # the same indices for every example
        ax = around(axis, dx)
        return emit("take", x, idx, axis=ax), (dx if dx < ax else dx + idx.ndim - 1)
    if dx is None:  # one array, per-example indices: the batch dim lands among the index dims
        return emit("take", x, idx, axis=axis), axis + di
    # both batched: a gather along the axis with each example's indices (take_along_axis)
    x, idx = to_front(x, dx), as_int64(to_front(idx, di))
    shape, ishape = tuple(x.meta.shape), tuple(idx.meta.shape)
    rank, m = x.ndim, numel(ishape[1:])
    flat = reshape(idx, (ishape[0], *(1,) * axis, m, *(1,) * (rank - axis - 2)))
    got = emit("take_along_axis", x, flat, axis=axis + 1)
    return reshape(got, (*shape[:axis + 1], *ishape[1:], *shape[axis + 2:])), 0


defop("take", arity=2, dtype_rule=_take_dtype, shape_rule=_take_shape,
      ref=lambda x, idx, *, axis: np.take(x, idx, axis=axis), attrs={"axis": REQUIRED},
      traits={"layout", "gather"}, numpy_names=("take",), raises=_take_raises,
      vjp=_take_vjp, jvp=_take_jvp, batch=_take_batch)
