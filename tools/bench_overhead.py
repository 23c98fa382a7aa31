#!/usr/bin/env python3
"""Overheads: call overhead at N=16, first-call latency and warm-disk-cache latency in fresh
processes, and `import aot` time. Compares with numpy, numba and torch.compile where relevant.

Run: .venv/bin/python tools/bench_overhead.py
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import batched_time, fmt_time, optional  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_FIRST_CALL = r"""
import time, numpy as np
t0 = time.perf_counter()
import aot
t1 = time.perf_counter()
def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)
f = aot.compile(chain)
x = np.linspace(0, 1, 1000); y = x + 1
f(x, y)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, f.cache_info()["compiles"])
"""


# Fresh processes run with bytecode caching on, as an installed package has it (this repository's
# environment may set PYTHONDONTWRITEBYTECODE, which would add compiling every module's source to
# each figure); the .pyc files go to a private prefix, written by one warm-up process.
_PYC = tempfile.mkdtemp(prefix="aot-bench-pyc-")


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return dict(env, PYTHONPYCACHEPREFIX=_PYC, **extra)


def fresh_process(cache_dir: str) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL], capture_output=True, text=True,
                         env=_env(AOT_CACHE_DIR=cache_dir), cwd=ROOT, check=True)
    imp, first, _ = out.stdout.split()
    return float(imp), float(first)


def first_calls(repeats: int = 3) -> tuple[float, float, float]:
    """Medians over fresh processes of: import aot, first call with an empty disk cache, first call
    with the cache the previous process left (after one warm-up process that writes the .pyc)."""
    with tempfile.TemporaryDirectory() as d:
        fresh_process(d)
    imp, cold, warm = [], [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            i, c = fresh_process(d)
            warm.append(fresh_process(d)[1])
        imp.append(i)
        cold.append(c)
    return tuple(sorted(v)[len(v) // 2] for v in (imp, cold, warm))


def import_time(module: str, after: str = "time") -> float:
    """Median seconds to import `module` in a fresh process that has already imported `after`."""
    code = f"import time, {after}; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                  env=_env(), cwd=ROOT).stdout) for _ in range(5)]
    return sorted(times)[2]


def call_overhead():
    import aot

    def f(x, y):
        return x * y + 1.0

    x = np.ones(16)
    y = np.ones(16)
    dyn = aot.compile(f, dynamic=True)  # symbolic N: guards in Python, then the strided native call
    rows = {"aot": batched_time(lambda c=aot.compile(f): c(x, y), inner=20000),
            "aot dynamic=True": batched_time(lambda: dyn(x, y), inner=20000),
            "numpy": batched_time(lambda: f(x, y), inner=20000)}
    torch = optional("torch")
    numba = optional("numba")
    if numba is not None:
        nf = numba.njit(f)
        rows["numba"] = batched_time(lambda: nf(x, y), inner=20000)
    if torch is not None:
        tf = torch.compile(f)
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        rows["torch.compile"] = batched_time(lambda: tf(tx, ty), inner=2000)
    return rows


if __name__ == "__main__":
    print("## call overhead, x*y+1 at N=16 (median per call)")
    for name, t in call_overhead().items():
        print(f"| {name} | {fmt_time(t)} |")
    imp, cold, warm = first_calls()
    print("\n## fresh process (chain, N=1000; median of 3)")
    print(f"| import aot | {fmt_time(imp)} |")
    print(f"| first call, empty disk cache (trace + compile + run) | {fmt_time(cold)} |")
    print(f"| first call, warm disk cache | {fmt_time(warm)} |")
    print("\n## import time (median of 5 fresh processes, numpy already imported for the others)")
    print(f"| import numpy | {fmt_time(import_time('numpy'))} |")
    for m in ("aot", "aot.compiler.capture", "codegen", "runtime", "llvmlite.binding", "sympy"):
        print(f"| import {m} | {fmt_time(import_time(m, after='numpy'))} |")
