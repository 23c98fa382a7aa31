#!/usr/bin/env python3
"""Reductions: sum(x*x + y) f64 N=1e7 and row softmax f32 (4096, 1024); aot vs numpy, numexpr,
numba, torch.compile / torch.softmax.

Run: .venv/bin/python tools/bench_reduction.py [--json PATH]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Results, add_json_option, median_time, optional, print_table  # noqa: E402

torch = optional("torch")
numexpr = optional("numexpr")
numba = optional("numba")


def sumsq_np(x, y):
    return np.sum(x * x + y)


def softmax_np(x):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def _sumsq_loop(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i] + y[i]
    return s


def _sumsq_ploop(x, y):
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += x[i] * x[i] + y[i]
    return s


def bench_sum(n=10_000_000):
    import aot

    rng = np.random.default_rng(0)
    x, y = rng.random(n), rng.random(n)
    ref = sumsq_np(x, y)
    cs = {"aot": aot.compile(sumsq_np), "numpy": sumsq_np}
    if numexpr is not None:
        cs["numexpr"] = lambda x, y: numexpr.evaluate("sum(x*x + y)")
    if numba is not None:
        cs["numba"] = numba.njit(_sumsq_loop)
        cs["numba_par"] = numba.njit(parallel=True)(_sumsq_ploop)
    row = {"case": f"sum(x*x+y) f64 N={n:.0e}"}
    for name, fn in cs.items():
        np.testing.assert_allclose(fn(x, y), ref, rtol=1e-9, err_msg=name)
        row[name] = median_time(lambda: fn(x, y))
    if torch is not None:
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        tf = torch.compile(lambda a, b: torch.sum(a * a + b))
        np.testing.assert_allclose(float(tf(tx, ty)), ref, rtol=1e-9)
        row["torch.compile"] = median_time(lambda: tf(tx, ty))
    return row


def bench_softmax(shape=(4096, 1024)):
    import aot

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ref = softmax_np(x)
    cs = {"aot": aot.compile(softmax_np), "numpy": softmax_np}
    row = {"case": f"row softmax f32 {shape}"}
    for name, fn in cs.items():
        np.testing.assert_allclose(fn(x), ref, rtol=1e-5, atol=1e-7, err_msg=name)
        row[name] = median_time(lambda: fn(x))
    if torch is not None:
        tx = torch.from_numpy(x)
        row["torch.softmax"] = median_time(lambda: torch.softmax(tx, dim=1))
        tf = torch.compile(lambda a: torch.softmax(a, dim=1))
        np.testing.assert_allclose(tf(tx).numpy(), ref, rtol=1e-5, atol=1e-7)
        row["torch.compile"] = median_time(lambda: tf(tx))
    return row


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_json_option(p)
    a = p.parse_args()
    res = Results("reduction")
    print_table("sum reduction", [bench_sum()], results=res)
    print_table("row softmax", [bench_softmax()], results=res)
    if a.json:
        res.write(a.json)
