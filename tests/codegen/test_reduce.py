"""Reductions (tensor-level rows and a fused kernel.reduce body) against numpy: every kind, axes
subsets with and without keepdims, strided input, nan semantics, empty axes, threads."""

from __future__ import annotations

import numpy as np
import pytest

import ir
from ir import dtypes as D
from ir.core import Block, Region
from ir.opdef import OPDEFS
from ir.types import ScalarType, TensorType

from .helpers import add_tensor_op, jit

SHAPE = (5, 4, 37)
AXES = [(2,), (1,), (0, 2), (0, 1, 2)]
KINDS = ["sum", "prod", "max", "min", "any", "all"]
DTYPES = [D.float64, D.float32, D.int32, D.int64, D.bool_, D.complex128]


def _cases():
    out = []
    for kind in KINDS:
        for dt in DTYPES:
            if dt.is_complex and kind not in ("sum", "prod"):
                continue
            for j, axes in enumerate(AXES):
                out.append((kind, dt, {"axes": axes, "keepdims": j % 2 == 1}))
    for kind in ("argmax", "argmin"):
        for dt in (D.float64, D.float32, D.int32, D.bool_):
            for axis in (0, 2):
                out.append((kind, dt, {"axis": axis, "keepdims": axis == 0}))
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def fns():
    m = ir.Module("red")
    for i, (kind, dt, attrs) in enumerate(CASES):
        add_tensor_op(m, f"c{i}", kind, [TensorType(dt, SHAPE)], attrs)
    return jit(m)


def _data(dt, rng, shape=SHAPE):
    if dt.is_bool:
        return rng.random(shape) < 0.7
    if dt.is_int:
        return rng.integers(-3, 4, shape).astype(dt.numpy)
    x = rng.uniform(0.5, 1.5, shape)
    if dt.is_complex:
        x = x + 1j * rng.uniform(-0.2, 0.2, shape)
    return x.astype(dt.numpy)


def _check(got, want, dt):
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind in "bi":
        np.testing.assert_array_equal(got, want)
    else:
        rtol = 1e-5 if dt in (D.float32,) else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{k}-{d}-{a}" for k, d, a in CASES])
def test_reduction(fns, i):
    kind, dt, attrs = CASES[i]
    rng = np.random.default_rng(i)
    x = _data(dt, rng)
    ref = OPDEFS[kind].reference
    _check(fns[f"c{i}"](x), np.asarray(ref(x, **attrs)), dt)
    xt = np.ascontiguousarray(np.swapaxes(x, 0, 2)).swapaxes(0, 2)  # same values, strided layout
    _check(fns[f"c{i}"](xt), np.asarray(ref(x, **attrs)), dt)


@pytest.fixture(scope="module")
def nan_fns():
    m = ir.Module("nan")
    t = TensorType(D.float64, (3, 21))
    for kind in ("max", "min"):
        add_tensor_op(m, kind, kind, [t], {"axes": (1,), "keepdims": False})
    for kind in ("argmax", "argmin"):
        add_tensor_op(m, kind, kind, [t], {"axis": 1, "keepdims": False})
    add_tensor_op(m, "sum_empty", "sum", [TensorType(D.float64, (4, 0))], {"axes": (1,), "keepdims": False})
    add_tensor_op(m, "prod_empty", "prod", [TensorType(D.int32, (0, 3))], {"axes": (0,), "keepdims": True})
    return jit(m)


def test_nan_semantics(nan_fns):
    x = np.random.default_rng(0).normal(size=(3, 21))
    x[0, 5] = np.nan
    x[1, 20] = np.nan
    x[2, :] = -np.inf
    for kind in ("max", "min"):
        np.testing.assert_array_equal(nan_fns[kind](x), getattr(np, kind)(x, axis=1))
    for kind in ("argmax", "argmin"):
        np.testing.assert_array_equal(nan_fns[kind](x), getattr(np, kind)(x, axis=1))


def test_empty_reductions(nan_fns):
    np.testing.assert_array_equal(nan_fns["sum_empty"](np.zeros((4, 0))), np.zeros(4))
    got = nan_fns["prod_empty"](np.zeros((0, 3), np.int32))
    np.testing.assert_array_equal(got, np.ones((1, 3), np.int64))


def _sum_of_squares(m: ir.Module, name: str, shape, axes):
    """kernel.reduce(sum, axes) with body x*x in float64 (a fused producer)."""
    f, b = ir.new_func(m, name, [TensorType(D.float32, shape)])
    blk = Block([ScalarType(D.float32)])
    bb = ir.Builder(blk)
    (x,) = blk.args
    y = bb.cast(bb.mul(x, x), dtype=D.float64)
    bb.yield_(y)
    k = b.create(
        "kernel.reduce",
        list(f.args),
        {"shape": shape, "axes": axes, "kind": "sum", "keepdims": False, "dtype": D.float64},
        regions=[Region([blk])],
    )
    b.ret(*k.results)


@pytest.mark.parametrize("threads", [1, 4])
def test_fused_reduce_body_and_threads(threads):
    m = ir.Module("fused")
    _sum_of_squares(m, "rows", (300, 1001), (1,))
    _sum_of_squares(m, "cols", (300, 1001), (0,))
    _sum_of_squares(m, "all", (300, 1001), (0, 1))
    fns = jit(m, num_threads=threads, parallel_threshold=16)
    x = np.random.default_rng(1).normal(size=(300, 1001)).astype(np.float32)
    sq = (x * x).astype(np.float64)  # the body squares in float32, then widens
    np.testing.assert_allclose(fns["rows"](x), sq.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(fns["cols"](x), sq.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(fns["all"](x), sq.sum(), rtol=1e-12)


@pytest.mark.parametrize("kind", ["sum", "max", "any", "prod"])
def test_split_full_reductions(kind):
    """Few outputs, much work: the outermost reduced axis is split across threads."""
    shape = (1003, 257)
    m = ir.Module("split")
    dt = D.bool_ if kind == "any" else D.float64
    add_tensor_op(m, "full", kind, [TensorType(dt, shape)], {"axes": (0, 1), "keepdims": False})
    add_tensor_op(m, "keep", kind, [TensorType(dt, shape)], {"axes": (0,), "keepdims": True})
    add_tensor_op(m, "few", kind, [TensorType(dt, (3, 40001))], {"axes": (1,), "keepdims": False})
    serial = jit(m)
    m2 = ir.Module("split2")
    for name, s, axes, keep in [
        ("full", shape, (0, 1), False),
        ("keep", shape, (0,), True),
        ("few", (3, 40001), (1,), False),
    ]:
        add_tensor_op(m2, name, kind, [TensorType(dt, s)], {"axes": axes, "keepdims": keep})
    threaded = jit(m2, num_threads=4, parallel_threshold=1000)
    rng = np.random.default_rng(3)
    for name, s, attrs in [
        ("full", shape, {"axes": (0, 1), "keepdims": False}),
        ("keep", shape, {"axes": (0,), "keepdims": True}),
        ("few", (3, 40001), {"axes": (1,), "keepdims": False}),
    ]:
        x = rng.random(s) < 0.001 if kind == "any" else rng.uniform(0.999, 1.001, s)
        want = np.asarray(OPDEFS[kind].reference(x, **attrs))
        for fns in (serial, threaded):
            got = fns[name](x)
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-12)



def _row_max_ir(n: int) -> str:
    import codegen
    from codegen.entry import CodegenOptions

    m = ir.Module("row")
    add_tensor_op(m, "f", "max", [TensorType(D.float64, (6, n))], {"axes": (1,), "keepdims": False})
    return str(codegen.lower_module(m, None, CodegenOptions(num_threads=1, parallel_threshold=65536)))


def test_long_rows_prefetch_and_agree_with_numpy():
    """Rows longer than PREFETCH_BYTES prefetch ahead, clamped to the row's last element (the
    hints must never change a result, wherever the row ends); short static rows do not."""
    from codegen.kernels.reduce import PREFETCH_BYTES

    long_n, short_n = PREFETCH_BYTES // 8 * 3 + 5, PREFETCH_BYTES // 8 // 2
    assert "llvm.prefetch" in _row_max_ir(long_n)
    assert "llvm.prefetch" not in _row_max_ir(short_n)
    m = ir.Module("long")
    for kind in ("sum", "max", "min"):
        add_tensor_op(m, kind, kind, [TensorType(D.float64, (6, long_n))], {"axes": (1,), "keepdims": False})
    fns = jit(m, num_threads=2, parallel_threshold=16)
    x = np.random.default_rng(4).normal(size=(6, long_n))
    x[1, -1] = np.nan  # at the row's end, where the prefetch address is clamped
    x[2, long_n // 2] = np.nan
    x[3, :] = -np.inf
    np.testing.assert_allclose(fns["sum"](x), x.sum(axis=1), rtol=1e-12, equal_nan=True)
    for kind in ("max", "min"):
        np.testing.assert_array_equal(fns[kind](x), getattr(np, kind)(x, axis=1))
