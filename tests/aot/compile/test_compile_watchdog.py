"""The compile-time guarantee: a compile past its budget runs the call eagerly (one warning) and its
native code is used once it finishes in the background (aot/compiler/watchdog.py, api.py).

A slow compile is injected by holding the llvm backend's compile step until the test releases it;
the background compile is awaited by joining its worker thread (named "aot-compile ...").
"""
from __future__ import annotations

import contextvars
import logging
import threading
import uuid
import warnings

import numpy as np
import pytest

import aot
from aot.compiler import llvm_backend, watchdog


def chain(x, y):
    return np.sin(x) * y + x.sum()


X, Y = np.linspace(-1, 1, 33), np.linspace(0, 2, 33)


@pytest.fixture
def held(monkeypatch):
    """The llvm backend's compile step waits for `release` (and raises `fail` once released)."""
    release, state = threading.Event(), {"calls": 0, "fail": None}
    real = llvm_backend.compile_graph

    def slow(gm, example, options):
        state["calls"] += 1
        release.wait(120)
        if state["fail"] is not None:
            raise state["fail"]
        return real(gm, example, options)

    monkeypatch.setattr(llvm_backend, "compile_graph", slow)
    yield release, state
    release.set()
    _join_compiles()


def _join_compiles() -> None:
    for t in threading.enumerate():
        if t.name.startswith("aot-compile"):
            t.join(120)
            assert not t.is_alive(), "a background compile did not finish"


def _aot_warnings(record) -> list[str]:
    return [str(w.message) for w in record if "aot.compile" in str(w.message)]


def test_overrun_runs_eagerly_with_one_warning_then_native(held):
    release, state = held
    f = aot.compile(chain, options={"compile_timeout": 0.2, "disk_cache": False})
    with pytest.warns(RuntimeWarning) as record:
        out = f(X, Y)
    messages = _aot_warnings(record)
    assert len(messages) == 1
    assert "chain" in messages[0] and "0.2 s" in messages[0] and "compile_timeout" in messages[0]
    np.testing.assert_allclose(out, chain(X, Y), rtol=1e-13)
    info = f.cache_info()
    assert info["compile_timeouts"] == 1 and info["compiles"] == 1 and info["entries"][0]["compiling"]

    with warnings.catch_warnings(record=True) as again:  # still compiling: eager, silent, no recompile
        warnings.simplefilter("always")
        np.testing.assert_allclose(f(X, Y), chain(X, Y), rtol=1e-13)
    assert _aot_warnings(again) == [] and state["calls"] == 1

    before = llvm_backend.STATS["compiles"]
    release.set()
    _join_compiles()
    assert llvm_backend.STATS["compiles"] == before + 1  # LLVM did run, in the background
    info = f.cache_info()
    assert not info["entries"][0]["compiling"] and info["compiles"] == 1 and info["hits"] == 1
    for _ in range(3):  # the native entry (and then its fast path)
        np.testing.assert_allclose(f(X, Y), chain(X, Y), rtol=1e-13)
    assert f.cache_info()["hits"] == 4 and f.cache_info()["compile_timeouts"] == 1


def test_env_var_sets_the_budget(held, monkeypatch):
    monkeypatch.setenv("AOT_COMPILE_TIMEOUT", "0.25")
    f = aot.compile(chain)
    with pytest.warns(RuntimeWarning, match=r"chain took longer than its budget of 0\.25 s"):
        np.testing.assert_allclose(f(X, Y), chain(X, Y), rtol=1e-13)


def test_option_overrides_env(monkeypatch):
    monkeypatch.setenv("AOT_COMPILE_TIMEOUT", "1e-9")  # would fire on any compile
    f = aot.compile(lambda x: np.cos(x) * 2.5 - 1, options={"compile_timeout": 600})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(f(X), np.cos(X) * 2.5 - 1, rtol=1e-13)
    assert f.cache_info()["compile_timeouts"] == 0


def test_compile_within_budget_is_synchronous_and_silent():
    f = aot.compile(lambda x, y: x * y + 3.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(f(X, Y), X * Y + 3.5)
    info = f.cache_info()
    assert info["compile_timeouts"] == 0 and not info["entries"][0]["compiling"]


def test_many_threads_call_while_compiling(held):
    release, state = held
    f = aot.compile(chain, options={"compile_timeout": 0.2})
    results, errors = [None] * 6, []

    def work(i):
        try:
            results[i] = f(X, Y)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    with pytest.warns(RuntimeWarning) as record:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    assert not errors, errors
    assert len(_aot_warnings(record)) == 1 and state["calls"] == 1
    for r in results:
        np.testing.assert_allclose(r, chain(X, Y), rtol=1e-13)
    release.set()
    _join_compiles()
    np.testing.assert_allclose(f(X, Y), chain(X, Y), rtol=1e-13)
    assert f.cache_info()["compiles"] == 1


def test_failed_late_compile_keeps_running_eagerly(held, caplog):
    release, state = held
    state["fail"] = RuntimeError("injected LLVM failure")
    f = aot.compile(chain, options={"compile_timeout": 0.2})
    with pytest.warns(RuntimeWarning):
        f(X, Y)
    with caplog.at_level(logging.WARNING, logger="aot.compiler.api"):
        release.set()
        _join_compiles()
    assert any("background compile of chain failed" in r.getMessage() for r in caplog.records)
    np.testing.assert_allclose(f(X, Y), chain(X, Y), rtol=1e-13)
    assert f.cache_info()["compiles"] == 1 and not f.cache_info()["entries"][0]["compiling"]


def test_reset_drops_a_late_result(held):
    release, _ = held
    f = aot.compile(chain, options={"compile_timeout": 0.2})
    with pytest.warns(RuntimeWarning):
        f(X, Y)
    f.reset()
    release.set()
    _join_compiles()
    assert f.cache_info()["entries"] == []


def test_late_compile_fills_the_disk_cache(held, tmp_path, monkeypatch):
    release, _ = held
    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path / "cache"))
    k = float(uuid.uuid4().int % 10_000) + 0.375  # a key this process has not loaded yet
    f = aot.compile(lambda x: np.exp(x) - k, options={"compile_timeout": 0.2})
    with pytest.warns(RuntimeWarning):
        f(X)
    assert not list((tmp_path / "cache").glob("*/*.bin"))
    release.set()
    _join_compiles()
    assert list((tmp_path / "cache").glob("*/*.bin"))  # written by the background compile


@pytest.mark.parametrize("bad", [0, -1, "soon", float("nan")])
def test_bad_budgets_are_refused(bad):
    with pytest.raises(ValueError, match="compile_timeout"):
        aot.compile(chain, options={"compile_timeout": bad})


def test_bad_env_budget_is_refused(monkeypatch):
    monkeypatch.setenv("AOT_COMPILE_TIMEOUT", "later")
    with pytest.raises(ValueError, match="AOT_COMPILE_TIMEOUT"):
        aot.compile(lambda x: x + 1.5)(X)


def test_budget_precedence(monkeypatch):
    monkeypatch.delenv("AOT_COMPILE_TIMEOUT", raising=False)
    assert watchdog.compile_budget() == watchdog.DEFAULT_COMPILE_TIMEOUT == 30
    monkeypatch.setenv("AOT_COMPILE_TIMEOUT", "7")
    assert watchdog.compile_budget() == 7 and watchdog.compile_budget(2.5) == 2.5
    assert watchdog.compile_budget("inf") == float("inf")


def test_submit_returns_a_future_with_result_exception_and_context():
    var = contextvars.ContextVar("v", default="unset")
    var.set("caller's")
    gate = threading.Event()
    job = watchdog.submit(lambda: (gate.wait(120), var.get())[1], name="aot-compile test")
    assert not watchdog.wait(job, 0.01)
    gate.set()
    assert watchdog.wait(job, float("inf")) and job.wait() == "caller's"
    failing = watchdog.submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.wait()
