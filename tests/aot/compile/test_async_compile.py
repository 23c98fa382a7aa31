"""Asynchronous compilation (aot/compiler/background.py): with options={"async_compile": True} a
call no entry serves runs eagerly with numpy while capture and compile run on the compile pool;
later calls are native. `f.compile_async` and `aot.aot_compile_async` hand out aot.futures.Future.

The compile is held at the llvm backend until a test releases it, so that which path served each
call is decided by the test, not by timing; the path counters of cache_info say which one did."""
from __future__ import annotations

import logging
import threading
import warnings

import numpy as np
import pytest

import aot
from aot.compiler import capture as capture_module
from aot.compiler import llvm_backend
from aot.futures import Future, wait_all

OPTS = {"async_compile": True, "disk_cache": False}


def chain300(x, y):
    t = x
    for i in range(75):  # 300 ops: the fused chain of the issue
        t = t * 0.999 + y
        t = np.sin(t)
        t = t - 0.5 * y
        t = np.abs(t) + 1e-3
    return t


def small(x, y):
    return np.cos(x) * y + 1.0


@pytest.fixture
def held(monkeypatch):
    """The llvm backend's compile step waits for `release` (and raises `fail` once released)."""
    release, state = threading.Event(), {"calls": 0, "fail": None, "threads": []}
    real = llvm_backend.compile_graph

    def slow(gm, example, options):
        state["calls"] += 1
        state["threads"].append(threading.current_thread().name)
        release.wait(120)
        if state["fail"] is not None:
            raise state["fail"]
        return real(gm, example, options)

    monkeypatch.setattr(llvm_backend, "compile_graph", slow)
    state["release"] = release
    yield state
    release.set()


def calls(f) -> dict:
    return f.cache_info()["calls"]


def settle(f, seconds: float = 120) -> None:
    """Wait until no compile of `f` is in flight."""
    import time

    deadline = time.monotonic() + seconds
    while f.cache_info()["compiling"] and time.monotonic() < deadline:
        time.sleep(0.005)
    assert f.cache_info()["compiling"] == 0


def test_first_call_is_eager_and_later_calls_native():
    x, y = np.linspace(-2, 2, 1000), np.linspace(0, 1, 1000)
    f = aot.compile(chain300, options=OPTS)
    expected = chain300(x, y)
    captured_on = []
    real_capture = capture_module.capture

    def spy(*a, **k):
        captured_on.append(threading.current_thread() is threading.main_thread())
        return real_capture(*a, **k)

    capture_module.capture = spy
    try:
        np.testing.assert_array_equal(f(x, y), expected)  # numpy's own answer, bit for bit
        assert calls(f) == {"native": 0, "eager": 1}
        entry = f.compile_async(x, y).wait()  # the compile in flight: no second one
    finally:
        capture_module.capture = real_capture
    assert captured_on == [False]  # captured off the caller's thread, once
    assert entry.guards.texts and f.cache_info()["compiles"] == 1
    for _ in range(3):
        np.testing.assert_allclose(f(x, y), expected, rtol=1e-12, atol=0)
    assert calls(f) == {"native": 3, "eager": 1}
    assert f.cache_info()["compiling"] == 0


def test_calls_while_compiling_run_eagerly_then_switch(held, caplog):
    x, y = np.linspace(-1, 1, 64), np.linspace(0, 2, 64)
    f = aot.compile(small, options=OPTS)
    for _ in range(4):
        np.testing.assert_array_equal(f(x, y), small(x, y))
    info = f.cache_info()
    assert info["calls"] == {"native": 0, "eager": 4} and info["compiling"] == 1 and info["compiles"] == 0
    job = f.compile_async(x, y)
    assert not job.done()
    with caplog.at_level(logging.INFO, logger="aot.recompiles"):
        held["release"].set()
        job.wait()
    assert any("switched to native code" in r.getMessage() for r in caplog.records)
    np.testing.assert_allclose(f(x, y), small(x, y), rtol=1e-15)
    assert calls(f) == {"native": 1, "eager": 4} and held["calls"] == 1
    assert held["threads"][0].startswith("aot-pool")


def test_compile_async_without_async_option(held):
    x, y = np.ones(16), np.arange(16.0)
    f = aot.compile(small, options={"disk_cache": False})
    job = f.compile_async(x, y)
    assert isinstance(job, Future) and not job.done()
    held["release"].set()
    out = f(x, y)  # waits for the compile in flight instead of compiling again
    np.testing.assert_allclose(out, small(x, y), rtol=1e-15)
    assert job.wait() is f._entries[0] and f.cache_info()["compiles"] == 1 and held["calls"] == 1
    again = f.compile_async(x, y)  # an entry serves these arguments: completed at once
    assert again.done() and again.wait() is job.wait()


def test_failed_backend_keeps_the_error_and_runs_eagerly(held):
    x, y = np.linspace(0, 1, 20), np.linspace(1, 2, 20)
    f = aot.compile(small, options=OPTS)
    f(x, y)
    job = f.compile_async(x, y)
    held["fail"] = RuntimeError("LLVM said no")

    def release_and_wait():
        held["release"].set()
        job._wait_done(120)

    with pytest.warns(RuntimeWarning, match="background compile of small failed.*LLVM said no"):
        release_and_wait()
    with pytest.raises(RuntimeError, match="LLVM said no"):
        job.wait()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning only
        for _ in range(3):
            np.testing.assert_allclose(f(x, y), small(x, y), rtol=1e-15)
    info = f.cache_info()
    assert info["entries"][0]["failed"] == "RuntimeError: LLVM said no"
    assert info["calls"] == {"native": 0, "eager": 4} and held["calls"] == 1  # not retried


def branchy(x):
    if x.sum() > 0:  # data-dependent: a graph break
        return x * 2
    return -x


def test_failed_capture_keeps_the_error_and_runs_eagerly():
    f = aot.compile(branchy, options=OPTS)
    x = np.arange(5.0)

    def call_and_wait():
        np.testing.assert_array_equal(f(x), branchy(x))
        job = f.compile_async(x)  # the compile in flight, or the failed one's error
        assert job._wait_done(120)
        return job

    with pytest.warns(RuntimeWarning, match="background compile of branchy failed"):
        job = call_and_wait()
    error = job.exception()
    from aot.compiler.capture import GraphBreak

    assert isinstance(error, GraphBreak)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning only
        np.testing.assert_array_equal(f(-x), branchy(-x))
    info = f.cache_info()
    assert info["eager_reason"].startswith("background compile failed") and info["compiles"] == 0
    assert f.compile_async(x).exception() is error  # the error stays available


def test_error_of_the_call_itself_propagates_and_compiles_nothing():
    def needs_two(x, y):
        return x + y

    f = aot.compile(needs_two, options=OPTS)
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones(3), np.ones(4))
    assert f.cache_info()["compiling"] == 0 and f.cache_info()["compiles"] == 0


def test_shapes_changing_while_compiling_become_dynamic(held):
    f = aot.compile(small, options=OPTS)
    for n in (10, 20, 30):  # all while the first compile is held
        x, y = np.linspace(0, 1, n), np.linspace(1, 2, n)
        np.testing.assert_array_equal(f(x, y), small(x, y))
    assert f.cache_info()["compiling"] == 2  # the static one, then one dynamic in n for the others
    held["release"].set()
    settle(f)
    for n in (10, 20, 30, 40):
        x, y = np.linspace(0, 1, n), np.linspace(1, 2, n)
        np.testing.assert_allclose(f(x, y), small(x, y), rtol=1e-15)
    info = f.cache_info()
    assert info["compiles"] == 2 and held["calls"] == 2 and info["calls"]["native"] == 4


def test_reset_while_compiling_installs_nothing(held):
    x, y = np.ones(8), np.ones(8)
    f = aot.compile(small, options=OPTS)
    f(x, y)
    job = f.compile_async(x, y)
    f.reset()
    held["release"].set()
    assert job.wait().guards.texts  # the future still completes
    assert f.cache_info()["entries"] == [] and f.cache_info()["compiles"] == 0


def test_many_threads_calling_while_compiling(held):
    x, y = np.linspace(-1, 1, 128), np.linspace(0, 3, 128)
    f = aot.compile(small, options=OPTS)
    expected = small(x, y)
    errors = []

    def caller():
        try:
            for _ in range(20):
                np.testing.assert_allclose(f(x, y), expected, rtol=1e-15)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=caller) for _ in range(8)]
    for t in threads:
        t.start()
    held["release"].set()
    for t in threads:
        t.join(120)
    f.compile_async(x, y).wait()
    assert not errors and held["calls"] == 1 and f.cache_info()["compiles"] == 1
    assert sum(calls(f).values()) == 160


def _family(k):
    def fk(x):
        return np.exp(np.sin(x) * (k + 1)) - k
    fk.__qualname__ = f"f{k}"
    return fk


def test_eight_functions_compile_concurrently():
    x = np.linspace(0, 1, 257)
    fns = [aot.compile(_family(k), options={"disk_cache": False}) for k in range(8)]
    entries = wait_all([f.compile_async(x) for f in fns])
    assert len(entries) == 8
    for k, f in enumerate(fns):
        np.testing.assert_allclose(f(x), _family(k)(x), rtol=1e-14, atol=1e-14 * np.exp(k + 1))
        assert f.cache_info()["calls"] == {"native": 1, "eager": 0}


def test_aot_compile_async(tmp_path):
    x = np.linspace(0, 1, 50)
    job = aot.aot_compile_async(small, (x, x), path=tmp_path / "small.so")
    path = job.wait()
    assert path.endswith("small.so")
    lib = aot.aot_load(path)
    np.testing.assert_allclose(lib(x, x), small(x, x), rtol=1e-15)
    bad = aot.aot_compile_async(small, None, path=tmp_path / "bad.so")
    with pytest.raises(TypeError, match="example args"):
        bad.wait()


def test_async_compile_option_is_checked():
    with pytest.raises(TypeError, match="async_compile"):
        aot.compile(small, options={"async_compile": "yes"})
