"""aot.compile's disk cache of object code: reuse across processes, corruption, concurrency, safety.

Where native code came from is read from aot.compiler.llvm_backend.STATS (LLVM runs vs disk loads);
other processes run a small script and report their STATS and whether their results were right.
"""
from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import numpy as np
import pytest

import aot
from aot.compiler import llvm_backend

CHILD = """
import json, sys
import numpy as np
import aot
from aot.compiler import llvm_backend

k = float(sys.argv[1])
f = aot.compile(lambda x, y: np.sin(x) * y + k)
x, y = np.linspace(-2, 2, 37), np.linspace(0, 1, 37)
ok = bool(np.allclose(f(x, y), np.sin(x) * y + k, rtol=1e-13))
print(json.dumps({"ok": ok, **llvm_backend.STATS}))
"""


def _child(cache: Path, k: float) -> dict:
    env = {**os.environ, "AOT_CACHE_DIR": str(cache)}
    env.pop("AOT_LOGS", None)
    out = subprocess.run([sys.executable, "-c", CHILD, repr(k)], env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*.bin"))


def test_second_process_loads_from_disk(tmp_path):
    cache = tmp_path / "cache"
    first = _child(cache, 1.25)
    assert first == {"ok": True, "compiles": 1, "disk_hits": 0, "memory_hits": 0}
    entries = _entries(cache)
    mtimes = [e.stat().st_mtime_ns for e in entries]
    second = _child(cache, 1.25)
    assert second == {"ok": True, "compiles": 0, "disk_hits": 1, "memory_hits": 0}
    assert _entries(cache) == entries and [e.stat().st_mtime_ns for e in entries] == mtimes


def test_different_constant_is_a_different_entry(tmp_path):
    cache = tmp_path / "cache"
    assert _child(cache, 1.0)["compiles"] == 1
    n = len(_entries(cache))
    assert _child(cache, 2.0) == {"ok": True, "compiles": 1, "disk_hits": 0, "memory_hits": 0}
    assert len(_entries(cache)) == n + 1


@pytest.mark.parametrize("damage", ["flip_payload_byte", "truncate", "garbage"])
def test_corrupt_entry_is_discarded_and_rebuilt(tmp_path, damage):
    cache = tmp_path / "cache"
    _child(cache, 0.5)
    for entry in _entries(cache):  # the function's entry (and the runtime's helpers)
        blob = bytearray(entry.read_bytes())
        if damage == "flip_payload_byte":
            blob[-100] ^= 0x5A
        elif damage == "truncate":
            blob = blob[: len(blob) // 2]
        else:
            blob = bytearray(os.urandom(len(blob)))
        entry.write_bytes(bytes(blob))
    rebuilt = _child(cache, 0.5)
    assert rebuilt == {"ok": True, "compiles": 1, "disk_hits": 0, "memory_hits": 0}
    assert _child(cache, 0.5)["disk_hits"] == 1  # the rebuilt entry is valid again


@pytest.fixture(scope="module")
def warm():
    """Build the runtime's own cached helpers (call trampolines) before a test moves the cache."""
    aot.compile(lambda a: a + 1)(np.ones(3))


def test_concurrent_compiles_make_one_entry(tmp_path, monkeypatch, warm):
    cache = tmp_path / "cache"
    monkeypatch.setenv("AOT_CACHE_DIR", str(cache))
    k = float(uuid.uuid4().int % 10_000) + 0.5  # a key no earlier test of this process has loaded
    x = np.linspace(-1, 1, 1000)
    want = np.exp(x) * k - x
    before = dict(llvm_backend.STATS)
    results, errors = [None] * 8, []
    barrier = threading.Barrier(8)

    def work(i):
        try:
            f = aot.compile(lambda a: np.exp(a) * k - a)  # a fresh CompiledFunction per thread
            barrier.wait()
            results[i] = f(x)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    for r in results:
        np.testing.assert_allclose(r, want, rtol=1e-13)
    assert llvm_backend.STATS["compiles"] - before["compiles"] == 1
    assert len(_entries(cache)) == 1


def test_cache_dir_is_private(tmp_path):
    cache = tmp_path / "new" / "cache"
    _child(cache, 3.0)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    for sub in cache.iterdir():
        assert stat.S_IMODE(sub.stat().st_mode) & 0o077 == 0


def test_world_writable_cache_dir_is_refused(tmp_path, monkeypatch, caplog, warm):
    cache = tmp_path / "cache"
    assert _child(cache, 4.0)["compiles"] == 1  # a valid entry exists ...
    planted = _entries(cache)
    os.chmod(cache, 0o777)  # ... in a directory other users could have written it to
    try:
        refused = _child(cache, 4.0)
        assert refused == {"ok": True, "compiles": 1, "disk_hits": 0, "memory_hits": 0}
        monkeypatch.setenv("AOT_CACHE_DIR", str(cache))
        k = float(uuid.uuid4().int % 10_000) + 0.25
        with caplog.at_level(logging.WARNING, logger="runtime.disk_cache"):
            f = aot.compile(lambda a: a * k)
            np.testing.assert_array_equal(f(np.arange(5.0)), np.arange(5.0) * k)
        assert any("writable by other users" in r.getMessage() for r in caplog.records)
        assert _entries(cache) == planted  # nothing new was written there either
    finally:
        os.chmod(cache, 0o700)


def test_concurrent_first_calls_of_one_compiled_function(tmp_path, monkeypatch, warm):
    cache = tmp_path / "cache"
    monkeypatch.setenv("AOT_CACHE_DIR", str(cache))
    k = float(uuid.uuid4().int % 10_000) + 0.75
    f = aot.compile(lambda a, b: np.cos(a) * b + k)
    x, y = np.linspace(0, 3, 500), np.linspace(-1, 1, 500)
    before = dict(llvm_backend.STATS)
    barrier, results, errors = threading.Barrier(8), [None] * 8, []

    def work(i):
        try:
            barrier.wait()
            results[i] = f(x, y)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    for r in results:
        np.testing.assert_allclose(r, np.cos(x) * y + k, rtol=1e-13)
    assert f.cache_info()["compiles"] == 1
    assert llvm_backend.STATS["compiles"] - before["compiles"] == 1
    assert len(_entries(cache)) == 1
