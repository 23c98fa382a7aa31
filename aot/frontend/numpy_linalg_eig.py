"""numpy.linalg.eig and numpy.linalg.eigvals (rows of aot/ops/linalg_eig.py, registered with
@translates), and np.roots, which numpy computes as the eigenvalues of the polynomial's companion
matrix (numpy/lib/_polynomial_impl.py), decomposed the same way (DECOMPOSITIONS).

The results are always complex, numpy's one value-dependent dtype in np.linalg (see
aot/ops/linalg_eig.py): numpy returns real arrays when every eigenvalue (every root) is real.

np.roots strips the coefficients' leading and trailing zeros. Trailing zeros are roots at zero,
which numpy appends after the others: they do not change the result's length,
len(p) - 1 - (leading zeros), and compiled code keeps them as a zero block of the companion matrix
(its subdiagonal cut where the last nonzero coefficient is), whose eigenvalues the QR algorithm
returns as exact zeros, last, as numpy does. Leading zeros shorten the result by a count known only
from the values: compiled code requires p[0] != 0 at run time (ValueError otherwise).
Coefficients known while tracing (numbers, closed-over arrays) are numpy's own np.roots, computed
then, with numpy's exact result and dtype; a list holding traced scalars stacks into an array.
numpy's dispatcher for np.roots iterates the coefficients (which would pin a symbolic length), so
the tracer substitutes np.roots while it traces (aot/compiler/conversions.py); a function that
bound numpy's np.roots before (`aot.compile(np.roots)`) still works, compiled once per length.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ir import dtypes as irdt

from . import numpy_reductions as red
from .emitter import Emitter, abstract_of
from .indexing import slice_axis
from .numpy_conversions import np_asarray
from .numpy_linalg_kernels import _stacked_square
from .numpy_shape import expand_dims, squeeze
from .numpy_ufuncs import emit
from .operands import cast, constant, scalar_like
from .registry import translates
from .shapes import dim_le
from .static_args import is_traced

EigResult = np.linalg._linalg.EigResult  # numpy's named result (np.linalg.eig(a).eigenvectors)


@translates("eig")
def np_eig(em: Emitter, a: Any):
    return EigResult(*emit(em, "eig", _stacked_square(em, a)))


@translates("eigvals")
def np_eigvals(em: Emitter, a: Any):
    return emit(em, "eigvals", _stacked_square(em, a))


def np_roots(em: Emitter, p: Any):
    if not _holds_traced(em, p):
        return constant(em, np.roots(p))
    p = np_asarray(em, p)  # a list of traced scalars stacks, as numpy's atleast_1d makes an array
    av = abstract_of(p)
    if av.ndim > 1:
        raise ValueError("Input must be a rank-1 array.")
    if av.ndim == 0 or dim_le(av.shape[0], 1):  # at most a constant: numpy's empty float64 array
        return constant(em, np.zeros(0))
    if not av.dtype.is_inexact:
        p = cast(em, p, irdt.float64)
    return emit(em, "eigvals", _companion(em, p))


def _holds_traced(em: Emitter, x: Any) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_holds_traced(em, v) for v in x)
    return is_traced(em, x)


def _companion(em: Emitter, p: Any):
    """numpy's companion matrix of p (first row -p[1:] / p[0], ones below the diagonal), with the
    subdiagonal cut at the last nonzero coefficient (trailing zeros: an exact zero block), and the
    run-time check that p[0] is nonzero."""
    dt = abstract_of(p).dtype
    n = abstract_of(p).shape[0]
    lead = squeeze(em, slice_axis(em, p, 0, 0, 1), 0)  # p[0] (an integer index would pin len(p))
    # 0 - p[1:] / p[0]: numpy's -p[1:] / p[0], but +0.0 for zeros (the trailing zero roots are +0.0)
    row0 = emit(em, "sub", scalar_like(em, 0, dt), emit(em, "div", slice_axis(em, p, 0, 1, None), lead))
    index = emit(em, "iota", n=n, dtype=irdt.int64)
    nonzero = emit(em, "ne", p, scalar_like(em, 0, dt))
    at_nonzero = emit(em, "where", nonzero, index, scalar_like(em, -1, irdt.int64))
    last = red.reduce(em, "max", at_nonzero, (0,), False)  # the last nonzero coefficient's index
    rows = expand_dims(em, emit(em, "iota", n=n - 1, dtype=irdt.int64), (1,))
    cols = expand_dims(em, emit(em, "iota", n=n - 1, dtype=irdt.int64), (0,))
    one = scalar_like(em, 1, irdt.int64)
    below = emit(em, "logical_and", emit(em, "eq", rows, emit(em, "add", cols, one)),
                 emit(em, "lt", rows, last))
    a = emit(em, "where", emit(em, "eq", rows, scalar_like(em, 0, irdt.int64)), expand_dims(em, row0, (0,)),
             cast(em, below, dt))
    ok = emit(em, "ne", lead, scalar_like(em, 0, dt))
    return emit(em, "require", a, ok, status="ROOTS_LEADING_ZERO")


DECOMPOSITIONS = {np.roots: np_roots}
