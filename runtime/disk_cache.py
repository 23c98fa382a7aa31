"""On-disk cache of compiled artifacts (object code), safe to load from.

Loading native code from a cache is running code, so: the directory is created private to the
user (0700) and never used when other users can write to it or it is owned by someone else;
entries are written atomically (temp file + rename) with a SHA-256 of the payload in a header, and
checked before use. A corrupt entry is discarded (and the caller rebuilds it), as is one that
fails the caller's `check` (object code: runtime.elf.check_object, which MCJIT needs: it would
crash on a truncated object, whatever wrote it).
"""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from ir.digest import sha256
from ir.logger import get_logger

log = get_logger(__name__)

MAGIC = b"AOTCACHE1\n"


class UnsafeCacheDir(RuntimeError):
    pass


def default_cache_dir() -> Path:
    env = os.environ.get("AOT_CACHE_DIR")
    if env:
        return Path(env)
    if sys.platform.startswith("linux"):  # platformdirs' rule for Linux, without its 3 ms import
        return Path(os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.expanduser("~/.cache")) / "aot"
    try:
        import platformdirs

        return Path(platformdirs.user_cache_dir("aot"))
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return Path.home() / ".cache" / "aot"


def _check_private(path: Path) -> None:
    st = path.stat()
    if st.st_uid != os.getuid():
        raise UnsafeCacheDir(f"cache directory {path} is owned by uid {st.st_uid}, not by this user")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeCacheDir(f"cache directory {path} is writable by other users (mode {oct(st.st_mode & 0o777)})")


class DiskCache:
    """Content-addressed store: `get(key) -> bytes | None`, `put(key, data)`."""

    def __init__(self, root: Path | str | None = None):
        self.root = Path(root) if root is not None else default_cache_dir()
        self._ready = False

    def _dir(self) -> Path:
        if not self._ready:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            _check_private(self.root)
            self._ready = True
        return self.root

    def path_of(self, key: str) -> Path:
        if not key or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"cache key must be a hex digest, got {key!r}")
        return self._dir() / key[:2] / f"{key}.bin"

    def get(self, key: str, check=None) -> bytes | None:
        """The entry's bytes, or None (missing, or discarded: corrupt, or `check(data)` raised
        ValueError)."""
        try:
            path = self.path_of(key)
        except UnsafeCacheDir as e:
            log.warning("not using the disk cache: %s", e)
            return None
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            return None
        data = _unpack(blob)
        if data is not None and check is not None:
            try:
                check(data)
            except ValueError as e:
                log.warning("discarding unusable cache entry %s: %s", path, e)
                path.unlink(missing_ok=True)
                return None
        if data is None:
            log.warning("discarding corrupt cache entry %s", path)
            path.unlink(missing_ok=True)
        return data

    def put(self, key: str, data: bytes) -> Path | None:
        try:
            path = self.path_of(key)
        except UnsafeCacheDir as e:
            log.warning("not writing the disk cache: %s", e)
            return None
        import tempfile  # writing only: a warm start reads

        path.parent.mkdir(mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_pack(data))
            os.replace(tmp, path)  # atomic: readers see the old entry or the whole new one
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    def clear(self) -> None:
        if self.root.exists():
            for p in self.root.glob("*/*.bin"):
                p.unlink(missing_ok=True)


def _pack(data: bytes) -> bytes:
    return MAGIC + sha256(data).hexdigest().encode() + b"\n" + data


def _unpack(blob: bytes) -> bytes | None:
    if not blob.startswith(MAGIC):
        return None
    rest = blob[len(MAGIC):]
    digest, sep, data = rest.partition(b"\n")
    if not sep or sha256(data).hexdigest().encode() != digest:
        return None
    return data


def cache_key(*parts: str | bytes) -> str:
    h = sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()
