#!/usr/bin/env python3
"""aot on a Dask cluster vs dask.array's numpy ops and numba via map_blocks, in one process.

The case: sin(x)*exp(-y) + x*y/(1+y*y) followed by a sum, over two float64 arrays of --elements
(default 2e8) in chunks of --chunk (1e7), persisted in the workers' memory of a 2-worker
LocalCluster (processes, one thread each); two untimed passes over x + y first, after which
dask holds chunk i of x and of y on one worker (otherwise the first contestant's time would be
dask moving chunks). Each contestant's median of --repeats computes; the
first compute of each is reported apart (it includes numba's compile on every worker; aot compiles
on the client, before the graph is sent). Also reported: the compiles and seconds of compiling
that aot's workers did (the tasks carry the native code: the goal is 0).

Run: PYTHONPATH=. python tools/bench_dask.py [--elements 2e8] [--chunk 1e7] [--repeats 3] [--json PATH]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Results, add_json_option, fmt_time, optional, print_table  # noqa: E402


def expression(x, y):
    return (np.sin(x) * np.exp(-y) + x * y / (1 + y * y)).sum()


def _numba_block(nb):
    @nb.njit(cache=False)
    def partial(x, y):
        s = 0.0
        for i in range(x.size):
            s += np.sin(x[i]) * np.exp(-y[i]) + x[i] * y[i] / (1 + y[i] * y[i])
        return s

    def block(x, y):
        return np.array([partial(x, y)])

    return block


def _worker_compiles() -> dict:
    from aot.compiler import llvm_backend

    return {"compiles": llvm_backend.STATS["compiles"], "compile_seconds": llvm_backend.SECONDS["compiles"]}


def _timed(compute, repeats: int) -> tuple[float, float, object]:
    t0 = time.perf_counter()
    value = compute()
    first = time.perf_counter() - t0
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        compute()
        runs.append(time.perf_counter() - t0)
    return first, statistics.median(runs), value


def main() -> None:
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    import aot

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--elements", type=float, default=2e8)
    p.add_argument("--chunk", type=float, default=1e7)
    p.add_argument("--repeats", type=int, default=3)
    add_json_option(p)
    a = p.parse_args()
    n, chunk = int(a.elements), int(a.chunk)
    results = Results("bench_dask")
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        rs = da.random.RandomState(0)
        x, y = client.persist([rs.random_sample(n, chunks=chunk), rs.random_sample(n, chunks=chunk)])
        wait([x, y])
        for _ in range(2):  # dask copies chunk i of y to the worker holding chunk i of x (or back)
            client.compute((x + y).sum(), sync=True)  # once, here, not in a contestant's time
        f = aot.compile(expression)
        t0 = time.perf_counter()
        lazy = f(x, y)  # the plan: capture and compile, on the client
        plan_s = time.perf_counter() - t0
        contestants = {"aot": lambda: client.compute(f(x, y), sync=True),
                       "dask.array": lambda: client.compute(expression(x, y), sync=True)}
        nb = optional("numba")
        if nb is not None:
            block = _numba_block(nb)
            contestants["numba map_blocks"] = lambda: client.compute(
                da.map_blocks(block, x, y, chunks=(1,), dtype=np.float64).sum(), sync=True)
        firsts, steady, values = {}, {}, {}
        for name, compute in contestants.items():
            firsts[name], steady[name], values[name] = _timed(compute, a.repeats)
        want = values["dask.array"]
        for name, v in values.items():
            assert np.isclose(v, want, rtol=1e-9), (name, v, want)
        workers = client.run(_worker_compiles)
        del lazy
    case = f"sum(sin(x)*exp(-y) + x*y/(1+y*y)), {n:.0e} f64 in chunks of {chunk:.0e}, 2 workers"
    print_table("Dask LocalCluster (2 worker processes, 1 thread each)", [{"case": case, **steady}],
                results=results)
    print_table("first compute (numba compiles on each worker)", [{"case": case, **firsts}], results=results)
    print(f"\naot: capture and compile on the client {fmt_time(plan_s)}; the workers compiled "
          + ", ".join(f"{s['compiles']} times ({s['compile_seconds']:.3f} s)" for s in workers.values()))
    results.notes.update({"plan_seconds": plan_s, "worker_compiles": list(workers.values())})
    if a.json:
        results.write(a.json)


if __name__ == "__main__":
    main()
