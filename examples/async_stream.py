"""A live signal monitor that answers its first frame at numpy speed while aot compiles.

Frames of a multichannel recording arrive one by one; each must be answered before the next.
`aot.compile(..., options={"async_compile": True})` answers the frames that arrive while its
native code is being built with numpy, then switches: no frame waits for a compile. Meanwhile,
`compile_async` prepares a second kernel for frames of another size, and `aot.aot_compile_async`
builds a shared library of the same kernel for a deployment, both in the background; the
aot.futures they return are waited on at the end (`aot.futures.wait_all`).

Run: python examples/async_stream.py
"""
from __future__ import annotations

import os
import tempfile
import time

import numpy as np

import aot
from aot.futures import wait_all

CHANNELS, FRAME = 8, 48_000


def features(frame, gain):
    """Per-frame signal features: a gain-corrected, soft-clipped, de-meaned envelope and levels."""
    x = frame * gain[:, None]
    x = np.tanh(1.5 * x) / np.tanh(1.5)  # soft clip
    x = x - x.mean(axis=1, keepdims=True)
    env = np.sqrt(x * x + 1e-12)
    rms = np.sqrt(np.mean(x * x, axis=1))
    peak = np.max(env, axis=1)
    crest = peak / (rms + 1e-12)
    return env * 0.5 + np.abs(x) * 0.5, rms, crest


def main() -> None:
    rng = np.random.default_rng(1)
    gain = np.linspace(0.5, 2.0, CHANNELS)
    monitor = aot.compile(features, options={"async_compile": True})

    # a kernel for the next session's frame size, compiled in the background
    later = rng.standard_normal((CHANNELS, FRAME // 2))
    prepared = monitor.compile_async(later, gain)
    # and a shared library of the same kernel for the embedded build, also in the background
    lib_dir = tempfile.mkdtemp(prefix="aot-async-")
    library = aot.aot_compile_async(features, (later, gain), path=os.path.join(lib_dir, "features.so"))

    slowest, switched_at = 0.0, None
    for i in range(400):
        frame = rng.standard_normal((CHANNELS, FRAME))
        t0 = time.perf_counter()
        env, rms, crest = monitor(frame, gain)
        slowest = max(slowest, time.perf_counter() - t0)
        want = features(frame, gain)
        np.testing.assert_allclose(env, want[0], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(rms, want[1], rtol=1e-12)
        np.testing.assert_allclose(crest, want[2], rtol=1e-12)
        if switched_at is None and monitor.cache_info()["calls"]["native"]:
            switched_at = i
        if switched_at is not None and i >= switched_at + 20:
            break
    assert switched_at is not None, "native code never took over"

    entry, path = wait_all([prepared, library])
    lib = aot.aot_load(path)
    np.testing.assert_allclose(lib(later, gain)[1], features(later, gain)[1], rtol=1e-12)
    monitor(later, gain)  # served natively: no compile, no eager call
    info = monitor.cache_info()
    print(f"frames answered eagerly while compiling: {info['calls']['eager']}, natively: {info['calls']['native']}")
    print(f"native code took over at frame {switched_at}; slowest frame {1e3 * slowest:.0f} ms")
    print(f"prepared entry for {FRAME // 2}-sample frames: {len(entry.guards.texts)} guards; library: {os.path.basename(path)}")


if __name__ == "__main__":
    main()
