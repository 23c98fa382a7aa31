#!/usr/bin/env python3
"""Kernel-only timing of single complex transforms (no Python dispatch), against FFTW.

Run: .venv/bin/python tools/bench_fft_kernels.py [--sizes 1024,4096] [--dtype c128,c64] [--passes]

The aot figure calls the c2c entry once with `howmany` = R transforms of the same input
(idist = odist = 0, lanes off): the kernel's own loop repeats the transform, so the time per
transform excludes the cffi call. pyfftw (FFTW_MEASURE, 1 thread) is timed by
`execute()` in a Python loop, minus the loop cost of a length-2 plan, so both
figures are close to the library's kernel time. The contestants' batches alternate; all
arrays are 64-byte aligned. Times are the median and the minimum over
repeated batches (the minimum is the steadier figure on a busy machine).
`--passes` prints each plan's factors with (ido, l1).
"""
from __future__ import annotations

import argparse
import gc
import logging
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import fmt_time, optional

from aot.fft._exec import PLANS
from aot.fft._native import ffi, kernels
from codegen.fft import FLAG_FORWARD
from codegen.fft.plan import pass_rows

log = logging.getLogger("bench_fft_kernels")
pyfftw = optional("pyfftw")
SIZES = [64, 256, 1000, 1024, 1536, 4096, 65536]
_BATCH_S = 2e-3  # seconds per timed batch


def _interleaved(batches_fns: dict, batches: int) -> dict:
    """{name: (median, min) seconds per call}: the contestants' batches run in turn, so that a
    busy machine slows them alike."""
    reps = {name: _reps(fn) for name, fn in batches_fns.items()}
    per: dict = {name: [] for name in batches_fns}
    gc.disable()
    try:
        for _ in range(batches):
            for name, fn in batches_fns.items():
                t0 = time.perf_counter()
                fn(reps[name])
                per[name].append((time.perf_counter() - t0) / reps[name])
    finally:
        gc.enable()
    return {name: (statistics.median(v), min(v)) for name, v in per.items()}


def _reps(run_batch) -> int:
    run_batch(1)
    t0 = time.perf_counter()
    run_batch(4)
    one = max((time.perf_counter() - t0) / 4, 1e-8)
    return max(1, int(_BATCH_S / one))


def aligned(count: int, dtype, align: int = 64) -> np.ndarray:
    """An empty 1-D array whose data starts on an `align`-byte boundary (as pyfftw's arrays)."""
    dtype = np.dtype(dtype)
    raw = np.empty(count * dtype.itemsize + align, np.uint8)
    start = -raw.ctypes.data % align
    return raw[start:start + count * dtype.itemsize].view(dtype)


def aot_batch(n: int, cdtype: np.dtype):
    """batch(r): r forward transforms of one array by one kernel call (the kernel loops).
    Arrays and scratch are 64-byte aligned: cache-line-split stores into a misaligned scratch
    cost up to 40% (c128, n = 1024)."""
    plan = PLANS.get(n, cdtype)
    if plan.kind != "direct":
        raise ValueError(f"n={n}: Bluestein plans have no single kernel call")
    k = kernels("f32" if cdtype == np.complex64 else "f64")
    x, y = aligned(n, cdtype), aligned(n, cdtype)
    x[:] = np.random.default_rng(0).standard_normal(2 * n).astype(k.real_dtype).view(cdtype)
    scratch = aligned(4 * n, k.real_dtype)
    hdr, tw = plan.pointers(k)
    sp, dp, wp = (ffi.cast(k.cptr, a.ctypes.data) for a in (x, y, scratch))

    def batch(r, keep=(x, y, scratch)):
        k.c2c(hdr, tw, sp, dp, r, 1, 0, 1, 0, FLAG_FORWARD, 1.0, wp)

    return batch


def fftw_batch(n: int, cdtype: np.dtype):
    """batch(r): r calls of `execute()` of a pyfftw plan (FFTW_MEASURE, 1 thread)."""
    a = pyfftw.empty_aligned(n, dtype=cdtype)
    a[:] = np.random.default_rng(0).standard_normal(n)
    ex = pyfftw.builders.fft(a, planner_effort="FFTW_MEASURE", threads=1).execute

    def batch(r):
        for _ in range(r):
            ex()

    return batch


def measure(n: int, cdtype: np.dtype, batches: int, fftw: bool) -> dict:
    """{"aot": (median, min), "fftw": (median, min) less the loop's cost (a length-2 plan)}."""
    fns = {"aot": aot_batch(n, cdtype)}
    if fftw and pyfftw is not None:
        fns["fftw"], fns["fftw2"] = fftw_batch(n, cdtype), fftw_batch(2, cdtype)
    res = _interleaved(fns, batches)
    if "fftw" in res:
        res["fftw"] = tuple(max(a - c, 1e-9) for a, c in zip(res["fftw"], res.pop("fftw2")))
    return res


def describe_plan(n: int, cdtype: np.dtype) -> str:
    """The plan's passes as radix(ido, l1); "full" where whole VLEN-wide steps cover the pass."""
    plan = PLANS.get(n, cdtype)
    if plan.kind != "direct":
        return f"n={n}: bluestein"
    vl = kernels("f32" if cdtype == np.complex64 else "f64").vlen
    parts = []
    for ip, l1, ido, _, _ in pass_rows(plan.header).tolist():
        full = ido % vl == 0 or (ido == 1 and l1 % vl == 0)
        parts.append(f"{ip}(ido={ido},l1={l1}{',full' if full else ''})")
    return f"n={n}: " + " ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--dtype", default="c128,c64")
    ap.add_argument("--batches", type=int, default=31)
    ap.add_argument("--passes", action="store_true")
    ap.add_argument("--no-fftw", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    sizes = [int(s) for s in args.sizes.split(",")]
    dtypes = {"c128": np.dtype(np.complex128), "c64": np.dtype(np.complex64)}
    log.info("| dtype | n | aot kernel median | FFTW median | aot/FFTW | aot min | FFTW min | aot/FFTW (min) |")
    log.info("|---|---|---|---|---|---|---|---|")
    for name in args.dtype.split(","):
        cdt = dtypes[name]
        for n in sizes:
            if args.passes:
                log.info("%s", describe_plan(n, cdt))
            res = measure(n, cdt, args.batches, not args.no_fftw)
            t, f = res["aot"], res.get("fftw", (None, None))
            ratios = [f"{a / c:.2f}" if c else "-" for a, c in zip(t, f)]
            log.info("| %s | %d | %s | %s | %s | %s | %s | %s |", name, n, fmt_time(t[0]), fmt_time(f[0]), ratios[0],
                     fmt_time(t[1]), fmt_time(f[1]), ratios[1])


if __name__ == "__main__":
    main()
