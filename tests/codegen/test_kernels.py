"""kernel.elementwise over real layouts: empty and size-1 dims, 0-d, strided and negative-stride
inputs, static broadcasting, symbolic dims, and threaded execution (bit-identical to serial)."""

from __future__ import annotations

import numpy as np
import pytest

import ir
from ir import dtypes as D
from ir.core import Block, Region
from ir.symbols import size_symbol
from ir.types import ScalarType, TensorType

from .helpers import jit


def chain_func(m: ir.Module, name: str, tx: TensorType, ty: TensorType, shape) -> None:
    """sin(x)*exp(-y) + x*y/(1+y*y): the design doc's benchmark chain."""
    f, b = ir.new_func(m, name, [tx, ty])
    blk = Block([ScalarType(tx.dtype), ScalarType(ty.dtype)])
    bb = ir.Builder(blk)
    x, y = blk.args
    one = bb.create(
        "constant", [], {"value": np.array(1.0), "dtype": ty.dtype}, result_types=[ScalarType(ty.dtype)]
    ).results[0]
    r = bb.add(bb.mul(bb.sin(x), bb.exp(bb.neg(y))), bb.div(bb.mul(x, y), bb.add(one, bb.mul(y, y))))
    bb.yield_(r)
    k = b.create("kernel.elementwise", list(f.args), {"shape": tuple(shape)}, regions=[Region([blk])])
    b.ret(*k.results)


def chain_ref(x, y):
    return np.sin(x) * np.exp(-y) + x * y / (1 + y * y)


SHAPES = [(0,), (1,), (7,), (3, 0, 2), (1, 1), (5, 7), (2, 3, 17), ()]
BCAST = [((4, 17), (17,)), ((4, 17), (4, 1)), ((4, 17), ()), ((3, 1, 5), (1, 4, 1))]


@pytest.fixture(scope="module")
def fns():
    m = ir.Module("layouts")
    for i, s in enumerate(SHAPES):
        chain_func(m, f"s{i}", TensorType(D.float64, s), TensorType(D.float64, s), s)
    for i, (sx, sy) in enumerate(BCAST):
        out = np.broadcast_shapes(sx, sy)
        chain_func(m, f"b{i}", TensorType(D.float64, sx), TensorType(D.float64, sy), out)
    n, k = size_symbol("n"), size_symbol("k")
    chain_func(m, "sym", TensorType(D.float64, (n, k)), TensorType(D.float64, (k,)), (n, k))
    chain_func(m, "mixed", TensorType(D.float32, (33,)), TensorType(D.int32, (33,)), (33,))
    return jit(m)


@pytest.mark.parametrize("i", range(len(SHAPES)), ids=[str(s) for s in SHAPES])
def test_shapes(fns, i):
    rng = np.random.default_rng(i)
    x, y = rng.normal(size=SHAPES[i]), rng.normal(size=SHAPES[i])
    got = fns[f"s{i}"](x, y)
    assert got.shape == SHAPES[i]
    np.testing.assert_allclose(got, chain_ref(x, y), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("i", range(len(BCAST)), ids=[f"{a}-{b}" for a, b in BCAST])
def test_static_broadcast(fns, i):
    rng = np.random.default_rng(i)
    x, y = rng.normal(size=BCAST[i][0]), rng.normal(size=BCAST[i][1])
    np.testing.assert_allclose(fns[f"b{i}"](x, y), chain_ref(x, y), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("view", ["transposed", "stepped", "reversed", "broadcast_view"])
def test_strided_inputs(fns, view):
    rng = np.random.default_rng(3)
    base = rng.normal(size=(10, 42))
    x = {
        "transposed": rng.normal(size=(7, 5)).T,
        "stepped": base[::2, ::6],
        "reversed": base[::-2, ::-6],
        "broadcast_view": np.broadcast_to(rng.normal(size=(1, 7)), (5, 7)),
    }[view]
    assert x.shape == (5, 7) and not x.flags.c_contiguous
    y = rng.normal(size=(5, 7))
    np.testing.assert_allclose(fns["s5"](x, y), chain_ref(x, y), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(fns["s5"](y, x), chain_ref(y, x), rtol=1e-14, atol=1e-15)


def test_symbolic_dims(fns):
    rng = np.random.default_rng(4)
    for n, k in [(3, 5), (1, 40), (6, 1), (0, 3)]:
        x, y = rng.normal(size=(n, k)), rng.normal(size=k)
        got = fns["sym"](x, y)
        assert got.shape == (n, k)
        np.testing.assert_allclose(got, chain_ref(x, y), rtol=1e-14, atol=1e-15)
    with pytest.raises(ValueError, match="size k"):
        fns["sym"](np.zeros((2, 3)), np.zeros(4))


def test_mixed_dtypes_follow_numpy(fns):
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=33).astype(np.float32), rng.integers(-5, 5, 33).astype(np.int32)
    got = fns["mixed"](x, y)
    want = chain_ref(x, y)
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_bad_arguments_raise(fns):
    with pytest.raises(TypeError, match="dtype"):
        fns["s2"](np.zeros(7, np.float32), np.zeros(7))
    with pytest.raises(ValueError, match="dim 0 == 7"):
        fns["s2"](np.zeros(8), np.zeros(8))
    with pytest.raises(TypeError, match="takes 2"):
        fns["s2"](np.zeros(7))
    with pytest.raises(TypeError, match="numpy array"):
        fns["s2"]([0.0] * 7, np.zeros(7))


THREAD_SHAPES = [(100_003,), (3, 40_009), (257, 129)]


@pytest.mark.parametrize("shape", THREAD_SHAPES, ids=str)
def test_threads_bit_identical(shape):
    m = ir.Module("threads")
    t = TensorType(D.float64, shape)
    chain_func(m, "f", t, t, shape)
    serial = jit(m)["f"]
    m2 = ir.Module("threads2")
    chain_func(m2, "f", t, t, shape)
    threaded = jit(m2, num_threads=4, parallel_threshold=1000)["f"]
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=shape) * 100, rng.normal(size=shape)
    a, b = serial(x, y), threaded(x, y)
    np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))
    np.testing.assert_allclose(a, chain_ref(x, y), rtol=1e-13, atol=1e-14)
    xt = np.ascontiguousarray(x.T).T if len(shape) == 2 else x[::-1]  # strided: the scalar path
    np.testing.assert_array_equal(serial(xt, y).view(np.int64), threaded(xt, y).view(np.int64))
