#!/usr/bin/env python3
"""FFT benchmark: aot.fft vs numpy.fft, scipy.fft (workers 1, 2) and pyfftw (FFTW_MEASURE, threads 1, 2).

Run: .venv/bin/python tools/bench_fft.py [--quick] [--no-pyfftw] [--overhead | --odd] [--json PATH]
All contestants run in this process on the same data, in alternating rounds (a shared machine's
drift slows them alike); times are medians. GFLOP/s uses the
conventional 5 n log2 n flops per complex transform of length n (2.5 n log2 n for real ones),
summed over the batch. pyfftw's planning time (FFTW_MEASURE) is reported separately and not
included in its execution time; pyfftw is skipped when it is not installed. pyfftw's builders write
the same output array every call, so the complex cases of the two-thread table are timed again with
aot writing a preallocated output (`out=`; a fresh result of 32 MB costs ~2.7 ms of page faults):
one cache-line aligned like the builders' (the baseline) and one from np.empty_like, which starts
16 bytes into a line (aot's threads then share a line at every boundary of their parts). The
inputs are cache-line aligned too, as the arrays the builders read are.
--odd prints only the tables of odd and prime lengths: one thread (direct transforms of 3s and 5s,
Bluestein's for primes and lengths with a large prime factor), and batches on two threads.
--overhead prints only the per-call overhead of small eager calls: the call's time against the
kernel-only time (the same native calls with the arguments prepared and the output allocated
once, less cffi's cost of a call), measured in alternating batches (medians), with numpy's time
for the same call; and small calls whose kernels need a copy of the input first (odd real lengths,
padding, other axes, hfft: composed entries) or that give n-D transforms `s` and `axes`, against numpy
and aot's general path (_api, what such a call ran before it had an entry)
against numpy.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (
    Results,
    add_json_option,
    aligned_empty,
    fmt_time,
    interleaved_medians,
    optional,
    print_table,
)

scipy_fft = optional("scipy.fft")
pyfftw = optional("pyfftw")

C2C_SIZES = [1024, 4096, 65536, 1 << 20, 1000, 1536, 10007, 27648]
LONG_SIZES = [65536, 1 << 20]  # the single transforms of the 2-thread table (their passes are shared)
# (case label, shape, aot/numpy function name, axes or None, pyfftw builder name, real input, flop factor)
MULTI = [
    ("batched fft (1024,1024) axis -1", (1024, 1024), "fft", None, "fft", False, 5.0),
    ("fft2 (1024,1024)", (1024, 1024), "fft2", None, "fft2", False, 5.0),
    ("rfft 2^20", (1 << 20,), "rfft", None, "rfft", True, 2.5),
    ("irfft 2^20", (1 << 19) + 1, "irfft", None, "irfft", False, 2.5),
    ("fftn (128,128,128)", (128, 128, 128), "fftn", None, "fftn", False, 5.0),
]


# direct transforms of 3s and 5s (2025, 2187, 3375) and of 7 * 11 * 13 (1001), Bluestein's (primes
# 1009, 7919, 65537; 40008 = 8*3*1667; a batch of 1009s)
ODD_SHAPES = [(2025,), (2187,), (3375,), (1001,), (1009,), (7919,), (65537,), (40008,), (64, 1009)]
ODD_BATCHES = [(64, 1009), (1024, 1009), (256, 4001)]


def _data(shape, dtype, real=False):
    """Random input, cache-line aligned (benchlib.aligned_empty)."""
    rng = np.random.default_rng(0)
    shape = shape if isinstance(shape, tuple) else (shape,)
    x = rng.standard_normal(shape)
    if not real:
        x = x + 1j * rng.standard_normal(shape)
    out = aligned_empty(shape, dtype)
    out[...] = x
    return out


def _flops(name, x, factor):
    n_total = x.size if name != "irfft" else 2 * (x.shape[-1] - 1)
    if name in ("fft", "rfft", "irfft"):
        n = x.shape[-1] if name != "irfft" else n_total
        return factor * n * math.log2(n) * (x.size // x.shape[-1])
    return factor * n_total * math.log2(n_total)


def _pyfftw_builder(name, x, threads):
    arr = pyfftw.empty_aligned(x.shape, dtype=x.dtype)
    t0 = time.perf_counter()
    f = getattr(pyfftw.builders, name)(arr, planner_effort="FFTW_MEASURE", threads=threads)
    plan_time = time.perf_counter() - t0
    arr[...] = x  # MEASURE planning overwrites the input
    return f, plan_time


def _set_threads(n):
    from aot.fft import _exec

    _exec.set_num_threads(n)


_OUT_KINDS = ("fft", "fft2", "fftn")  # transforms that write `out=` directly (complex to complex)


def _row(label, name, x, factor, aot_threads, min_time, plans, builders=None):
    """One case's times, every contestant timed in alternating rounds (benchlib's
    interleaved_medians); `builders`, when given, keeps the pyfftw builders by thread count."""
    import aot.fft as afft

    _set_threads(aot_threads)
    fa, fn = getattr(afft, name), getattr(np.fft, name)
    fns = {"aot": lambda: fa(x), "numpy": lambda: fn(x)}
    if scipy_fft is not None:
        for w in (1, 2):
            fns[f"scipy w={w}"] = lambda w=w: getattr(scipy_fft, name)(x, workers=w)
    if pyfftw is not None:
        for t in (1, 2):
            f, plan_time = _pyfftw_builder(name, x, t)
            plans.append((f"{label} [{x.dtype}] t={t}", plan_time))
            fns[f"pyfftw t={t}"] = f
            if builders is not None:
                builders[t] = f
    row = {"case": label, **interleaved_medians(fns, min_time=min_time * len(fns))}
    gflops = _flops(name, x, factor) / row["aot"] / 1e9
    row["case"] = f"{label} [{x.dtype}] ({gflops:.1f} GF/s)"
    return row


def _reuse_row(case, name, x, builders, min_time) -> dict:
    """aot writing a preallocated `out` (no page faults of a fresh result: what pyfftw's builders
    time), next to the same builders' times, in alternating rounds."""
    import aot.fft as afft

    fa = getattr(afft, name)
    y = fa(x)
    out, unaligned = aligned_empty(y.shape, y.dtype), np.empty_like(y)
    fns = {"aot out=": lambda: fa(x, out=out), "aot out=np.empty_like": lambda: fa(x, out=unaligned),
           **{f"pyfftw t={t}": f for t, f in builders.items()}}
    return {"case": case, **interleaved_medians(fns, min_time=min_time * len(fns))}


def _check(name, x, **kw):
    import aot.fft as afft

    got, want = getattr(afft, name)(x, **kw), getattr(np.fft, name)(x, **kw)
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-300)
    assert err < (1e-4 if x.dtype in (np.complex64, np.float32) else 1e-10), (name, x.shape, err)


def first_call_costs() -> list[tuple[str, float]]:
    """Import (numpy's too) + first transform in a fresh process: an empty disk cache with the
    kernels compiled (AOT_PREBUILT=0), then loaded from `aot prebuild`'s, then warm."""
    code = ("import time; t=time.perf_counter(); import numpy as np, aot.fft as f; "
            "f.fft(np.ones(8, complex)); print(time.perf_counter()-t)")
    out = []
    with tempfile.TemporaryDirectory() as d:
        for label, cache, extra in (("empty cache, f64 kernels compiled", "built", {"AOT_PREBUILT": "0"}),
                                    ("empty cache, prebuilt kernels", "cache", {}),
                                    ("warm (disk cache)", "cache", {})):
            env = dict(os.environ, AOT_CACHE_DIR=os.path.join(d, cache), **extra)
            r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
            if r.returncode != 0:  # reported, not raised: the tables above are already measured
                print(f"- import aot.fft + first fft, {label}: the child failed (exit {r.returncode}):\n"
                      + textwrap.indent(r.stderr.strip()[-3000:], "    "), flush=True)
                continue
            out.append((f"import aot.fft + first fft, {label}", float(r.stdout.strip())))
    return out


def plan_costs(sizes=(1000, 4096, 27648, 65536, 10007, 1 << 20)) -> list[tuple[str, float]]:
    from aot.fft import _exec

    out = []
    for n in sizes:
        _exec.PLANS.clear()
        t0 = time.perf_counter()
        _exec.get_plan(n, np.dtype(np.complex128))
        out.append((f"plan n={n}", time.perf_counter() - t0))
    return out


# (label, function, shape, dtype): small calls, where the Python side of a call could dominate
OVERHEAD_CASES = [
    ("fft n=1024", "fft", (1024,), np.complex128),
    ("fft n=1024", "fft", (1024,), np.complex64),
    ("ifft n=1024", "ifft", (1024,), np.complex128),
    ("rfft n=1024", "rfft", (1024,), np.float64),
    ("irfft n=1024", "irfft", (513,), np.complex128),
    ("fft n=64", "fft", (64,), np.complex128),
    ("fft n=1024 norm='ortho'", "fft", (1024,), np.complex128, {"norm": "ortho"}),
    ("fft (64,64) axis=0", "fft", (64, 64), np.complex128, {"axis": 0}),
    ("fft (16,1024) axis -1", "fft", (16, 1024), np.complex128),
    ("fft2 (64,64)", "fft2", (64, 64), np.complex128),
    ("rfft2 (64,64)", "rfft2", (64, 64), np.float64),
    ("irfft2 (64,33)", "irfft2", (64, 33), np.complex128),
    ("fftn (8,16,16)", "fftn", (8, 16, 16), np.complex128),
]


def _interleaved(fns, inner: int, rounds: int) -> list[list[float]]:
    """Seconds per call of each fn in each round, timed in alternating batches of `inner` calls
    (a shared, noisy machine then slows neighbouring batches alike)."""
    per: list[list[float]] = [[] for _ in fns]
    for fn in fns:
        fn()
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter_ns()
            for _ in range(inner):
                fn()
            per[i].append((time.perf_counter_ns() - t0) / inner / 1e9)
    return per


def _empty_thunk_call():
    """A call through cffi of the thunks' type that does no work (libc's memset of 0 bytes: its
    integer arguments travel in the same registers), to take cffi's own cost out of kernel only."""
    import ctypes

    from aot.fft._native import _THUNK_SIG, ffi

    fn = ffi.cast(_THUNK_SIG, ctypes.cast(ctypes.CDLL(None).memset, ctypes.c_void_p).value)
    blk = np.zeros(1, np.int64)
    ptr = ffi.cast("int64_t *", blk.ctypes.data)

    def call(_alive=blk):
        fn(ptr, 0, 0)

    return call


def overhead_rows(quick: bool = False) -> list[dict]:
    """Per case: median call and numpy times, the kernel-only time (the prepared native calls
    through cffi into an output allocated once, minus as many cffi calls that do nothing), and the
    overhead as the median of the per-round differences call - kernel only (paired, so load changes
    between rounds cancel)."""
    import aot.fft as afft
    from aot.fft import _fast

    _set_threads(1)
    rows = []
    empty = _empty_thunk_call()
    for label, name, shape, dtype, *kw in OVERHEAD_CASES:
        kw = kw[0] if kw else {}
        x = _data(shape, dtype, real=np.dtype(dtype).kind == "f")
        _check(name, x, **kw)
        fa, fn = getattr(afft, name), getattr(np.fft, name)
        fns = [lambda fa=fa, x=x, kw=kw: fa(x, **kw), _fast.kernel_only(name, x, **kw), empty,
               lambda fn=fn, x=x, kw=kw: fn(x, **kw)]
        calls, cffi_calls, empties, nps = _interleaved(fns, 200 if quick else 1000, 9 if quick else 31)
        n_calls = 1 + len(_fast.entry(name, x, **kw)[5])  # the entry's thunk calls
        kerns = [k - n_calls * e for k, e in zip(cffi_calls, empties)]
        rows.append({"case": f"{label} [{np.dtype(dtype).name}]", "call": statistics.median(calls),
                     "kernel only": statistics.median(kerns),
                     "overhead": statistics.median(c - k for c, k in zip(calls, kerns)),
                     "numpy": statistics.median(nps)})
    return rows


# calls that run composed entries (aot/fft/_composed.py) or n-D entries keyed by s and axes after
# their first: kwargs per case
GENERAL_CASES = [
    ("rfft odd n=1001", "rfft", (1001,), np.float64, {}),
    ("rfft n=1001 padded to 2048", "rfft", (1001,), np.float64, {"n": 2048}),
    ("rfft (64,32) axis 0", "rfft", (64, 32), np.float64, {"axis": 0}),
    ("irfft odd n=1001", "irfft", (501,), np.complex128, {"n": 1001}),
    ("hfft n=1024", "hfft", (1024,), np.complex128, {}),
    ("ihfft n=1001", "ihfft", (1001,), np.float64, {}),
    ("fftn (8,32,32) axes=(1,2)", "fftn", (8, 32, 32), np.complex128, {"axes": (1, 2)}),
    ("irfft2 (128,65) s=(128,128)", "irfft2", (128, 65), np.complex128, {"s": (128, 128)}),
    ("fft2 (64,64) padded to s=(128,128)", "fft2", (64, 64), np.complex128, {"s": (128, 128)}),
    ("rfft2 (64,64) padded to s=(128,128)", "rfft2", (64, 64), np.float64, {"s": (128, 128)}),
]


def general_rows(quick: bool = False) -> list[dict]:
    """Median times of small calls that run composed entries, aot against numpy and aot's general
    path (alternating batches)."""
    import aot.fft as afft
    from aot.fft import _api

    _set_threads(1)
    rows = []
    for label, name, shape, dtype, kw in GENERAL_CASES:
        x = _data(shape, dtype, real=np.dtype(dtype).kind == "f")
        fa, fn, fg = getattr(afft, name), getattr(np.fft, name), getattr(_api, name)
        np.testing.assert_allclose(fa(x, **kw), fn(x, **kw), rtol=1e-9, atol=1e-9)
        fns = [lambda f=f, x=x, kw=kw: f(x, **kw) for f in (fa, fn, fg)]
        aots, nps, gens = _interleaved(fns, 100 if quick else 500, 9 if quick else 21)
        rows.append({"case": f"{label} [{np.dtype(dtype).name}]", "aot": statistics.median(aots),
                     "numpy": statistics.median(nps), "aot general path": statistics.median(gens)})
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter timing runs")
    ap.add_argument("--no-pyfftw", action="store_true", help="skip pyfftw even when installed")
    ap.add_argument("--overhead", action="store_true", help="only the per-call overhead of small calls")
    ap.add_argument("--odd", action="store_true", help="only odd and prime lengths (one thread)")
    add_json_option(ap)
    args = ap.parse_args(argv)
    res = Results("fft_overhead" if args.overhead else "fft_odd" if args.odd else "fft")
    if args.overhead:
        print_table("per-call overhead of eager calls, one thread (overhead = call - kernel only)",
                    overhead_rows(args.quick), baseline="call", results=res, notes={"aot threads": 1})
        print_table("small calls that copy their input first or give s and axes, one thread", general_rows(args.quick), results=res,
                    notes={"aot threads": 1})
        _write(res, args.json)
        return
    global pyfftw
    if args.no_pyfftw:
        pyfftw = None
    min_time = 0.05 if args.quick else 0.2
    plans: list[tuple[str, float]] = []
    if args.odd:
        rows = []
        for shape in ODD_SHAPES:
            x = _data(shape, np.complex128)
            _check("fft", x)
            rows.append(_row(f"fft {shape}", "fft", x, 5.0, 1, min_time, plans))
        print_table("odd and prime lengths, complex128, one thread (aot 1, numpy 1, scipy and pyfftw as named)",
                    rows, results=res, notes={"aot threads": 1})
        rows = [_row(f"fft {shape}", "fft", _data(shape, np.complex128), 5.0, 2, min_time, plans)
                for shape in ODD_BATCHES]
        print_table("batches of prime lengths on two threads (aot 2, numpy 1, scipy and pyfftw as named)", rows,
                    results=res, notes={"aot threads": 2})
        _write(res, args.json)
        return
    for dtype in (np.complex128, np.complex64):
        rows = []
        for n in C2C_SIZES:
            x = _data(n, dtype)
            _check("fft", x)
            rows.append(_row(f"fft n={n}", "fft", x, 5.0, 1, min_time, plans))
        print_table(f"1-D c2c, {np.dtype(dtype).name}, one thread", rows, results=res, notes={"aot threads": 1})
    rows, reuse = [], []
    cases = [(f"fft n={n}", "fft", _data(n, dtype), 5.0) for dtype in (np.complex128, np.complex64) for n in LONG_SIZES]
    cases += [(label, name, _data(shape, np.float64 if real else np.complex128, real), factor)
              for label, shape, name, _, _, real, factor in MULTI]
    for label, name, x, factor in cases:
        _check(name, x)
        builders: dict = {}
        rows.append(_row(label, name, x, factor, 2, min_time, plans, builders))
        if name in _OUT_KINDS:
            reuse.append(_reuse_row(rows[-1]["case"], name, x, builders, min_time))
    print_table("long 1-D, batched, 2-D, 3-D and real transforms on two threads: aot 2, numpy 1, scipy and "
                "pyfftw as named", rows, results=res, notes={"aot threads": 2})
    print_table("the complex ones writing a preallocated output: aot with out= (2 threads) against pyfftw's "
                "builders (which return the same output array every call)", reuse, baseline="aot out=",
                results=res, notes={"aot threads": 2})
    print("\n## costs outside the timed loops")
    costs = first_call_costs() + plan_costs() + [(f"pyfftw FFTW_MEASURE planning, {lb}", t) for lb, t in plans]
    for label, t in costs:
        print(f"- {label}: {fmt_time(t)}")
    res.notes["costs outside the timed loops (seconds)"] = dict(costs)
    res.threads["aot"] = "1 (1-D c2c tables), 2 (two-thread table)"
    res.threads["numpy"] = "1"
    if scipy_fft is not None:
        res.threads["scipy"] = "workers in the column name"
    if pyfftw is not None:
        res.threads["pyfftw"] = "threads in the column name"
    _write(res, args.json)


def _write(res: Results, path: str | None) -> None:
    if path:
        res.write(path)


if __name__ == "__main__":
    main()
