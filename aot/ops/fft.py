"""FFTs along one axis with numpy 2's semantics: c2c (fft/ifft), r2c (rfft) and c2r (irfft).

Dtypes as numpy 2: float32 and complex64 stay single precision, everything else computes in double
(int -> complex128); rfft refuses complex input; irfft returns the real type of the complex one.
`n` is the transform length (None: the input's length; for irfft 2 * (m - 1)); it may be symbolic.
"""
from __future__ import annotations

import numpy as np

from ir.dtypes import DType
from ir.opdef import REQUIRED, OpError
from ir.symbols import dims_equal, is_static

from ._define import check_kind, defop
from ._shapes import check_axis, check_dim, floordiv
from ._transforms import along, axis_batch, emit, iota, linear_jvp, size_value

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


# --- the transforms' rules ----------------------------------------------------------------------
# Each transform is a linear map A = scale * DFT * (crop or zero-pad to n). Its adjoint A^H (the vjp,
# torch's convention) is the opposite-direction transform with the conjugate scale -- the norm swapped
# ("backward" scales the inverse by 1/n, so the adjoint of an unscaled forward transform is the
# inverse with norm "forward") -- followed by the adjoint of the crop/pad: back to the input's length.
_ADJOINT_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _resize(x, axis: int, m):
    """x cut or zero-padded to length m along axis (the adjoint of padding or cutting it to x's)."""
    cur = x.meta.shape[axis]
    if dims_equal(cur, m):
        return x
    if not (is_static(cur) and is_static(m)):
        raise OpError(f"fft/rfft/irfft: the derivative of a transform cutting or padding symbolic length "
                      f"{m} to {cur} is not supported")
    if cur > m:
        key = (slice(None),) * axis + (slice(0, m),)
        return x[key]
    widths = tuple((0, m - cur) if i == axis else (0, 0) for i in range(x.ndim))
    return emit("pad", x, pad_width=widths, value=0)


def _fft_vjp(g, x, *, out, axis, n=None, norm="backward", inverse=False):
    axis %= x.ndim
    back = emit("fft", g, axis=axis, n=None, norm=_ADJOINT_NORM[norm], inverse=not inverse)
    return (_resize(back, axis, x.meta.shape[axis]),)


def _rfft_vjp(g, x, *, out, axis, n=None, norm="backward"):
    """rfft keeps the bins 0..n//2 of the complex transform of the real x: the adjoint zero-pads the
    bins back to n (fft's own n does), inverts, and keeps the real part (x is real). Not irfft, which
    would read the bins as half of a Hermitian spectrum (the middle ones twice)."""
    axis %= x.ndim
    m = x.meta.shape[axis]
    back = emit("fft", g, axis=axis, n=m if n is None else n, norm=_ADJOINT_NORM[norm], inverse=True)
    return (_resize(emit("real", back), axis, m),)


def _hermitian_weights(spec, n, axis: int):
    """2 for the bins irfft counts twice (1 <= k < (n+1)//2: all but DC and, n even, Nyquist), else 1."""
    k = iota(spec, spec.meta.shape[axis])
    twice = (k >= 1) & (k < size_value(spec, floordiv(n + 1, 2)))
    w = emit("cast", emit("where", twice, 2, 1), dtype=spec.meta.dtype.real_dtype)
    return along(w, axis, spec.ndim)


def _irfft_vjp(g, h, *, out, axis, n=None, norm="backward"):
    """irfft(h)_j = Re(h_0) + 2 Re(sum of the middle bins h_k e^{2 pi i jk/n}) + Re(h_{n/2}) (-1)^j,
    scaled: its adjoint is rfft(g) (the conjugate exponentials) with the middle bins doubled; the
    imaginary parts of DC and Nyquist, which irfft drops, get none."""
    axis %= h.ndim
    n_out = out.meta.shape[axis]
    spec = emit("rfft", g, axis=axis, n=None, norm=_ADJOINT_NORM[norm])
    spec = spec * _hermitian_weights(spec, n_out, axis)
    return (_resize(spec, axis, h.meta.shape[axis]),)


defop("fft", arity=1, dtype_rule=_fft_dtype, shape_rule=_fft_shape, ref=_fft_reference,
      attrs={"axis": REQUIRED, "n": None, "norm": "backward", "inverse": False}, traits=FFT_TRAITS,
      numpy_names=("fft.fft", "fft.ifft"), vjp=_fft_vjp, jvp=linear_jvp("fft"), batch=axis_batch("fft"))
defop("rfft", arity=1, dtype_rule=_rfft_dtype, shape_rule=_rfft_shape, ref=_rfft_reference,
      attrs={"axis": REQUIRED, "n": None, "norm": "backward"}, traits=FFT_TRAITS, numpy_names=("fft.rfft",),
      vjp=_rfft_vjp, jvp=linear_jvp("rfft"), batch=axis_batch("rfft"))
defop("irfft", arity=1, dtype_rule=_irfft_dtype, shape_rule=_irfft_shape, ref=_irfft_reference,
      attrs={"axis": REQUIRED, "n": None, "norm": "backward"}, traits=FFT_TRAITS, numpy_names=("fft.irfft",),
      vjp=_irfft_vjp, jvp=linear_jvp("irfft"), batch=axis_batch("irfft"))
