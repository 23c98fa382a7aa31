#!/usr/bin/env python3
"""FFT fusion benchmark: compiled functions whose elementwise producer/consumer run in the FFT's
first/last pass (kernel.fft), against numpy and against the same compiled function built without
the `fuse_fft` pass (the producer and consumer then run as their own kernels, through an array).

Run: .venv/bin/python tools/bench_fft_fused.py [--quick] [--threads N]
Times are medians of interleaved rounds (fused, unfused, numpy one after another in rotating
order, so a shared machine slows them alike); ratios are contestant / fused (> 1: fusion is faster). Every compiled
result is checked against numpy first.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import Results, add_json_option, print_table

import aot
from aot.compiler import llvm_backend


def _data(shape, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _window(n, dtype=np.float64):
    return np.hanning(n + 2)[1:-1].astype(dtype)


def cases(quick: bool) -> list[tuple[str, object, np.ndarray]]:
    rows, n = (16, 4096) if quick else (64, 16384)
    x = _data((rows, n), np.float64)
    xs = x.astype(np.float32)
    xc = _data((rows, n), np.complex128)
    w, ws = _window(n), _window(n, np.float32)
    h = np.exp(-np.arange(n // 2 + 1) / 50.0)
    m = 256 if quick else 1024
    img = _data((m, m), np.complex128)
    w2 = np.outer(_window(m), _window(m))
    tall = _data((n, rows), np.complex128)
    cube = _data((32, 64, 64) if quick else (128, 64, 128), np.float64)
    wc = _window(cube.shape[0])[:, None, None]
    return [
        (f"rfft(x*w) {x.shape}", lambda a: np.fft.rfft(a * w), x),
        (f"abs(rfft(x))**2 {x.shape}", lambda a: np.abs(np.fft.rfft(a)) ** 2, x),
        (f"abs(rfft(x*w))**2 {x.shape}", lambda a: np.abs(np.fft.rfft(a * w)) ** 2, x),
        (f"abs(rfft(x*w))**2 {xs.shape} f32", lambda a: np.abs(np.fft.rfft(a * ws)) ** 2, xs),
        (f"irfft(rfft(x)*H) {x.shape}", lambda a: np.fft.irfft(np.fft.rfft(a) * h, n=n), x),
        (f"abs(fft(x*w))**2 {xc.shape} c128", lambda a: np.abs(np.fft.fft(a * w)) ** 2, xc),
        (f"abs(fft(x))**2 {x.shape} f64", lambda a: np.abs(np.fft.fft(a)) ** 2, x),
        (f"fft(x*w[:,None], axis=0) {tall.shape}", lambda a: np.fft.fft(a * w[:, None], axis=0), tall),
        (f"fft2(x*w2) {img.shape}", lambda a: np.fft.fft2(a * w2), img),
        (f"abs(fft(x*w, axis=0))**2 {cube.shape}", lambda a: np.abs(np.fft.fft(a * wc, axis=0)) ** 2, cube),
        (f"fft(exp(x), axis=0) {cube.shape}", lambda a: np.fft.fft(np.exp(a), axis=0), cube),
    ]


@contextlib.contextmanager
def _without(pass_name: str):
    """Compile inside this block without `pass_name` in the backend's pipeline."""
    saved = llvm_backend.PIPELINE
    llvm_backend.PIPELINE = tuple(p for p in saved if p != pass_name)
    try:
        yield
    finally:
        llvm_backend.PIPELINE = saved


def _compiled(fn, x, threads: int, fused: bool):
    f = aot.compile(fn, options={"num_threads": threads})
    with contextlib.nullcontext() if fused else _without("fuse_fft"):
        got = f(x)  # compiles here
    want = fn(x)
    tol = 1e-4 if got.dtype in (np.float32, np.complex64) else 1e-10
    err = np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-300)
    assert got.dtype == want.dtype and err < tol, (fused, err)
    return f


def _fft_kernels(fn, x) -> int:
    func = llvm_backend.build_ir(aot.explain(fn, x).graphs[0]).funcs["main"]
    return sum(op.name == "kernel.fft" for op in func.body.ops)


def _interleaved(fns: dict, rounds: int, min_time: float) -> dict:
    per = {k: [] for k in fns}
    for fn in fns.values():
        fn()
    start = time.perf_counter()
    order = list(fns)
    while len(per[order[0]]) < rounds or time.perf_counter() - start < min_time:
        order = order[1:] + order[:1]  # rotate: none always runs right after the same one
        for k in order:
            t0 = time.perf_counter()
            fns[k]()
            per[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in per.items()}


def _row(label: str, fn, x, threads: int, quick: bool) -> dict:
    fused = _compiled(fn, x, threads, True)
    unfused = _compiled(fn, x, threads, False)
    t = _interleaved({"fused": lambda: fused(x), "unfused": lambda: unfused(x), "numpy": lambda: fn(x)},
                     rounds=7 if quick else 25, min_time=0.3 if quick else 2.0)
    return {"case": f"{label} [{_fft_kernels(fn, x)} kernel.fft]", **t}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small arrays, short timing")
    ap.add_argument("--threads", type=int, default=1, help="threads of the compiled functions (numpy's FFT uses 1)")
    add_json_option(ap)
    args = ap.parse_args()
    res = Results("fft_fused")
    rows = [_row(label, fn, x, args.threads, args.quick) for label, fn, x in cases(args.quick)]
    print_table(f"FFT fusion, compiled with {args.threads} thread(s)", rows, baseline="fused", results=res)
    if args.json:
        res.threads.update({"fused": args.threads, "unfused": args.threads, "numpy": 1})
        res.write(args.json)


if __name__ == "__main__":
    main()
