#!/usr/bin/env python3
"""Streaming (non-temporal) stores of elementwise kernels: where they pay, measured in one process.

Each case compiles the same program twice, with options["streaming_stores"] True (the default:
kernels stream from codegen/kernels/streaming.py's STREAM_MIN_BYTES of arrays per call) and False
(they never do), and times both in alternating rounds on 1 and 2 threads, beside numpy (one thread) and, where
installed, numexpr and torch.compile on the row's thread count. Cases: a memory-bound axpy (2.5*x + y) over
arrays of 16-256 MB each, and the transcendental chain of tools/bench_elementwise.py at N=1e7.
Ratio = time / aot's time with streaming (> 1: streaming wins).

Run: PYTHONPATH=. python tools/bench_streaming.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import interleaved_medians, optional, print_table

torch = optional("torch")
numexpr = optional("numexpr")


def axpy(x, y):
    return 2.5 * x + y


def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


def _compiled(fn, x, y, threads: int, stream: bool):
    """aot's `fn`, compiled (by a first call) with options["streaming_stores"] = `stream`."""
    import aot

    f = aot.compile(fn, options={"num_threads": threads, "streaming_stores": stream, "disk_cache": False})
    f(x, y)
    return f


def _row(label, fn, x, y, threads, min_time):
    streamed, regular = _compiled(fn, x, y, threads, True), _compiled(fn, x, y, threads, False)
    want = fn(x, y)
    for f in (streamed, regular):
        np.testing.assert_array_equal(f(x, y), f(x, y))
        np.testing.assert_allclose(f(x, y), want, rtol=1e-5 if x.dtype == np.float32 else 1e-12)
    fns = {"aot stream": lambda: streamed(x, y), "aot regular": lambda: regular(x, y), "numpy": lambda: fn(x, y)}
    if numexpr is not None:
        expr = "2.5*x + y" if fn is axpy else "sin(x)*exp(-y) + x*y/(1+y*y)"
        numexpr.set_num_threads(threads)
        fns["numexpr"] = lambda: numexpr.evaluate(expr, local_dict={"x": x, "y": y})
    if torch is not None:
        torch.set_num_threads(threads)
        tf = torch.compile(lambda a, b: 2.5 * a + b if fn is axpy else
                           torch.sin(a) * torch.exp(-b) + a * b / (1 + b * b))
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        tf(tx, ty)
        fns["torch.compile"] = lambda: tf(tx, ty)
    times = interleaved_medians(fns, min_time=min_time * len(fns))
    mb = x.nbytes / (1 << 20)
    return {"case": f"{label} {x.dtype} {mb:.0f} MB each, {threads} thread(s)", **times}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes, shorter runs")
    a = ap.parse_args(argv)
    from codegen.kernels.streaming import STREAM_MIN_BYTES

    min_time = 0.3 if a.quick else 1.0
    sizes_mb = (16, 64) if a.quick else (16, 32, 48, 64, 256)
    rng = np.random.default_rng(0)
    rows = []
    for threads in (1, 2):
        for mb in sizes_mb:
            n = (mb << 20) // 8
            x, y = rng.uniform(-3, 3, n), rng.uniform(0, 3, n)
            rows.append(_row("axpy", axpy, x, y, threads, min_time))
        for dt in (np.float64, np.float32):
            x, y = rng.uniform(-3, 3, 10_000_000).astype(dt), rng.uniform(0, 3, 10_000_000).astype(dt)
            rows.append(_row("chain", chain, x, y, threads, min_time))
    print_table(f"elementwise kernels, stores streamed from {STREAM_MIN_BYTES >> 20} MB of arrays per call "
                "(ratio = time / aot stream)", rows, baseline="aot stream")


if __name__ == "__main__":
    main()
