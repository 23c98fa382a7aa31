"""C -= A @ B on row-major blocks: the level-3 update of the blocked factorisations (the trailing
matrix of LU, the block back-substitution).

`void gemm_sub(ptr C, ptr A, ptr B, i64 m, i64 n, i64 k, i64 ldc, i64 lda, i64 ldb)`: for i < m,
j < n, C[i*ldc + j] -= sum_{p<k} A[i*lda + p] * B[p*ldb + j]. As the matmul kernel
(kernels/matmul.py): a register tile of MR rows x NV vectors of C stays in accumulators while p
runs, each step loading NV vectors of B's row p and broadcasting MR scalars of A's column p; the
last column block is masked, the last rows (m % MR) run one at a time. One internal function per
module and dtype (helpers cache).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.context import LowerCtx
from ..llvm.loops import for_range, i64, lane_mask
from ..llvm.types import I64, PTR, VOID
from ..targets.base import Target
from .linalg_common import KernelBuilder

MR = 4  # rows of the register tile
GEMM_TYPE = L.FunctionType(VOID, [PTR, PTR, PTR, I64, I64, I64, I64, I64, I64])


def gemm_sub(module: L.Module, target: Target, dt: DType, helpers: dict) -> L.Function:
    key = ("linalg.gemm_sub", dt.name)
    fn = helpers.get(key)
    if fn is None:
        fn = helpers[key] = _emit(module, target, dt, helpers)
    return fn


def _emit(module: L.Module, target: Target, dt: DType, helpers: dict) -> L.Function:
    kb = KernelBuilder(module, target, f"aot.linalg.gemm_sub.{dt.name}", helpers, GEMM_TYPE)
    b = kb.b
    pc, pa, pb, m, n, kd, ldc, lda, ldb = kb.fn.args
    for a in (pc, pa, pb):
        a.add_attribute("noalias")
    lanes = kb.lanes(dt)
    nv = 1 if lanes == 1 or dt.is_complex else 2  # complex tiles hold two accumulators per element
    va, sa = kb.arith(dt, lanes), kb.arith(dt)
    width = nv * lanes
    accs = [[va.var() for _ in range(nv)] for _ in range(MR)]

    def tile(i0, rows: int, j, masks):
        for r in range(rows):
            crow = b.add(b.mul(b.add(i0, i64(r)), ldc), j)
            for v in range(nv):
                accs[r][v].set(va.load(pc, b.add(crow, i64(v * lanes)), masks and masks[v]))
        arows = [b.mul(b.add(i0, i64(r)), lda) for r in range(rows)]
        with for_range(b, i64(0), kd, name="p") as p:
            brow = b.add(b.mul(p, ldb), j)
            bv = [va.load(pb, b.add(brow, i64(v * lanes)), masks and masks[v]) for v in range(nv)]
            for r in range(rows):
                x = va.splat(sa.load(pa, b.add(arows[r], p)))
                for v in range(nv):
                    accs[r][v].set(va.mulsub(accs[r][v].get(), x, bv[v]))
        for r in range(rows):
            crow = b.add(b.mul(b.add(i0, i64(r)), ldc), j)
            for v in range(nv):
                va.store(pc, b.add(crow, i64(v * lanes)), accs[r][v].get(), masks and masks[v])

    def column_block(j, masks):
        with for_range(b, i64(0), m, MR, name="t") as i0:
            left = b.sub(m, i0)
            with b.if_else(b.icmp_signed(">=", left, i64(MR))) as (full, partial):
                with full:
                    tile(i0, MR, j, masks)
                with partial, for_range(b, i64(0), left, name="r") as r:
                    tile(b.add(i0, r), 1, j, masks)

    # one masked column-block body for every block (masked vector loads cost what plain ones do
    # where it matters, and one body compiles in half the time)
    with for_range(b, i64(0), n, width, name="j") as j:
        if width > 1:
            ctx = LowerCtx(module, b, target, lanes, helpers)
            rem = b.sub(n, j)
            column_block(j, [lane_mask(ctx, b.sub(rem, i64(v * lanes))) for v in range(nv)])
        else:
            column_block(j, None)
    return kb.finish()
