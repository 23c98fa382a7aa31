"""The large-block cache (runtime/blocks.py) on and off: large compiled calls (outputs, and
intermediate buffers), an fftn, and 2 MB results made in a loop whose last result lives through
the next call (glibc faults such blocks in anew), each setting in fresh processes (alternating, so the machine's drift hits both), medians of the
processes' medians. numpy's own time for the same work is measured in the same processes (numpy
maps fresh pages for each large result too) and so is pyfftw's fftn where it is installed.

    PYTHONPATH=. python tools/bench_blocks.py [--rounds 3] [--torch]

`--torch` imports torch into the children first (on some machines that makes the kernel back fresh
blocks with huge pages, whose zeroing then dominates an uncached large call).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_CHILD = r"""
import json, sys, time
import numpy as np
if "torch" in sys.argv:
    import torch  # noqa: F401
import aot

def med(fn, n=25):
    fn(); fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter(); r = fn(); ts.append(time.perf_counter() - t); del r
    return sorted(ts)[n // 2]

def med_alive(fn, n=101):  # the loop `r = fn()`: the last result lives through the next call
    r = fn(); r = fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter(); r = fn(); ts.append(time.perf_counter() - t)
    return sorted(ts)[n // 2]

def sin_chain(x, y):
    return np.sin(x) * 2 + y

def sqrt_chain(a):
    return np.sqrt(a) * 2 + 1

def exp_chain(x, y):
    return np.exp(-x * x) * y + np.sin(x)

def spectral(x, h):  # intermediates: the spectrum and the product (32 MB each)
    return np.fft.irfft(np.fft.rfft(x) * h, n=x.shape[0])

def sorted_chain(x):  # an intermediate: the sorted copy (32 MB)
    s = np.sort(x)
    return s * 2 + np.sqrt(s)

rng = np.random.default_rng(0)
a = rng.random(10_000_000)
x, y = (rng.random(10_000_000).astype(np.float32) for _ in range(2))
c = rng.random((128, 128, 128)) + 1j * rng.random((128, 128, 128))
s, h = rng.random(1 << 22), rng.random((1 << 21) + 1)
m, my = rng.random(250_000), rng.random(250_000)
z = rng.random(1 << 17) + 1j * rng.random(1 << 17)
f, g, fm = aot.compile(sqrt_chain), aot.compile(exp_chain), aot.compile(sin_chain)
fs, fo = aot.compile(spectral), aot.compile(sorted_chain)
# the 2 MB loops first: once a process has freed blocks of 32 MB, glibc keeps smaller ones mapped
out = {"mid": med_alive(lambda: fm(m, my)), "mid numpy": med_alive(lambda: sin_chain(m, my)),
       "fft mid": med_alive(lambda: aot.fft.fft(z)), "fft mid numpy": med_alive(lambda: np.fft.fft(z))}
out.update({"f64": med(lambda: f(a)), "f32": med(lambda: g(x, y)), "fftn": med(lambda: aot.fft.fftn(c)),
       "spectral": med(lambda: fs(s, h), 15), "sort": med(lambda: fo(s), 15),
       "f64 numpy": med(lambda: sqrt_chain(a)), "f32 numpy": med(lambda: exp_chain(x, y)),
       "spectral numpy": med(lambda: spectral(s, h), 15), "sort numpy": med(lambda: sorted_chain(s), 15)})
try:
    import pyfftw
    plan = pyfftw.builders.fftn(c.copy(), threads=2, planner_effort="FFTW_MEASURE")
    out["fftn pyfftw t=2"] = med(lambda: plan(c))
except ImportError:
    pass
print(json.dumps(out))
"""

CASES = (("f64", "compiled np.sqrt(a) * 2 + 1, 1e7 float64"),
         ("f32", "compiled np.exp(-x * x) * y + np.sin(x), 1e7 float32"),
         ("fftn", "aot.fft.fftn, (128, 128, 128) complex128"),
         ("spectral", "compiled irfft(rfft(x) * h), 2^22 float64 (intermediates)"),
         ("sort", "compiled s = np.sort(x); s * 2 + np.sqrt(s), 2^22 float64"),
         ("mid", "compiled np.sin(x) * 2 + y, 250k float64 (2 MB), r = f(x, y) loop"),
         ("fft mid", "aot.fft.fft, 2^17 complex128 (2 MB), r = fft(z) loop"))


def child(mb: str, with_torch: bool) -> dict:
    env = {**os.environ, "AOT_BLOCK_CACHE_MB": mb}
    args = [sys.executable, "-c", _CHILD] + (["torch"] if with_torch else [])
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="fresh processes per setting")
    ap.add_argument("--torch", action="store_true", help="import torch in the children first")
    args = ap.parse_args()
    runs: dict[str, list[dict]] = {"0": [], "512": []}
    for _ in range(args.rounds):
        for mb, results in runs.items():
            results.append(child(mb, args.torch))

    def med(mb, key):
        vals = [r[key] for r in runs[mb] if key in r]
        return statistics.median(vals) if vals else None

    print(f"{'case':<64} {'cache off':>10} {'cache on':>10} {'off/on':>7} {'numpy/on':>9}")
    for key, title in CASES:
        off, on = med("0", key), med("512", key)
        ref = med("512", f"{key} numpy") or med("512", f"{key} pyfftw t=2")
        ref_name = "" if med("512", f"{key} numpy") else " (pyfftw t=2)"
        ref_txt = f"{ref / on:9.2f}{ref_name}" if ref else ""
        print(f"{title:<64} {off * 1e3:8.2f}ms {on * 1e3:8.2f}ms {off / on:7.2f} {ref_txt}")


if __name__ == "__main__":
    main()
