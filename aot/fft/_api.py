"""The transforms of `aot.fft`: numpy.fft's semantics, torch.fft's keywords (`dim`), numpy arrays.

Each n-D transform is a sequence of 1-D passes over the axes (the last axis first, as numpy);
passes after the first run in place on the result. Errors are numpy's.
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

try:
    from numpy.lib.array_utils import normalize_axis_index
except ImportError:  # numpy < 2
    from numpy.core.multiarray import normalize_axis_index

from ._exec import c2c, new_array, run_planes

_NORMS = (None, "backward", "ortho", "forward")
_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _check_norm(norm) -> None:
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')


def _scale(norm, n: int, forward: bool) -> float:
    _check_norm(norm)
    if not forward:
        norm = _SWAP[norm]
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if norm == "forward" else 1.0


def _check_n(n) -> int:
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _pick_axis(axis, dim, default):
    if dim is not None:
        if axis is not None and axis != dim:
            raise TypeError("got both 'axis' and its torch alias 'dim'; pass one of them")
        return dim
    return default if axis is None else axis


_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)
_SAME = {_C64: _C64, _C128: _C128}


def _complex_dtype(dt: np.dtype) -> np.dtype:
    """numpy's result_type(dt, 1j), limited to the two precisions of the kernels."""
    cdt = _SAME.get(dt)
    if cdt is None:
        cdt = np.result_type(dt, 1j)
        cdt = cdt if cdt in (_C64, _C128) else _C128
    return cdt


def _real_dtype(dt: np.dtype) -> np.dtype:
    rdt = np.result_type(np.empty(0, dt).real.dtype, 1.0)
    return rdt if rdt in (np.float32, np.float64) else np.dtype(np.float64)


def _fit(x: np.ndarray, n: int, axis: int) -> np.ndarray:
    m = x.shape[axis]
    if m == n:
        return x
    if m > n:
        return x[(slice(None),) * axis + (slice(0, n),)]
    out = np.zeros(x.shape[:axis] + (n,) + x.shape[axis + 1:], x.dtype)
    out[(slice(None),) * axis + (slice(0, m),)] = x
    return out


def _finish(res: np.ndarray, out):
    if out is None or res is out:
        return res
    if not isinstance(out, np.ndarray):
        raise TypeError(f"return arrays must be of ArrayType, got {type(out).__name__}")
    if out.shape != res.shape:
        raise ValueError("output array has wrong shape.")
    np.copyto(out, res, casting="same_kind")
    return out


def _writes_into(out, x: np.ndarray) -> bool:
    """Whether a pass from x may write the caller's `out` directly (else the result is copied into
    it): same shape and dtype, writeable, whole-element strides, no stride 0, and no overlap with x
    unless it is x itself (the kernels transform in place)."""
    if not isinstance(out, np.ndarray) or out.shape != x.shape or out.dtype != x.dtype or not out.flags.writeable:
        return False
    if any(st % out.itemsize or (st == 0 and d > 1) for st, d in zip(out.strides, out.shape)):
        return False
    if out.size and np.may_share_memory(x, out):
        return x.strides == out.strides and x.ctypes.data == out.ctypes.data
    return True


def _c2c_axis(a: np.ndarray, n, axis: int, norm, forward: bool, owned: bool = False, out=None) -> np.ndarray:
    """One complex pass; `owned` means `a` is ours and may be overwritten in place; the result goes
    into `out` when _writes_into allows."""
    axis = normalize_axis_index(axis, a.ndim)
    n = _check_n(a.shape[axis] if n is None else n)
    scale = _scale(norm, n, forward)
    cdt = _complex_dtype(a.dtype)
    x = a if a.dtype == cdt else a.astype(cdt)
    owned = owned or x is not a
    x = _fit(x, n, axis)
    if out is not None and _writes_into(out, x):
        res = out
    elif owned and x.base is None and x.shape[axis] == n and x.flags.writeable:
        res = x
    else:
        res = new_array(x.shape, cdt)
    if res.size:
        c2c(x, res, axis, forward, scale)
    return res


# -- 1-D ------------------------------------------------------------------------------------------
def fft(a, n=None, axis=None, norm=None, out=None, *, dim=None):
    """Discrete Fourier transform along one axis (numpy.fft.fft; torch's `dim` accepted)."""
    a = np.asarray(a)
    return _finish(_c2c_axis(a, n, _pick_axis(axis, dim, -1), norm, True, out=out), out)


def ifft(a, n=None, axis=None, norm=None, out=None, *, dim=None):
    """Inverse discrete Fourier transform along one axis."""
    a = np.asarray(a)
    return _finish(_c2c_axis(a, n, _pick_axis(axis, dim, -1), norm, False, out=out), out)


def _rfft(a, n, axis, norm, forward_sign: bool = True) -> np.ndarray:
    if np.iscomplexobj(a):
        raise TypeError(f"rfft: input must be real, got {a.dtype}")
    axis = normalize_axis_index(axis, a.ndim)
    n = _check_n(a.shape[axis] if n is None else n)
    from . import _real  # (real transforms only: a complex one's first call imports less)

    return _real.r2c(a, n, axis, _scale(norm, n, forward_sign), _real_dtype(a.dtype))


def _irfft(a, n, axis, norm) -> np.ndarray:
    axis = normalize_axis_index(axis, a.ndim)
    n = _check_n((a.shape[axis] - 1) * 2 if n is None else n)
    rdt = _real_dtype(a.dtype)
    from . import _real

    return _real.c2r(a, n, axis, _scale(norm, n, False), rdt)


def rfft(a, n=None, axis=None, norm=None, out=None, *, dim=None):
    """FFT of real input: the n//2 + 1 non-negative frequencies."""
    a = np.asarray(a)
    return _finish(_rfft(a, n, _pick_axis(axis, dim, -1), norm), out)


def irfft(a, n=None, axis=None, norm=None, out=None, *, dim=None):
    """Inverse of rfft: n real outputs (default 2 * (m - 1))."""
    a = np.asarray(a)
    return _finish(_irfft(a, n, _pick_axis(axis, dim, -1), norm), out)


def hfft(a, n=None, axis=None, norm=None, out=None, *, dim=None):
    """FFT of a Hermitian-symmetric signal given by its first half: real output."""
    a = np.asarray(a)
    _check_norm(norm)
    return _finish(_irfft(np.conjugate(a), n, _pick_axis(axis, dim, -1), _SWAP[norm]), out)


def ihfft(a, n=None, axis=None, norm=None, out=None, *, dim=None):
    """Inverse of hfft: the non-negative half of the inverse FFT of real input."""
    a = np.asarray(a)
    _check_norm(norm)
    res = _rfft(a, n, _pick_axis(axis, dim, -1), _SWAP[norm])
    return _finish(np.conjugate(res, out=res), out)


# -- n-D --------------------------------------------------------------------------------------
def _cook(a: np.ndarray, s, axes, invreal: bool = False):
    """numpy's _cook_nd_args: lengths and axes of an n-D transform."""
    shapeless = s is None
    if s is None:
        s = list(a.shape) if axes is None else [a.shape[ax] for ax in axes]
    s = list(s)
    if axes is None:
        if not shapeless:
            warnings.warn("`axes` should not be `None` if `s` is not `None` (Deprecated in NumPy 2.0).",
                          DeprecationWarning, stacklevel=3)
        axes = list(range(-len(s), 0))
    axes = list(axes)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (a.shape[axes[-1]] - 1) * 2
    if None in s:
        warnings.warn("Passing an array containing `None` values to `s` is deprecated in NumPy 2.0.",
                      DeprecationWarning, stacklevel=3)
    s = [a.shape[ax] if n == -1 else n for n, ax in zip(s, axes)]
    return s, axes


def _pick_axes(axes, dim, signature_default=None):
    """numpy's `axes` or torch's `dim` (an int or a sequence); None keeps numpy's defaults."""
    if dim is not None:
        if axes is not None and axes != signature_default and _as_list(axes) != _as_list(dim):
            raise TypeError("got both 'axes' and its torch alias 'dim'; pass one of them")
        axes = dim
    return None if axes is None else _as_list(axes)


def _as_list(axes) -> list:
    return [axes] if isinstance(axes, (int, np.integer)) else list(axes)


def _c2cn(a, s, axes, norm, forward: bool, out=None) -> np.ndarray:
    a = np.asarray(a)
    s, axes = _cook(a, s, axes)
    res, owned = a, False
    pairs = list(zip(s, axes))
    if len(pairs) >= 2 and a.ndim >= 3:
        res, owned = _last_planes(a, pairs, norm, forward, out)
        if owned:
            pairs = pairs[:-2]
    for n, ax in reversed(pairs):
        res = _c2c_axis(res, n, ax, norm, forward, owned, out)
        owned = True
    if not owned:  # no axes: numpy still returns a complex copy
        res = a.astype(_complex_dtype(a.dtype))
    return res


def _last_planes(a: np.ndarray, pairs: list, norm, forward: bool, out) -> tuple:
    """(result, True) when the first two passes (the array's last two axes, whole) ran plane by
    plane (_exec.run_planes), else (a, False)."""
    (n1, ax1), (n2, ax2) = pairs[-2:]
    nd = a.ndim
    if (normalize_axis_index(ax1, nd), normalize_axis_index(ax2, nd)) != (nd - 2, nd - 1) or (n1, n2) != a.shape[-2:]:
        return a, False
    cdt = _complex_dtype(a.dtype)
    x = a if a.dtype == cdt else a.astype(cdt)
    res = out if out is not None and _writes_into(out, x) else x if x is not a else new_array(x.shape, cdt)
    if run_planes(x, res, forward, (_scale(norm, n2, forward), _scale(norm, n1, forward))):
        return res, True
    return a, False


def fftn(a, s=None, axes=None, norm=None, out=None, *, dim=None):
    """N-D discrete Fourier transform over `axes` (all axes by default)."""
    return _finish(_c2cn(a, s, _pick_axes(axes, dim, None), norm, True, out), out)


def ifftn(a, s=None, axes=None, norm=None, out=None, *, dim=None):
    """Inverse N-D discrete Fourier transform."""
    return _finish(_c2cn(a, s, _pick_axes(axes, dim, None), norm, False, out), out)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None, *, dim=None):
    """2-D discrete Fourier transform (the last two axes by default)."""
    return _finish(_c2cn(a, s, _pick_axes(axes, dim, (-2, -1)), norm, True, out), out)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None, *, dim=None):
    """Inverse 2-D discrete Fourier transform."""
    return _finish(_c2cn(a, s, _pick_axes(axes, dim, (-2, -1)), norm, False, out), out)


def _rfftn(a, s, axes, norm, forward: bool = True) -> np.ndarray:
    a = np.asarray(a)
    s, axes = _cook(a, s, axes)
    if not axes:
        raise ValueError("rfftn: at least one axis must be transformed")
    res = _rfft(a, s[-1], axes[-1], norm, forward)
    for n, ax in reversed(list(zip(s[:-1], axes[:-1]))):
        res = _c2c_axis(res, n, ax, norm, forward, owned=True)
    return res


def _irfftn(a, s, axes, norm) -> np.ndarray:
    a = np.asarray(a)
    s, axes = _cook(a, s, axes, invreal=True)
    if not axes:
        raise ValueError("irfftn: at least one axis must be transformed")
    res, owned = a, False
    for n, ax in zip(s[:-1], axes[:-1]):
        res = _c2c_axis(res, n, ax, norm, False, owned)
        owned = True
    return _irfft(res, s[-1], axes[-1], norm)


def rfftn(a, s=None, axes=None, norm=None, out=None, *, dim=None):
    """N-D FFT of real input (the last axis halved)."""
    return _finish(_rfftn(a, s, _pick_axes(axes, dim, None), norm), out)


def irfftn(a, s=None, axes=None, norm=None, out=None, *, dim=None):
    """Inverse of rfftn."""
    return _finish(_irfftn(a, s, _pick_axes(axes, dim, None), norm), out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None, *, dim=None):
    """2-D FFT of real input."""
    return _finish(_rfftn(a, s, _pick_axes(axes, dim, (-2, -1)), norm), out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None, *, dim=None):
    """Inverse of rfft2."""
    return _finish(_irfftn(a, s, _pick_axes(axes, dim, (-2, -1)), norm), out)


def hfftn(a, s=None, axes=None, norm=None, out=None, *, dim=None):
    """N-D FFT of a Hermitian-symmetric signal (scipy.fft.hfftn / torch.fft.hfftn): real output."""
    _check_norm(norm)
    a = np.conjugate(np.asarray(a))
    return _finish(_irfftn(a, s, _pick_axes(axes, dim, None), _SWAP[norm]), out)


def ihfftn(a, s=None, axes=None, norm=None, out=None, *, dim=None):
    """Inverse of hfftn (scipy.fft.ihfftn / torch.fft.ihfftn)."""
    _check_norm(norm)
    res = _rfftn(a, s, _pick_axes(axes, dim, None), _SWAP[norm])
    return _finish(np.conjugate(res, out=res), out)


def hfft2(a, s=None, axes=(-2, -1), norm=None, out=None, *, dim=None):
    """2-D hfftn."""
    _check_norm(norm)
    a = np.conjugate(np.asarray(a))
    return _finish(_irfftn(a, s, _pick_axes(axes, dim, (-2, -1)), _SWAP[norm]), out)


def ihfft2(a, s=None, axes=(-2, -1), norm=None, out=None, *, dim=None):
    """2-D ihfftn."""
    _check_norm(norm)
    res = _rfftn(a, s, _pick_axes(axes, dim, (-2, -1)), _SWAP[norm])
    return _finish(np.conjugate(res, out=res), out)
