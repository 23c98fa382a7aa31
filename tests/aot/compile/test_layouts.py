"""Strided, broadcast and transposed inputs through fused chains and reductions; inputs that alias
each other; outputs that must never alias inputs (the caller owns every buffer)."""
from __future__ import annotations

import numpy as np
import pytest

import aot

from ._support import assert_same, layouts, make, reference

RTOL = {"float32": 2e-6, "float64": 5e-15, "complex128": 5e-15}


def fused_chain(x, y):
    return np.exp(-x * x) * y + np.sin(y) / (1 + x * x)


def with_reductions(x, y):
    t = np.tanh(x) * y
    return (t.sum(axis=0), (x * 2).max(axis=1, keepdims=True), np.mean(t), (x - y).argmax(axis=0),
            np.abs(t).min(axis=(0, 1)))


def mixed_views(x, y):
    return (x.T * y.T + 1, (x[::-1] * y[:, ::-2].sum(axis=1, keepdims=True)), x[1:, None, :] - y[:-1, :, None][..., :1])


PROGRAMS = [fused_chain, with_reductions, mixed_views]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_every_layout_pair(program, dtype):
    """Every pair of input layouts (36): the entry specialised on C-contiguous arguments, then one
    recompile per argument first seen in another layout (its layout guard fails); every other pair
    reuses one of those three entries."""
    x, y = make(dtype, (4, 6), seed=1, specials=False), make(dtype, (4, 6), seed=2, specials=False)
    f = aot.compile(program)
    lx, ly = layouts(x), layouts(y)
    for nx, vx in lx.items():
        for ny, vy in ly.items():
            got, want = f(vx, vy), reference(program, vx, vy)
            for k, (g, w) in enumerate(zip(got if isinstance(got, tuple) else (got,),
                                           want if isinstance(want, tuple) else (want,))):
                assert_same(g, w, RTOL[dtype] * (8 if w.ndim == 0 or k == 0 else 1), f"{nx} x {ny} result {k}")
    assert f.cache_info()["compiles"] == 3


def test_large_strided_inputs_take_the_vector_and_threaded_paths():
    rng = np.random.default_rng(0)
    big = rng.standard_normal((600, 700))
    views = {"T": big.T, "stepped": big[::2, ::-3], "broadcast": np.broadcast_to(big[:1], big.shape),
             "fortran": np.asfortranarray(big)}
    f = aot.compile(lambda a: (np.exp(a * 0.1) * a, (a * a).sum(axis=0), (a * a).sum(axis=1), a.max()))
    for name, v in views.items():
        got, want = f(v), reference(lambda a: (np.exp(a * 0.1) * a, (a * a).sum(axis=0), (a * a).sum(axis=1),
                                                 a.max()), v)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, 1e-12, f"{name} result {k}")


# --- inputs that alias each other -------------------------------------------------------------------
def test_same_array_passed_twice():
    x = make("float64", (5, 5), seed=3, specials=False)
    fn = lambda a, b: (a * b - a, a + b.T, (a - b).sum())
    f = aot.compile(fn)
    for got, want in zip(f(x, x), fn(x, x)):
        assert_same(got, want, 5e-15)
    y = x.copy()
    for got, want in zip(f(x, y), fn(x, y)):  # the same guards hold for distinct arrays
        assert_same(got, want, 5e-15)


def test_overlapping_views():
    a = np.arange(40.0)
    fn = lambda p, q: (p - q, p * q, (p + q).sum())
    f = aot.compile(fn)
    for p, q in ((a[:-1], a[1:]), (a[1:], a[:-1]), (a[::2][:10], a[::-2][:10]), (a[5:25], a[15:35])):
        for got, want in zip(f(p, q), fn(p, q)):
            assert_same(got, want, 5e-15)
        assert np.array_equal(a, np.arange(40.0))  # inputs untouched


def test_input_and_its_transpose_in_one_graph():
    x = make("float64", (6, 6), seed=4, specials=False)
    fn = lambda a: (a + a.T, a @ a.T, (a * a.T).sum(axis=1))
    for got, want in zip(aot.compile(fn)(x), fn(x)):
        assert_same(got, want, 1e-13)


# --- outputs ----------------------------------------------------------------------------------------
def _assert_fresh(outs, inputs):
    for k, o in enumerate(outs):
        assert isinstance(o, np.ndarray)
        for i, a in enumerate(inputs):
            assert o is not a and not np.shares_memory(o, a), f"output {k} aliases input {i}"
        assert o.flags.writeable, f"output {k} is read-only"


def test_outputs_never_alias_inputs():
    x = make("float64", (4, 6), seed=5, specials=False)
    y = make("float64", (6,), seed=6, specials=False)
    fn = lambda a, b: (a + b, a.T, a[::2], a.reshape(6, 4), np.broadcast_to(b, (4, 6)), a * 1, b[None])
    f = aot.compile(fn)
    outs = f(x, y)
    for got, want in zip(outs, fn(x, y)):
        assert_same(got, want, 5e-15)
    _assert_fresh(outs, (x, y))
    x0, y0 = x.copy(), y.copy()
    for o in outs:
        o[...] = -7  # writing an output changes neither the inputs nor the next call's results
    assert np.array_equal(x, x0) and np.array_equal(y, y0)
    for got, want in zip(f(x, y), fn(x, y)):
        assert_same(got, want, 5e-15)


@pytest.mark.parametrize("fn, dtype", [(lambda a: a.copy(), "float64"), (np.positive, "float64"),
                                       (lambda a: a.astype(a.dtype), "float64"), (np.abs, "bool"),
                                       (np.copy, "int64"), (np.floor, "int32")],
                         ids=["copy", "positive", "astype", "abs_bool", "np_copy", "floor_int"])
def test_copies_are_fresh(fn, dtype):
    x = make(dtype, (3, 4), seed=7, specials=False)
    out = aot.compile(fn)(x)
    assert_same(out, fn(x))
    _assert_fresh((out,), (x,))


def test_output_layout_is_c_contiguous():
    x = make("float64", (4, 6), seed=8, specials=False)
    outs = aot.compile(lambda a: (a.T * 2, a[:, ::-1] + 0, np.transpose(a[None], (2, 0, 1)) * 1))(np.asfortranarray(x))
    for o in outs:
        assert o.flags.c_contiguous


def test_dynamic_shapes_with_strided_inputs():
    f = aot.compile(lambda a: (a.T + 1, (a * a).sum(axis=0)), dynamic=True)
    for n in (3, 7, 2):
        x = make("float64", (n, 5), seed=n, specials=False)
        for v in (x, np.asfortranarray(x), x[::-1]):
            for got, want in zip(f(v), (v.T + 1, (v * v).sum(axis=0))):
                assert_same(got, want, 5e-15)


# --- state captured from closures -----------------------------------------------------------------
def test_captured_strided_arrays_are_read_at_each_call():
    w = np.arange(12.0).reshape(3, 4).T  # a Fortran-ordered view, lifted as a graph input
    b = np.arange(8.0)[::-2]
    f = aot.compile(lambda x: (x + w, x.T @ w, x * b[:, None]))
    x = make("float64", (4, 3), seed=9, specials=False)
    for _ in range(2):
        for got, want in zip(f(x), (x + w, x.T @ w, x * b[:, None])):
            assert_same(got, want, 1e-13)
        w[0, 0], b[1] = 100.0, -3.0  # in-place updates are seen by the next call, as in numpy


@pytest.mark.xfail(strict=True, reason="capture evaluates numpy calls on captured arrays alone (w[::-1] * b) "
                                       "at trace time into a constant, so in-place updates of w are not "
                                       "seen, unlike direct uses of w (aot/compiler/capture.py)")
def test_expressions_of_captured_arrays_see_in_place_updates():
    w, b = np.arange(12.0).reshape(4, 3), np.arange(4.0)
    f = aot.compile(lambda x: x + w[::-1] * b[:, None])
    x = np.ones((4, 3))
    f(x)
    w[0, 0] = 100.0
    assert_same(f(x), x + w[::-1] * b[:, None], 1e-13)


def test_closure_scalar_change_is_guarded():
    k = 3.0
    f = aot.compile(lambda x: x * k)
    x = np.ones(4)
    assert_same(f(x), x * k, 0.0)
    k = 5.0
    assert_same(f(x), x * k, 0.0)
