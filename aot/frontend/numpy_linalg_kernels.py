"""numpy.linalg: the factorisations (rows of aot/ops/linalg_kernels.py, registered with
@translates) and what numpy builds from them or from other core ops (DECOMPOSITIONS): norm,
matrix_norm, vector_norm, cond, matrix_rank, pinv, lstsq, matrix_power, multi_dot and the array-API
aliases (matmul, outer, vecdot, matrix_transpose, trace, diagonal, tensordot, cross).

Argument handling follows numpy.linalg: a stack of matrices is (..., M, N), numpy's LinAlgError for
too few dimensions or non-square matrices, its ValueError for bad modes and mismatched core dims,
ints and bool computing in float64 (the rows' dtype rule is numpy's _commonType).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from aot.ops.linalg_kernels import linalg_dtype
from ir import dtypes as irdt
from ir.symbols import is_static, sympy

from . import numpy_arrays as arrays
from . import numpy_linalg as linalg
from . import numpy_reductions as red
from . import numpy_sorting as sorting
from .emitter import Emitter, abstract_of
from .indexing import getitem
from .numpy_creation import np_eye
from .numpy_shape import broadcast_to, expand_dims, np_matrix_transpose, np_moveaxis, reshape, squeeze
from .numpy_shape import transpose
from .numpy_ufuncs import apply_ufunc, emit
from .operands import UnsupportedError, cast, constant, full, index_arg, is_size_expr, normalize_axis
from .registry import translates
from .shapes import broadcast_shapes, dim_equals, dim_le, dims_equal, fmt_shape, prod

LinAlgError = np.linalg.LinAlgError
# numpy's named results (np.linalg.qr(a).Q, ...): traced code returns the same namedtuples
QRResult, SlogdetResult, EighResult, SVDResult = (getattr(np.linalg._linalg, n) for n in
                                                  ("QRResult", "SlogdetResult", "EighResult", "SVDResult"))


def _operand(em: Emitter, x: Any):
    return x if em.is_value(x) else constant(em, np.asarray(x))


def _stacked_2d(em: Emitter, a: Any):
    a = _operand(em, a)
    nd = abstract_of(a).ndim
    if nd < 2:
        raise LinAlgError(f"{nd}-dimensional array given. Array must be at least two-dimensional")
    return a


def _stacked_square(em: Emitter, a: Any):
    a = _stacked_2d(em, a)
    m, n = abstract_of(a).shape[-2:]
    if not dims_equal(m, n):
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return a


# --- LU ------------------------------------------------------------------------------------------
@translates("det")
def np_det(em: Emitter, a: Any):
    return emit(em, "det", _stacked_square(em, a))


@translates("slogdet")
def np_slogdet(em: Emitter, a: Any):
    return SlogdetResult(*emit(em, "slogdet", _stacked_square(em, a)))


@translates("inv")
def np_inv(em: Emitter, a: Any):
    return emit(em, "inv", _stacked_square(em, a))


@translates("solve")
def np_solve(em: Emitter, a: Any, b: Any):
    a = _stacked_square(em, a)
    b = _operand(em, b)
    sa, sb = abstract_of(a).shape, abstract_of(b).shape
    sig = "(m,m),(m)->(m)" if len(sb) == 1 else "(m,m),(m,n)->(m,n)"
    name = "solve1" if len(sb) == 1 else "solve"
    if not sb:
        raise ValueError(f"solve: Input operand 1 does not have enough dimensions (has 0, gufunc core with "
                         f"signature {sig} requires 2)")
    rows = sb[0] if len(sb) == 1 else sb[-2]
    if not dims_equal(rows, sa[-1]):
        raise ValueError(f"{name}: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                         f"signature {sig} (size {rows} is different from {sa[-1]})")
    if len(sb) == 1:
        return squeeze(em, emit(em, "solve", a, expand_dims(em, b, -1)), -1)
    try:
        broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        raise ValueError(f"solve: operands could not be broadcast together: batch shapes "
                         f"{fmt_shape(sa[:-2])} and {fmt_shape(sb[:-2])}") from None
    return emit(em, "solve", a, b)


# --- cholesky, qr ----------------------------------------------------------------------------------
@translates("cholesky")
def np_cholesky(em: Emitter, a: Any, /, *, upper: bool = False):
    return emit(em, "cholesky", _stacked_square(em, a), upper=bool(upper))


QR_MODES = ("reduced", "complete", "r", "raw")


@translates("qr")
def np_qr(em: Emitter, a: Any, mode: str = "reduced"):
    if mode not in QR_MODES:
        if mode in ("f", "full", "e", "economic"):
            raise UnsupportedError(f"np.linalg.qr: the deprecated mode {mode!r} is not supported in traced "
                                   f"code")
        raise ValueError(f"Unrecognized mode '{mode}'")
    if mode == "raw":
        raise UnsupportedError("np.linalg.qr: mode='raw' (LAPACK's Householder vectors) is not supported in "
                               "traced code")
    a = _stacked_2d(em, a)
    q, r = emit(em, "qr", a, mode="reduced" if mode == "r" else mode)
    return r if mode == "r" else QRResult(q, r)


# --- eigh, svd ------------------------------------------------------------------------------------
def _uplo(uplo: Any) -> str:
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return uplo


@translates("eigh")
def np_eigh(em: Emitter, a: Any, UPLO: str = "L"):  # noqa: N803  (numpy's name)
    uplo = _uplo(UPLO)
    return EighResult(*emit(em, "eigh", _stacked_square(em, a), uplo=uplo))


@translates("eigvalsh")
def np_eigvalsh(em: Emitter, a: Any, UPLO: str = "L"):  # noqa: N803
    uplo = _uplo(UPLO)
    return emit(em, "eigvalsh", _stacked_square(em, a), uplo=uplo)


@translates("svd")
def np_svd(em: Emitter, a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    a = _operand(em, a)
    if hermitian:
        return _hermitian_svd(em, a, compute_uv)
    a = _stacked_2d(em, a)
    if not compute_uv:
        return emit(em, "svdvals", a)
    return SVDResult(*emit(em, "svd", a, full_matrices=bool(full_matrices)))


@translates("svdvals")
def np_svdvals(em: Emitter, x: Any, /):
    return emit(em, "svdvals", _stacked_2d(em, x))


def _hermitian_svd(em: Emitter, a: Any, compute_uv: bool, ordered: bool = True):
    """numpy's svd(hermitian=True): from eigh, |w| descending, the signs moved into vh (`ordered`
    False: in eigh's order, for callers that do not care, np.linalg.pinv)."""
    a = _stacked_square(em, a)
    if not compute_uv:
        s = _abs(em, emit(em, "eigvalsh", a, uplo="L"))
        return getitem(em, sorting.np_sort(em, s, -1), (Ellipsis, slice(None, None, -1))) if ordered else s
    s, u = emit(em, "eigh", a, uplo="L")
    sgn = apply_ufunc(em, np.copysign, 1.0, s)
    s = _abs(em, s)
    if ordered:
        sidx = getitem(em, sorting.np_argsort(em, s, -1), (Ellipsis, slice(None, None, -1)))
        sgn = sorting.np_take_along_axis(em, sgn, sidx, -1)
        s = sorting.np_take_along_axis(em, s, sidx, -1)
        u = sorting.np_take_along_axis(em, u, expand_dims(em, sidx, -2), -1)
    vt = _conj(em, _mT(em, apply_ufunc(em, np.multiply, u, expand_dims(em, sgn, -2))))
    return SVDResult(u, s, vt)


def _conj(em: Emitter, x: Any):
    return apply_ufunc(em, np.conjugate, x) if abstract_of(x).dtype.is_complex else x


def _mT(em: Emitter, x: Any):  # noqa: N802  (numpy's .mT)
    n = abstract_of(x).ndim
    return transpose(em, x, (*range(n - 2), n - 1, n - 2))


# --- norms ---------------------------------------------------------------------------------------
def _abs(em: Emitter, x: Any):
    return apply_ufunc(em, np.absolute, x)


def _sq_abs_sum(em: Emitter, x: Any, axes: tuple, keepdims: bool):
    """add.reduce((x.conj() * x).real, axes)"""
    if abstract_of(x).dtype.is_complex:
        x = apply_ufunc(em, np.multiply, apply_ufunc(em, np.conjugate, x), x)
        x = emit(em, "real", x)
    else:
        x = apply_ufunc(em, np.multiply, x, x)
    return red.reduce(em, "sum", x, axes, keepdims)


def _svd_reduce(em: Emitter, x: Any, row: int, col: int, how: str):
    """amax / amin / sum of the singular values of the matrices on axes (row, col)."""
    s = emit(em, "svdvals", np_moveaxis(em, x, (row, col), (-2, -1)))
    if how == "sum":
        return red.np_sum(em, s, -1, initial=0)
    if how == "max":
        return red.np_max(em, s, -1, initial=0)
    return red.np_min(em, s, -1)


def np_norm(em: Emitter, x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False):  # noqa: A002
    x = _operand(em, x)
    av = abstract_of(x)
    if not av.dtype.is_inexact:
        x = cast(em, x, irdt.float64)
    nd = av.ndim
    if axis is None and (ord is None or (isinstance(ord, str) and ord in ("f", "fro") and nd == 2)
                         or (_is_number(ord) and ord == 2 and nd == 1)):
        flat = reshape(em, x, (-1,))
        ret = apply_ufunc(em, np.sqrt, _sq_abs_sum(em, flat, (0,), False))
        return reshape(em, ret, (1,) * nd) if keepdims else ret
    if axis is None:
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (int(axis),)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
    if len(axis) == 1:
        return _vector_norm(em, x, ord, normalize_axis(axis[0], nd), bool(keepdims))
    if len(axis) == 2:
        row, col = (normalize_axis(a, nd) for a in axis)
        if row == col:
            raise ValueError("Duplicate axes given.")
        ret = _matrix_norm(em, x, ord, row, col)
        if keepdims:
            shape = list(abstract_of(x).shape)
            shape[row] = shape[col] = 1
            ret = reshape(em, ret, tuple(shape))
        return ret
    raise ValueError("Improper number of dimensions to norm.")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _vector_norm(em: Emitter, x: Any, ord: Any, ax: int, keepdims: bool):  # noqa: A002
    axes = (ax,)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord is not None and not _is_number(ord) and not isinstance(ord, bool):
        raise TypeError(f"norm: ord must be a number, None or a string, got {type(ord).__name__}")
    if ord == np.inf:
        return red.np_max(em, _abs(em, x), ax, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return red.np_min(em, _abs(em, x), ax, keepdims=keepdims)
    if ord == 0:
        nz = cast(em, apply_ufunc(em, np.not_equal, x, 0), abstract_of(x).dtype.real_dtype)
        return red.np_sum(em, nz, ax, keepdims=keepdims)
    if ord == 1:
        return red.reduce(em, "sum", _abs(em, x), axes, keepdims)
    if ord is None or ord == 2:
        return apply_ufunc(em, np.sqrt, _sq_abs_sum(em, x, axes, keepdims))
    absx = _abs(em, x)
    rt = abstract_of(absx).dtype
    absx = cast(em, apply_ufunc(em, np.power, absx, ord), rt)  # absx **= ord keeps absx's dtype
    ret = red.reduce(em, "sum", absx, axes, keepdims)
    inv = np.reciprocal(ord, dtype=rt.numpy)
    return cast(em, apply_ufunc(em, np.power, ret, constant(em, np.asarray(inv), rt)), rt)


def _matrix_norm(em: Emitter, x: Any, ord: Any, row: int, col: int):  # noqa: A002
    if _is_number(ord) and ord == 2:
        return _svd_reduce(em, x, row, col, "max")
    if _is_number(ord) and ord == -2:
        return _svd_reduce(em, x, row, col, "min")
    if _is_number(ord) and ord in (1, -1, np.inf, -np.inf):
        inner, outer = (row, col) if ord in (1, -1) else (col, row)
        if outer > inner:
            outer -= 1
        sums = red.reduce(em, "sum", _abs(em, x), (inner,), False)
        if ord in (1, np.inf):
            return red.np_max(em, sums, outer, initial=0)
        return red.np_min(em, sums, outer)
    if ord is None or (isinstance(ord, str) and ord in ("fro", "f")):
        return apply_ufunc(em, np.sqrt, _sq_abs_sum(em, x, tuple(sorted((row, col))), False))
    if isinstance(ord, str) and ord == "nuc":
        return _svd_reduce(em, x, row, col, "sum")
    raise ValueError("Invalid norm order for matrices.")


def np_matrix_norm(em: Emitter, x: Any, /, *, keepdims: bool = False, ord: Any = "fro"):  # noqa: A002
    return np_norm(em, x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def np_vector_norm(em: Emitter, x: Any, /, *, axis: Any = None, keepdims: bool = False,
                   ord: Any = 2):  # noqa: A002
    x = _operand(em, x)
    shape = list(abstract_of(x).shape)
    nd = len(shape)
    if axis is None:
        x, ax = reshape(em, x, (-1,)), 0
    elif isinstance(axis, tuple):
        axes = tuple(normalize_axis(a, nd) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis")
        rest = tuple(i for i in range(nd) if i not in axes)
        x = transpose(em, x, axes + rest)
        x, ax = reshape(em, x, (prod(shape[i] for i in axes), *(shape[i] for i in rest))), 0
    else:
        ax = axis
    res = np_norm(em, x, ord=ord, axis=ax)
    if keepdims:
        kept = range(nd) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        for i in kept:
            shape[normalize_axis(i, nd)] = 1
        res = reshape(em, res, tuple(shape))
    return res


# --- built on the factorisations -------------------------------------------------------------------
def _smax(a: Any, b: Any):
    return max(a, b) if is_static(a) and is_static(b) else sympy().Max(a, b)


def _is_empty_2d(em: Emitter, x: Any) -> bool:
    shape = abstract_of(x).shape
    return dim_equals(prod(shape), 0) and dim_equals(prod(shape[-2:]), 0)


def np_pinv(em: Emitter, a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = np._NoValue):
    a = _stacked_2d(em, a)
    av = abstract_of(a)
    m, n = av.shape[-2:]
    if rcond is None:
        if rtol is np._NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = _smax(m, n) * float(np.finfo(av.dtype.numpy).eps)
        else:
            rcond = rtol
    elif rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    if _is_empty_2d(em, a):
        return full(em, av.shape[:-2] + (n, m), 0, av.dtype)
    a = _conj(em, a)
    if hermitian:
        u, s, vt = _hermitian_svd(em, a, True, ordered=False)
    else:
        u, s, vt = emit(em, "svd", a, full_matrices=False)
    scalar = isinstance(rcond, (int, float)) or is_size_expr(rcond)  # a size expression: a weak float
    rc = rcond if scalar else _operand(em, rcond)
    if em.is_value(rc):
        rc = expand_dims(em, rc, -1)
    cutoff = apply_ufunc(em, np.multiply, rc, red.np_max(em, s, -1, keepdims=True))
    large = apply_ufunc(em, np.greater, s, cutoff)
    sdt = abstract_of(s).dtype
    inv = apply_ufunc(em, np.true_divide, constant(em, 1.0, sdt), s)
    s = emit(em, "where", large, inv, constant(em, 0.0, sdt))
    return linalg.np_matmul(em, _mT(em, vt), apply_ufunc(em, np.multiply, expand_dims(em, s, -1), _mT(em, u)))


def np_lstsq(em: Emitter, a: Any, b: Any, rcond: Any = None):
    a, b = _operand(em, a), _operand(em, b)
    is_1d = abstract_of(b).ndim == 1
    if is_1d:
        b = expand_dims(em, b, -1)
    for x in (a, b):
        if abstract_of(x).ndim != 2:
            raise LinAlgError(f"{abstract_of(x).ndim}-dimensional array given. Array must be two-dimensional")
    (m, n), (m2, _) = abstract_of(a).shape, abstract_of(b).shape
    if not dims_equal(m, m2):
        raise LinAlgError("Incompatible dimensions")
    out_dt = _result_dtype(abstract_of(a).dtype, abstract_of(b).dtype)
    t = irdt.complex128 if out_dt.is_complex else irdt.float64  # numpy computes in double
    a, b = cast(em, a, t), cast(em, b, t)
    if rcond is None:
        rcond = _smax(m, n) * float(np.finfo(np.float64).eps)
    u, s, vh = emit(em, "svd", a, full_matrices=False, lstsq=True)
    cutoff = apply_ufunc(em, np.multiply, rcond, red.np_max(em, s, -1, keepdims=True, initial=0))
    large = apply_ufunc(em, np.greater, s, cutoff)
    rank = cast(em, red.reduce(em, "sum", cast(em, large, irdt.int64), (0,), False), irdt.int32)
    inv = emit(em, "where", large, apply_ufunc(em, np.true_divide, 1.0, s), constant(em, 0.0, irdt.float64))
    uhb = linalg.np_matmul(em, _conj(em, _mT(em, u)), b)
    scaled = apply_ufunc(em, np.multiply, expand_dims(em, inv, -1), uhb)
    x = linalg.np_matmul(em, _conj(em, _mT(em, vh)), scaled)
    rt = out_dt.real_dtype
    if dims_equal(m, n) or not _dim_gt(m, n):
        resids = constant(em, np.zeros((0,), rt.numpy))
    else:
        r = apply_ufunc(em, np.subtract, b, linalg.np_matmul(em, a, x))
        resids = _sq_abs_sum(em, r, (0,), False)
        # numpy returns an empty array when rank < n, a shape compiled code cannot produce: NaN there
        full_rank = apply_ufunc(em, np.equal, rank, constant(em, n) if not is_static(n) else n)
        resids = cast(em, emit(em, "where", full_rank, resids, constant(em, np.nan, irdt.float64)), rt)
    if is_1d:
        x = squeeze(em, x, -1)
    return cast(em, x, out_dt), resids, rank, cast(em, s, rt)


def _dim_gt(a: Any, b: Any) -> bool:
    return not dim_le(a, b)


def _result_dtype(*dts):
    return linalg_dtype("lstsq", list(dts))


def np_cond(em: Emitter, x: Any, p: Any = None):
    x = _operand(em, x)
    if _is_empty_2d(em, x):
        raise LinAlgError("cond is not defined on empty arrays")
    if p is None or (_is_number(p) and p in (2, -2)):
        s = emit(em, "svdvals", _stacked_2d(em, x))
        # s[..., 0] and s[..., -1]: s is descending (the reductions also index symbolic lengths)
        first, last = red.np_max(em, s, -1), red.np_min(em, s, -1)
        r = apply_ufunc(em, np.true_divide, *((last, first) if p == -2 else (first, last)))
    else:
        x = _stacked_square(em, x)
        invx = emit(em, "inv", x, singular="nan")
        norms = (np_norm(em, x, p, axis=(-2, -1)), np_norm(em, invx, p, axis=(-2, -1)))
        r = apply_ufunc(em, np.multiply, *norms)
        r = cast(em, r, linalg_dtype("cond", [abstract_of(x).dtype]).real_dtype)
    # NaNs become infinities unless the matrix itself held a NaN
    nd = abstract_of(x).ndim
    x_nan = red.reduce(em, "any", apply_ufunc(em, np.isnan, x), (nd - 2, nd - 1), False)
    keep = apply_ufunc(em, np.logical_not, x_nan)
    to_inf = apply_ufunc(em, np.logical_and, apply_ufunc(em, np.isnan, r), keep)
    rt = abstract_of(r).dtype
    return emit(em, "where", to_inf, constant(em, np.inf, rt), r)


def np_matrix_rank(em: Emitter, A: Any, tol: Any = None, hermitian: bool = False, *,  # noqa: N803
                   rtol: Any = None):
    if rtol is not None and tol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    A = _operand(em, A)
    av = abstract_of(A)
    if av.ndim < 2:  # numpy returns int(not all(A == 0)): here a 0-d int64 array
        nonzero = red.reduce(em, "any", apply_ufunc(em, np.not_equal, A, 0), tuple(range(av.ndim)), False)
        return cast(em, nonzero, irdt.int64)
    S = _hermitian_svd(em, A, False, ordered=False) if hermitian else emit(em, "svdvals", A)
    sdt = abstract_of(S).dtype
    if tol is None:
        if rtol is None:
            rtol = _smax(*av.shape[-2:]) * float(np.finfo(sdt.numpy).eps)
        else:
            rtol = expand_dims(em, _operand(em, rtol), -1) if np.ndim(rtol) or em.is_value(rtol) else rtol
        tol = apply_ufunc(em, np.multiply, red.np_max(em, S, -1, keepdims=True, initial=0), rtol)
    else:
        tol = expand_dims(em, _operand(em, tol), -1) if np.ndim(tol) or em.is_value(tol) else tol
    return red.np_count_nonzero(em, apply_ufunc(em, np.greater, S, tol), axis=-1)


def np_matrix_power(em: Emitter, a: Any, n: Any):
    a = _stacked_square(em, a)
    try:
        n = index_arg(n, "exponent")
    except TypeError:
        raise TypeError("exponent must be an integer") from None
    if n == 0:
        av = abstract_of(a)
        return broadcast_to(em, np_eye(em, av.shape[-1], dtype=av.dtype.numpy), av.shape)
    if n < 0:
        a, n = emit(em, "inv", a), -n
    z = result = None
    while n > 0:
        z = a if z is None else linalg.np_matmul(em, z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else linalg.np_matmul(em, result, z)
    return result


def np_tensorsolve(em: Emitter, a: Any, b: Any, axes: Any = None):
    a, b = _operand(em, a), _operand(em, b)
    an, bn = abstract_of(a).ndim, abstract_of(b).ndim
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(k)
            order.insert(an, k)
        a = transpose(em, a, order)
    old = abstract_of(a).shape[-(an - bn):] if an > bn else ()
    size = prod(old)
    if not dims_equal(prod(abstract_of(a).shape), size * size):
        raise LinAlgError("Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == "
                          "prod(a.shape[:b.ndim])")
    x = np_solve(em, reshape(em, a, (size, size)), reshape(em, b, (-1,)))
    return reshape(em, x, old)


def np_tensorinv(em: Emitter, a: Any, ind: int = 2):
    a = _operand(em, a)
    shape = abstract_of(a).shape
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    n = prod(shape[ind:])
    ia = np_inv(em, reshape(em, a, (n, -1)))
    return reshape(em, ia, shape[ind:] + shape[:ind])


def np_multi_dot(em: Emitter, arrays: Any, *, out: Any = None):
    if out is not None:
        raise UnsupportedError("np.linalg.multi_dot: the `out` argument is not supported in traced code")
    vals = [_operand(em, x) for x in arrays]
    if len(vals) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(vals) == 2:
        return linalg.np_dot(em, vals[0], vals[1])
    first, last = abstract_of(vals[0]).ndim, abstract_of(vals[-1]).ndim
    if first == 1:
        vals[0] = reshape(em, vals[0], (1, -1))
    if last == 1:
        vals[-1] = reshape(em, vals[-1], (-1, 1))
    for v in vals:
        if abstract_of(v).ndim != 2:
            raise LinAlgError(f"{abstract_of(v).ndim}-dimensional array given. Array must be two-dimensional")
    r = _chain(em, vals)
    if first == 1 and last == 1:
        return getitem(em, r, (0, 0))
    return reshape(em, r, (-1,)) if first == 1 or last == 1 else r


def _chain(em: Emitter, vals: list):
    """The product in numpy's cheapest order (its matrix-chain order) for static shapes; left to right
    when a size is symbolic (the same product up to rounding)."""
    shapes = [abstract_of(v).shape for v in vals]
    if not all(is_static(d) for s in shapes for d in s):
        out = vals[0]
        for v in vals[1:]:
            out = linalg.np_matmul(em, out, v)
        return out
    order = np.linalg._linalg._multi_dot_matrix_chain_order([np.empty(s, np.int8) for s in shapes])

    def product(i: int, j: int):
        if i == j:
            return vals[i]
        k = order[i, j]
        return linalg.np_matmul(em, product(i, k), product(k + 1, j))

    return product(0, len(vals) - 1)


# --- numpy.linalg's array-API aliases ---------------------------------------------------------------
def np_linalg_matmul(em: Emitter, x1: Any, x2: Any, /):
    return linalg.np_matmul(em, x1, x2)


def np_linalg_outer(em: Emitter, x1: Any, x2: Any, /):
    x1, x2 = _operand(em, x1), _operand(em, x2)
    n1, n2 = abstract_of(x1).ndim, abstract_of(x2).ndim
    if n1 != 1 or n2 != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={n1} and x2.ndim={n2}.")
    return linalg.np_outer(em, x1, x2)


def np_linalg_vecdot(em: Emitter, x1: Any, x2: Any, /, *, axis: int = -1):
    x1, x2 = _operand(em, x1), _operand(em, x2)
    x1 = np_moveaxis(em, x1, axis, -1)
    x2 = np_moveaxis(em, x2, axis, -1)
    return apply_ufunc(em, np.vecdot, x1, x2)


def np_linalg_matrix_transpose(em: Emitter, x: Any, /):
    return np_matrix_transpose(em, x)


def np_linalg_trace(em: Emitter, x: Any, /, *, offset: int = 0, dtype: Any = None):
    return arrays.np_trace(em, x, offset, -2, -1, dtype)


def np_linalg_diagonal(em: Emitter, x: Any, /, *, offset: int = 0):
    return arrays.np_diagonal(em, x, offset, -2, -1)


def np_linalg_tensordot(em: Emitter, x1: Any, x2: Any, /, *, axes: Any = 2):
    return linalg.np_tensordot(em, x1, x2, axes)


def np_linalg_cross(em: Emitter, x1: Any, x2: Any, /, *, axis: int = -1):
    x1, x2 = _operand(em, x1), _operand(em, x2)
    d1 = abstract_of(x1).shape[normalize_axis(axis, abstract_of(x1).ndim)]
    d2 = abstract_of(x2).shape[normalize_axis(axis, abstract_of(x2).ndim)]
    if not (dim_equals(d1, 3) and dim_equals(d2, 3)):
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but they are {d1} "
                         f"and {d2} dimensional instead.")
    return arrays.np_cross(em, x1, x2, axis=axis)


# numpy.linalg functions that are not one core op (the row-named ones register with @translates)
DECOMPOSITIONS = {
    np.linalg.norm: np_norm, np.linalg.matrix_norm: np_matrix_norm, np.linalg.vector_norm: np_vector_norm,
    np.linalg.cond: np_cond, np.linalg.matrix_rank: np_matrix_rank, np.linalg.pinv: np_pinv,
    np.linalg.lstsq: np_lstsq, np.linalg.matrix_power: np_matrix_power, np.linalg.multi_dot: np_multi_dot,
    np.linalg.matmul: np_linalg_matmul, np.linalg.outer: np_linalg_outer, np.linalg.vecdot: np_linalg_vecdot,
    np.linalg.matrix_transpose: np_linalg_matrix_transpose, np.linalg.trace: np_linalg_trace,
    np.linalg.diagonal: np_linalg_diagonal, np.linalg.tensordot: np_linalg_tensordot,
    np.linalg.cross: np_linalg_cross, np.linalg.tensorsolve: np_tensorsolve,
    np.linalg.tensorinv: np_tensorinv,
}
