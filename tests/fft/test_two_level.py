"""Two-level twiddle tables (codegen/fft/plan.py): the passes with a long ido read w(j, i) as
fine[j][i mod B] * coarse[j][i div B]; the plan lays both parts out, the kernels multiply them, and
threads sharing such a pass over i pass where their range starts (any start)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from aot.fft import _exec
from aot.fft._native import ffi
from aot.fft._plans import DirectPlan
from codegen.fft.names import FLAG_FORWARD, pass_entry_name
from codegen.fft.plan import TWIDDLE_BLOCK, make_cplan, pass_rows, twiddle_count, two_level, unit_roots

B = TWIDDLE_BLOCK


def _rows(header):
    return pass_rows(header).tolist()


@pytest.mark.parametrize("n", [27648, 3 * 11 * (1 << 12), 1 << 20])
def test_tables_rebuild_every_twiddle(n):
    p = make_cplan(n, np.complex128)
    rows = _rows(p.header)
    assert any(two_level(ip, ido) for ip, _, ido, _, _ in rows)
    cs = sum(ip for ip, _, _, _, cs_off in rows if cs_off >= 0)  # generic radices' roots
    assert p.twiddles.size == sum(twiddle_count(ip, ido) for ip, _, ido, _, _ in rows) + cs
    for ip, l1, ido, off, _ in rows:
        if not two_level(ip, ido):
            continue
        legs = ip - 1
        fine = p.twiddles[off: off + legs * B].reshape(legs, B)
        coarse = p.twiddles[off + legs * B: off + legs * (B + ido // B)].reshape(legs, ido // B)
        i = np.arange(ido)
        w = fine[:, i % B] * coarse[:, i // B]
        j = np.arange(1, ip)[:, None]
        want = unit_roots(j * l1 * i, n)  # correctly rounded
        assert np.abs(w - want).max() <= 3 * np.finfo(np.float64).eps


def test_short_passes_keep_full_tables():
    p = make_cplan(4096, np.complex128)  # [8, 8, 8, 8]: the longest ido is 512
    assert not any(two_level(ip, ido) for ip, _, ido, _, _ in _rows(p.header))
    assert p.twiddles.size == sum((ip - 1) * ido for ip, _, ido, _, _ in _rows(p.header))


@pytest.mark.parametrize("cdtype", [np.complex128, np.complex64])
def test_a_pass_shared_over_i_from_any_start(cdtype):
    """Pass 1 of 27648 (radix 3, l1 1, ido 9216: two-level) through the pass entry in pieces that
    cut vectors gives the whole pass's values."""
    n = 27648
    precision = "f64" if cdtype == np.complex128 else "f32"
    k = _exec.kernels(precision)
    plan = DirectPlan(n, np.dtype(cdtype))
    ip, l1, ido, _, _ = _rows(plan.header)[0]
    assert l1 == 1 and two_level(ip, ido)
    hdr, tw = plan.pointers(k, True)
    entry = ffi.cast("void (*)(int64_t *, void *, int64_t, void *, void *, int64_t, int64_t, int32_t)",
                     k.address(pass_entry_name(precision)))
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(cdtype)
    whole, pieces = np.zeros_like(x), np.zeros_like(x)

    def ptr(a):
        return ffi.cast("void *", a.ctypes.data)

    entry(hdr, ffi.cast("void *", tw), 0, ptr(x), ptr(whole), 0, ido, FLAG_FORWARD)
    cuts = [0, 5, 67, 4099, 4160, ido]
    for lo, hi in itertools.pairwise(cuts):
        entry(hdr, ffi.cast("void *", tw), 0, ptr(x), ptr(pieces), lo, hi, FLAG_FORWARD)
    # the reference: the radix-3 butterfly over j, leg m times conj(w(m, i))
    cc = x.astype(np.complex128).reshape(ip, ido)
    w3 = np.exp(-2j * np.pi / 3)
    i = np.arange(ido)
    ref = np.stack([sum(cc[j] * w3 ** (j * m) for j in range(ip)) * np.conj(unit_roots(m * i, n))
                    for m in range(ip)])
    tol = 8 * np.finfo(cdtype).eps * np.abs(ref).max()
    assert np.abs(whole.reshape(ip, ido) - ref).max() <= tol
    assert np.abs(pieces - whole).max() <= tol
