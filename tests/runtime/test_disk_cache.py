from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from runtime.disk_cache import DiskCache, UnsafeCacheDir, cache_key


def test_put_get_roundtrip(tmp_path):
    c = DiskCache(tmp_path / "c")
    k = cache_key("module text", "x86_64", b"\x00features")
    assert c.get(k) is None
    c.put(k, b"object bytes")
    assert c.get(k) == b"object bytes"
    assert stat.S_IMODE((tmp_path / "c").stat().st_mode) == 0o700


def test_corrupt_entry_is_discarded(tmp_path):
    c = DiskCache(tmp_path)
    k = cache_key("a")
    p = Path(c.put(k, b"payload" * 100))
    blob = bytearray(p.read_bytes())
    blob[-3] ^= 0xFF
    p.write_bytes(bytes(blob))
    assert c.get(k) is None
    assert not p.exists()


def test_truncated_entry_is_discarded(tmp_path):
    c = DiskCache(tmp_path)
    k = cache_key("b")
    p = Path(c.put(k, b"payload"))
    p.write_bytes(p.read_bytes()[:5])
    assert c.get(k) is None


def test_refuses_group_writable_dir(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o777)
    c = DiskCache(d)
    with pytest.raises(UnsafeCacheDir):
        c.path_of(cache_key("x"))
    assert c.get(cache_key("x")) is None  # get degrades to a miss with a warning


def test_key_must_be_hex(tmp_path):
    with pytest.raises(ValueError, match="hex digest"):
        DiskCache(tmp_path).path_of("../../etc/passwd")


def test_concurrent_writers_leave_one_valid_entry(tmp_path):
    c = DiskCache(tmp_path)
    k = cache_key("same")
    threads = [threading.Thread(target=c.put, args=(k, b"v" * 10000)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert c.get(k) == b"v" * 10000
    assert len(list(tmp_path.glob("*/*.bin"))) == 1
    assert not list(tmp_path.glob("*/.tmp-*"))


@pytest.mark.parametrize("xdg", [None, "", "  ", "/somewhere/cache"])
def test_default_dir_is_platformdirs_user_cache_dir(monkeypatch, xdg):
    """Linux's rule is written out (platformdirs costs 3 ms to import): it must stay platformdirs'."""
    platformdirs = pytest.importorskip("platformdirs")
    from runtime.disk_cache import default_cache_dir

    monkeypatch.delenv("AOT_CACHE_DIR", raising=False)
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert Path(default_cache_dir()) == Path(platformdirs.user_cache_dir("aot"))
    monkeypatch.setenv("AOT_CACHE_DIR", "/elsewhere")
    assert Path(default_cache_dir()) == Path("/elsewhere")
