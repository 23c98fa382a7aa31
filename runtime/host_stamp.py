"""What cached native code depends on about this machine, read without importing llvmlite: the
CPU's model and feature flags, and the installed LLVM (llvmlite's library). Disk-cache keys of
native code that is loaded without the compiler (aot.compile's warm start, aot.fft's kernel
groups) are made from these."""
from __future__ import annotations

import functools
import os


@functools.cache
def cpu_features() -> str | None:
    """The CPU's vendor, model and feature flags (Linux's /proc/cpuinfo), else None (then code
    built for one CPU cannot be told from code built for another: callers do not cache it)."""
    try:
        with open("/proc/cpuinfo", "rb") as f:
            text = f.read(1 << 16)  # the first processors' entries: every core has the same flags
    except OSError:
        return None
    keys = (b"flags", b"model name", b"vendor_id", b"Features", b"CPU implementer", b"CPU part")
    lines = sorted({ln.split(b":", 1)[-1].strip() for ln in text.split(b"\n") if ln.startswith(keys)})
    return b"\n".join(lines).decode(errors="replace") if lines else None


@functools.cache
def llvmlite_stamp() -> str:
    """Size and mtime of llvmlite's package files (its LLVM library): a reinstall changes them."""
    from importlib.machinery import PathFinder  # not importlib.util: 0.4 ms more on a warm start

    spec = PathFinder.find_spec("llvmlite")
    if spec is None:  # installed behind another finder (an editable install's): ask them all
        from importlib.util import find_spec

        spec = find_spec("llvmlite")
    if spec is None or not spec.submodule_search_locations:
        return "no llvmlite"
    root = spec.submodule_search_locations[0]
    out = []
    for rel in ("__init__.py", "_version.py", os.path.join("binding", "libllvmlite.so")):
        try:
            st = os.stat(os.path.join(root, rel))
        except OSError:
            continue
        out.append(f"{rel}:{st.st_size}:{st.st_mtime_ns}")
    return ";".join(out)
