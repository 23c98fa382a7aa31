"""On-disk cache of compiled artifacts (object code), safe to load from.

Loading native code from a cache is running code, so: the directory is created private to the
user (0700) and never used when other users can write to it or it is owned by someone else;
entries are written atomically (temp file + rename) with a SHA-256 of the payload in a header, and
checked before use. A corrupt entry is discarded (and the caller rebuilds it), as is one that
fails the caller's `check` (object code: runtime.elf.check_object, which MCJIT needs: it would
crash on a truncated object, whatever wrote it).

Paths are plain strings (os.path), not pathlib: pathlib's import costs a warm start ~4 ms where
nothing else imported it.
"""
from __future__ import annotations

import os
import stat
import sys

from ir.digest import sha256
from ir.logger import get_logger

log = get_logger(__name__)

MAGIC = b"AOTCACHE1\n"


class UnsafeCacheDir(RuntimeError):
    pass


def default_cache_dir() -> str:
    env = os.environ.get("AOT_CACHE_DIR")
    if env:
        return env
    if sys.platform.startswith("linux"):  # platformdirs' rule for Linux, without its 3 ms import
        return os.path.join(os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.expanduser("~/.cache"), "aot")
    try:
        import platformdirs

        return platformdirs.user_cache_dir("aot")
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return os.path.join(os.path.expanduser("~"), ".cache", "aot")


def _check_private(path: str) -> None:
    st = os.stat(path)
    if st.st_uid != os.getuid():
        raise UnsafeCacheDir(f"cache directory {path} is owned by uid {st.st_uid}, not by this user")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeCacheDir(f"cache directory {path} is writable by other users (mode {oct(st.st_mode & 0o777)})")


class DiskCache:
    """Content-addressed store: `get(key) -> bytes | None`, `put(key, data)`."""

    def __init__(self, root: os.PathLike | str | None = None):
        self.root = os.fspath(root) if root is not None else default_cache_dir()
        self._ready = False

    def _dir(self) -> str:
        if not self._ready:
            os.makedirs(self.root, mode=0o700, exist_ok=True)
            _check_private(self.root)
            self._ready = True
        return self.root

    def path_of(self, key: str) -> str:
        if not key or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"cache key must be a hex digest, got {key!r}")
        return os.path.join(self._dir(), key[:2], f"{key}.bin")

    def get(self, key: str, check=None) -> bytes | None:
        """The entry's bytes, or None (missing, or discarded: corrupt, or `check(data)` raised
        ValueError)."""
        try:
            path = self.path_of(key)
        except UnsafeCacheDir as e:
            log.warning("not using the disk cache: %s", e)
            return None
        try:
            with open(path, "rb") as f:
                blob = f.read()
        except FileNotFoundError:
            return None
        data = _unpack(blob)
        if data is not None and check is not None:
            try:
                check(data)
            except ValueError as e:
                log.warning("discarding unusable cache entry %s: %s", path, e)
                _unlink(path)
                return None
        if data is None:
            log.warning("discarding corrupt cache entry %s", path)
            _unlink(path)
        return data

    def put(self, key: str, data: bytes) -> str | None:
        try:
            path = self.path_of(key)
        except UnsafeCacheDir as e:
            log.warning("not writing the disk cache: %s", e)
            return None
        import tempfile  # writing only: a warm start reads

        parent = os.path.dirname(path)
        os.makedirs(parent, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_pack(data))
            os.replace(tmp, path)  # atomic: readers see the old entry or the whole new one
        except BaseException:
            _unlink(tmp)
            raise
        return path

    def clear(self) -> None:
        import glob

        for p in glob.glob(os.path.join(glob.escape(self.root), "*", "*.bin")):
            _unlink(p)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


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
