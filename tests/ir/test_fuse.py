"""The fusion pass: kernel structure (how many kernels, of which kind, reading what) and unchanged
meaning (the reference interpreter gives the same results before and after, and the IR verifies)."""
from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ir
from ir import dtypes as D
from ir.interp import run_func
from ir.passes import run_pipeline
from ir.passes.fuse import FusionOptions, fuse_func
from ir.passes.fuse_plan import is_elementwise, is_reduction
from ir.symbols import size_symbol
from ir.types import TensorType
from ir.verifier import verify

pytest.importorskip("aot.ops")

from tests.ir.strategies import random_functions  # noqa: E402  (needs aot.ops)
from tests.ir.test_pass_properties import assert_results_close, enrich  # noqa: E402

F32, F64, I32, I64, BOOL = D.float32, D.float64, D.int32, D.int64, D.bool_


def make(arg_types, build, name="f"):
    """A module with one function @name(args) whose body `build(b, *args)` returns the results."""
    m = ir.Module("t")
    f, b = ir.new_func(m, name, [TensorType(dt, shape) for dt, shape in arg_types])
    outs = build(b, *f.args)
    b.ret(*(outs if isinstance(outs, tuple) else (outs,)))
    verify(m)
    return m, f


def rand(rng, dt, shape):
    if dt.is_bool:
        return rng.random(shape) < 0.5
    if dt.is_int:
        return rng.integers(-5, 6, size=shape).astype(dt.numpy)
    return rng.uniform(-2, 2, size=shape).astype(dt.numpy)


def fuse_and_compare(m, f, inputs, pipeline="fuse", options=None):
    """Fuse (verifying), check every result is identical to the unfused function's."""
    before = run_func(f, *inputs)
    types = list(f.result_types)
    if options is None:
        run_pipeline(m, pipeline, verify_each=True)
    else:
        fuse_func(f, options)
        verify(m)
    assert f.result_types == types
    after = run_func(f, *inputs)
    for x, y in zip(before, after):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)
    leftovers = [op.name for op in f.body.ops if is_elementwise(op) or is_reduction(op)]
    assert not leftovers, f"unfused ops remain: {leftovers}"
    return kernels(f)


def kernels(f):
    return [op for op in f.body.ops if op.name.startswith("kernel.")]


def body_ops(kernel):
    return [op.name for op in kernel.regions[0].block.ops[:-1]]


RNG = np.random.default_rng(0)


# --- elementwise groups ------------------------------------------------------------------------------

def test_chain_becomes_one_kernel_reading_each_input_once():
    # sin(x)*exp(-y) + x*y/(1+y*y)
    def build(b, x, y):
        one = b.constant(value=np.array(1.0), dtype=F64)
        lhs = b.mul(b.sin(x), b.exp(b.neg(y)))
        return b.add(lhs, b.div(b.mul(x, y), b.add(one, b.mul(y, y))))

    m, f = make([(F64, (3, 4)), (F64, (3, 4))], build)
    x, y = rand(RNG, F64, (3, 4)), rand(RNG, F64, (3, 4))
    (k,) = fuse_and_compare(m, f, [x, y])
    assert k.name == "kernel.elementwise" and k.operands == f.args
    assert body_ops(k).count("constant") == 1 and len(body_ops(k)) == 10
    assert [op.name for op in f.body.ops] == ["kernel.elementwise", "return"]


def test_single_elementwise_op_still_becomes_a_kernel():
    m, f = make([(F32, (5,))], lambda b, x: b.abs(x))
    (k,) = fuse_and_compare(m, f, [rand(RNG, F32, (5,))])
    assert body_ops(k) == ["abs"]


def test_broadcasting_operands_keep_their_own_shape():
    m, f = make([(F32, (4, 1)), (F32, (5,)), (F32, ())], lambda b, x, y, z: b.mul(b.add(x, y), z))
    (k,) = fuse_and_compare(m, f, [rand(RNG, F32, (4, 1)), rand(RNG, F32, (5,)), rand(RNG, F32, ())])
    assert k.attrs["shape"] == (4, 5)
    assert [v.type.shape for v in k.operands] == [(4, 1), (5,), ()]


def test_broadcast_to_and_leading_expand_dims_are_absorbed():
    def build(b, x, y):
        bx = b.broadcast_to(x, shape=(2, 3, 4))
        ey = b.expand_dims(y, axes=(0,))
        return b.add(b.exp(bx), ey)

    m, f = make([(F64, (4,)), (F64, (3, 4))], build)
    (k,) = fuse_and_compare(m, f, [rand(RNG, F64, (4,)), rand(RNG, F64, (3, 4))])
    assert set(k.operands) == set(f.args)
    assert [op.name for op in f.body.ops] == ["kernel.elementwise", "return"]


def test_inner_expand_dims_and_other_views_stay_outside_as_operands():
    def build(b, x, y):
        col = b.expand_dims(b.neg(x), axes=(1,))   # x[:, None]: not a right-aligned broadcast
        t = b.transpose(y, perm=(1, 0))
        return b.add(col, t)

    m, f = make([(F64, (3,)), (F64, (4, 3))], build)
    ks = fuse_and_compare(m, f, [rand(RNG, F64, (3,)), rand(RNG, F64, (4, 3))])
    assert [k.name for k in ks] == ["kernel.elementwise"] * 2
    assert [op.name for op in f.body.ops] == ["kernel.elementwise", "expand_dims", "transpose",
                                              "kernel.elementwise", "return"]


def test_values_used_outside_become_extra_results():
    def build(b, x):
        a = b.exp(x)
        return a, b.add(a, x), b.mul(a, a)

    m, f = make([(F64, (6,))], build)
    (k,) = fuse_and_compare(m, f, [rand(RNG, F64, (6,))])
    assert len(k.results) == 3 and body_ops(k).count("exp") == 1


def test_value_read_by_a_strided_view_is_written_once_and_fused_with_its_consumers():
    def build(b, x):
        a = b.exp(x)
        return b.transpose(a, perm=(1, 0)), b.add(a, x)

    m, f = make([(F64, (2, 3))], build)
    (k,) = fuse_and_compare(m, f, [rand(RNG, F64, (2, 3))])
    assert len(k.results) == 2


def test_group_is_split_rather_than_made_cyclic():
    # a feeds matmul, whose result feeds b = a + s: a and b cannot share a loop nest
    def build(b, x, w):
        a = b.exp(x)
        s = b.matmul(a, w)
        return b.add(a, s)

    m, f = make([(F64, (3, 3)), (F64, (3, 3))], build)
    ks = fuse_and_compare(m, f, [rand(RNG, F64, (3, 3)), rand(RNG, F64, (3, 3))])
    assert [op.name for op in f.body.ops] == ["kernel.elementwise", "matmul", "kernel.elementwise", "return"]
    assert ks[1].operands[0] is ks[0].result  # b reads the stored a


def test_kernels_are_reordered_before_their_readers():
    # c is defined after the matmul that reads a; the kernel computing a, c and d must come first
    def build(b, x, y, w):
        a = b.add(x, x)
        s = b.matmul(a, w)
        c = b.mul(y, y)
        return s, b.sub(a, c)

    m, f = make([(F64, (2, 2))] * 3, build)
    (k,) = fuse_and_compare(m, f, [rand(RNG, F64, (2, 2)) for _ in range(3)])
    assert [op.name for op in f.body.ops] == ["kernel.elementwise", "matmul", "return"]
    assert len(k.results) == 2


def test_mixed_dtypes_follow_numpy_promotion():
    def build(b, i, x, c):
        s = b.add(i, x)                      # i32 + f32 -> f64
        w = b.where(c, s, b.cast(i, dtype=I64))
        return b.gt(w, x), w

    m, f = make([(I32, (4,)), (F32, (4,)), (BOOL, (4,))], build)
    (k,) = fuse_and_compare(m, f, [rand(RNG, I32, (4,)), rand(RNG, F32, (4,)), rand(RNG, BOOL, (4,))])
    assert [r.type.dtype for r in k.results] == [F64, BOOL]  # program order


def test_scalar_constants_are_inlined_and_tensor_constants_are_read():
    def build(b, x):
        two = b.constant(value=np.array([[2]], dtype=np.int64), dtype=I64)
        row = b.constant(value=np.arange(3.0), dtype=F64)
        return b.add(b.mul(x, two), row)

    m, f = make([(I64, (2, 3))], build)
    (k,) = fuse_and_compare(m, f, [rand(RNG, I64, (2, 3))])
    assert body_ops(k) == ["constant", "mul", "add"]
    assert [op.name for op in f.body.ops] == ["constant", "kernel.elementwise", "return"]


def test_symbolic_shapes():
    s0 = size_symbol("s0")

    def build(b, x, y):
        e = b.exp(b.mul(x, y))
        return b.add(e, b.sum(e, axes=(1,), keepdims=True)), b.max(e, axes=(0,), keepdims=False)

    m, f = make([(F32, (s0, 4)), (F32, (4,))], build)
    m.declare_symbol(ir.SymbolInfo("s0", 2, None, 8))
    ks = fuse_and_compare(m, f, [rand(RNG, F32, (7, 4)), rand(RNG, F32, (4,))])
    assert sorted(k.name for k in ks) == ["kernel.elementwise", "kernel.reduce", "kernel.reduce"]
    assert all(k.attrs["shape"] == (s0, 4) for k in ks)
    for n in (2, 5):
        run_func(f, rand(RNG, F32, (n, 4)), rand(RNG, F32, (4,)))


@pytest.mark.parametrize("view", [
    lambda b, v: b.expand_dims(v, axes=(0,)),
    lambda b, v: b.broadcast_to(v, shape=(2, 3)),
    lambda b, v: b.expand_dims(b.broadcast_to(v, shape=(2, 3)), axes=(0,)),  # a dead view of a dead view
], ids=["expand_dims", "broadcast_to", "view_of_view"])
def test_dead_broadcast_view_of_an_inlined_value_is_erased_with_it(view):
    # before CSE a duplicated view may be left unread; abs is inlined into neg, so the unread view
    # must go with it instead of reading an erased value
    def build(b, x):
        a = b.abs(x)
        view(b, a)
        return b.neg(view(b, a))

    m, f = make([(F32, (3,))], build)
    (k,) = fuse_and_compare(m, f, [rand(RNG, F32, (3,))])
    assert body_ops(k) == ["abs", "neg"] and k.operands == f.args
    assert [op.name for op in f.body.ops] == ["kernel.elementwise", "return"]


def test_dead_view_of_a_returned_value_is_erased_and_live_views_stay():
    def build(b, x):
        a = b.exp(x)
        b.broadcast_to(a, shape=(2, 3))                # unread
        t = b.transpose(b.broadcast_to(a, shape=(2, 3)), perm=(1, 0))
        return a, t

    m, f = make([(F64, (3,))], build)
    (k,) = fuse_and_compare(m, f, [rand(RNG, F64, (3,))])
    assert [op.name for op in f.body.ops] == ["kernel.elementwise", "broadcast_to", "transpose", "return"]


# --- reductions ------------------------------------------------------------------------------------

def test_reduction_absorbs_its_producer_chain():
    m, f = make([(F64, (3, 4)), (F64, (4,))], lambda b, x, y: b.sum(b.square(b.sub(x, y)), axes=(0, 1)))
    (k,) = fuse_and_compare(m, f, [rand(RNG, F64, (3, 4)), rand(RNG, F64, (4,))])
    assert k.name == "kernel.reduce" and body_ops(k) == ["sub", "square"]
    assert k.attrs["kind"] == "sum" and k.attrs["axes"] == (0, 1) and k.attrs["shape"] == (3, 4)


def test_bare_reductions_become_identity_kernels():
    def build(b, x):
        return (b.max(x, axes=(1,), keepdims=True), b.argmin(x, axis=0, keepdims=False),
                b.any(x, axes=(0,), keepdims=False))

    m, f = make([(F32, (3, 4))], build)
    ks = fuse_and_compare(m, f, [rand(RNG, F32, (3, 4))])
    assert [k.attrs["kind"] for k in ks] == ["max", "argmin", "any"]
    assert all(body_ops(k) == [] for k in ks)
    assert ks[1].attrs["axes"] == (0,) and ks[1].attrs["dtype"] == I64


@pytest.mark.parametrize("dt, kind", [(I32, "sum"), (BOOL, "sum"), (I32, "prod"), (F32, "sum")])
def test_reduction_accumulates_in_numpys_result_dtype(dt, kind):
    m, f = make([(dt, (3, 5))], lambda b, x: b.op(kind, x, axes=(1,), keepdims=False))
    (k,) = fuse_and_compare(m, f, [rand(RNG, dt, (3, 5))])
    want = F32 if dt is F32 else I64
    assert k.attrs["dtype"] == want
    assert body_ops(k) == ([] if dt is F32 else ["cast"])


def test_reduction_of_a_broadcast_reads_the_small_operand():
    m, f = make([(F64, (4,))], lambda b, x: b.sum(b.broadcast_to(x, shape=(3, 4)), axes=(0,)))
    (k,) = fuse_and_compare(m, f, [rand(RNG, F64, (4,))])
    assert k.operands == f.args and k.attrs["shape"] == (3, 4)


def softmax(b, x):
    mx = b.max(x, axes=(1,), keepdims=True)
    e = b.exp(b.sub(x, mx))
    return b.div(e, b.sum(e, axes=(1,), keepdims=True))


def test_softmax_stores_its_exp_once_per_row():
    # every reader of exp(x - m) runs over the rows of x (a row group in codegen): it is stored,
    # not computed twice
    m, f = make([(F32, (8, 16))], softmax)
    ks = fuse_and_compare(m, f, [rand(RNG, F32, (8, 16))])
    assert [(k.name, k.attrs.get("kind")) for k in ks] == [
        ("kernel.reduce", "max"), ("kernel.elementwise", None), ("kernel.reduce", "sum"),
        ("kernel.elementwise", None)]
    assert body_ops(ks[1]) == ["sub", "exp"] and body_ops(ks[3]) == ["div"]
    assert ks[2].operands == [ks[1].result]


def test_softmax_recomputes_its_exp_with_a_higher_row_limit():
    m, f = make([(F32, (8, 16))], softmax)
    ks = fuse_and_compare(m, f, [rand(RNG, F32, (8, 16))], options=FusionOptions(row_limit=12))
    assert [(k.name, k.attrs.get("kind")) for k in ks] == [
        ("kernel.reduce", "max"), ("kernel.reduce", "sum"), ("kernel.elementwise", None)]
    assert body_ops(ks[1]) == ["sub", "exp"] and body_ops(ks[2]) == ["sub", "exp", "div"]
    # full-size tensors read or written: x by each kernel, the output once
    full = [v for k in ks for v in (*k.operands, *k.results) if v.type.shape == (8, 16)]
    assert len(full) == 4


@pytest.mark.parametrize("axes", [(0,), (0, 1)], ids=["leading axis", "every axis"])
def test_values_not_read_row_by_row_keep_the_recompute_limit(axes):
    def build(b, x):
        e = b.exp(b.sub(x, b.max(x, axes=axes, keepdims=True)))
        return b.div(e, b.sum(e, axes=axes, keepdims=True))

    m, f = make([(F32, (8, 16))], build)
    ks = fuse_and_compare(m, f, [rand(RNG, F32, (8, 16))])
    assert [k.name for k in ks] == ["kernel.reduce", "kernel.reduce", "kernel.elementwise"]


def test_expensive_shared_producer_is_materialised_once():
    def build(b, x):
        e = b.exp(b.sin(b.log(x)))
        return b.sum(e, axes=(0,)), b.max(e, axes=(0,))

    m, f = make([(F64, (6,))], build)
    x = np.abs(rand(RNG, F64, (6,))) + 0.5
    ks = fuse_and_compare(m, f, [x])
    assert [k.name for k in ks] == ["kernel.elementwise", "kernel.reduce", "kernel.reduce"]
    assert all(k.operands == [ks[0].result] for k in ks[1:])

    m, f = make([(F64, (6,))], build)
    ks = fuse_and_compare(m, f, [x], options=FusionOptions(recompute_limit=100))
    assert [k.name for k in ks] == ["kernel.reduce", "kernel.reduce"]


def test_broadcast_producers_are_recomputed_only_when_cheap():
    def build(b, x, y):
        return b.add(b.exp(b.exp(x)), y), b.mul(b.neg(x), y)  # shape (4,) values read over (3, 4)

    m, f = make([(F64, (4,)), (F64, (3, 4))], build)
    ks = fuse_and_compare(m, f, [rand(RNG, F64, (4,)), rand(RNG, F64, (3, 4))])
    # exp(exp(x)) is stored once; neg(x) is recomputed for each of the 3 rows
    assert [(k.attrs["shape"], body_ops(k)) for k in ks] == [
        ((4,), ["exp", "exp"]), ((3, 4), ["add"]), ((3, 4), ["neg", "mul"])]


# --- the pass in pipelines ---------------------------------------------------------------------------

def test_full_pipeline_and_idempotence():
    m, f = make([(F64, (4, 5))], softmax)
    x = rand(RNG, F64, (4, 5))
    fuse_and_compare(m, f, [x], pipeline="canonicalize,fold,cse,dce,fuse")
    text = ir.print_module(m)
    run_pipeline(m, "fuse", verify_each=True)
    assert ir.print_module(m) == text
    assert ir.print_module(ir.parse_module(text)) == text


def test_logs_one_line_per_kernel(caplog):
    m, f = make([(F64, (4, 5))], softmax)
    with caplog.at_level(logging.INFO, logger="aot.fusion"):
        fuse_func(f)
    lines = [r.getMessage() for r in caplog.records if r.name == "aot.fusion"]
    assert len(lines) == 4 and all(line.startswith("@f: kernel.") for line in lines)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(random_functions(max_ops=6))
def test_random_functions_keep_their_results(case):
    m, inputs = case
    f = m.funcs["f"]
    before = run_func(f, *inputs)
    run_pipeline(m, "fuse", verify_each=True)
    after = run_func(f, *inputs)
    for x, y in zip(before, after):
        assert x.dtype == y.dtype and x.shape == y.shape
        tol = 1e-5 if x.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(y, x, rtol=tol, atol=tol, equal_nan=True)
    assert not [op.name for op in f.body.ops if is_elementwise(op) or is_reduction(op)]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=random_functions(max_ops=8), data=st.data())
def test_fuse_first_on_enriched_functions(case, data):
    # no CSE/DCE before: duplicated ops leave unread views and twins of fused values behind
    m, inputs = case
    enrich(m, inputs, data)
    verify(m)
    f = m.funcs["f"]
    want = run_func(f, *inputs)
    run_pipeline(m, "fuse", verify_each=True)
    assert_results_close(run_func(f, *inputs), want, "after fuse")
    assert not [op.name for op in f.body.ops if is_elementwise(op) or is_reduction(op)]
