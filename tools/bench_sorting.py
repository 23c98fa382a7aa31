#!/usr/bin/env python3
"""Sorting and searching: np.sort, np.argsort (numpy's default kind and its stable one),
np.searchsorted and np.median of float64 at 1e3, 1e5 and 1e7 elements, aot vs numpy; also sorts
of many short rows. aot runs one thread (the row kernel) and all threads (AOT_NUM_THREADS or the
machine's cores: long rows then take the parallel radix sort).

Run: .venv/bin/python tools/bench_sorting.py [--sizes 1000,100000,10000000]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aot  # noqa: E402, I001
from benchlib import Results, add_json_option, median_time, print_table, threads  # noqa: E402

CASES = {
    "sort": (lambda x, v: np.sort(x), lambda x, v: np.sort(x)),
    "sort (numpy stable)": (lambda x, v: np.sort(x), lambda x, v: np.sort(x, kind="stable")),
    "argsort": (lambda x, v: np.argsort(x), lambda x, v: np.argsort(x)),
    "argsort (numpy stable)": (lambda x, v: np.argsort(x), lambda x, v: np.argsort(x, kind="stable")),
    "searchsorted": (lambda x, v: np.searchsorted(x, v), lambda x, v: np.searchsorted(x, v)),
    "median": (lambda x, v: np.median(x), lambda x, v: np.median(x)),
}


def _compiled(fn, nt: int):
    return aot.compile(fn, options={"num_threads": nt})


def run(sizes: list[int], results: Results | None = None) -> None:
    rng = np.random.default_rng(0)
    nt = threads()
    rows = []
    for n in sizes:
        x = rng.random(n)
        v = rng.random(n)
        xs = np.sort(x)
        min_time = 0.5 if n >= 1_000_000 else 0.2
        for case, (ours, theirs) in CASES.items():
            arg = xs if case == "searchsorted" else x
            one, many = _compiled(ours, 1), _compiled(ours, nt)
            row = {"case": f"{case} n={n:.0e}"}
            for name, fn in (("aot", many), ("aot 1 thread", one), ("numpy", theirs)):
                row[name] = median_time(lambda f=fn, a=arg, b=v: f(a, b), min_time=min_time, min_runs=3)
            rows.append(row)
    print_table(f"float64, 1-D ({nt} threads)", rows, results=results)
    short = []
    for shape in [(100_000, 8), (30_000, 32), (10_000, 100), (1_000, 1_000)]:
        x = rng.random(shape)
        for case, fn in (("sort rows", lambda a: np.sort(a, axis=1)),
                         ("argsort rows", lambda a: np.argsort(a, axis=1)),
                         ("median rows", lambda a: np.median(a, axis=1))):
            ours = aot.compile(fn)
            short.append({"case": f"{case} {shape}", "aot": median_time(lambda f=ours, a=x: f(a)),
                          "numpy": median_time(lambda f=fn, a=x: f(a))})
    print_table(f"float64, many rows ({nt} threads)", short, results=results)
    if results is not None:
        results.threads.update({"aot": nt, "aot 1 thread": 1})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sizes", default="1000,100000,10000000")
    add_json_option(p)
    a = p.parse_args()
    res = Results("sorting")
    run([int(s) for s in a.sizes.split(",")], res)
    if a.json:
        res.write(a.json)


if __name__ == "__main__":
    main()
