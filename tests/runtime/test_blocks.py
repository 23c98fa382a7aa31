"""The large-block cache (runtime/blocks.py): large outputs of compiled calls and of the general
FFT path reuse blocks that earlier ones freed, through a numpy memory handler current only
around their allocation, and so do compiled graphs' intermediate buffers; everything else keeps
numpy's allocator."""

from __future__ import annotations

import ctypes
import functools
import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import aot
from ir.abi_slots import BLOCK_CACHE, BLOCK_FUNCTIONS, BLOCK_ROW, BLOCK_ROWS, BLOCKS_MODULE, block_symbol
from runtime import blocks

try:
    from numpy._core.multiarray import get_handler_name
except ImportError:  # numpy 1.x
    from numpy.core.multiarray import get_handler_name

BIG = blocks.MIN_BYTES // 8 + 4096  # float64 elements of an array the cache serves


@aot.compile
def _affine(a):
    return a * 2.0 + 1.0


@pytest.fixture
def empty_cache():
    for n in (BIG, BIG + BIG // 4, BIG // 2, 1000):  # compiled (a first call may take another path)
        _affine(np.ones(n))
        _affine(np.ones(n))
    blocks.trim()
    yield
    blocks.trim()


def test_large_outputs_use_the_handler_and_small_ones_numpy_s(empty_cache):
    a = np.random.default_rng(0).random(BIG)
    r = _affine(a)
    assert get_handler_name(r) == "aot_blocks"
    assert r.flags.owndata and r.flags.writeable
    np.testing.assert_array_equal(r, a * 2.0 + 1.0)
    assert get_handler_name(_affine(a[:1000])) == get_handler_name(np.empty(3))
    assert get_handler_name(np.empty(BIG)) != "aot_blocks"  # numpy's own arrays: never


def test_outputs_from_aligned_bytes_on_start_a_cache_line(empty_cache):
    """Outputs of ALIGNED_BYTES or more go through the handler for its alignment (numpy's start 16
    bytes into a line, and threads splitting them share the lines at their boundaries) and its
    cache keeps them (from MIN_BYTES) for the next output; smaller ones stay numpy's."""
    import aot.fft

    n = blocks.ALIGNED_BYTES // 8
    for _ in range(3):
        r = _affine(np.ones(n))
        assert get_handler_name(r) == "aot_blocks" and r.ctypes.data % 64 == 0
    assert get_handler_name(_affine(np.ones(n - 8))) != "aot_blocks"
    kept = r.ctypes.data
    del r
    assert blocks.cached_bytes() >= blocks.ALIGNED_BYTES  # (glibc faulted such blocks in anew each call)
    assert _affine(np.ones(n)).ctypes.data == kept
    x = np.random.default_rng(2).random(blocks.ALIGNED_BYTES // 16) + 1j
    for fn in (aot.fft.fft, aot.fft.ifft):  # the eager fast path and the general path's first call
        for _ in range(2):
            y = fn(x)
            assert y.ctypes.data % 64 == 0, fn.__name__
    np.testing.assert_allclose(aot.fft.fft(x), np.fft.fft(x), rtol=1e-12, atol=1e-9)
    big_fft = aot.compile(lambda a: np.fft.fft(a))
    assert big_fft(x).ctypes.data % 64 == 0


def test_a_freed_block_serves_the_next_call(empty_cache):
    rng = np.random.default_rng(1)
    a, b = rng.random(BIG), rng.random(BIG)
    r = _affine(a)
    where = r.ctypes.data
    del r
    assert blocks.cached_bytes() == BIG * 8
    s = _affine(b)
    assert s.ctypes.data == where and blocks.cached_bytes() == 0
    np.testing.assert_array_equal(s, b * 2.0 + 1.0)  # every element written: nothing of the last call's


def test_fit_and_bounds(empty_cache):
    """A block serves requests of 80%..100% of its size (the smallest such block first); at most
    BLOCK_ROWS blocks are kept, the oldest evicted."""
    r = _affine(np.ones(BIG + BIG // 4))
    where = r.ctypes.data
    del r
    assert _affine(np.ones(BIG // 2)).ctypes.data != where  # too small a request for it
    s = _affine(np.ones(BIG))
    assert s.ctypes.data == where
    del s
    outs = [_affine(np.ones(BIG)) for _ in range(BLOCK_ROWS + 3)]
    del outs
    assert blocks.cached_bytes() == BLOCK_ROWS * BIG * 8
    blocks.trim()
    assert blocks.cached_bytes() == 0


def test_resize_and_views_of_pooled_arrays(empty_cache):
    r = _affine(np.ones(BIG))
    v = r[::2]
    del r
    assert blocks.cached_bytes() == 0  # the view keeps the block
    assert np.all(v == 3.0)
    del v
    assert blocks.cached_bytes() == BIG * 8
    s = _affine(np.ones(BIG))
    s.resize(2 * BIG, refcheck=False)  # the handler's realloc
    assert np.all(s[:BIG] == 3.0) and get_handler_name(s) == "aot_blocks"
    s.resize(10, refcheck=False)
    assert np.all(s == 3.0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_uses_the_cache(empty_cache):
    """The child of a fork starts with the lock free and the parent's cached blocks usable."""
    r = _affine(np.ones(BIG))
    del r  # one block cached
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        ok = False
        try:
            s = _affine(np.full(BIG, 2.0))
            ok = bool(np.all(s == 5.0)) and blocks.cached_bytes() == 0
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _mismatches_on_threads(fn, cases, rounds: int, same=np.array_equal) -> int:
    """Calls of fn(x) whose result is not `same` as expected, with every (x, want) of `cases` on a
    thread of its own, `rounds` calls each, all at once."""
    bad = []

    def work(x, want):
        bad.extend(1 for _ in range(rounds) if not same(fn(x), want))

    threads = [threading.Thread(target=work, args=case) for case in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(bad)


def test_threads_share_the_cache_safely(empty_cache):
    rng = np.random.default_rng(2)
    inputs = [rng.random(BIG) for _ in range(4)]
    assert _mismatches_on_threads(_affine, [(x, x * 2.0 + 1.0) for x in inputs], 20) == 0
    assert blocks.cached_bytes() <= BLOCK_ROWS * BIG * 8


@aot.compile
def _sorted_chain(a):
    s = np.sort(a)  # an intermediate buffer of the compiled graph
    return s * 2.0 + np.sqrt(s)


def test_intermediate_buffers_of_compiled_graphs(empty_cache):
    """JIT code allocates its large intermediates through the cache: the sorted copy freed at the
    end of a call serves the next call (and the results stay right under reuse)."""
    rng = np.random.default_rng(4)
    a, b = rng.random(BIG), rng.random(BIG)
    r = _sorted_chain(a)
    np.testing.assert_allclose(r, np.sort(a) * 2.0 + np.sqrt(np.sort(a)), rtol=1e-15)
    assert blocks.cached_bytes() >= BIG * 8  # the intermediate, while r holds the output
    r2 = _sorted_chain(b)
    np.testing.assert_allclose(r2, np.sort(b) * 2.0 + np.sqrt(np.sort(b)), rtol=1e-15)
    assert blocks.cached_bytes() >= BIG * 8


def test_intermediates_from_threads_without_the_gil(empty_cache):
    """Large calls release the GIL: entries on several threads take and give back blocks at once."""
    rng = np.random.default_rng(5)
    inputs = [rng.random(BIG) for _ in range(3)]
    cases = [(x, np.sort(x) * 2.0 + np.sqrt(np.sort(x))) for x in inputs]
    close = functools.partial(np.allclose, rtol=1e-15, atol=0)
    assert _mismatches_on_threads(_sorted_chain, cases, 10, same=close) == 0


def test_general_fft_path_outputs(empty_cache):
    x = np.random.default_rng(3).random((64, 64, 64)) + 0j  # 4 MiB: the general path
    y = aot.fft.fftn(x)
    assert get_handler_name(y) == "aot_blocks"
    np.testing.assert_allclose(y, np.fft.fftn(x), rtol=1e-10, atol=1e-9)
    r = aot.fft.irfftn(aot.fft.rfftn(x.real))
    np.testing.assert_allclose(r, x.real, rtol=1e-12, atol=1e-12)


def _own_cache(min_bytes: int, max_bytes: int):
    """(ctx, its address, malloc, free, trim): the emitted functions over a cache block of our own."""
    from runtime.jit import default_engine

    addr = {n: default_engine().address(block_symbol(BLOCKS_MODULE, n)) for n in BLOCK_FUNCTIONS}
    vp, sz = ctypes.c_void_p, ctypes.c_size_t
    ctx = (ctypes.c_int64 * (len(BLOCK_CACHE) + BLOCK_ROWS * len(BLOCK_ROW)))()
    ctx[BLOCK_CACHE.min_bytes], ctx[BLOCK_CACHE.max_bytes] = min_bytes, max_bytes
    return (ctx, ctypes.addressof(ctx), ctypes.CFUNCTYPE(vp, vp, sz)(addr["malloc"]),
            ctypes.CFUNCTYPE(None, vp, vp, sz)(addr["free"]), ctypes.CFUNCTYPE(None, vp)(addr["trim"]))


def test_native_functions_directly(empty_cache):
    """malloc / free / trim of the emitted functions on a block of our own (the process's cache is
    untouched): best fit within a quarter, the byte bound, eviction of the oldest."""
    ctx, c, malloc, free, trim = _own_cache(1000, 10_000)
    p1, p2 = malloc(c, 4000), malloc(c, 5000)
    free(c, p1, 4000)
    free(c, p2, 5000)
    assert ctx[BLOCK_CACHE.cached_bytes] == 9000
    assert malloc(c, 3900) == p1  # the smallest that fits
    assert ctx[BLOCK_CACHE.cached_bytes] == 5000
    p3 = malloc(c, 3000)  # 5000 > 3000 * 5/4: not p2
    assert p3 != p2
    free(c, p3, 3000)
    free(c, p1, 3900)  # 5000 + 3000 + 3900 > 10000: the oldest (p2) goes
    assert ctx[BLOCK_CACHE.cached_bytes] == 6900
    assert malloc(c, 5000) not in (p1, p3)
    free(c, malloc(c, 500), 500)  # below min_bytes: straight back to libc
    free(c, malloc(c, 20_000), 20_000)  # above max_bytes: too
    assert ctx[BLOCK_CACHE.cached_bytes] == 6900
    trim(c)
    assert ctx[BLOCK_CACHE.cached_bytes] == 0 and ctx[BLOCK_CACHE.lock] == 0
    p4 = malloc(c, 4000)
    free(c, p4, 4000)
    ctx[BLOCK_CACHE.lock] = 1  # held by a thread that is gone: calls go around the cache, none hangs
    p5 = malloc(c, 4000)
    assert p5 and p5 != p4
    free(c, p5, 4000)
    trim(c)
    assert ctx[BLOCK_CACHE.cached_bytes] == 4000 and ctx[BLOCK_CACHE.lock] == 1
    ctx[BLOCK_CACHE.lock] = 0
    trim(c)


def test_full_rows_keep_the_larger_blocks(empty_cache):
    """With every row taken, a freed block evicts the oldest block no larger than itself, and goes
    back to libc when all are larger: a loop of many mid-size results keeps the large blocks."""
    ctx, c, malloc, free, trim = _own_cache(1000, 10 ** 9)
    big = [malloc(c, 5000) for _ in range(BLOCK_ROWS)]
    for q in big:
        free(c, q, 5000)
    assert ctx[BLOCK_CACHE.cached_bytes] == 5000 * BLOCK_ROWS
    free(c, malloc(c, 2000), 2000)  # every row holds a larger block: this one goes to libc
    assert ctx[BLOCK_CACHE.cached_bytes] == 5000 * BLOCK_ROWS
    p6 = malloc(c, 6000)
    free(c, p6, 6000)  # the oldest 5000 goes
    assert ctx[BLOCK_CACHE.cached_bytes] == 5000 * (BLOCK_ROWS - 1) + 6000
    assert malloc(c, 6000) == p6 and malloc(c, 5000) in big[1:]
    trim(c)
    assert ctx[BLOCK_CACHE.cached_bytes] == 0 and ctx[BLOCK_CACHE.lock] == 0


_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import aot
    from runtime import blocks
    try:
        from numpy._core.multiarray import get_handler_name
    except ImportError:
        from numpy.core.multiarray import get_handler_name
    f = aot.compile(lambda a: a * 3.0)
    def chain(a):
        s = np.sort(a)
        return s + 1.0
    g = aot.compile(chain)
    a = np.ones(blocks.MIN_BYTES // 8 + 1)
    outs = [f(a) for _ in range(6)]
    names = sorted({get_handler_name(o) for o in outs})
    del outs
    cached = blocks.cached_bytes()
    blocks.trim()
    r = g(a)  # its sorted intermediate goes back to the cache (JIT or warm-started library's copy)
    ok = bool(np.all(r == 2.0))
    info, ginfo = f.cache_info(), g.cache_info()
    print(json.dumps({"names": names, "cached": cached, "warm": info["warm_starts"] + ginfo["warm_starts"],
                      "capture": "aot.compiler.capture" in sys.modules, "ok": ok,
                      "intermediate": blocks.cached_bytes()}))
""")


def _child(tmp_path, mb: str | None) -> dict:
    prog = tmp_path / "child.py"
    prog.write_text(_CHILD)
    env = {**os.environ, "AOT_CACHE_DIR": str(tmp_path / "cache"), "AOT_WARM_START": "1"}
    env.pop("AOT_BLOCK_CACHE_MB", None)
    if mb is not None:
        env["AOT_BLOCK_CACHE_MB"] = mb
    out = subprocess.run([sys.executable, str(prog)], env=env, capture_output=True, text=True, timeout=180,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_bad_capacity_setting_is_refused(monkeypatch):
    for bad in ("lots", "-1", "nan"):
        monkeypatch.setenv("AOT_BLOCK_CACHE_MB", bad)
        with pytest.raises(ValueError, match="AOT_BLOCK_CACHE_MB must be a number of megabytes"):
            blocks.max_bytes()
    monkeypatch.setenv("AOT_BLOCK_CACHE_MB", "1.5")
    assert blocks.max_bytes() == 3 << 19
    monkeypatch.delenv("AOT_BLOCK_CACHE_MB")
    assert blocks.max_bytes() == 512 << 20


def test_capacity_setting_and_warm_start(tmp_path):
    """AOT_BLOCK_CACHE_MB bounds the bytes kept (0: no handler at all), and a warm-started
    library's copy of the functions serves as well as the JIT's."""
    size = (blocks.MIN_BYTES // 8 + 1) * 8
    cold = _child(tmp_path, None)
    assert cold["names"] == ["aot_blocks"] and cold["cached"] == 6 * size and cold["warm"] == 0
    assert cold["ok"] and cold["intermediate"] >= size
    warm = _child(tmp_path, repr(2.5 * size / (1 << 20)))  # room for two of the blocks
    assert warm["intermediate"] >= size  # the warm-started library's allocator uses the cache too
    assert warm == {"names": ["aot_blocks"], "cached": 2 * size, "warm": 2, "capture": False, "ok": True,
                    "intermediate": warm["intermediate"]}
    off = _child(tmp_path, "0")
    assert off["names"] != ["aot_blocks"] and off["cached"] == 0 and off["intermediate"] == 0 and off["ok"]
