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
an infinity returns NaNs, as LAPACK's heevd does.
"""
from __future__ import annotations

import numpy as np

from ir import dtypes as D
from ir.dtypes import DType
from ir.opdef import OpError, broadcast_shapes
from ir.symbols import dims_equal

from ._define import check_kind, defop
from ._shapes import smin

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


defop("det", arity=1, dtype_rule=_same_dtype("det"), shape_rule=_det_shape, ref=np.linalg.det,
      traits=KERNEL_TRAITS, numpy_names=("linalg.det",))
defop("slogdet", arity=1, dtype_rule=_slogdet_dtype, shape_rule=_slogdet_shape, ref=_slogdet_ref,
      traits=KERNEL_TRAITS, numpy_names=("linalg.slogdet",), num_results=2)
defop("inv", arity=1, dtype_rule=_same_dtype("inv"), shape_rule=_inv_shape, ref=_inv_ref,
      attrs={"singular": "raise"}, traits=KERNEL_TRAITS, numpy_names=("linalg.inv",), raises=_inv_raises)
defop("solve", arity=2, dtype_rule=_same_dtype("solve"), shape_rule=_solve_shape, ref=_solve_ref,
      traits=KERNEL_TRAITS, numpy_names=("linalg.solve",), raises=_always)
defop("cholesky", arity=1, dtype_rule=_same_dtype("cholesky"), shape_rule=_cholesky_shape,
      ref=_cholesky_ref, attrs={"upper": False}, traits=KERNEL_TRAITS, numpy_names=("linalg.cholesky",),
      raises=_always)
defop("qr", arity=1, dtype_rule=_qr_dtype, shape_rule=_qr_shape, ref=_qr_ref, attrs={"mode": "reduced"},
      traits=KERNEL_TRAITS, numpy_names=("linalg.qr",), num_results=2)
defop("eigh", arity=1, dtype_rule=_eigh_dtype, shape_rule=_eigh_shape, ref=_eigh_ref, attrs={"uplo": "L"},
      traits=KERNEL_TRAITS, numpy_names=("linalg.eigh",), num_results=2, raises=_always)
defop("eigvalsh", arity=1, dtype_rule=_eigvalsh_dtype, shape_rule=_eigvalsh_shape, ref=_eigvalsh_ref,
      attrs={"uplo": "L"}, traits=KERNEL_TRAITS, numpy_names=("linalg.eigvalsh",), raises=_always)
defop("svd", arity=1, dtype_rule=_svd_dtype, shape_rule=_svd_shape, ref=_svd_ref,
      attrs={"full_matrices": True, "lstsq": False}, traits=KERNEL_TRAITS, numpy_names=("linalg.svd",),
      num_results=3, raises=_always)
defop("svdvals", arity=1, dtype_rule=_svdvals_dtype, shape_rule=_svdvals_shape, ref=np.linalg.svdvals,
      traits=KERNEL_TRAITS, numpy_names=("linalg.svdvals",), raises=_always)
