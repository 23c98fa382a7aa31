#!/usr/bin/env python3
"""Compile-time fuzzer: random small numpy programs through aot.compile; reports the slowest compiles.

Run: .venv/bin/python tools/fuzz_compile_time.py [-n 300] [--seed 0] [--limit 60] [--show SEED]

Each program (take, concatenate, flip, transposes, slices, transcendentals, broadcasting
arithmetic, reductions with var/std/min/max, odd shapes 1..17) is rebuilt from its seed, so a
slow one is reproduced with `--show SEED` (prints its source). Programs run one at a time in a
worker process that is killed after `--limit` seconds (a compile stuck in native code cannot be
interrupted otherwise); the watchdog of aot.compile is set above the limit so that the figure is
the real compile time. The time is that of the first call (capture, ir passes, LLVM) with the
disk cache off. Results are also checked against numpy.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
import time

UNARY = ["np.sin({})", "np.cos({})", "np.exp({})", "np.sqrt(np.abs({}))", "np.abs({})", "-{}", "{} * {}",
         "np.tanh({})"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "{} / (1 + np.abs({}))", "np.maximum({}, {})",
          "np.minimum({}, {})"]
REDUCE = ["sum", "mean", "min", "max", "var", "std"]


class Program:
    """A random straight-line numpy function; `values` holds each name's example value."""

    def __init__(self, seed: int):
        import numpy as np

        self.np, self.rng = np, np.random.default_rng(seed)
        self.dtype = np.float32 if self.rng.random() < 0.25 else np.float64
        self.args = self._inputs()
        self.values = dict(zip(self.names, self.args))
        self.lines: list[str] = []
        for _ in range(int(self.rng.integers(2, 10))):
            self._statement()
        self.outputs = self._outputs()

    # --- inputs and outputs ------------------------------------------------------------------
    def _inputs(self):
        rng, dims = self.rng, [int(d) for d in self.rng.integers(1, 18, size=3)]
        shapes = [tuple(dims[: int(rng.integers(1, 4))])]
        for _ in range(int(rng.integers(0, 3))):
            s = list(shapes[0])
            choice = rng.integers(0, 4)
            if choice == 0 and len(s) > 1:
                s = s[1:]  # broadcasts against the first input
            elif choice == 1:
                s[int(rng.integers(0, len(s)))] = 1
            elif choice == 2:
                s[0] = int(rng.integers(1, 18))  # concatenable along axis 0
            shapes.append(tuple(s))
        self.names = [chr(ord("a") + i) for i in range(len(shapes))]
        return [rng.random(s).astype(self.dtype) for s in shapes]

    def _outputs(self):
        names = list(self.values)[len(self.args):] or self.names
        k = min(len(names), int(self.rng.integers(1, 5)))
        picks = [names[-1]] + list(self.rng.choice(names, size=k - 1, replace=True))
        outs = []
        for n in picks:  # some outputs reduced on the way out, like `v.sum()`
            outs.append(f"{n}.{self.rng.choice(REDUCE[:4])}()" if self.rng.random() < 0.3 else n)
        return outs

    # --- statements --------------------------------------------------------------------------
    def _statement(self):
        for _ in range(20):  # retry until an expression is valid numpy for these shapes
            expr = self._expr()
            if expr is None:
                continue
            try:
                value = eval(expr, {"np": self.np}, dict(self.values))
            except Exception:  # noqa: BLE001 - an invalid random choice: draw again
                continue
            if getattr(value, "size", 1) == 0:
                continue
            name = f"t{len(self.lines)}"
            self.values[name] = value
            self.lines.append(f"{name} = {expr}")
            return

    def _pick(self):
        names = list(self.values)
        return names[int(self.rng.integers(0, len(names)))] if self.rng.random() < 0.5 else names[-1]

    def _expr(self) -> str | None:
        rng, x = self.rng, self._pick()
        v = self.values[x]
        nd = getattr(v, "ndim", 0)
        kind = rng.choice(["unary", "binary", "scalar", "take", "concat", "flip", "T", "slice", "reduce"],
                          p=[.17, .17, .08, .12, .12, .1, .06, .06, .12])
        if kind == "unary":
            return rng.choice(UNARY).format(x, x)
        if kind == "binary":
            return rng.choice(BINARY).format(x, self._pick())
        if kind == "scalar":
            return f"{x} {rng.choice(['+', '*', '-'])} {float(rng.integers(1, 5))}"
        if nd == 0:
            return None
        axis = int(rng.integers(-nd, nd))
        if kind == "take":
            n = v.shape[axis]
            idx = [int(i) for i in rng.integers(0, n, size=int(rng.integers(1, 4)))]
            return f"np.take({x}, {idx}, axis={axis})"
        if kind == "concat":
            other = self._pick()
            second = other if rng.random() < 0.5 else rng.choice(UNARY[:3]).format(x)
            return f"np.concatenate(({x}, {second}), axis={axis})"
        if kind == "flip":
            return f"np.flip({x}, {axis})"
        if kind == "T":
            return f"{x}.T"
        if kind == "slice":
            return f"{x}[{rng.choice(['::2', '1:', '::-1', ':-1'])}]"
        op, keep = rng.choice(REDUCE), bool(rng.random() < 0.3)
        ax = "None" if rng.random() < 0.4 else str(axis)
        return f"np.{op}({x}, axis={ax}, keepdims={keep})" if op != "var" or rng.random() < 0.5 \
            else f"np.var({x})"

    def source(self) -> str:
        body = "\n".join(f"    {line}" for line in self.lines)
        return f"def f({', '.join(self.names)}):\n{body}\n    return {', '.join(self.outputs)},\n"

    def function(self):
        ns = {"np": self.np}
        exec(self.source(), ns)
        return ns["f"]


# --- worker process --------------------------------------------------------------------------
def run_one(seed: int, budget: float) -> dict:
    import warnings

    import numpy as np

    import aot

    prog = Program(seed)
    fn = prog.function()
    ref = fn(*prog.args)
    f = aot.compile(fn, options={"disk_cache": False, "compile_timeout": budget})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            out = f(*prog.args)
        except Exception as e:  # noqa: BLE001 - reported, the fuzzer goes on
            return {"seed": seed, "seconds": time.perf_counter() - t0, "error": f"{type(e).__name__}: {e}"}
        seconds = time.perf_counter() - t0
    info = f.cache_info()
    rtol = 1e-4 if prog.dtype == np.float32 else 1e-9
    ok = all(np.allclose(o, r, rtol=rtol, atol=rtol, equal_nan=True) for o, r in zip(out, ref))
    return {"seed": seed, "seconds": seconds, "eager": bool(info["eager_fallbacks"]),
            "warnings": [str(w.message)[:200] for w in caught], "mismatch": not ok}


def worker(conn, budget: float) -> None:
    while True:
        seed = conn.recv()
        if seed is None:
            return
        conn.send(run_one(seed, budget))


class Runner:
    """One worker process at a time; a program that overruns the limit kills it."""

    def __init__(self, limit: float):
        self.limit, self.proc = limit, None
        self.ctx = mp.get_context("spawn")

    def run(self, seed: int) -> dict:
        if self.proc is None:
            self.conn, child = self.ctx.Pipe()
            self.proc = self.ctx.Process(target=worker, args=(child, 4 * self.limit), daemon=True)
            self.proc.start()
        self.conn.send(seed)
        if self.conn.poll(self.limit):
            return self.conn.recv()
        self.proc.kill()
        self.proc.join()
        self.proc = None
        return {"seed": seed, "seconds": self.limit, "hang": True}

    def close(self):
        if self.proc is not None:
            self.conn.send(None)
            self.proc.join(5)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=300, help="number of programs")
    ap.add_argument("--seed", type=int, default=0, help="first program seed")
    ap.add_argument("--limit", type=float, default=60.0, help="seconds before a compile counts as hung")
    ap.add_argument("--show", type=int, help="print the source of the program of this seed and exit")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per program")
    args = ap.parse_args(argv)
    if args.show is not None:
        print(Program(args.show).source())
        return 0
    runner, results = Runner(args.limit), []
    t_start = time.perf_counter()
    try:
        for seed in range(args.seed, args.seed + args.n):
            r = runner.run(seed)
            results.append(r)
            if args.verbose or r.get("hang") or r.get("error") or r.get("mismatch"):
                print(f"seed {seed}: {r['seconds']:.2f} s {_flags(r)}", flush=True)
    finally:
        runner.close()
    _summary(results, time.perf_counter() - t_start)
    return 1 if any(r.get("hang") for r in results) else 0


def _flags(r: dict) -> str:
    flags = " ".join(k for k in ("hang", "eager", "mismatch") if r.get(k))
    return flags + (f" {r['error']}" if r.get("error") else "")


def _summary(results: list[dict], wall: float) -> None:
    times = sorted(r["seconds"] for r in results if not r.get("hang"))
    hangs = [r["seed"] for r in results if r.get("hang")]
    print(f"\nprograms: {len(results)}  (wall {wall:.0f} s)")
    print(f"hung (> limit): {len(hangs)} {hangs[:20]}")
    print(f"errors: {sum(bool(r.get('error')) for r in results)}  mismatches vs numpy: "
          f"{sum(bool(r.get('mismatch')) for r in results)}  graph breaks (eager): "
          f"{sum(bool(r.get('eager')) for r in results)}")
    if times:
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        print(f"first-call compile time: median {statistics.median(times):.3f} s  p99 {p99:.3f} s  "
              f"max {times[-1]:.3f} s")
    slow = sorted(results, key=lambda r: -r["seconds"])[:5]
    print("slowest: " + ", ".join(f"seed {r['seed']} {r['seconds']:.2f} s" for r in slow))


if __name__ == "__main__":
    sys.exit(main())
