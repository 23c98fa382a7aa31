#!/usr/bin/env python3
"""One transform's radix passes timed alone, against the whole transform, on one thread.

Each pass of the plan runs by itself in batches (the median batch: its source, destination and
twiddles stay in cache), through the kernels' pass entry (codegen/fft/module.py emit_pass_entry); the sum of those
times is what the transform would cost if nothing left the cache between its passes. The whole
transform (aot.fft.fft into a fresh array, as a user calls it) then shows what the passes lose
to each other: one call touches its input, its output, the work buffer and the plan's twiddles
(about as many complex numbers as the transform has), and once those outgrow the cache every
call fetches what the previous one evicted.

Run: PYTHONPATH=. python tools/bench_fft_passes.py [--sizes c128:16384,c128:27648,c64:65536]
"""
from __future__ import annotations

import argparse
import os
import sys

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
    from codegen.fft.plan import HEADER_FIELDS

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
    for f in range(int(plan.header[1])):
        ip, l1, ido = (int(plan.header[2 + HEADER_FIELDS * f + j]) for j in range(3))
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


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=SIZES, help="comma-separated DTYPE:N (c128 or c64)")
    a = ap.parse_args(argv)
    os.environ.setdefault("AOT_NUM_THREADS", "1")
    from aot.fft import _exec

    _exec.set_num_threads(1)
    print("| case | MB per array | passes (radix: us) | sum of passes | whole fft | whole / sum |")
    print("|---|---|---|---|---|---|")
    for item in a.sizes.split(","):
        name, n = item.split(":")
        dtype, n = _DTYPES[name], int(n)
        rows, total, whole = passes(n, dtype)
        detail = ", ".join(f"{ip}: {t * 1e6:.1f}" for ip, _, _, t in rows)
        mb = n * np.dtype(dtype).itemsize / (1 << 20)
        print(f"| {name} {n} | {mb:.2f} | {detail} | {total * 1e6:.1f} us | {whole * 1e6:.1f} us | "
              f"{whole / total:.2f} |", flush=True)


if __name__ == "__main__":
    main()
