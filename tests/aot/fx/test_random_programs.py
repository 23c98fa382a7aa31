"""Random numpy programs: the traced GraphModule, the Interpreter, an identity Transformer and a
pickled copy must all reproduce eager execution bit for bit (they run the same numpy calls)."""
from __future__ import annotations

import operator
import pickle

import numpy as np
import pytest

import aot.nn.functional as F
from aot import fx

UNARY = [
    np.sin, np.tanh, operator.neg, abs, F.relu, F.sigmoid,
    lambda a: a.T,
    lambda a: a - a.mean(axis=0),
    lambda a: a[::-1],
    lambda a: np.cumsum(a, axis=1) / 4,
    lambda a: a * 0.5 + 1,
    lambda a: a.astype(np.float64),
]
BINARY = [
    operator.add, operator.mul, np.maximum,
    lambda a, b: np.where(a > b, a, b),
    lambda a, b: a @ b / 4,
    lambda a, b: np.concatenate([a, b])[:4],
    lambda a, b: np.stack([a, b]).sum(axis=0),
    lambda a, b: F.softmax(a, dim=-1) * b,
]


def make_program(rng: np.random.Generator, n_ops: int):
    prog = []
    for i in range(n_ops):
        n_vals = i + 2
        if rng.random() < 0.5:
            prog.append((UNARY[rng.integers(len(UNARY))], (int(rng.integers(n_vals)),)))
        else:
            srcs = tuple(int(s) for s in rng.integers(n_vals, size=2))
            prog.append((BINARY[rng.integers(len(BINARY))], srcs))

    def program(x, y):
        vals = [x, y]
        for op, srcs in prog:
            vals.append(op(*(vals[s] for s in srcs)))
        return vals[-1], vals[-2]

    return program


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_program(seed, dtype):
    rng = np.random.default_rng(seed)
    program = make_program(rng, 25)
    x, y = (rng.standard_normal((4, 4)).astype(dtype) for _ in range(2))
    gm = fx.symbolic_trace(program)
    compile(gm.code, "<gm>", "exec")
    want = program(x, y)
    runners = (gm, fx.Interpreter(gm).run, fx.Transformer(gm).transform(), pickle.loads(pickle.dumps(gm)))
    for runner in runners:
        got = runner(x, y)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
    gm.graph.lint()
