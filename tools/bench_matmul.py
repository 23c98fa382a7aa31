#!/usr/bin/env python3
"""Matmul: aot's blocked kernel vs numpy's BLAS (OpenBLAS), numba and torch, f32/f64.

Run: .venv/bin/python tools/bench_matmul.py [--sizes 64,256,512] [--threads 1]
`--threads 1` compares single-threaded (aot num_threads=1, OPENBLAS/OMP threads 1, torch 1 thread);
set it before numpy is imported, so this script re-executes itself with the environment set.
Also times `x @ W.T` (an aot.nn.Linear's product: B is transposed, packed by gathering).
"""
from __future__ import annotations

import argparse
import functools
import os
import sys

if __name__ == "__main__" and "--threads" in sys.argv and os.environ.get("_AOT_BENCH_THREADS") is None:
    n = sys.argv[sys.argv.index("--threads") + 1]
    env = dict(os.environ, _AOT_BENCH_THREADS=n, OPENBLAS_NUM_THREADS=n, OMP_NUM_THREADS=n, MKL_NUM_THREADS=n)
    os.execve(sys.executable, [sys.executable, *sys.argv], env)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Results, add_json_option, median_time, optional, print_table  # noqa: E402

torch = optional("torch")  # before numba
numba = optional("numba")


def mm(a, b):
    return a @ b


def linear(x, w):
    return x @ w.T


def run(sizes, threads, results=None):
    import aot

    opts = {"num_threads": threads} if threads else {}
    if torch is not None and threads:
        torch.set_num_threads(threads)
    rows = []
    for dt in (np.float32, np.float64):
        for n in sizes:
            rng = np.random.default_rng(0)
            a = rng.standard_normal((n, n)).astype(dt)
            b = rng.standard_normal((n, n)).astype(dt)
            tol = 1e-3 if dt == np.float32 else 1e-9
            for label, fn in (("a@b", mm), ("x@W.T", linear)):
                ref = fn(a, b)
                f = aot.compile(fn, options=opts)
                np.testing.assert_allclose(f(a, b), ref, rtol=tol, atol=tol * n)
                row = {"case": f"{label} {np.dtype(dt).name} {n}x{n}",
                       "aot": median_time(functools.partial(f, a, b)),
                       "numpy": median_time(functools.partial(fn, a, b))}
                if numba is not None and label == "a@b":
                    nf = numba.njit(mm)
                    row["numba"] = median_time(functools.partial(nf, a, b))
                if torch is not None:
                    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
                    tf = torch.matmul if label == "a@b" else torch.nn.functional.linear
                    row["torch"] = median_time(functools.partial(tf, ta, tb))
                rows.append(row)
    print_table(f"matmul (threads: {threads or 'default'})", rows, results=results)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sizes", default="64,256,512")
    p.add_argument("--threads", type=int, default=0)
    add_json_option(p)
    a = p.parse_args()
    res = Results("matmul")
    run([int(s) for s in a.sizes.split(",")], a.threads, res)
    if a.json:
        if a.threads:
            res.threads["aot"] = a.threads
        res.write(a.json)
