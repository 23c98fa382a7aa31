"""Shared helpers of the benchmark scripts: timing by medians, optional contestants, ratio tables.

Every figure is measured in the running process; ratios are `contestant time / aot time`
(> 1 means aot is faster) unless a table says otherwise.
"""
from __future__ import annotations

import gc
import importlib
import os
import statistics
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], *, min_time: float = 0.2, min_runs: int = 5,
                max_runs: int = 10_000) -> float:
    """Median seconds of one call to fn, after one warm-up call."""
    fn()
    times: list[float] = []
    start = time.perf_counter()
    gc_was = gc.isenabled()
    gc.disable()
    try:
        while len(times) < max_runs and (len(times) < min_runs or time.perf_counter() - start < min_time):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    finally:
        if gc_was:
            gc.enable()
    return statistics.median(times)


def batched_time(fn: Callable[[], object], inner: int = 1000, repeats: int = 7) -> float:
    """Median seconds per call over `repeats` batches of `inner` calls (for sub-microsecond calls)."""
    fn()
    per = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        per.append((time.perf_counter() - t0) / inner)
    return statistics.median(per)


def optional(name: str):
    """Import an optional contestant, or None when it is not installed."""
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a broken install is as good as a missing one here
        return None


def fmt_time(t: float | None) -> str:
    if t is None:
        return "-"
    if t < 1e-6:
        return f"{t * 1e9:.0f} ns"
    if t < 1e-3:
        return f"{t * 1e6:.1f} us"
    if t < 1:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.2f} s"


def print_table(title: str, rows: list[dict], baseline: str = "aot") -> None:
    """rows: [{"case": str, "<contestant>": seconds or None, ...}]; prints times and ratios to aot."""
    names = [k for k in rows[0] if k != "case"] if rows else []
    print(f"\n## {title}  (median times; ratio = contestant / {baseline}, > 1 means {baseline} is faster)")
    header = ["case"] + names + [f"{n}/{baseline}" for n in names if n != baseline]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        base = r.get(baseline)
        cells = [r["case"]] + [fmt_time(r.get(n)) for n in names]
        cells += [f"{r[n] / base:.2f}" if r.get(n) and base else "-" for n in names if n != baseline]
        print("| " + " | ".join(cells) + " |")


def threads() -> int:
    return int(os.environ.get("AOT_NUM_THREADS", os.cpu_count() or 1))
