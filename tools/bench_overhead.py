#!/usr/bin/env python3
"""Start-up latency and call overhead: every figure of the start-up table, with numba, jax.jit and
torch.compile measured in the same run on the same function where they are installed.

- First call of the f64 chain sin(x)*exp(-y) + x*y/(1+y*y) at N=1000 in a fresh process, timed
  from before the library's import to after the call returns: with an empty disk cache, and with
  the cache the previous process left (numba: cache=True; jax: its persistent compilation cache;
  torch: the inductor cache). Median of --repeats fresh processes; with bytecode caching on (a
  private PYTHONPYCACHEPREFIX, written by one untimed process first), and on a second line with
  PYTHONDONTWRITEBYTECODE=1 (every source module of this checkout compiled on each start).
- 50 calls with lengths 1000..1049 and the N=1e6 warm call of a dynamic entry vs a static one
  (tools/bench_dynamic.py); the first eager aot.fft.fft (tools/bench_fft_startup.py).
- Call overhead of x*y+1 at N=16, static and dynamic=True; `import` times.

Run: PYTHONPATH=. python tools/bench_overhead.py [--repeats 5] [--no-torch] [--quick]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import batched_time, fmt_time, optional  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PYC = tempfile.mkdtemp(prefix="aot-bench-pyc-")

# each program prints the seconds from before the library's import to after its first call
_PROGRAM = """
import time, sys, numpy as np
x = np.linspace(0, 1, 1000); y = x + 1
t0 = time.perf_counter()
{setup}
r = {call}
t1 = time.perf_counter()
want = np.sin(x) * np.exp(-y) + x * y / (1 + y * y)
assert np.allclose(np.asarray(r), want, rtol=1e-12, atol=0), "wrong result"
print(t1 - t0)
"""

CONTESTANTS = {
    "aot": ("""
import aot
def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)
f = aot.compile(chain)
""", "f(x, y)", "AOT_CACHE_DIR"),
    # the runtime's helpers compiled on first use instead of loaded from `aot prebuild`'s directory
    "aot, AOT_PREBUILT=0": ("""
import aot
def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)
f = aot.compile(chain)
""", "f(x, y)", "AOT_CACHE_DIR", {"AOT_PREBUILT": "0"}),
    "numba": ("""
import numba
@numba.njit(cache=True)
def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)
""", "chain(x, y)", "NUMBA_CACHE_DIR"),
    "jax.jit": ("""
import os, jax
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_compilation_cache_dir", os.environ["BENCH_JAX_CACHE"])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
import jax.numpy as jnp
@jax.jit
def chain(x, y):
    return jnp.sin(x) * jnp.exp(-y) + x * y / (1 + y * y)
""", "chain(x, y).block_until_ready()", "BENCH_JAX_CACHE"),
    "torch.compile": ("""
import torch
@torch.compile
def chain(x, y):
    return torch.sin(x) * torch.exp(-y) + x * y / (1 + y * y)
tx, ty = torch.from_numpy(x), torch.from_numpy(y)
""", "chain(tx, ty).numpy()", "TORCHINDUCTOR_CACHE_DIR"),
}


def _env(pyc: bool, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env.pop("AOT_LOGS", None)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    if pyc:
        env["PYTHONPYCACHEPREFIX"] = _PYC
    else:  # an empty prefix: the checkout's own __pycache__ (if any) is not read either
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="aot-bench-nopyc-")
    return dict(env, **extra)


def _run(script: str, env: dict, timeout: float = 600) -> float:
    out = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=timeout, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed")
    return float(out.stdout.split()[-1])


def first_calls(name: str, repeats: int, pyc: bool, workdir: str) -> tuple[float, float]:
    """Medians over fresh processes of (empty cache, warm cache) first-call seconds."""
    setup, call, cache_var, *extra = CONTESTANTS[name]
    extra = extra[0] if extra else {}
    script = os.path.join(workdir, f"first_{name.replace('.', '_')}.py")
    with open(script, "w") as f:
        f.write(_PROGRAM.format(setup=textwrap.dedent(setup).strip(), call=call))
    with tempfile.TemporaryDirectory() as d:  # untimed: writes the .pyc files of the bytecode cache
        _run(script, _env(pyc, **{cache_var: d}, **extra))
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            env = _env(pyc, **{cache_var: d}, **extra)
            cold.append(_run(script, env))
            warm.append(_run(script, env))
    return statistics.median(cold), statistics.median(warm)


def call_overhead() -> dict:
    import aot

    def f(x, y):
        return x * y + 1.0

    x = np.ones(16)
    y = np.ones(16)
    static, dyn = aot.compile(f), aot.compile(f, dynamic=True)
    rows = {"aot": batched_time(lambda: static(x, y), inner=20000),
            "aot dynamic=True": batched_time(lambda: dyn(x, y), inner=20000),
            "numpy": batched_time(lambda: f(x, y), inner=20000)}
    numba = optional("numba")
    if numba is not None:
        nf = numba.njit(f)
        rows["numba"] = batched_time(lambda: nf(x, y), inner=20000)
    torch = optional("torch")
    if torch is not None:
        tf = torch.compile(f)
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        rows["torch.compile"] = batched_time(lambda: tf(tx, ty), inner=2000)
    return rows


def import_time(module: str, after: str = "numpy") -> float:
    code = f"import time, {after}; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                  env=_env(True), cwd=ROOT).stdout) for _ in range(5)]
    return statistics.median(times)


def _available(name: str) -> bool:
    return name.startswith("aot") or optional(name.split(".")[0]) is not None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--no-torch", action="store_true", help="skip torch.compile's fresh processes (~10 s each)")
    p.add_argument("--quick", action="store_true", help="aot only, 3 repeats, no other sections")
    a = p.parse_args()
    names = ["aot", "aot, AOT_PREBUILT=0"] if a.quick else [n for n in CONTESTANTS if _available(n)
                                     and not (a.no_torch and n == "torch.compile")]
    repeats = 3 if a.quick else a.repeats
    print(f"## first call of the f64 chain (N=1000) in a fresh process, median of {repeats}")
    print("| contestant | bytecode | empty cache | warm cache | empty / aot's | warm / aot's |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for pyc in (True, False):
            rows = {}
            for n in names:
                try:
                    rows[n] = first_calls(n, repeats, pyc, work)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    print(f"| {n} | {'on' if pyc else 'off'} | failed: {e} | | | |")
            base = rows.get("aot")
            for n, (cold, warm) in rows.items():
                ratios = f"{cold / base[0]:.1f} | {warm / base[1]:.1f}" if base else " | "
                print(f"| {n} | {'cached' if pyc else 'PYTHONDONTWRITEBYTECODE=1'} | {fmt_time(cold)} | "
                      f"{fmt_time(warm)} | {ratios} |", flush=True)
    if a.quick:
        return
    print("\n## call overhead, x*y+1 at N=16 (median per call)")
    for name, t in call_overhead().items():
        print(f"| {name} | {fmt_time(t)} |")
    import bench_dynamic

    print()
    bench_dynamic.main()
    try:
        from bench_fft_startup import fft_first_use
    except ImportError:
        fft_first_use = None
    if fft_first_use is not None:
        print("\n## first eager aot.fft.fft in a fresh process")
        for k, v in fft_first_use().items():
            print(f"| {k} | {fmt_time(v)} |")
    print("\n## import time (median of 5 fresh processes, after numpy)")
    for m in ("aot", "aot.compiler", "aot.compiler.capture", "codegen", "runtime", "llvmlite.binding", "sympy"):
        print(f"| import {m} | {fmt_time(import_time(m))} |")


if __name__ == "__main__":
    main()
