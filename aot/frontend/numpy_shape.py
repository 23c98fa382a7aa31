"""Layout functions: reshape, transpose and friends, concatenation, flips, padding, take, roll.

A function that is one layout op registers against its row (`@translates("transpose", "swapaxes")`:
the row names np.swapaxes); the others (atleast_*, hstack, roll, ...) decompose (DECOMPOSITIONS)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ir import dtypes as irdt

from .emitter import Emitter, abstract_of
from .numpy_ufuncs import apply_ufunc, emit
from .operands import (
    UnsupportedError,
    constant,
    index_arg,
    no_out,
    normalize_axes,
    normalize_axis,
    result_dtype,
    to_dtype,
    to_value,
)
from .registry import translates
from .shapes import broadcast_shapes, dim_equals, dims_equal, div_exact, fmt_shape, prod, same_dim, static_int


def _shape_arg(shape: Any, argname: str = "shape") -> tuple:
    """A shape argument as a tuple of Python ints (numpy integers converted) and symbolic dims."""
    dims = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    return tuple(d if hasattr(d, "free_symbols") else index_arg(d, argname) for d in dims)


# --- reshape ------------------------------------------------------------------------------------

def reshape(em: Emitter, x: Any, shape: Any):
    """x reshaped to `shape` (one -1 allowed); numpy's errors."""
    av = abstract_of(x)
    dims = list(_shape_arg(shape))
    unknown = [i for i, d in enumerate(dims) if isinstance(d, int) and d == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    for d in dims:
        if isinstance(d, int) and d < -1:
            raise ValueError("negative dimensions not allowed")
    size = prod(av.shape)
    if unknown:
        known = prod(d for i, d in enumerate(dims) if i != unknown[0])
        q = None if dim_equals(known, 0) else div_exact(size, known)
        if q is None:
            raise ValueError(f"cannot reshape array of size {size} into shape {fmt_shape(tuple(dims))}")
        dims[unknown[0]] = q
    elif not dims_equal(prod(dims), size):
        raise ValueError(f"cannot reshape array of size {size} into shape {fmt_shape(tuple(dims))}")
    new = tuple(dims)
    if len(new) == av.ndim and all(same_dim(a, b) for a, b in zip(new, av.shape)):
        return x
    return emit(em, "reshape", x, shape=new)


def _check_order(fname: str, order: str) -> None:
    if order not in ("C", "A", "K"):
        raise UnsupportedError(f"{fname}: only C order is supported in traced code, got order={order!r}")


@translates("reshape", "reshape")
def np_reshape(em: Emitter, a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
               copy: Any = None):
    _check_order("np.reshape", order)
    if shape is None:
        if newshape is None:
            raise TypeError("np.reshape: missing the `shape` argument")
        shape = newshape
    return reshape(em, to_value(em, a), shape)


@translates("reshape", "ravel")
def np_ravel(em: Emitter, a: Any, order: str = "C"):
    _check_order("np.ravel", order)
    return reshape(em, to_value(em, a), (-1,))


# --- axis permutations --------------------------------------------------------------------------

def transpose(em: Emitter, x: Any, axes: Any = None):
    n = abstract_of(x).ndim
    if axes is None:
        perm = tuple(range(n - 1, -1, -1))
    else:
        axes = tuple(axes)
        if len(axes) != n:
            raise ValueError("axes don't match array")
        perm = tuple(normalize_axis(a, n, "axes") for a in axes)
        if len(set(perm)) != n:
            raise ValueError("repeated axis in transpose")
    if perm == tuple(range(n)):
        return x
    return emit(em, "transpose", x, perm=perm)


@translates("transpose", "transpose", "permute_dims")
def np_transpose(em: Emitter, a: Any, axes: Any = None):
    return transpose(em, to_value(em, a), axes)


@translates("transpose", "moveaxis")
def np_moveaxis(em: Emitter, a: Any, source: Any, destination: Any):
    x = to_value(em, a)
    n = abstract_of(x).ndim
    src = normalize_axes(source, n, "source")
    dst = normalize_axes(destination, n, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(em, x, order)


@translates("transpose", "swapaxes")
def np_swapaxes(em: Emitter, a: Any, axis1: Any, axis2: Any):
    x = to_value(em, a)
    n = abstract_of(x).ndim
    i, j = normalize_axis(axis1, n, "axis1"), normalize_axis(axis2, n, "axis2")
    perm = list(range(n))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(em, x, perm)


@translates("transpose", "matrix_transpose")
def np_matrix_transpose(em: Emitter, x: Any):
    v = to_value(em, x)
    n = abstract_of(v).ndim
    if n < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {n}")
    return np_swapaxes(em, v, -1, -2)


# --- adding and removing unit dims ----------------------------------------------------------------

def expand_dims(em: Emitter, x: Any, axis: Any):
    n = abstract_of(x).ndim
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = normalize_axes(tuple(items), n + len(items))
    return emit(em, "expand_dims", x, axes=tuple(sorted(axes))) if axes else x


@translates("expand_dims")
def np_expand_dims(em: Emitter, a: Any, axis: Any):
    return expand_dims(em, to_value(em, a), axis)


def squeeze(em: Emitter, x: Any, axis: Any = None):
    av = abstract_of(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(av.shape) if dim_equals(d, 1))
    else:
        axes = normalize_axes(axis, av.ndim)
        if any(not dim_equals(av.shape[i], 1) for i in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return emit(em, "squeeze", x, axes=tuple(sorted(axes))) if axes else x


@translates("squeeze")
def np_squeeze(em: Emitter, a: Any, axis: Any = None):
    return squeeze(em, to_value(em, a), axis)


def broadcast_to(em: Emitter, x: Any, shape: Any):
    av = abstract_of(x)
    shape = _shape_arg(shape)
    if any(isinstance(d, int) and d < 0 for d in shape):
        raise ValueError("all elements of broadcast shape must be non-negative")
    ok = len(shape) >= av.ndim and all(
        dim_equals(d, 1) or dims_equal(d, t) for d, t in zip(av.shape, shape[len(shape) - av.ndim:]))
    if not ok:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {fmt_shape(av.shape)} and requested shape "
                         f"{fmt_shape(shape)}")
    if len(shape) == av.ndim and all(same_dim(a, b) for a, b in zip(av.shape, shape)):
        return x
    return emit(em, "broadcast_to", x, shape=shape)


@translates("broadcast_to")
def np_broadcast_to(em: Emitter, array: Any, shape: Any, subok: bool = False):
    return broadcast_to(em, to_value(em, array), shape)


def np_broadcast_arrays(em: Emitter, *args: Any, subok: bool = False):
    vals = [to_value(em, a) for a in args]
    shape = broadcast_shapes(*(abstract_of(v).shape for v in vals))
    return tuple(broadcast_to(em, v, shape) for v in vals)


# numpy's placement of new unit dims: (target ndim, input ndim) -> axes inserted
_ATLEAST_AXES = {(1, 0): (0,), (2, 0): (0, 1), (2, 1): (0,), (3, 0): (0, 1, 2), (3, 1): (0, 2), (3, 2): (2,)}


def _atleast(em: Emitter, nd: int, arys: tuple):
    out = []
    for a in arys:
        x = to_value(em, a)
        n = abstract_of(x).ndim
        out.append(expand_dims(em, x, _ATLEAST_AXES[nd, n]) if n < nd else x)
    return out[0] if len(out) == 1 else tuple(out)


def np_atleast_1d(em: Emitter, *arys: Any):
    return _atleast(em, 1, arys)


def np_atleast_2d(em: Emitter, *arys: Any):
    return _atleast(em, 2, arys)


def np_atleast_3d(em: Emitter, *arys: Any):
    return _atleast(em, 3, arys)


# --- joining --------------------------------------------------------------------------------------

def _arrays_arg(em: Emitter, fname: str, arrays: Any) -> list:
    if em.is_value(arrays) or not isinstance(arrays, Sequence) or isinstance(arrays, str):
        raise TypeError(f"{fname}: `arrays` must be a sequence of arrays, got {type(arrays).__name__}")
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    return [a if em.is_value(a) else constant(em, np.asarray(a)) for a in arrays]


def _joined_dtype(em: Emitter, vals: list, dtype: Any):
    return to_dtype(dtype, "dtype") if dtype is not None else result_dtype(em, *vals)


@translates("concatenate")
def np_concatenate(em: Emitter, arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                   casting: str = "same_kind"):
    no_out("np.concatenate", out)
    vals = _arrays_arg(em, "np.concatenate", arrays)
    if axis is None:
        vals = [reshape(em, v, (-1,)) for v in vals]
        axis = 0
    shapes = [abstract_of(v).shape for v in vals]
    n = len(shapes[0])
    if n == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(axis, n)
    for k, s in enumerate(shapes[1:], 1):
        if len(s) != n:
            raise ValueError(f"all the input arrays must have same number of dimensions, but the array at "
                             f"index 0 has {n} dimension(s) and the array at index {k} has {len(s)} "
                             f"dimension(s)")
        for d in range(n):
            if d != ax and not dims_equal(s[d], shapes[0][d]):
                raise ValueError(f"all the input array dimensions except for the concatenation axis must "
                                 f"match exactly, but along dimension {d}, the array at index 0 has size "
                                 f"{shapes[0][d]} and the array at index {k} has size {s[d]}")
    dt = _joined_dtype(em, vals, dtype)
    vals = [to_value(em, v, dt) for v in vals]
    return vals[0] if len(vals) == 1 else emit(em, "concatenate", *vals, axis=ax)


@translates("stack")
def np_stack(em: Emitter, arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
             casting: str = "same_kind"):
    no_out("np.stack", out)
    vals = _arrays_arg(em, "np.stack", arrays)
    shapes = [abstract_of(v).shape for v in vals]
    if any(len(s) != len(shapes[0]) or not all(dims_equal(a, b) for a, b in zip(s, shapes[0]))
           for s in shapes[1:]):
        raise ValueError("all input arrays must have the same shape")
    ax = normalize_axis(axis, len(shapes[0]) + 1)
    dt = _joined_dtype(em, vals, dtype)
    return emit(em, "stack", *(to_value(em, v, dt) for v in vals), axis=ax)


def np_hstack(em: Emitter, tup: Any, *, dtype: Any = None, casting: str = "same_kind"):
    vals = _arrays_arg(em, "np.hstack", tup)
    vals = [np_atleast_1d(em, v) for v in vals]
    axis = 0 if abstract_of(vals[0]).ndim == 1 else 1
    return np_concatenate(em, vals, axis, dtype=dtype)


def np_vstack(em: Emitter, tup: Any, *, dtype: Any = None, casting: str = "same_kind"):
    vals = [np_atleast_2d(em, v) for v in _arrays_arg(em, "np.vstack", tup)]
    return np_concatenate(em, vals, 0, dtype=dtype)


def np_column_stack(em: Emitter, tup: Any):
    vals = []
    for v in _arrays_arg(em, "np.column_stack", tup):
        if abstract_of(v).ndim < 2:
            v = reshape(em, v, (-1, 1))
        vals.append(v)
    return np_concatenate(em, vals, 1)


# --- flips, padding, gathering, rolling -----------------------------------------------------------

def flip(em: Emitter, x: Any, axes: tuple[int, ...]):
    return emit(em, "flip", x, axes=tuple(sorted(axes))) if axes else x


@translates("flip", "flip")
def np_flip(em: Emitter, m: Any, axis: Any = None):
    x = to_value(em, m)
    return flip(em, x, normalize_axes(axis, abstract_of(x).ndim))


@translates("flip", "fliplr")
def np_fliplr(em: Emitter, m: Any):
    x = to_value(em, m)
    if abstract_of(x).ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(em, x, (1,))


@translates("flip", "flipud")
def np_flipud(em: Emitter, m: Any):
    x = to_value(em, m)
    if abstract_of(x).ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(em, x, (0,))


@translates("pad")
def np_pad(em: Emitter, array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any):
    if mode != "constant":
        raise UnsupportedError(f"np.pad: only mode='constant' is supported in traced code, got {mode!r}")
    value = kwargs.pop("constant_values", 0)
    if kwargs:
        raise ValueError(f"unsupported keyword arguments for mode 'constant': {set(kwargs)}")
    x = to_value(em, array)
    av = abstract_of(x)
    pw = np.asarray(pad_width)
    if pw.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    pw = np.broadcast_to(pw, (av.ndim, 2))
    if (pw < 0).any():
        raise ValueError("index can't contain negative values")
    if np.ndim(value) != 0:
        raise UnsupportedError("np.pad: only a scalar `constant_values` is supported in traced code")
    pairs = tuple((int(a), int(b)) for a, b in pw)
    if not any(a or b for a, b in pairs):
        return x
    fill = np.asarray(value).astype(av.dtype.numpy).item()
    return emit(em, "pad", x, pad_width=pairs, value=fill)


def take(em: Emitter, x: Any, indices: Any, axis: int, mode: str = "raise"):
    """np.take along a normalised axis; indices may be values or integer constants."""
    if em.is_value(indices):
        idx = indices
        if not abstract_of(idx).dtype.is_int:
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
    else:
        arr = np.asarray(indices)
        if arr.dtype.kind == "b":
            raise _bool_mask_error()
        if arr.dtype.kind not in "iu" and arr.size:
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        shape = abstract_of(x).shape
        n = shape[axis]
        # numpy checks only the indices it uses: none when the other dims are empty
        others_empty = any(isinstance(d, int) and d == 0 for i, d in enumerate(shape) if i != axis)
        if arr.size and isinstance(n, int) and n == 0 and not others_empty:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        if mode == "raise" and arr.size and isinstance(n, int) and not others_empty \
                and not (-n <= arr.min() and arr.max() < n):
            bad = arr.max() if arr.max() >= n else arr.min()
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
        idx = constant(em, arr.astype(np.int64), irdt.int64)
    if mode in ("wrap", "clip"):
        n = abstract_of(x).shape[axis]
        nconst = static_int(n, "the axis length for mode=" + mode)
        if mode == "wrap":
            idx = apply_ufunc(em, np.remainder, idx, nconst)
        else:
            idx = emit(em, "clip", idx, *(constant(em, v, abstract_of(idx).dtype) for v in (0, nconst - 1)))
    elif mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    return emit(em, "take", x, idx, axis=axis)


def _bool_mask_error() -> Exception:
    return UnsupportedError("boolean mask indexing here has a data-dependent shape and is not supported in traced "
                            "code; x[mask] alone (mask over x's leading dims) supports reductions "
                            "(x[mask].sum(), .mean(), .max()); otherwise use np.where(mask, x, other)")


@translates("take")
def np_take(em: Emitter, a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise"):
    no_out("np.take", out)
    x = to_value(em, a)
    if axis is None:
        x = reshape(em, x, (-1,))
        axis = 0
    return take(em, x, indices, normalize_axis(axis, abstract_of(x).ndim), mode)


def np_roll(em: Emitter, a: Any, shift: Any, axis: Any = None):
    x = to_value(em, a)
    av = abstract_of(x)
    if axis is None:
        return reshape(em, np_roll(em, reshape(em, x, (-1,)), shift, 0), av.shape)
    shifts, axes = np.broadcast_arrays(np.asarray(shift), np.asarray(axis))
    total: dict[int, int] = {}
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        k = normalize_axis(int(ax), av.ndim)
        total[k] = total.get(k, 0) + int(s)
    from .indexing import slice_axis  # late: indexing imports this module

    for ax, s in total.items():
        n = static_int(av.shape[ax], "the length of a rolled axis")
        s = s % n if n else 0
        if s:
            tail, head = slice_axis(em, x, ax, n - s, n, 1), slice_axis(em, x, ax, 0, n - s, 1)
            x = np_concatenate(em, [tail, head], ax)
    return x


# numpy functions that are not one core op (the row-named ones register with @translates)
DECOMPOSITIONS = {
    np.broadcast_arrays: np_broadcast_arrays, np.atleast_1d: np_atleast_1d, np.atleast_2d: np_atleast_2d,
    np.atleast_3d: np_atleast_3d, np.hstack: np_hstack, np.vstack: np_vstack,
    np.column_stack: np_column_stack, np.roll: np_roll,
}
