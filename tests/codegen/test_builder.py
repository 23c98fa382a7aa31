"""codegen/llvm/builder.py: the folding IRBuilder (LLVM's ConstantFolder semantics: two's-complement
wrapping, C division), constant control flow, unreachable-block pruning, single-call inlining."""
from __future__ import annotations

import itertools

import llvmlite.binding as llvm
import pytest
from llvmlite import ir as L

from codegen.llvm.builder import (
    Builder,
    const_int,
    emit_if,
    inline_single_calls,
    module_text,
    prune_unreachable,
)
from codegen.llvm.loops import for_range, i64, is_empty

I8, I32, I64, I1 = L.IntType(8), L.IntType(32), L.IntType(64), L.IntType(1)


def _fn(args=(I64, I64), ret=I64, name="f"):
    mod = L.Module("m")
    fn = L.Function(mod, L.FunctionType(ret, list(args)), name=name)
    return mod, fn, Builder(fn.append_basic_block("entry"))


def _c(t, v):
    return L.Constant(t, v)


def _wrap(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if bits > 1 and v >> (bits - 1) else v


VALUES = [0, 1, -1, 2, 7, -7, 127, -128, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63)]
OPS = ["add", "sub", "mul", "sdiv", "srem", "udiv", "urem", "and_", "or_", "xor", "shl", "lshr", "ashr"]


@pytest.mark.parametrize("bits", [8, 32, 64])
def test_integer_folds_match_llvm(bits):
    """Every fold against LLVM's own evaluation of the unfolded instruction (a JIT'd function per
    width, one return slot per case, skipping what LLVM leaves undefined: division by zero, the
    overflowing sdiv/srem, shifts by the width or more)."""
    t = L.IntType(bits)
    cases = []
    for op, (a, b) in itertools.product(OPS, itertools.product(VALUES, VALUES)):
        a, b = _wrap(a, bits), _wrap(b, bits)
        if op in ("sdiv", "srem", "udiv", "urem") and b == 0:
            continue
        if op in ("sdiv", "srem") and b == -1 and a == -(1 << (bits - 1)):
            continue
        if op in ("shl", "lshr", "ashr") and not 0 <= b < bits:
            continue
        cases.append((op, a, b))
    folded = []
    for op, a, b in cases:
        _, _, bld = _fn()
        folded.append(const_int(getattr(bld, op)(_c(t, a), _c(t, b))))
    assert all(v is not None for v in folded)
    # the same instructions built by llvmlite's plain builder, evaluated by LLVM
    mod = L.Module("ref")
    g = L.Function(mod, L.FunctionType(I64, [I64]), name="g")
    b = L.IRBuilder(g.append_basic_block("entry"))
    out = L.GlobalVariable(mod, L.ArrayType(I64, len(cases)), name="out")
    out.initializer = L.Constant(out.value_type, None)
    x = g.args[0]  # opaque operands: LLVM cannot fold them before the code runs
    for k, (op, a, bv) in enumerate(cases):
        lhs = b.trunc(b.add(x, i64(a)), t) if bits < 64 else b.add(x, i64(a))
        rhs = b.trunc(b.add(x, i64(bv)), t) if bits < 64 else b.add(x, i64(bv))
        r = getattr(L.IRBuilder, op)(b, lhs, rhs)
        r = b.sext(r, I64) if bits < 64 else r
        b.store(r, b.gep(out, [i64(0), i64(k)]))
    b.ret(i64(0))
    import ctypes

    from runtime.jit import JitEngine

    engine = JitEngine()
    engine.add(str(mod), entries=["g"], optimize=False)
    ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(engine.address("g"))(0)
    got = (ctypes.c_int64 * len(cases)).from_address(engine.global_address("out"))
    for (op, a, bv), want, mine in zip(cases, got, folded, strict=True):
        assert _wrap(mine, bits) == want, (op, a, bv, mine, want)


def test_identities_and_comparisons():
    _, fn, b = _fn()
    x, y = fn.args
    assert b.add(x, i64(0)) is x and b.add(i64(0), x) is x and b.sub(x, i64(0)) is x
    assert b.mul(x, i64(1)) is x and const_int(b.mul(x, i64(0))) == 0 and const_int(b.sub(x, x)) == 0
    assert b.sdiv(x, i64(1)) is x and const_int(b.srem(x, i64(-1))) == 0
    assert b.and_(x, i64(-1)) is x and const_int(b.and_(x, i64(0))) == 0 and b.or_(x, i64(0)) is x
    assert const_int(b.icmp_signed("<", i64(-1), i64(0))) == 1
    assert const_int(b.icmp_unsigned("<", i64(-1), i64(0))) == 0  # -1 is the largest unsigned
    assert const_int(b.icmp_signed("<=", x, x)) == 1 and const_int(b.icmp_signed("!=", x, x)) == 0
    assert b.select(_c(I1, 1), x, y) is x and b.select(_c(I1, 0), x, y) is y and b.select(b.icmp_signed("<", x, y), x, x) is x
    assert const_int(b.sext(_c(I8, -1), I64)) == -1 and const_int(b.zext(_c(I8, -1), I64)) == 255
    assert const_int(b.trunc(i64(300), I8)) == 44
    assert len(fn.blocks[0].instructions) == 1  # only the compare of two unknowns was built


def test_constant_branches_emit_only_the_live_side():
    mod, fn, b = _fn()
    x = fn.args[0]
    emit_if(b, _c(I1, 0), lambda: b.call(fn, [x, x]))  # dead: never built
    with b.if_then(_c(I1, 1)):
        y = b.add(x, i64(5))  # inline
    with b.if_else(_c(I1, 0)) as (then, otherwise):
        with then:
            b.mul(x, x)  # dead block
        with otherwise:
            z = b.sub(y, i64(1))
    b.ret(z)
    calls = [i for blk in fn.blocks for i in blk.instructions if isinstance(i, L.CallInstr)]
    assert not calls
    prune_unreachable(fn)
    assert len(fn.blocks) == 1
    llvm.parse_assembly(module_text(mod)).verify()


def test_prune_drops_phi_incomings_of_removed_edges():
    mod, fn, b = _fn()
    x = fn.args[0]
    a, c, join = (fn.append_basic_block(n) for n in ("a", "c", "join"))
    b.cbranch(_c(I1, 1), a, c)  # folds to br a: c has no predecessor
    b.position_at_end(a)
    b.branch(join)
    b.position_at_end(c)
    b.branch(join)
    b.position_at_end(join)
    phi = b.phi(I64)
    phi.add_incoming(x, a)
    phi.add_incoming(i64(3), c)
    b.ret(phi)
    prune_unreachable(fn)
    assert [blk.name for blk in fn.blocks] == ["entry", "a", "join"] and len(phi.incomings) == 1
    llvm.parse_assembly(module_text(mod)).verify()


def test_loops_of_zero_or_one_trip_are_straight_code():
    mod, fn, b = _fn()
    x = fn.args[0]
    acc = x
    with for_range(b, 3, 4) as k:  # one trip: k is the constant 3, no loop
        acc = b.add(acc, k)
    with for_range(b, 5, 5) as k:  # none: emitted where no edge leads
        acc2 = b.mul(acc, k)
    b.ret(acc)
    assert is_empty(i64(5), i64(5)) and not is_empty(i64(0), x)
    prune_unreachable(fn)
    assert len(fn.blocks) == 1 and acc2 is not None
    assert "llvm.loop" not in module_text(mod)
    llvm.parse_assembly(module_text(mod)).verify()


def test_single_call_lean_kernels_are_inlined():
    mod = L.Module("m")
    ty = L.FunctionType(L.VoidType(), [L.PointerType()])
    once, twice, pointer = (L.Function(mod, ty, name=n) for n in ("once", "twice", "pointer"))
    for k in (once, twice, pointer):
        k.linkage, k.aot_lean = "internal", True
        Builder(k.append_basic_block("entry")).ret_void()
    user = L.Function(mod, L.FunctionType(L.VoidType(), [L.PointerType(), L.PointerType()]), name="user")
    b = Builder(user.append_basic_block("entry"))
    p = user.args[0]
    b.call(once, [p])
    b.call(twice, [p])
    b.call(twice, [p])
    sink = L.Function(mod, L.FunctionType(L.VoidType(), [L.PointerType()]), name="sink")
    b.call(pointer, [p])
    b.call(sink, [pointer])  # its address escapes: not inlined
    b.ret_void()
    inline_single_calls(mod)
    assert "alwaysinline" in once.attributes
    assert "alwaysinline" not in twice.attributes and "alwaysinline" not in pointer.attributes
