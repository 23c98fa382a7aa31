#!/usr/bin/env python3
"""One long 1-D transform: aot.fft's split (two halves, or four steps) against its radix passes,
and against the other splits, on one and two threads, in one process.

Run: PYTHONPATH=. python tools/bench_fft_four_step.py [--quick] [--sizes c128:65536,c64:1048576]
Every variant writes a preallocated output (no page faults of a fresh result; cache-line aligned,
as aot.fft.fft's own results are) and all of a size's variants run in alternating batches (a
shared, noisy machine slows neighbouring batches alike); times are medians of the batches.
"chosen" is what aot.fft.fft runs (aot/fft/_exec.py's split_of), "radix passes" the plan's passes
over the whole array (shared by the threads from 1 MB), "square" / "tall" the other split where
the length has one. Ratio = variant / chosen.
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

SIZES = ["c128:32768", "c64:65536", "c128:65536", "c128:131072", "c128:262144", "c128:1048576", "c128:2097152", "c64:131072",
         "c64:262144", "c64:1048576", "c64:2097152"]
_DTYPES = {"c128": np.complex128, "c64": np.complex64}


def _variants(x: np.ndarray, y: np.ndarray) -> dict:
    """name -> callable writing the forward transform of x into y."""
    from aot.fft import _exec
    from aot.fft._native import ffi
    from codegen.fft.names import LANE_BLOCK
    from codegen.fft.plan import FOUR_STEP_TALL_M1, four_step_split

    k = _exec.kernels(_exec._precision(x.dtype))
    plan = _exec.get_plan(x.size, x.dtype)
    chosen = _exec.split_of(plan, k)
    xp, yp = ffi.from_buffer(k.carray, x), ffi.from_buffer(k.carray, y)
    out = {}
    if chosen is not None:
        label = "halves" if isinstance(chosen, _exec._Halves) else \
            f"{chosen.m1} x {chosen.m2}{', in place' if chosen.square else ''}"
        out[f"chosen ({label})"] = lambda: chosen(k, xp, yp, True, 1.0)

    def radix():
        old, _exec.HALVES_MIN_BYTES = _exec.HALVES_MIN_BYTES, 1 << 62
        try:
            _exec.c2c(x, y, -1, True, 1.0)
        finally:
            _exec.HALVES_MIN_BYTES = old

    out["radix passes"] = radix
    if not isinstance(chosen, _exec._Halves) and x.size % (2 * k.vlen) == 0:
        halves = _exec._Halves(k, x.dtype, x.size)
        out["halves"] = lambda: halves(k, xp, yp, True, 1.0)
    square = four_step_split(x.size, k.vlen, LANE_BLOCK)
    tall = four_step_split(x.size, k.vlen, LANE_BLOCK, FOUR_STEP_TALL_M1[x.dtype.itemsize])
    for label, split, is_square in (("square", square, True), ("tall", tall, False)):
        if split and (chosen is None or isinstance(chosen, _exec._Halves) or (chosen.m1, chosen.m2) != split):
            other = _exec._FourStep(k, x.dtype, *split, square=is_square)
            out[f"{label} ({split[0]} x {split[1]})"] = lambda other=other: other(k, xp, yp, True, 1.0)
    return out


def measure(spec: str, threads: int, rounds: int) -> dict:
    from aot.fft import _exec

    name, n = spec.split(":")
    dtype = np.dtype(_DTYPES[name])
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(int(n)) + 1j * rng.standard_normal(int(n))).astype(dtype)
    y = _exec.new_array(x.shape, dtype)  # as aot.fft.fft allocates its result: cache-line aligned
    _exec.set_num_threads(threads)
    fns = _variants(x, y)
    want = np.fft.fft(x.astype(np.complex128))
    inner = max(2, int(4e6 // x.size))
    times: dict = {label: [] for label in fns}
    for label, fn in fns.items():  # each checked against numpy, and warm
        fn()
        err = np.abs(y - want).max() / np.abs(want).max()
        assert err < (1e-5 if dtype == np.complex64 else 1e-13), (spec, label, err)
    for _ in range(rounds):
        for label, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            times[label].append((time.perf_counter() - t0) / inner)
    return {label: statistics.median(v) for label, v in times.items()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds")
    ap.add_argument("--sizes", default=",".join(SIZES), help="comma-separated dtype:length (c128 or c64)")
    args = ap.parse_args(argv)
    rounds = 5 if args.quick else 11
    print("| case | threads | variant | time | variant / chosen |")
    print("|---|---|---|---|---|")
    for spec in args.sizes.split(","):
        for threads in (1, 2):
            res = measure(spec, threads, rounds)
            base = next((t for label, t in res.items() if label.startswith("chosen")), None)
            for label, t in res.items():
                ratio = f"{t / base:.2f}" if base else "-"
                print(f"| fft {spec} | {threads} | {label} | {fmt_time(t)} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
