#!/usr/bin/env python3
"""First use of aot.fft in a fresh process: empty disk cache against a warm one.

Run: .venv/bin/python tools/bench_fft_startup.py [--repeats N] [--n 1024]
Each sample is a new interpreter that imports numpy and makes a complex128 array of length n
(untimed), then times `import aot.fft` plus the first `aot.fft.fft(x)` with perf_counter. "empty"
runs against a fresh AOT_CACHE_DIR each time, loading the prebuilt kernels (`aot prebuild`,
`make venv`) where there are any; "empty, built" with AOT_PREBUILT=0 (the kernels are compiled
on first use); "warm" against a cache a previous process filled. The
`_nopyc` variants set PYTHONDONTWRITEBYTECODE=1 with a fresh PYTHONPYCACHEPREFIX (no bytecode
cache: every module compiles from source); the others use a bytecode cache filled beforehand.
Medians of `repeats` samples, in seconds.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CHILD = """
import sys, time
import numpy as np
x = np.random.default_rng(0).random({n}) + 0j
t0 = time.perf_counter()
import aot.fft
y = aot.fft.fft(x)
t = time.perf_counter() - t0
assert np.allclose(y, np.fft.fft(x))
print(t)
"""


def _first_call(env: dict, n: int) -> float:
    out = subprocess.run([sys.executable, "-c", _CHILD.format(n=n)], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"child failed: {out.stderr.strip()[-2000:]}")
    return float(out.stdout.split()[-1])


def _env(cache: str, pyc: str | None, prebuilt: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["AOT_CACHE_DIR"] = cache
    if not prebuilt:
        env["AOT_PREBUILT"] = "0"
    if pyc is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="aot-nopyc-")  # no bytecode to read
    else:
        env["PYTHONPYCACHEPREFIX"] = pyc
    return env


def fft_first_use(repeats: int = 5, n: int = 1024) -> dict:
    """{"empty", "empty_built", "warm", and each with "_nopyc"}: median seconds of the first call."""
    with tempfile.TemporaryDirectory(prefix="aot-fft-startup-") as d:
        pyc = os.path.join(d, "pyc")
        warm = os.path.join(d, "warm")
        _first_call(_env(warm, pyc), n)  # fills the bytecode cache and the warm disk cache
        samples: dict[str, list[float]] = {k + s: [] for k in ("empty", "empty_built", "warm") for s in ("", "_nopyc")}
        for i in range(repeats):
            for bytecode in (True, False):
                suffix = "" if bytecode else "_nopyc"
                bc = pyc if bytecode else None
                samples["empty" + suffix].append(_first_call(_env(os.path.join(d, f"e{i}{suffix}"), bc), n))
                built = _env(os.path.join(d, f"b{i}{suffix}"), bc, prebuilt=False)
                samples["empty_built" + suffix].append(_first_call(built, n))
                samples["warm" + suffix].append(_first_call(_env(warm, bc), n))
        return {k: statistics.median(v) for k, v in samples.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n", type=int, default=1024)
    args = ap.parse_args()
    res = fft_first_use(args.repeats, args.n)
    print(f"## import aot.fft + first fft(n={args.n}), fresh process (median of {args.repeats})")
    print("| disk cache | bytecode cache | bytecode off (PYTHONDONTWRITEBYTECODE=1) |")
    print("|---|---|---|")
    label = {"empty": "empty, prebuilt kernels" if _prebuilt_here() else "empty (no prebuilt kernels: aot prebuild)",
             "empty_built": "empty, kernels built (AOT_PREBUILT=0)", "warm": "warm"}
    for name in ("empty", "empty_built", "warm"):
        print(f"| {label[name]} | {1e3 * res[name]:.1f} ms | {1e3 * res[name + '_nopyc']:.1f} ms |")


def _prebuilt_here() -> bool:
    """Prebuilt kernels that this CPU and these sources can use (what the 'empty' row loads)."""
    sys.path.insert(0, ROOT)
    from aot.fft import _prebuilt

    return _prebuilt.selected() is not None


if __name__ == "__main__":
    main()
