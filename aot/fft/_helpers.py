"""Frequency grids and spectrum shifts (numpy.fft's helpers; torch's `dim` accepted)."""
from __future__ import annotations

import numbers

import numpy as np


def _check_int(n) -> None:
    if not isinstance(n, (numbers.Integral, np.integer)) or isinstance(n, bool):
        raise ValueError("n should be an integer")  # noqa: TRY004 - numpy's error


def fftfreq(n, d=1.0, device=None):
    """Sample frequencies of an n-point FFT with sample spacing d: [0, 1, ..., -n//2, ..., -1] / (d*n)."""
    _check_int(n)
    val = 1.0 / (n * d)
    results = np.empty(n, int)
    half = (n - 1) // 2 + 1
    results[:half] = np.arange(0, half, dtype=int)
    results[half:] = np.arange(-(n // 2), 0, dtype=int)
    return results * val


def rfftfreq(n, d=1.0, device=None):
    """Sample frequencies of rfft: [0, 1, ..., n//2] / (d*n)."""
    _check_int(n)
    val = 1.0 / (n * d)
    return np.arange(0, n // 2 + 1, dtype=int) * val


def _shifts(x: np.ndarray, axes, sign: int):
    if axes is None:
        axes = tuple(range(x.ndim))
    if isinstance(axes, (numbers.Integral, np.integer)):
        return sign * (x.shape[axes] // 2), axes
    axes = tuple(axes)
    return [sign * (x.shape[ax] // 2) for ax in axes], axes


def fftshift(x, axes=None, *, dim=None):
    """Move the zero frequency to the centre (along `axes`, all by default)."""
    x = np.asarray(x)
    shift, axes = _shifts(x, axes if dim is None else dim, 1)
    return np.roll(x, shift, axes)


def ifftshift(x, axes=None, *, dim=None):
    """Inverse of fftshift (they differ for odd lengths)."""
    x = np.asarray(x)
    shift, axes = _shifts(x, axes if dim is None else dim, -1)
    return np.roll(x, shift, axes)
