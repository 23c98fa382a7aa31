"""Small numeric functions of the everyday numpy namespace by decomposition, with numpy's formulas
and dtypes: np.fix, np.isin, np.polyval, np.vander, np.trapezoid, np.gradient, np.cov, np.corrcoef,
np.unravel_index, np.ravel_multi_index and the index helpers np.tril_indices_from,
np.triu_indices_from and np.diag_indices_from (their results depend on the shape only: constants).

np.unravel_index and np.ravel_multi_index(mode="raise") check their indices at run time and fail
with numpy's ValueError (the `require` op)."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ir import dtypes as irdt

from . import numpy_reductions as red
from .emitter import Emitter, abstract_of
from .numpy_arrays import np_diag
from .numpy_linalg import np_dot
from .numpy_scans import np_diff
from .numpy_shape import reshape, transpose
from .numpy_ufuncs import apply_ufunc, emit
from .operands import (
    UnsupportedError,
    cast,
    constant,
    normalize_axes,
    normalize_axis,
    result_dtype,
    scalar_like,
    to_dtype,
    to_value,
)
from .shapes import dims_equal, static_int
from .static_args import is_traced

I64 = irdt.int64


def np_fix(em: Emitter, x: Any, out: Any = None):
    if out is not None:
        raise UnsupportedError("np.fix: the `out` argument is not supported in traced code")
    v = to_value(em, x)
    up, down = apply_ufunc(em, np.ceil, v), apply_ufunc(em, np.floor, v)
    return emit(em, "where", apply_ufunc(em, np.greater_equal, v, 0), down, up)


def np_isin(em: Emitter, element: Any, test_elements: Any, assume_unique: bool = False,
            invert: bool = False, *, kind: Any = None):
    """Each element compared with every test element (numpy's answer for any `kind`)."""
    e = to_value(em, element)
    t = reshape(em, to_value(em, test_elements), (-1,))
    if static_int(abstract_of(t).shape[0], "the number of test elements") == 0:
        return emit(em, "full_like", e, value=bool(invert), dtype=irdt.bool_)
    eq = apply_ufunc(em, np.equal, emit(em, "expand_dims", e, axes=(abstract_of(e).ndim,)), t)
    found = red.reduce(em, "any", eq, (abstract_of(eq).ndim - 1,), False)
    return emit(em, "logical_not", found) if invert else found


def _item(em: Emitter, v: Any, i: int):
    return emit(em, "take", v, constant(em, np.int64(i), I64), axis=0)


def np_polyval(em: Emitter, p: Any, x: Any):
    """Horner's scheme from zeros_like(x): y = y * x + p[i] (numpy's order and promotion)."""
    pv = to_value(em, np.asarray(p) if not em.is_value(p) else p)
    xv = to_value(em, x)
    if abstract_of(pv).ndim != 1:
        raise UnsupportedError("np.polyval: expected a 1-D coefficient array")
    y = emit(em, "full_like", xv, value=0, dtype=None)
    for i in range(static_int(abstract_of(pv).shape[0], "the number of polynomial coefficients")):
        y = apply_ufunc(em, np.add, apply_ufunc(em, np.multiply, y, xv), _item(em, pv, i))
    return y


def np_vander(em: Emitter, x: Any, N: Any = None, increasing: bool = False):
    v = to_value(em, x)
    if abstract_of(v).ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = static_int(abstract_of(v).shape[0], "the length of x") if N is None else operator.index(N)
    dt = to_dtype(np.promote_types(abstract_of(v).dtype.numpy, int))
    v = cast(em, v, dt)
    cols = [emit(em, "full_like", v, value=1, dtype=dt)] if n > 0 else []
    if n > 1:
        cols.append(v)
    for _ in range(2, n):  # numpy's multiply.accumulate: each power from the previous one
        cols.append(emit(em, "mul", cols[-1], v))
    if not cols:
        return emit(em, "full", shape=(abstract_of(v).shape[0], 0), value=0, dtype=dt)
    out = emit(em, "stack", *cols, axis=1)
    return out if increasing else emit(em, "flip", out, axes=(1,))


def np_trapezoid(em: Emitter, y: Any, x: Any = None, dx: Any = 1.0, axis: Any = -1):
    yv = to_value(em, y)
    nd = abstract_of(yv).ndim
    ax = normalize_axis(axis, nd)
    if x is None:
        d = dx
    else:
        xv = to_value(em, x)
        if abstract_of(xv).ndim == 1:
            d = np_diff(em, xv)
            shape = [1] * nd
            shape[ax] = abstract_of(d).shape[0]
            d = reshape(em, d, tuple(shape))
        else:
            d = np_diff(em, xv, axis=ax)
    n = abstract_of(yv).shape[ax]
    hi = emit(em, "slice", yv, starts=tuple(1 if k == ax else 0 for k in range(nd)),
              stops=tuple(None for _ in range(nd)), steps=(1,) * nd)
    lo = emit(em, "slice", yv, starts=(0,) * nd, stops=tuple(n - 1 if k == ax else None for k in range(nd)),
              steps=(1,) * nd)
    s = apply_ufunc(em, np.true_divide, apply_ufunc(em, np.multiply, d, apply_ufunc(em, np.add, hi, lo)), 2.0)
    return red.np_sum(em, s, ax)


# --- gradient -------------------------------------------------------------------------------------------

def np_gradient(em: Emitter, f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1):
    """numpy's second-order central differences inside and first- or second-order one-sided ones at the
    ends, for unit, scalar or 1-D coordinate spacing per axis (coordinates whose steps are all equal
    take numpy's uniform formulas, decided at run time when they are traced)."""
    fv = to_value(em, f)
    n_dims = abstract_of(fv).ndim
    axes = tuple(range(n_dims)) if axis is None else normalize_axes(axis, n_dims)
    if not varargs:
        dx = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        dx = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        dx = [_spacing(em, d, abstract_of(fv).shape[a]) for d, a in zip(varargs, axes)]
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    otype = abstract_of(fv).dtype
    if not otype.is_inexact:
        fv, otype = cast(em, fv, irdt.float64), irdt.float64
    outs = []
    for ax, d in zip(axes, dx):
        if static_int(abstract_of(fv).shape[ax], "the length of a differentiated axis") < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        if isinstance(d, tuple):  # coordinates: (step differences, all steps equal, the first step)
            steps, equal, first = d
            uniform = _gradient_axis(em, fv, ax, first, edge_order, otype)
            if equal is not True:
                uneven = _gradient_axis(em, fv, ax, steps, edge_order, otype)
                uniform = uneven if equal is False else emit(em, "where", equal, uniform, uneven)
            outs.append(uniform)
        else:
            outs.append(_gradient_axis(em, fv, ax, d, edge_order, otype))
    return outs[0] if len(axes) == 1 else tuple(outs)


def _spacing(em: Emitter, d: Any, n: Any):
    """One axis' spacing: a scalar, or (np.diff of the coordinates, all steps equal, the first step)."""
    if np.ndim(d) == 0:
        return d
    if np.ndim(d) != 1:
        raise ValueError("distances must be either scalars or 1d")
    dv = to_value(em, d)
    if not dims_equal(abstract_of(dv).shape[0], n):
        raise ValueError("when 1d, distances must match the length of the corresponding dimension")
    if not abstract_of(dv).dtype.is_inexact:
        dv = cast(em, dv, irdt.float64)
    steps = np_diff(em, dv)
    first = _item(em, steps, 0)
    if not is_traced(em, d):
        diffs = np.diff(np.asarray(d, np.float64 if np.asarray(d).dtype.kind in "biu" else None))
        return (steps, True, first) if (diffs == diffs[0]).all() else (steps, False, first)
    equal = red.reduce(em, "all", apply_ufunc(em, np.equal, steps, first), (0,), False)
    return steps, equal, first


def _along(em: Emitter, x: Any, ax: int, start: Any, stop: Any):
    nd = abstract_of(x).ndim
    return emit(em, "slice", x, starts=tuple(start if k == ax else 0 for k in range(nd)),
                stops=tuple(stop if k == ax else None for k in range(nd)), steps=(1,) * nd)


def _gradient_axis(em: Emitter, f: Any, ax: int, d: Any, edge_order: int, otype):
    """The derivative along `ax` for a scalar spacing d or 1-D step differences d (numpy's formulas)."""
    n = abstract_of(f).shape[ax]
    nd = abstract_of(f).ndim
    uniform = not em.is_value(d) or abstract_of(d).ndim == 0
    ops = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide}

    def u(op, p, q):
        return apply_ufunc(em, ops[op], p, q)

    def at(i, j=None):
        return _along(em, f, ax, i, i + 1 if j is None else j)

    def step(i, j=None):  # step differences i:j, shaped to broadcast along ax
        s = emit(em, "slice", d, starts=(i,), stops=(i + 1 if j is None else j,), steps=(1,))
        shape = [1] * nd
        shape[ax] = abstract_of(s).shape[0]
        return reshape(em, s, tuple(shape))

    if uniform:
        inner = u("/", u("-", _along(em, f, ax, 2, None), _along(em, f, ax, 0, n - 2)), u("*", 2.0, d))
    else:
        dx1, dx2 = step(0, n - 2), step(1, n - 1)
        a = u("/", apply_ufunc(em, np.negative, dx2), u("*", dx1, u("+", dx1, dx2)))
        b = u("/", u("-", dx2, dx1), u("*", dx1, dx2))
        c = u("/", dx1, u("*", dx2, u("+", dx1, dx2)))
        inner = u("+", u("+", u("*", a, _along(em, f, ax, 0, n - 2)), u("*", b, _along(em, f, ax, 1, n - 1))),
                  u("*", c, _along(em, f, ax, 2, None)))
    if edge_order == 1:
        first = u("/", u("-", at(1), at(0)), d if uniform else step(0))
        last = u("/", u("-", at(n - 1), at(n - 2)), d if uniform else step(n - 2))
    else:
        if uniform:
            a0, b0, c0 = u("/", -1.5, d), u("/", 2.0, d), u("/", -0.5, d)
            a1, b1, c1 = u("/", 0.5, d), u("/", -2.0, d), u("/", 1.5, d)
        else:
            d1, d2 = step(0), step(1)
            a0 = u("/", apply_ufunc(em, np.negative, u("+", u("*", 2.0, d1), d2)), u("*", d1, u("+", d1, d2)))
            b0 = u("/", u("+", d1, d2), u("*", d1, d2))
            c0 = u("/", apply_ufunc(em, np.negative, d1), u("*", d2, u("+", d1, d2)))
            d1, d2 = step(n - 3), step(n - 2)
            a1 = u("/", d2, u("*", d1, u("+", d1, d2)))
            b1 = u("/", apply_ufunc(em, np.negative, u("+", d2, d1)), u("*", d1, d2))
            c1 = u("/", u("+", u("*", 2.0, d2), d1), u("*", d2, u("+", d1, d2)))
        first = u("+", u("+", u("*", a0, at(0)), u("*", b0, at(1))), u("*", c0, at(2)))
        last = u("+", u("+", u("*", a1, at(n - 3)), u("*", b1, at(n - 2))), u("*", c1, at(n - 1)))
    parts = [cast(em, p, otype) for p in (first, inner, last)]  # numpy assigns into an otype array
    return emit(em, "concatenate", *parts, axis=ax)


# --- covariance -----------------------------------------------------------------------------------------

def np_cov(em: Emitter, m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
           fweights: Any = None, aweights: Any = None, *, dtype: Any = None):
    if fweights is not None or aweights is not None:
        raise UnsupportedError("np.cov: fweights and aweights are not supported in traced code")
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    mv = to_value(em, m)
    if abstract_of(mv).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    yv = None if y is None else to_value(em, y)
    if yv is not None and abstract_of(yv).ndim > 2:
        raise ValueError("y has more than 2 dimensions")
    dt = to_dtype(dtype) if dtype is not None else result_dtype(em, *([mv] if yv is None else [mv, yv]),
                                                              np.float64(0))
    X = _rows(em, cast(em, mv, dt), rowvar, abstract_of(mv).ndim)
    if yv is not None:
        Y = cast(em, yv, dt)
        Y = reshape(em, Y, (1, -1)) if abstract_of(Y).ndim < 2 else Y
        if not rowvar and abstract_of(Y).shape[0] != 1:
            Y = transpose(em, Y)
        X = emit(em, "concatenate", X, Y, axis=0)
    ddof = (1 if not bias else 0) if ddof is None else int(ddof)
    n = abstract_of(X).shape[1]
    avg = red.np_mean(em, X, 1, keepdims=True)
    fact = n - ddof
    Xc = apply_ufunc(em, np.subtract, X, avg)
    c = np_dot(em, Xc, apply_ufunc(em, np.conjugate, transpose(em, Xc)))
    scale = apply_ufunc(em, np.true_divide, 1, _positive_or_zero(em, fact))
    c = cast(em, apply_ufunc(em, np.multiply, c, scale), abstract_of(c).dtype)  # numpy: c *= 1 / fact
    shape = tuple(d for d in abstract_of(c).shape if d != 1)
    return reshape(em, c, shape) if len(shape) != abstract_of(c).ndim else c


def _rows(em: Emitter, X: Any, rowvar: bool, ndim: int):
    if ndim < 2:
        X = reshape(em, X, (1, -1))
    elif not rowvar:
        X = transpose(em, X)
    return X


def _positive_or_zero(em: Emitter, fact: Any):
    """numpy's normalisation N - ddof, replaced by 0.0 when it is not positive (numpy also warns)."""
    if isinstance(fact, int):
        return float(fact) if fact > 0 else 0.0
    f = emit(em, "full", shape=(), value=fact, dtype=irdt.float64)
    return emit(em, "maximum", f, scalar_like(em, 0.0, irdt.float64))


def np_corrcoef(em: Emitter, x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None):
    c = np_cov(em, x, y, rowvar, dtype=dtype)
    if abstract_of(c).ndim == 0:
        return apply_ufunc(em, np.true_divide, c, c)
    d = np_diag(em, c)
    std = apply_ufunc(em, np.sqrt, emit(em, "real", d) if abstract_of(d).dtype.is_complex else d)
    c = apply_ufunc(em, np.true_divide, c, emit(em, "expand_dims", std, axes=(1,)))
    c = apply_ufunc(em, np.true_divide, c, emit(em, "expand_dims", std, axes=(0,)))
    rt = abstract_of(c).dtype.real_dtype
    lo, hi = scalar_like(em, -1, rt), scalar_like(em, 1, rt)
    if abstract_of(c).dtype.is_complex:
        re, im = (emit(em, "clip", emit(em, part, c), lo, hi) for part in ("real", "imag"))
        return cast(em, emit(em, "complex", re, im), abstract_of(c).dtype)
    return emit(em, "clip", c, lo, hi)


# --- flat indices ----------------------------------------------------------------------------------------

def _dims_arg(shape: Any) -> tuple[int, ...]:
    return tuple(operator.index(d) for d in ((shape,) if isinstance(shape, (int, np.integer)) else shape))


def np_unravel_index(em: Emitter, indices: Any, shape: Any, order: str = "C"):
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    dims = _dims_arg(shape)
    idx = to_value(em, indices)
    if not abstract_of(idx).dtype.is_int:
        raise TypeError("only int indices permitted")
    idx = cast(em, idx, I64)
    size = int(np.prod(dims))
    inside = emit(em, "logical_and", emit(em, "ge", idx, scalar_like(em, 0, I64)),
                  emit(em, "lt", idx, scalar_like(em, size, I64)))
    all_inside = red.reduce(em, "all", inside, tuple(range(abstract_of(inside).ndim)), False)
    idx = emit(em, "require", idx, all_inside, status="UNRAVEL_OUT_OF_BOUNDS")
    out, rest = [], idx
    for d in (dims[::-1] if order == "C" else dims):
        dd = scalar_like(em, max(d, 1), I64)
        out.append(emit(em, "mod", rest, dd))
        rest = emit(em, "floordiv", rest, dd)
    return tuple(out[::-1] if order == "C" else out)


def np_ravel_multi_index(em: Emitter, multi_index: Any, dims: Any, mode: Any = "raise", order: str = "C"):
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    dims = _dims_arg(dims)
    coords = [cast(em, to_value(em, c), I64) for c in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    modes = [mode] * len(dims) if isinstance(mode, str) else list(mode)
    ok = None
    fixed = []
    for c, d, md in zip(coords, dims, modes):
        n = scalar_like(em, d, I64)
        if md == "wrap":
            c = emit(em, "mod", c, n)
        elif md == "clip":
            c = emit(em, "clip", c, scalar_like(em, 0, I64), scalar_like(em, d - 1, I64))
        elif md == "raise":
            good = emit(em, "logical_and", emit(em, "ge", c, scalar_like(em, 0, I64)), emit(em, "lt", c, n))
            ok = good if ok is None else emit(em, "logical_and", ok, good)
        else:
            raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {md!r})")
        fixed.append(c)
    strides = np.cumprod((1,) + dims[::-1][:-1])[::-1] if order == "C" else np.cumprod((1,) + dims[:-1])
    flat = None
    for c, s in zip(fixed, strides):
        term = emit(em, "mul", c, scalar_like(em, int(s), I64))
        flat = term if flat is None else emit(em, "add", flat, term)
    if ok is not None:
        flat = emit(em, "require", flat, red.reduce(em, "all", ok, tuple(range(abstract_of(ok).ndim)), False),
                    status="INVALID_COORDINATES")
    return flat


def _shape_only(fname: str, numpy_fn, min_ndim: int, exact: bool):
    def translate(em: Emitter, arr: Any, *args: Any, **kwargs: Any):
        shape = abstract_of(to_value(em, arr)).shape
        if (len(shape) != 2) if exact else (len(shape) < min_ndim):
            raise ValueError("input array must be 2-d" if exact else "input array must be at least 2-d")
        dims = tuple(static_int(d, f"the shape of np.{fname}'s array") for d in shape)
        return tuple(constant(em, r) for r in numpy_fn(np.empty(dims, np.int8), *args, **kwargs))

    translate.__name__ = f"np_{fname}"
    return translate


# numpy functions that are not one core op
DECOMPOSITIONS = {
    np.fix: np_fix, np.gradient: np_gradient, np.isin: np_isin, np.polyval: np_polyval, np.vander: np_vander,
    np.cov: np_cov, np.corrcoef: np_corrcoef, np.unravel_index: np_unravel_index,
    np.ravel_multi_index: np_ravel_multi_index,
    np.tril_indices_from: _shape_only("tril_indices_from", np.tril_indices_from, 2, True),
    np.triu_indices_from: _shape_only("triu_indices_from", np.triu_indices_from, 2, True),
    np.diag_indices_from: _shape_only("diag_indices_from", np.diag_indices_from, 2, False),
}
if hasattr(np, "trapezoid"):  # numpy >= 2.0
    DECOMPOSITIONS[np.trapezoid] = np_trapezoid
