"""Blocked, vectorised matmul kernel: C[M, N] = A[M, K] @ B[K, N] for f32/f64 matrices.

A register tile of MR rows x NV vectors of C stays in vector accumulators while k runs over a
block of KC: each k loads NV vectors of a packed panel of B and broadcasts MR scalars of A's
column k (any strides), so a k step is NV loads, MR broadcasts and MR*NV fused multiply-adds.
The B panel (KC x NV vectors, on the stack) is copied contiguous once per (column block, k block)
and reused by every row tile of the thread: B's rows are often a power of two apart, which would
otherwise map every load of the k loop to one L1 set. C must be contiguous along N (the caller
checks at run time and otherwise takes the general reduction path); B may have any strides; column blocks
are loaded and stored masked (the last one is zero-padded in the panel), the last rows (M % MR) run
one row at a time.
Each C element accumulates over k in order with FMA (a k block resumes from the stored partial
sum, exactly), so results do not depend on the blocking or the thread split: the parallel range
is the row tiles.

`void name(args, begin, end)` over row tiles [begin, end); args = A, B, C, M, N, K, A's row and
column strides, B's row and column strides, C's row stride (in elements).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.context import LowerCtx
from ..llvm.loops import alloca, elem_ptr, for_range, i64, lane_mask, load_scalar, load_vector, store_vector
from ..llvm.types import I64, PTR, scalar_type
from ..targets.base import Target
from .common import new_kernel

MR = 6  # rows of the register tile (MR * NV accumulators + NV B vectors fit 32 AVX-512 registers)
NV = 2  # vectors of columns of the register tile
KC = 256  # k block: the packed B panel is KC * NV vectors (32 KiB with AVX-512)
N_SLOTS = 11


def supported(target: Target, a_dtype: DType, b_dtype: DType, out_dtype: DType) -> bool:
    return (
        a_dtype == b_dtype == out_dtype
        and out_dtype.is_float
        and out_dtype.bits in (32, 64)
        and target.vector_len(out_dtype.bits) > 1
    )


def tiles(b: L.IRBuilder, m):
    """Number of row tiles (the kernel's parallel range) for M rows."""
    return b.sdiv(b.add(m, i64(MR - 1)), i64(MR))


def emit_matmul(module: L.Module, target: Target, name: str, dt: DType, helpers: dict) -> L.Function:
    vlen = target.vector_len(dt.bits)
    fn, b = new_kernel(module, name, lean=True)
    args, begin, end = fn.args

    def slot(i):
        return b.load(b.gep(args, [i64(i)], source_etype=I64), typ=I64)

    pa, pb, pc = (b.inttoptr(slot(i), PTR) for i in range(3))
    m, n, k_len, sam, sak, sbk, sbn, scm = (slot(i) for i in range(3, N_SLOTS))
    ctx = LowerCtx(module, b, target, vlen, helpers)
    sctx = LowerCtx(module, b, target, 1, helpers)
    vt = L.VectorType(scalar_type(dt), vlen)
    fma = ctx.function(f"llvm.fma.v{vlen}{'f64' if dt.bits == 64 else 'f32'}", vt, [vt, vt, vt])
    accs = [[alloca(b, vt, name=f"acc{r}_{v}") for v in range(NV)] for r in range(MR)]
    width = NV * vlen
    panel = alloca(b, scalar_type(dt), size=i64(KC * width), name="panel")
    panel.align = 64
    zero = L.Constant(vt, None)

    def tile(i0, rows: int, j, kb, kc, masks):
        """C[i0:i0+rows, j:j+width] += A[i0:i0+rows, kb:kb+kc] @ panel (from zero when kb == 0)."""
        first = b.icmp_signed("==", kb, i64(0))
        crows = [b.add(b.mul(b.add(i0, i64(r)), scm), j) for r in range(rows)]
        for r in range(rows):
            for v in range(NV):
                p = elem_ptr(b, dt, pc, b.add(crows[r], i64(v * vlen)))
                old = load_vector(ctx, dt, p, masks and masks[v])
                b.store(b.select(first, zero, old), accs[r][v])
        a_rows = [b.mul(b.add(i0, i64(r)), sam) for r in range(rows)]
        with for_range(b, 0, kc, name="k", unroll=False) as k:
            bv = [
                b.load(elem_ptr(b, dt, panel, b.add(b.mul(k, i64(width)), i64(v * vlen))), typ=vt, align=64)
                for v in range(NV)
            ]
            ak = b.mul(b.add(kb, k), sak)
            for r in range(rows):
                a = ctx.splat(load_scalar(sctx, dt, elem_ptr(b, dt, pa, b.add(a_rows[r], ak))))
                for v in range(NV):
                    b.store(b.call(fma, [a, bv[v], b.load(accs[r][v], typ=vt)]), accs[r][v])
        for r in range(rows):
            for v in range(NV):
                p = elem_ptr(b, dt, pc, b.add(crows[r], i64(v * vlen)))
                store_vector(ctx, dt, p, b.load(accs[r][v], typ=vt), masks and masks[v])

    def pack(j, kb, kc, masks):
        """panel[k, :] = B[kb + k, j:j+width] (zero beyond N): vector copies when B is contiguous
        along N, else a gather (e.g. B = W.T of a Linear layer's weight)."""
        with b.if_else(b.icmp_signed("==", sbn, i64(1))) as (contiguous, strided):
            with contiguous, for_range(b, 0, kc, name="pk", unroll=False) as k:
                src = b.add(b.mul(b.add(kb, k), sbk), j)
                for v in range(NV):
                    p = elem_ptr(b, dt, pb, b.add(src, i64(v * vlen)))
                    dst = elem_ptr(b, dt, panel, b.add(b.mul(k, i64(width)), i64(v * vlen)))
                    b.store(load_vector(ctx, dt, p, masks and masks[v]), dst, align=64)
            with strided, for_range(b, 0, kc, name="gk", unroll=False) as k:
                row = b.mul(b.add(kb, k), sbk)
                with for_range(b, 0, width, name="gl", unroll=False) as lane:
                    col = b.add(j, lane)
                    inside = b.icmp_signed("<", col, n)
                    src = b.add(row, b.mul(b.select(inside, col, i64(0)), sbn))  # in bounds
                    x = load_scalar(sctx, dt, elem_ptr(b, dt, pb, src))
                    x = b.select(inside, x, L.Constant(x.type, 0))
                    b.store(x, elem_ptr(b, dt, panel, b.add(b.mul(k, i64(width)), lane)))

    def column_block(j, masks):
        with for_range(b, 0, k_len, KC, name="kb", unroll=False) as kb:
            kc = b.sub(k_len, kb)
            kc = b.select(b.icmp_signed("<", i64(KC), kc), i64(KC), kc)
            pack(j, kb, kc, masks)
            with for_range(b, begin, end, name="tile", unroll=False) as t:
                i0 = b.mul(t, i64(MR))
                left = b.sub(m, i0)
                with b.if_else(b.icmp_signed(">=", left, i64(MR))) as (full, partial):
                    with full:
                        tile(i0, MR, j, kb, kc, masks)
                    with partial, for_range(b, 0, left, name="r", unroll=False) as r:
                        tile(b.add(i0, r), 1, j, kb, kc, masks)

    # every column block is masked (all lanes but in the last): one copy of the block's loops
    # (compile time); the masks touch only C's loads and stores and the panel's packing
    with for_range(b, 0, n, width, name="j", unroll=False) as j:
        rem = b.sub(n, j)
        column_block(j, [lane_mask(ctx, b.sub(rem, i64(v * vlen))) for v in range(NV)])
    b.ret_void()
    return fn
