#!/usr/bin/env python3
"""A tour of aot in one script (run by `make demo`; smoke-tested by tests/test_examples.py).

Each section shows one capability and checks its result against numpy.
"""
from __future__ import annotations

import time

import numpy as np

import aot
from aot import fx


def section(title: str) -> None:
    print(f"\n=== {title} ===")


def chain(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


def demo_compile() -> None:
    section("aot.compile: numpy in, fused native code out")
    f = aot.compile(chain)
    rng = np.random.default_rng(0)
    x, y = rng.random(1_000_000), rng.random(1_000_000)
    t0 = time.perf_counter()
    out = f(x, y)
    first = time.perf_counter() - t0
    np.testing.assert_allclose(out, chain(x, y), rtol=1e-13)
    t0 = time.perf_counter()
    f(x, y)
    warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    chain(x, y)
    ref = time.perf_counter() - t0
    print(f"first call {first * 1e3:.1f} ms (trace + compile + run), warm call {warm * 1e3:.2f} ms, "
          f"numpy {ref * 1e3:.2f} ms")
    print("cache:", {k: v for k, v in f.cache_info().items() if k != "entries"})


def demo_dynamic() -> None:
    section("shapes: one artifact for many lengths (automatic dynamic)")
    f = aot.compile(lambda x: (x - x.mean()) / x.std())
    for n in range(100, 120):
        x = np.random.default_rng(n).random(n)
        np.testing.assert_allclose(f(x), (x - x.mean()) / x.std(), rtol=1e-12)
    info = f.cache_info()
    print(f"20 lengths -> {info['compiles']} compiles; guards of the dynamic entry:")
    for g in info["entries"][-1]["guards"]:
        print("   ", g)


def demo_explain() -> None:
    section("aot.explain: what compile would capture")

    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    print(aot.explain(softmax, np.ones((4, 8), np.float32)))


def demo_fx() -> None:
    section("aot.fx: torch.fx on numpy")

    class Net(aot.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = aot.nn.Linear(4, 5)

        def forward(self, x):
            return np.clip(self.linear(x), 0.0, 1.0)

    gm = fx.symbolic_trace(Net())
    print(gm.code.strip())
    x = np.random.default_rng(1).random((3, 4))
    np.testing.assert_allclose(gm(x), np.clip(x @ gm.linear.weight.T + gm.linear.bias, 0.0, 1.0))


def demo_ir() -> None:
    section("the ir dialect after fusion")
    from aot.compiler.llvm_backend import build_ir
    from aot.fx.experimental.proxy_tensor import make_fx
    from ir import print_module

    gm = make_fx(chain, tracing_mode="symbolic")(np.ones(8), np.ones(8))
    print(print_module(build_ir(gm)))


def main() -> None:
    demo_compile()
    demo_dynamic()
    demo_explain()
    demo_fx()
    demo_ir()
    print("\nquickstart: all checks passed")


if __name__ == "__main__":
    main()
