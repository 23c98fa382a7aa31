#!/usr/bin/env python3
"""Asynchronous compilation: every figure in one run.

1. Time to first result of a 50-op f64 chain at N=1e5, each contestant in a fresh process, timed
   from after the library's import to the first result: numpy, aot with async_compile, aot
   synchronous, torch.compile, jax.jit, numba (those installed). Caches are empty (aot's disk
   cache off; torch's inductor cache, numba's cache in new directories; jax has none by default).
2. The 300-op chain at N=1e5: aot's async first call over numpy's time for the same call in the
   same process (target <= 1.5), how long eager calls take while the compile runs beside them,
   and when native code takes over.
3. Eight different functions compiled concurrently on the compile pool vs one after another (a
   fresh process each, after one untimed compile that loads the compiler), and how much of one
   compile runs with the GIL released (time inside LLVM's parse, optimise and emit calls, which
   llvmlite makes through ctypes, over the compile's wall time); and LLVM's part alone, the same
   eight modules parsed, optimised and emitted on eight threads vs one after another.

Run: PYTHONPATH=. python tools/bench_async.py [--repeats 3] [--no-torch]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHAIN = """
def make_chain(m, n_ops, c=0.999):
    lines = ["def chain(x, y):", "    t = x"]
    steps = ["    t = t * {c} + y", "    t = m.sin(t)", "    t = t - 0.5 * y", "    t = m.abs(t) + 1e-3"]
    lines += [steps[i % 4].format(c=c) for i in range(n_ops)]
    ns = {"m": m}
    exec("\\n".join(lines + ["    return t"]), ns)
    return ns["chain"]
"""

_FIRST = CHAIN + """
import time, numpy as np
x = np.linspace(-2, 2, 100_000); y = np.linspace(0, 1, 100_000)
@SETUP@
t0 = time.perf_counter()
r = np.asarray(@CALL@)
t1 = time.perf_counter()
want = make_chain(np, 50)(x, y)
assert np.allclose(r, want, rtol=1e-9, atol=1e-12), "wrong result"
print(t1 - t0)
"""

CONTESTANTS = {
    "numpy": ("f = make_chain(np, 50)", "f(x, y)"),
    "aot async_compile": (("import aot\nf = aot.compile(make_chain(np, 50), options={'async_compile': True, "
                           "'disk_cache': False})"), "f(x, y)"),
    "aot": ("import aot\nf = aot.compile(make_chain(np, 50), options={'disk_cache': False})", "f(x, y)"),
    "torch.compile": (("import torch\nf = torch.compile(make_chain(torch, 50))\n"
                       "tx, ty = torch.from_numpy(x), torch.from_numpy(y)"), "f(tx, ty).numpy()"),
    "jax.jit": (("import jax\njax.config.update('jax_enable_x64', True)\nimport jax.numpy as jnp\n"
                 "f = jax.jit(make_chain(jnp, 50))"), "f(x, y).block_until_ready()"),
    "numba": ("import numba\nf = numba.njit(make_chain(np, 50))", "f(x, y)"),
}

_SWITCH = CHAIN + """
import json, time, numpy as np, aot
x = np.linspace(-2, 2, 100_000); y = np.linspace(0, 1, 100_000)
g = make_chain(np, 300)
g(x * 0.5, y)  # numpy's first touch of these sizes, untimed
t0 = time.perf_counter(); want = g(x, y); t_numpy = time.perf_counter() - t0  # before any compile runs
f = aot.compile(g, options={"async_compile": True, "disk_cache": False})
t0 = time.perf_counter(); first = f(x, y); t_async = time.perf_counter() - t0
assert np.array_equal(first, want)
start = time.perf_counter(); during = []
while f.cache_info()["calls"]["native"] == 0:
    t0 = time.perf_counter(); r = f(x, y); during.append(time.perf_counter() - t0)
switched = time.perf_counter() - start
assert np.allclose(r, want, rtol=1e-12, atol=0)
t0 = time.perf_counter(); f(x, y); t_native = time.perf_counter() - t0
print(json.dumps({"async": t_async, "numpy": t_numpy, "during": during[:-1], "switched": switched,
                  "native": t_native, "calls": f.cache_info()["calls"]}))
"""

_CONCURRENT = CHAIN + """
import json, time, numpy as np, aot
from aot.futures import wait_all
from codegen import targets
x = np.linspace(-2, 2, 1000); y = np.linspace(0, 1, 1000)
aot.compile(make_chain(np, 8, 0.5), options={"disk_cache": False})(x, y)  # loads the compiler, untimed
fns = [aot.compile(make_chain(np, 100, 0.9 + 0.01 * k), options={"disk_cache": False}) for k in range(16)]
serial, concurrent = fns[:8], fns[8:]
llvm = [0.0]
def timed(fn):
    def run(*a, **k):
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            llvm[0] += time.perf_counter() - t0
    return run
import codegen.targets.base as base
targets.optimize, targets.emit_object, base.parse = timed(targets.optimize), timed(targets.emit_object), timed(base.parse)
t0 = time.perf_counter()
for f in serial:
    f.compile_async(x, y).wait()
t_serial = time.perf_counter() - t0
share = llvm[0] / t_serial
t0 = time.perf_counter()
wait_all([f.compile_async(x, y) for f in concurrent])
t_concurrent = time.perf_counter() - t0
for f in fns:
    assert np.allclose(f(x, y), f._fn(x, y), rtol=1e-12, atol=1e-15)
print(json.dumps({"serial": t_serial, "concurrent": t_concurrent, "gil_free": share}))
"""

_LLVM_ONLY = CHAIN + """
import json, threading, time, numpy as np, aot
from aot._pytree import tree_flatten
from aot.compiler import capture, llvm_backend
from codegen import CodegenOptions, lower_module
from codegen.targets import emit_object, optimize
from codegen.targets.base import parse
x = np.linspace(-2, 2, 1000); y = np.linspace(0, 1, 1000)
target = llvm_backend._host(3)
texts = []
for k in range(9):
    leaves, spec = tree_flatten((x, y))
    cap = capture.capture(make_chain(np, 100, 0.9 + 0.01 * k), (x, y), {}, leaves, spec, module=None,
                          dynamic=False, names=None)
    texts.append(str(lower_module(llvm_backend.build_ir(cap.gm), target, CodegenOptions(num_threads=1))))
def job(text):
    emit_object(optimize(parse(text), target), target)
job(texts.pop())  # untimed: this thread's target machine
t0 = time.perf_counter()
for t in texts:
    job(t)
serial = time.perf_counter() - t0
threads = [threading.Thread(target=job, args=(t,)) for t in texts]
t0 = time.perf_counter()
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"serial": serial, "concurrent": time.perf_counter() - t0}))
"""


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "AOT_LOGS")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), "aot-bench-async-pyc"))
    return dict(env, **extra)


def _run(program: str, env: dict, timeout: float = 900) -> str:
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=timeout, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed")
    return (out.stdout.strip().splitlines() or [""])[-1]


def _available(name: str) -> bool:
    import importlib.util

    lib = {"torch.compile": "torch", "jax.jit": "jax", "numba": "numba"}.get(name)
    return lib is None or importlib.util.find_spec(lib) is not None


def first_result(name: str, repeats: int) -> float:
    setup, call = CONTESTANTS[name]
    program = _FIRST.replace("@SETUP@", setup).replace("@CALL@", call)
    times = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            times.append(float(_run(program, _env(TORCHINDUCTOR_CACHE_DIR=d, NUMBA_CACHE_DIR=d))))
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-torch", action="store_true", help="skip torch.compile (~10-20 s per process)")
    a = p.parse_args()
    _run("import aot, aot.compiler.capture, codegen, numpy", _env())  # writes the bytecode cache, untimed

    print(f"## time to first result, 50-op f64 chain at N=1e5, fresh process, median of {a.repeats}")
    print("| contestant | first result | / numpy's | / aot async's |")
    print("|---|---|---|---|")
    rows = {}
    for name in CONTESTANTS:
        if not _available(name) or (a.no_torch and name == "torch.compile"):
            continue
        try:
            rows[name] = first_result(name, a.repeats)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"| {name} | failed: {e} | | |")
    for name, t in rows.items():
        print(f"| {name} | {t * 1e3:.1f} ms | {t / rows['numpy']:.2f} | {t / rows['aot async_compile']:.2f} |",
              flush=True)

    print("\n## 300-op chain at N=1e5: async first call vs numpy's, then the switch to native code")
    runs = [json.loads(_run(textwrap.dedent(_SWITCH), _env())) for _ in range(a.repeats)]
    ratio = statistics.median(r["async"] / r["numpy"] for r in runs)
    print(f"| async first call / numpy's same call | {ratio:.2f} (median of {a.repeats}; target <= 1.5) |")
    for r in runs:
        during = ", ".join(f"{t * 1e3:.0f}" for t in r["during"]) or "none"
        print(f"| run | first {r['async'] * 1e3:.0f} ms, numpy {r['numpy'] * 1e3:.0f} ms; eager calls while "
              f"compiling: {during} ms; native after {r['switched']:.2f} s ({r['native'] * 1e3:.1f} ms per call); "
              f"paths {r['calls']} |")

    print("\n## eight different 100-op functions: compiled concurrently on the pool vs one after another")
    for workers in ("1", "2", "4"):
        runs = [json.loads(_run(textwrap.dedent(_CONCURRENT), _env(AOT_COMPILE_WORKERS=workers)))
                for _ in range(a.repeats)]
        s = statistics.median(r["serial"] for r in runs)
        c = statistics.median(r["concurrent"] for r in runs)
        g = statistics.median(r["gil_free"] for r in runs)
        print(f"| AOT_COMPILE_WORKERS={workers} | serial {s:.2f} s | concurrent {c:.2f} s | "
              f"concurrent / serial {c / s:.2f} | GIL released for {100 * g:.0f}% of a compile |", flush=True)
    runs = [json.loads(_run(textwrap.dedent(_LLVM_ONLY), _env())) for _ in range(a.repeats)]
    s = statistics.median(r["serial"] for r in runs)
    c = statistics.median(r["concurrent"] for r in runs)
    print(f"| LLVM's part alone (parse, optimise, emit of the same 8 modules), 8 threads | serial {s:.2f} s | "
          f"concurrent {c:.2f} s | concurrent / serial {c / s:.2f} | |")
    print(f"\n(cores: {os.cpu_count()})")


if __name__ == "__main__":
    main()
