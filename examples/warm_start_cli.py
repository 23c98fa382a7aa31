"""A short-lived command-line tool that compiles its kernel on every run, and starts warm.

`python warm_start_cli.py run FILE` reads a recording (float64 samples), computes its envelope
and a robust level with one compiled function and prints them. Run twice, the second process
loads the first one's native code from the disk cache without tracing or LLVM: the warm start
(aot.compile's first call costs a key computation, a verified load and the call).

Without arguments the example does what a user would: writes a recording, runs the tool twice in
fresh processes with a private cache, and checks that the second run started warm and agreed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

SMOOTH = 0.02  # the envelope's attack (a global constant: changing it recompiles)


def envelope(x, noise):
    rectified = np.abs(x - x.mean())
    level = np.sqrt(np.mean(rectified * rectified))
    gate = np.where(rectified > 3.0 * noise, rectified, 0.0)
    return gate * (1.0 - SMOOTH) + level * SMOOTH, level


def run(path: str) -> dict:
    t0 = time.perf_counter()
    import aot

    x = np.fromfile(path, dtype=np.float64)
    noise = np.full_like(x, np.median(np.abs(x)) / 0.6745)
    f = aot.compile(envelope)
    env, level = f(x, noise)
    first = time.perf_counter() - t0
    want_env, want_level = envelope(x, noise)
    ok = bool(np.allclose(env, want_env, rtol=1e-12) and np.isclose(level, want_level, rtol=1e-12))
    return {"first_call_ms": round(1e3 * first, 1), "warm_start": f.cache_info()["warm_starts"] == 1,
            "level": float(level), "ok": ok}


def demo() -> None:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "recording.f64")
        rng = np.random.default_rng(7)
        t = np.arange(200_000) / 48_000
        (np.sin(2 * np.pi * 440 * t) * np.exp(-3 * t) + 0.05 * rng.standard_normal(t.size)).tofile(path)
        env = {**os.environ, "AOT_CACHE_DIR": os.path.join(d, "cache")}
        env.pop("AOT_WARM_START", None)  # the default: on
        runs = []
        for _ in range(2):
            out = subprocess.run([sys.executable, __file__, "run", path], env=env, capture_output=True,
                                 text=True, check=True, timeout=300)
            runs.append(json.loads(out.stdout))
        cold, warm = runs
        print(f"first run : first call {cold['first_call_ms']:7.1f} ms (trace + compile + run)")
        print(f"second run: first call {warm['first_call_ms']:7.1f} ms (warm start: {warm['warm_start']})")
        assert cold["ok"] and warm["ok"] and cold["level"] == warm["level"]
        assert not cold["warm_start"] and warm["warm_start"], runs


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        print(json.dumps(run(sys.argv[2])))
    else:
        demo()
