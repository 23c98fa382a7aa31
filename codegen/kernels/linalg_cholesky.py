"""Cholesky factorisation A = L L^H (LAPACK potrf's), one batch member per step of the range.

The Hermitian matrix is read from A's lower triangle (numpy's cholesky_lo), or, with `upper`,
from its upper one (cholesky_up: H[i, j] = conj(A[j, i])), into a row-major work matrix. Row by
row (the Cholesky-Banachiewicz order), L[i, j] = (H[i, j] - L[i, :j] . conj(L[j, :j])) / L[j, j]
and L[j, j] = sqrt(re H[j, j] - |L[j, :j]|^2): the dot products run over contiguous rows, in
vectors. A diagonal that is not positive (or NaN) sets the error slot, as potrf's info > 0 (the
entry raises LinAlgError("Matrix is not positive definite")). The output is L (lower) or L^H
(upper) with zeros in the other triangle, as numpy returns it.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.loops import for_range, i64
from ..llvm.types import I1, I64, PTR
from ..targets.base import Target
from .linalg_common import BatchArgs, KernelBuilder, Layout, compute_dtype, convert_value, dot_conj
from .linalg_common import operand_matrix, shared_function, work_matrix

OPERANDS = ("a", "l", "work")
SCALARS = ("n",)


def layout(batch_rank: int) -> Layout:
    return Layout(len(OPERANDS), batch_rank, len(SCALARS))


def emit_cholesky(module: L.Module, target: Target, name: str, out_dt: DType, in_dtype: DType, upper: bool,
                  batch_rank: int, helpers: dict) -> L.Function:
    dt = compute_dtype(out_dt)
    kb = KernelBuilder(module, target, name, helpers)
    b = kb.b
    args = BatchArgs(kb, layout(batch_rank))
    (n,) = args.scalars
    sa = kb.arith(dt)
    with for_range(b, kb.begin, kb.end, name="t") as t:
        offs = args.offsets(t)
        w = work_matrix(kb, args, 2, dt, offs[2], n)
        a = operand_matrix(kb, args, 0, in_dtype, offs[0])
        with for_range(b, i64(0), n, name="ci") as i, for_range(b, i64(0), b.add(i, i64(1)), name="cj") as j:
            v = a.load(j, i) if upper else a.load(i, j)
            v = convert_value(kb, v, in_dtype, dt)
            w.store(i, j, sa.conj(v) if upper else v)
        ok = _factor(kb, dt, w.base, n)
        with b.if_else(ok) as (good, bad):
            with good:
                out = operand_matrix(kb, args, 1, out_dt, offs[1], src=dt)
                with for_range(b, i64(0), n, name="oi") as i, for_range(b, i64(0), n, name="oj") as j:
                    # lower: L[i, j] for j <= i; upper: conj(L[j, i]) for i <= j; zeros elsewhere
                    r, c = (j, i) if upper else (i, j)
                    keep = b.icmp_signed("<=", c, r)
                    x = w.load(b.select(keep, r, i64(0)), b.select(keep, c, i64(0)))
                    out.store(i, j, sa.select(keep, sa.conj(x) if upper else x, sa.zero()))
            with bad:
                args.fail()
    return kb.finish()


def _factor(kb: KernelBuilder, dt: DType, w, n):
    """L in place of the lower triangle of the n x n row-major w; returns i1 "positive definite"."""
    fn = shared_function(kb, ("cholesky", dt.name), L.FunctionType(I1, [PTR, I64]),
                         lambda fb: fb.finish(_factor_body(fb, dt, *fb.fn.args)))
    return kb.b.call(fn, [w, n])


def _factor_body(kb: KernelBuilder, dt: DType, w, n):
    b = kb.b
    sa = kb.arith(dt)
    ok = kb.var(L.IntType(1), L.Constant(L.IntType(1), 1))
    with for_range(b, i64(0), n, name="fj") as j:
        with b.if_then(ok.get()):
            rj = b.mul(j, n)
            djj = sa.real(sa.load(w, b.add(rj, j)))
            d = b.fsub(djj, sa.real(dot_conj(kb, dt, w, rj, rj, i64(0), j)))
            positive = b.fcmp_ordered(">", d, sa.rconst(0.0))  # false for nan, as potrf's check
            ok.set(positive)
            with b.if_then(positive):
                ljj = sa.rsqrt(d)
                sa.store(w, b.add(rj, j), sa.from_real(ljj))
                inv = b.fdiv(sa.rconst(1.0), ljj)
                with for_range(b, b.add(j, i64(1)), n, name="fi") as i:
                    ri = b.mul(i, n)
                    s = sa.sub(sa.load(w, b.add(ri, j)), dot_conj(kb, dt, w, rj, ri, i64(0), j))
                    sa.store(w, b.add(ri, j), sa.scale(s, inv))
    return ok.get()
