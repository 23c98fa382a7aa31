#!/usr/bin/env python3
"""aot.func's transforms: aot (compiled, and eager) vs jax.jit vs torch.func (eager, and under
torch.compile) vs a hand-written numpy closed form, in one process:

1. per-sample gradients of an MLP 64-128-10 (tanh, softmax cross-entropy), batch 256, float32:
   vmap(grad(loss), in_dims=(None, 0, 0))
2. jacrev of tanh(W @ x + b), R^100 -> R^100, float64
3. hessian of sum(tanh(W @ x + b)), n = 100, float64
4. grad of sum(sin(x) * exp(-x*x) + tanh(x)) over 1e6 elements, float64
5. the first call of case 1 compiled, in a fresh process (imports timed apart), no disk cache

Every result is checked against the closed form before it is timed. Threads: every contestant gets
the same cores (--threads, default 1; 0: all usable): the process is pinned to them (XLA sizes its
pool by the affinity) and OMP/MKL/OPENBLAS/AOT_NUM_THREADS and torch.set_num_threads are set to
their number. With more than one, idle pools sleep instead of spinning (OMP_WAIT_POLICY=PASSIVE,
OPENBLAS_THREAD_TIMEOUT=4; aot's pool spins ~0.1 ms then sleeps anyway): in one process a pool left
spinning by one contestant slows the next one's by 10-1000x on a loaded machine. One thread is the
default because these problems are small (the time is the generated code, not the pools).

Run: python tools/bench_func.py [--quick] [--threads N] [--contestants aot,jax,torch,torch.compile,numpy]
     [--cases 1,2,3,4,5] [--fresh 3] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
CONTESTANTS = ("aot", "jax", "torch", "torch.compile", "numpy")
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "AOT_NUM_THREADS")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="smoke run: short timings, case 4 at 1e5, one fresh process per figure, "
                        "no warm-cache row")
    p.add_argument("--threads", type=int, default=1, help="cores for every contestant (0: all usable)")
    p.add_argument("--contestants", default=",".join(CONTESTANTS),
                   help="comma-separated subset of " + ",".join(CONTESTANTS))
    p.add_argument("--cases", default="1,2,3,4,5")
    p.add_argument("--fresh", type=int, default=3, help="fresh processes per first-call figure (median)")
    p.add_argument("--json", metavar="PATH", default=None,  # benchlib's option; it loads after the pinning
                   help="also write the tables' rows, machine and versions to PATH as JSON")
    return p


def _pin_threads(n: int) -> int:
    """Before numpy, torch or jax load: the same n cores and thread counts for all of them."""
    has_affinity = hasattr(os, "sched_getaffinity")
    cores = sorted(os.sched_getaffinity(0)) if has_affinity else list(range(os.cpu_count() or 1))
    n = len(cores) if n <= 0 else min(n, len(cores))
    if has_affinity:
        os.sched_setaffinity(0, cores[:n])  # inherited by the fresh processes of case 5
    for var in THREAD_VARS:
        os.environ[var] = str(n)
    if n > 1:  # a parked pool must not steal the cores of the contestant timed after it
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    return n


if __name__ == "__main__":
    ARGS = _parser().parse_args()
    THREADS = _pin_threads(ARGS.threads)

import numpy as np

sys.path.insert(0, TOOLS)
from benchlib import Results, fmt_time, median_time, optional, print_table


# --- the functions, written once for np / jax.numpy / torch ------------------------------------------
def mlp_loss(xp):
    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = xp.tanh(w1 @ x + b1)
        z = w2 @ h + b2
        m = xp.max(z)
        return -xp.sum(y * (z - (m + xp.log(xp.sum(xp.exp(z - m))))))

    return loss


def layer(xp):
    return lambda x, w, b: xp.tanh(w @ x + b)


def layer_sum(xp):
    return lambda x, w, b: xp.sum(xp.tanh(w @ x + b))


def chain(xp):
    return lambda x: xp.sum(xp.sin(x) * xp.exp(-x * x) + xp.tanh(x))


# --- inputs and the closed forms (the reference) -------------------------------------------------------
def mlp_data(batch=256, seed=0):
    rng = np.random.default_rng(seed)
    f = np.float32
    params = (rng.standard_normal((128, 64)).astype(f) / 8, rng.standard_normal(128).astype(f) / 10,
              rng.standard_normal((10, 128)).astype(f) / 11, rng.standard_normal(10).astype(f) / 10)
    x = rng.standard_normal((batch, 64)).astype(f)
    y = np.eye(10, dtype=f)[rng.integers(0, 10, batch)]
    return params, x, y


def mlp_closed(params, x, y):
    """Per-sample backprop by hand: the gradients of every example's loss, stacked."""
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1.T + b1)
    z = h @ w2.T + b2
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    dz = p * y.sum(1, keepdims=True) - y
    da = (dz @ w2) * (1 - h * h)
    return da[:, :, None] * x[:, None, :], da, dz[:, :, None] * h[:, None, :], dz


def layer_data(n=100, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n) / 10


def jac_closed(x, w, b):
    y = np.tanh(w @ x + b)
    return (1 - y * y)[:, None] * w


def hess_closed(x, w, b):
    y = np.tanh(w @ x + b)
    return w.T @ ((-2 * y * (1 - y * y))[:, None] * w)


def chain_grad_closed(x):
    e = np.exp(-x * x)
    t = np.tanh(x)
    return np.cos(x) * e - 2 * x * np.sin(x) * e + 1 - t * t


# --- the contestants -------------------------------------------------------------------------------------
class Case:
    """One benchmark: a transform of `fn(xp)` applied to `args`, and its closed form."""

    def __init__(self, name, fn, transform, args, closed, dtype, in_axes=None):
        self.name, self.fn, self.transform, self.args = name, fn, transform, args
        self.closed, self.dtype, self.in_axes = closed, dtype, in_axes

    def build(self, lib):
        """lib.grad / jacrev / hessian / vmap(grad) of fn(lib's numpy)."""
        if lib == "aot":
            from aot import func as mod

            xp = np
        elif lib == "jax":
            import jax as mod
            import jax.numpy as xp
        else:
            import torch as xp
            import torch.func as mod
        f = self.fn(xp)
        if self.transform == "vmap_grad":
            vmap = mod.vmap
            kw = {"in_axes": self.in_axes} if lib == "jax" else {"in_dims": self.in_axes}
            return vmap(mod.grad(f), **kw)
        return getattr(mod, self.transform)(f)


def _flat(r) -> list[np.ndarray]:
    if isinstance(r, (tuple, list)):
        return [a for x in r for a in _flat(x)]
    if hasattr(r, "detach"):
        return [r.detach().numpy()]
    return [np.asarray(r)]


def _check(got, want, dtype) -> tuple[bool, float]:
    rtol, atol = (2e-4, 2e-5) if dtype == np.float32 else (1e-9, 1e-11)
    got, want = _flat(got), _flat(want)
    if len(got) != len(want) or any(g.shape != w.shape for g, w in zip(got, want)):
        return False, float("nan")
    err = max(float(np.max(np.abs(g.astype(np.float64) - w))) for g, w in zip(got, want))
    return all(np.allclose(g, w, rtol=rtol, atol=atol) for g, w in zip(got, want)), err


def _runners(case: Case, names: set) -> dict:
    """contestant -> a factory of the function to time, or a string saying why it is skipped."""
    out = {}
    if "aot" in names:
        import aot

        eager = case.build("aot")
        out["aot"] = lambda: aot.compile(eager)
        out["aot eager"] = lambda: eager
    if "jax" in names:
        jax = optional("jax")
        out["jax.jit"] = (lambda: jax.jit(case.build("jax"))) if jax else "jax not installed"
    torch = optional("torch") if names & {"torch", "torch.compile"} else None
    if "torch" in names:
        out["torch.func"] = (lambda: case.build("torch")) if torch else "torch not installed"
    if "torch.compile" in names and case.transform == "vmap_grad":
        out["torch.compile"] = (lambda: torch.compile(case.build("torch"))) if torch \
            else "torch not installed"
    if "numpy" in names:
        out["numpy"] = lambda: case.closed
    return out


def _arguments(lib: str, args):
    """The arguments (arrays, or tuples of them) as the contestant's arrays."""
    if lib.startswith("torch"):
        import torch

        to = torch.from_numpy
    elif lib == "jax.jit":
        import jax.numpy as jnp

        to = jnp.asarray
    else:
        return args

    def conv(a):
        return to(a) if isinstance(a, np.ndarray) else tuple(map(conv, a))

    return tuple(map(conv, args))


def _call(lib: str, f, args):
    if lib == "jax.jit":
        import jax

        return lambda: jax.block_until_ready(f(*args))
    return lambda: f(*args)


def run_case(case: Case, names: set, budget: dict, checks: list, notes: list) -> dict:
    want = case.closed(*case.args)
    row = {"case": case.name}
    for lib, make in _runners(case, names).items():
        row[lib] = None
        if isinstance(make, str):
            notes.append(f"{case.name}: {lib} skipped ({make})")
            continue
        args = _arguments(lib, case.args)
        try:
            f = make()
            t0 = time.perf_counter()
            got = f(*args)
            first = time.perf_counter() - t0
        except Exception as e:  # noqa: BLE001 - report what fails and carry on with the others
            text = str(e).strip()
            msg = f"{type(e).__name__}: {text.splitlines()[0][:160]}" if text else type(e).__name__
            checks.append((case.name, lib, "FAILED", msg))
            notes.append(f"{case.name}: {lib} failed ({msg})")
            continue
        ok, err = _check(got, want, case.dtype)
        checks.append((case.name, lib, "ok" if ok else "WRONG",
                       f"max abs err {err:.2e}; first call {fmt_time(first)}"))
        if ok:
            row[lib] = median_time(_call(lib, f, args), **budget)
    return row


# --- case 5: the first call in a fresh process ----------------------------------------------------------
FRESH = {
    "aot": """
import aot
from aot import func
t_import = time.perf_counter() - t0
loss = bench_func.mlp_loss(np)
t1 = time.perf_counter()
f = aot.compile(func.vmap(func.grad(loss), in_dims=(None, 0, 0)), options={"disk_cache": DISK})
r = f(params, x, y)
t_first = time.perf_counter() - t1
""",
    "jax.jit": """
import jax
try:
    jax.config.update("jax_enable_compilation_cache", False)  # off by default; older jax lacks the flag
except AttributeError:
    pass
import jax.numpy as jnp
t_import = time.perf_counter() - t0
loss = bench_func.mlp_loss(jnp)
args = (tuple(map(jnp.asarray, params)), jnp.asarray(x), jnp.asarray(y))
t1 = time.perf_counter()
f = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
r = jax.block_until_ready(f(*args))
t_first = time.perf_counter() - t1
""",
    "torch.compile": """
import torch
import torch.func
t_import = time.perf_counter() - t0
loss = bench_func.mlp_loss(torch)
args = (tuple(map(torch.from_numpy, params)), torch.from_numpy(x), torch.from_numpy(y))
t1 = time.perf_counter()
f = torch.compile(torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0)))
r = f(*args)
t_first = time.perf_counter() - t1
""",
}

FRESH_HEAD = """
import json, sys, time
import numpy as np
sys.path.insert(0, {tools!r})
import bench_func
params, x, y = bench_func.mlp_data()
t0 = time.perf_counter()
DISK = {disk!r}
"""
FRESH_TAIL = """
ok, err = bench_func._check(r, bench_func.mlp_closed(params, x, y), np.float32)
print("RESULT " + json.dumps({"import": t_import, "first": t_first, "ok": bool(ok), "err": err}))
"""


def fresh_first_call(lib: str, cache_dir: str, disk: bool) -> dict | str:
    """One fresh python running case 1's first call; {import, first, ok, err} or the error's tail."""
    path = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, AOT_CACHE_DIR=cache_dir, PYTHONPATH=path, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1",
               TORCHINDUCTOR_CACHE_DIR=os.path.join(cache_dir, "inductor"))
    code = FRESH_HEAD.format(tools=TOOLS, disk=disk) + FRESH[lib] + FRESH_TAIL
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
    return f"exit {p.returncode}: {tail[:200]}"


def run_fresh(names: set, repeats: int, checks: list, notes: list, warm: bool) -> list[dict]:
    need = {"aot": "aot", "jax.jit": "jax", "torch.compile": "torch.compile"}  # the --contestants names
    libs = [lib for lib in need if need[lib] in names]
    mods = {"jax.jit": "jax", "torch.compile": "torch"}
    rows = {k: {"case": k} for k in ("import", "first call (cold)", "first call, disk cache warm")}
    for lib in libs:
        if lib in mods and optional(mods[lib]) is None:
            notes.append(f"fresh process: {lib} skipped ({mods[lib]} not installed)")
            continue
        runs = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="bench-func-cache-") as d:  # empty: nothing cached
                runs.append(fresh_first_call(lib, d, disk=False))
        bad = [r for r in runs if isinstance(r, str) or not r["ok"]]
        if bad:
            checks.append(("fresh process", lib, "FAILED", str(bad[0])[:200]))
            notes.append(f"fresh process: {lib} failed ({str(bad[0])[:200]})")
            continue
        checks.append(("fresh process", lib, "ok", f"max abs err {max(r['err'] for r in runs):.2e}"))
        rows["import"][lib] = float(np.median([r["import"] for r in runs]))
        rows["first call (cold)"][lib] = float(np.median([r["first"] for r in runs]))
        if lib == "aot" and warm:  # what the disk cache saves a second process
            with tempfile.TemporaryDirectory(prefix="bench-func-cache-") as d:
                fresh_first_call(lib, d, disk=True)
                hits = [fresh_first_call(lib, d, disk=True) for _ in range(repeats)]
            if all(isinstance(r, dict) for r in hits):
                rows["first call, disk cache warm"][lib] = float(np.median([r["first"] for r in hits]))
    for r in rows.values():
        for lib in libs:
            r.setdefault(lib, None)
    return [r for r in rows.values() if any(r[lib] is not None for lib in libs)]


# --- main -------------------------------------------------------------------------------------------------
def cases(quick: bool) -> dict[str, Case]:
    n4, n4_name = (100_000, "1e5") if quick else (1_000_000, "1e6")
    x4 = np.random.default_rng(2).standard_normal(n4)
    return {
        "1": Case("per-sample grad MLP b=256 f32", mlp_loss, "vmap_grad", mlp_data(), mlp_closed, np.float32,
                  in_axes=(None, 0, 0)),
        "2": Case("jacrev tanh(Wx+b) n=100 f64", layer, "jacrev", layer_data(), jac_closed, np.float64),
        "3": Case("hessian sum tanh(Wx+b) n=100 f64", layer_sum, "hessian", layer_data(), hess_closed,
                  np.float64),
        "4": Case(f"grad elementwise chain n={n4_name} f64", chain, "grad", (x4,), chain_grad_closed,
                  np.float64),
    }


def _versions(names: set) -> str:
    out = [f"numpy {np.__version__}"]
    for mod in ("jax", "torch"):
        if any(n.startswith(mod) for n in names):
            m = optional(mod)
            out.append(f"{mod} {m.__version__ if m else 'not installed'}")
    return "; ".join(out)


def main(a) -> None:
    names = set(filter(None, a.contestants.split(",")))
    unknown = names - set(CONTESTANTS)
    if unknown:
        sys.exit(f"--contestants: unknown {sorted(unknown)}; expected some of {list(CONTESTANTS)}")
    if "jax" in names and optional("jax") is not None:
        import jax

        jax.config.update("jax_enable_x64", True)  # cases 2-4 are float64; case 1's float32 stays float32
    if names & {"torch", "torch.compile"} and optional("torch") is not None:
        import torch

        torch.set_num_threads(THREADS)
    budget = dict(min_time=0.02, min_runs=3) if a.quick else dict(min_time=0.5, min_runs=7)
    checks, notes, rows = [], [], []
    res = Results("func")
    wanted = set(filter(None, a.cases.split(",")))
    if wanted - set("12345"):
        sys.exit(f"--cases: unknown {sorted(wanted - set('12345'))}; expected some of 1,2,3,4,5")
    for key, case in cases(a.quick).items():
        if key in wanted:
            rows.append(run_case(case, names, budget, checks, notes))
    print("## checks against the numpy closed form "
          "(float32: rtol 2e-4, atol 2e-5; float64: rtol 1e-9, atol 1e-11)")
    for c in checks:
        print(f"  {c[0]:<36} {c[1]:<14} {c[2]:<7} {c[3]}")
    compiled = ["aot", "jax.jit", "torch.compile", "torch.func", "numpy"]
    eager = ["aot eager", "torch.func"]
    if rows:
        print_table("compiled transforms (torch.func: eager, for reference)",
                    [{"case": r["case"], **{k: r[k] for k in compiled if k in r}} for r in rows], results=res)
        if "aot eager" in rows[0]:
            print_table("eager transforms (aot eager: traced once, run by numpy; float64 sin, cos, log and log1p "
                        "of large arrays by compiled kernels)",
                        [{"case": r["case"], **{k: r[k] for k in eager if k in r}} for r in rows],
                        baseline="aot eager", results=res)
    if "5" in wanted:
        fresh = run_fresh(names, 1 if a.quick else a.fresh, checks, notes, warm=not a.quick)
        if fresh:
            print_table("case 1's first call in a fresh process (trace + transform + compile; aot: an empty "
                        "AOT_CACHE_DIR and options={'disk_cache': False}; torch: "
                        "TORCHINDUCTOR_FORCE_DISABLE_CACHES=1; jax: no compilation cache)", fresh, results=res)
        for c in checks:
            if c[0] == "fresh process":
                print(f"  check {c[1]:<14} {c[2]:<7} {c[3]}")
    passive = "; OMP_WAIT_POLICY=%s, OPENBLAS_THREAD_TIMEOUT=%s" % (
        os.environ.get("OMP_WAIT_POLICY"), os.environ.get("OPENBLAS_THREAD_TIMEOUT")) if THREADS > 1 else ""
    print(f"\n{_versions(names)}; threads: {THREADS} for every contestant (pinned to {THREADS} core(s) of "
          f"{os.cpu_count()}; {', '.join(THREAD_VARS)}={THREADS}; torch.set_num_threads({THREADS}); "
          f"XLA: its pool follows the affinity{passive})")
    for note in notes:
        print("note:", note)
    if a.json:
        res.threads.update({n: THREADS for n in names})
        res.notes["notes"] = notes
        res.write(a.json)


if __name__ == "__main__":
    t_start = time.perf_counter()
    main(ARGS)
    print(f"total {time.perf_counter() - t_start:.1f} s")
