"""Matrix factorisations with numpy.linalg's semantics, over stacks of matrices (..., M, N).

det, slogdet, inv and solve (LU with partial pivoting), cholesky, qr (Householder), eigh and
eigvalsh (Hermitian eigenproblem), svd and svdvals. Dtypes as numpy.linalg (its _commonType): the
results of float32 and complex64 operands are single precision, everything else double, and, as
numpy does, the computation itself is in double precision; eigenvalues, singular values and the
log-determinant are real. The batch dims of solve's two operands broadcast (numpy 2: b is a stack
of (M, K) matrices; the front end turns a 1-D b into a column). Non-square matrices where numpy
wants square ones are refused by the shape rules (the front end raises numpy's LinAlgError
first). Errors as LAPACK reports them to numpy (LinAlgError): inv and solve on an exactly zero
pivot ("Singular matrix"; inv(singular="nan") gives NaNs instead, for np.linalg.cond), cholesky
("Matrix is not positive definite"), svd on a NaN ("SVD did not converge"; svd(lstsq=True) also on
an infinity, lstsq's message), eigh when Jacobi does not converge; eigh of a matrix holding a NaN or
an infinity returns NaNs, as LAPACK's heevd does. The transforms' rules (vjp, jvp, batch) follow the
shape rules; eigvalsh's and svdvals' recompute the vectors (eigh, svd).
"""
from __future__ import annotations

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import OpError, broadcast_shapes
from ir.symbols import dims_equal

from ._define import check_kind, defop
from ._shapes import smin
from ._transforms import conj, emit, full, iota, is_zero, reshape, to_front, total

KERNEL_TRAITS = {"opaque_kernel", "linalg_kernel"}


def linalg_dtype(op: str, dtypes: list[DType]) -> DType:
    """numpy.linalg's computation dtype (its _commonType): double unless every operand is single
    precision (an int or bool operand counts as double), complex when any operand is."""
    for d in dtypes:
        check_kind(op, dtypes, d, "bifc")
    double = any(not d.is_inexact or d.real_dtype.bits == 64 for d in dtypes)
    if any(d.is_complex for d in dtypes):
        return D.complex128 if double else D.complex64
    return D.float64 if double else D.float32


def _same_dtype(op: str):
    def rule(dtypes: list[DType], **_) -> DType:
        return linalg_dtype(op, dtypes)

    rule.__name__ = rule.__qualname__ = f"_{op}_dtype"
    return rule


def _matrix(op: str, shape: tuple) -> tuple:
    if len(shape) < 2:
        raise OpError(f"{op}: {len(shape)}-dimensional array given; array must be at least two-dimensional")
    return tuple(shape)


def _square(op: str, shape: tuple) -> tuple:
    shape = _matrix(op, shape)
    if not dims_equal(shape[-1], shape[-2]):
        raise OpError(f"{op}: last 2 dimensions of the array must be square, got shape {shape}")
    return shape


# --- LU: det, slogdet, inv, solve -----------------------------------------------------------------
def _det_shape(shapes: list[tuple]) -> tuple:
    return _square("det", shapes[0])[:-2]


def _slogdet_dtype(dtypes: list[DType]) -> tuple:
    dt = linalg_dtype("slogdet", dtypes)
    return dt, dt.real_dtype


def _slogdet_shape(shapes: list[tuple]) -> tuple:
    batch = _square("slogdet", shapes[0])[:-2]
    return batch, batch


def _inv_shape(shapes: list[tuple], *, singular) -> tuple:
    if singular not in ("raise", "nan"):
        raise OpError(f"inv: attribute 'singular' must be 'raise' or 'nan', got {singular!r}")
    return _square("inv", shapes[0])


def _inv_ref(a, *, singular):
    """numpy.linalg.inv (singular='nan': NaNs for a singular matrix, as np.linalg.cond's inverse)"""
    if singular == "raise":
        return np.linalg.inv(a)
    dt = linalg_dtype("inv", [D.from_numpy(a.dtype)])
    with np.errstate(all="ignore"):
        r = np.linalg._umath_linalg.inv(a, signature="D->D" if dt.is_complex else "d->d")
    return r.astype(dt.numpy, copy=False)


def _inv_raises(op) -> bool:
    return op.attrs.get("singular", "raise") == "raise"


def _solve_shape(shapes: list[tuple]) -> tuple:
    a = _square("solve", shapes[0])
    b = _matrix("solve", shapes[1])
    if not dims_equal(a[-1], b[-2]):
        raise OpError(f"solve: b has {b[-2]} rows for a {a[-1]} x {a[-1]} matrix (shapes {a} and {b})")
    return broadcast_shapes(a[:-2], b[:-2], op="solve") + tuple(b[-2:])


def _slogdet_ref(a):
    """numpy.linalg.slogdet: (sign, log|det|)"""
    return tuple(np.linalg.slogdet(a))


def _solve_ref(a, b):
    """numpy.linalg.solve with b a stack of (M, K) matrices"""
    if b.ndim < 2:
        raise ValueError(f"solve: b must be a stack of matrices, got {b.ndim} dimension(s)")
    return np.linalg.solve(a, b)


# --- cholesky ------------------------------------------------------------------------------------
def _cholesky_shape(shapes: list[tuple], *, upper) -> tuple:
    if not isinstance(upper, bool):
        raise OpError(f"cholesky: attribute 'upper' must be a bool, got {upper!r}")
    return _square("cholesky", shapes[0])


def _cholesky_ref(a, *, upper):
    """numpy.linalg.cholesky"""
    return np.linalg.cholesky(a, upper=upper)


# --- qr ------------------------------------------------------------------------------------------
QR_MODES = ("reduced", "complete")


def _qr_dtype(dtypes: list[DType], *, mode) -> tuple:
    dt = linalg_dtype("qr", dtypes)
    return dt, dt


def _qr_shape(shapes: list[tuple], *, mode) -> tuple:
    if mode not in QR_MODES:
        raise OpError(f"qr: mode must be one of {QR_MODES}, got {mode!r}")
    a = _matrix("qr", shapes[0])
    batch, m, n = a[:-2], a[-2], a[-1]
    k = m if mode == "complete" else smin(m, n)
    return batch + (m, k), batch + (k, n)


def _qr_ref(a, *, mode):
    """numpy.linalg.qr: (q, r)"""
    return tuple(np.linalg.qr(a, mode=mode))


# --- eigh, eigvalsh ------------------------------------------------------------------------------
def _check_uplo(op: str, uplo) -> None:
    if uplo not in ("L", "U"):
        raise OpError(f"{op}: attribute 'uplo' must be 'L' or 'U', got {uplo!r}")


def _eigh_dtype(dtypes: list[DType], *, uplo) -> tuple:
    dt = linalg_dtype("eigh", dtypes)
    return dt.real_dtype, dt


def _eigh_shape(shapes: list[tuple], *, uplo) -> tuple:
    _check_uplo("eigh", uplo)
    a = _square("eigh", shapes[0])
    return a[:-1], a


def _eigh_ref(a, *, uplo):
    """numpy.linalg.eigh: (eigenvalues ascending, eigenvectors as columns)"""
    return tuple(np.linalg.eigh(a, UPLO=uplo))


def _eigvalsh_dtype(dtypes: list[DType], *, uplo) -> DType:
    return linalg_dtype("eigvalsh", dtypes).real_dtype


def _eigvalsh_shape(shapes: list[tuple], *, uplo) -> tuple:
    _check_uplo("eigvalsh", uplo)
    return _square("eigvalsh", shapes[0])[:-1]


def _eigvalsh_ref(a, *, uplo):
    """numpy.linalg.eigvalsh"""
    return np.linalg.eigvalsh(a, UPLO=uplo)


# --- svd, svdvals --------------------------------------------------------------------------------
def _svd_dtype(dtypes: list[DType], *, full_matrices, lstsq) -> tuple:
    dt = linalg_dtype("svd", dtypes)
    return dt, dt.real_dtype, dt


def _svd_shape(shapes: list[tuple], *, full_matrices, lstsq) -> tuple:
    if not isinstance(full_matrices, bool) or not isinstance(lstsq, bool):
        raise OpError(f"svd: attributes 'full_matrices' and 'lstsq' must be bools, got {full_matrices!r}, "
                      f"{lstsq!r}")
    a = _matrix("svd", shapes[0])
    batch, m, n = a[:-2], a[-2], a[-1]
    k = smin(m, n)
    if full_matrices:
        return batch + (m, m), batch + (k,), batch + (n, n)
    return batch + (m, k), batch + (k,), batch + (k, n)


def _svd_ref(a, *, full_matrices, lstsq):
    """numpy.linalg.svd: (u, s descending, vh); lstsq: as numpy.linalg.lstsq's, which refuses NaNs and
    infinities"""
    if lstsq and not np.all(np.isfinite(a)):
        raise np.linalg.LinAlgError("SVD did not converge in Linear Least Squares")
    return tuple(np.linalg.svd(a, full_matrices=full_matrices))


def _svdvals_dtype(dtypes: list[DType]) -> DType:
    return linalg_dtype("svdvals", dtypes).real_dtype


def _svdvals_shape(shapes: list[tuple]) -> tuple:
    a = _matrix("svdvals", shapes[0])
    return a[:-2] + (smin(a[-2], a[-1]),)


def _always(op) -> bool:
    return True


# --- the transforms' rules -------------------------------------------------------------------------
# Standard matrix calculus (torch's FunctionsManual.cpp, JAX's lax/linalg.py) on traced arrays.
# Complex values follow torch's convention (the cotangent is the conjugate Wirtinger derivative).
# cholesky, eigh and eigvalsh read one triangle of A and the real part of its diagonal (LAPACK's,
# and the kernels', H = tril(A, -1) + tril(A, -1)^H + Re diag A): their rules are the derivatives
# of that function, exact for any A (finite differences agree). torch and JAX give the Hermitian
# gradient G instead (JAX symmetrizes the input); both agree on every Hermitian direction, so the
# gradient through any Hermitian construction (X X^H, (X + X^H) / 2) is the same.
def _mT(x):
    return np.swapaxes(x, -1, -2)


def _mH(x):
    return conj(_mT(x))


def _re(x):
    return np.real(x) if x.meta.dtype.is_complex else x


def _rows(v):
    """v (..., n) as (..., 1, n): scales a matrix's columns."""
    return reshape(v, (*v.meta.shape[:-1], 1, v.meta.shape[-1]))


def _cols(v):
    """v (..., n) as (..., n, 1): scales a matrix's rows."""
    return reshape(v, (*v.meta.shape, 1))


def _eye(like, n, dtype, m=None):
    """The (n, m) identity (m defaults to n) of `dtype`."""
    m = n if m is None else m
    eq = emit("eq", reshape(iota(like, n), (n, 1)), reshape(iota(like, m), (1, m)))
    return emit("cast", eq, dtype=dtype)


def _diag(x):
    return np.diagonal(x, axis1=-2, axis2=-1)


def _tri(x, k: int = 0, lower: bool = True):
    """np.tril / np.triu of x (a where on an index mask: np.tril's zeros_like has no batch rule)."""
    from ir import dtypes as D

    n, m = x.meta.shape[-2:]
    above = emit("sub", reshape(iota(x, m), (1, m)), reshape(iota(x, n), (n, 1)))  # col - row
    mask = emit("le" if lower else "ge", above, full(x, (), k, D.int64))
    return emit("where", mask, x, full(x, (), 0, x.meta.dtype))


def _tril(x, k: int = 0):
    return _tri(x, k, True)


def _triu(x, k: int = 0):
    return _tri(x, k, False)


def _diag_embed(v):
    return _cols(v) * _eye(v, v.meta.shape[-1], v.meta.dtype)


def _inv(a):
    return emit("inv", a, singular="nan")


def _solve(a, b):
    return emit("solve", a, b)


def _rsolve(b, a):
    """b a^-1."""
    return _mH(_solve(_mH(a), _mH(b)))


def _trace_with(m, t):
    """tr(m t) for stacks of matrices."""
    return np.sum(_mT(m) * t, axis=(-2, -1))


def _gaps(w, like):
    """E[i, j] = w[j] - w[i], with ones on the diagonal (the divisor of the off-diagonal terms)."""
    n = w.meta.shape[-1]
    return _rows(w) - _cols(w) + _eye(like, n, w.meta.dtype)


def _offdiag(x):
    return x - _diag_embed(_diag(x))


def _nonzero(g):
    return None if is_zero(g) else g


def _hermitian_read(t, uplo):
    """The Hermitian matrix the kernels read from one triangle of t (and the real part of its diagonal)."""
    half = _tril(t, -1) if uplo == "L" else _triu(t, 1)
    return half + _mH(half) + _diag_embed(_re(_diag(t)))


def _hermitian_read_vjp(g, uplo):
    """The adjoint of _hermitian_read: a cotangent of the Hermitian matrix as one of t."""
    both = g + _mH(g)
    half = _tril(both, -1) if uplo == "L" else _triu(both, 1)
    return half + _diag_embed(_re(_diag(g)))


def _front_batch(name: str):
    """The factorisations work on the last two dims: the batch dim in front, the op as it is."""
    def batch(vals, dims, **attrs):
        out = emit(name, to_front(vals[0], dims[0]), **attrs)
        return out, (tuple(0 for _ in out) if isinstance(out, tuple) else 0)

    return batch


def _pad_batch(x, k: int):
    """x (batch dim first) with k unit dims after it, so its own batch dims broadcast as before."""
    return reshape(x, (x.meta.shape[0], *(1,) * k, *x.meta.shape[1:])) if k > 0 else x


def _solve_batch(vals, dims):
    (a, b), (da, db) = vals, dims
    sa, sb = a.ndim - (da is not None) - 2, b.ndim - (db is not None) - 2  # the examples' batch ranks
    a = a if da is None else _pad_batch(to_front(a, da), sb - sa)
    b = b if db is None else _pad_batch(to_front(b, db), sa - sb)
    return emit("solve", a, b), 0


# det, slogdet, inv, solve: d det = det tr(A^-1 dA), d A^-1 = -A^-1 dA A^-1 (at a singular matrix
# det's derivative is NaN: the adjugate is not formed).
def _det_vjp(g, a, *, out):
    return (_cols(_cols(g * conj(out))) * _mH(_inv(a)),)


def _det_jvp(ts, a, *, out):
    return out * _trace_with(_inv(a), ts[0])


def _slogdet_vjp(g, a, *, out):
    g_sign, g_log = g
    sign = out[0]
    w = g_log
    if sign.meta.dtype.is_complex:  # d sign = i sign Im tr(A^-1 dA)
        w = g_log + 1j * np.imag(conj(sign) * g_sign)
    return (_cols(_cols(w)) * _mH(_inv(a)),)


def _slogdet_jvp(ts, a, *, out):
    tau = _trace_with(_inv(a), ts[0])
    if not tau.meta.dtype.is_complex:
        return None, tau
    return out[0] * (1j * np.imag(tau)), np.real(tau)


def _inv_vjp(g, a, *, out, singular="raise"):
    h = _mH(out)
    return (-np.matmul(h, np.matmul(g, h)),)


def _inv_jvp(ts, a, *, out, singular="raise"):
    return -np.matmul(out, np.matmul(ts[0], out))


def _solve_vjp(g, a, b, *, out):
    gb = _solve(_mH(a), g)
    return -np.matmul(gb, _mH(out)), gb


def _solve_jvp(ts, a, b, *, out):
    ta, tb = ts
    rhs = total(tb, None if ta is None else -np.matmul(ta, out))
    return _solve(a, rhs)


# cholesky: H = L L^H, dL = L phi(L^-1 dH L^-H), phi: the lower triangle with half the diagonal
def _phi(x):
    return _tril(x) - 0.5 * _diag_embed(_diag(x))


def _cholesky_vjp(g, a, *, out, upper=False):
    low, g_low = (_mH(out), _mH(g)) if upper else (out, g)
    linv = _inv(low)
    gh = np.matmul(_mH(linv), np.matmul(_phi(np.matmul(_mH(low), g_low)), linv))
    return (_hermitian_read_vjp(gh, "U" if upper else "L"),)


def _cholesky_jvp(ts, a, *, out, upper=False):
    low = _mH(out) if upper else out
    linv = _inv(low)
    dh = _hermitian_read(ts[0], "U" if upper else "L")
    dl = np.matmul(low, _phi(np.matmul(linv, np.matmul(dh, _mH(linv)))))
    return _mH(dl) if upper else dl


# qr (torch's linalg_qr_backward / linalg_qr_jvp): R's diagonal is real, which fixes the gauge
def _qr_dims(a, mode):
    from aot.frontend.shapes import dim_le

    m, n = a.meta.shape[-2:]
    if mode == "complete" and not dim_le(m, n):
        raise _not_differentiable("qr", "mode='complete' with M > N: Q's last M - N columns are any "
                                  "basis of the complement, not functions of A; use mode='reduced'")
    return m, n, dim_le(n, m)


def _not_differentiable(op: str, why: str):
    from aot.func import TransformError

    return TransformError(f"{op}: not differentiable for {why}")


def _qr_vjp(g, a, *, out, mode="reduced"):
    m, n, tall = _qr_dims(a, mode)
    (gq, gr), (q, r) = (_nonzero(x) for x in g), out
    ga = total(None if gr is None else np.matmul(gr, _mH(r)), None if gq is None else -np.matmul(_mH(q), gq))
    if ga is None:
        return (None,)
    if tall:  # syminv's adjoint: X + X^H of the upper triangle, the real part of the diagonal halved
        up = _triu(ga)
        sym = up + _mH(up)
        sym = sym - 0.5 * _diag_embed(_re(_diag(sym)))
        return (_rsolve(total(np.matmul(q, sym), gq), _mH(r)),)
    x = -ga
    skew = _tril(x - _mH(x))
    if skew.meta.dtype.is_complex:  # the imaginary part of the diagonal halved
        skew = skew - _diag_embed(0.5j * np.imag(_diag(skew)))
    left = _rsolve(np.matmul(q, skew), _mH(r[..., :, :m]))
    pad = full(left, (*left.meta.shape[:-1], n - m), 0, left.meta.dtype)
    ga = np.concatenate([left, pad], axis=-1)
    return (ga if gr is None else ga + np.matmul(q, gr),)


def _qr_jvp(ts, a, *, out, mode="reduced"):
    m, _, tall = _qr_dims(a, mode)
    (q, r), t = out, ts[0]
    if tall:  # dR = syminv(sym(Q^H dA R^-1)) R, dQ = (dA - Q dR) R^-1
        dx = _rsolve(np.matmul(_mH(q), t), r)
        sym = dx + _mH(dx)
        dr = np.matmul(_triu(sym) - 0.5 * _diag_embed(_diag(sym)), r)
        return _rsolve(t - np.matmul(q, dr), r), dr
    dx = _rsolve(np.matmul(_mH(q), t[..., :, :m]), r[..., :, :m])  # Q^H dQ = its skew completion
    if dx.meta.dtype.is_complex:
        low = _tril(dx) - _diag_embed(np.real(_diag(dx)))
        skew = low - _mH(low)
        skew = skew - 0.5 * _diag_embed(_diag(skew))
    else:
        low = _tril(dx, -1)
        skew = low - _mT(low)
    dq = np.matmul(q, skew)
    return dq, np.matmul(_mH(q), t - np.matmul(dq, r))


# eigh, eigvalsh: A V = V diag(w), V^H dV's diagonal is zero (the gauge of torch and JAX)
def _eigh_vjp(g, a, *, out, uplo="L"):
    (gw, gv), (w, v) = g, out
    inner = _diag_embed(gw)
    if not is_zero(gv):
        x = np.matmul(_mH(v), gv)
        inner = inner + _offdiag(0.5 * (x - _mH(x)) / _gaps(w, x))
    return (_hermitian_read_vjp(np.matmul(v, np.matmul(inner, _mH(v))), uplo),)


def _eigh_jvp(ts, a, *, out, uplo="L"):
    w, v = out
    dp = np.matmul(_mH(v), np.matmul(_hermitian_read(ts[0], uplo), v))
    return _re(_diag(dp)), np.matmul(v, _offdiag(dp / _gaps(w, dp)))


def _eigvalsh_vjp(g, a, *, out, uplo="L"):
    v = emit("eigh", a, uplo=uplo)[1]
    return (_hermitian_read_vjp(np.matmul(v * _rows(g), _mH(v)), uplo),)


def _eigvalsh_jvp(ts, a, *, out, uplo="L"):
    v = emit("eigh", a, uplo=uplo)[1]
    return _re(np.sum(conj(v) * np.matmul(_hermitian_read(ts[0], uplo), v), axis=-2))


# svd, svdvals (torch's svd_backward / linalg_svd_jvp): the vectors' common phase is the gauge.
# full_matrices' extra columns U2 of U (rows Vh2 of Vh) are a basis of the complement of U1's: they
# move with U1 by the smallest rotation, dU2 = -U1 dU1^H U2 (torch drops them), so what depends on
# U2 only through U2 U2^H = I - U1 U1^H has its derivative. lstsq only changes which inputs raise.
def _svd_split(out, full_matrices):
    """(U1, S, Vh1, U2 or None, Vh2 or None): the reduced factors and full_matrices' extra ones."""
    u, s, vh = out
    if not full_matrices:
        return u, s, vh, None, None
    m, k, n = u.meta.shape[-2], s.meta.shape[-1], vh.meta.shape[-1]
    u2 = None if dims_equal(m, k) else u[..., :, k:]
    vh2 = None if dims_equal(n, k) else vh[..., k:, :]
    return u[..., :, :k], s, vh[..., :k, :], u2, vh2


def _svd_vjp(g, a, *, out, full_matrices=True, lstsq=False):
    u, s, vh, u2, vh2 = _svd_split(out, full_matrices)
    k = s.meta.shape[-1]
    gu, gs, gvh = (_nonzero(x) for x in g)
    if full_matrices and gu is not None:  # U2's cotangent moved onto U1 (dU2 = -U1 dU1^H U2's adjoint)
        gu1 = gu[..., :, :k]
        gu = gu1 if u2 is None else gu1 - np.matmul(u2, np.matmul(_mH(gu[..., :, k:]), u))
    if full_matrices and gvh is not None:
        gvh1 = gvh[..., :k, :]
        gvh = gvh1 if vh2 is None else gvh1 - np.matmul(np.matmul(vh, _mH(gvh[..., k:, :])), vh2)
    if gu is None and gvh is None:
        return (None,) if gs is None else (np.matmul(u * _rows(gs), vh),)
    m, n = a.meta.shape[-2:]
    e = _gaps(s * s, s)
    uhgu = None if gu is None else _skew(np.matmul(_mH(u), gu))
    vhgv = None if gvh is None else _skew(np.matmul(vh, _mH(gvh)))
    inner = total(None if uhgu is None else uhgu * _rows(s), None if vhgv is None else _cols(s) * vhgv) / e
    inner = total(inner, None if gs is None else _diag_embed(gs))
    if uhgu is not None and uhgu.meta.dtype.is_complex:
        inner = inner + _diag_embed(_diag(uhgu) / (2 * s))
    if gu is not None and not dims_equal(m, k):  # U's columns span less than C^m
        gus = gu / _rows(s)
        left = np.matmul(u, inner) + gus - np.matmul(u, np.matmul(_mH(u), gus))
        return (np.matmul(left, vh),)
    if gvh is not None and not dims_equal(n, k):
        sgv = gvh / _cols(s)
        right = np.matmul(inner, vh) + sgv - np.matmul(np.matmul(sgv, _mH(vh)), vh)
        return (np.matmul(u, right),)
    return (np.matmul(u, np.matmul(inner, vh)),)


def _skew(x):
    return x - _mH(x)


def _svd_jvp(ts, a, *, out, full_matrices=True, lstsq=False):
    u, s, vh, u2, vh2 = _svd_split(out, full_matrices)
    t = ts[0]
    m, n = a.meta.shape[-2:]
    k = s.meta.shape[-1]
    v = _mH(vh)
    dp = np.matmul(_mH(u), np.matmul(t, v))
    ds = _re(_diag(dp))
    dp = dp - _diag_embed(ds)
    e = _gaps(s * s, s)
    du_in = (dp * _rows(s) + _mH(dp * _rows(s))) / e
    dvh_in = -(_cols(s) * dp + _mH(_cols(s) * dp)) / e
    if dp.meta.dtype.is_complex:  # the imaginary diagonal of U^H dA V split between U and V
        half = _diag_embed(_diag(dp) / (2 * s))
        du_in, dvh_in = du_in + half, dvh_in + half
    du, dvh = np.matmul(u, du_in), np.matmul(dvh_in, vh)
    if not dims_equal(m, k):
        tvs = np.matmul(t, v / _rows(s))
        du = du + tvs - np.matmul(u, np.matmul(_mH(u), tvs))
    if not dims_equal(n, k):
        sut = np.matmul(_mH(u) / _cols(s), t)
        dvh = dvh + sut - np.matmul(np.matmul(sut, v), vh)
    if u2 is not None:
        du = np.concatenate([du, -np.matmul(u, np.matmul(_mH(du), u2))], axis=-1)
    if vh2 is not None:
        dvh = np.concatenate([dvh, -np.matmul(np.matmul(vh2, _mH(dvh)), vh)], axis=-2)
    return du, ds, dvh


def _svdvals_vjp(g, a, *, out):
    u, _, vh = emit("svd", a, full_matrices=False, lstsq=False)
    return (np.matmul(u * _rows(g), vh),)


def _svdvals_jvp(ts, a, *, out):
    u, _, vh = emit("svd", a, full_matrices=False, lstsq=False)
    return _re(np.sum(conj(u) * np.matmul(ts[0], _mH(vh)), axis=-2))


defop("det", arity=1, dtype_rule=_same_dtype("det"), shape_rule=_det_shape, ref=np.linalg.det,
      traits=KERNEL_TRAITS, numpy_names=("linalg.det",),
      vjp=_det_vjp, jvp=_det_jvp, batch=_front_batch("det"))
defop("slogdet", arity=1, dtype_rule=_slogdet_dtype, shape_rule=_slogdet_shape, ref=_slogdet_ref,
      traits=KERNEL_TRAITS, numpy_names=("linalg.slogdet",), num_results=2,
      vjp=_slogdet_vjp, jvp=_slogdet_jvp, batch=_front_batch("slogdet"))
defop("inv", arity=1, dtype_rule=_same_dtype("inv"), shape_rule=_inv_shape, ref=_inv_ref,
      attrs={"singular": "raise"}, traits=KERNEL_TRAITS, numpy_names=("linalg.inv",), raises=_inv_raises,
      vjp=_inv_vjp, jvp=_inv_jvp, batch=_front_batch("inv"))
defop("solve", arity=2, dtype_rule=_same_dtype("solve"), shape_rule=_solve_shape, ref=_solve_ref,
      traits=KERNEL_TRAITS, numpy_names=("linalg.solve",), raises=_always,
      vjp=_solve_vjp, jvp=_solve_jvp, batch=_solve_batch)
defop("cholesky", arity=1, dtype_rule=_same_dtype("cholesky"), shape_rule=_cholesky_shape,
      ref=_cholesky_ref, attrs={"upper": False}, traits=KERNEL_TRAITS, numpy_names=("linalg.cholesky",),
      raises=_always, vjp=_cholesky_vjp, jvp=_cholesky_jvp, batch=_front_batch("cholesky"))
defop("qr", arity=1, dtype_rule=_qr_dtype, shape_rule=_qr_shape, ref=_qr_ref, attrs={"mode": "reduced"},
      traits=KERNEL_TRAITS, numpy_names=("linalg.qr",), num_results=2,
      vjp=_qr_vjp, jvp=_qr_jvp, batch=_front_batch("qr"))
defop("eigh", arity=1, dtype_rule=_eigh_dtype, shape_rule=_eigh_shape, ref=_eigh_ref, attrs={"uplo": "L"},
      traits=KERNEL_TRAITS, numpy_names=("linalg.eigh",), num_results=2, raises=_always,
      vjp=_eigh_vjp, jvp=_eigh_jvp, batch=_front_batch("eigh"))
defop("eigvalsh", arity=1, dtype_rule=_eigvalsh_dtype, shape_rule=_eigvalsh_shape, ref=_eigvalsh_ref,
      attrs={"uplo": "L"}, traits=KERNEL_TRAITS, numpy_names=("linalg.eigvalsh",), raises=_always,
      vjp=_eigvalsh_vjp, jvp=_eigvalsh_jvp, batch=_front_batch("eigvalsh"))
defop("svd", arity=1, dtype_rule=_svd_dtype, shape_rule=_svd_shape, ref=_svd_ref,
      attrs={"full_matrices": True, "lstsq": False}, traits=KERNEL_TRAITS, numpy_names=("linalg.svd",),
      num_results=3, raises=_always, vjp=_svd_vjp, jvp=_svd_jvp, batch=_front_batch("svd"))
defop("svdvals", arity=1, dtype_rule=_svdvals_dtype, shape_rule=_svdvals_shape, ref=np.linalg.svdvals,
      traits=KERNEL_TRAITS, numpy_names=("linalg.svdvals",), raises=_always,
      vjp=_svdvals_vjp, jvp=_svdvals_jvp, batch=_front_batch("svdvals"))
