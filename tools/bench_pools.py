#!/usr/bin/env python3
"""Compiled code and eager FFTs in one process: one pool of workers or two (runtime/pools.py).

Times an eager aot.fft.fft of complex128 (256, 1024) alone and right after a compiled elementwise
call over 2^20 float64 (whose pool's workers spin ~0.4 ms after their job), and the compiled call
alone, on AOT_NUM_THREADS threads (default 2): medians of --calls timed calls in alternating
rounds. With one pool the FFT after a compiled call costs what it costs alone (0.97-1.00 measured
on two cores); with a pool each, the compiled code's spinning worker took a core from the FFT's
(1.14-1.15 in the same runs of the commit before runtime/pools.py).

Run: PYTHONPATH=. python tools/bench_pools.py [--calls 400]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import fmt_time


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=400)
    a = p.parse_args()
    import aot
    import aot.fft as afft
    from runtime import pools

    x = (np.random.default_rng(0).random((256, 1024)) + 1j).astype(np.complex128)
    out = np.empty_like(x)
    y = np.random.default_rng(1).random(1 << 20)
    f = aot.compile(lambda v: np.sqrt(v) * 2.0 + 1.0)
    f(y)
    afft.fft(x, out=out)
    times: dict[str, list[float]] = {"fft alone": [], "fft after a compiled call": [], "compiled call alone": []}
    for _ in range(5):
        for name, got in times.items():
            for _ in range(a.calls // 5):
                if name == "fft after a compiled call":
                    f(y)
                t0 = time.perf_counter()
                f(y) if name == "compiled call alone" else afft.fft(x, out=out)
                got.append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"## one process, {os.environ.get('AOT_NUM_THREADS', 'default')} threads; process pool: "
          f"{'one' if pools.process_pool() else 'none'}")
    for k, v in med.items():
        print(f"| {k} | {fmt_time(v)} |")
    print(f"| fft after a compiled call / fft alone | {med['fft after a compiled call'] / med['fft alone']:.2f} |")


if __name__ == "__main__":
    main()
