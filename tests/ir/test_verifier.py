"""One test per class of verifier error; each checks the message names the op and the problem."""
from __future__ import annotations

import numpy as np
import pytest

import aot.ops  # noqa: F401  (registers the core ops)
import ir
from ir import Block, Builder, Module, Operation, Region, ScalarType, TensorType, new_func
from ir import dtypes as D
from ir.symbols import size_symbol
from ir.verifier import VerifyError, verify

F32x3 = TensorType(D.float32, (3,))


def two_arg_func(name: str = "f", module: Module | None = None):
    m = module or Module()
    f, b = new_func(m, name, [F32x3, F32x3], ["x", "y"])
    return m, f, b


def valid_module():
    m, f, b = two_arg_func()
    x, y = f.args
    b.ret(b.exp(b.add(x, y)))
    return m, f


def append_raw(f, op: Operation) -> Operation:
    """Insert `op` before the function's return, bypassing the builder's checks."""
    f.body.insert(len(f.body.ops) - 1, op)
    return op


def expect_error(target, *fragments: str) -> VerifyError:
    with pytest.raises(VerifyError) as info:
        verify(target)
    msg = str(info.value)
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"
    return info.value


def test_valid_module_and_func_pass():
    m, f = valid_module()
    assert verify(m) is None
    assert verify(f) is None


def test_error_is_a_value_error_that_names_op_types_and_function():
    m, f = valid_module()
    append_raw(f, Operation("add", [f.args[0], f.args[1]], [TensorType(D.float64, (3,))]))
    err = expect_error(m, "'add(f32[3], f32[3]) -> (f64[3])'", "in @f", "result #0 has type f64[3]", "f32[3]")
    assert isinstance(err, ValueError) and err.op.name == "add"


def test_unknown_op():
    m, f = valid_module()
    append_raw(f, Operation("frobnicate", [f.args[0]], [F32x3]))
    expect_error(m, "frobnicate", "unknown op")


def test_wrong_arity():
    m, f = valid_module()
    append_raw(f, Operation("add", [f.args[0]], [F32x3]))
    expect_error(f, "'add(f32[3])", "expected 2 operand(s), got 1")


def test_unknown_attribute():
    m, f = valid_module()
    append_raw(f, Operation("add", list(f.args), [F32x3], {"fast": True}))
    expect_error(m, "add", "fast = True", "unknown attribute(s) ['fast']")


def test_missing_attribute():
    m, f = valid_module()
    append_raw(f, Operation("reshape", [f.args[0]], [TensorType(D.float32, (3, 1))]))
    expect_error(m, "reshape", "missing required attribute 'shape'")


def test_result_shape_disagrees_with_shape_rule():
    s0 = size_symbol("s0")
    m = Module()
    f, b = new_func(m, "f", [TensorType(D.float64, (s0, 3))])
    append_op = Operation("neg", [f.args[0]], [TensorType(D.float64, (2 * s0, 3))])
    f.body.append(append_op)
    Builder(f.body).ret(append_op.result)
    expect_error(m, "neg(f64[s0,3])", "result #0 has type f64[2*s0,3]", "rules give f64[s0,3]")


def test_attribute_rejected_by_shape_rule():
    m, f = valid_module()
    append_raw(f, Operation("reshape", [f.args[0]], [TensorType(D.float32, (4,))], {"shape": (4,)}))
    expect_error(m, "reshape", "shape = (4,)", "rejected by its registry rules", "cannot reshape")


def test_operand_used_before_definition():
    m, f = valid_module()
    add = f.body.ops[0]
    early = Operation("neg", [add.result], [F32x3])
    f.body.insert(0, early)
    expect_error(m, "neg(f32[3])", "operand #0", "used before its definition by 'add'")


def test_operand_from_another_function():
    m, f = valid_module()
    g, gb = new_func(m, "g", [F32x3])
    gb.ret(gb.neg(f.args[0]))
    expect_error(m, "neg", "in @g", "defined in another function @f")


def test_operand_from_erased_op():
    m, f = valid_module()
    x = f.args[0]
    dead = Operation("neg", [x], [F32x3])  # never inserted: stands for an erased producer
    dead.drop_operands()
    append_raw(f, Operation("exp", [dead.result], [F32x3]))
    expect_error(m, "exp", "not in any function")


def test_use_list_missing_entry():
    m, f = valid_module()
    add = f.body.ops[0]
    f.args[0].uses.remove((add, 0))
    expect_error(m, "add", "records this use 0 times")


def test_stale_use_from_erased_op():
    m, f = valid_module()
    ghost = Operation("neg", [f.args[0]], [F32x3])  # registers a use, but is in no block
    err = expect_error(m, "stale use", "not in @f")
    assert err.op is ghost


def test_stale_use_of_rewired_operand():
    m, f = valid_module()
    add = f.body.ops[0]
    add.operands[0] = f.args[1]  # bypasses set_operand: both use lists are now wrong
    f.args[1].uses.append((add, 0))
    expect_error(m, "stale use", "operand #0")


def test_missing_return():
    m = Module()
    f, b = new_func(m, "f", [F32x3])
    b.exp(f.args[0])
    expect_error(m, "exp", "must end in 'return'")


def test_empty_function_body():
    m = Module()
    new_func(m, "f", [F32x3])
    expect_error(m, "empty block", "@f")


def test_return_types_disagree_with_signature():
    m, f = valid_module()
    f.result_types = [TensorType(D.float64, (3,))]
    expect_error(m, "return(f32[3])", "returns ['f32[3]']", "@f declares ['f64[3]']")


def test_terminator_in_the_middle():
    m, f = valid_module()
    f.body.insert(0, Operation("return", [], []))
    expect_error(m, "return", "terminator in the middle")


def test_yield_does_not_end_a_function():
    m = Module()
    f, b = new_func(m, "f", [F32x3])
    b.yield_(f.args[0])
    expect_error(m, "yield", "must end in 'return', not 'yield'")


def _kernel(b: Builder, operands, body_fn, shape=(3,), arg_dtypes=None):
    body = Block([ScalarType(d) for d in (arg_dtypes or [v.type.dtype for v in operands])])
    body_fn(Builder(body), *body.args)
    return b.create("kernel.elementwise", list(operands), {"shape": shape}, regions=[Region([body])])


def test_kernel_body_must_end_in_yield():
    m = Module()
    f, b = new_func(m, "f", [F32x3])
    k = _kernel(b, f.args, lambda kb, a: kb.yield_(kb.exp(a)))
    b.ret(k.result)
    verify(m)
    k.regions[0].block.ops[-1].erase()
    expect_error(m, "kernel.elementwise", "body must end in yield")


def test_kernel_body_cannot_use_outer_values():
    m = Module()
    f, b = new_func(m, "f", [F32x3, TensorType(D.float32, ())])
    x, s = f.args
    k = _kernel(b, [x], lambda kb, a: kb.yield_(kb.exp(a)))
    b.ret(k.result)
    body = k.regions[0].block
    body.insert(0, Operation("neg", [s], [TensorType(D.float32, ())]))
    expect_error(m, "neg(f32[])", "kernel bodies may use only their block arguments")


def test_kernel_verify_hook_checks_body_arguments():
    m = Module()
    f, b = new_func(m, "f", [F32x3])
    k = _kernel(b, f.args, lambda kb, a: kb.yield_(kb.exp(a)), arg_dtypes=[D.float64])
    b.ret(k.result)
    expect_error(m, "kernel.elementwise", "verify hook", "body argument #0 is f64, expected scalar f32")


def test_kernel_result_dtype_must_match_yield():
    m = Module()
    f, b = new_func(m, "f", [F32x3])
    k = _kernel(b, f.args, lambda kb, a: kb.yield_(kb.exp(a)))
    b.ret(k.result)
    body = k.regions[0].block
    body.ops[-1].erase()
    Builder(body).yield_(Builder(body).cast(body.args[0], dtype=D.float64))
    expect_error(m, "kernel.elementwise", "f64")


def test_builder_made_ir_with_constants_and_reductions_verifies():
    m = Module()
    f, b = new_func(m, "f", [TensorType(D.int64, (2, 3))])
    c = b.constant(value=np.arange(3), dtype=D.int64)
    total = b.sum(b.mul(f.args[0], c), axes=(1,), keepdims=False)
    b.ret(total)
    verify(m)
    assert ir.verify is verify
