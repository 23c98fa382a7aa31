"""Sorting and searching: np.sort, np.argsort, np.searchsorted and np.take_along_axis as core ops
(registered against their rows); np.partition / np.argpartition as the partition rows (with the
selection kernels, numpy_selection.py; complex lanes take the sort), np.lexsort (stable sorts by
each key) and np.sort_complex by decomposition.

Every sort kind gives the stable result (a valid answer for each kind numpy accepts); `kind` and
`stable` are still checked as numpy checks them. `order=` (structured arrays) is refused.
np.put_along_axis writes into its argument, which traced code cannot do: it is refused
(aot/frontend/refusals.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ir import dtypes as irdt

from .emitter import Emitter, abstract_of
from .numpy_selection import partition
from .numpy_shape import reshape, take
from .numpy_ufuncs import emit
from .operands import AxisError, UnsupportedError, cast, normalize_axis, to_dtype, to_value
from .registry import translates
from .shapes import dim_equals, dim_le, fmt_shape, prod


# --- arguments ----------------------------------------------------------------------------------
def check_sort_kind(kind: Any, stable: Any) -> None:
    """numpy's checks of `kind` (any spelling whose first letter is q, m, h or s) and `stable`."""
    if stable is not None and kind is not None:
        raise ValueError("`kind` and keyword parameters can't be provided at the same time. "
                         "Use only one of them.")
    if kind is None:
        return
    if not isinstance(kind, str):
        raise TypeError(f"sort kind must be str, not {type(kind).__name__}")
    if kind[:1].lower() not in ("q", "m", "h", "s"):
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")


def _no_order(fname: str, order: Any) -> None:
    if order is not None:
        raise UnsupportedError(f"{fname}: `order` (field names of structured arrays) is not supported in "
                               f"traced code; arrays there have numeric dtypes")


def along_axis(em: Emitter, a: Any, axis: Any, zero_d_as_1d: bool = False) -> tuple[Any, int]:
    """(x, normalised axis): axis=None sorts the flattened array, as numpy; numpy's argsort and
    argpartition take a 0-d array as a 1-d one (`zero_d_as_1d`), its sort and partition refuse it."""
    x = to_value(em, a)
    ndim = abstract_of(x).ndim
    if axis is None or (ndim == 0 and zero_d_as_1d):
        x, ndim = reshape(em, x, (-1,)), 1
        axis = 0 if axis is None else axis
    if ndim == 0:
        raise AxisError(axis, 0)
    return x, normalize_axis(axis, ndim)


def sort(em: Emitter, x: Any, axis: int):
    """x sorted along a normalised axis (the stable order); a length-1 axis is x itself."""
    if dim_equals(abstract_of(x).shape[axis], 1):
        return x
    return emit(em, "sort", x, axis=axis)


def argsort(em: Emitter, x: Any, axis: int):
    return emit(em, "argsort", x, axis=axis)


# --- sort / argsort -----------------------------------------------------------------------------
@translates("sort")
def np_sort(em: Emitter, a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None):
    check_sort_kind(kind, stable)
    _no_order("np.sort", order)
    x, ax = along_axis(em, a, axis)
    return sort(em, x, ax)


@translates("argsort")
def np_argsort(em: Emitter, a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
               stable: Any = None):
    check_sort_kind(kind, stable)
    _no_order("np.argsort", order)
    x, ax = along_axis(em, a, axis, zero_d_as_1d=True)
    return argsort(em, x, ax)


def np_sort_complex(em: Emitter, a: Any):
    """np.sort_complex: sorted along the last axis, as complex (numpy's 'F' for int8/int16, which
    the dialect lacks; everything else it holds becomes complex128 unless already complex)."""
    x = to_value(em, a)
    dt = abstract_of(x).dtype
    r = sort(em, x, abstract_of(x).ndim - 1) if abstract_of(x).ndim else x
    return r if dt.is_complex else cast(em, r, irdt.complex128)


# --- partition ----------------------------------------------------------------------------------
def kth_indices(kth: Any, n: Any) -> list[int]:
    """numpy's checks of a partition's kth against an axis of length n (symbolic n: guarded)."""
    if hasattr(kth, "dtype") and not isinstance(kth, (np.ndarray, np.generic)):
        raise UnsupportedError("np.partition: a traced kth is not supported (its values decide the checks); "
                               "pass Python ints")
    arr = np.asarray(kth)
    if arr.dtype.kind == "b":
        raise ValueError("Booleans unacceptable as partition index")
    if arr.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    if arr.ndim > 1:
        raise ValueError("object too deep for desired array")
    if dim_equals(n, 0):
        return [int(k) for k in arr.ravel()]
    out = []
    for k in (int(k) for k in arr.ravel()):
        kk = k + n if k < 0 else k
        if not (dim_le(0, kk) and dim_le(kk + 1, n)):
            raise ValueError(f"kth(={kk}) out of bounds ({n})")
        out.append(k)
    return out


def _check_select_kind(kind: Any) -> None:
    if not isinstance(kind, str):
        raise TypeError(f"select kind must be str, not {type(kind).__name__}")
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")


@translates("partition")
def np_partition(em: Emitter, a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None):
    _check_select_kind(kind)
    _no_order("np.partition", order)
    x, ax = along_axis(em, a, axis)
    return partition(em, x, ax, kth_indices(kth, abstract_of(x).shape[ax]), arg=False)


@translates("argpartition")
def np_argpartition(em: Emitter, a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
                    order: Any = None):
    _check_select_kind(kind)
    _no_order("np.argpartition", order)
    x, ax = along_axis(em, a, axis, zero_d_as_1d=True)
    return partition(em, x, ax, kth_indices(kth, abstract_of(x).shape[ax]), arg=True)


# --- lexsort ------------------------------------------------------------------------------------
def np_lexsort(em: Emitter, keys: Any, axis: Any = -1):
    """Indices sorting by the last key, ties by the ones before: stable sorts by each key in turn,
    the first key first (each later sort of the keys gathered in the order so far)."""
    if em.is_value(keys) and abstract_of(keys).ndim >= 2:
        ks = [take(em, keys, [i], 0) for i in range(abstract_of(keys).shape[0])]
        ks = [reshape(em, k, abstract_of(k).shape[1:]) for k in ks]
    elif em.is_value(keys) or not isinstance(keys, (list, tuple)):
        raise UnsupportedError("np.lexsort: pass the keys as a tuple of arrays or a 2-D (or higher) array")
    else:
        ks = [to_value(em, k) for k in keys]
    if not ks:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = abstract_of(ks[0]).shape
    if any(len(abstract_of(k).shape) != len(shape) or not all(
            dim_le(a, b) and dim_le(b, a) for a, b in zip(abstract_of(k).shape, shape)) for k in ks):
        raise ValueError("all keys need to be the same shape")
    if not shape:
        raise UnsupportedError("np.lexsort of 0-d keys is not supported in traced code")
    ax = normalize_axis(axis, len(shape))
    idx = argsort(em, ks[0], ax)
    for k in ks[1:]:
        order = argsort(em, emit(em, "take_along_axis", k, idx, axis=ax), ax)
        idx = emit(em, "take_along_axis", idx, order, axis=ax)
    return idx


# --- searchsorted -------------------------------------------------------------------------------
def _compare_dtype(em: Emitter, a: Any, v: Any):
    """numpy compares in the dtype holding both (a Python scalar counts as its default dtype)."""
    vdt = abstract_of(v).dtype if em.is_value(v) else to_dtype(np.asarray(v).dtype, "v")
    return irdt.promote(abstract_of(a).dtype, vdt)


@translates("searchsorted")
def np_searchsorted(em: Emitter, a: Any, v: Any, side: str = "left", sorter: Any = None):
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    x = to_value(em, a)
    ndim = abstract_of(x).ndim
    if ndim != 1:
        raise ValueError("object too deep for desired array" if ndim > 1 else
                         "object of too small depth for desired array")
    if sorter is not None:
        s = to_value(em, sorter)
        sv = abstract_of(s)
        if not sv.dtype.is_int:
            raise TypeError("sorter must only contain integers")
        if sv.ndim != 1 or not dim_le(prod(sv.shape), abstract_of(x).shape[0]) \
                or not dim_le(abstract_of(x).shape[0], prod(sv.shape)):
            raise ValueError("sorter.size must equal a.size")
        x = take(em, x, s, 0)
    dt = _compare_dtype(em, x, v)
    return emit(em, "searchsorted", cast(em, x, dt), to_value(em, v, dt), side=side)


# --- take_along_axis ----------------------------------------------------------------------------
@translates("take_along_axis")
def np_take_along_axis(em: Emitter, arr: Any, indices: Any, axis: Any = -1):
    x, idx = to_value(em, arr), to_value(em, indices)
    iv = abstract_of(idx)
    if not iv.dtype.is_int:
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        if iv.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        x, ax = reshape(em, x, (-1,)), 0
    else:
        if abstract_of(x).ndim != iv.ndim:
            raise ValueError("`indices` and `arr` must have the same number of dimensions")
        ax = normalize_axis(axis, iv.ndim)
    _check_along_shapes(abstract_of(x).shape, iv.shape, ax)
    return emit(em, "take_along_axis", x, idx, axis=ax)


def _check_along_shapes(xs: tuple, ids: tuple, axis: int) -> None:
    """numpy's fancy-index broadcast error (IndexError) when the other dims do not broadcast."""
    for k, (a, b) in enumerate(zip(xs, ids)):
        if k != axis and not (dim_equals(a, 1) or dim_equals(b, 1) or dim_le(a, b) and dim_le(b, a)):
            ones = ",".join("1" if j != k else str(a) for j in range(len(xs)))
            raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes "
                             f"({ones}) {fmt_shape(ids)} ")


# numpy functions that are not one core op (the row-named ones register with @translates)
DECOMPOSITIONS = {np.sort_complex: np_sort_complex, np.lexsort: np_lexsort}
