"""take(x, idx, axis): a gather kernel over the flat output range (scalar loop).

out[pre..., j..., post...] = x[pre..., idx[j...], post...]; negative indices count from the end,
as in numpy. An index out of range sets the error slot (the last i64 of the argument block) and
the element is skipped; the entry then returns status 2, as numpy would raise IndexError.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType, int64

from ..llvm.cast import convert
from ..llvm.context import LowerCtx
from ..llvm.loops import elem_ptr, for_range, i64, load_scalar
from ..llvm.types import I64, PTR, memory_type
from ..targets.base import Target
from .common import new_kernel


def emit_gather(
    module: L.Module, target: Target, name: str, rank: int, x_dtype: DType, idx_dtype: DType, helpers: dict
) -> L.Function:
    """Argument block: [x, idx, out] pointers, the output dims (rank), then per output dim the x,
    idx and out strides (3 * rank), the x axis stride, the x axis length, the error slot."""
    fn, b = new_kernel(module, name)
    args, begin, end = fn.args

    def slot(i):
        return b.load(b.gep(args, [i64(i)], source_etype=I64), typ=I64)

    ptrs = [b.inttoptr(slot(i), PTR) for i in range(3)]
    dims = [slot(3 + k) for k in range(rank)]
    strides = [[slot(3 + rank + 3 * k + n) for k in range(rank)] for n in range(3)]
    ax_stride, ax_len = slot(3 + 4 * rank), slot(4 + 4 * rank)
    err = b.gep(args, [i64(5 + 4 * rank)], source_etype=I64)
    ctx = LowerCtx(module, b, target, 1, helpers)
    mt = memory_type(x_dtype)
    with for_range(b, begin, end, name="g", unroll=False) as i:
        offs = [i64(0)] * 3
        rest = i
        for k in range(rank - 1, -1, -1):
            idx = b.srem(rest, dims[k])
            rest = b.sdiv(rest, dims[k])
            offs = [b.add(o, b.mul(idx, strides[n][k])) for n, o in enumerate(offs)]
        j = convert(
            ctx, load_scalar(ctx, idx_dtype, elem_ptr(b, idx_dtype, ptrs[1], offs[1])), idx_dtype, int64
        )
        j = b.select(b.icmp_signed("<", j, i64(0)), b.add(j, ax_len), j)
        ok = b.and_(b.icmp_signed(">=", j, i64(0)), b.icmp_signed("<", j, ax_len))
        with b.if_else(ok) as (then, otherwise):
            with then:
                src = elem_ptr(b, x_dtype, ptrs[0], b.add(offs[0], b.mul(j, ax_stride)))
                b.store(b.load(src, typ=mt), elem_ptr(b, x_dtype, ptrs[2], offs[2]))
            with otherwise:
                b.store(i64(1), err)
    b.ret_void()
    return fn
