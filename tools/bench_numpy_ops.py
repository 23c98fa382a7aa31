#!/usr/bin/env python3
"""The everyday numpy functions compiled: aot vs numpy vs numba (numba.njit of the same numpy
call) for cumsum, sort, argsort, searchsorted, median, histogram, convolve at 1e3..1e7 elements
and np.linalg.solve at 8..512, in one process. A function aot cannot compile yet shows "-" and
the reason.

Run: .venv/bin/python tools/bench_numpy_ops.py [--sizes 1000,100000,10000000] [--quick]
     [--only median,histogram,solve]
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Results, add_json_option, median_time, optional, print_table  # noqa: E402

numba = optional("numba")
RNG = np.random.default_rng(0)


def cumsum(x):
    return np.cumsum(x)


def sort(x):
    return np.sort(x)


def argsort(x):
    return np.argsort(x, kind="stable")


def searchsorted(a, v):
    return np.searchsorted(a, v)


def median(x):
    return np.median(x)


def histogram(x):
    return np.histogram(x, bins=64, range=(-4.0, 4.0))[0]


def convolve(x, k):
    return np.convolve(x, k, mode="same")


def solve(a, b):
    return np.linalg.solve(a, b)


def _inputs(name: str, n: int):
    x = RNG.standard_normal(n)
    if name == "searchsorted":
        return np.sort(RNG.standard_normal(n)), x
    if name == "convolve":
        return x, RNG.standard_normal(31)
    if name == "solve":
        a = RNG.standard_normal((n, n)) + n * np.eye(n)
        return a, RNG.standard_normal(n)
    return (x,)


def _compiled(fn, args):
    """aot.compile(fn) checked against numpy, or (None, why) when it does not compile."""
    import aot

    f = aot.compile(fn, fullgraph=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            got = f(*args)
    except Exception as e:  # noqa: BLE001 - report what stops it
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"
    want = fn(*args)
    if not np.allclose(got, want, rtol=1e-9, atol=1e-9):
        return None, "result differs from numpy"
    return f, ""


def _numba(fn, args):
    if numba is None:
        return None
    try:
        nf = numba.njit(fn)
        nf(*args)
        return nf
    except Exception:  # noqa: BLE001 - numba does not support every call
        return None


def bench(name: str, fn, sizes) -> tuple[list[dict], list[str]]:
    rows, notes = [], []
    for n in sizes:
        args = _inputs(name, n)
        f, why = _compiled(fn, args)
        nf = _numba(fn, args)
        budget = dict(min_time=0.3, min_runs=3)
        rows.append({"case": f"{name} n={n:g}",
                     "aot": median_time(lambda: f(*args), **budget) if f else None,
                     "numpy": median_time(lambda: fn(*args), **budget),
                     "numba": median_time(lambda: nf(*args), **budget) if nf else None})
        if why:
            notes.append(f"{name} n={n:g}: aot does not compile it ({why})")
    return rows, notes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,100000,10000000")
    p.add_argument("--matrices", default="8,64,512")
    p.add_argument("--quick", action="store_true", help="smaller sizes (1e3, 1e5; matrices 8, 64)")
    p.add_argument("--only", default="", help="comma-separated functions to time (default: all)")
    add_json_option(p)
    a = p.parse_args()
    res = Results("numpy_ops")
    sizes = [1000, 100_000] if a.quick else [int(float(s)) for s in a.sizes.split(",")]
    mats = [8, 64] if a.quick else [int(s) for s in a.matrices.split(",")]
    funcs = {"cumsum": cumsum, "sort": sort, "argsort": argsort, "searchsorted": searchsorted,
             "median": median, "histogram": histogram, "convolve": convolve}
    only = set(filter(None, a.only.split(",")))
    unknown = only - set(funcs) - {"solve"}
    if unknown:
        p.error(f"--only: unknown function(s) {sorted(unknown)}; expected some of {[*funcs, 'solve']}")
    all_notes = []
    for name, fn in funcs.items():
        if only and name not in only:
            continue
        rows, notes = bench(name, fn, sizes)
        print_table(f"{name}, float64", rows, results=res)
        all_notes += notes
    if not only or "solve" in only:
        rows, notes = bench("solve", solve, mats)
        print_table("np.linalg.solve, float64 (n x n) @ (n,)", rows, results=res)
        all_notes += notes
    print(f"\nnumba: {'%s' % numba.__version__ if numba else 'not installed'}; numpy {np.__version__}; "
          f"threads: aot {os.cpu_count()} cores")
    for note in all_notes:
        print("note:", note)
    if a.json:
        res.notes["notes"] = all_notes
        res.write(a.json)


if __name__ == "__main__":
    main()
