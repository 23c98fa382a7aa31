"""The public transforms that have an eager fast path (see _fast): an ndarray with n/axis (or dim)
/norm (1-D) or norm (n-D, default s and axes) whose call key was seen before skips argument
normalisation, dispatch and planning. Everything else, and traced calls, take the general path:
`__aot_function__` handlers (aot.fx, aot.compile) see one call of the public function, then
numpy's semantics in _api.
"""
from __future__ import annotations

import numpy as np

from ..dispatch import find_handler
from . import _api, _tables
from ._exec import new_array
from ._fast import call, call_into, call_nd, local, miss

_ndarray = np.ndarray
_AXES2 = (-2, -1)  # the default `axes` of the 2-D transforms; `is` tells it from a caller's tuple
_BOTH = object()  # axis and dim both given: the general path reports it


def _general(public, impl, a, **kwargs):
    handler = find_handler((a,), kwargs)
    if handler is not None:  # the handler sees the arguments the caller gave (defaults left out)
        given = {k: v for k, v in kwargs.items() if v is not None and v is not _AXES2}
        return type(handler).__aot_function__(handler, public, (a,), given)
    return impl(a, **kwargs)


_NO = object()  # an argument the n-D fast path does not key: the general path takes the call


def _ints(v):
    """v (s or axes) as a key: None, or a tuple of Python ints; _NO for anything else (numpy
    integers, None inside, other types: the general path checks and converts them)."""
    if v is None:
        return None
    if type(v) in (tuple, list) and all(type(x) is int for x in v):
        return tuple(v)
    return _NO


def _named(fn, impl):
    fn.__name__ = fn.__qualname__ = impl.__name__
    fn.__doc__ = impl.__doc__
    fn.__aot_dispatchable__ = True
    return fn


def _one_d(impl):
    """fft/ifft/rfft/irfft: the native table of the call's arguments first (_tables); then the hit
    path of _fast.call inlined (a call costs ~0.1 us; the whole Python side of a hit is ~1 us)."""
    kind = impl.__name__
    tables = _tables.kind(kind)
    table, keyed, by_norm = tables.default, tables.keyed, tables.by_norm

    def public(a, n=None, axis=None, norm=None, out=None, *, dim=None):
        ax = axis if dim is None else dim if axis is None else _BOTH  # torch's dim is numpy's axis
        if out is None:  # a prepared call in native code (_tables), or None
            if n is None and ax is None:
                t = table if norm is None else by_norm.get(norm) if type(norm) is str else None
            elif ((n is None or type(n) is int) and (ax is None or type(ax) is int)
                    and (norm is None or type(norm) is str)):
                t = keyed.get((n, ax, norm))
            else:
                t = None
            if t is not None:
                res = t.call(a)
                if res is not None:
                    return res
        if (type(a) is _ndarray and out is None and (n is None or type(n) is int)
                and (ax is None or type(ax) is int) and (norm is None or type(norm) is str)):
            cache = local.cache
            e = cache.get((kind, a.shape, a.strides, a.dtype, n, ax, norm))
            if e:
                cache.hits += 1
                if e.__class__ is not tuple:  # a composed entry (_composed)
                    return e(a)
                shape, dtype, convert, thunk, blk, more, _ = e
                if convert:
                    res = a.astype(dtype)
                    thunk(blk, id(res), id(res))
                else:
                    res = new_array(shape, dtype)  # cache-line aligned when large
                    thunk(blk, id(a), id(res))
                if more:
                    for thunk, blk, from_a in more:
                        thunk(blk, id(a) if from_a else id(res), id(res))
                return res
            if e is None:
                res = miss(kind, a, n, ax, norm)
                if res is not None:
                    return res
        elif type(out) is _ndarray and type(a) is _ndarray and ax is not _BOTH:
            res = call_into(kind, a, n, ax, norm, out)
            if res is not None:
                return res
        return _general(public, impl, a, n=n, axis=axis, norm=norm, out=out, dim=dim)

    return _named(public, impl)


def _n_d(impl, default_axes):
    """fft2/fftn/... : the fast path for default `s` and `axes` (their kernels are longer, so the
    extra call of _fast.call matters less), and for `s` and `axes` given as tuples or lists of
    ints (keyed by them: _fast.call_nd)."""
    kind = impl.__name__
    tables = _tables.kind(kind)
    table, by_norm = tables.default, tables.by_norm

    def public(a, s=None, axes=default_axes, norm=None, out=None, *, dim=None):
        if s is None and axes is default_axes and dim is None:
            if out is None:
                t = table if norm is None else by_norm.get(norm) if type(norm) is str else None
                if t is not None:  # a prepared call in native code (_tables), or None
                    res = t.call(a)
                    if res is not None:
                        return res
                if type(a) is _ndarray:
                    res = call(kind, a, None, None, norm)
                    if res is not None:
                        return res
            elif type(out) is _ndarray and type(a) is _ndarray:
                res = call_into(kind, a, None, None, norm, out)
                if res is not None:
                    return res
        elif out is None and type(a) is _ndarray and (dim is None or axes is default_axes):
            # given s, axes or torch's dim: keyed by them (a caller's axes=None means every axis, not
            # the default (-2, -1) of the 2-D forms; fftn with s and no axes warns, as numpy does,
            # on the general path)
            if dim is not None:
                axes = (dim,) if type(dim) is int else dim
            key_s = _ints(s)
            key_axes = None if axes is default_axes else _NO if axes is None else _ints(axes)
            if key_s is not _NO and key_axes is not _NO and (key_axes is not None or default_axes is not None):
                res = call_nd(kind, a, key_s, key_axes, norm)
                if res is not None:
                    return res
        return _general(public, impl, a, s=s, axes=axes, norm=norm, out=out, dim=dim)

    return _named(public, impl)


fft, ifft, rfft, irfft, hfft, ihfft = (_one_d(f) for f in (_api.fft, _api.ifft, _api.rfft, _api.irfft, _api.hfft,
                                                         _api.ihfft))
fftn, ifftn, rfftn, irfftn, hfftn, ihfftn = (_n_d(f, None) for f in (_api.fftn, _api.ifftn, _api.rfftn, _api.irfftn,
                                                                     _api.hfftn, _api.ihfftn))
fft2, ifft2, rfft2, irfft2, hfft2, ihfft2 = (_n_d(f, _AXES2) for f in (_api.fft2, _api.ifft2, _api.rfft2, _api.irfft2,
                                                                       _api.hfft2, _api.ihfft2))
