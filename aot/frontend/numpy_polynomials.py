"""The polynomial functions of numpy/lib/_polynomial_impl.py by decomposition, with numpy's formulas
and dtypes: np.poly, np.polyadd, np.polysub, np.polymul, np.polydiv, np.polyder, np.polyint and
np.polyfit (np.polyval is numpy_numeric's). Coefficient counts and degrees are trace-time values:
the loops (np.poly's products, np.polydiv's long division) are unrolled.

numpy's poly1d trims leading zero coefficients, and np.polydiv trims its remainder's leading
near-zeros (|r0| <= 1e-8), so those result lengths depend on the values. Constant coefficients are
trimmed while tracing; traced ones get the length numpy returns for the usual case (nonzero leading
coefficients; a remainder one shorter than the divisor) and a run-time check that fails with
ValueError (POLYNOMIAL_LEADING_ZEROS) where numpy's length would differ.
np.poly of complex roots returns a real array when numpy finds them in conjugate pairs, a decision
on the values: traced complex roots are refused. np.polyfit cannot warn (numpy's RankWarning).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ir import dtypes as irdt

from . import numpy_reductions as red
from .emitter import Emitter, abstract_of
from .indexing import slice_axis
from .numpy_linalg import np_dot, np_outer
from .numpy_linalg_kernels import np_inv, np_lstsq
from .numpy_numeric import np_vander
from .numpy_shape import np_concatenate, reshape, transpose
from .numpy_signal import np_convolve
from .numpy_ufuncs import apply_ufunc, emit
from .operands import UnsupportedError, cast, constant, scalar_like, to_value
from .registry import row_functions
from .shapes import static_int
from .static_args import is_traced

_TRIM = "POLYNOMIAL_LEADING_ZEROS"


def _poly(em: Emitter, p: Any):
    """numpy's atleast_1d of a coefficient argument (a list is a strong numpy array)."""
    v = to_value(em, p) if em.is_value(p) else constant(em, np.asarray(p))
    return reshape(em, v, (1,)) if abstract_of(v).ndim == 0 else v


def _length(v: Any, what: str) -> int:
    return static_int(abstract_of(v).shape[0], what)


def _item(em: Emitter, v: Any, i: int):
    return emit(em, "take", v, scalar_like(em, i, irdt.int64), axis=0)


def _u(em: Emitter, ufunc: np.ufunc, *args: Any):
    return apply_ufunc(em, ufunc, *args)


def _all(em: Emitter, v: Any):
    return red.reduce(em, "all", v, tuple(range(abstract_of(v).ndim)), False)


# --- poly ---------------------------------------------------------------------------------------------

def np_poly(em: Emitter, seq_of_zeros: Any):
    """Coefficients from roots: a = ones(1), then a = convolve(a, [1, -zero]) for each root."""
    if not is_traced(em, seq_of_zeros):
        return constant(em, np.poly(np.asarray(seq_of_zeros)))
    z = _poly(em, seq_of_zeros)
    sh = abstract_of(z).shape
    real_part = False
    square = len(sh) == 2 and static_int(sh[0], "np.poly's matrix size") == static_int(sh[1], "its columns")
    if square and sh[0] != 0:
        z, real_part = _eigvals(em, z), True
    elif len(sh) == 1:
        dt = abstract_of(z).dtype
        z = cast(em, z, dt if dt.is_inexact else irdt.float64)  # numpy's mintypecode
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    n = _length(z, "the number of np.poly's roots")
    if n == 0:
        return 1.0
    dt = abstract_of(z).dtype
    if dt.is_complex and not real_part:
        raise UnsupportedError("np.poly of traced complex roots: numpy returns a real array when the roots "
                               "come in conjugate pairs, a dtype decided by the values; pass real roots, or "
                               "compute it outside traced code")
    a = emit(em, "full", shape=(1,), value=1, dtype=dt)
    for i in range(n):
        neg = emit(em, "neg", _item(em, z, i))
        k = i + 1  # len(a)
        parts = [slice_axis(em, a, 0, 0, 1)]
        if k > 1:
            shifted = _u(em, np.multiply, slice_axis(em, a, 0, 0, -1), neg)
            parts.append(_u(em, np.add, slice_axis(em, a, 0, 1, None), shifted))
        parts.append(_u(em, np.multiply, slice_axis(em, a, 0, k - 1, None), neg))
        a = emit(em, "concatenate", *parts, axis=0)
    return emit(em, "real", a) if real_part and dt.is_complex else a


def _eigvals(em: Emitter, a: Any):
    """The eigenvalues of a real square matrix (numpy's np.poly of a matrix): the coefficients are
    real, since a real matrix's complex eigenvalues come in conjugate pairs."""
    if abstract_of(a).dtype.is_complex:
        raise UnsupportedError("np.poly of a traced complex matrix: whether numpy's result is real depends "
                               "on its eigenvalues' values")
    eigvals = row_functions().get(np.linalg.eigvals)
    if eigvals is None:
        raise UnsupportedError("np.poly of a square matrix needs np.linalg.eigvals, which traced code does "
                               "not support yet; pass the roots (1-D)")
    return eigvals(em, a)


# --- add, subtract, multiply ------------------------------------------------------------------------

def _front_pad(em: Emitter, v: Any, k: int):
    if k <= 0:
        return v
    nd = abstract_of(v).ndim
    return emit(em, "pad", v, pad_width=((k, 0),) + ((0, 0),) * (nd - 1), value=0)


def _add_like(fname: str, ufunc: np.ufunc):
    def translate(em: Emitter, a1: Any, a2: Any):
        x, y = _poly(em, a1), _poly(em, a2)
        diff = _length(y, f"the length of np.{fname}'s a2") - _length(x, f"the length of np.{fname}'s a1")
        return _u(em, ufunc, _front_pad(em, x, diff), _front_pad(em, y, -diff))

    translate.__name__ = f"np_{fname}"
    return translate


np_polyadd = _add_like("polyadd", np.add)
np_polysub = _add_like("polysub", np.subtract)


def _poly1d(em: Emitter, p: Any, argname: str):
    """numpy's poly1d(p) coefficients: 1-D, leading zeros trimmed (constants now; a traced p with
    more than one coefficient must have a nonzero first one: the returned check)."""
    if not is_traced(em, p):
        return constant(em, np.poly1d(np.asarray(p)).coeffs), None
    v = _poly(em, p)
    if abstract_of(v).ndim > 1:
        raise ValueError("Polynomial must be 1d only.")
    if _length(v, f"the length of np.polymul's {argname}") < 2:
        return v, None
    first = _item(em, v, 0)
    return v, emit(em, "ne", first, scalar_like(em, 0, abstract_of(first).dtype))


def np_polymul(em: Emitter, a1: Any, a2: Any):
    (x, okx), (y, oky) = _poly1d(em, a1, "a1"), _poly1d(em, a2, "a2")
    out = np_convolve(em, x, y)
    checks = [c for c in (okx, oky) if c is not None]
    if not checks:
        return out
    ok = checks[0] if len(checks) == 1 else emit(em, "logical_and", *checks)
    return emit(em, "require", out, ok, status=_TRIM)


# --- divide ---------------------------------------------------------------------------------------------

def np_polydiv(em: Emitter, u: Any, v: Any):
    """numpy's long division, unrolled: d = r[k] / v[0]; r[k:k+n+1] -= d * v (one vector update per
    quotient coefficient), then the remainder's length check."""
    if not is_traced(em, u) and not is_traced(em, v):
        q, r = np.polydiv(np.asarray(u), np.asarray(v))
        return constant(em, q), constant(em, r)
    uu, vv = _u(em, np.add, _poly(em, u), 0.0), _u(em, np.add, _poly(em, v), 0.0)
    w = abstract_of(_u(em, np.add, _item(em, uu, 0), _item(em, vv, 0))).dtype
    m, n = _length(uu, "the length of np.polydiv's u") - 1, _length(vv, "the length of np.polydiv's v") - 1
    scale = _u(em, np.true_divide, 1.0, _item(em, vv, 0))
    r = cast(em, uu, w)
    q = []
    for k in range(m - n + 1):
        d = _u(em, np.multiply, scale, _item(em, r, k))
        q.append(cast(em, d, w))
        window = cast(em, _u(em, np.subtract, slice_axis(em, r, 0, k, k + n + 1), _u(em, np.multiply, d, vv)), w)
        parts = [slice_axis(em, r, 0, 0, k), window, slice_axis(em, r, 0, k + n + 1, None)]
        r = emit(em, "concatenate", *(p for p in parts if abstract_of(p).shape[0] != 0), axis=0)
    quotient = emit(em, "stack", *q, axis=0) if q else emit(em, "full", shape=(1,), value=0, dtype=w)
    keep = max(n, 1) if m >= n else m + 1  # the usual length: numpy's loop trims the eliminated zeros
    start = m + 1 - keep
    rest = slice_axis(em, r, 0, start, None)
    checks = []
    if start:  # numpy trims these: each must be near zero (|r0| <= 1e-8, allclose(r[0], 0))
        checks.append(_all(em, _near_zero(em, slice_axis(em, r, 0, 0, start))))
    if keep > 1:  # and stops at the first one that is not
        checks.append(emit(em, "logical_not", _near_zero(em, _item(em, r, start))))
    if not checks:
        return quotient, rest
    ok = checks[0] if len(checks) == 1 else emit(em, "logical_and", *checks)
    return quotient, emit(em, "require", rest, ok, status=_TRIM)


def _near_zero(em: Emitter, x: Any):
    return _u(em, np.less_equal, _u(em, np.absolute, x), 1e-8)


# --- derivative and integral -------------------------------------------------------------------------------

def _order(em: Emitter, m: Any, what: str) -> int:
    if is_traced(em, m):
        raise UnsupportedError(f"the order of a polynomial {what} (`m`) must be known at trace time")
    m = int(m)
    if m < 0:
        other = "polyint" if what == "derivative" else "polyder"
        raise ValueError(f"Order of {what} must be positive (see {other})")
    return m


def np_polyder(em: Emitter, p: Any, m: Any = 1):
    m = _order(em, m, "derivative")
    y = to_value(em, p) if em.is_value(p) else constant(em, np.asarray(p))
    for _ in range(m):
        n = _length(y, "the length of np.polyder's p") - 1
        y = _u(em, np.multiply, slice_axis(em, y, 0, 0, -1), constant(em, np.arange(n, 0, -1)))
    return y


def np_polyint(em: Emitter, p: Any, m: Any = 1, k: Any = None):
    m = _order(em, m, "integral")
    kv = constant(em, np.zeros(m)) if k is None else _poly(em, k)
    nk = _length(kv, "the length of np.polyint's k")
    if nk == 1 and m > 1:
        kv = _u(em, np.multiply, _item(em, kv, 0), constant(em, np.ones(m)))
        nk = m
    if nk < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    y = to_value(em, p) if em.is_value(p) else constant(em, np.asarray(p))
    for i in range(m):
        n = _length(y, "the length of np.polyint's p")
        scaled = _u(em, np.true_divide, y, constant(em, np.arange(n, 0, -1)))
        y = np_concatenate(em, [scaled, reshape(em, _item(em, kv, i), (1,))])
    return y


# --- fit ------------------------------------------------------------------------------------------------

def np_polyfit(em: Emitter, x: Any, y: Any, deg: Any, rcond: Any = None, full: bool = False, w: Any = None,
               cov: Any = False):
    """numpy's scaled least squares on the Vandermonde matrix (np.linalg.lstsq). numpy's RankWarning
    (a rank below deg + 1) is not raised: the rank is known only at run time. With full=True the
    residuals are NaN where numpy returns an empty array (a rank-deficient fit: np.linalg.lstsq)."""
    if is_traced(em, deg):
        raise UnsupportedError("np.polyfit: `deg` must be known at trace time (the result's shape depends "
                               "on it)")
    order = operator.index(deg) + 1
    xv, yv = _u(em, np.add, to_value(em, x), 0.0), _u(em, np.add, to_value(em, y), 0.0)
    if order - 1 < 0:
        raise ValueError("expected deg >= 0")
    if abstract_of(xv).ndim != 1:
        raise TypeError("expected 1D vector for x")
    npts = _length(xv, "the number of np.polyfit's points")
    if npts == 0:
        raise TypeError("expected non-empty vector for x")
    if not 1 <= abstract_of(yv).ndim <= 2:
        raise TypeError("expected 1D or 2D array for y")
    if _length(yv, "the number of np.polyfit's values") != npts:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = npts * float(np.finfo(abstract_of(xv).dtype.numpy).eps)
    lhs, rhs = np_vander(em, xv, order), yv
    if w is not None:
        wv = _u(em, np.add, to_value(em, w), 0.0)
        if abstract_of(wv).ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if _length(wv, "the number of np.polyfit's weights") != npts:
            raise TypeError("expected w and y to have the same length")
        wcol = reshape(em, wv, (npts, 1))
        lhs = cast(em, _u(em, np.multiply, lhs, wcol), abstract_of(lhs).dtype)  # numpy's in-place *=
        weights = wcol if abstract_of(rhs).ndim == 2 else wv
        rhs = cast(em, _u(em, np.multiply, rhs, weights), abstract_of(rhs).dtype)
    scale = _u(em, np.sqrt, red.np_sum(em, _u(em, np.multiply, lhs, lhs), 0))
    lhs = cast(em, _u(em, np.true_divide, lhs, scale), abstract_of(lhs).dtype)
    c, resids, rank, s = np_lstsq(em, lhs, rhs, rcond)
    c = transpose(em, _u(em, np.true_divide, transpose(em, c), scale))
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    vbase = np_inv(em, np_dot(em, transpose(em, lhs), lhs))
    vbase = cast(em, _u(em, np.true_divide, vbase, np_outer(em, scale, scale)), abstract_of(vbase).dtype)
    if isinstance(cov, str) and cov == "unscaled":
        fac = 1
    else:
        if npts <= order:
            raise ValueError("the number of data points must exceed order to scale the covariance matrix")
        fac = _u(em, np.true_divide, resids, npts - order)
    if abstract_of(yv).ndim == 1:
        return c, _u(em, np.multiply, vbase, fac)
    return c, _u(em, np.multiply, emit(em, "expand_dims", vbase, axes=(2,)), fac)


# numpy functions that are not one core op
DECOMPOSITIONS = {
    np.poly: np_poly, np.polyadd: np_polyadd, np.polysub: np_polysub, np.polymul: np_polymul,
    np.polydiv: np_polydiv, np.polyder: np_polyder, np.polyint: np_polyint, np.polyfit: np_polyfit,
}
