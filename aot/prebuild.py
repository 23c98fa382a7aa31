"""`aot prebuild`: build at install what every process would otherwise compile on its first use
(runtime/prebuilt.py): the runtime's helpers for this CPU and numpy (the call trampoline, the
block cache's functions, the thread pool) and aot.fft's kernel groups (aot/fft/prebuild.py).
make runs it; it skips what is up to date."""
from __future__ import annotations

import os
import time


def build(root: str | None = None, fft_targets: list[str] | None = None, force: bool = False) -> dict:
    """Build into `root` (the prebuilt directory). Returns {"root", "helpers": built,
    "fft": aot.fft.prebuild.build's report}."""
    from runtime import prebuilt

    from .fft import _prebuilt as fft_prebuilt
    from .fft.prebuild import build as build_fft

    root = root or prebuilt.directory()
    if root is None:
        raise ValueError(f"aot prebuild: {prebuilt.ENV}=0 turns prebuilt code off; name a directory")
    t0 = time.perf_counter()
    helpers = build_helpers(root, force)
    fft = build_fft(fft_prebuilt.directory(root), fft_targets, force=force)
    return {"root": root, "helpers": helpers, "fft": fft, "seconds": time.perf_counter() - t0}


def build_helpers(root: str, force: bool = False) -> int:
    """The runtime helpers of runtime.jit.prebuilt_helpers under their disk-cache keys in `root`;
    entries of other keys (older sources, another CPU) are removed. Returns how many were built."""
    from codegen.trampolines import HELPERS
    from runtime.buffers import ARRAY_LAYOUT
    from runtime.jit import default_engine, helper_key, prebuilt_helpers
    from runtime.prebuilt import _helper_path, put_helper

    wanted = prebuilt_helpers(ARRAY_LAYOUT) if ARRAY_LAYOUT is not None else [("blocks", {}), ("parallel_pool", {})]
    built, keep = 0, set()
    for name, params in wanted:
        key = helper_key(HELPERS, name, params)
        path = _helper_path(root, key)
        keep.add(os.path.basename(path))
        if force or not os.path.exists(path):
            put_helper(root, key, default_engine().emit_object(HELPERS.ir(name, params), quick=True))
            built += 1
    folder = os.path.join(root, "helpers")
    for name in os.listdir(folder):
        if name not in keep:
            os.unlink(os.path.join(folder, name))
    return built
