#!/usr/bin/env python3
"""One transform's radix passes timed alone, against the whole transform, on one thread.

Each pass of the plan runs by itself in batches (the median batch: its source, destination and
twiddles stay in cache), through the kernels' pass entry (codegen/fft/module.py emit_pass_entry); the sum of those
times is what the transform would cost if nothing left the cache between its passes. The whole
transform (aot.fft.fft into a fresh array, as a user calls it) then shows what the passes lose
to each other: one call touches its input, its output, the work buffer and the plan's twiddles
(about as many complex numbers as the transform has), and once those outgrow the cache every
call fetches what the previous one evicted.

A second table measures the twiddles' share of that working set: the whole transform (into a
preallocated output) as planned, and with the first one or two passes reading their twiddles from
the input array instead of the plan's table (their offsets in the plan's header pointed there for
the run: the values are wrong, the instructions the same, the bytes touched fewer), in
alternating batches. Before the passes with a long ido kept two-level tables (codegen/fft/plan.py)
this table measured c128 27648 1.11 / 1.15 faster and c64 55296 1.10 / 1.12; with them the
first passes' tables are a few KB and the ratios ~1.0.

Run: PYTHONPATH=. python tools/bench_fft_passes.py [--sizes c128:16384,c128:27648,c64:65536]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import aligned_empty, batched_time

SIZES = "c128:13824,c128:16384,c128:18432,c128:20736,c128:24576,c128:27648,c64:27648,c64:55296"
_DTYPES = {"c128": np.complex128, "c64": np.complex64}


def passes(n: int, dtype) -> tuple[list[tuple[int, int, int, float]], float, float]:
    """([(radix, l1, ido, seconds)] per pass, their sum, the whole transform's seconds)."""
    import aot.fft
    from aot.fft import _exec
    from aot.fft._native import ffi
    from aot.fft._plans import DirectPlan
    from codegen.fft.names import FLAG_FORWARD, pass_entry_name
    from codegen.fft.plan import pass_rows

    precision = "f64" if np.dtype(dtype) == np.complex128 else "f32"
    k = _exec.kernels(precision)
    plan = DirectPlan(n, np.dtype(dtype))
    hdr, tw = plan.pointers(k, True)
    tw = ffi.cast("void *", tw)
    entry = ffi.cast("void (*)(int64_t *, void *, int64_t, void *, void *, int64_t, int64_t, int32_t)",
                     k.address(pass_entry_name(precision)))
    bufs = [aligned_empty(n, dtype), aligned_empty(n, dtype)]
    bufs[0][:] = np.random.default_rng(0).standard_normal(n)
    rows = []
    for f, (ip, l1, ido, _, _) in enumerate(pass_rows(plan.header).tolist()):
        src, dst = (ffi.cast("void *", b.ctypes.data) for b in (bufs[f % 2], bufs[(f + 1) % 2]))
        hi = l1 if l1 > 1 else ido

        def one(f=f, src=src, dst=dst, hi=hi):
            entry(hdr, tw, f, src, dst, 0, hi, FLAG_FORWARD)

        rows.append((ip, l1, ido, batched_time(one, inner=50)))
    x = aligned_empty(n, dtype)
    x[:] = bufs[0]
    np.testing.assert_allclose(aot.fft.fft(x), np.fft.fft(x), rtol=1e-4, atol=1e-3 * np.sqrt(n))
    whole = batched_time(lambda: aot.fft.fft(x), inner=50)
    return rows, sum(r[3] for r in rows), whole


def twiddle_share(n: int, dtype, rounds: int = 15, inner: int = 100) -> tuple[list[float], list[float]]:
    """(KB of the first two passes' twiddle tables, seconds of aot.fft.fft(x, out=o) with the
    first 0, 1 and 2 passes' twiddles read from x)."""
    import aot.fft
    from aot.fft import _exec
    from codegen.fft.plan import pass_rows, twiddle_count

    x, out = aligned_empty(n, dtype), aligned_empty(n, dtype)
    x[:] = np.random.default_rng(0).standard_normal(n)
    aot.fft.fft(x, out=out)
    plan = _exec.get_plan(n, np.dtype(dtype))
    planned = plan.header.copy()
    kb = [twiddle_count(ip, ido) * np.dtype(dtype).itemsize / 1024 for ip, _, ido, _, _ in pass_rows(planned)[:2].tolist()]
    delta = x.ctypes.data - plan.twiddles.ctypes.data
    assert delta % plan.twiddles.itemsize == 0, "the input and the table must be a whole number of items apart"
    plan.header.flags.writeable = True
    rows = pass_rows(plan.header)
    times: list[list[float]] = [[], [], []]
    try:
        for _ in range(rounds):
            for k in range(3):
                plan.header[:] = planned
                rows[:k, 3] = delta // plan.twiddles.itemsize
                aot.fft.fft(x, out=out)
                t0 = time.perf_counter()
                for _ in range(inner):
                    aot.fft.fft(x, out=out)
                times[k].append((time.perf_counter() - t0) / inner)
    finally:
        plan.header[:] = planned
        plan.header.flags.writeable = False
    np.testing.assert_allclose(aot.fft.fft(x), np.fft.fft(x), rtol=1e-4, atol=1e-3 * np.sqrt(n))
    return kb, [statistics.median(t) for t in times]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=SIZES, help="comma-separated DTYPE:N (c128 or c64)")
    a = ap.parse_args(argv)
    os.environ.setdefault("AOT_NUM_THREADS", "1")
    from aot.fft import _exec

    _exec.set_num_threads(1)
    print("| case | MB per array | passes (radix: us) | sum of passes | whole fft | whole / sum |")
    print("|---|---|---|---|---|---|")
    cases = [(name, _DTYPES[name], int(n)) for name, n in (item.split(":") for item in a.sizes.split(","))]
    for name, dtype, n in cases:
        rows, total, whole = passes(n, dtype)
        detail = ", ".join(f"{ip}: {t * 1e6:.1f}" for ip, _, _, t in rows)
        mb = n * np.dtype(dtype).itemsize / (1 << 20)
        print(f"| {name} {n} | {mb:.2f} | {detail} | {total * 1e6:.1f} us | {whole * 1e6:.1f} us | "
              f"{whole / total:.2f} |", flush=True)
    print("\n| case | twiddles of the first passes (KB) | as planned | pass 1's from the input | passes 1-2's "
          "| planned / pass 1's | planned / 1-2's |")
    print("|---|---|---|---|---|---|---|")
    for name, dtype, n in cases:
        kb, t = twiddle_share(n, dtype)
        print(f"| {name} {n} | {' + '.join(f'{v:.0f}' for v in kb)} | {t[0] * 1e6:.1f} us | {t[1] * 1e6:.1f} us | "
              f"{t[2] * 1e6:.1f} us | {t[0] / t[1]:.2f} | {t[0] / t[2]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
