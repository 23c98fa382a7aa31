"""In-place updates: numpy's `x[key] = v`, np.put, np.place, np.putmask, np.put_along_axis,
np.fill_diagonal, np.copyto, ufunc.at and the mutating methods (fill, sort, partition, put).

Each computes the array's new value as a value, then asks the emitter to rebind the array object to
it (`em.assign(target, new)`; the capture tracer also updates the arrays that are numpy views of
it, aot/compiler/capture.py). The positions an update reaches are flat indices of x: the key applied
to an iota of x's shape, so every key numpy's indexing takes is the one indexing translation's, and
`scatter` (aot/ops/updates.py) writes the values there. A boolean mask is a `where`.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ir import dtypes as irdt
from ir.opdef import OPDEFS
from ir.symbols import dims_equal, is_static

from .emitter import Emitter, abstract_of
from .indexing import basic_region, getitem, is_mask
from .numpy_scans import combine_kind, scan
from .numpy_shape import broadcast_to, flip, reshape, take
from .numpy_sorting import np_partition, np_sort, np_take_along_axis
from .numpy_ufuncs import UFUNC_CORE, emit
from .operands import UnsupportedError, cast, constant, is_python_scalar, to_value
from .selection import MaskedSelection
from .shapes import dim_equals, prod, same_dim, static_int


def mutate(em: Emitter, target: Any, new: Any) -> None:
    """Rebind the array object `target` to the value `new` (its dtype and shape)."""
    assign = getattr(em, "assign", None)
    if assign is None or not em.is_value(target):
        raise UnsupportedError("in-place updates of arrays are supported on the arrays of a compiled function "
                               "(aot.compile); here build a new array instead (np.where, np.concatenate)")
    assign(target, new)


def values_as(em: Emitter, v: Any, dt: irdt.DType):
    """v converted as numpy converts a value assigned into an array of dtype `dt`: Python scalars
    through dt's scalar type (its range and NaN checks), arrays by an unsafe cast (a complex one
    into a real array keeps the real part, with numpy's ComplexWarning)."""
    if is_python_scalar(v) or isinstance(v, np.generic):
        return constant(em, dt.numpy.type(v), dt)
    v = to_value(em, np.asarray(v) if isinstance(v, (list, tuple)) else v)
    if abstract_of(v).dtype.is_complex and not dt.is_complex:
        warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning,
                      stacklevel=4)
        v = emit(em, "real", v)
    return cast(em, v, dt)


def flat_positions(em: Emitter, x: Any, key: Any):
    """The flat index in x of each element of x[key] (int64, x[key]'s shape)."""
    shape = abstract_of(x).shape
    if len(shape) == 1 and _int_array(em, key):  # x[i] of a 1-D x: i itself (scatter wraps and checks it)
        return cast(em, to_value(em, key), irdt.int64)
    iota = emit(em, "iota", n=prod(shape), dtype=irdt.int64)
    return getitem(em, reshape(em, iota, shape), key)


def _int_array(em: Emitter, key: Any) -> bool:
    if em.is_value(key):
        return abstract_of(key).dtype.is_int
    return isinstance(key, (list, np.ndarray)) and np.asarray(key).dtype.kind in "iu" and np.ndim(key) > 0


def scattered(em: Emitter, x: Any, pos: Any, upd: Any, kind: str | None = None, unique: bool = False):
    """x with upd (broadcast to pos's shape) written (or combined with `kind`) at flat positions pos."""
    shape = abstract_of(x).shape
    upd = broadcast_to(em, upd, abstract_of(pos).shape)
    flat = emit(em, "scatter", reshape(em, x, (-1,)), reshape(em, pos, (-1,)), reshape(em, upd, (-1,)),
                kind=kind, unique=unique)
    return reshape(em, flat, shape)


def _basic(key: Any) -> bool:
    """Ints, slices, None and Ellipsis only: the positions are distinct."""
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer)) and not isinstance(k, bool)
               for k in keys)


def _everything(key: Any) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is Ellipsis or (isinstance(k, slice) and k == slice(None)) for k in keys)


# --- x[key] = v --------------------------------------------------------------------------------------

def assigned(em: Emitter, x: Any, key: Any, value: Any):
    """The value of x after numpy's `x[key] = value`."""
    av = abstract_of(x)
    if isinstance(value, MaskedSelection):
        return _selected(em, x, key, value)
    v = values_as(em, value, av.dtype)
    if is_mask(em, key):
        return _masked(em, x, key, v)
    if _everything(key) and not isinstance(key, list):
        return broadcast_to(em, _fit(em, v, av.shape), av.shape)
    region = basic_region(em, x, key)
    if region is not None:
        placed = _in_region(em, x, key, region, v)
        if placed is not None:
            return placed
    pos = flat_positions(em, x, key)
    return scattered(em, x, pos, _fit(em, v, abstract_of(pos).shape), unique=_basic(key))


def _in_region(em: Emitter, x: Any, key: Any, region: list, v: Any):
    """x[key] = v for a basic key as one elementwise where: the region's mask from per-dim iotas,
    v padded out to x's shape (unit steps) or v a scalar; None where that does not apply (a
    strided region with an array value, symbolic pad widths: the scatter does those)."""
    shape = abstract_of(x).shape
    view = abstract_of(getitem(em, x, key)).shape
    scalar = abstract_of(v).ndim == 0
    widths = [(a, n - b) for (a, b, _, _), n in zip(region, shape)]
    if not scalar and (any(c != 1 for _, _, c, _ in region)
                       or not all(is_static(w) for pair in widths for w in pair)):
        return None
    mask = None
    for d, ((a, b, c, _), n) in enumerate(zip(region, shape)):
        if same_dim(a, 0) and same_dim(b, n) and c == 1:
            continue
        i = emit(em, "iota", n=n, dtype=irdt.int64)
        m = emit(em, "logical_and", emit(em, "ge", i, _size(em, a)), emit(em, "lt", i, _size(em, b)))
        if c != 1:
            m = emit(em, "logical_and", m, emit(em, "eq", emit(em, "mod", emit(em, "sub", i, _size(em, a)),
                                                              _size(em, c)), _size(em, 0)))
        m = reshape(em, m, tuple(n if k == d else 1 for k in range(len(shape))))
        mask = m if mask is None else emit(em, "logical_and", mask, m)
    if scalar:
        values = v
    else:
        lengths = tuple(b - a for a, b, _, _ in region)
        values = reshape(em, _fit(em, v, view), lengths)
        values = flip(em, values, tuple(d for d, r in enumerate(region) if r[3]))
        values = emit(em, "pad", values, pad_width=tuple(widths), value=0)
    if mask is None:
        return broadcast_to(em, values, shape)
    return emit(em, "where", mask, values, x)


def _selected(em: Emitter, x: Any, key: Any, sel: MaskedSelection):
    """y[m1] = z[m2]: the i-th selected entry of z lands on the i-th True of m1 (found by searching
    the running count of m2 for i); the counts must agree (numpy's ValueError otherwise)."""
    if not is_mask(em, key):
        raise UnsupportedError("assigning x[mask] (a data-dependent number of values) is supported into a "
                               "boolean-mask key, y[m] = z[m]; use np.where(m, z, y)")
    av = abstract_of(x)
    m1 = to_value(em, np.asarray(key) if isinstance(key, list) else key)
    k1, k2 = abstract_of(m1).ndim, abstract_of(sel.mask).ndim
    rest1, rest2 = tuple(av.shape[k1:]), tuple(abstract_of(sel.x).shape[k2:])
    if len(rest1) != len(rest2) or not all(dims_equal(a, b) for a, b in zip(rest1, rest2)):
        raise ValueError(f"could not broadcast the selected rows of shape {rest2} into rows of shape {rest1}")
    z = values_as(em, sel.x, av.dtype)
    wide = reshape(em, m1, tuple(abstract_of(m1).shape) + (1,) * len(rest1))
    if key is sel.mask or getattr(key, "node", 0) is getattr(sel.mask, "node", 1):
        return emit(em, "where", wide, z, x)
    f1, f2 = reshape(em, m1, (-1,)), reshape(em, sel.mask, (-1,))
    c1, c2 = scan(em, f1, "sum", 0, irdt.int64), scan(em, f2, "sum", 0, irdt.int64)
    n1 = emit(em, "sum", cast(em, f1, irdt.int64), axes=(0,))
    n2 = emit(em, "sum", cast(em, f2, irdt.int64), axes=(0,))
    rows = reshape(em, emit(em, "require", z, emit(em, "eq", n1, n2), status="MASK_ASSIGN_COUNT"),
                   (abstract_of(f2).shape[0], -1))
    at = emit(em, "searchsorted", c2, c1, side="left")  # row of z holding the c1[i]-th selected entry
    got = reshape(em, take(em, rows, at, 0, mode="clip"), tuple(av.shape))
    return emit(em, "where", wide, got, x)


def _fit(em: Emitter, v: Any, shape: tuple):
    """v broadcast to the assigned region's shape, with numpy's error (leading 1s of v may go)."""
    vs = abstract_of(v).shape
    while len(vs) > len(shape) and dim_equals(vs[0], 1):
        v = reshape(em, v, vs[1:])
        vs = vs[1:]
    if len(vs) > len(shape) or any(not dim_equals(a, 1) and not dims_equal(a, b)
                                   for a, b in zip(vs[::-1], shape[::-1])):
        raise ValueError(f"could not broadcast input array from shape {tuple(vs)} into shape {tuple(shape)}")
    return broadcast_to(em, v, shape)


def _masked(em: Emitter, x: Any, mask: Any, v: Any):
    """x[mask] = v: a where over the mask (v a scalar or one row for every selected entry), or, for one
    value per selected entry, the values gathered at the running count of the mask."""
    mask = to_value(em, np.asarray(mask) if isinstance(mask, list) else mask)
    shape, mshape = abstract_of(x).shape, abstract_of(mask).shape
    if len(mshape) > len(shape) or any(not dims_equal(n, m) for n, m in zip(shape, mshape)):
        raise IndexError(f"boolean index did not match indexed array: array shape {tuple(shape)}, mask shape "
                         f"{tuple(mshape)}")
    rest = tuple(shape[len(mshape):])
    wide = reshape(em, mask, tuple(mshape) + (1,) * len(rest))
    vs = abstract_of(v).shape
    if len(vs) <= len(rest) or dim_equals(vs[0], 1):
        return emit(em, "where", wide, broadcast_to(em, _fit(em, v, (1,) + rest), tuple(shape)), x)
    if len(vs) != len(rest) + 1:
        raise ValueError(f"could not broadcast input array from shape {tuple(vs)} into the selection's shape "
                         f"(count,) + {rest}")
    c = vs[0]
    v = _fit(em, v, (c,) + rest)
    flat = reshape(em, mask, (-1,))
    total = emit(em, "sum", cast(em, flat, irdt.int64), axes=(0,))
    ok = emit(em, "eq", total, _size(em, c))
    if dim_equals(c, 0):
        return emit(em, "require", x, ok, status="MASK_ASSIGN_COUNT")
    rows = reshape(em, emit(em, "require", v, ok, status="MASK_ASSIGN_COUNT"), (c, -1))
    count = scan(em, flat, "sum", 0, irdt.int64)  # entry i of the selection takes row count[i] - 1
    at = emit(em, "maximum", emit(em, "sub", count, _size(em, 1)), _size(em, 0))
    got = reshape(em, take(em, rows, at, 0, mode="clip"), tuple(shape))
    return emit(em, "where", wide, got, x)


def _size(em: Emitter, n: Any):
    """A size (int or symbolic dim) as a 0-d int64 value."""
    return constant(em, n, irdt.int64) if isinstance(n, int) else cast(em, to_value(em, n), irdt.int64)


def setitem(em: Emitter, x: Any, key: Any, value: Any) -> None:
    """numpy's `x[key] = value` on the array object x."""
    mutate(em, x, assigned(em, to_value(em, x), key, value))


def fresh(em: Emitter, x: Any):
    """A new array equal to x (numpy's copy): a value of its own, so updating one leaves the other."""
    x = to_value(em, x)
    return em.emit("cast", [x], {"dtype": abstract_of(x).dtype})


def in_place(em: Emitter, op: str, x: Any, result: Any):
    """`x op= y` given `result` = x op y: numpy's ufunc(x, y, out=x), which casts with 'same_kind' and
    keeps x's shape. Emitters without in-place updates rebind the name to the result instead."""
    if getattr(em, "assign", None) is None or not em.is_value(x):
        return result
    xa, ra = abstract_of(x), abstract_of(result)
    if not np.can_cast(ra.dtype.numpy, xa.dtype.numpy, "same_kind"):
        raise TypeError(f"Cannot cast ufunc {op!r} output from {ra.dtype.numpy!r} to {xa.dtype.numpy!r} with "
                        f"casting rule 'same_kind'")
    if len(ra.shape) != len(xa.shape) or not all(dims_equal(a, b) for a, b in zip(ra.shape, xa.shape)):
        raise ValueError(f"non-broadcastable output operand with shape {tuple(xa.shape)} doesn't match the "
                         f"broadcast shape {tuple(ra.shape)}")
    mutate(em, x, cast(em, result, xa.dtype))
    return x


# --- numpy's updating functions ----------------------------------------------------------------------

def _flat_values(em: Emitter, values: Any, dt: irdt.DType, m: Any):
    """values flattened and repeated (or cut) to length m, as np.put and np.place cycle them."""
    v = reshape(em, values_as(em, values, dt), (-1,))
    k = abstract_of(v).shape[0]
    if same_dim(k, m):
        return v
    if same_dim(k, 1):
        return broadcast_to(em, v, (m,))
    iota = emit(em, "iota", n=m, dtype=irdt.int64)
    return take(em, v, emit(em, "mod", iota, _size(em, k)), 0)


def _target(em: Emitter, a: Any, fname: str):
    if not em.is_value(a):
        raise TypeError(f"{fname}: argument 1 must be an array, got {type(a).__name__}")
    return a


def np_put(em: Emitter, a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    _target(em, a, "np.put")
    av = abstract_of(a)
    n = prod(av.shape)
    idx = reshape(em, cast(em, to_value(em, ind), irdt.int64), (-1,))
    m = abstract_of(idx).shape[0]
    vv = values_as(em, v, av.dtype)
    if dim_equals(prod(abstract_of(vv).shape), 0):
        return  # numpy: nothing to put
    if mode == "wrap":
        idx = emit(em, "mod", idx, _size(em, n))
    elif mode == "clip":
        idx = emit(em, "clip", idx, _size(em, 0), emit(em, "sub", _size(em, n), _size(em, 1)))
    elif mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    mutate(em, a, scattered(em, a, idx, _flat_values(em, vv, av.dtype, m)))
    return


def _flat_mask(em: Emitter, a: Any, mask: Any, fname: str):
    """(a's abstract type, mask flattened as bools) for np.place and np.putmask (mask: a's size)."""
    _target(em, a, f"np.{fname}")
    av, mask = abstract_of(a), to_value(em, mask)
    if not dims_equal(prod(abstract_of(mask).shape), prod(av.shape)):
        raise ValueError(f"{fname}: mask and data must be the same size")
    bools = mask if abstract_of(mask).dtype.is_bool else emit(em, "ne", mask, constant(em, 0, abstract_of(mask).dtype))
    return av, reshape(em, bools, (-1,))


def np_place(em: Emitter, arr: Any, mask: Any, vals: Any) -> None:
    av, flat = _flat_mask(em, arr, mask, "place")
    v = reshape(em, values_as(em, vals, av.dtype), (-1,))
    k = abstract_of(v).shape[0]
    if dim_equals(k, 0):
        none = emit(em, "logical_not", emit(em, "any", flat, axes=(0,)))
        mutate(em, arr, emit(em, "require", arr, none, status="PLACE_FROM_EMPTY"))
        return
    count = scan(em, flat, "sum", 0, irdt.int64)  # the i-th True entry takes vals[(i - 1) % len(vals)]
    at = emit(em, "mod", emit(em, "sub", count, _size(em, 1)), _size(em, k))
    got = take(em, v, at, 0, mode="clip")
    new = emit(em, "where", flat, got, reshape(em, arr, (-1,)))
    mutate(em, arr, reshape(em, new, av.shape))
    return


def np_putmask(em: Emitter, a: Any, mask: Any, values: Any) -> None:
    av, flat = _flat_mask(em, a, mask, "putmask")
    n = prod(av.shape)
    v = reshape(em, values_as(em, values, av.dtype), (-1,))
    if dim_equals(abstract_of(v).shape[0], 0):
        return
    new = emit(em, "where", flat, _flat_values(em, v, av.dtype, n),
               reshape(em, a, (-1,)))
    mutate(em, a, reshape(em, new, av.shape))
    return


def np_put_along_axis(em: Emitter, arr: Any, indices: Any, values: Any, axis: Any) -> None:
    _target(em, arr, "np.put_along_axis")
    av = abstract_of(arr)
    iota = reshape(em, emit(em, "iota", n=prod(av.shape), dtype=irdt.int64), av.shape)
    pos = np_take_along_axis(em, iota, indices, axis)
    mutate(em, arr, scattered(em, arr, pos, _fit(em, values_as(em, values, av.dtype), abstract_of(pos).shape)))


def np_fill_diagonal(em: Emitter, a: Any, val: Any, wrap: bool = False) -> None:
    _target(em, a, "np.fill_diagonal")
    av = abstract_of(a)
    if av.ndim < 2:
        raise ValueError("array must be at least 2-d")
    shape = [static_int(d, "np.fill_diagonal's array dims") for d in av.shape]
    end = None
    if av.ndim == 2:
        step = shape[1] + 1
        if not wrap:
            end = shape[1] * shape[1]
    else:
        if len(set(shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(shape[:-1]).sum())
    pos = np.arange(int(np.prod(shape)))[:end:step]
    v = _flat_values(em, val, av.dtype, len(pos))
    mutate(em, a, scattered(em, a, constant(em, pos, irdt.int64), v, unique=True))


def np_copyto(em: Emitter, dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    _target(em, dst, "np.copyto")
    dv = abstract_of(dst)
    sdt = irdt.from_numpy(np.asarray(src).dtype) if not em.is_value(src) else abstract_of(src).dtype
    if not (is_python_scalar(src) and casting == "same_kind" and _weak_fits(src, dv.dtype)) \
            and not np.can_cast(sdt.numpy, dv.dtype.numpy, casting):
        raise TypeError(f"Cannot cast array data from {sdt.numpy!r} to {dv.dtype.numpy!r} according to the rule "
                        f"{casting!r}")
    new = broadcast_to(em, _fit(em, values_as(em, src, dv.dtype), dv.shape), dv.shape)
    if where is not True:
        new = emit(em, "where", cast(em, to_value(em, where), irdt.bool_), new, dst)
    mutate(em, dst, new)


def _weak_fits(v: Any, dt: irdt.DType) -> bool:
    """A Python scalar's kind fits dt under 'same_kind' (numpy 2 treats Python scalars as weak)."""
    kind = "b" if isinstance(v, bool) else "i" if isinstance(v, int) else "f" if isinstance(v, float) else "c"
    return "bifc".index(kind) <= "bifc".index(dt.kind if dt.kind in "bifc" else "i")


def ufunc_at(em: Emitter, ufunc: np.ufunc, a: Any, indices: Any, b: Any = None) -> None:
    """np.<ufunc>.at(a, indices, b): unbuffered, so every repeated index combines again."""
    name = f"np.{ufunc.__name__}.at"
    _target(em, a, name)
    if ufunc.nout != 1 or ufunc.nin > 2:
        raise UnsupportedError(f"{name}: ufuncs with several results have no .at in traced code")
    av = abstract_of(a)
    pos = flat_positions(em, a, indices)
    if ufunc.nin == 1:
        if b is not None:
            raise ValueError(f"{name}: second operand provided when ufunc is unary")
        return _unary_at(em, ufunc, a, pos)
    if b is None:
        raise TypeError(f"{name}: second operand needed for ufunc")
    kind = combine_kind(ufunc, av.dtype)
    upd = _fit(em, values_as(em, b, av.dtype), abstract_of(pos).shape)
    mutate(em, a, scattered(em, a, pos, upd, kind=kind))


def _unary_at(em: Emitter, ufunc: np.ufunc, a: Any, pos: Any) -> None:
    """np.<unary>.at(a, indices): a[j] = ufunc(a[j]) once per occurrence of j."""
    dt = abstract_of(a).dtype
    row = UFUNC_CORE.get(ufunc)
    if row is None:
        raise UnsupportedError(f"np.{ufunc.__name__}.at: np.{ufunc.__name__} is not one core op in traced code")
    out = OPDEFS[row].dtype_rule([dt])
    if out != dt:
        raise TypeError(f"Cannot cast ufunc '{ufunc.__name__}' output from {out.numpy!r} to {dt.numpy!r} with "
                        f"casting rule 'same_kind'")
    mutate(em, a, scattered(em, a, pos, constant(em, 0, dt), kind=row))


# --- mutating ndarray methods ----------------------------------------------------------------------------

def method_fill(em: Emitter, x: Any, value: Any) -> None:
    setitem(em, x, Ellipsis, value)


def method_sort(em: Emitter, x: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None):
    mutate(em, x, np_sort(em, x, axis, kind, order, stable=stable))


def method_partition(em: Emitter, x: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None):
    mutate(em, x, np_partition(em, x, kth, axis, kind, order))


def method_put(em: Emitter, x: Any, indices: Any, values: Any, mode: str = "raise") -> None:
    np_put(em, x, indices, values, mode)


DECOMPOSITIONS = {
    np.put: np_put, np.place: np_place, np.putmask: np_putmask, np.put_along_axis: np_put_along_axis,
    np.fill_diagonal: np_fill_diagonal, np.copyto: np_copyto,
}
