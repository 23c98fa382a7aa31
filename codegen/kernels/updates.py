"""scatter: out[idx[p]] = upd[p] (or kind(out[idx[p]], upd[p]), or kind(out[idx[p]]) for a unary kind)
for p in [begin, end), in order.

The output already holds x (the rule copies it first). A negative index counts from the end; one
out of range sets the error slot and is skipped (the entry then fails with IndexError). A combine
that can raise (an integer power) gets a second error slot.

Argument block: upd, idx, out pointers; upd, idx, out strides; the output length; the index
error slot; the combine's error slot.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.core import Block, Operation
from ir.dtypes import DType, int64
from ir.opdef import OPDEFS
from ir.types import ScalarType

from ..llvm.cast import convert
from ..llvm.context import LowerCtx
from ..llvm.loops import elem_ptr, for_range, i64, load_scalar, store_scalar
from ..llvm.types import I64, PTR
from ..targets.base import Target
from .common import emit_body, new_kernel
from .scan import kind_combiner

N_SLOTS = 9
ERR_INDEX, ERR_COMBINE = 7, 8


def unary_body(kind: str, dtype: DType) -> Block | None:
    """The body out[j] = kind(out[j]) of a unary row's update (np.negative.at), else None."""
    d = OPDEFS.get(kind)
    if d is None or d.arity != 1 or not d.has("elementwise"):
        return None
    block = Block([ScalarType(dtype)])
    op = Operation(kind, list(block.args), [ScalarType(dtype)], {})
    block.append(op)
    block.append(Operation("yield", list(op.results), []))
    return block


def update_step(kind, dtype: DType):
    """fn(ctx, old, upd) -> the new element: upd (assignment), kind(old, upd), or kind(old) (unary)."""
    if kind is None:
        return None
    body = unary_body(kind, dtype)
    if body is not None:
        return lambda ctx, acc, x: emit_body(ctx, body, [acc])[0]
    return kind_combiner(kind, dtype)


def emit_scatter(module: L.Module, target: Target, name: str, dtype: DType, idx_dtype: DType, kind,
                 helpers: dict) -> L.Function:
    fn, b = new_kernel(module, name)
    args, begin, end = fn.args

    def slot(i):
        return b.load(b.gep(args, [i64(i)], source_etype=I64), typ=I64)

    pu, pi, po = (b.inttoptr(slot(i), PTR) for i in range(3))
    su, si, so, n = (slot(i) for i in range(3, 7))
    err = b.gep(args, [i64(ERR_INDEX)], source_etype=I64)
    ctx = LowerCtx(module, b, target, 1, helpers, b.gep(args, [i64(ERR_COMBINE)], source_etype=I64))
    step = update_step(kind, dtype)
    with for_range(b, begin, end, name="p") as p:
        j = convert(ctx, load_scalar(ctx, idx_dtype, elem_ptr(b, idx_dtype, pi, b.mul(p, si))), idx_dtype, int64)
        j = b.select(b.icmp_signed("<", j, i64(0)), b.add(j, n), j)
        ok = b.and_(b.icmp_signed(">=", j, i64(0)), b.icmp_signed("<", j, n))
        with b.if_else(ok, likely=True) as (good, bad):
            with good:
                v = load_scalar(ctx, dtype, elem_ptr(b, dtype, pu, b.mul(p, su)))
                dst = elem_ptr(b, dtype, po, b.mul(j, so))
                if step is not None:
                    v = step(ctx, load_scalar(ctx, dtype, dst), v)
                store_scalar(ctx, dtype, dst, v)
            with bad:
                b.store(i64(1), err)
    b.ret_void()
    return fn
