"""Graph entry functions: kernels in sequence with intermediates, view ops as descriptor
arithmetic, copies (concatenate, stack, pad), creation ops, returned inputs, allocation failure."""

from __future__ import annotations

import numpy as np
import pytest

import ir
import runtime
from ir import dtypes as D
from ir.symbols import size_symbol
from ir.types import TensorType

from .helpers import jit

F64 = D.float64


def _module():
    m = ir.Module("entry")
    t = TensorType(F64, (4, 6))

    f, b = ir.new_func(m, "chain", [t, TensorType(F64, (6,))])
    x, y = f.args
    s = b.add(x, y)  # intermediate (4, 6)
    e = b.exp(b.neg(s))  # another intermediate, then a view of it
    r = b.sum(b.transpose(e, perm=(1, 0)), axes=(1,), keepdims=False)
    b.ret(r, s)

    f, b = ir.new_func(m, "views", [t])
    (x,) = f.args
    v = b.slice(x, starts=(3, 1), stops=(None, 6), steps=(-2, 2))  # (2, 3)
    v = b.flip(v, axes=(1,))
    v = b.expand_dims(v, axes=(0,))  # (1, 2, 3)
    v = b.broadcast_to(v, shape=(5, 2, 3))
    w = b.squeeze(b.expand_dims(b.transpose(x, perm=(1, 0)), axes=(2,)), axes=(2,))  # (6, 4)
    b.ret(b.mul(v, v), b.reshape(w, shape=(3, 8)), b.reshape(x, shape=(24,)))

    f, b = ir.new_func(m, "joins", [t, TensorType(F64, (2, 6))])
    x, z = f.args
    c = b.concatenate(x, z, axis=0)
    st = b.stack(z, z, z, axis=1)
    p = b.pad(z, pad_width=((1, 0), (2, 3)), value=-1.5)
    b.ret(c, st, p)

    f, b = ir.new_func(m, "create", [t])
    (x,) = f.args
    ones = b.full_like(x, value=1, dtype=D.int32)
    io = b.iota(n=7, dtype=F64)
    k = b.constant(value=np.arange(6.0).reshape(2, 3), dtype=F64)
    fu = b.full(shape=(2, 2), value=2.5, dtype=D.complex128)
    b.ret(ones, io, b.add(k, k), fu, x, x)

    n = size_symbol("n")
    f, b = ir.new_func(m, "huge", [TensorType(F64, (n,))])
    (x,) = f.args
    big = b.broadcast_to(b.exp(x), shape=(n, n, n))
    b.ret(b.sum(b.mul(big, big), axes=(0, 1), keepdims=False))
    return m


@pytest.fixture(scope="module")
def fns():
    return jit(_module())


def test_chain_with_intermediates(fns):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(4, 6)), rng.normal(size=6)
    r, s = fns["chain"](x, y)
    np.testing.assert_allclose(s, x + y, rtol=0)
    np.testing.assert_allclose(r, np.exp(-(x + y)).T.sum(axis=1), rtol=1e-14)


def test_views(fns):
    x = np.arange(24.0).reshape(4, 6)
    a, b, c = fns["views"](x)
    v = np.broadcast_to(x[3::-2, 1:6:2][:, ::-1][None], (5, 2, 3))
    np.testing.assert_array_equal(a, v * v)
    np.testing.assert_array_equal(b, x.T.reshape(3, 8))  # reshape of a non-contiguous view copies
    np.testing.assert_array_equal(c, x.reshape(24))
    xs = np.arange(48.0).reshape(4, 12)[:, ::2]  # strided input: reshape copies too
    np.testing.assert_array_equal(fns["views"](xs)[2], xs.reshape(24))


def test_joins(fns):
    rng = np.random.default_rng(1)
    x, z = rng.normal(size=(4, 6)), rng.normal(size=(2, 6))
    c, st, p = fns["joins"](x, z)
    np.testing.assert_array_equal(c, np.concatenate([x, z]))
    np.testing.assert_array_equal(st, np.stack([z, z, z], axis=1))
    np.testing.assert_array_equal(p, np.pad(z, ((1, 0), (2, 3)), constant_values=-1.5))


def test_creation_and_returned_inputs(fns):
    x = np.random.default_rng(2).normal(size=(4, 6))
    ones, io, k2, fu, x1, x2 = fns["create"](x)
    np.testing.assert_array_equal(ones, np.ones((4, 6), np.int32))
    np.testing.assert_array_equal(io, np.arange(7.0))
    np.testing.assert_array_equal(k2, 2 * np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(fu, np.full((2, 2), 2.5 + 0j))
    np.testing.assert_array_equal(x1, x)
    np.testing.assert_array_equal(x2, x)
    assert x1 is not x2 and not np.shares_memory(x1, x)


def test_allocation_failure_is_an_error(fns):
    small = np.zeros(3)
    np.testing.assert_allclose(fns["huge"](small), np.full(3, 9.0))
    with pytest.raises(runtime.NativeError, match="out of memory"):
        fns["huge"](np.zeros(1 << 22))  # (2^22)^3 doubles overflow 64 bits


MATMUL = [
    ((3, 5), (5, 4)),
    ((5,), (5, 4)),
    ((3, 5), (5,)),
    ((5,), (5,)),
    ((2, 1, 3, 5), (4, 5, 6)),
    ((17, 33), (33, 9)),
]


@pytest.mark.parametrize("dt", [D.float64, D.float32, D.int32, D.bool_, D.complex128])
def test_matmul(dt):
    m = ir.Module("mm")
    for i, (sa, sb) in enumerate(MATMUL):
        f, b = ir.new_func(m, f"mm{i}", [TensorType(dt, sa), TensorType(dt, sb)])
        b.ret(b.matmul(*f.args))
    f, b = ir.new_func(m, "mixed", [TensorType(D.int32, (3, 4)), TensorType(D.float32, (4, 2))])
    b.ret(b.matmul(*f.args))
    fns = jit(m)
    rng = np.random.default_rng(7)

    def data(shape, d):
        x = rng.integers(-3, 4, shape) if d.kind in "bi" else rng.normal(size=shape)
        return (x + 1j * rng.normal(size=shape) if d.is_complex else x).astype(d.numpy)

    for i, (sa, sb) in enumerate(MATMUL):
        x, y = data(sa, dt), data(sb, dt)
        xt = np.asfortranarray(x) if x.ndim == 2 else x  # a strided layout too
        for xx in (x, xt):
            got, want = fns[f"mm{i}"](xx, y), np.matmul(x, y)
            assert got.dtype == want.dtype and got.shape == want.shape
            tol = 1e-5 if dt == D.float32 else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=10 * tol)
    x, y = data((3, 4), D.int32), data((4, 2), D.float32)
    np.testing.assert_allclose(fns["mixed"](x, y), x @ y, rtol=1e-12)


def test_take():
    m = ir.Module("take")
    f, b = ir.new_func(m, "t0", [TensorType(F64, (5, 4)), TensorType(D.int64, (2, 3))])
    b.ret(b.take(*f.args, axis=0))
    f, b = ir.new_func(m, "t1", [TensorType(D.complex128, (3, 4, 2)), TensorType(D.int32, (5,))])
    b.ret(b.take(*f.args, axis=1))
    fns = jit(m, num_threads=2, parallel_threshold=4)
    x = np.arange(20.0).reshape(5, 4)
    idx = np.array([[0, 4, -1], [2, -5, 3]])
    np.testing.assert_array_equal(fns["t0"](x, idx), np.take(x, idx, axis=0))
    z = np.arange(24.0).reshape(3, 4, 2) * (1 + 2j)
    i1 = np.array([3, 0, -2, 1, 1], np.int32)
    np.testing.assert_array_equal(fns["t1"](z, i1), np.take(z, i1, axis=1))
    with pytest.raises(runtime.NativeError, match="index out of range"):
        fns["t0"](x, np.array([[0, 5, 0], [0, 0, 0]]))


def test_fused_pipeline_end_to_end():
    """Tensor ops -> canonicalize/fold/cse/dce/fuse -> LLVM -> native, with a symbolic dim,
    mixed dtypes, a keepdims reduction feeding an elementwise kernel, argmax and where."""
    from ir.passes import run_pipeline

    m = ir.Module("fz")
    n = size_symbol("n")
    f, b = ir.new_func(m, "f", [TensorType(F64, (n, 8)), TensorType(D.float32, (8,))])
    x, y = f.args
    one = b.constant(value=1.0, dtype=F64)
    z = b.add(b.mul(b.sin(x), b.exp(b.neg(y))), b.div(b.mul(x, y), b.add(one, b.mul(y, y))))
    s = b.sum(b.mul(z, z), axes=(1,), keepdims=True)
    w = b.where(b.gt(z, one), z, b.sqrt(b.abs(z)))
    b.ret(b.div(z, s), b.argmax(z, axis=0, keepdims=False), b.cast(w, dtype=D.float32))
    run_pipeline(m, "canonicalize,fold,cse,dce,fuse,dce")
    assert any(op.name == "kernel.elementwise" for op in m.funcs["f"].body.ops)
    fn = jit(m)["f"]
    rng = np.random.default_rng(0)
    for rows in (5, 1):
        X, Y = rng.normal(size=(rows, 8)), rng.normal(size=8).astype(np.float32)
        Z = np.sin(X) * np.exp(-Y) + X * Y / (np.float64(1) + Y * Y)
        r1, r2, r3 = fn(X, Y)
        np.testing.assert_allclose(r1, Z / (Z * Z).sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
        np.testing.assert_array_equal(r2, Z.argmax(axis=0))
        np.testing.assert_allclose(r3, np.where(Z > 1, Z, np.sqrt(np.abs(Z))).astype(np.float32), rtol=1e-6)


def test_intermediates_freed_after_last_use_keep_views_alive():
    m = ir.Module("live")
    f, b = ir.new_func(m, "f", [TensorType(F64, (6, 6))])
    (x,) = f.args
    t1 = b.exp(x)
    v = b.slice(b.transpose(t1, perm=(1, 0)), starts=(0, 0), stops=(6, 6), steps=(1, 2))  # a view of t1
    t2 = b.sin(b.slice(x, starts=(0, 0), stops=(6, 6), steps=(1, 2)))
    t3 = b.add(v, t2)  # t1 is still read here, through the view
    t4 = b.mul(t3, t3)
    b.ret(t4, b.flip(t3, axes=(0,)))
    fns = jit(m)
    X = np.random.default_rng(4).normal(size=(6, 6))
    T3 = np.exp(X).T[:, ::2] + np.sin(X[:, ::2])
    a, c = fns["f"](X)
    np.testing.assert_allclose(a, T3 * T3, rtol=1e-14)
    np.testing.assert_allclose(c, T3[::-1], rtol=1e-14)
