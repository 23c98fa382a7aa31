"""The call hot path (runtime.JitFunction.fast and the native argument check) and the thread pool."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import aot
from runtime.buffers import ARRAY_LAYOUT


def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


def test_array_layout_probed():
    assert ARRAY_LAYOUT is not None  # CPython + numpy on a 64-bit host: the native check is used


def test_fast_path_taken_and_correct():
    f = aot.compile(lambda x, y: x * y + 1.0)
    x, y = np.arange(16.0), np.ones(16)
    np.testing.assert_array_equal(f(x, y), x * y + 1.0)
    np.testing.assert_array_equal(f(x, y), x * y + 1.0)
    entry = f._entries[0]
    assert callable(entry.fast)
    assert entry.fast(x, y) is not None
    assert f.cache_info()["hits"] == 1  # calls through `fast` directly are not counted
    f(x, y)
    assert f.cache_info()["hits"] == 2


@pytest.mark.parametrize("make", [
    lambda: np.arange(32.0)[::2],  # strided view: the native fast path reads its strides
    lambda: np.arange(16.0).astype(">f8"),  # non-native byte order: other dtype object
    lambda: np.frombuffer(np.arange(16.0).tobytes()),  # read-only, over a bytes object
    lambda: np.asfortranarray(np.arange(16.0)),
])
def test_fast_path_declines_other_layouts(make):
    f = aot.compile(lambda x, y: x * y + 1.0)
    x, y = np.arange(16.0), np.ones(16)
    f(x, y)
    f(x, y)
    a = make()
    np.testing.assert_allclose(f(a, y), a * y + 1.0)
    np.testing.assert_allclose(f(x, y), x * y + 1.0)


def test_fast_path_rejects_wrong_arity_and_types():
    f = aot.compile(lambda x, y: x + y)
    x = np.ones(4)
    f(x, x)
    f(x, x)
    assert f._entries[0].fast(x) is None
    assert f._entries[0].fast(x, [1.0, 2.0, 3.0, 4.0]) is None
    np.testing.assert_array_equal(f(x, np.float32(2.0) * np.ones(4, np.float32)), x + 2.0)


def test_fast_path_tuple_outputs():
    f = aot.compile(lambda x, y: (x + y, x * y))
    x, y = np.arange(5.0), np.full(5, 3.0)
    f(x, y)
    s, p = f(x, y)
    np.testing.assert_array_equal(s, x + y)
    np.testing.assert_array_equal(p, x * y)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [70_001, 1_000_003])
def test_threaded_bit_identical_to_serial(dt, n):
    rng = np.random.default_rng(n)
    x, y = rng.uniform(-3, 3, n).astype(dt), rng.uniform(0, 3, n).astype(dt)
    par = aot.compile(chain, options={"num_threads": 2})
    ser = aot.compile(chain, options={"num_threads": 1})
    a = par(x, y)
    np.testing.assert_array_equal(a, ser(x, y))
    for _ in range(5):  # the pool is reused across calls
        np.testing.assert_array_equal(par(x, y), a)


def test_pool_concurrent_callers_and_fork():
    x = np.random.default_rng(0).random(300_000)
    y = x + 1
    f = aot.compile(chain, options={"num_threads": 2})
    ref = f(x, y)
    bad = []

    def work():
        for _ in range(20):
            if not np.array_equal(f(x, y), ref):
                bad.append(1)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
    if not hasattr(os, "fork"):
        return
    pid = os.fork()
    if pid == 0:  # the child has the pool's memory but not its threads
        os._exit(0 if np.array_equal(f(x, y), ref) else 1)
    assert os.waitpid(pid, 0)[1] == 0


def test_dynamic_entry_fast_path_matches_numpy():
    def f(x, y):
        return np.concatenate([x * y, x[1:] - 1.0]), x.sum()

    c = aot.compile(f)
    for n in (4, 5):  # the second size makes the dim symbolic
        c(np.arange(n, dtype=float), np.ones(n))
    for n in (6, 9, 31):
        x, y = np.arange(n, dtype=float), np.linspace(0, 1, n)
        for a, b in [(x, y), (x, y), (x[::-1], y), (np.arange(2 * n, dtype=float)[::2], y)]:
            got, want = c(a, b), f(a, b)
            np.testing.assert_allclose(got[0], want[0])
            np.testing.assert_allclose(got[1], want[1])
    assert any(callable(e.fast) for e in c._entries)
    # sizes 4, 5 (the dim becomes symbolic), then x[::-1]: not C-contiguous, so the entry specialised
    # on the layout fails its guard and one generic entry serves every strided call after it
    info = c.cache_info()
    assert info["compiles"] == 3
    assert any("c_contiguous" in g for g in info["entries"][0]["guards"])
    assert not any("c_contiguous" in g for g in info["entries"][1]["guards"][:3])
    with pytest.raises((ValueError, TypeError)):
        c(np.ones(7), np.ones(8))  # unequal sizes: not the fast path, the general path's error or numpy's


def test_module_with_parameters_fast_path():
    from aot import nn

    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    c = aot.compile(net)
    x = np.random.default_rng(0).standard_normal((5, 8))
    c(x)
    np.testing.assert_allclose(c(x), net(x), rtol=1e-12, atol=1e-12)
    (entry,) = c._entries
    assert callable(entry.fast) and entry.fast(x) is not None  # Parameters pass the native check
    net[0].weight = nn.Parameter(net[0].weight * 2.0)  # parameters are fetched on every call
    np.testing.assert_allclose(c(x), net(x), rtol=1e-12, atol=1e-12)
