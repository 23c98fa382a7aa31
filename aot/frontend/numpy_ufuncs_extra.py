"""ufuncs that decompose into several core ops and so are not one row's: the two-output ufuncs
(np.modf, np.frexp, np.divmod) and the vector gufuncs (np.vecdot, np.matvec, np.vecmat).

numpy_ufuncs merges DECOMPOSED into its table of decomposed ufuncs: each builder gets the operands
already cast to numpy's loop dtypes (ufunc.resolve_dtypes) and returns the loop's outputs in their
dtypes. This module imports only the emitter and operands (numpy_ufuncs imports it)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .emitter import Emitter, abstract_of
from .operands import cast, scalar_like
from .shapes import broadcast_shapes, dims_equal, fmt_shape


def _emit(em: Emitter, op: str, *operands: Any, **attrs: Any):
    return em.emit(op, list(operands), attrs)


def _modf(em: Emitter, x: Any):
    """(fraction, integral part) as C's modf: the fraction keeps x's sign (-0.0 for -2.0), and is
    +-0 for infinities."""
    t = _emit(em, "trunc", x)
    dt = abstract_of(x).dtype
    inf, zero = _emit(em, "isinf", x), scalar_like(em, 0.0, dt)
    # the fraction of an infinity is 0 (computed without inf - inf)
    frac = _emit(em, "sub", _emit(em, "where", inf, zero, x), _emit(em, "where", inf, zero, t))
    return _emit(em, "copysign", frac, x), t


def _frexp(em: Emitter, x: Any):
    """(mantissa, exponent): x = mantissa * 2**exponent with 0.5 <= |mantissa| < 1 (x itself and 0
    for zeros, infinities and nans)."""
    e = _emit(em, "frexp_exponent", x)
    return _emit(em, "ldexp", x, _emit(em, "neg", e)), e


def _divmod(em: Emitter, a: Any, b: Any):
    return _emit(em, "floordiv", a, b), _emit(em, "mod", a, b)


# --- vector gufuncs ----------------------------------------------------------------------------------

def _core(em: Emitter, name: str, signature: str, x: Any, k: int, i: int, need: int):
    shape = abstract_of(x).shape
    if len(shape) < need:
        raise ValueError(f"{name}: Input operand {i} does not have enough dimensions (has {len(shape)}, "
                         f"gufunc core with signature {signature} requires {need})")
    return shape[k]


def _mismatch(name: str, signature: str, i: int, got: Any, want: Any) -> ValueError:
    return ValueError(f"{name}: Input operand {i} has a mismatch in its core dimension 0, with gufunc "
                      f"signature {signature} (size {got} is different from {want})")


def _dot_sum(em: Emitter, a: Any, b: Any, axis: int):
    """sum over `axis` of a * b (numpy's loops: bools or'ed over and'ed pairs, integers wrapping in
    their dtype)."""
    dt = abstract_of(a).dtype
    ab = _emit(em, "logical_and" if dt.is_bool else "mul", a, b)
    n = abstract_of(ab).ndim
    r = _emit(em, "any" if dt.is_bool else "sum", ab, axes=(axis % n,), keepdims=False)
    return cast(em, r, dt)


def _conj(em: Emitter, x: Any):
    return _emit(em, "conj", x) if abstract_of(x).dtype.is_complex else x


def _vecdot(em: Emitter, x1: Any, x2: Any):
    sig = "(n),(n)->()"
    n1, n2 = (_core(em, "vecdot", sig, v, -1, i, 1) for i, v in enumerate((x1, x2)))
    if not dims_equal(n1, n2):
        raise _mismatch("vecdot", sig, 1, n2, n1)
    _loop_shape(abstract_of(x1).shape[:-1], abstract_of(x2).shape[:-1])
    return _dot_sum(em, _conj(em, x1), x2, -1)


def _matvec(em: Emitter, x1: Any, x2: Any):
    sig = "(m,n),(n)->(m)"
    n1 = _core(em, "matvec", sig, x1, -1, 0, 2)
    n2 = _core(em, "matvec", sig, x2, -1, 1, 1)
    if not dims_equal(n1, n2):
        raise _mismatch("matvec", sig, 1, n2, n1)
    _loop_shape(abstract_of(x1).shape[:-2], abstract_of(x2).shape[:-1])
    v = _emit(em, "expand_dims", x2, axes=(abstract_of(x2).ndim - 1,))
    return _dot_sum(em, x1, v, -1)


def _vecmat(em: Emitter, x1: Any, x2: Any):
    sig = "(n),(n,m)->(m)"
    n1 = _core(em, "vecmat", sig, x1, -1, 0, 1)
    n2 = _core(em, "vecmat", sig, x2, -2, 1, 2)
    if not dims_equal(n1, n2):
        raise _mismatch("vecmat", sig, 1, n2, n1)
    _loop_shape(abstract_of(x1).shape[:-1], abstract_of(x2).shape[:-2])
    v = _emit(em, "expand_dims", _conj(em, x1), axes=(abstract_of(x1).ndim,))
    return _dot_sum(em, v, x2, -2)


def _loop_shape(a: tuple, b: tuple) -> tuple:
    try:
        return broadcast_shapes(a, b)
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {fmt_shape(a)} and {fmt_shape(b)}") from None


DECOMPOSED: dict[np.ufunc, Callable] = {np.modf: _modf, np.frexp: _frexp, np.divmod: _divmod}
for _name, _build in (("vecdot", _vecdot), ("matvec", _matvec), ("vecmat", _vecmat)):
    if isinstance(getattr(np, _name, None), np.ufunc):  # numpy >= 2.0 (vecdot) / 2.2 (matvec, vecmat)
        DECOMPOSED[getattr(np, _name)] = _build
