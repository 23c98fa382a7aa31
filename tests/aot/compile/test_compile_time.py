"""Programs whose LLVM optimisation once ran for hours (O3's loop vectoriser on a full reduction's
loop-invariant chain of NaN-propagating min/max steps, see codegen/targets/base.optimize): they
compile now well within a generous budget, without the watchdog firing."""
from __future__ import annotations

import warnings

import numpy as np
import pytest


def issue_11(a, b):
    t = np.take(a, [5, 3], axis=-1)
    v = np.concatenate((np.sin(t), t), axis=0)
    c = b + 1
    return v.sum(), np.var(c), np.min(b), np.flip(c, -1)


def fuzz_seed_50(a):  # tools/fuzz_compile_time.py --show 50
    t1 = np.take(a, [5, 1], axis=-2)
    t2 = np.concatenate((t1, np.sin(t1)), axis=0)
    t5 = np.sqrt(np.abs(np.maximum(np.maximum(t2, t2), t2)))
    t7 = np.sum(np.concatenate((t5, t5), axis=0), axis=-2)
    return np.std(t7, keepdims=True), t1.max()


CASES = {
    "issue_11": (issue_11, [(3, 7), (4, 7)]),
    "fuzz_seed_50": (fuzz_seed_50, [(16, 7, 15)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiles_without_the_watchdog_firing(name):
    import aot

    fn, shapes = CASES[name]
    rng = np.random.default_rng(0)
    args = [rng.random(s) for s in shapes]
    f = aot.compile(fn, options={"disk_cache": False, "compile_timeout": 20})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the watchdog's warning would fail the test
        out = f(*args)
    assert f.cache_info()["compile_timeouts"] == 0
    for got, want in zip(out, fn(*args)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
