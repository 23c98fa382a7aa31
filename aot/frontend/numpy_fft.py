"""np.fft: fft/ifft/rfft/irfft on one axis are core ops (one translation per numpy name of the fft
rows, built from the rows); the 2-D and n-D forms are sequences of them (DECOMPOSITIONS), in the order
numpy applies them (numpy/fft/_pocketfft.py `_raw_fftnd`, `rfftn`, `irfftn`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from aot.ops import ALL_OPS
from ir.opdef import OPDEFS
from ir.symbols import norm_dim

from .emitter import Emitter, abstract_of
from .numpy_shape import np_roll
from .numpy_ufuncs import apply_ufunc, emit
from .operands import index_arg, is_size_expr, no_out, normalize_axis, to_value
from .registry import translates
from .shapes import dim_le, static_int

NORMS = (None, "backward", "ortho", "forward")
KINDS = ("fft", "ifft", "rfft", "irfft")  # the 1-D transforms fft1 emits


def _norm(norm: Any) -> str:
    if norm not in NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return norm or "backward"


def _n(n: Any) -> Any:
    if n is None:
        return None
    n = index_arg(n, "n")
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _real_input(fname: str, x: Any):
    if abstract_of(x).dtype.is_complex:
        raise TypeError(f"np.fft.{fname}: input must be real, got {abstract_of(x).dtype.np_name} "
                        f"(use np.fft.fft for complex input)")
    return x


def fft1(em: Emitter, kind: str, x: Any, n: Any, axis: Any, norm: Any):
    """One 1-D transform: kind in KINDS."""
    x = to_value(em, x)
    ax = normalize_axis(axis, abstract_of(x).ndim)
    if n is not None and is_size_expr(n):  # n=x.shape[0]: a run-time length (plans are built at run time)
        if not dim_le(1, n):
            raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
        n = norm_dim(n)
    elif n is not None:  # a default length follows the axis, symbolic or not
        n = _n(static_int(n, f"the length n of np.fft.{kind}"))
    elif kind == "irfft" and abstract_of(x).shape[ax] == 1:
        raise ValueError("Invalid number of FFT data points (0) specified.")
    norm = _norm(norm)
    if kind in ("fft", "ifft"):
        return emit(em, "fft", x, axis=ax, n=n, norm=norm, inverse=kind == "ifft")
    if kind == "rfft":
        return emit(em, "rfft", _real_input("rfft", x), axis=ax, n=n, norm=norm)
    return emit(em, "irfft", x, axis=ax, n=n, norm=norm)


def _one_axis(kind: str):
    if kind not in KINDS:
        raise ValueError(f"np.fft.{kind}: fft1 emits one of {KINDS}")

    def translate(em: Emitter, a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None):
        no_out(f"np.fft.{kind}", out)
        return fft1(em, kind, a, n, axis, norm)

    translate.__name__ = f"np_fft_{kind}"
    return translate


# the 1-D transforms: each numpy name of each fft row ("fft.fft", "fft.ifft" of the fft row, ...)
for _op in ALL_OPS:
    if OPDEFS[_op].has("fft"):
        for _np_name in OPDEFS[_op].numpy_names:
            translates(_op, _np_name)(_one_axis(_np_name.removeprefix("fft.")))


def _cook_nd_args(shape: tuple, s: Any, axes: Any, invreal: bool = False) -> tuple[list, list]:
    """numpy's `_cook_nd_args`: the lengths and axes of an n-D transform (None: keep the length)."""
    shapeless = s is None
    if s is None:
        s = [None] * (len(shape) if axes is None else len(axes))
    s = list(s)
    if axes is None:
        axes = list(range(-len(s), 0))
    axes = list(axes)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (shape[normalize_axis(axes[-1], len(shape))] - 1) * 2
    return [None if n == -1 else n for n in s], axes


def _nd(kind: str, default_axes: Any):
    def translate(em: Emitter, a: Any, s: Any = None, axes: Any = default_axes, norm: Any = None,
                  out: Any = None):
        no_out(f"np.fft.{kind}", out)
        x = to_value(em, a)
        sizes, axs = _cook_nd_args(abstract_of(x).shape, s, axes, invreal=kind.startswith("irfft"))
        base = kind.rstrip("n2")
        if base == "rfft":
            x = fft1(em, "rfft", x, sizes[-1], axs[-1], norm)
            for n, ax in reversed(list(zip(sizes[:-1], axs[:-1]))):
                x = fft1(em, "fft", x, n, ax, norm)
            return x
        if base == "irfft":
            for n, ax in zip(sizes[:-1], axs[:-1]):
                x = fft1(em, "ifft", x, n, ax, norm)
            return fft1(em, "irfft", x, sizes[-1], axs[-1], norm)
        for n, ax in reversed(list(zip(sizes, axs))):
            x = fft1(em, base, x, n, ax, norm)
        return x

    translate.__name__ = f"np_fft_{kind}"
    return translate


np_fft2, np_ifft2, np_rfft2, np_irfft2 = (_nd(k, (-2, -1)) for k in ("fft2", "ifft2", "rfft2", "irfft2"))
np_fftn, np_ifftn, np_rfftn, np_irfftn = (_nd(k, None) for k in ("fftn", "ifftn", "rfftn", "irfftn"))

_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def np_fft_hfft(em: Emitter, a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None):
    """numpy's hfft: irfft of the conjugate with the norm's direction swapped."""
    no_out("np.fft.hfft", out)
    x = to_value(em, a)
    _norm(norm)
    if n is None:
        n = (abstract_of(x).shape[normalize_axis(axis, abstract_of(x).ndim)] - 1) * 2
    return fft1(em, "irfft", apply_ufunc(em, np.conjugate, x), n, axis, _SWAPPED[norm])


def np_fft_ihfft(em: Emitter, a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None):
    """numpy's ihfft: the conjugate of rfft with the norm's direction swapped."""
    no_out("np.fft.ihfft", out)
    _norm(norm)
    return apply_ufunc(em, np.conjugate, fft1(em, "rfft", a, n, axis, _SWAPPED[norm]))


def _shift(sign: int):
    def translate(em: Emitter, x: Any, axes: Any = None):
        v = to_value(em, x)
        shape = abstract_of(v).shape
        axes = tuple(range(len(shape))) if axes is None else axes
        one = isinstance(axes, (int, np.integer))
        axs = (axes,) if one else tuple(axes)
        shift = [sign * (static_int(shape[normalize_axis(ax, len(shape))], "the length of a shifted axis") // 2)
                 for ax in axs]
        return np_roll(em, v, shift[0] if one else shift, axes)

    translate.__name__ = "np_fft_fftshift" if sign > 0 else "np_fft_ifftshift"
    return translate


# functions of Python scalars only: numpy computes them while tracing (a constant in the graph)
TRACE_TIME = (np.fft.fftfreq, np.fft.rfftfreq)

# numpy functions that are not one core op (the 1-D transforms register against their rows above)
DECOMPOSITIONS = {
    np.fft.fft2: np_fft2, np.fft.ifft2: np_ifft2, np.fft.rfft2: np_rfft2, np.fft.irfft2: np_irfft2,
    np.fft.fftn: np_fftn, np.fft.ifftn: np_ifftn, np.fft.rfftn: np_rfftn, np.fft.irfftn: np_irfftn,
    np.fft.hfft: np_fft_hfft, np.fft.ihfft: np_fft_ihfft, np.fft.fftshift: _shift(1), np.fft.ifftshift: _shift(-1),
}
