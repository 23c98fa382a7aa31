"""`out=` of the complex transforms: the passes write the caller's array directly when its shape
and dtype are the result's (aot.fft._api._writes_into), else the result is copied into it."""
from __future__ import annotations

import numpy as np
import pytest

import aot.fft as afft

from ._eager import close, data


@pytest.mark.parametrize("kind, shape, kw", [
    ("fft", (64,), {}), ("ifft", (3, 100), {"axis": 0, "norm": "ortho"}), ("fft2", (24, 40), {}),
    ("ifftn", (6, 8, 10), {}), ("fftn", (256, 256), {}), ("fft", (1 << 16,), {}),
])
def test_writes_out_directly(kind, shape, kw):
    x = data(shape, np.complex128)
    before = x.copy()
    out = np.full(shape, np.nan + 0j)
    res = getattr(afft, kind)(x, out=out, **kw)
    assert res is out
    close(out, getattr(np.fft, kind)(x, **kw))
    assert np.array_equal(x, before)


def test_strided_views_in_place_and_other_dtypes():
    x = data((16, 24), np.complex128)
    want = np.fft.fft2(x)
    big = np.zeros((16, 48), np.complex128)
    view = big[:, ::2]  # a strided out
    assert afft.fft2(x, out=view) is view
    close(view, want)
    assert not big[:, 1::2].any()
    y = x.copy()
    assert afft.fft2(y, out=y) is y  # the input itself: in place
    close(y, want)
    low = np.empty((16, 24), np.complex64)  # another precision: computed, then cast (numpy's same_kind)
    assert afft.fft2(x, out=low) is low
    np.testing.assert_allclose(low, want.astype(np.complex64), rtol=0, atol=1e-4 * np.abs(want).max())


def test_overlapping_out_is_not_written_while_read():
    base = data((64,), np.complex128)
    x = base[:48]
    want = np.fft.fft(x)
    out = base[16:]  # overlaps x, shifted: written only after the transform
    assert afft.fft(x, out=out) is out
    close(out, want)


def test_bad_out_is_numpys_error():
    x = data((8, 8), np.complex128)
    with pytest.raises(ValueError, match="wrong shape"):
        afft.fft2(x, out=np.empty((8, 9), np.complex128))
    with pytest.raises(TypeError):
        afft.fft(x, out=[0] * 8)


@pytest.mark.parametrize("kind, x, kw", [
    ("fft", data((1024,), np.complex128), {}), ("ifft", data((8, 100), np.complex64), {"axis": 0}),
    ("fft", np.linspace(0, 1, 64), {"norm": "ortho"}),  # real input: converted into out, then in place
    ("fft2", data((24, 40), np.complex128), {}),
])
def test_repeated_out_calls_take_the_fast_path(kind, x, kw):
    """A key seen before writes `out` through its prepared entry (not the general path's ~6 us of
    argument handling); an `out` it cannot serve as is goes the general way, with the same result."""
    from aot.fft import _fast

    want = getattr(np.fft, kind)(x, **kw)
    dtype = np.result_type(x.dtype, np.complex64)
    out = np.empty(want.shape, dtype)
    getattr(afft, kind)(x, out=out, **kw)
    hits = _fast.local.cache.hits
    for _ in range(3):
        out[...] = np.nan
        assert getattr(afft, kind)(x, out=out, **kw) is out
        close(out, want)
    assert _fast.local.cache.hits == hits + 3
    strided = np.empty(want.shape + (2,), dtype)[..., 0]  # not C-contiguous: the general path
    assert getattr(afft, kind)(x, out=strided, **kw) is strided
    close(strided, want)
    assert _fast.local.cache.hits == hits + 3
