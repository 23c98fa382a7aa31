"""Composed entries of the eager fast path (aot/fft/_composed.py): calls whose kernels need a copy
of the input first (real transforms along another axis, zero padding, odd real lengths, hfft and
ihfft) run prepared after their first call, with the general path's bits and numpy's results."""
from __future__ import annotations

import numpy as np
import pytest

import aot
import aot.fft as afft
from aot.fft import _api, _fast
from aot.fft._composed import Composed

from ._eager import close, data

REAL_IN = {"rfft", "ihfft", "rfftn", "rfft2", "ihfftn", "ihfft2"}
CASES = [  # (shape, axis, n)
    ((1001,), -1, None),  # odd length
    ((64, 32), 0, None),  # another axis
    ((7, 33, 5), 1, None),
    ((3, 4, 6), 0, 9),  # another axis, odd and padded
    ((50,), -1, 128),  # zero padding
    ((6, 40), 0, 16),  # cropped along another axis
    ((5, 21), -1, 21),
]


def _input(kind: str, shape, dtype):
    return data(shape, dtype if kind in REAL_IN else np.result_type(dtype, 1j))


def _check(kind, x, **kw):
    before = x.copy()
    want, general = getattr(np.fft, kind)(x, **kw), getattr(_api, kind)(x, **kw)
    for _ in range(2):  # the first call prepares the entry, the second runs it
        got = getattr(afft, kind)(x, **kw)
        assert got.dtype == general.dtype and got.shape == general.shape and got.flags.c_contiguous
        np.testing.assert_array_equal(got, general)
        close(got, want)
    np.testing.assert_array_equal(x, before)
    return _fast.entry(kind, x, kw.get("n", kw.get("s")), kw.get("axis", kw.get("axes")), kw.get("norm"))


@pytest.mark.parametrize("kind", ["rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, axis, n", CASES)
def test_real_transforms_run_composed_entries(kind, dtype, shape, axis, n):
    x = _input(kind, shape, dtype)
    if kind in ("irfft", "hfft") and n is None and shape[axis] % 2:
        n = 2 * shape[axis] - 1  # an odd output length
    m = shape[axis]
    length = n or (m if kind in REAL_IN else 2 * (m - 1))
    read = length if kind in REAL_IN else length // 2 + 1  # values the transform reads per row
    native = kind in ("rfft", "irfft") and axis in (-1, len(shape) - 1) and length % 2 == 0 and read <= m
    for norm in (None, "ortho", "forward"):
        e = _check(kind, x, n=n, axis=axis, norm=norm)
        assert type(e) is (tuple if native else Composed), (kind, shape, axis, n, norm)


@pytest.mark.parametrize("kind", ["fft", "ifft"])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64, np.float64])
def test_zero_padding_runs_a_composed_entry(kind, dtype):
    for shape, axis, n in [((50,), -1, 128), ((6, 10), 0, 15), ((4, 6, 5), 1, 1009)]:
        assert type(_check(kind, data(shape, dtype), n=n, axis=axis, norm="ortho")) is Composed


@pytest.mark.parametrize("kind", ["rfft", "irfft", "hfft", "ihfft", "fft"])
def test_views_take_their_own_entries(kind):
    """Strided, reversed and transposed inputs: each key prepares its own copy into the layout."""
    x = _input(kind, (12, 10), np.float64)
    kw = {"n": 16} if kind == "fft" else {"axis": 0}
    for view in (x, x[::-1], x[::2, ::-1], x.T, np.asfortranarray(x)):
        _check(kind, view, **kw)


def test_hermitian_pairs_invert_each_other():
    x = data((9, 16), np.float64)
    close(afft.hfft(afft.ihfft(x, axis=0), n=9, axis=0), x)
    close(afft.ihfft(afft.hfft(x.astype(complex), axis=1)), x.astype(complex))


def test_bad_arguments_still_raise_numpys_errors():
    x = data(10, np.complex128)
    with pytest.raises(ValueError, match="norm"):
        afft.hfft(x, norm="bogus")
    with pytest.raises(TypeError):
        afft.ihfft(x)  # complex input
    with pytest.raises(ValueError):
        afft.hfft(x, n=0)
    assert _fast.entry("hfft", x, None, None, "bogus") is None


def test_hfft_is_traced_as_one_call():
    f = aot.compile(lambda x: afft.hfft(x, n=30) * 2.0)
    x = data(16, np.complex128)
    close(f(x), np.fft.hfft(x, n=30) * 2.0)


@pytest.mark.parametrize("kind", ["rfftn", "irfftn", "rfft2", "irfft2"])
@pytest.mark.parametrize("axes", [(0,), (1, 0), (2, 1), (0, 2, 1)])
def test_nd_real_transforms_along_another_axis(kind, axes):
    """The real axis (the last of `axes`) not the array's last: the composed 1-D real transform
    and the complex passes, in the general path's order."""
    if kind.endswith("2") and len(axes) != 2:
        return
    x = data((6, 8, 10), np.float64 if kind == "rfftn" or kind == "rfft2" else np.complex128)
    for norm in (None, "ortho"):
        assert type(_check(kind, x, axes=axes, norm=norm)) is Composed


@pytest.mark.parametrize("kind", ["hfftn", "hfft2", "ihfftn", "ihfft2"])
@pytest.mark.parametrize("kw", [{}, {"axes": (0, 1)}, {"s": (8, 10), "axes": (-2, -1)}, {"norm": "ortho"}])
def test_nd_hermitian_transforms(kind, kw):
    """hfftn and ihfftn: the conjugate composed with irfftn's and rfftn's entries; the general path's
    bits, scipy.fft's results."""
    import scipy.fft

    for view in (lambda v: v, lambda v: v[::-1], lambda v: np.swapaxes(v, 0, 1)):
        x = view(data((6, 8, 4), np.complex128 if kind.startswith("h") else np.float64))
        want, general = getattr(scipy.fft, kind)(x, **kw), getattr(_api, kind)(x, **kw)
        for _ in range(2):
            got = getattr(afft, kind)(x, **kw)
            assert got.tobytes() == general.tobytes() and got.dtype == general.dtype
            close(got, want)
        assert type(_fast.entry(kind, x, kw.get("s"), kw.get("axes"), kw.get("norm"))) is Composed


@pytest.mark.parametrize("kind, shape, kw", [("rfft", (6, 8), {"axis": 0}), ("rfft", (50,), {"n": 64}),
                                             ("hfft", (9,), {}), ("ihfft", (7, 5), {}), ("irfft2", (6, 5), {"s": (8, 8)})])
def test_out_with_a_composed_entry(kind, shape, kw):
    """numpy's `out=`: the composed entry's result copied into it, as the general path does; a wrong
    shape raises its ValueError."""
    x = _input(kind, shape, np.float64)
    want = getattr(_api, kind)(x, **kw)
    for _ in range(3):
        out = np.empty(want.shape, want.dtype)
        assert getattr(afft, kind)(x, out=out, **kw) is out
        assert out.tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="wrong shape"):
        getattr(afft, kind)(x, out=np.empty(want.shape[:-1] + (want.shape[-1] + 1,), want.dtype), **kw)


@pytest.mark.parametrize("kind", ["fftn", "fft2", "rfftn", "irfft2", "hfftn"])
@pytest.mark.parametrize("dim", [1, (0, 2), [2, 1]])
def test_torch_dim_keys_n_d_entries(kind, dim):
    if kind.endswith("2") and type(dim) is int:
        return
    x = _input(kind, (6, 8, 10), np.float64)
    want = getattr(_api, kind)(x, dim=dim)
    for _ in range(2):
        assert getattr(afft, kind)(x, dim=dim).tobytes() == want.tobytes()
    assert _fast.entry(kind, x, None, (dim,) if type(dim) is int else tuple(dim)) is not None
    with pytest.raises(TypeError):
        getattr(afft, kind)(x, dim=(0, 1), axes=(1, 2))
