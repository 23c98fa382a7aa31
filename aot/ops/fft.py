"""FFTs along one axis with numpy 2's semantics: c2c (fft/ifft), r2c (rfft) and c2r (irfft).

Dtypes as numpy 2: float32 and complex64 stay single precision, everything else computes in double
(int -> complex128); rfft refuses complex input; irfft returns the real type of the complex one.
`n` is the transform length (None: the input's length; for irfft 2 * (m - 1)); it may be symbolic.
"""
from __future__ import annotations

import numpy as np

from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError
from ir.symbols import is_static

from ._define import check_kind, defop
from ._shapes import check_axis, check_dim, floordiv

NORMS = ("backward", "ortho", "forward")
FFT_TRAITS = {"linear", "opaque_kernel", "fft"}


def _check_norm(op: str, norm) -> None:
    if norm not in NORMS:
        raise OpError(f"{op}: norm must be one of {NORMS}, got {norm!r}")


def _fft_dtype(dtypes: list[DType], *, axis, n, norm, inverse) -> DType:
    _check_norm("fft", norm)
    if not isinstance(inverse, bool):
        raise OpError(f"fft: attribute 'inverse' must be a bool, got {inverse!r}")
    return dtypes[0].complex_dtype


def _rfft_dtype(dtypes: list[DType], *, axis, n, norm) -> DType:
    _check_norm("rfft", norm)
    check_kind("rfft", dtypes, dtypes[0], "bif")
    return dtypes[0].complex_dtype


def _irfft_dtype(dtypes: list[DType], *, axis, n, norm) -> DType:
    _check_norm("irfft", norm)
    return dtypes[0].complex_dtype.real_dtype


def _length(op: str, shape: tuple, axis, n, default):
    """The transform length: `n`, or `default(dim)`; numpy refuses lengths below 1."""
    axis = check_axis(op, axis, len(shape))
    n = default(shape[axis]) if n is None else check_dim(op, n, "n")
    if is_static(n) and n < 1:
        raise OpError(f"{op}: invalid number of FFT data points ({n}) for shape {shape} along axis {axis}")
    return axis, n


def _with_dim(shape: tuple, axis: int, d) -> tuple:
    return shape[:axis] + (d,) + shape[axis + 1:]


def _fft_shape(shapes: list[tuple], *, axis, n, norm, inverse) -> tuple:
    axis, n = _length("fft", tuple(shapes[0]), axis, n, lambda m: m)
    return _with_dim(tuple(shapes[0]), axis, n)


def _rfft_shape(shapes: list[tuple], *, axis, n, norm) -> tuple:
    axis, n = _length("rfft", tuple(shapes[0]), axis, n, lambda m: m)
    return _with_dim(tuple(shapes[0]), axis, floordiv(n, 2) + 1)


def _irfft_shape(shapes: list[tuple], *, axis, n, norm) -> tuple:
    axis, n = _length("irfft", tuple(shapes[0]), axis, n, lambda m: 2 * (m - 1))
    return _with_dim(tuple(shapes[0]), axis, n)


def _int(n):
    return None if n is None else int(n)


def _fft_reference(x, *, axis, n, norm, inverse):
    fn = np.fft.ifft if inverse else np.fft.fft
    return fn(x, n=_int(n), axis=axis, norm=norm)


def _rfft_reference(x, *, axis, n, norm):
    return np.fft.rfft(x, n=_int(n), axis=axis, norm=norm)


def _irfft_reference(x, *, axis, n, norm):
    return np.fft.irfft(x, n=_int(n), axis=axis, norm=norm)


defop("fft", arity=1, dtype_rule=_fft_dtype, shape_rule=_fft_shape, ref=_fft_reference,
      attrs={"axis": REQUIRED, "n": None, "norm": "backward", "inverse": False}, traits=FFT_TRAITS,
      numpy_names=("fft.fft", "fft.ifft"))
defop("rfft", arity=1, dtype_rule=_rfft_dtype, shape_rule=_rfft_shape, ref=_rfft_reference,
      attrs={"axis": REQUIRED, "n": None, "norm": "backward"}, traits=FFT_TRAITS, numpy_names=("fft.rfft",))
defop("irfft", arity=1, dtype_rule=_irfft_dtype, shape_rule=_irfft_shape, ref=_irfft_reference,
      attrs={"axis": REQUIRED, "n": None, "norm": "backward"}, traits=FFT_TRAITS, numpy_names=("fft.irfft",))
