"""numpy indexing `x[key]` -> slice, flip, squeeze, take, expand_dims (and transpose when numpy moves
advanced-index dims to the front). A boolean mask selects (selection.py); assignment is assignment.py's."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ir import dtypes as irdt
from ir.records import record
from ir.symbols import current_decider, is_static

from .emitter import Emitter, abstract_of
from .numpy_shape import _bool_mask_error, expand_dims, flip, reshape, squeeze, take, transpose
from .numpy_ufuncs import apply_ufunc, emit
from .operands import FrontendError, UnsupportedError, to_value
from .selection import MaskedSelection
from .shapes import dim_le, same_dim, static_int

# --- slices ---------------------------------------------------------------------------------------

def _positive(start: int, stop: int, step: int, n: int) -> tuple[tuple[int, int, int], bool]:
    """A normalised slice (slice.indices) as a positive-step slice, plus whether to flip first."""
    length = len(range(start, stop, step))
    if length == 0:
        return (0, 0, 1), False
    if step > 0:
        return (start, start + (length - 1) * step + 1, step), False
    first = n - 1 - start
    return (first, first + (length - 1) * -step + 1, -step), True


def _clamp_bound(i: Any, n: Any, default: Any) -> Any:
    """Python's normalisation of one slice bound (step 1) on an axis of symbolic length n: each
    comparison is a guarded decision, so the bound stays an expression in n."""
    if i is None:
        return default
    i = operator.index(i)
    if i < 0:
        return n + i if dim_le(-i, n) else 0
    return i if dim_le(i, n) else n


def _symbolic_bounds(sl: slice, n: Any) -> tuple[Any, Any]:
    a = _clamp_bound(sl.start, n, 0)
    b = _clamp_bound(sl.stop, n, n)
    return (a, b) if dim_le(a, b) else (a, a)


def slice_dims(em: Emitter, x: Any, specs: list[slice]):
    """x[specs[0], specs[1], ...] for one Python slice per dim (steps of any sign)."""
    shape = abstract_of(x).shape
    starts, stops, steps, flips = [], [], [], []
    for axis, (sl, n) in enumerate(zip(specs, shape)):
        if sl == slice(None) or (sl.step in (None, 1) and sl.start in (None, 0) and sl.stop is None):
            starts.append(0), stops.append(n), steps.append(1)
            continue
        step = 1 if sl.step is None else operator.index(sl.step)
        if not is_static(n) and step > 0 and current_decider() is not None:  # length: ceil((b - a) / step)
            a, b = _symbolic_bounds(slice(sl.start, sl.stop), n)
            starts.append(a), stops.append(b), steps.append(step)
            continue
        size = static_int(n, f"the length of sliced axis {axis}")
        (a, b, c), flipped = _positive(*sl.indices(size), size)
        starts.append(a), stops.append(b), steps.append(c)
        if flipped:
            flips.append(axis)
    x = flip(em, x, tuple(flips))
    if all(same_dim(a, 0) and c == 1 and same_dim(b, n) for a, b, c, n in zip(starts, stops, steps, shape)):
        return x
    return emit(em, "slice", x, starts=tuple(starts), stops=tuple(stops), steps=tuple(steps))


def slice_axis(em: Emitter, x: Any, axis: int, start: int, stop: int, step: int = 1):
    specs = [slice(None)] * abstract_of(x).ndim
    specs[axis] = slice(start, stop, step)
    return slice_dims(em, x, specs)


# --- parsing the key ------------------------------------------------------------------------------

@record(slots=True)
class _Item:
    kind: str  # "slice", "int", "none", "array"
    value: Any = None


def _classify(em: Emitter, k: Any) -> _Item:
    if k is None:
        return _Item("none")
    if k is Ellipsis:
        return _Item("ellipsis")
    if isinstance(k, slice):
        return _Item("slice", k)
    if isinstance(k, (bool, np.bool_)):
        raise _bool_mask_error()
    if em.is_value(k):
        dt = abstract_of(k).dtype
        if dt.is_bool:
            raise _bool_mask_error()
        if not dt.is_int:
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        return _Item("int" if abstract_of(k).ndim == 0 and _is_concrete_int(k) else "array", k)
    if isinstance(k, (list, tuple, np.ndarray)):
        arr = np.asarray(k)
        if arr.dtype.kind == "b":
            raise _bool_mask_error()
        if arr.size and arr.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        return _Item("array", arr.astype(np.int64))
    try:
        return _Item("int", operator.index(k))
    except TypeError:
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer "
                         f"or boolean arrays are valid indices (got {type(k).__name__})") from None


def _is_concrete_int(k: Any) -> bool:
    """A 0-d numpy integer (a value of the eager emitter): an ordinary integer index."""
    return isinstance(k, (np.ndarray, np.generic)) and k.ndim == 0


def _expand(em: Emitter, key: Any, rank: int) -> list[_Item]:
    items = [_classify(em, k) for k in (key if isinstance(key, tuple) else (key,))]
    if sum(it.kind == "ellipsis" for it in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(it.kind in ("slice", "int", "array") for it in items)
    if used > rank:
        raise IndexError(f"too many indices for array: array is {rank}-dimensional, but {used} were indexed")
    fill = [_Item("slice", slice(None))] * (rank - used)
    if any(it.kind == "ellipsis" for it in items):
        i = next(i for i, it in enumerate(items) if it.kind == "ellipsis")
        return items[:i] + fill + items[i + 1:]
    return items + fill


# --- x[key] ---------------------------------------------------------------------------------------

def getitem(em: Emitter, x: Any, key: Any):
    """numpy basic indexing plus one integer-array index; a boolean mask over x's leading dims
    selects (a MaskedSelection when the mask is traced, a take of its indices when it is known)."""
    x = to_value(em, x)
    if is_mask(em, key):
        return _select(em, x, key)
    items = _expand(em, key, abstract_of(x).ndim)
    arrays = [i for i, it in enumerate(items) if it.kind == "array"]
    if len(arrays) > 1:
        return _index_arrays(em, x, items)
    specs, squeezed = _basic_specs(items, abstract_of(x).shape)
    x = squeeze(em, slice_dims(em, x, specs), squeezed)
    if arrays:
        x = _take_array(em, x, items, arrays[0])
    slots = _result_slots(em, items)
    x = expand_dims(em, x, _new_axes(slots))
    if arrays and not _advanced_adjacent(items):
        x = _array_dims_first(em, x, slots)
    return x


def _index_arrays(em: Emitter, x: Any, items: list[_Item]):
    """x[i, j, ...] with several integer arrays (and ints) on adjacent dims, the others sliced: the
    indexed dims merge into one, indexed by the flat index of the broadcast arrays, so the result's
    dims stand where the indexed ones did (numpy's rule for adjacent advanced indices). Negative
    indices wrap; one out of range fails the call with IndexError."""
    adv = [i for i, it in enumerate(items) if it.kind in ("int", "array")]
    if adv != list(range(adv[0], adv[-1] + 1)) or any(it.kind == "none" for it in items):
        raise UnsupportedError("indexing with several integer arrays is supported on adjacent dims without "
                               "None; index one axis at a time")
    x = slice_dims(em, x, [it.value if it.kind == "slice" else slice(None) for it in items])
    shape, a = abstract_of(x).shape, adv[0]
    dims = [static_int(shape[d], f"the length of indexed axis {d}") for d in adv]
    flat, ok = None, None
    for d, n in zip(adv, dims):
        v = items[d].value
        known = isinstance(v, (np.ndarray, list, int, np.integer))  # checked now as numpy does (and at run time)
        if known and np.size(v) and not (-n <= np.min(v) and np.max(v) < n):
            bad = np.asarray(v).ravel()[(np.asarray(v).ravel() < -n) | (np.asarray(v).ravel() >= n)][0]
            raise IndexError(f"index {bad} is out of bounds for axis {d} with size {n}")
        v = to_value(em, v, irdt.int64)
        v = emit(em, "where", apply_ufunc(em, np.less, v, 0), apply_ufunc(em, np.add, v, n), v)
        inside = apply_ufunc(em, np.logical_and, apply_ufunc(em, np.greater_equal, v, 0), apply_ufunc(em, np.less, v, n))
        ok = inside if ok is None else apply_ufunc(em, np.logical_and, ok, inside)
        flat = v if flat is None else apply_ufunc(em, np.add, apply_ufunc(em, np.multiply, flat, n), v)
    all_ok = emit(em, "all", ok, axes=tuple(range(abstract_of(ok).ndim)), keepdims=False) if abstract_of(ok).ndim else ok
    flat = emit(em, "require", flat, all_ok, status="INDEX_OUT_OF_RANGE")
    merged = reshape(em, x, tuple(shape[:a]) + (int(np.prod(dims)),) + tuple(shape[a + len(adv):]))
    return take(em, merged, flat, a)


def is_mask(em: Emitter, key: Any) -> bool:
    """A boolean array key: a value (traced, or an array the function captured, which is read when
    it runs), or a known list of bools."""
    if em.is_value(key):
        return abstract_of(key).dtype.is_bool and abstract_of(key).ndim > 0
    return isinstance(key, list) and np.asarray(key).dtype == np.bool_


def _select(em: Emitter, x: Any, mask: Any):
    """x[mask]: numpy requires the mask's shape to equal x's leading dims."""
    known = isinstance(mask, list)
    if known:
        mask = np.asarray(mask)
    shape, mshape = abstract_of(x).shape, mask.shape if known else abstract_of(mask).shape
    if len(mshape) > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but {len(mshape)} "
                         f"were indexed")
    for axis, (n, m) in enumerate(zip(shape, mshape)):
        if not same_dim(n, m):
            raise IndexError(f"boolean index did not match indexed array along axis {axis}; size of axis is {n} "
                             f"but size of corresponding boolean axis is {m}")
    if not known:
        return MaskedSelection(em, x, mask)
    k = mask.ndim  # a known mask: the flat indices of its True entries, taken from x's merged leading dims
    rows = reshape(em, x, (int(np.prod(mshape)),) + tuple(shape[k:])) if k != 1 else x
    return take(em, rows, np.flatnonzero(mask).astype(np.int64), 0)


def _basic_specs(items: list[_Item], shape: tuple) -> tuple[list[slice], tuple[int, ...]]:
    """One slice per input dim, and the dims an integer index removes."""
    specs, squeezed, dim = [], [], 0
    for it in items:
        if it.kind == "none":
            continue
        if it.kind == "int":
            n = static_int(shape[dim], f"the length of indexed axis {dim}")
            i = int(it.value)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
            specs.append(slice(i % n, i % n + 1, 1))
            squeezed.append(dim)
        else:
            specs.append(it.value if it.kind == "slice" else slice(None))
        dim += 1
    return specs, tuple(squeezed)


def basic_region(em: Emitter, x: Any, key: Any) -> list[tuple[Any, Any, int, bool]] | None:
    """The elements a basic key (ints, slices, None, ...) reaches, per dim of x: range(start, stop,
    step) with a positive step, and whether the key walks the dim backwards; None for keys with
    arrays, and for symbolic dims sliced with a step other than 1."""
    items = _expand(em, key, abstract_of(x).ndim)
    if any(it.kind == "array" for it in items):
        return None
    specs, squeezed = _basic_specs(items, abstract_of(x).shape)
    out = []
    for sl, n in zip(specs, abstract_of(x).shape):
        step = 1 if sl.step is None else operator.index(sl.step)
        if is_static(n):
            (a, b, c), flipped = _positive(*sl.indices(n), n)
            if flipped:  # (a, b, c) counts from the end: the same elements from the start
                last = a + (len(range(a, b, c)) - 1) * c
                a, b = n - 1 - last, n - a
            out.append((a, b, c, flipped))
        elif step == 1 and current_decider() is not None:
            a, b = _symbolic_bounds(slice(sl.start, sl.stop), n)
            out.append((a, b, 1, False))
        else:
            return None
    return out


def _result_slots(em: Emitter, items: list[_Item]) -> list[tuple[str, int]]:
    """The result's dims grouped by the key entry that makes them: (kind, number of dims)."""
    slots = []
    for it in items:
        if it.kind == "array":
            rank = abstract_of(it.value).ndim if em.is_value(it.value) else np.ndim(it.value)
            slots.append(("array", rank))
        elif it.kind in ("slice", "none"):
            slots.append((it.kind, 1))
    return slots


def _new_axes(slots: list[tuple[str, int]]) -> tuple[int, ...]:
    axes, pos = [], 0
    for kind, width in slots:
        if kind == "none":
            axes.append(pos)
        pos += width
    return tuple(axes)


def _take_array(em: Emitter, x: Any, items: list[_Item], k: int):
    axis = sum(it.kind in ("slice", "array") for it in items[:k])
    return take(em, x, items[k].value, axis)


def _advanced_adjacent(items: list[_Item]) -> bool:
    """numpy keeps advanced-index dims in place only when the int/array indices are contiguous."""
    pos = [i for i, it in enumerate(items) if it.kind in ("int", "array")]
    return pos == list(range(pos[0], pos[-1] + 1))


def _array_dims_first(em: Emitter, x: Any, slots: list[tuple[str, int]]):
    start = 0
    for kind, width in slots:
        if kind == "array":
            break
        start += width
    width = next(w for k, w in slots if k == "array")
    n = abstract_of(x).ndim
    moved = list(range(start, start + width))
    return transpose(em, x, moved + [i for i in range(n) if i not in moved])
