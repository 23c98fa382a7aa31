"""Native code as shared-library bytes: linked from object code with the system's C compiler, and
loaded back with the dynamic loader, without llvmlite (the warm start of aot.compile).

Loading goes through an anonymous memory file (memfd) holding the bytes the caller verified, so
that what is loaded is exactly what was checked; where memfd is missing (not Linux) the bytes are
written to a private temporary file first. perf cannot read a memory file's symbols: with
AOT_PERF_MAP=1 a loaded library's functions are named in perf's map (runtime/perf_map.py).
"""
from __future__ import annotations

import ctypes
import functools
import os

from ir.logger import get_logger

from . import perf_map

log = get_logger(__name__)

# what the generated code may need from the system: vector math, libm, the thread pool's pthreads
_SYSTEM_LIBS = ("-lmvec", "-lm", "-lpthread")
_keep: list = []  # loaded libraries and their memory files, for good (their code is called at any time)


class LinkError(RuntimeError):
    """The system C compiler failed to build the library (or there is none)."""


def find_cc() -> str:
    import shutil

    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise LinkError("no C compiler found (looked for $CC, cc, gcc, clang); one is needed to link a .so")
    return cc


def link_objects(objects: list[bytes], timeout: float = 60.0) -> bytes:
    """A shared library of `objects` (position-independent object code), linked by `cc` with every
    symbol resolved (-z defs: one left to the JIT's own symbols fails here, not at load)."""
    import subprocess
    import tempfile

    cc = find_cc()
    with tempfile.TemporaryDirectory(prefix="aot-link-") as d:
        paths = []
        for i, obj in enumerate(objects):
            paths.append(os.path.join(d, f"part{i}.o"))
            with open(paths[-1], "wb") as f:
                f.write(obj)
        out = os.path.join(d, "lib.so")
        libs = _SYSTEM_LIBS if _has_libmvec() else _SYSTEM_LIBS[1:]
        cmd = [cc, "-shared", "-o", out, *paths, "-Wl,-z,defs", "-Wl,-z,now", "-Wl,--as-needed", *libs]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise LinkError(f"{cc}: {e}") from None
        if r.returncode != 0:
            raise LinkError(f"{cc} exited {r.returncode}: {r.stderr.strip()[:2000]}")
        with open(out, "rb") as f:
            return f.read()


@functools.cache
def _has_libmvec() -> bool:
    try:
        ctypes.CDLL("libmvec.so.1")
        return True
    except OSError:
        return False


def load_library(data: bytes, name: str, owner: str = "", owners: dict | None = None) -> ctypes.CDLL:
    """Load shared-library bytes (already verified by the caller) into the process, for good.
    `owner`: whose code it is in the perf map (default `name`); `owners`: FUNC by symbol, where
    it is not `owner`."""
    if hasattr(os, "memfd_create"):
        # the file stays open for good: glibc knows a loaded library by its path, so a closed and
        # reused /proc/self/fd/N would make a later dlopen return this library instead of its own
        fd = os.memfd_create(name, getattr(os, "MFD_CLOEXEC", 0))
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            lib = ctypes.CDLL(f"/proc/self/fd/{fd}", mode=os.RTLD_LOCAL | os.RTLD_NOW)
        except BaseException:
            os.close(fd)
            raise
        _keep.append(fd)
    else:  # pragma: no cover - not Linux
        import tempfile

        with tempfile.NamedTemporaryFile(prefix="aot-", suffix=".so") as f:
            f.write(data)
            f.flush()
            lib = ctypes.CDLL(f.name, mode=os.RTLD_LOCAL | os.RTLD_NOW)
    _keep.append(lib)
    if perf_map.ENABLED:
        perf_map.add_library(data, lambda symbol: symbol_address(lib, symbol), owner or name, owners)
    return lib


def symbol_address(lib: ctypes.CDLL, symbol: str) -> int:
    """The address of `symbol` in `lib` (KeyError when it has none)."""
    try:
        return ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
    except AttributeError:
        raise KeyError(f"no symbol {symbol!r} in the loaded library") from None
