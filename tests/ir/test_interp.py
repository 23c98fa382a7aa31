"""The reference interpreter against direct numpy: ops, fused kernels, symbolic sizes, bad inputs."""
from __future__ import annotations

import numpy as np
import pytest

import aot.ops  # noqa: F401  (registers the core ops)
from ir import Block, Builder, Module, Operation, Region, ScalarType, SymbolInfo, TensorType, new_func
from ir import dtypes as D
from ir.interp import InterpError, _last_uses, run_func, run_module
from ir.symbols import size_symbol, sympy
from ir.verifier import verify

RNG = np.random.default_rng(0)


def rand(dt: D.DType, shape) -> np.ndarray:
    if dt.is_bool:
        return RNG.random(shape) < 0.5
    if dt.is_int:
        return RNG.integers(-5, 6, size=shape).astype(dt.numpy)
    x = RNG.uniform(0.5, 2.0, size=shape)
    if dt.is_complex:
        x = x + 1j * RNG.uniform(-1, 1, size=shape)
    return np.asarray(x).astype(dt.numpy)


def build(arg_types, body, names=None):
    """A verified module whose @f has `arg_types` and returns `body(builder, *args)`."""
    m = Module()
    f, b = new_func(m, "f", arg_types, names)
    out = body(b, *f.args)
    b.ret(*(out if isinstance(out, tuple) else (out,)))
    verify(m)
    return m, f


def assert_same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6 if got.dtype.itemsize <= 8 else 1e-12)


CASES = [
    # name, arg dtypes+shapes, ir body, numpy body
    ("add_bcast", [(D.float32, (2, 3)), (D.float32, (3,))], lambda b, x, y: b.add(x, y), np.add),
    ("mixed_promotion", [(D.int32, (4,)), (D.float32, (4,))], lambda b, x, y: b.mul(x, y), np.multiply),
    ("int_chain", [(D.int64, (3, 2)), (D.int64, (3, 2))],
     lambda b, x, y: b.sub(b.mul(x, y), b.neg(x)), lambda x, y: x * y - (-x)),
    ("exp_sin", [(D.float64, (5,))], lambda b, x: b.exp(b.sin(x)), lambda x: np.exp(np.sin(x))),
    ("complex", [(D.complex64, (3,)), (D.complex64, (3,))],
     lambda b, x, y: b.mul(b.conj(x), y), lambda x, y: np.conj(x) * y),
    ("bool_logic", [(D.bool_, (4,)), (D.bool_, (4,))],
     lambda b, x, y: b.logical_and(x, b.logical_not(y)), lambda x, y: x & ~y),
    ("where", [(D.bool_, (2, 2)), (D.float64, (2, 2)), (D.float64, (2,))],
     lambda b, c, x, y: b.where(c, x, y), np.where),
    ("sum_axis", [(D.float32, (2, 3, 4))], lambda b, x: b.sum(x, axes=(0, 2)), lambda x: x.sum(axis=(0, 2))),
    ("max_keepdims", [(D.int32, (3, 4))], lambda b, x: b.max(x, axes=(1,), keepdims=True),
     lambda x: x.max(axis=1, keepdims=True)),
    ("layout", [(D.float64, (2, 3))],
     lambda b, x: b.transpose(b.reshape(x, shape=(3, 2)), perm=(1, 0)), lambda x: x.reshape(3, 2).T),
    ("two_results", [(D.float64, (3,))], lambda b, x: (b.exp(x), b.neg(x)), lambda x: (np.exp(x), -x)),
    ("returns_argument", [(D.int32, (2,))], lambda b, x: x, lambda x: x),
]


@pytest.mark.parametrize("name,args,ir_body,np_body", CASES, ids=[c[0] for c in CASES])
def test_ops_match_numpy(name, args, ir_body, np_body):
    m, f = build([TensorType(dt, s) for dt, s in args], ir_body)
    inputs = [rand(dt, s) for dt, s in args]
    got = run_func(f, *inputs)
    want = np_body(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, np.asarray(w))


def test_constant_and_run_module():
    m, f = build([TensorType(D.int64, (3,))],
                 lambda b, x: b.add(x, b.constant(value=np.array([1, 2, 3]), dtype=D.int64)))
    (got,) = run_module(m, "f", np.array([10, 20, 30]))
    assert_same(got, np.array([11, 22, 33]))
    with pytest.raises(KeyError, match="no function @g"):
        run_module(m, "g")


# --- fused kernels -------------------------------------------------------------------------------------

def kernel(b: Builder, name: str, operands, attrs, body_fn) -> Operation:
    body = Block([ScalarType(v.type.dtype) for v in operands])
    kb = Builder(body)
    kb.yield_(*body_fn(kb, *body.args))
    return b.create(name, list(operands), attrs, regions=[Region([body])])


def test_kernel_elementwise_broadcasts_and_yields_two_results():
    def body(b, x, y):
        k = kernel(b, "kernel.elementwise", [x, y], {"shape": (2, 3)},
                   lambda kb, a, c: (kb.exp(kb.mul(a, c)), kb.neg(a)))
        return tuple(k.results)

    m, f = build([TensorType(D.float32, (2, 3)), TensorType(D.float32, (3,))], body)
    x, y = rand(D.float32, (2, 3)), rand(D.float32, (3,))
    got_e, got_n = run_func(f, x, y)
    assert_same(got_e, np.exp(x * y))
    assert_same(got_n, -x)


def test_kernel_elementwise_body_yielding_an_argument_broadcasts_it():
    def body(b, x):
        return kernel(b, "kernel.elementwise", [x], {"shape": (2, 3)}, lambda kb, a: (a,)).result

    m, f = build([TensorType(D.int32, (3,))], body)
    (got,) = run_func(f, np.array([1, 2, 3], np.int32))
    assert_same(got, np.broadcast_to(np.array([1, 2, 3], np.int32), (2, 3)).copy())


REDUCE_CASES = [
    ("sum", D.float64, (1,), False, lambda y: y.sum(axis=1)),
    ("sum", D.int64, (0, 1), True, lambda y: y.astype(np.int64).sum(axis=(0, 1), keepdims=True)),
    ("prod", D.float64, (0,), False, lambda y: y.prod(axis=0)),
    ("max", D.float64, (1,), True, lambda y: y.max(axis=1, keepdims=True)),
    ("min", D.float64, (0, 1), False, lambda y: y.min()),
    ("argmax", D.int64, (1,), False, lambda y: y.argmax(axis=1)),
    ("argmin", D.int64, (0, 1), False, lambda y: np.int64(y.argmin())),
    ("any", D.bool_, (1,), False, lambda y: (y > 1).any(axis=1)),
    ("all", D.bool_, (0,), True, lambda y: (y > 1).all(axis=0, keepdims=True)),
]


@pytest.mark.parametrize("kind,dtype,axes,keepdims,np_reduce", REDUCE_CASES)
def test_kernel_reduce_kinds(kind, dtype, axes, keepdims, np_reduce):
    boolean = kind in ("any", "all")

    def body_fn(kb, a, c):
        y = kb.mul(a, c)
        if boolean:
            return (kb.gt(y, c),)
        return (kb.cast(y, dtype=D.int32),) if dtype.is_int and kind == "sum" else (y,)

    def body(b, x, w):
        attrs = {"shape": (3, 4), "axes": axes, "kind": kind, "keepdims": keepdims, "dtype": dtype}
        return kernel(b, "kernel.reduce", [x, w], attrs, body_fn).result

    m, f = build([TensorType(D.float64, (3, 4)), TensorType(D.float64, (4,))], body)
    x, w = rand(D.float64, (3, 4)), rand(D.float64, (4,))
    y = x * w
    if boolean:
        y = np.where(y > w, 2.0, 0.0)
    elif dtype.is_int and kind == "sum":
        y = y.astype(np.int32)
    (got,) = run_func(f, x, w)
    assert_same(got, np.asarray(np_reduce(y)).astype(dtype.numpy))


# --- symbolic sizes and guards ------------------------------------------------------------------------

S0 = size_symbol("s0")


def symbolic_module():
    """@f(x: f32[s0,3], y: f32[3]) -> (sum over axis 0, reshape to [3*s0])."""
    m = Module()
    m.declare_symbol(SymbolInfo("s0", 2, 64, 8))
    m.guards.append(sympy().Ne(S0, 5))
    f, b = new_func(m, "f", [TensorType(D.float32, (S0, 3)), TensorType(D.float32, (3,))], ["x", "y"])
    x, y = f.args
    z = b.mul(x, y)
    b.ret(b.sum(z, axes=(0,)), b.reshape(z, shape=(3 * S0,)))
    verify(m)
    return m, f


@pytest.mark.parametrize("n", [2, 3, 7, 64])
def test_symbolic_function_runs_at_several_sizes(n):
    m, f = symbolic_module()
    x, y = rand(D.float32, (n, 3)), rand(D.float32, (3,))
    total, flat = run_func(f, x, y)
    assert_same(total, (x * y).sum(axis=0))
    assert_same(flat, (x * y).reshape(3 * n))


def test_compound_dim_is_solved_from_its_size():
    m = Module()
    f, b = new_func(m, "f", [TensorType(D.float64, (2 * S0,)), TensorType(D.float64, (S0,))])
    b.ret(b.reshape(f.args[0], shape=(S0, 2)))
    (got,) = run_func(f, np.arange(6.0), np.zeros(3))
    assert_same(got, np.arange(6.0).reshape(3, 2))
    with pytest.raises(ValueError, match=r"argument #0 of @f: dim 0 is 6, but 2\*s0 = 8"):
        run_func(f, np.arange(6.0), np.zeros(4))


BAD_INPUTS = [
    ((np.zeros((2, 3), np.float32),), TypeError,
     r"@f takes 2 argument\(s\) \(f32\[s0,3\], f32\[3\]\), got 1"),
    ((np.zeros((2, 3)), np.zeros(3, np.float32)), TypeError,
     r"argument #0 \(%x\) of @f: expected dtype float32 \(f32\[s0,3\]\), got float64"),
    ((np.zeros((2, 3), np.float32), np.zeros((1, 3), np.float32)), ValueError,
     r"argument #1 \(%y\) of @f: expected rank 1"),
    ((np.zeros((2, 4), np.float32), np.zeros(3, np.float32)), ValueError, r"dim 1 must be 3"),
    ((np.zeros((5, 3), np.float32), np.zeros(3, np.float32)), ValueError,
     r"guard Ne\(s0, 5\) fails .*s0 = 5"),
    ((np.zeros((1, 3), np.float32), np.zeros(3, np.float32)), ValueError,
     r"s0 = 1 is outside its range \[2, 64\]"),
]


@pytest.mark.parametrize("inputs,exc,pattern", BAD_INPUTS)
def test_bad_inputs_name_the_argument(inputs, exc, pattern):
    m, f = symbolic_module()
    with pytest.raises(exc, match=pattern):
        run_func(f, *inputs)


def test_same_symbol_must_get_the_same_size():
    m = Module()
    f, b = new_func(m, "f", [TensorType(D.float64, (S0,)), TensorType(D.float64, (S0,))], ["a", "b"])
    b.ret(b.add(*f.args))
    with pytest.raises(ValueError, match=r"argument #1 \(%b\) of @f: dim 0 is 4, but size symbol s0 is 3 "
                                         r"from argument #0 \(%a\) of @f dim 0"):
        run_func(f, np.zeros(3), np.zeros(4))


def test_result_type_disagreeing_with_the_reference_is_reported_at_the_op():
    m = Module()
    f, b = new_func(m, "f", [TensorType(D.float32, (3,))])
    bad = Operation("exp", [f.args[0]], [TensorType(D.float64, (3,))])  # wrong on purpose
    f.body.append(bad)
    b.ret(bad.result)
    with pytest.raises(InterpError, match=r"'exp\(f32\[3\]\) -> \(f64\[3\]\)'.*returned dtype float32"):
        run_func(f, np.zeros(3, np.float32))


def test_reference_errors_carry_the_op():
    m, f = build([TensorType(D.int64, (2,))], lambda b, x: b.pow(x, x))
    with pytest.raises(ValueError) as info:
        run_func(f, np.array([-1, 2]))
    assert any("while interpreting 'pow(i64[2], i64[2])" in n for n in info.value.__notes__)


def test_values_die_after_their_last_use():
    m, f = build([TensorType(D.float64, (3,))], lambda b, x: b.add(b.exp(x), b.neg(x)))
    exp, neg, add = f.body.ops[:3]
    dead = _last_uses(f.body)
    assert dead[1] == [f.args[0]]  # x is last read by neg
    assert set(dead[2]) == {exp.result, neg.result}


def test_unbindable_symbol_is_reported():
    s1 = size_symbol("s1")
    m = Module()
    f, b = new_func(m, "f", [TensorType(D.float64, (S0 + s1,))])
    b.ret(b.neg(f.args[0]))
    with pytest.raises(ValueError, match=r"argument #0 of @f: cannot bind size symbol\(s\) \['s0', 's1'\]"):
        run_func(f, np.zeros(5))
