"""bincount: a scatter-add kernel over chunks of its input (scalar loop).

Chunk t zeroes its row of the output (`row_stride` elements after chunk t-1's) and adds, for each
of its values v = x[i] (i in [t * chunk, min(n, (t + 1) * chunk))), one (counts, int64) or w[i]
(weighted sums, float64) to row[v]. One chunk writing straight into the result is the serial
bincount; several chunks into rows of a private buffer, reduced over the rows afterwards, are the
threaded one (codegen/graph_scatter.py). A value < 0 or >= length sets an error slot and is
skipped: the entry then fails with numpy's ValueError (statuses BINCOUNT_NEGATIVE/_TOO_LARGE).

Argument block: x, w (0 without weights), out pointers; n, x stride, w stride, length, out stride,
row stride, chunk; the two error slots (negative, too large).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType, float64, int64

from ..llvm.cast import convert
from ..llvm.context import LowerCtx
from ..llvm.loops import elem_ptr, for_range, i64, load_scalar, store_scalar
from ..llvm.types import I64, PTR
from ..targets.base import Target
from .common import new_kernel

N_SLOTS = 12
ERR_NEGATIVE, ERR_TOO_LARGE = 10, 11


def emit_bincount(module: L.Module, target: Target, name: str, x_dtype: DType, w_dtype: DType | None,
                  out_dtype: DType, helpers: dict) -> L.Function:
    fn, b = new_kernel(module, name)
    args, tb, te = fn.args

    def slot(i):
        return b.load(b.gep(args, [i64(i)], source_etype=I64), typ=I64)

    px, pw, po = (b.inttoptr(slot(i), PTR) for i in range(3))
    n, xs, ws, length, os_, row_stride, chunk = (slot(i) for i in range(3, 10))
    err_neg = b.gep(args, [i64(ERR_NEGATIVE)], source_etype=I64)
    err_big = b.gep(args, [i64(ERR_TOO_LARGE)], source_etype=I64)
    ctx = LowerCtx(module, b, target, 1, helpers)
    one = ctx.const(out_dtype, 1)
    with for_range(b, tb, te, name="t") as t:
        row = elem_ptr(b, out_dtype, po, b.mul(t, row_stride))
        with for_range(b, 0, length, name="z") as k:
            store_scalar(ctx, out_dtype, elem_ptr(b, out_dtype, row, b.mul(k, os_)), ctx.const(out_dtype, 0))
        lo = b.mul(t, chunk)
        hi = b.add(lo, chunk)
        hi = b.select(b.icmp_signed("<", n, hi), n, hi)
        with for_range(b, lo, hi, name="i") as i:
            v = load_scalar(ctx, x_dtype, elem_ptr(b, x_dtype, px, b.mul(i, xs)))
            v = convert(ctx, v, x_dtype, int64)
            neg = b.icmp_signed("<", v, i64(0))
            big = b.icmp_signed(">=", v, length)
            with b.if_else(b.or_(neg, big), likely=False) as (bad, good):
                with bad:
                    b.store(i64(1), b.select(neg, err_neg, err_big))
                with good:
                    p = elem_ptr(b, out_dtype, row, b.mul(v, os_))
                    if w_dtype is None:
                        inc = one
                    else:
                        w = load_scalar(ctx, w_dtype, elem_ptr(b, w_dtype, pw, b.mul(i, ws)))
                        inc = convert(ctx, w, w_dtype, float64)
                    old = load_scalar(ctx, out_dtype, p)
                    new = b.fadd(old, inc) if out_dtype.is_float else b.add(old, inc)
                    store_scalar(ctx, out_dtype, p, new)
    b.ret_void()
    return fn
