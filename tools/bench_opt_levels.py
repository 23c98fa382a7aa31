#!/usr/bin/env python3
"""LLVM optimisation level vs compile time and run time, on the benchmarks' kernels.

For each case and each level (options={"opt_level": n}), in one process: the first call of a
fresh aot.compile with the disk cache off (trace + lower + LLVM + load), and the median warm call.
Ratios are against O3 (the run-time column: > 1 means slower than O3). One untimed compile runs
first so that Python's own first-use costs fall on no level.

Run: PYTHONPATH=. .venv/bin/python tools/bench_opt_levels.py [--levels 1,2,3] [--cases ...]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_numpy_ops import convolve, histogram, median, solve  # the same cases as there
from benchlib import fmt_time, median_time  # noqa: E402


def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


def sumsq(x, y):
    return np.sum((x - y) ** 2)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def matmul(a, b):
    return np.tanh(a @ b)


def normalise(x):
    m = x.mean(axis=0)
    s = x.std(axis=0)
    return (x - m) / (s + 1e-6)


def cumulative(x):
    return np.cumsum(np.abs(x)) / (1 + np.arange(x.size))


def sorting(x):
    return np.sort(x)[::7]


def layer_norm(x):
    m = x.mean(axis=1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5)


def argmax_rows(x):
    return np.argmax(x, axis=1)


def spectrum(x):
    return np.abs(np.fft.rfft(x * np.hanning(x.shape[-1]))) ** 2


def gather_where(x, idx):
    return np.where(x[idx] > 0, x[idx], 0.1 * x[idx]).cumsum()


def pad_concat(x):
    return np.concatenate([np.pad(x, 3), x[::-1]]) * 2


def inverse(a):
    return np.linalg.inv(a)


def svd(a):
    return np.linalg.svd(a, compute_uv=False)


def eigh(a):
    return np.linalg.eigh(a)[0]



def _per_sample_grads():
    import bench_func

    from aot import func

    loss = bench_func.mlp_loss(np)
    params, x, y = bench_func.mlp_data()
    return func.vmap(func.grad(loss), in_dims=(None, 0, 0)), (params, x, y)


def cases() -> dict:
    rng = np.random.default_rng(0)
    x6, y6 = rng.random(1_000_000), rng.random(1_000_000) + 1
    return {
        "chain f64 1e6": (chain, (x6, y6)),
        "chain f32 1e6": (chain, (x6.astype(np.float32), y6.astype(np.float32))),
        "sum of squares 1e6": (sumsq, (x6, y6)),
        "row softmax 1024x1024": (softmax, (rng.standard_normal((1024, 1024)),)),
        "tanh(a @ b) 256": (matmul, (rng.standard_normal((256, 256)), rng.standard_normal((256, 256)))),
        "column normalise 4096x256": (normalise, (rng.standard_normal((4096, 256)),)),
        "cumsum 1e6": (cumulative, (x6,)),
        "sort 1e5": (sorting, (x6[:100_000].copy(),)),
        "layer norm 4096x256": (layer_norm, (rng.standard_normal((4096, 256)),)),
        "argmax rows 2048x512": (argmax_rows, (rng.standard_normal((2048, 512)),)),
        "windowed rfft 256x1024": (spectrum, (rng.standard_normal((256, 1024)),)),
        "gather, where, cumsum 1e6": (gather_where, (x6 - 0.5, rng.integers(0, 10**6, 10**6))),
        "pad, concatenate 1e6": (pad_concat, (x6,)),
        "median 1e6": (median, (x6,)),
        "histogram 1e6": (histogram, (rng.standard_normal(10**6),)),
        "convolve 1e5 x 31": (convolve, (x6[:100_000].copy(), rng.standard_normal(31))),
        "solve 256": (solve, (rng.standard_normal((256, 256)) + 256 * np.eye(256), rng.standard_normal(256))),
        "inv 128": (inverse, (rng.standard_normal((128, 128)) + 128 * np.eye(128),)),
        "svd 64": (svd, (rng.standard_normal((64, 64)),)),
        "eigh 64": (eigh, ((lambda a: a + a.T)(rng.standard_normal((64, 64))),)),
        "per-sample grads MLP b=256 f32": _per_sample_grads,
    }


def measure(fn, args, level: int) -> tuple[float, float]:
    import aot

    f = aot.compile(fn, options={"disk_cache": False, "opt_level": level})
    t0 = time.perf_counter()
    want = f(*args)
    first = time.perf_counter() - t0
    got = fn(*args)
    for w, g in zip(np.atleast_1d(want) if not isinstance(want, tuple) else want,
                    np.atleast_1d(got) if not isinstance(got, tuple) else got):
        assert np.allclose(w, g, rtol=1e-4, atol=1e-5), f"O{level} result differs from numpy"
    return first, median_time(lambda: f(*args))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--levels", default="1,2,3")
    p.add_argument("--cases", default="", help="comma-separated substrings of case names")
    a = p.parse_args()
    levels = [int(v) for v in a.levels.split(",")]
    import aot

    aot.compile(lambda x: np.cos(x) + 1, options={"disk_cache": False})(np.ones(8))  # untimed warm-up
    chosen = {k: v for k, v in cases().items() if not a.cases or any(s in k for s in a.cases.split(","))}
    head = " | ".join([f"first call O{n}" for n in levels] + [f"run O{n}" for n in levels])
    print(f"| case | {head} | run O{levels[0]}/O3 | first O{levels[0]}/O3 |")
    print("|---" * (2 * len(levels) + 3) + "|")
    for name, case in chosen.items():
        fn, args = case() if callable(case) else case
        rows = {n: measure(fn, args, n) for n in levels}
        ref = rows.get(3, rows[levels[-1]])
        low = rows[levels[0]]
        cells = [fmt_time(rows[n][0]) for n in levels] + [fmt_time(rows[n][1]) for n in levels]
        print(f"| {name} | {' | '.join(cells)} | {low[1] / ref[1]:.2f} | {low[0] / ref[0]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
