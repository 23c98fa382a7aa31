"""aot.fft against numpy.fft (scipy.fft for the n-D Hermitian transforms numpy lacks)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.fft as sfft

import aot.fft as afft

NORMS = [None, "backward", "ortho", "forward"]
SIZES = [1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 30, 64, 100, 128, 210, 1000, 1009, 1024, 1536]
DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int64, np.int32, np.bool_]
RTOL = {np.dtype(np.complex64): 2e-5, np.dtype(np.complex128): 1e-12,
        np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) > 0.5
    if dtype.kind == "i":
        return rng.integers(-50, 50, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _check(got, want, scale_like=None):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    ref = np.abs(want).max() if want.size else 0.0
    tol = RTOL[got.dtype] * max(ref, 1e-30)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * 4)


# -- 1-D ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_c2c_sizes(name, n):
    x = _data((3, n), np.complex128, n)
    _check(getattr(afft, name)(x), getattr(np.fft, name)(x))


@pytest.mark.parametrize("n", [10007, 27648, 2 * 1009, 11 * 13 * 4])
def test_c2c_large_and_prime(n):
    x = _data(n, np.complex128, n)
    _check(afft.fft(x), np.fft.fft(x))
    _check(afft.ifft(x), np.fft.ifft(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_1d_dtypes_and_norms(name, norm, dtype):
    x = _data((4, 30), dtype)
    if name in ("rfft", "ihfft") and np.dtype(dtype).kind == "c":
        with pytest.raises(TypeError):
            getattr(afft, name)(x, norm=norm)
        return
    _check(getattr(afft, name)(x, norm=norm), getattr(np.fft, name)(x, norm=norm))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 31, 64, 100, 1009, 1024])
@pytest.mark.parametrize("name", ["rfft", "irfft", "hfft", "ihfft"])
def test_real_sizes_odd_and_even(name, n):
    real_in = name in ("rfft", "ihfft")
    x = _data((2, n), np.float64 if real_in else np.complex128, n)
    if n == 1 and not real_in:  # the default output length 2 * (1 - 1) is invalid
        with pytest.raises(ValueError, match="Invalid number of FFT data points"):
            getattr(afft, name)(x)
    else:
        _check(getattr(afft, name)(x), getattr(np.fft, name)(x))
    if not real_in:  # odd and even output lengths from the same input
        for m in (2 * n - 1, 2 * n, max(1, n // 2)):
            _check(getattr(afft, name)(x, n=m), getattr(np.fft, name)(x, n=m))


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("n", [1, 5, 16, 33, 100])
def test_padding_and_truncation(name, n):
    x = _data((3, 20, 4), np.float64 if name in ("rfft", "ihfft") else np.complex128)
    for axis in (0, 1, -1, -2):
        _check(getattr(afft, name)(x, n=n, axis=axis), getattr(np.fft, name)(x, n=n, axis=axis))


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft"])
def test_strided_and_non_contiguous(name):
    base = _data((40, 50, 6), np.float64 if name == "rfft" else np.complex128)
    views = [base[::2, 1::3, 2], base.transpose(1, 2, 0), base[::-1, :, ::2], np.asfortranarray(base)]
    for v in views:
        for axis in range(v.ndim):
            _check(getattr(afft, name)(v, axis=axis), getattr(np.fft, name)(v, axis=axis))


def test_input_is_not_modified():
    x = _data((8, 16), np.complex128)
    keep = x.copy()
    afft.fft(x)
    afft.ifftn(x)
    afft.irfft(x)
    np.testing.assert_array_equal(x, keep)


def test_torch_dim_keyword():
    x = _data((6, 10), np.complex128)
    _check(afft.fft(x, dim=0), np.fft.fft(x, axis=0))
    _check(afft.fft2(x, dim=(1, 0)), np.fft.fft2(x, axes=(1, 0)))
    _check(afft.rfftn(x.real, dim=(0,)), np.fft.rfftn(x.real, axes=(0,)))
    with pytest.raises(TypeError, match="dim"):
        afft.fft(x, axis=1, dim=0)


# -- n-D -------------------------------------------------------------------------------------------
ND = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn"]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ND)
def test_nd_vs_numpy(name, norm):
    x = _data((6, 10, 9), np.float64 if name.startswith("rfft") else np.complex128)
    f, g = getattr(afft, name), getattr(np.fft, name)
    _check(f(x, norm=norm), g(x, norm=norm))
    for axes in [(0, 2), (2, 0), (-1, -3), (1,), (0, 1, 2), (2, 1, 0)]:
        if name.endswith("2") and len(axes) != 2:
            continue
        _check(f(x, axes=axes, norm=norm), g(x, axes=axes, norm=norm))
        s = [5 + 2 * i for i in range(len(axes))]
        _check(f(x, s=s, axes=axes, norm=norm), g(x, s=s, axes=axes, norm=norm))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ["hfft2", "ihfft2", "hfftn", "ihfftn"])
def test_hermitian_nd_vs_scipy(name, norm):
    x = _data((6, 10, 9), np.float64 if name.startswith("ih") else np.complex128)
    f, g = getattr(afft, name), getattr(sfft, name)
    _check(f(x, norm=norm), g(x, norm=norm))
    axes = (0, 2)
    _check(f(x, axes=axes, norm=norm), g(x, axes=axes, norm=norm))
    _check(f(x, s=(7, 8), axes=axes, norm=norm), g(x, s=(7, 8), axes=axes, norm=norm))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.int32])
def test_nd_dtypes(dtype):
    x = _data((8, 12), dtype)
    for name in ["fft2", "ifftn"] + (["rfft2", "rfftn"] if np.dtype(dtype).kind != "c" else ["irfft2"]):
        _check(getattr(afft, name)(x), getattr(np.fft, name)(x))


def test_repeated_axes_transform_twice_like_numpy():
    x = _data((8, 6), np.complex128)
    _check(afft.fftn(x, axes=(0, 0)), np.fft.fftn(x, axes=(0, 0)))


# -- identities ------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 7, 64, 1000, 1009, 4096])
def test_round_trips(n):
    x = _data((3, n), np.complex128, n)
    np.testing.assert_allclose(afft.ifft(afft.fft(x)), x, atol=1e-12)
    r = x.real
    np.testing.assert_allclose(afft.irfft(afft.rfft(r), n=n), r, atol=1e-12)
    np.testing.assert_allclose(afft.ihfft(afft.hfft(x, n=n), n=n)[..., :n // 2 + 1],
                               afft.ihfft(afft.hfft(x, n=n), n=n), atol=1e-12)
    np.testing.assert_allclose(afft.ifftn(afft.fftn(x, norm="ortho"), norm="ortho"), x, atol=1e-12)


@pytest.mark.parametrize("n", [16, 1000, 1009])
def test_parseval(n):
    x = _data(n, np.complex128, n)
    y = afft.fft(x, norm="ortho")
    assert np.isclose(np.vdot(x, x).real, np.vdot(y, y).real, rtol=1e-12)
    r = x.real
    half = afft.rfft(r)
    energy = abs(half[0]) ** 2 + 2 * np.sum(abs(half[1:(n + 1) // 2]) ** 2)
    if n % 2 == 0:
        energy += abs(half[-1]) ** 2
    assert np.isclose(energy / n, np.sum(r * r), rtol=1e-12)


def test_big_batches_use_threads_and_match():
    x = _data((256, 512), np.complex128)
    _check(afft.fft(x), np.fft.fft(x))
    _check(afft.fft(x, axis=0), np.fft.fft(x, axis=0))
    _check(afft.fft2(x.astype(np.complex64)), np.fft.fft2(x.astype(np.complex64)))
    r = x.real.copy()
    _check(afft.rfft(r), np.fft.rfft(r))
    _check(afft.irfft(x), np.fft.irfft(x))


def test_empty_batches():
    x = np.zeros((0, 8), np.complex128)
    _check(afft.fft(x), np.fft.fft(x))
    _check(afft.rfft(x.real), np.fft.rfft(x.real))


# -- errors ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_bad_arguments(name):
    f = getattr(afft, name)
    x = _data(8, np.float64)
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        f(x, n=0)
    with pytest.raises(ValueError, match="Invalid norm value"):
        f(x, norm="bogus")
    with pytest.raises(np.exceptions.AxisError):
        f(x, axis=1)
    with pytest.raises(TypeError):
        f(x, n=2.5)


def test_bad_nd_arguments():
    x = _data((4, 4), np.complex128)
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        afft.fftn(x, s=(4, 4), axes=(0,))
    with pytest.raises(IndexError):  # numpy: IndexError (AxisError once s is given)
        afft.fft2(x, axes=(0, 2))
    with pytest.raises(np.exceptions.AxisError):
        afft.fft2(x, s=(4, 4), axes=(0, 2))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        afft.fft2(x, s=(0, 4), axes=(0, 1))


# -- helpers and the plan cache ---------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 7, 8, 101])
def test_freqs_and_shifts(n):
    np.testing.assert_array_equal(afft.fftfreq(n, 0.3), np.fft.fftfreq(n, 0.3))
    np.testing.assert_array_equal(afft.rfftfreq(n, 2.0), np.fft.rfftfreq(n, 2.0))
    x = _data((n, 3), np.float64)
    for axes in [None, 0, (0, 1), (1,)]:
        np.testing.assert_array_equal(afft.fftshift(x, axes), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(afft.ifftshift(x, axes), np.fft.ifftshift(x, axes))
    np.testing.assert_array_equal(afft.fftshift(x, dim=0), np.fft.fftshift(x, axes=0))
    with pytest.raises(ValueError, match="integer"):
        afft.fftfreq(2.5)


def test_plan_cache_bounds_and_clear():
    cache = afft.plan_cache
    cache.clear()
    before = cache.stats()
    x = _data(96, np.complex128)
    afft.fft(x)
    afft.fft(x)
    after = cache.stats()
    assert after.misses == before.misses + 1 and after.hits >= before.hits + 1
    assert after.entries == 1 and after.bytes > 0
    old = cache.max_entries
    try:
        cache.max_entries = 2
        for n in (97, 98, 99):
            afft.fft(_data(n, np.complex128))
        assert cache.stats().entries == 2 and cache.stats().evictions >= 2
    finally:
        cache.max_entries = old
    cache.clear()
    assert cache.stats().entries == 0 and cache.stats().bytes == 0


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_every_size_up_to_200(dtype):
    """Each length exercises another mix of codelets, generic passes, Bluestein and lane groups."""
    for n in range(1, 201):
        x = _data((9, n), dtype, n)
        _check(afft.fft(x), np.fft.fft(x))
        r = x.real.copy()
        _check(afft.rfft(r), np.fft.rfft(r))
        _check(afft.irfft(x, n=n), np.fft.irfft(x, n=n))


@pytest.mark.parametrize("n", [1 << 17, 3 << 16, 5 ** 8])
def test_long_single_transform_shared_by_threads(n):
    from aot.fft import _exec

    old = _exec.num_threads()
    _exec.set_num_threads(2)
    try:
        x = _data(n, np.complex128, n)
        _check(afft.fft(x), np.fft.fft(x))
        _check(afft.ifft(x, norm="ortho"), np.fft.ifft(x, norm="ortho"))
        _check(afft.rfft(x.real), np.fft.rfft(x.real))
        _check(afft.irfft(x), np.fft.irfft(x))  # its half-length transform runs in place
    finally:
        _exec.set_num_threads(old)
