#!/usr/bin/env python3
"""Elementwise chain sin(x)*exp(-y) + x*y/(1+y*y): aot vs numpy, numexpr, numba, torch.compile.

Run: .venv/bin/python tools/bench_elementwise.py [--sizes 1e4,1e6,1e7] [--dtypes f32,f64] [--json PATH]
Also reports peak extra memory at N=1e7 (measured in a child process per contestant, as the
growth of the maximum resident set size over one call, relative to the output size).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Results, add_json_option, median_time, optional, print_table  # noqa: E402

torch = optional("torch")  # import torch before numba (both bundle LLVM/OpenMP runtimes)
numexpr = optional("numexpr")
numba = optional("numba")


def chain_np(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


def contestants(dtype):
    import aot

    out = {"aot": aot.compile(chain_np), "numpy": chain_np}
    if numexpr is not None:
        out["numexpr"] = lambda x, y: numexpr.evaluate("sin(x)*exp(-y) + x*y/(1+y*y)")
    if numba is not None:
        out["numba"] = numba.njit(cache=False, fastmath=False)(_loop)
        out["numba_par"] = numba.njit(parallel=True)(_ploop)
    if torch is not None:
        tf = torch.compile(lambda x, y: torch.sin(x) * torch.exp(-y) + x * y / (1 + y * y))
        out["torch.compile"] = ("torch", tf)
    return out


def _loop(x, y):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * np.exp(-y[i]) + x[i] * y[i] / (1 + y[i] * y[i])
    return out


def _ploop(x, y):
    out = np.empty_like(x)
    for i in numba.prange(x.shape[0]):
        out[i] = np.sin(x[i]) * np.exp(-y[i]) + x[i] * y[i] / (1 + y[i] * y[i])
    return out


def run(sizes, dtypes, results=None):
    rows = []
    for dt in dtypes:
        cs = contestants(dt)
        for n in sizes:
            rng = np.random.default_rng(0)
            x = rng.uniform(-3, 3, n).astype(dt)
            y = rng.uniform(0, 3, n).astype(dt)
            ref = chain_np(x, y)
            row = {"case": f"{np.dtype(dt).name} N={n:.0e}"}
            for name, fn in cs.items():
                if isinstance(fn, tuple):  # torch takes tensors
                    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
                    f = fn[1]
                    got = f(tx, ty).numpy()
                    row[name] = median_time(lambda: f(tx, ty))
                else:
                    got = fn(x, y)
                    row[name] = median_time(lambda: fn(x, y))
                tol = 1e-5 if np.dtype(dt) == np.float32 else 1e-12
                np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, err_msg=name)
            rows.append(row)
    print_table("elementwise chain", rows, results=results)


_MEM_CHILD = r"""
import sys, numpy as np
name, dt, n = sys.argv[1], sys.argv[2], int(float(sys.argv[3]))
if name == "torch.compile":
    import torch
import os; sys.path.insert(0, os.path.dirname(sys.argv[4]))
import bench_elementwise as b
x = np.random.default_rng(0).uniform(-3, 3, n).astype(dt); y = x.copy()
cs = b.contestants(dt); fn = cs[name]
if isinstance(fn, tuple):
    import torch; tx, ty = torch.from_numpy(x), torch.from_numpy(y); call = lambda: fn[1](tx, ty)
else:
    call = lambda: fn(x, y)
call()  # compile for this shape; its output is freed again

def kib(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))

with open("/proc/self/clear_refs", "w") as f:  # reset the peak (VmHWM) to the current RSS
    f.write("5")
base = kib("VmRSS")
r = call()
print((kib("VmHWM") - base) * 1024 / (n * np.dtype(dt).itemsize))
"""


def memory(n=10_000_000, dt="float64", results=None):
    print(f"\n## peak extra memory for one call at N={n:.0e} {dt} (x output size, the output included; "
          "peak resident set growth over a call after one warm-up call of the same shape)")
    print("(aot keeps the warm-up call's freed output for the next large one: runtime/blocks.py; the row"
          " with AOT_BLOCK_CACHE_MB=0 is the same call without that cache)")
    runs = [(name, {}) for name in contestants(dt)]
    runs.insert(1, ("aot, AOT_BLOCK_CACHE_MB=0", {"AOT_BLOCK_CACHE_MB": "0"}))
    for label, extra in runs:
        name = label.split(",")[0]
        out = subprocess.run([sys.executable, "-c", _MEM_CHILD, name, dt, str(n), os.path.abspath(__file__)],
                             capture_output=True, text=True, env={**os.environ, **extra})
        val = f"{float(out.stdout.strip().splitlines()[-1]):.2f}" if out.returncode == 0 and out.stdout.strip() \
            else f"error: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else '?'}"
        print(f"| {label} | {val} |")
        if results is not None:
            key = f"peak extra memory, x output size, N={n:.0e} {dt}"
            results.notes.setdefault(key, {})[label] = val if val.startswith("error") else float(val)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sizes", default="1e4,1e6,1e7")
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--no-memory", action="store_true")
    add_json_option(p)
    a = p.parse_args()
    res = Results("elementwise")
    run([int(float(s)) for s in a.sizes.split(",")], a.dtypes.split(","), res)
    if not a.no_memory:
        memory(results=res)
    if a.json:
        res.write(a.json)
