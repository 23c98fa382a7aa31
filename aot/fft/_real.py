"""Real transforms through a half-length complex transform (even n) plus a pre/post pass.

r2c, n = 2h: z_j = x_2j + i x_2j+1, Z = DFT_h(z), then X_k = (Z_k + conj Z_{h-k})/2
             + w^k (Z_k - conj Z_{h-k})/(2i) with w = exp(-2 pi i/n), and X_h = Re Z_0 - Im Z_0.
c2r, n = 2h: Z'_k = (X_k + conj X_{h-k}) + i conj(w^k) (X_k - conj X_{h-k}), z = IDFT_h(Z'),
             x_2j = Re z_j, x_2j+1 = Im z_j (the imaginary parts of X_0 and X_h are ignored, as in
             numpy). Odd lengths use the full complex transform.
The pre/post passes are generated kernels (codegen/fft/real.py); one long row's pass is shared by
the threads of the kernels' pool (codegen/fft/threads.py), several rows are split by rows.
"""
from __future__ import annotations

import functools

import numpy as np

from codegen.fft.plan import unit_roots

from ._exec import (
    _PARALLEL_MIN_WORK,
    _moveaxis,
    _pool,
    _precision,
    _ptr,
    c2c,
    kernels,
    new_array,
    num_threads,
)

_SHARED_MIN_H = 1 << 15  # one row's real pass from this half length runs on the kernels' pool


@functools.lru_cache(maxsize=32)
def _roots(n: int, char: str) -> np.ndarray:
    """w^k = exp(-2 pi i k/n) for k < n/2, the table of the real passes."""
    w = unit_roots(-np.arange(n // 2, dtype=np.int64), n).astype(char)
    w.setflags(write=False)
    return w


def _rows(fn, rows: int, work: int) -> None:
    """fn(first_row, count) over all rows, split across threads when the work is large."""
    threads = num_threads() if work >= _PARALLEL_MIN_WORK and rows > 1 else 1
    if threads == 1:
        fn(0, rows)
        return
    step = -(-rows // threads)
    list(_pool().map(lambda r0: fn(r0, min(step, rows - r0)), range(0, rows, step)))


def _fit_last(x: np.ndarray, n: int, dtype) -> np.ndarray:
    """x (transform axis last) cropped or zero-padded to n, as `dtype` (a view when possible)."""
    m = x.shape[-1]
    if m >= n:
        x = x[..., :n]
        return x if x.dtype == dtype else x.astype(dtype)
    out = np.zeros(x.shape[:-1] + (n,), dtype)
    out[..., :m] = x
    return out


def r2c(a: np.ndarray, n: int, axis: int, scale: float, rdt: np.dtype) -> np.ndarray:
    """scale * rfft(a, n) along axis; a real."""
    cdt = np.result_type(rdt, 1j)
    out_shape = a.shape[:axis] + (n // 2 + 1,) + a.shape[axis + 1:]
    res = new_array(out_shape, cdt)
    if res.size == 0:
        return res
    x = _moveaxis(a, axis, -1)
    rv = _moveaxis(res, axis, -1)
    if n % 2:
        z = _fit_last(x, n, cdt)
        full = new_array(z.shape, cdt)
        c2c(z, full, -1, True, scale)
        rv[...] = full[..., : n // 2 + 1]
        return res
    h = n // 2
    xr = _fit_last(x, n, rdt)
    if xr.strides[-1] != rdt.itemsize or xr.ctypes.data % cdt.alignment:
        xr = np.ascontiguousarray(xr)
    last = axis == a.ndim - 1
    tgt = res if last else new_array(x.shape[:-1] + (h + 1,), cdt)
    c2c(xr.view(cdt), tgt[..., :h], -1, True, 1.0)
    k = kernels(_precision(cdt))
    w = _ptr(_roots(n, cdt.char), k)
    base = _ptr(tgt, k)
    rows = tgt.size // (h + 1)
    if rows == 1 and h >= _SHARED_MIN_H and num_threads() > 1:
        k.r2c_post_shared(base, h, w, scale, num_threads())
    else:
        _rows(lambda r0, cnt: k.r2c_post(base + 2 * r0 * (h + 1), h, cnt, h + 1, w, scale), rows, tgt.size)
    if not last:
        np.copyto(rv, tgt)
    return res


def c2r(a: np.ndarray, n: int, axis: int, scale: float, rdt: np.dtype) -> np.ndarray:
    """scale * irfft(a, n) along axis; a complex."""
    cdt = np.result_type(rdt, 1j)
    x = _fit_last(_moveaxis(a, axis, -1), n // 2 + 1, cdt)
    out_shape = a.shape[:axis] + (n,) + a.shape[axis + 1:]
    if x.size == 0 or np.prod(out_shape) == 0:
        return np.zeros(out_shape, rdt)
    if n % 2:
        hm = (n - 1) // 2
        y = new_array(x.shape[:-1] + (n,), cdt)
        y[..., : n // 2 + 1] = x
        if hm:
            y[..., n - hm:] = np.conj(x[..., hm:0:-1])
        c2c(y, y, -1, False, 1.0)
        res = _moveaxis(new_array(out_shape, rdt), axis, -1)
        np.multiply(y.real, scale, out=res)
        return _moveaxis(res, -1, axis)
    h = n // 2
    x = np.ascontiguousarray(x)
    last = axis == a.ndim - 1
    out = new_array(out_shape if last else x.shape[:-1] + (n,), rdt)
    z = out.view(cdt)
    k = kernels(_precision(cdt))
    w, xp, zp = _ptr(_roots(n, cdt.char), k), _ptr(x, k), _ptr(z, k)
    rows = x.size // (h + 1)
    if rows == 1 and h >= _SHARED_MIN_H and num_threads() > 1:
        k.c2r_pre_shared(xp, zp, h, w, num_threads())
    else:
        _rows(lambda r0, cnt: k.c2r_pre(xp + 2 * r0 * (h + 1), h + 1, zp + 2 * r0 * h, h, h, cnt, w),
              rows, x.size)
    c2c(z, z, -1, False, scale)
    if last:
        return out
    res = new_array(out_shape, rdt)
    np.copyto(_moveaxis(res, axis, -1), out)
    return res
