#!/usr/bin/env python3
"""Dynamic shapes: a stream of 50 lengths (1000..1049) through one compiled function, the guard
check of a 3-input entry, and a warm call of a dynamic-shape entry vs a static one at N=1e6.
Contestants for the stream: numba (compiles once), torch.compile (when installed).

Run: .venv/bin/python tools/bench_dynamic.py
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import batched_time, fmt_time, optional  # noqa: E402

torch = optional("torch")
numba = optional("numba")


def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


def stream(fn, wrap=lambda a: a):
    rng = np.random.default_rng(0)
    data = [(wrap(rng.random(n)), wrap(rng.random(n))) for n in range(1000, 1050)]
    t0 = time.perf_counter()
    for x, y in data:
        fn(x, y)
    return time.perf_counter() - t0


_FRESH = """
import sys, time
import numpy as np
sys.path.insert(0, {tools!r})
from bench_dynamic import chain, stream
import aot
f = aot.compile(chain, options={{"disk_cache": {disk}}})
print(stream(f))
"""


def fresh_stream(repeats: int = 5, warm: bool = False) -> float:
    """The aot stream in new processes that import nothing else (no torch: aot's first dynamic
    compile imports sympy, ~0.17 s), with bytecode caching on (a private PYTHONPYCACHEPREFIX that
    an untimed first process fills): the median, in seconds. `warm`: with a disk cache that the
    untimed process filled (its static and symbolic entries start warm), else none."""
    import subprocess
    import tempfile

    tools = os.path.dirname(os.path.abspath(__file__))
    code = _FRESH.format(tools=tools, disk=warm)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.path.dirname(tools) + os.pathsep + os.environ.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory(prefix="aot-bench-pyc-") as pyc:
        env["PYTHONPYCACHEPREFIX"] = pyc
        env["AOT_CACHE_DIR"] = os.path.join(pyc, "aot-cache")

        def run() -> float:
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
            return float(out.stdout.split()[-1])

        run()
        return statistics.median(run() for _ in range(repeats))


def alternating(a, b, pairs: int = 200) -> tuple[float, float]:
    """Medians of `a` and `b` called in turn: on a shared machine a call's speed drifts with the
    other load (both threads on a core or not), and back-to-back runs of each would see different
    drifts."""
    a(), b()
    ta, tb = [], []
    for _ in range(pairs):
        t0 = time.perf_counter()
        a()
        t1 = time.perf_counter()
        b()
        ta.append(t1 - t0)
        tb.append(time.perf_counter() - t1)
    return statistics.median(ta), statistics.median(tb)


def main():
    import aot

    print("## 50 calls, lengths 1000..1049 (total wall time, compiles included)")
    print(f"| aot (dynamic=None), fresh process: aot imports sympy itself (median of 5) | "
          f"{fmt_time(fresh_stream())} | 2 compiles |")
    print(f"| aot (dynamic=None), fresh process, warm disk cache (an earlier process compiled it) | "
          f"{fmt_time(fresh_stream(warm=True))} | 2 warm starts |")
    have = "sympy already imported" if "sympy" in sys.modules else "in this process"
    f = aot.compile(chain, options={"disk_cache": False})
    t = stream(f)
    print(f"| aot (dynamic=None), {have} | {fmt_time(t)} | {f.cache_info()['compiles']} compiles |")
    if numba is not None:
        @numba.njit
        def nb(x, y):
            return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)
        print(f"| numba njit | {fmt_time(stream(nb))} | 1 compile |")
    if torch is not None:
        tf = torch.compile(lambda x, y: torch.sin(x) * torch.exp(-y) + x * y / (1 + y * y))
        print(f"| torch.compile | {fmt_time(stream(tf, torch.from_numpy))} | |")

    print("\n## guard check of a 3-input dynamic entry (median per check)")
    g = aot.compile(lambda a, b, c: a * b + c, dynamic=True)
    a = np.ones(100)
    g(a, a, a)
    entry = g._entries[0]
    leaves = [a, a, a]
    print(f"| guards.check | {fmt_time(batched_time(lambda: entry.guards.check(leaves), inner=20000))} |")

    print("\n## warm call at N=1e6: dynamic entry vs static entry (medians of 200 alternating calls)")
    x, y = np.random.default_rng(1).random((2, 1_000_000))
    static = aot.compile(chain, dynamic=False)
    dyn = aot.compile(chain, dynamic=True)
    ts, td = alternating(lambda: static(x, y), lambda: dyn(x, y))
    print(f"| static | {fmt_time(ts)} |\n| dynamic | {fmt_time(td)} |\n| dynamic/static | {td / ts:.2f} |")


if __name__ == "__main__":
    main()
