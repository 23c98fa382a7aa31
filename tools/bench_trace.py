"""Time aot.fx on a 1,000-node graph: symbolic tracing, and regenerating + compiling the code.

Usage: python tools/bench_trace.py [--nodes N] [--repeat R]
Targets (issue 3): each under 0.2 s for 1,000 nodes.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from aot import fx

TARGET_S = 0.2


def make_chain(n_ops: int):
    """A function whose trace has ~n_ops nodes mixing operators, ufuncs, methods and indexing."""

    def chain(x, y):
        for i in range(n_ops // 4):
            x = np.sin(x) + y
            x = x * 0.5 - i
            y = x.sum(axis=0)[None] if i % 7 == 0 else y
        return x, y

    return chain


def best_of(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    fn = make_chain(args.nodes)
    gm = fx.symbolic_trace(fn)
    n_nodes = len(gm.graph.nodes)
    x, y = np.random.rand(8, 8), np.random.rand(8, 8)
    np.testing.assert_allclose(gm(x, y)[0], fn(x, y)[0])

    trace_best, trace_med = best_of(lambda: fx.symbolic_trace(fn), args.repeat)
    comp_best, comp_med = best_of(gm.recompile, args.repeat)
    lint_best, _ = best_of(gm.graph.lint, args.repeat)
    interp_best, _ = best_of(lambda: fx.Interpreter(gm).run(x, y), args.repeat)

    print(f"graph: {n_nodes} nodes, {len(gm.code.splitlines())} lines of generated code")
    rows = [("symbolic_trace", trace_best, trace_med), ("recompile", comp_best, comp_med)]
    for name, best, med in rows:
        verdict = "ok" if best < TARGET_S else "OVER TARGET"
        print(f"{name:15s} best {best * 1e3:7.1f} ms  median {med * 1e3:7.1f} ms  "
              f"(target < {TARGET_S * 1e3:.0f} ms: {verdict})")
    print(f"{'lint':15s} best {lint_best * 1e3:7.1f} ms")
    print(f"{'Interpreter.run':15s} best {interp_best * 1e3:7.1f} ms  (8x8 arrays)")


if __name__ == "__main__":
    main()
