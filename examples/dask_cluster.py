"""Numpy code on a Dask cluster, as native code, without compiling on the workers.

A numpy function over two arrays of a few GB (generated chunk by chunk on the workers, never whole
in one process) runs on a dask.distributed LocalCluster of two worker processes. Calling the
aot.compile'd function with dask arrays gives dask arrays: its elementwise part is one fused native
kernel per chunk, its reductions compiled chunk and aggregate steps. The tasks carry the compiled
code, so the workers load it instead of compiling (their compile counters are printed). The result
is checked against numpy on a slice.

Run: python examples/dask_cluster.py [--elements 150e6] [--chunk 10e6]
"""
from __future__ import annotations

import argparse
import time

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import aot


def signal_report(x, y):
    """A damped signal and its energy, peak and spread: the kind of code that runs on each chunk."""
    s = np.sin(x) * np.exp(-y) + x * y / (1 + y * y)
    return (s * s).sum(), s.max(), np.argmax(s), s.std()


def worker_compiles() -> dict:
    from aot.compiler import llvm_backend

    return {"compiles": llvm_backend.STATS["compiles"], "compile_seconds": llvm_backend.SECONDS["compiles"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--elements", type=float, default=150e6, help="elements per array (float64)")
    p.add_argument("--chunk", type=float, default=10e6, help="elements per chunk")
    a = p.parse_args()
    n, chunk = int(a.elements), int(a.chunk)
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        rs = da.random.RandomState(0)
        x = rs.random_sample(n, chunks=chunk)
        y = rs.random_sample(n, chunks=chunk)
        report = aot.compile(signal_report)
        t0 = time.perf_counter()
        energy, peak, where, spread = client.compute(list(report(x, y)), sync=True)
        dt = time.perf_counter() - t0
        print(f"{n:,} elements x 2 arrays ({2 * n * 8 / 1e9:.1f} GB) in {x.npartitions} chunks: {dt:.2f} s")
        print(f"  energy {energy:.6g}  peak {peak:.6g} at {where}  std {spread:.6g}")
        print(f"  worker compiles: {client.run(worker_compiles)}")

        lo, hi = max(0, chunk - 300_000), min(n, chunk + 300_000)  # a slice across a chunk boundary
        xs, ys = client.compute([x[lo:hi], y[lo:hi]], sync=True)
        got = client.compute(list(report(x[lo:hi], y[lo:hi])), sync=True)
        for g, w in zip(got, signal_report(xs, ys)):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-10)
        print(f"  elements {lo:,}..{hi:,}: the same as numpy on them")

if __name__ == "__main__":
    main()
