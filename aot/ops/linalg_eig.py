"""The general (non-Hermitian) eigenproblem with numpy.linalg's semantics: eig and eigvals over
stacks of square matrices (..., N, N).

Results are always complex: complex64 for float32 and complex64 operands, complex128 otherwise
(numpy.linalg's _commonType, computing in double precision). This is the one place where numpy's
result dtype depends on the data: numpy returns real eigenvalues and eigenvectors for a real
matrix whose eigenvalues all have zero imaginary parts, and compiled code cannot choose its
result type at run time, so it answers as jax.numpy.linalg.eig does; the references cast numpy's
results accordingly. The kernel computes in complex arithmetic, so for a real matrix a real
eigenvalue carries an imaginary part of rounding size (|Im w| ~ eps ||A||, numpy's is exactly 0:
`w.real` is numpy's array up to rounding) and complex ones pair up as conjugates up to rounding.
A NaN or an infinity raises numpy's LinAlgError "Array must not contain infs or NaNs", a QR
iteration that does not converge "Eigenvalues did not converge". Eigenvectors are the columns of
v, each of unit 2-norm (their phases, and the eigenvalues' order, are LAPACK's choices and may
differ).
"""
from __future__ import annotations

import numpy as np

from ir.dtypes import DType

from ._define import defop
from ._transforms import conj, emit, is_zero
from .linalg_kernels import (
    KERNEL_TRAITS,
    _always,
    _cols,
    _diag,
    _diag_embed,
    _front_batch,
    _gaps,
    _mH,
    _offdiag,
    _rows,
    _solve,
    _square,
    linalg_dtype,
)


def eig_dtype(op: str, dtypes: list[DType]) -> DType:
    """The complex dtype of numpy.linalg's computation for these operands."""
    return linalg_dtype(op, dtypes).complex_dtype


def _eig_dtype(dtypes: list[DType]) -> tuple:
    dt = eig_dtype("eig", dtypes)
    return dt, dt


def _eig_shape(shapes: list[tuple]) -> tuple:
    a = _square("eig", shapes[0])
    return a[:-1], a


def _eig_ref(a):
    """numpy.linalg.eig, always complex: (eigenvalues, eigenvectors as columns)"""
    w, v = np.linalg.eig(a)
    dt = np.result_type(w.dtype, np.complex64)
    return w.astype(dt), v.astype(dt)


def _eigvals_dtype(dtypes: list[DType]) -> DType:
    return eig_dtype("eigvals", dtypes)


def _eigvals_shape(shapes: list[tuple]) -> tuple:
    return _square("eigvals", shapes[0])[:-1]


def _eigvals_ref(a):
    """numpy.linalg.eigvals, always complex"""
    w = np.linalg.eigvals(a)
    return w.astype(np.result_type(w.dtype, np.complex64))


# The transforms' rules (torch's linalg_eig_backward / linalg_eig_jvp): A V = V diag(w) with unit
# columns, dw = diag(V^-1 dA V). The vectors are defined up to a phase each (the gauge): dV keeps
# the columns' norms (Re v_i^H dv_i = 0) and V^-1 dV has a zero diagonal before that projection, as
# torch's; only losses independent of the phases (|V|, V diag(w) V^-1, ...) have derivatives. A
# real A's cotangent is the real part (the interpreter takes it). Repeated eigenvalues divide by 0.
def _eig_vjp(g, a, *, out):
    (gw, gv), (w, v) = g, out
    vh = _mH(v)
    inner = _diag_embed(gw)
    if not is_zero(gv):
        x = np.matmul(vh, gv)
        x = x - np.matmul(vh, v * _rows(np.real(_diag(x))))
        inner = inner + _offdiag(x / _gaps(conj(w), w))
    return (_solve(vh, np.matmul(inner, vh)),)


def _eig_jvp(ts, a, *, out):
    w, v = out
    dp = _solve(v, np.matmul(ts[0], v))
    dv = np.matmul(v, _offdiag(dp / _gaps(w, w)))
    dv = dv - v * _rows(np.real(np.sum(conj(v) * dv, axis=-2)))
    return _diag(dp), dv


def _eigvals_vjp(g, a, *, out):
    vh = _mH(emit("eig", a)[1])  # numpy's eig and eigvals order the eigenvalues alike (LAPACK's)
    return (_solve(vh, _cols(g) * vh),)


def _eigvals_jvp(ts, a, *, out):
    v = emit("eig", a)[1]
    return _diag(_solve(v, np.matmul(ts[0], v)))


defop("eig", arity=1, dtype_rule=_eig_dtype, shape_rule=_eig_shape, ref=_eig_ref, traits=KERNEL_TRAITS,
      numpy_names=("linalg.eig",), num_results=2, raises=_always, vjp=_eig_vjp, jvp=_eig_jvp,
      batch=_front_batch("eig"))
defop("eigvals", arity=1, dtype_rule=_eigvals_dtype, shape_rule=_eigvals_shape, ref=_eigvals_ref,
      traits=KERNEL_TRAITS, numpy_names=("linalg.eigvals",), raises=_always, vjp=_eigvals_vjp,
      jvp=_eigvals_jvp, batch=_front_batch("eigvals"))
