"""Fast entries for calls whose kernels need a copy of the input first: real transforms along an
axis other than the last, zero padding, odd lengths of the real transforms, the Hermitian forms
(the conjugate around irfft's and rfft's entries), and n-D transforms whose `s` resizes an axis
other than the first one transformed (a chain of one-axis entries).

The general path (_api, _real) decides on every call how to copy and which kernels to run, in
~15 us of Python: more than numpy's whole call for small arrays. A composed entry makes those
decisions once per key (_fast's key: kind, shape, strides, dtype, n, axis, norm). A call then
copies the input into the layout the general path would give its kernels, runs a prepared
native entry of _fast on it, and makes the output as the general path does: the same kernels on
the same values in the same order, so the same bits (tests/fft/test_composed.py).
"""
from __future__ import annotations

import numpy as np

from . import _api, _fast
from ._exec import new_array


class Composed:
    """A prepared call: `pre(a)` is the inner entry's input, `post(y)` the result from its output
    (`inner`: a _fast entry tuple, for the layout `pre` makes)."""

    __slots__ = ("inner", "post", "pre", "run")

    def __init__(self, pre, inner: tuple, post, run):
        self.pre, self.inner, self.post, self.run = pre, inner, post, run

    def __call__(self, a: np.ndarray) -> np.ndarray:
        return self.post(self.run(self.inner, self.pre(a)))

    def done(self) -> Composed:
        return self


def _moved(a: np.ndarray, ax: int) -> tuple | None:
    """The permutation that moves axis `ax` last (np.moveaxis's order), or None when it is last."""
    last = a.ndim - 1
    return None if ax == last else tuple(d for d in range(a.ndim) if d != ax) + (ax,)


def _lead(a: np.ndarray, perm) -> tuple:
    """The shape of `a` with the transform axis moved last, less that axis."""
    return tuple(a.shape[d] for d in perm[:-1]) if perm else a.shape[:-1]


def _fitter(perm, m: int, n: int, dtype: np.dtype, shape: tuple):
    """x -> x (axis moved last) cropped or zero-padded to n along it, as a new C-ordered array of
    `dtype` (or x itself when it already is one: ascontiguousarray)."""

    def fit(x):
        v = x.transpose(perm) if perm else x
        if m < n:
            out = np.zeros(shape, dtype)
            out[..., :m] = v
            return out
        v = v[..., :n] if m > n else v
        return np.ascontiguousarray(v) if v.dtype == dtype else np.array(v, dtype, order="C")

    return fit


def _placer(perm, out_shape: tuple, dtype: np.dtype, rows: int | None = None):
    """y (transform axis last) -> the result: y itself, or copied into a new array with the axis
    back in place (the first `rows` elements of each row)."""
    if perm is None and rows is None:
        return lambda y: y

    def place(y):
        res = new_array(out_shape, dtype)
        np.copyto(res.transpose(perm) if perm else res, y[..., :rows] if rows is not None else y)
        return res

    return place


def _same(y: np.ndarray) -> np.ndarray:
    return y


def c2c_padded(a: np.ndarray, n: int, ax: int, forward: bool, norm) -> Composed | None:
    """fft/ifft with n > the input's length: _api._c2c_axis's zero-padded copy (C-ordered, the
    axis in place), transformed."""
    cdt = _api._complex_dtype(a.dtype)
    shape = a.shape[:ax] + (n,) + a.shape[ax + 1:]
    m = a.shape[ax]
    where = (slice(None),) * ax + (slice(0, m),)

    def fit(x):
        out = np.zeros(shape, cdt)
        out[where] = x
        return out

    # in place on the padded copy, as _api's pass runs (no second array of fresh pages): an entry
    # for a real C-ordered input is one that runs its passes in place on its converted copy
    inner = _fast._c2c_passes(np.empty(shape, _api._real_dtype(cdt)), [n], [ax], forward, norm)
    return Composed(fit, inner.done(), _same, _fast.run_in_place) if inner else None


def r2c(a: np.ndarray, n: int, ax: int, norm) -> Composed | None:
    """rfft as _real.r2c runs it: even n, the
    half-length kernel and its post pass on a C-ordered copy with the axis last; odd n, the full
    complex transform of a complex copy, its first n//2 + 1 values."""
    if a.dtype not in _fast._REAL:
        return None
    perm, m = _moved(a, ax), a.shape[ax]
    lead, cdt, h = _lead(a, perm), np.result_type(a.dtype, 1j), n // 2
    out_shape = a.shape[:ax] + (h + 1,) + a.shape[ax + 1:]
    if n % 2 == 0:
        inner = _fast._r2c_entry(np.empty(lead + (n,), a.dtype), n, norm)
        fit, place = _fitter(perm, m, n, a.dtype, lead + (n,)), _placer(perm, out_shape, cdt)
    else:
        inner = _fast._c2c_passes(np.empty(lead + (n,), cdt), [n], [len(lead)], True, norm)
        fit, place = _fitter(perm, m, n, cdt, lead + (n,)), _placer(perm, out_shape, cdt, h + 1)
    if not inner:
        return None
    return Composed(fit, inner.done(), place, _fast.run)


def c2r(a: np.ndarray, n: int, ax: int, norm) -> Composed | None:
    """irfft as _real.c2r runs it: even n,
    the pre pass and the half-length kernel on a C-ordered copy of n//2 + 1 values with the axis
    last; odd n, the full inverse transform (unscaled) of the Hermitian extension, its real part
    times the scale."""
    if a.dtype not in _fast._CPLX:
        return None
    perm, m, mh = _moved(a, ax), a.shape[ax], n // 2 + 1
    lead, rdt = _lead(a, perm), _api._real_dtype(a.dtype)
    out_shape = a.shape[:ax] + (n,) + a.shape[ax + 1:]
    if n % 2 == 0:
        inner = _fast._c2r_entry(np.empty(lead + (mh,), a.dtype), n, norm)
        pre, post = _fitter(perm, m, mh, a.dtype, lead + (mh,)), _placer(perm, out_shape, rdt)
    else:
        inner = _fast._c2c_passes(np.empty(lead + (n,), a.dtype), [n], [len(lead)], False, "forward")
        pre = _hermitian(perm, m, lead + (n,), a.dtype, n)
        post = _real_part(perm, out_shape, rdt, _api._scale(norm, n, False))
    if not inner:
        return None
    return Composed(pre, inner.done(), post, _fast.run)


def _hermitian(perm, m: int, shape: tuple, cdt: np.dtype, n: int):
    """x -> the n values whose inverse transform is real (axis last): x's first n//2 + 1 (zero
    padded), then the conjugates of values hm..1 (_real.c2r's odd lengths)."""
    hm, mh = (n - 1) // 2, n // 2 + 1

    def extend(x):
        v = x.transpose(perm) if perm else x
        y = new_array(shape, cdt)
        if m >= mh:
            y[..., :mh] = v[..., :mh]
        else:
            y[..., m:mh] = 0
            y[..., :m] = v
        if hm:
            y[..., n - hm:] = np.conj(y[..., hm:0:-1])
        return y

    return extend


def _real_part(perm, out_shape: tuple, rdt: np.dtype, scale: float):
    def real(y):
        res = new_array(out_shape, rdt)
        np.multiply(y.real, scale, out=res.transpose(perm) if perm else res)
        return res

    return real


def r2c_n(a: np.ndarray, lengths: list, axes: list, norm) -> Composed | None:
    """rfftn whose real axis (the last of `axes`) is not the array's last, as _api._rfftn runs it:
    the composed rfft along that axis, then the complex passes of the other axes (the last first)
    on its C-ordered result."""
    first = r2c(a, lengths[-1], axes[-1], norm)
    if first is None or len(axes) == 1:
        return first
    shape = a.shape[:axes[-1]] + (lengths[-1] // 2 + 1,) + a.shape[axes[-1] + 1:]
    cdt = np.result_type(a.dtype, 1j)
    rest = _fast._c2c_passes(np.empty(shape, cdt), lengths[:-1], axes[:-1], True, norm)
    return Composed(first, rest.done(), _same, _fast.run) if rest else None


def c2r_n(a: np.ndarray, lengths: list, axes: list, norm) -> Composed | None:
    """irfftn whose real axis is not the array's last, as _api._irfftn runs it: the complex passes
    of the other axes (in their order) into a C-ordered array, then the composed irfft along the
    real axis."""
    if a.dtype not in _fast._CPLX or len(axes) == 1:
        return c2r(a, lengths[-1], axes[-1], norm)
    # (_c2c_passes runs its axes last first: reversed, they run in the given order)
    first = _fast._c2c_passes(a, lengths[-2::-1], axes[-2::-1], False, norm)
    last = c2r(np.empty(a.shape, a.dtype), lengths[-1], axes[-1], norm) if first else None
    return Composed(_same, first.done(), last, _fast.run) if last else None


class Chain:
    """Entries run one after another, each on the previous one's output (C-ordered): an n-D
    transform whose `s` resizes an axis other than the first one transformed, one axis at a time
    as _api runs it (resized just before its pass), so its passes batch the general path's rows."""

    __slots__ = ("stages",)

    def __init__(self, stages: list):
        self.stages = stages

    def __call__(self, a: np.ndarray) -> np.ndarray:
        for e in self.stages:
            a = _fast.run(e, a)
        return a

    def done(self) -> Chain:
        return self


def _stage(prep, x: np.ndarray, n: int, ax: int, norm, stages: list, length: int) -> np.ndarray | None:
    """Append prep's entry of axis `ax` for an input like `x`; a C-ordered complex array like its
    output (`length` values along `ax`: the next stage's input), or None when the entry takes the
    general path."""
    e = prep(x, n, ax, norm)
    if not e:
        return None
    stages.append(e.done())
    return np.empty(x.shape[:ax] + (length,) + x.shape[ax + 1:], np.result_type(x.dtype, 1j))


def c2c_chain(a: np.ndarray, lengths: list, axes: list, forward: bool, norm) -> Chain | None:
    """fftn/ifftn as _api._c2cn runs a resizing `s`: one complex pass per axis, the last first."""
    stages, x = [], a
    for n, ax in reversed(list(zip(lengths, axes))):
        x = _stage(_fast._prep_c2c(forward), x, n, ax, norm, stages, n)
        if x is None:
            return None
    return Chain(stages)


def r2c_chain(a: np.ndarray, lengths: list, axes: list, norm) -> Chain | None:
    """rfftn as _api._rfftn runs a resizing `s`: the real pass, then the complex ones (last first)."""
    stages = []
    x = _stage(_fast._prep_rfft, a, lengths[-1], axes[-1], norm, stages, lengths[-1] // 2 + 1)
    for n, ax in reversed(list(zip(lengths[:-1], axes[:-1]))):
        if x is None:
            return None
        x = _stage(_fast._prep_c2c(True), x, n, ax, norm, stages, n)
    return Chain(stages) if x is not None else None


def c2r_chain(a: np.ndarray, lengths: list, axes: list, norm) -> Chain | None:
    """irfftn as _api._irfftn runs a resizing `s`: the complex passes in order, then the real one."""
    stages, x = [], a
    for n, ax in zip(lengths[:-1], axes[:-1]):
        x = _stage(_fast._prep_c2c(False), x, n, ax, norm, stages, n)
        if x is None:
            return None
    x = _stage(_fast._prep_irfft, x, lengths[-1], axes[-1], norm, stages, lengths[-1])
    return Chain(stages) if x is not None else None


def conjugated(prep, a: np.ndarray, n, axis, norm, of_input: bool) -> Composed | None:
    """The Hermitian forms as _api runs them, on `prep`'s entry (norm already swapped): hfft, hfft2
    and hfftn (`of_input`: irfft's of the input's conjugate), ihfft, ihfft2 and ihfftn (the
    conjugate of rfft's result); `n` and `axis` as the kind's prep takes them (s and axes)."""
    if not of_input:
        inner = prep(a, n, axis, norm)
        return Composed(_same, inner.done(), _conj_in_place, _fast.run) if inner else None
    if a.dtype not in _fast._CPLX:
        return None
    inner = prep(np.conjugate(a), n, axis, norm)  # (each call's conjugate has this one's layout)
    return Composed(np.conjugate, inner.done(), _same, _fast.run) if inner else None


def _conj_in_place(y: np.ndarray) -> np.ndarray:
    return np.conjugate(y, out=y)
