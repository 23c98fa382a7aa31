"""Eager transforms give the same bits for every thread count: long single transforms share their
passes, or run in four steps or as two halves (codegen/fft/threads.py), batches and the axes of n-D transforms are split in whole lane
groups or whole batches (threads.py's c2c split), real passes by rows, and Bluestein's rows (the
planner's exec as a pool kernel)."""
from __future__ import annotations

import numpy as np
import pytest

import aot.fft as afft
from aot.fft import _exec

from ._eager import close, data

THREADS = (1, 2, 3, 5)
CASES = [  # (kind, input shape, dtype, kwargs): each above the one-thread limit of its path
    ("fft", (1 << 16,), np.complex128, {}), ("fft", (5 ** 8,), np.complex128, {}),
    ("ifft", (3 << 16,), np.complex64, {"norm": "ortho"}), ("fft", (1 << 18,), np.complex64, {}),
    ("fft", (300, 1024), np.complex128, {}), ("fft", (1000, 96), np.complex64, {"axis": 0}),
    ("fft2", (256, 300), np.complex128, {}), ("ifftn", (40, 48, 36), np.complex64, {}),
    ("rfft", (1 << 18,), np.float64, {}), ("rfft", (100, 2048), np.float32, {}),
    ("irfft", ((1 << 17) + 1,), np.complex128, {}), ("irfft", (64, 1025), np.complex64, {}),
    ("rfft2", (512, 256), np.float64, {}), ("irfftn", (32, 64, 33), np.complex128, {}),
    ("rfft", (3 * (1 << 15) + 2,), np.float32, {}),  # an odd half length
    ("irfft", (3 * (1 << 14) + 2,), np.complex64, {}),
    # columns gathered in lane blocks with a tail of single ones; tasks split whole, a dim looped
    ("fft", (130, 8, 70), np.complex128, {"axis": 0}), ("fft", (6, 5, 64, 41), np.complex128, {"axis": 2}),
    ("ifft", (3, 7, 4096), np.complex64, {"axis": -1}),
    # four steps (c128 2^16 above is one too): a batch, in place (irfft's half length), a scale
    ("ifft", (2, 1 << 18), np.complex64, {"norm": "forward"}), ("irfft", ((1 << 19) + 1,), np.complex128, {}),
    # ... rfft's half length 2^19, c64 2^19, and a square split in place
    ("rfft", (1 << 20,), np.float64, {}), ("fft", (1 << 19,), np.complex64, {"norm": "ortho"}),
    ("ifft", (1 << 20,), np.complex128, {}), ("fft", (1 << 15,), np.complex128, {}),  # ... and halves
    ("irfft", ((1 << 16) + 1,), np.complex64, {"norm": "forward"}),  # halves in place (a copy first)
    ("fft", (3 * 11 * (1 << 12),), np.complex64, {}),  # passes shared; the first, two-level, over i
    # Bluestein a row at a time, rows over the pool (planner.py's chunk kernel); a dim looped, axis 0
    ("fft", (128, 1009), np.complex128, {}), ("ifft", (2, 97, 700), np.complex64, {"axis": 1}),
    ("fft", (1009, 70), np.complex128, {"axis": 0, "norm": "ortho"}),
]


@pytest.fixture
def threads():
    old = _exec.num_threads()
    yield _exec.set_num_threads
    _exec.set_num_threads(old)


@pytest.mark.parametrize("kind, shape, dtype, kw", CASES,
                         ids=lambda v: "" if isinstance(v, dict) else str(v))
def test_results_do_not_depend_on_the_thread_count(threads, kind, shape, dtype, kw):
    x = data(shape, dtype)
    results = []
    for t in THREADS:
        threads(t)
        results.append(getattr(afft, kind)(x, **kw))
    close(results[0], getattr(np.fft, kind)(x, **kw))
    for t, r in zip(THREADS[1:], results[1:]):
        assert r.dtype == results[0].dtype and r.shape == results[0].shape
        assert np.array_equal(r, results[0]), f"{t} threads differ from one"
