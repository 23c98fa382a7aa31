"""np.fft.hfft/ihfft (irfft/rfft of conjugates, direction-swapped norms), fftshift/ifftshift (rolls)
and fftfreq/rfftfreq (computed by numpy while tracing: they take no arrays) in compiled code."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import aot

RNG = np.random.default_rng(1)
Z = RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))
R = RNG.standard_normal((5, 6))

CASES = {
    "hfft": (lambda a: np.fft.hfft(a), Z),
    "hfft_n_axis_ortho": (lambda a: np.fft.hfft(a, n=7, axis=0, norm="ortho"), Z),
    "hfft_forward": (lambda a: np.fft.hfft(a, norm="forward"), Z),
    "hfft_real_input": (lambda a: np.fft.hfft(a, n=9), R),
    "ihfft": (lambda a: np.fft.ihfft(a), R),
    "ihfft_axis_forward": (lambda a: np.fft.ihfft(a, norm="forward", axis=0), R),
    "ihfft_n": (lambda a: np.fft.ihfft(a, n=4), R),
    "fftshift": (lambda a: np.fft.fftshift(a), R),
    "fftshift_odd_axis": (lambda a: np.fft.fftshift(a, axes=0), R),
    "ifftshift_axes": (lambda a: np.fft.ifftshift(a, axes=(0, 1)), R),
    "ifftshift_complex": (lambda a: np.fft.ifftshift(a), Z),
    "fftfreq": (lambda a: a * np.fft.fftfreq(a.shape[-1]), R),
    "rfftfreq": (lambda a: a[:, :4] * np.fft.rfftfreq(6, d=0.5), R),
}


def _check(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy(name, backend):
    fn, a = CASES[name]
    _check(aot.compile(fn, backend=backend, fullgraph=True)(a), fn(a))
    _check(aot.compile(fn, backend=backend, fullgraph=True)(a[::-1]), fn(a[::-1]))  # a reversed view


def test_round_trip_and_inverse_shift():
    f = aot.compile(lambda a: np.fft.ihfft(np.fft.hfft(a, n=2 * a.shape[-1] - 1)))
    h = Z.copy()
    h[:, 0] = h[:, 0].real  # a Hermitian signal's spectrum: its DC term is real
    np.testing.assert_allclose(f(h), h, atol=1e-12)
    g = aot.compile(lambda a: np.fft.ifftshift(np.fft.fftshift(a)))
    np.testing.assert_array_equal(g(R), R)


def test_bad_norm():
    with pytest.raises(ValueError, match="Invalid norm value"):
        aot.compile(lambda a: np.fft.hfft(a, norm="sideways"), fullgraph=True)(Z)


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a system C compiler (cc)")
def test_library(tmp_path):
    def fn(z, r):
        return np.fft.hfft(z), np.fft.ihfft(r), np.fft.fftshift(r)

    lib = aot.aot_load(aot.aot_compile(fn, (Z, R), path=tmp_path / "fft_helpers.so"))
    for got, want in zip(lib(Z, R), fn(Z, R), strict=True):
        _check(got, want)
