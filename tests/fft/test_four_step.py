"""Long transforms in four steps (codegen/fft/fourstep.py, threads.py's aot_fft_four_step): columns
with their twiddles, then rows written transposed from a work array (tall splits), or rows in place
and a square transpose (square splits); shorter ones as two halves and a radix-2 step
(threads.py's aot_fft_halves)."""
from __future__ import annotations

import numpy as np
import pytest

import aot.fft as afft
from aot.fft import _exec
from codegen.fft.names import LANE_BLOCK
from codegen.fft.plan import FOUR_STEP_MIN_BYTES, four_step_split, four_step_tables, unit_roots

from ._eager import data

# (n, dtype): lengths with splits for any lane count up to 16 (the widest of any x86 host): tall
# ones (a work array) from 2 MB (from 1 MB on one core), square ones (in place) from 16 MB, halves
# from 512 KB below 2 MB
CASES = [(1 << 17, np.complex128), (3 << 16, np.complex128), (512 ** 2, np.complex64), (5 << 17, np.complex64),
         (1024 ** 2, np.complex128), (1536 ** 2, np.complex64), (1 << 15, np.complex128), (3 << 15, np.complex64),
         (256 ** 2, np.complex128)]
EPS = {np.dtype(np.complex64): np.finfo(np.float32).eps, np.dtype(np.complex128): np.finfo(np.float64).eps}


def _four_step(n: int, dtype) -> _exec._FourStep | None:
    dtype = np.dtype(dtype)
    return _exec.split_of(_exec.get_plan(n, dtype), _exec.kernels(_exec._precision(dtype)))


def _accurate(got, want, dtype):
    """Within a few roundings per pass of the exact result, element by element, relative to the
    result's RMS (an error in one twiddle shows in its element; a tolerance relative to the
    largest value would hide it)."""
    rms = np.sqrt(np.mean(np.abs(want) ** 2))
    err = np.abs(got.astype(np.complex128) - want)
    assert err.max() <= 30 * EPS[np.dtype(dtype)] * rms, (err.max() / rms, np.argmax(err))


def test_splits_fit_the_lanes_and_the_limits():
    assert four_step_split(256 ** 2, 8, LANE_BLOCK) == (256, 256)  # square
    assert four_step_split(256 ** 2, 8, LANE_BLOCK, 64) == (64, 1024)  # tall
    assert four_step_split(2 * 256 ** 2, 8, LANE_BLOCK) is None  # not a square
    assert four_step_split(4096 ** 2, 8, LANE_BLOCK) is None  # columns beyond LANE_BLOCK_MAX_N
    assert four_step_split(1 << 22, 8, LANE_BLOCK, 64) is None  # rows beyond FOUR_STEP_MAX_M2
    assert four_step_split(1000 ** 2, 8, LANE_BLOCK) is None  # 1000 is not a multiple of 32
    assert four_step_split((11 * 32) ** 2, 8, LANE_BLOCK) is None  # 11 has no codelet
    assert four_step_split(3 << 16, 16, LANE_BLOCK, 24) is None  # 24 columns: not whole lane groups


def _split_expected(n: int, dtype) -> bool:
    """Whether n has a split on this machine (halves need two cores)."""
    nbytes = n * np.dtype(dtype).itemsize
    return nbytes >= FOUR_STEP_MIN_BYTES or _exec._machine_cores() > 1


def test_policy_halves_then_tall_then_square():
    assert _four_step(128 ** 2, np.complex128) is None  # 256 KB: the caches hold it
    for n, dtype in ((256 ** 2, np.complex64), (1 << 15, np.complex128)):  # 512 KB: halves
        assert isinstance(_four_step(n, dtype), _exec._Halves) == (_exec._machine_cores() > 1)
    one_mb = _four_step(256 ** 2, np.complex128)  # 1 MB: halves, four steps on one core
    assert isinstance(one_mb, _exec._Halves if _exec._machine_cores() > 1 else _exec._FourStep)
    tall, square = _four_step(1 << 17, np.complex128), _four_step(1024 ** 2, np.complex128)
    assert (tall.m1, tall.m2, tall.square) == (64, 2048, False)
    assert (square.m1, square.m2, square.square) == (1024, 1024, True)
    wide = _four_step(1 << 21, np.complex64)  # 32 columns would make rows of 2^16: 64 then
    assert (wide.m1, wide.m2) == (64, 1 << 15)


@pytest.mark.parametrize("m1, m2, vlen", [(64, 64, 4), (96, 96, 8), (256, 256, 8), (64, 192, 16)])
def test_twiddle_tables_are_the_roots_to_one_rounding(m1, m2, vlen):
    a, b = four_step_tables(m1, m2, vlen)
    lanes = b[:, 0, :] + 1j * b[:, 1, :]  # (k1, lane)
    got = a[:, :, None] * lanes[None, :, :]  # (j2 // vlen, k1, j2 % vlen)
    j2 = (np.arange(m2 // vlen)[:, None, None] * vlen + np.arange(vlen)[None, None, :])
    want = unit_roots(j2 * np.arange(m1)[None, :, None], m1 * m2)
    assert np.abs(got - want).max() <= 4 * np.finfo(np.float64).eps


@pytest.mark.parametrize("n, dtype", CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("kind, norm", [("fft", None), ("ifft", None), ("fft", "ortho"), ("ifft", "forward")])
def test_matches_numpy(n, dtype, kind, norm):
    assert (_four_step(n, dtype) is not None) == _split_expected(n, dtype)
    x = data((n,), dtype)
    want = getattr(np.fft, kind)(x.astype(np.complex128), norm=norm)
    got = getattr(afft, kind)(x, norm=norm)
    assert got.dtype == np.dtype(dtype) and got.shape == (n,)
    _accurate(got, want, dtype)


@pytest.mark.parametrize("n, dtype", CASES[:1] + CASES[2:3] + CASES[4:5] + CASES[6:7], ids=lambda v: str(v))
def test_in_place_and_strided_batches(n, dtype):
    x = data((3, 2, n), dtype)[::2, 1]  # two transforms, rows 4n apart
    want = np.fft.fft(x.astype(np.complex128), axis=-1)
    _accurate(afft.fft(x), want, dtype)
    y = np.array(x)
    _exec.c2c(y, y, -1, True, 1.0)  # in place: each lane block is read whole before it is written
    assert np.array_equal(y, afft.fft(x))


def test_python_threads_share_a_plan():
    from concurrent.futures import ThreadPoolExecutor

    n, dtype = CASES[0]
    xs = [data((n,), dtype) for _ in range(4)]
    want = [afft.fft(x) for x in xs]
    with ThreadPoolExecutor(4) as pool:  # cffi releases the GIL: the calls overlap
        got = list(pool.map(lambda i: [afft.fft(xs[i % 4]) for _ in range(3)], range(8)))
    for i, rs in enumerate(got):
        assert all(np.array_equal(r, want[i % 4]) for r in rs)


def test_one_core_machines_keep_radix_passes_or_four_steps(monkeypatch):
    plan = _exec.get_plan(256 ** 2, np.dtype(np.complex128))
    monkeypatch.setattr(_exec, "_machine_cores", lambda: 1)
    before = plan.__dict__.pop("_split", False)
    try:
        fs = _exec.split_of(plan, _exec.kernels("f64"))
        assert isinstance(fs, _exec._FourStep) and (fs.m1, fs.m2) == (64, 1024)
        x = data((256 ** 2,), np.complex128)
        _accurate(afft.fft(x), np.fft.fft(x), np.complex128)
    finally:  # this machine's split back
        plan.__dict__.pop("_split", None)
        if before is not False:
            plan._split = before
