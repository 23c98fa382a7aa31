"""FFT plans: factorisation, the Bluestein choice, good sizes and twiddle accuracy."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from codegen.fft.plan import (
    HEADER_FIELDS,
    PlanError,
    bluestein_chirp,
    cost_guess,
    factorize,
    good_size,
    make_cplan,
    roots_table,
    unit_roots,
    use_bluestein,
)


@pytest.mark.parametrize("n, factors", [
    (1, []), (2, [2]), (3, [3]), (4, [4]), (8, [8]), (16, [2, 8]), (32, [4, 8]), (64, [8, 8]),
    (1024, [2, 8, 8, 8]), (12, [3, 4]), (1000, [5, 5, 5, 8]), (1536, [3, 8, 8, 8]),
    (27648, [3, 9, 2, 8, 8, 8]), (49, [7, 7]), (81, [9, 9]), (2025, [9, 9, 5, 5]),
    (3 * 5 * 9 * 13, [3, 9, 5, 13]), (1009, [1009]), (10007, [10007]), (2 * 10007, [10007, 2]),
])
def test_factorize(n, factors):
    assert factorize(n) == factors
    assert math.prod(factorize(n)) == n


def test_factorize_rejects_bad_lengths():
    with pytest.raises(PlanError, match=">= 1"):
        factorize(0)


@pytest.mark.parametrize("n", [2, 3, 5, 7, 64, 1000, 4096, 1 << 20, 3 ** 7, 5 ** 5, 17, 49, 121, 2 * 3 * 5 * 7 * 11])
def test_no_bluestein_for_smooth_or_small(n):
    assert not use_bluestein(n)


@pytest.mark.parametrize("n", [1009, 10007, 2 * 10007, 4 * 65537, 3 * 1009])
def test_bluestein_for_large_primes(n):
    assert use_bluestein(n)


def test_good_size_is_smooth_and_minimal():
    for target in [7, 13, 100, 1000, 2017, 20013, 100_001]:
        g = good_size(target)
        assert g >= target
        assert all(f in (2, 3, 4, 5, 7, 8, 9) for f in factorize(g))
        assert all(any(f > 8 for f in factorize(m)) or m in (1,) for m in range(target, g))


def test_cost_guess_prefers_smooth():
    assert cost_guess(1024) < cost_guess(1021)


def test_header_layout():
    p = make_cplan(120, np.complex128)
    assert p.header[0] == 120 and p.header[1] == len(p.factors) == 3
    rows = p.header[2:].reshape(-1, HEADER_FIELDS)
    l1 = 1
    for (ip, row_l1, ido, tw_off, cs_off), f in zip(rows, p.factors):
        assert (ip, row_l1, ido) == (f, l1, 120 // (l1 * f))
        w = p.twiddles[tw_off:tw_off + (ip - 1) * ido].reshape(ip - 1, ido)
        j, i = np.arange(1, ip)[:, None], np.arange(ido)[None, :]
        np.testing.assert_allclose(w, np.exp(2j * np.pi * j * l1 * i / 120), atol=1e-15)
        assert cs_off == -1
        l1 *= f
    assert p.twiddles.dtype == np.complex128
    assert make_cplan(120, np.complex64).twiddles.dtype == np.complex64


def test_generic_radix_gets_its_root_table():
    p = make_cplan(17 * 4 * 11, np.complex128)  # 17 runs on the generic pass, 11 and 4 on codelets
    rows = p.header[2:].reshape(-1, HEADER_FIELDS)
    cs_off = next(r for r in rows if r[0] == 17)[4]
    assert cs_off >= 0 and all(r[4] == -1 for r in rows if r[0] != 17)
    np.testing.assert_allclose(p.twiddles[cs_off:cs_off + 17], np.exp(2j * np.pi * np.arange(17) / 17), atol=1e-15)


def _exact_root(m: int, n: int) -> complex:
    with mpmath.workdps(40):
        return complex(mpmath.expjpi(mpmath.mpf(2 * m) / n))


@pytest.mark.parametrize("n", [7, 1000, 4096, 10007, 1 << 20])
def test_twiddles_are_accurate(n):
    """Correctly rounded up to 2^14 entries, within ~1 ulp beyond (two-table product)."""
    rng = np.random.default_rng(n)
    m = np.unique(np.concatenate([rng.integers(0, n, 200), [0, n // 8, n // 4, n // 2, n - 1]]))
    table = roots_table(n)
    err = max(abs(table[k] - _exact_root(int(k), n)) for k in m)
    assert err <= (1.2e-16 if n <= 1 << 14 else 3e-16)


def test_unit_roots_exact_symmetries():
    n = 96
    r = unit_roots(np.arange(n), n)
    assert r[0] == 1 and r[n // 4] == 1j and r[n // 2] == -1 and r[3 * n // 4] == -1j
    assert np.array_equal(r[1:n // 2].imag, r[n - 1:n // 2:-1].imag * -1)


def test_bluestein_chirp_reduces_exactly():
    n = 10007
    chirp = bluestein_chirp(n)
    for k in [1, 5000, 10006]:
        assert abs(chirp[k] - _exact_root((k * k) % (2 * n), 2 * n)) < 1.2e-16
