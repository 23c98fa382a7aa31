"""Array construction and comparison functions of the everyday numpy namespace, by decomposition into
layout, elementwise and reduction ops (numpy's own formulas, numpy/lib/*_impl.py and
numpy/_core/numeric.py): np.tile, np.repeat, np.meshgrid, np.kron, np.diag, np.diagflat, np.tri,
np.trace, np.cross, np.nan_to_num, np.isposinf/np.isneginf, np.isreal/np.iscomplex, np.allclose,
np.array_equal and np.array_equiv. np.diagonal is the diagonal row's (a view).

np.allclose, np.array_equal and np.array_equiv return a 0-d bool array where numpy returns a Python
bool computed from the data (a Python bool when the answer is known from the shapes alone)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ir import dtypes as irdt

from . import numpy_reductions as red
from .emitter import Emitter, abstract_of
from .numpy_shape import broadcast_to, expand_dims, np_broadcast_arrays, reshape, transpose
from .numpy_ufuncs import apply_ufunc, emit, np_isclose
from .operands import (
    AxisError,
    UnsupportedError,
    cast,
    constant,
    full_like,
    index_arg,
    is_python_scalar,
    normalize_axis,
    scalar_like,
    to_dtype,
    to_value,
)
from .registry import translates
from .shapes import broadcast_shapes, dims_equal, static_int
from .static_args import is_traced


def _int_tuple(reps: Any, what: str) -> tuple[int, ...]:
    try:
        items = tuple(reps)
    except TypeError:
        items = (reps,)
    return tuple(index_arg(r, what) for r in items)


# --- tile / repeat -------------------------------------------------------------------------------------

def np_tile(em: Emitter, A: Any, reps: Any):
    """Each dim of A interleaved with its repeat count, broadcast and merged: (t0, s0, t1, s1, ...)."""
    x = to_value(em, A)
    tup = _int_tuple(reps, "reps")
    if any(t < 0 for t in tup):
        raise ValueError("negative dimensions are not allowed")
    shape = tuple(abstract_of(x).shape)
    d = len(tup)
    if d > len(shape):
        shape = (1,) * (d - len(shape)) + shape
        x = reshape(em, x, shape)
    tup = (1,) * (len(shape) - d) + tup
    if all(t == 1 for t in tup):
        return x
    inter = tuple(v for s in shape for v in (1, s))
    wide = tuple(v for t, s in zip(tup, shape) for v in (t, s))
    y = broadcast_to(em, reshape(em, x, inter), wide)
    return reshape(em, y, tuple(t * s for t, s in zip(tup, shape)))


def np_repeat(em: Emitter, a: Any, repeats: Any, axis: Any = None):
    x = to_value(em, a)
    if axis is None:
        x, axis = reshape(em, x, (-1,)), 0
    shape = abstract_of(x).shape
    ax = normalize_axis(axis, len(shape))
    if is_traced(em, repeats):
        raise UnsupportedError("np.repeat with traced repeats has a data-dependent shape; pass the repeat "
                               "counts as Python ints")
    r = np.asarray(repeats)
    if r.dtype.kind not in "biu":
        raise TypeError(f"Cannot cast array data from {r.dtype!r} to dtype('int64') according to the rule "
                        f"'safe'")
    if (r < 0).any():
        raise ValueError("repeats may not contain negative values.")
    if r.size == 1:
        k = int(r.reshape(-1)[0])
        if k == 1:
            return x
        y = broadcast_to(em, expand_dims(em, x, ax + 1), shape[:ax + 1] + (k,) + shape[ax + 1:])
        return reshape(em, y, shape[:ax] + (shape[ax] * k,) + shape[ax + 1:])
    n = static_int(shape[ax], "the length of a repeated axis")
    if r.ndim != 1 or r.size != n:
        raise ValueError(f"operands could not be broadcast together with shape ({n},) ({r.size},)")
    idx = np.repeat(np.arange(n, dtype=np.int64), r.astype(np.int64))
    return emit(em, "take", x, constant(em, idx, irdt.int64), axis=ax)


# --- grids -------------------------------------------------------------------------------------------

def np_meshgrid(em: Emitter, *xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    s0 = (1,) * ndim
    out = [reshape(em, to_value(em, x), s0[:i] + (-1,) + s0[i + 1:]) for i, x in enumerate(xi)]
    if indexing == "xy" and ndim > 1:
        out[0] = reshape(em, out[0], (1, -1) + s0[2:])
        out[1] = reshape(em, out[1], (-1, 1) + s0[2:])
    if not sparse:
        return np_broadcast_arrays(em, *out)
    return tuple(out) if copy else out


def np_kron(em: Emitter, a: Any, b: Any):
    y = to_value(em, b)
    x = to_value(em, a)
    ndb, nda = abstract_of(y).ndim, abstract_of(x).ndim
    if nda < ndb:
        x = reshape(em, x, (1,) * (ndb - nda) + tuple(abstract_of(x).shape))
        nda = ndb
    if nda == 0 or ndb == 0:
        return apply_ufunc(em, np.multiply, x, y)
    nd = max(nda, ndb)
    as_ = (1,) * max(0, ndb - nda) + tuple(abstract_of(x).shape)
    bs = (1,) * max(0, nda - ndb) + tuple(abstract_of(y).shape)
    xa = reshape(em, x, as_)
    yb = reshape(em, y, bs)
    xa = expand_dims(em, xa, tuple(range(1, nd * 2, 2)))
    yb = expand_dims(em, yb, tuple(range(0, nd * 2, 2)))
    r = apply_ufunc(em, np.multiply, xa, yb)
    return reshape(em, r, tuple(p * q for p, q in zip(as_, bs)))


def _index_grid(em: Emitter, n: Any, m: Any):
    rows = expand_dims(em, emit(em, "iota", n=n, dtype=irdt.int64), (1,))
    cols = expand_dims(em, emit(em, "iota", n=m, dtype=irdt.int64), (0,))
    return rows, cols


def np_tri(em: Emitter, N: Any, M: Any = None, k: int = 0, dtype: Any = float, *, like: Any = None):
    rows, cols = _index_grid(em, N, N if M is None else M)
    mask = emit(em, "le", emit(em, "sub", cols, rows), scalar_like(em, k, irdt.int64))
    return cast(em, mask, to_dtype(dtype, "dtype"))


# --- diagonals ---------------------------------------------------------------------------------------

@translates("diagonal")
def np_diagonal(em: Emitter, a: Any, offset: Any = 0, axis1: Any = 0, axis2: Any = 1):
    x = to_value(em, a)
    n = abstract_of(x).ndim
    if n < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    i, j = normalize_axis(axis1, n, "axis1"), normalize_axis(axis2, n, "axis2")
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    return emit(em, "diagonal", x, offset=index_arg(offset, "offset"), axis1=i, axis2=j)


def np_trace(em: Emitter, a: Any, offset: Any = 0, axis1: Any = 0, axis2: Any = 1, dtype: Any = None,
             out: Any = None):
    if out is not None:
        raise UnsupportedError("np.trace: the `out` argument is not supported in traced code (arrays are "
                               "immutable there); use the returned array instead")
    return red.np_sum(em, np_diagonal(em, a, offset, axis1, axis2), -1, dtype)


def np_diag(em: Emitter, v: Any, k: Any = 0):
    x = to_value(em, v)
    k = index_arg(k, "k")
    rank = abstract_of(x).ndim
    if rank == 2:
        return emit(em, "diagonal", x, offset=k, axis1=0, axis2=1)
    if rank != 1:
        raise ValueError("Input must be 1- or 2-d.")
    return _diag_matrix(em, x, k)


def _diag_matrix(em: Emitter, x: Any, k: int):
    """The (n + |k|) square matrix with x on diagonal k and zeros elsewhere."""
    padded = emit(em, "pad", x, pad_width=((0, abs(k)),), value=0) if k else x
    n = abstract_of(padded).shape[0]
    rows, cols = _index_grid(em, n, n)
    on = emit(em, "eq", emit(em, "sub", cols, rows), scalar_like(em, k, irdt.int64))
    values = expand_dims(em, padded, (1,) if k >= 0 else (0,))  # row i holds x[i] (k >= 0), column j x[j]
    return emit(em, "where", on, values, scalar_like(em, 0, abstract_of(x).dtype))


def np_diagflat(em: Emitter, v: Any, k: Any = 0):
    return _diag_matrix(em, reshape(em, to_value(em, v), (-1,)), index_arg(k, "k"))


# --- cross -------------------------------------------------------------------------------------------

def _moveaxis_last(em: Emitter, x: Any, axis: int):
    n = abstract_of(x).ndim
    perm = [i for i in range(n) if i != axis] + [axis]
    return transpose(em, x, perm)


def _component(em: Emitter, x: Any, i: int):
    """x[..., i] (a take of one index: the vector axis may be a guarded symbolic size)."""
    return emit(em, "take", x, constant(em, np.int64(i), irdt.int64), axis=abstract_of(x).ndim - 1)


def np_cross(em: Emitter, a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
             axis: Any = None):
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = to_value(em, a), to_value(em, b)
    if abstract_of(x).ndim < 1 or abstract_of(y).ndim < 1:
        raise ValueError("At least one array has zero dimension")
    x = _moveaxis_last(em, x, _axis(axisa, abstract_of(x).ndim, "axisa"))
    y = _moveaxis_last(em, y, _axis(axisb, abstract_of(y).ndim, "axisb"))
    na = static_int(abstract_of(x).shape[-1], "the length of a cross product's vectors")
    nb = static_int(abstract_of(y).shape[-1], "the length of a cross product's vectors")
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    dt = np.promote_types(abstract_of(x).dtype.numpy, abstract_of(y).dtype.numpy)
    x, y = cast(em, x, to_dtype(dt)), cast(em, y, to_dtype(dt))
    a0, a1 = _component(em, x, 0), _component(em, x, 1)
    b0, b1 = _component(em, y, 0), _component(em, y, 1)

    def mul(p, q):
        return apply_ufunc(em, np.multiply, p, q)

    def sub(p, q):
        return apply_ufunc(em, np.subtract, p, q)

    def neg(p):
        return apply_ufunc(em, np.negative, p)

    c2 = sub(mul(a0, b1), mul(a1, b0))
    if na == 2 and nb == 2:
        return c2
    shape = broadcast_shapes(abstract_of(a0).shape, abstract_of(b0).shape)
    if na == 2:
        b2 = _component(em, y, 2)
        c0, c1 = mul(a1, b2), neg(mul(a0, b2))
    elif nb == 2:
        a2 = _component(em, x, 2)
        c0, c1 = neg(mul(a2, b1)), mul(a2, b0)
    else:
        a2, b2 = _component(em, x, 2), _component(em, y, 2)
        c0, c1 = sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2))
    out_axis = _axis(axisc, len(shape) + 1, "axisc")
    parts = [broadcast_to(em, c, shape) for c in (c0, c1, c2)]
    return emit(em, "stack", *parts, axis=out_axis)


def _axis(axis: Any, ndim: int, name: str) -> int:
    a = index_arg(axis, name)
    if not -ndim <= a < ndim:
        raise AxisError(a, ndim, name)
    return a % ndim


# --- special values ----------------------------------------------------------------------------------

def _fill(em: Emitter, value: Any, dt: irdt.DType):
    if is_python_scalar(value) or isinstance(value, np.generic):
        with np.errstate(over="ignore"):
            return scalar_like(em, value, dt)
    return to_value(em, value, dt)


def np_nan_to_num(em: Emitter, x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
                  neginf: Any = None):
    v = to_value(em, x)
    dt = abstract_of(v).dtype
    if not dt.is_inexact:
        return v
    rt = dt.real_dtype
    info = np.finfo(rt.numpy)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf

    def fix(d):
        d = emit(em, "where", emit(em, "isnan", d), _fill(em, nan, rt), d)
        inf = emit(em, "isinf", d)
        pos = emit(em, "logical_and", inf, emit(em, "logical_not", emit(em, "signbit", d)))
        neg = emit(em, "logical_and", inf, emit(em, "signbit", d))
        d = emit(em, "where", pos, _fill(em, hi, rt), d)
        return emit(em, "where", neg, _fill(em, lo, rt), d)

    if dt.is_complex:
        return cast(em, emit(em, "complex", fix(emit(em, "real", v)), fix(emit(em, "imag", v))), dt)
    return fix(v)


def _inf_side(fname: str, negative: bool):
    def translate(em: Emitter, x: Any, out: Any = None):
        if out is not None:
            raise UnsupportedError(f"np.{fname}: the `out` argument is not supported in traced code")
        v = to_value(em, x)
        if abstract_of(v).dtype.is_complex:
            raise TypeError(f"This operation is not supported for {abstract_of(v).dtype.numpy} values "
                            f"because it would be ambiguous.")
        sign = emit(em, "signbit", v)
        side = sign if negative else emit(em, "logical_not", sign)
        return emit(em, "logical_and", emit(em, "isinf", v), side)

    translate.__name__ = f"np_{fname}"
    return translate


np_isposinf = _inf_side("isposinf", negative=False)
np_isneginf = _inf_side("isneginf", negative=True)


def np_iscomplex(em: Emitter, x: Any):
    v = to_value(em, x)
    if abstract_of(v).dtype.is_complex:
        return apply_ufunc(em, np.not_equal, emit(em, "imag", v), 0)
    return full_like(em, v, False, irdt.bool_)


def np_isreal(em: Emitter, x: Any):
    v = to_value(em, x)
    if abstract_of(v).dtype.is_complex:
        return apply_ufunc(em, np.equal, emit(em, "imag", v), 0)
    return full_like(em, v, True, irdt.bool_)


# --- whole-array comparisons ----------------------------------------------------------------------------

def np_allclose(em: Emitter, a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False):
    return _all(em, np_isclose(em, a, b, rtol, atol, equal_nan))


def _all(em: Emitter, cond: Any):
    return red.reduce(em, "all", cond, tuple(range(abstract_of(cond).ndim)), False)


def np_array_equal(em: Emitter, a1: Any, a2: Any, equal_nan: bool = False):
    x, y = to_value(em, a1), to_value(em, a2)
    sx, sy = abstract_of(x).shape, abstract_of(y).shape
    if len(sx) != len(sy) or not all(dims_equal(p, q) for p, q in zip(sx, sy)):
        return False
    eq = apply_ufunc(em, np.equal, x, y)
    if equal_nan and (abstract_of(x).dtype.is_inexact or abstract_of(y).dtype.is_inexact):
        xn, yn = apply_ufunc(em, np.isnan, x), apply_ufunc(em, np.isnan, y)
        eq = emit(em, "logical_and", emit(em, "eq", xn, yn), emit(em, "logical_or", xn, eq))
    return _all(em, eq)


def np_array_equiv(em: Emitter, a1: Any, a2: Any):
    x, y = to_value(em, a1), to_value(em, a2)
    try:
        broadcast_shapes(abstract_of(x).shape, abstract_of(y).shape)
    except ValueError:
        return False
    return _all(em, apply_ufunc(em, np.equal, x, y))


# numpy functions that are not one core op (np.diagonal registers with @translates)
DECOMPOSITIONS = {
    np.tile: np_tile, np.repeat: np_repeat, np.meshgrid: np_meshgrid, np.kron: np_kron, np.tri: np_tri,
    np.trace: np_trace, np.diag: np_diag, np.diagflat: np_diagflat, np.cross: np_cross,
    np.nan_to_num: np_nan_to_num, np.isposinf: np_isposinf, np.isneginf: np_isneginf,
    np.iscomplex: np_iscomplex, np.isreal: np_isreal, np.allclose: np_allclose,
    np.array_equal: np_array_equal, np.array_equiv: np_array_equiv,
}
