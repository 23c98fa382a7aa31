"""Accuracy against exact references: relative RMS error no worse than numpy's.

Small sizes: a direct DFT in mpmath (40 digits). Large sizes: signals that are sums of a few
exact harmonics, whose spectrum is known in closed form (n * a_r at bin f_r, zero elsewhere);
the signal itself is evaluated in long double with exact integer reduction of the angle.
"""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

import aot.fft as afft


def _rel_rms(got, exact) -> float:
    return float(np.sqrt(np.sum(np.abs(got - exact) ** 2) / np.sum(np.abs(exact) ** 2)))


def _mp_dft(x: np.ndarray) -> np.ndarray:
    n = len(x)
    with mpmath.workdps(40):
        xs = [mpmath.mpc(complex(v)) for v in x]
        roots = [mpmath.expjpi(mpmath.mpf(-2 * m) / n) for m in range(n)]
        return np.array([complex(mpmath.fsum(xs[j] * roots[(j * k) % n] for j in range(n))) for k in range(n)])


@pytest.mark.parametrize("n", [7, 16, 60, 97, 128, 210])
def test_small_sizes_against_mpmath(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    exact = _mp_dft(x)
    ours, theirs = _rel_rms(afft.fft(x), exact), _rel_rms(np.fft.fft(x), exact)
    assert ours <= max(1.5 * theirs, 4e-16), (ours, theirs)
    x32 = x.astype(np.complex64)
    exact32 = _mp_dft(x32.astype(np.complex128))
    ours32, theirs32 = _rel_rms(afft.fft(x32), exact32), _rel_rms(np.fft.fft(x32), exact32)
    assert ours32 <= max(1.5 * theirs32, 2e-7), (ours32, theirs32)


def _harmonics(n: int, seed: int, count: int = 6):
    """x_j = sum_r a_r exp(2 pi i f_r j / n) (long double, exact angle reduction) and its DFT."""
    rng = np.random.default_rng(seed)
    freqs = rng.choice(n, size=count, replace=False)
    amps = rng.standard_normal(count) + 1j * rng.standard_normal(count)
    j = np.arange(n, dtype=np.int64)
    pi = np.arctan(np.longdouble(1)) * 4
    re = np.zeros(n, np.longdouble)
    im = np.zeros(n, np.longdouble)
    for f, a in zip(freqs, amps):
        ang = (2 * pi / n) * ((int(f) * j) % n).astype(np.longdouble)
        c, s = np.cos(ang), np.sin(ang)
        re += np.longdouble(a.real) * c - np.longdouble(a.imag) * s
        im += np.longdouble(a.real) * s + np.longdouble(a.imag) * c
    x = re.astype(np.float64) + 1j * im.astype(np.float64)
    exact = np.zeros(n, np.complex128)
    exact[freqs] = n * amps
    return x, exact


@pytest.mark.parametrize("n", [1000, 1009, 4096, 10007, 27648])
def test_harmonics_no_worse_than_numpy(n):
    x, exact = _harmonics(n, n)
    ours, theirs = _rel_rms(afft.fft(x), exact), _rel_rms(np.fft.fft(x), exact)
    assert ours <= max(1.5 * theirs, 5e-16), (ours, theirs)


@pytest.mark.slow
def test_c128_2_20_error_below_1e13():
    n = 1 << 20
    x, exact = _harmonics(n, 20, count=8)
    ours, theirs = _rel_rms(afft.fft(x), exact), _rel_rms(np.fft.fft(x), exact)
    assert ours < 1e-13
    assert ours <= max(1.5 * theirs, 5e-16), (ours, theirs)
    back = afft.ifft(afft.fft(x))
    assert _rel_rms(back, x) < 1e-13
