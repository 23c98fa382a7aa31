"""Each pass on hand-written IR: the structure after it, verification, and unchanged interpreter results."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import aot.ops  # noqa: F401  (registers the core ops)
from ir import Block, Builder, Module, Region, ScalarType, TensorType, new_func
from ir import dtypes as D
from ir.interp import run_func
from ir.passes import DEFAULT_PIPELINE, PASSES, Pass, run_pipeline
from ir.passes import constants as C
from ir.rewrite import Pattern, RewriteLimitError, apply_patterns_greedily
from ir.symbols import size_symbol
from ir.verifier import VerifyError, verify

F64x3 = TensorType(D.float64, (3,))
I64x3 = TensorType(D.int64, (3,))


def const(b: Builder, value, dtype: D.DType):
    return b.constant(value=np.asarray(value, dtype=dtype.numpy), dtype=dtype)


def inputs_for(f) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    out = []
    for t in f.arg_types:
        shape = tuple(t.shape)
        if t.dtype.is_bool:
            out.append(rng.random(shape) < 0.5)
        elif t.dtype.is_int:
            out.append(rng.integers(-4, 5, size=shape).astype(t.dtype.numpy))
        else:
            x = rng.normal(size=shape) + (1j * rng.normal(size=shape) if t.dtype.is_complex else 0)
            out.append(np.asarray(x).astype(t.dtype.numpy))
    return out


def run_pass(pipeline: str, arg_types, body):
    """Build @f, run `pipeline` with verification, check results are unchanged; return @f's op names."""
    m = Module()
    f, b = new_func(m, "f", arg_types, [f"a{i}" for i in range(len(arg_types))])
    out = body(b, *f.args)
    b.ret(*(out if isinstance(out, tuple) else (out,)))
    verify(m)
    args = inputs_for(f)
    before = run_func(f, *args)
    run_pipeline(m, pipeline, verify_each=True)
    after = run_func(f, *args)
    for x, y in zip(before, after):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)  # these rewrites are exact, bit for bit up to -0.0 == 0.0
    return f, [op.name for op in f.body.ops]


# --- canonicalize ----------------------------------------------------------------------------------------

FIRES = [
    ("add_neg_zero_f64", [F64x3], lambda b, x: b.add(x, const(b, -0.0, D.float64))),
    ("add_zero_int", [I64x3], lambda b, x: b.add(x, const(b, [0, 0, 0], D.int64))),
    ("zero_plus_x_int", [I64x3], lambda b, x: b.add(const(b, 0, D.int64), x)),
    ("add_false_bool", [TensorType(D.bool_, (3,))], lambda b, x: b.add(x, const(b, False, D.bool_))),
    ("sub_pos_zero", [F64x3], lambda b, x: b.sub(x, const(b, 0.0, D.float64))),
    ("mul_one", [F64x3], lambda b, x: b.mul(x, const(b, 1.0, D.float64))),
    ("one_times_x", [I64x3], lambda b, x: b.mul(const(b, 1, D.int64), x)),
    ("div_one", [F64x3], lambda b, x: b.div(x, const(b, 1.0, D.float64))),
    ("pow_one", [I64x3], lambda b, x: b.pow(x, const(b, 1, D.int64))),
    ("neg_neg", [F64x3], lambda b, x: b.neg(b.neg(x))),
    ("not_not_bool", [TensorType(D.bool_, (3,))], lambda b, x: b.logical_not(b.logical_not(x))),
    ("and_true", [TensorType(D.bool_, (3,))], lambda b, x: b.logical_and(x, const(b, True, D.bool_))),
    ("cast_same", [F64x3], lambda b, x: b.cast(x, dtype=D.float64)),
    ("reshape_same", [F64x3], lambda b, x: b.reshape(x, shape=(3,))),
    ("broadcast_same", [F64x3], lambda b, x: b.broadcast_to(x, shape=(3,))),
    ("squeeze_nothing", [F64x3], lambda b, x: b.squeeze(x, axes=())),
    ("transpose_identity", [TensorType(D.float64, (2, 3))], lambda b, x: b.transpose(x, perm=(0, 1))),
    ("transpose_inverse", [TensorType(D.float64, (2, 3, 4))],
     lambda b, x: b.transpose(b.transpose(x, perm=(1, 2, 0)), perm=(2, 0, 1))),
    ("real_of_real", [F64x3], lambda b, x: b.real(x)),
    ("conj_of_real", [F64x3], lambda b, x: b.conj(x)),
]


@pytest.mark.parametrize("name,arg_types,body", FIRES, ids=[c[0] for c in FIRES])
def test_canonicalize_removes_identity(name, arg_types, body):
    f, names = run_pass("canonicalize,dce", arg_types, body)
    assert names == ["return"]
    assert f.return_op.operands[0] is f.args[0]


KEEPS = [
    # -0.0 + 0.0 is +0.0: dropping a +0.0 addend would change the sign of zero
    ("add_pos_zero_f64", [F64x3], lambda b, x: b.add(x, const(b, 0.0, D.float64)), "add"),
    ("sub_neg_zero_f64", [F64x3], lambda b, x: b.sub(x, const(b, -0.0, D.float64)), "sub"),
    ("add_zero_broadcasts", [F64x3],
     lambda b, x: b.add(x, const(b, np.full((2, 3), -0.0), D.float64)), "add"),
    ("add_zero_promotes", [TensorType(D.float32, (3,))],
     lambda b, x: b.add(x, const(b, -0.0, D.float64)), "add"),
    ("mul_zero_float", [F64x3], lambda b, x: b.mul(x, const(b, 0.0, D.float64)), "mul"),  # inf * 0 is nan
    ("mul_one_complex", [TensorType(D.complex128, (3,))],
     lambda b, x: b.mul(x, const(b, 1.0, D.complex128)), "mul"),  # (inf+0j)*(1+0j) has a nan part
    ("not_not_int", [I64x3], lambda b, x: b.logical_not(b.logical_not(x)), "logical_not"),
    ("conj_of_complex", [TensorType(D.complex64, (3,))], lambda b, x: b.conj(x), "conj"),
    ("cast_other", [F64x3], lambda b, x: b.cast(x, dtype=D.float32), "cast"),
    ("transpose_square", [TensorType(D.float64, (3, 3))],
     lambda b, x: b.transpose(x, perm=(1, 0)), "transpose"),
]


@pytest.mark.parametrize("name,arg_types,body,kept", KEEPS, ids=[c[0] for c in KEEPS])
def test_canonicalize_keeps_what_is_not_an_identity(name, arg_types, body, kept):
    _, names = run_pass("canonicalize,dce", arg_types, body)
    assert kept in names


def test_int_times_zero_becomes_the_zero_constant():
    f, names = run_pass("canonicalize,dce", [I64x3], lambda b, x: b.mul(x, const(b, [0, 0, 0], D.int64)))
    assert names == ["constant", "return"]


def test_int_times_scalar_zero_broadcasts_the_zero_instead_of_materialising_it():
    f, names = run_pass("canonicalize,dce", [TensorType(D.int32, (2, 2))],
                        lambda b, x: b.mul(x, const(b, False, D.bool_)))
    assert names == ["constant", "broadcast_to", "return"]
    assert f.body.ops[0].result.type == TensorType(D.int32, ())


def test_or_true_is_true():
    _, names = run_pass("canonicalize,dce", [TensorType(D.bool_, (3,))],
                        lambda b, x: b.logical_or(x, const(b, [True] * 3, D.bool_)))
    assert names == ["constant", "return"]


@pytest.mark.parametrize("dtype", [D.float64, D.float32, D.int64, D.int32])
def test_square_becomes_a_product(dtype):
    """x ** 2 is x * x (numpy's own `**2`), with the same interpreter results."""
    f, names = run_pass("canonicalize,dce", [TensorType(dtype, (3,))], lambda b, x: b.pow(x, const(b, 2, dtype)))
    assert names == ["mul", "return"]
    mul = f.body.ops[0]
    assert mul.operands[0] is f.args[0] and mul.operands[1] is f.args[0]


@pytest.mark.parametrize("dtype", [D.float64, D.float32])
def test_half_and_minus_one_powers_of_real_floats(dtype):
    for e, name in ((0.5, "sqrt"), (-1.0, "reciprocal")):
        _, names = run_pass("canonicalize,dce", [TensorType(dtype, (3,))],
                            lambda b, x, e=e: b.pow(x, const(b, e, dtype)))
        assert names == [name, "return"]


def test_other_powers_stay_powers():
    for dtype, e, shape in ((D.float64, 3.0, (3,)), (D.complex128, 2, (3,)), (D.complex128, 0.5, (3,)),
                            (D.int64, 3, (3,)), (D.float64, 0.5, ()), (D.float64, -1.0, ())):
        _, names = run_pass("canonicalize,dce", [TensorType(dtype, shape)],
                            lambda b, x, e=e, dtype=dtype: b.pow(x, const(b, e, dtype)))
        assert "pow" in names, (dtype, e, shape)


def test_commutative_operands_put_constants_last():
    f, names = run_pass("canonicalize", [F64x3], lambda b, x: b.mul(const(b, 2.0, D.float64), x))
    mul = f.body.ops[1]
    assert mul.name == "mul" and mul.operands[0] is f.args[0] and mul.operands[1].op.name == "constant"


def test_double_transpose_composes_the_permutations():
    f, names = run_pass("canonicalize,dce", [TensorType(D.float64, (2, 3, 4))],
                        lambda b, x: b.transpose(b.transpose(x, perm=(1, 2, 0)), perm=(1, 0, 2)))
    assert names == ["transpose", "return"]
    assert tuple(f.body.ops[0].attrs["perm"]) == (2, 1, 0)


def test_reshape_like_round_trip_is_removed():
    _, names = run_pass("canonicalize,dce", [TensorType(D.float64, (1, 3))],
                        lambda b, x: b.squeeze(b.expand_dims(x, axes=(0,)), axes=(1,)))
    assert names == ["return"]


def test_cast_round_trip_only_through_a_wider_dtype():
    _, names = run_pass("canonicalize,dce", [TensorType(D.float32, (3,))],
                        lambda b, x: b.cast(b.cast(x, dtype=D.float64), dtype=D.float32))
    assert names == ["return"]
    _, names = run_pass("canonicalize,dce", [F64x3],
                        lambda b, x: b.cast(b.cast(x, dtype=D.float32), dtype=D.float64))
    assert names == ["cast", "cast", "return"]


def test_reshape_of_reshape_is_one_reshape():
    f, names = run_pass("canonicalize,dce", [TensorType(D.float64, (2, 6))],
                        lambda b, x: b.reshape(b.reshape(x, shape=(3, 4)), shape=(4, 3)))
    assert names == ["reshape", "return"]
    assert f.body.ops[0].operands[0] is f.args[0]


def test_canonicalize_works_on_symbolic_shapes():
    s0 = size_symbol("s0")
    m = Module()
    f, b = new_func(m, "f", [TensorType(D.float32, (s0, 3))])
    x = f.args[0]
    b.ret(b.neg(b.neg(b.reshape(x, shape=(s0, 3)))))
    run_pipeline(m, "canonicalize,dce", verify_each=True)
    assert [op.name for op in f.body.ops] == ["return"]


# --- fold ------------------------------------------------------------------------------------------------

def test_fold_evaluates_constant_chains_through_references():
    def body(b, x):
        c = b.mul(const(b, [1.5, 2.0, -1.0], D.float64), const(b, 2.0, D.float64))
        return b.add(x, b.exp(c))

    f, names = run_pass("fold,dce", [F64x3], body)
    assert names == ["constant", "add", "return"]
    np.testing.assert_array_equal(C.constant_value(f.body.ops[0].result), np.exp(np.array([3.0, 4.0, -2.0])))


def test_fold_respects_the_size_limits(monkeypatch):
    monkeypatch.setattr(C, "MAX_FOLD_ELEMENTS", 8)
    _, names = run_pass("fold,dce", [], lambda b: b.neg(const(b, np.arange(10.0), D.float64)))
    assert names == ["constant", "neg", "return"]
    _, names = run_pass("fold,dce", [], lambda b: b.neg(const(b, np.arange(8.0), D.float64)))
    assert names == ["constant", "return"]


def test_fold_does_not_turn_a_broadcast_into_a_large_dense_constant():
    def splat(n):
        return lambda b: b.broadcast_to(const(b, 1.0, D.float64), shape=(n,))

    _, names = run_pass("fold,dce", [], splat(C.MAX_EXPAND_ELEMENTS + 1))
    assert names == ["constant", "broadcast_to", "return"]
    _, names = run_pass("fold,dce", [], splat(C.MAX_EXPAND_ELEMENTS))
    assert names == ["constant", "return"]


def test_fold_skips_symbolic_results_and_failing_references():
    s0 = size_symbol("s0")
    m = Module()
    f, b = new_func(m, "f", [TensorType(D.float64, (s0,))])
    bc = b.broadcast_to(const(b, 1.0, D.float64), shape=(s0,))
    bad = b.pow(const(b, 2, D.int64), const(b, -1, D.int64))  # numpy refuses negative int powers
    b.ret(b.add(f.args[0], bc), bad)
    run_pipeline(m, "fold", verify_each=True)
    assert [op.name for op in f.body.ops].count("pow") == 1
    assert "broadcast_to" in [op.name for op in f.body.ops]


def test_fold_keeps_the_result_dtype():
    f, names = run_pass("fold,dce", [], lambda b: b.add(const(b, 1, D.int32), const(b, 2.5, D.float32)))
    assert names == ["constant", "return"]
    assert C.constant_value(f.body.ops[0].result).dtype == np.result_type(np.int32, np.float32)  # f64


# --- cse -------------------------------------------------------------------------------------------------

def test_cse_merges_equal_ops_and_keeps_different_ones():
    def body(b, x, y):
        s1, s2, s3 = b.add(x, y), b.add(x, y), b.add(y, x)
        r1 = b.sum(s1, axes=(0,))
        r2 = b.sum(s2, axes=(0,))
        r3 = b.sum(s2, axes=(0,), keepdims=True)
        return b.mul(s1, s2), s3, r1, r2, r3

    f, names = run_pass("cse", [F64x3, F64x3], body)
    assert names.count("add") == 2 and names.count("sum") == 2
    mul = next(op for op in f.body.ops if op.name == "mul")
    assert mul.operands[0] is mul.operands[1]


def test_cse_tells_signed_zeros_apart():
    def body(b, x):
        return b.add(x, const(b, 0.0, D.float64)), b.add(x, const(b, -0.0, D.float64)), \
            b.add(x, const(b, 0.0, D.float64))

    _, names = run_pass("cse", [F64x3], body)
    assert names.count("constant") == 2 and names.count("add") == 2


def kernel(b: Builder, operands, body_fn, shape=(3,)):
    body = Block([ScalarType(v.type.dtype) for v in operands])
    kb = Builder(body)
    kb.yield_(*body_fn(kb, *body.args))
    return b.create("kernel.elementwise", list(operands), {"shape": shape}, regions=[Region([body])]).result


def test_cse_merges_structurally_equal_kernels_only():
    def body(b, x, y):
        k1 = kernel(b, [x, y], lambda kb, p, q: (kb.exp(kb.mul(p, q)),))
        k2 = kernel(b, [x, y], lambda kb, p, q: (kb.exp(kb.mul(p, q)),))
        k3 = kernel(b, [x, y], lambda kb, p, q: (kb.exp(kb.mul(q, q)),))
        return k1, k2, k3

    f, names = run_pass("cse", [F64x3, F64x3], body)
    assert names.count("kernel.elementwise") == 2
    ret = f.return_op
    assert ret.operands[0] is ret.operands[1] and ret.operands[2] is not ret.operands[0]


def test_cse_inside_kernel_bodies():
    def body(b, x):
        return kernel(b, [x], lambda kb, p: (kb.mul(kb.exp(p), kb.exp(p)),))

    f, _ = run_pass("cse", [F64x3], body)
    inner = [op.name for op in f.body.ops[0].regions[0].block.ops]
    assert inner == ["exp", "mul", "yield"]


# --- dce -------------------------------------------------------------------------------------------------

def test_dce_removes_dead_chains_recursively_and_keeps_live_ops():
    def exp_with_dead_cos(kb, p):
        kb.cos(p)
        return (kb.exp(p),)

    def body(b, x):
        b.sin(b.exp(b.neg(x)))  # dead chain
        kernel(b, [x], lambda kb, p: (kb.neg(p),))  # dead kernel
        return kernel(b, [x], exp_with_dead_cos)

    f, names = run_pass("dce", [F64x3], body)
    assert names == ["kernel.elementwise", "return"]
    assert [op.name for op in f.body.ops[0].regions[0].block.ops] == ["exp", "yield"]


# --- pipeline, logging, driver ----------------------------------------------------------------------------

def test_default_pipeline_simplifies_a_mixed_function():
    def body(b, x, y):
        c = b.add(const(b, 1.0, D.float64), const(b, 1.0, D.float64))  # folds to 2.0
        s = b.mul(b.add(x, y), c)
        t = b.mul(b.add(x, y), c)  # same as s once folded
        return b.add(b.neg(b.neg(s)), t)

    _, names = run_pass(",".join(DEFAULT_PIPELINE), [F64x3, F64x3], body)
    assert sorted(names) == ["add", "add", "constant", "mul", "return"]


def test_unknown_pass_is_reported_with_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown pass\(es\) \['fuse_everything'\].*'canonicalize'"):
        run_pipeline(Module(), "cse,fuse_everything")
    assert {"canonicalize", "fold", "cse", "dce"} <= set(PASSES)


def test_pipeline_logs_ir_after_each_pass_when_enabled(caplog):
    m = Module()
    f, b = new_func(m, "f", [F64x3], ["x"])
    b.ret(b.neg(b.neg(f.args[0])))
    caplog.set_level(logging.WARNING, logger="aot.ir")
    run_pipeline(m, "cse")
    assert not [r for r in caplog.records if r.name == "aot.ir"]
    caplog.set_level(logging.INFO, logger="aot.ir")
    run_pipeline(m, "canonicalize,dce")
    msgs = [r.getMessage() for r in caplog.records if r.name == "aot.ir"]
    assert len(msgs) == 2
    assert msgs[0].startswith("IR after canonicalize:") and "func @f" in msgs[0]
    assert msgs[1].startswith("IR after dce:") and "neg" not in msgs[1]


class _BreakTypes(Pass):
    name = "break_types"

    def run_on_func(self, func):
        op = func.body.ops[0]
        op.results[0].type = TensorType(D.float32, (3,))
        return True


def test_verify_each_names_the_pass_that_broke_the_ir():
    m = Module()
    f, b = new_func(m, "f", [F64x3])
    b.ret(b.exp(f.args[0]))
    run_pipeline(m, ["cse", _BreakTypes()])  # without verification nothing notices
    f.body.ops[0].results[0].type = F64x3
    with pytest.raises(VerifyError, match=r"after pass 'break_types': result #0 has type f32\[3\]"):
        run_pipeline(m, ["cse", _BreakTypes()], verify_each=True)


class _Swap(Pattern):
    root = "add"

    def match_and_rewrite(self, op, rewriter):
        a, b = op.operands
        rewriter.set_operand(op, 0, b)
        rewriter.set_operand(op, 1, a)
        return True


def test_greedy_driver_stops_patterns_that_never_reach_a_fixpoint():
    m = Module()
    f, b = new_func(m, "f", [F64x3, F64x3])
    b.ret(b.add(*f.args))
    with pytest.raises(RewriteLimitError, match="_Swap on add"):
        apply_patterns_greedily(m, [_Swap()], max_rewrites=50)


def test_fold_and_canonicalize_inside_kernel_bodies():
    def body_fn(kb, p):
        two = kb.create("constant", [], {"value": np.array(2.0), "dtype": D.float64},
                        result_types=[ScalarType(D.float64)]).result
        one = kb.create("constant", [], {"value": np.array(1.0), "dtype": D.float64},
                        result_types=[ScalarType(D.float64)]).result
        return (kb.mul(kb.mul(p, kb.sub(two, one)), kb.add(two, two)),)

    f, _ = run_pass("canonicalize,fold,canonicalize,dce", [F64x3], lambda b, x: kernel(b, [x], body_fn))
    inner = [op.name for op in f.body.ops[0].regions[0].block.ops]
    assert inner == ["constant", "mul", "yield"]  # p * (2 - 1) * (2 + 2) == p * 4
    assert C.constant_value(f.body.ops[0].regions[0].block.ops[0].result) == 4.0


def test_ops_with_effects_are_neither_removed_nor_merged(monkeypatch):
    from ir.opdef import OPDEFS, OpDef

    effect = OpDef("test.emit", 1, infer=lambda types, attrs, regions: list(types),
                   reference=lambda x: x, traits=frozenset({"side_effects"}))
    monkeypatch.setitem(OPDEFS, "test.emit", effect)
    m = Module()
    f, b = new_func(m, "f", [F64x3])
    x = f.args[0]
    b.create("test.emit", [x])  # unused
    b.create("test.emit", [x])
    b.ret(x)
    run_pipeline(m, "cse,dce", verify_each=True)
    assert [op.name for op in f.body.ops] == ["test.emit", "test.emit", "return"]
