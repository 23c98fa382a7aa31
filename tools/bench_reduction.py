#!/usr/bin/env python3
"""Reductions: aot vs numpy, numexpr, numba, torch's library kernels and torch.compile.

Cases, by table (sizes of a full run; --quick shrinks them):
  sum reduction        sum(x*x + y) f64 N=1e7
  row softmax          row softmax f32 (4096, 1024)
  full reductions      np.argmax(x) f64 N=1e7; np.max(x) f64 N=1e7 (numpy's NaN-propagating max; the
                       data has no NaNs); np.all(x < 2.0) f64 N=1e7 (true, so every element is read)
  axis reductions      x.sum(axis=1), x.sum(axis=0), x.max(axis=1), x.max(axis=0) f64 (4096, 4096);
                       np.argmax(x, axis=1) f32 (4096, 4096)
  row normalisations   log_softmax over rows f32 (4096, 1024): x - m - log(sum(exp(x - m))), m the row
                       max; layer norm over the last axis f32 (4096, 1024) with weight and bias, eps 1e-5

Contestants of the last three tables: aot (aot.compile of the numpy function), numpy, numba_par
(numba.njit(parallel=True, fastmath=False), prange loops), torch (the library kernel: torch.sum /
amax / argmax / all / log_softmax / nn.functional.layer_norm on torch.from_numpy tensors) and
torch.compile (of that torch function). Every result is checked against numpy before it is timed:
float64 rtol 1e-9, float32 rtol 1e-5 / atol 1e-6; max, argmax and all exactly.
Threads: torch.set_num_threads(os.cpu_count()); numba and aot at their defaults (the JSON records them).
Timing: the contestants of a case take 5 turns each (benchlib.settled_medians: 0.3 s of sleep and a
warm-up call before each turn, then ~40 ms of calls); the medians of all their calls.

Run: .venv/bin/python tools/bench_reduction.py [--quick] [--only SUBSTRING] [--json PATH]
  --quick: small sizes and few repeats, to check that the script works (its times mean nothing)
  --only:  run only the cases whose name contains SUBSTRING (e.g. "axis=0", "argmax", "softmax")
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Results, add_json_option, optional, print_table, settled_medians

torch = optional("torch")  # import torch before numba (both bundle LLVM/OpenMP runtimes)
numexpr = optional("numexpr")
numba = optional("numba")

THREADS = os.cpu_count() or 1
EPS = 1e-5  # layer norm's


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


def bench_sum(n=10_000_000, budget=None):
    import aot

    budget = budget or {}
    rng = np.random.default_rng(0)
    x, y = rng.random(n), rng.random(n)
    ref = sumsq_np(x, y)
    cs = {"aot": aot.compile(sumsq_np), "numpy": sumsq_np}
    if numexpr is not None:
        cs["numexpr"] = lambda x, y: numexpr.evaluate("sum(x*x + y)")
    if numba is not None:
        cs["numba"] = numba.njit(_sumsq_loop)
        cs["numba_par"] = numba.njit(parallel=True)(_sumsq_ploop)
    timed = {}
    for name, fn in cs.items():
        np.testing.assert_allclose(fn(x, y), ref, rtol=1e-9, err_msg=name)
        timed[name] = lambda fn=fn: fn(x, y)
    if torch is not None:
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        tf = torch.compile(lambda a, b: torch.sum(a * a + b))
        np.testing.assert_allclose(float(tf(tx, ty)), ref, rtol=1e-9)
        timed["torch.compile"] = lambda: tf(tx, ty)
    return {"case": f"sum(x*x+y) f64 N={n:.0e}", **settled_medians(timed, **budget)}


def bench_softmax(shape=(4096, 1024), budget=None):
    import aot

    budget = budget or {}
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ref = softmax_np(x)
    cs = {"aot": aot.compile(softmax_np), "numpy": softmax_np}
    timed = {}
    for name, fn in cs.items():
        np.testing.assert_allclose(fn(x), ref, rtol=1e-5, atol=1e-7, err_msg=name)
        timed[name] = lambda fn=fn: fn(x)
    if torch is not None:
        tx = torch.from_numpy(x)
        np.testing.assert_allclose(torch.softmax(tx, dim=1).numpy(), ref, rtol=1e-5, atol=1e-7,
                                   err_msg="torch.softmax")
        timed["torch.softmax"] = lambda: torch.softmax(tx, dim=1)
        tf = torch.compile(lambda a: torch.softmax(a, dim=1))
        np.testing.assert_allclose(tf(tx).numpy(), ref, rtol=1e-5, atol=1e-7)
        timed["torch.compile"] = lambda: tf(tx)
    return {"case": f"row softmax f32 {shape}", **settled_medians(timed, **budget)}


# --- the numpy functions of the new cases (compiled by aot.compile, and numpy's own entry) -----------
def sum_rows_np(x):
    return x.sum(axis=1)


def sum_cols_np(x):
    return x.sum(axis=0)


def max_rows_np(x):
    return x.max(axis=1)


def max_cols_np(x):
    return x.max(axis=0)


def argmax_rows_np(x):
    return np.argmax(x, axis=1)


def argmax_np(x):
    return np.argmax(x)


def max_np(x):
    return np.max(x)


def all_np(x):
    return np.all(x < 2.0)


def log_softmax_np(x):
    m = np.max(x, axis=1, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))


def layer_norm_np(x, w, b):
    mu = x.mean(1, keepdims=True)
    var = ((x - mu) ** 2).mean(1, keepdims=True)
    return (x - mu) / np.sqrt(var + EPS) * w + b


# --- numba: numba.njit(parallel=True, fastmath=False) of these prange loops ---------------------------
def _nb_sum_rows(x):
    n, m = x.shape
    out = np.empty(n, dtype=x.dtype)
    for i in numba.prange(n):
        s = 0.0
        for j in range(m):
            s += x[i, j]
        out[i] = s
    return out


def _nb_sum_cols(x):  # one output column per prange iteration (each thread a block of columns)
    n, m = x.shape
    out = np.empty(m, dtype=x.dtype)
    for j in numba.prange(m):
        s = 0.0
        for i in range(n):
            s += x[i, j]
        out[j] = s
    return out


def _nb_max_rows(x):
    n, m = x.shape
    out = np.empty(n, dtype=x.dtype)
    for i in numba.prange(n):
        v = x[i, 0]
        for j in range(1, m):
            v = max(v, x[i, j])
        out[i] = v
    return out


def _nb_max_cols(x):
    n, m = x.shape
    out = np.empty(m, dtype=x.dtype)
    for j in numba.prange(m):
        v = x[0, j]
        for i in range(1, n):
            v = max(v, x[i, j])
        out[j] = v
    return out


def _nb_argmax_rows(x):
    n, m = x.shape
    out = np.empty(n, dtype=np.int64)
    for i in numba.prange(n):
        best, k = x[i, 0], 0
        for j in range(1, m):
            if x[i, j] > best:
                best, k = x[i, j], j
        out[i] = k
    return out


def _nb_argmax(x):  # prange has no argmax reduction: one chunk per thread, then the first best chunk
    n = x.shape[0]
    nc = numba.get_num_threads()
    step = (n + nc - 1) // nc
    vals = np.full(nc, -np.inf)
    idx = np.zeros(nc, dtype=np.int64)
    for c in numba.prange(nc):
        lo = c * step
        best, k = -np.inf, lo
        for i in range(lo, min(lo + step, n)):
            if x[i] > best:
                best, k = x[i], i
        vals[c], idx[c] = best, k
    best, k = vals[0], idx[0]
    for c in range(1, nc):
        if vals[c] > best:
            best, k = vals[c], idx[c]
    return k


def _nb_max(x):  # a prange max() reduction
    m = -np.inf
    for i in numba.prange(x.shape[0]):
        m = max(m, x[i])
    return m


def _nb_all(x):  # a prange += reduction (prange has no &= / and reduction); reads every element
    bad = 0
    for i in numba.prange(x.shape[0]):
        if not x[i] < 2.0:
            bad += 1
    return bad == 0


def _nb_log_softmax(x):
    n, m = x.shape
    out = np.empty_like(x)
    for i in numba.prange(n):
        mx = x[i, 0]
        for j in range(1, m):
            mx = max(mx, x[i, j])
        s = 0.0
        for j in range(m):
            s += np.exp(x[i, j] - mx)
        ls = np.log(s)
        for j in range(m):
            out[i, j] = x[i, j] - mx - ls
    return out


def _nb_layer_norm(x, w, b):
    n, m = x.shape
    out = np.empty_like(x)
    for i in numba.prange(n):
        s = 0.0
        for j in range(m):
            s += x[i, j]
        mu = s / m
        v = 0.0
        for j in range(m):
            d = x[i, j] - mu
            v += d * d
        r = 1.0 / np.sqrt(v / m + EPS)
        for j in range(m):
            out[i, j] = (x[i, j] - mu) * r * w[j] + b[j]
    return out


# --- torch: the library kernel (the "torch" column) and torch.compile of the same function ------------
def _t_sum_rows(t):
    return torch.sum(t, dim=1)


def _t_sum_cols(t):
    return torch.sum(t, dim=0)


def _t_max_rows(t):
    return torch.amax(t, dim=1)


def _t_max_cols(t):
    return torch.amax(t, dim=0)


def _t_argmax_rows(t):
    return torch.argmax(t, dim=1)


def _t_argmax(t):
    return torch.argmax(t)


def _t_max(t):
    return torch.amax(t)


def _t_all(t):
    return torch.all(t < 2.0)


def _t_log_softmax(t):
    return torch.log_softmax(t, dim=1)


def _t_layer_norm(t, w, b):
    return torch.nn.functional.layer_norm(t, (t.shape[-1],), w, b, EPS)


def _as_numpy(r):
    return r.numpy() if torch is not None and isinstance(r, torch.Tensor) else np.asarray(r)


def check(got, ref, kind: str, name: str) -> None:
    """got against numpy's ref: "f64" rtol 1e-9, "f32" rtol 1e-5 / atol 1e-6, "exact" equal; shape too."""
    got = _as_numpy(got)
    ref = np.asarray(ref)
    assert got.shape == ref.shape, f"{name}: shape {got.shape}, numpy's {ref.shape}"
    if kind == "exact":
        np.testing.assert_array_equal(got, ref, err_msg=name)
    else:
        tol = {"rtol": 1e-9} if kind == "f64" else {"rtol": 1e-5, "atol": 1e-6}
        np.testing.assert_allclose(got, ref, err_msg=name, **tol)


def run_case(label: str, args: tuple, np_fn, nb_loop, t_fn, kind: str, budget: dict) -> dict:
    """One row: aot, numpy, numba_par, torch, torch.compile, each checked against numpy, then timed."""
    import aot

    ref = np_fn(*args)
    cs = {"aot": aot.compile(np_fn), "numpy": np_fn}
    if numba is not None:
        cs["numba_par"] = numba.njit(parallel=True, fastmath=False)(nb_loop)
    if torch is not None:
        targs = tuple(torch.from_numpy(a) for a in args)
        cs["torch"] = (t_fn, targs)
        cs["torch.compile"] = (torch.compile(t_fn), targs)
    timed = {}
    for name, fn in cs.items():
        fn, fargs = fn if isinstance(fn, tuple) else (fn, args)
        check(fn(*fargs), ref, kind, name)
        timed[name] = lambda fn=fn, fargs=fargs: fn(*fargs)
    return {"case": label, **settled_medians(timed, **budget)}


def _uniform(shape, dtype, seed=0):
    return np.random.default_rng(seed).random(shape).astype(dtype, copy=False)


def _normal(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype, copy=False)


def cases(quick: bool) -> list[tuple[str, str, object]]:
    """(table, case name, () -> row) of every case, in table order; --only matches the case name."""
    n = 100_000 if quick else 10_000_000
    sq = (384, 512) if quick else (4096, 4096)  # quick: not square, so a wrong axis cannot pass
    rn = (256, 128) if quick else (4096, 1024)
    b = {"min_time": 0.01, "min_runs": 2, "rounds": 1, "settle": 0.0} if quick else {}

    def axis(name, np_fn, nb, t_fn, kind, dtype=np.float64):
        return ("axis reductions", name,
                lambda: run_case(f"{name} {np.dtype(dtype).name} {sq}", (_uniform(sq, dtype),), np_fn, nb, t_fn,
                                 kind, b))

    def full(name, np_fn, nb, t_fn, kind):
        return ("full reductions", name,
                lambda: run_case(f"{name} f64 N={n:.0e}", (_uniform(n, np.float64),), np_fn, nb, t_fn, kind, b))

    def layer_norm_row():
        x = _normal(rn, np.float32)
        w, bias = _normal(rn[1], np.float32, seed=1), _normal(rn[1], np.float32, seed=2)
        return run_case(f"layer_norm rows+w+b f32 {rn}", (x, w, bias), layer_norm_np, _nb_layer_norm,
                        _t_layer_norm, "f32", b)

    return [
        ("sum reduction", "sum(x*x+y)", lambda: bench_sum(n, b)),
        ("row softmax", "row softmax", lambda: bench_softmax(rn, b)),
        full("argmax(x)", argmax_np, _nb_argmax, _t_argmax, "exact"),
        full("max(x)", max_np, _nb_max, _t_max, "exact"),
        full("all(x < 2.0)", all_np, _nb_all, _t_all, "exact"),
        axis("sum axis=1", sum_rows_np, _nb_sum_rows, _t_sum_rows, "f64"),
        axis("sum axis=0", sum_cols_np, _nb_sum_cols, _t_sum_cols, "f64"),
        axis("max axis=1", max_rows_np, _nb_max_rows, _t_max_rows, "exact"),
        axis("max axis=0", max_cols_np, _nb_max_cols, _t_max_cols, "exact"),
        axis("argmax axis=1", argmax_rows_np, _nb_argmax_rows, _t_argmax_rows, "exact", np.float32),
        ("row normalisations", "log_softmax rows",
         lambda: run_case(f"log_softmax rows f32 {rn}", (_normal(rn, np.float32),), log_softmax_np,
                          _nb_log_softmax, _t_log_softmax, "f32", b)),
        ("row normalisations", "layer_norm rows+w+b", layer_norm_row),
    ]


TABLE_NOTES = {
    "full reductions": {"torch": "torch.argmax(t) / torch.amax(t) / torch.all(t < 2.0)",
                        "numba_par": "argmax: one chunk per numba thread in a prange, then the first best "
                                     "chunk; max: a prange max() reduction; all: a prange count of x[i] "
                                     "not < 2.0 (no early exit)"},
    "axis reductions": {"torch": "torch.sum / torch.amax / torch.argmax with dim=",
                        "numba_par": "prange over the outputs (rows for axis=1, columns for axis=0), a "
                                     "sequential loop over the reduced axis"},
    "row normalisations": {"torch": "torch.log_softmax(t, dim=1) / "
                                    "torch.nn.functional.layer_norm(t, (n,), w, b, 1e-5)",
                           "numba_par": "prange over rows, float64 accumulators"},
}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="small sizes and few repeats: checks that the script works; its times mean nothing")
    p.add_argument("--only", metavar="SUBSTRING", default="",
                   help="run only the cases whose name contains SUBSTRING")
    add_json_option(p)
    a = p.parse_args(argv)
    if torch is not None:
        torch.set_num_threads(THREADS)
    chosen = [c for c in cases(a.quick) if a.only in c[1]]
    if not chosen:
        sys.exit(f"--only {a.only!r}: no case; the cases are {[c[1] for c in cases(a.quick)]}")
    res = Results("reduction")
    res.notes["threads"] = (f"torch.set_num_threads(os.cpu_count() = {THREADS}); numba and aot at their "
                            "defaults (see 'threads')")
    res.notes["checks"] = ("each contestant's result against numpy before timing: float64 rtol 1e-9, "
                           "float32 rtol 1e-5 / atol 1e-6 (row softmax: rtol 1e-5 / atol 1e-7), "
                           "max / argmax / all exactly")
    if a.quick:
        res.notes["quick"] = "--quick: small sizes, few repeats; the times mean nothing"
    tables: dict[str, list[dict]] = {}
    for table, _name, run in chosen:
        tables.setdefault(table, []).append(run())
    for title, rows in tables.items():
        print_table(title, rows, results=res, notes=TABLE_NOTES.get(title))
    if a.json:
        res.write(a.json)


if __name__ == "__main__":
    main()
