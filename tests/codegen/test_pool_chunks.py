"""The pool's chunk claiming (codegen/kernels/parallel.py): every chunk runs exactly once for
any thread count, with the claimed-chunk set of jobs of up to MASK_CHUNKS chunks (each participant
takes its own chunk first) and the claim counter of larger ones, and with fewer chunks than
threads. A chunk run twice or skipped shows as a wrong element of an in-place update."""
from __future__ import annotations

import numpy as np
import pytest

import aot
from codegen.kernels.parallel import MASK_CHUNKS


def _bump(x):
    x += 1.0  # in place: a chunk run twice adds 2, a skipped one 0
    return x


@pytest.mark.parametrize("threads", [2, 3, MASK_CHUNKS, MASK_CHUNKS + 1, 40])
def test_every_chunk_runs_once(threads):
    f = aot.compile(_bump, options={"num_threads": threads, "disk_cache": False})
    for n in (1 << 18, (1 << 18) + 7, 200_003, 1 << 20):
        x = np.zeros(n)
        for _ in range(5):
            f(x)
        np.testing.assert_array_equal(x, np.full(n, 5.0), err_msg=f"{threads} threads, n={n}")


def test_sums_agree_across_thread_counts():
    x = np.random.default_rng(3).standard_normal(3_000_001)
    runs = [aot.compile(lambda a: (a * a).sum(), options={"num_threads": t, "disk_cache": False})(x)
            for t in (1, 2, MASK_CHUNKS + 1)]
    assert runs[0] == runs[1] == runs[2]
