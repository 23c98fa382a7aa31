#!/usr/bin/env python3
"""In-place updates compiled: aot vs numpy vs numba (numba.njit of the same function) for
np.add.at (a histogram by scatter-add), a masked assignment (x[x < 0] = 0 on a copy), a
stencil written as slice updates, and x[idx] = v with an index array, in one process.

Run: .venv/bin/python tools/bench_updates.py [--sizes 1000,100000,10000000]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Results, add_json_option, median_time, optional, print_table  # noqa: E402

numba = optional("numba")
RNG = np.random.default_rng(0)


def add_at(idx, w):
    out = np.zeros(1024)
    np.add.at(out, idx, w)
    return out


def clip_negative(x):
    y = x.copy()
    y[y < 0] = 0.0
    return y


def stencil(u):
    v = u.copy()
    v[1:-1] += 0.25 * (u[2:] - 2 * u[1:-1] + u[:-2])
    v[0] = v[-1] = 0.0
    return v


def set_indexed(x, idx):
    y = x.copy()
    y[idx] = -1.0
    return y


def _inputs(name: str, n: int):
    if name == "add_at":
        return RNG.integers(0, 1024, n), RNG.standard_normal(n)
    x = RNG.standard_normal(n)
    if name == "set_indexed":
        return x, RNG.integers(0, n, n // 10)
    return (x,)


def _compiled(fn, args):
    import aot

    f = aot.compile(fn, fullgraph=True)
    got, want = f(*args), fn(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    return f


def _numba(fn, args):
    if numba is None:
        return None
    try:
        nf = numba.njit(fn)
        np.testing.assert_allclose(nf(*args), fn(*args), rtol=1e-12, atol=1e-12)
        return nf
    except Exception:  # noqa: BLE001 - numba does not support every call (np.add.at)
        return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,100000,10000000")
    add_json_option(p)
    a = p.parse_args()
    res = Results("updates")
    sizes = [int(float(s)) for s in a.sizes.split(",")]
    funcs = {"add_at": add_at, "clip_negative": clip_negative, "stencil": stencil, "set_indexed": set_indexed}
    for name, fn in funcs.items():
        rows = []
        for n in sizes:
            args = _inputs(name, n)
            f, nf = _compiled(fn, args), _numba(fn, args)
            budget = dict(min_time=0.3, min_runs=3)
            rows.append({"case": f"{name} n={n:g}", "aot": median_time(lambda: f(*args), **budget),
                         "numpy": median_time(lambda: fn(*args), **budget),
                         "numba": median_time(lambda: nf(*args), **budget) if nf else None})
        print_table(f"{name}, float64", rows, results=res)
    print(f"\nnumba: {numba.__version__ if numba else 'not installed'}; numpy {np.__version__}; "
          f"{os.cpu_count()} CPUs")
    if a.json:
        res.write(a.json)


if __name__ == "__main__":
    main()
