"""LU with partial pivoting (LAPACK getrf's algorithm) and what numpy computes from it: det,
slogdet, inv and solve, one batch member per step of the kernel's range.

A member's matrix is copied into its work matrix W = [A | B] (n x (n + k), row-major), B being
solve's right-hand sides or inv's identity (k = 0 for det/slogdet). The blocked right-looking
factorisation runs over W's full rows, so the row swaps and the forward substitution L^-1 P B
happen on B as part of it: per block of NB columns, the panel is factored column by column (the
pivot is the first entry of largest |re| + |im|, as LAPACK's i*amax; a zero pivot marks the
matrix singular, as getrf's info > 0), the block row right of the panel is solved with the unit
lower triangle, and the trailing matrix takes one C -= A @ B update (linalg_gemm). Then U X = Y
is solved bottom-up in blocks (a triangular block, then one gemm update of the rows above).

det and slogdet follow numpy's umath_linalg: sign = (-1)^swaps * prod(u_ii / |u_ii|), logdet =
sum(log |u_ii|), det = sign * exp(logdet); a singular matrix has sign 0 and logdet -inf. inv and
solve set the error slot for a singular member (the entry raises LinAlgError("Singular matrix")).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.loops import for_range, i64
from ..llvm.types import I1, I64, PTR, VOID
from ..targets.base import Target
from .linalg_common import BatchArgs, KernelBuilder, Layout, Matrix, compute_dtype, copy_in, copy_out
from .linalg_common import count_down, imin, operand_matrix, shared_function, strip, work_matrix
from .linalg_gemm import gemm_sub

NB = 32  # columns per panel (and rows per block of the back substitution)

# operands of each kernel, in argument order (the last is the work matrix)
OPERANDS = {
    "det": ("a", "det", "work"),
    "slogdet": ("a", "sign", "logdet", "work"),
    "inv": ("a", "inv", "work"),
    "solve": ("a", "b", "x", "work"),
}
SCALARS = ("n", "k")


def layout(mode: str, batch_rank: int) -> Layout:
    return Layout(len(OPERANDS[mode]), batch_rank, len(SCALARS))


def emit_lu(module: L.Module, target: Target, name: str, mode: str, out_dt: DType, in_dtypes: list,
            batch_rank: int, helpers: dict, nan_if_singular: bool = False) -> L.Function:
    """out_dt: the result's dtype (the work matrix is compute_dtype(out_dt)); nan_if_singular: inv
    writes NaNs for a singular member instead of failing."""
    dt = compute_dtype(out_dt)
    kb = KernelBuilder(module, target, name, helpers)
    b = kb.b
    args = BatchArgs(kb, layout(mode, batch_rank))
    names = OPERANDS[mode]
    n, k = args.scalars
    ld = b.add(n, k)
    with for_range(b, kb.begin, kb.end, name="t") as t:
        offs = args.offsets(t)
        w = work_matrix(kb, args, len(names) - 1, dt, offs[-1], ld)
        a = operand_matrix(kb, args, 0, in_dtypes[0], offs[0])
        copy_in(kb, a, in_dtypes[0], w, n, n)
        rhs = Matrix(w.a, w.a.ptr(w.base, n), ld, i64(1))  # W[:, n:]
        if mode == "inv":
            _identity(kb, rhs, n)
        elif mode == "solve":
            copy_in(kb, operand_matrix(kb, args, 1, in_dtypes[1], offs[1]), in_dtypes[1], rhs, n, k)
        singular, parity = lu_factor(kb, dt, w.base, n, ld)
        if mode in ("det", "slogdet"):
            _determinant(kb, args, mode, dt, out_dt, w.base, n, ld, singular, parity, offs)
        else:
            out = operand_matrix(kb, args, len(names) - 2, out_dt, offs[len(names) - 2], src=dt)
            with b.if_else(singular) as (bad, good):
                with bad:
                    if nan_if_singular:
                        _identity(kb, rhs, n, fill=float("nan"))
                        copy_out(kb, rhs, out, n, k)
                    else:
                        args.fail()
                with good:
                    back_substitute(kb, dt, w.base, n, ld, k)
                    copy_out(kb, rhs, out, n, k)
    return kb.finish()


def _identity(kb: KernelBuilder, m: Matrix, n, fill: float | None = None) -> None:
    """The n x n identity into m (every entry `fill` when given)."""
    b = kb.b
    with for_range(b, i64(0), n, name="ii") as i, for_range(b, i64(0), n, name="ij") as j:
        if fill is not None:
            m.store(i, j, m.a.const(complex(fill, fill) if m.a.cplx else fill))
        else:
            m.store(i, j, m.a.select(b.icmp_signed("==", i, j), m.a.one(), m.a.zero()))


def row_axpy(kb: KernelBuilder, dt: DType, w, dst, src, x, lo, hi) -> None:
    """w[dst + j] -= x * w[src + j] for j in [lo, hi) (x a scalar)."""
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)
    xv = va.splat(x)
    b = kb.b

    def body(j, mask):
        d = b.add(dst, j)
        va.store(w, d, va.mulsub(va.load(w, d, mask), xv, va.load(w, b.add(src, j), mask)), mask)

    strip(kb, lanes, lo, hi, body)


def _swap_rows(kb: KernelBuilder, dt: DType, w, r0, r1, cols) -> None:
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)
    b = kb.b

    def body(j, mask):
        p, q = b.add(r0, j), b.add(r1, j)
        x, y = va.load(w, p, mask), va.load(w, q, mask)
        va.store(w, p, y, mask)
        va.store(w, q, x, mask)

    strip(kb, lanes, i64(0), cols, body)


def lu_factor(kb: KernelBuilder, dt: DType, w, n, ld):
    """Factor the n x n block of the row-major W (leading dimension ld) in place, P W = L U, with
    every row operation applied to W's full rows. Returns (i1 singular, i64 parity of the swaps)."""
    fn = shared_function(kb, ("lu_factor", dt.name), L.FunctionType(I64, [PTR, I64, I64]),
                         lambda fb: _lu_factor_body(fb, dt))
    flags = kb.b.call(fn, [w, n, ld])
    return kb.b.icmp_signed("!=", kb.b.and_(flags, i64(1)), i64(0)), kb.b.lshr(flags, i64(1))


def _lu_factor_body(kb: KernelBuilder, dt: DType) -> None:
    """i64 lu_factor(ptr w, i64 n, i64 ld): singular | parity << 1."""
    w, n, ld = kb.fn.args
    b = kb.b
    sa = kb.arith(dt)
    singular = kb.var(I1, L.Constant(I1, 0))
    parity = kb.var(I64, i64(0))
    gemm = gemm_sub(kb.module, kb.target, dt, kb.helpers)

    def at(i, j):
        return b.add(b.mul(i, ld), j)

    with for_range(b, i64(0), n, NB, name="kb") as k0:
        k1 = imin(b, b.add(k0, i64(NB)), n)
        with for_range(b, k0, k1, name="k") as k:
            best = sa.rvar(sa.abs1(sa.load(w, at(k, k))))
            piv = kb.var(I64, k)
            with for_range(b, b.add(k, i64(1)), n, name="pi") as i:
                x = sa.abs1(sa.load(w, at(i, k)))
                better = b.fcmp_ordered(">", x, best.get())
                best.set(b.select(better, x, best.get()))
                piv.set(b.select(better, i, piv.get()))
            p = piv.get()
            with b.if_then(b.icmp_signed("!=", p, k)):
                parity.set(b.xor(parity.get(), i64(1)))
                _swap_rows(kb, dt, w, at(k, i64(0)), at(p, i64(0)), ld)
            d = sa.load(w, at(k, k))
            with b.if_else(sa.is_zero(d)) as (zero, nonzero):
                with zero:
                    singular.set(L.Constant(I1, 1))
                with nonzero:
                    _eliminate(kb, dt, w, k, k1, n, ld, d)
        with for_range(b, k0, k1, name="uk") as k, for_range(b, b.add(k, i64(1)), k1, name="ui") as i:
            row_axpy(kb, dt, w, at(i, i64(0)), at(k, i64(0)), sa.load(w, at(i, k)), k1, ld)
        ptr = sa.ptr
        b.call(gemm, [ptr(w, at(k1, k1)), ptr(w, at(k1, k0)), ptr(w, at(k0, k1)), b.sub(n, k1), b.sub(ld, k1),
                      b.sub(k1, k0), ld, ld, ld])
    kb.finish(b.or_(b.zext(singular.get(), I64), b.shl(parity.get(), i64(1))))


def _eliminate(kb: KernelBuilder, dt: DType, w, k, k1, n, ld, d) -> None:
    """Column k below the pivot d becomes L's multipliers; the panel's columns (k, k1) take the
    rank-1 update."""
    b = kb.b
    sa = kb.arith(dt)
    rd = sa.recip(d) if dt.is_complex else None
    with for_range(b, b.add(k, i64(1)), n, name="ei") as i:
        p = b.add(b.mul(i, ld), k)
        x = sa.load(w, p)
        m = sa.mul(x, rd) if dt.is_complex else sa.div(x, d)
        sa.store(w, p, m)
        row_axpy(kb, dt, w, b.mul(i, ld), b.mul(k, ld), m, b.add(k, i64(1)), k1)


def back_substitute(kb: KernelBuilder, dt: DType, w, n, ld, k) -> None:
    """Solve U X = Y in place, Y = W[:, n:n+k], U the upper triangle of W[:, :n]."""
    fn = shared_function(kb, ("back_substitute", dt.name), L.FunctionType(VOID, [PTR, I64, I64, I64]),
                         lambda fb: _back_substitute_body(fb, dt))
    kb.b.call(fn, [w, n, ld, k])


def _back_substitute_body(kb: KernelBuilder, dt: DType) -> None:
    w, n, ld, k = kb.fn.args
    b = kb.b
    sa = kb.arith(dt)
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)
    gemm = gemm_sub(kb.module, kb.target, dt, kb.helpers)

    def at(i, j):
        return b.add(b.mul(i, ld), j)

    blocks = b.sdiv(b.add(n, i64(NB - 1)), i64(NB))
    with count_down(b, i64(0), blocks, name="bq") as q:
        j0 = b.mul(q, i64(NB))
        j1 = imin(b, b.add(j0, i64(NB)), n)
        with count_down(b, j0, j1, name="bj") as j:
            d = sa.load(w, at(j, j))
            rd = va.splat(sa.recip(d)) if dt.is_complex else va.splat(d)
            row = at(j, i64(0))

            def scale(c, mask, row=row, rd=rd):
                p = b.add(row, c)
                y = va.load(w, p, mask)
                va.store(w, p, va.mul(y, rd) if dt.is_complex else va.div(y, rd), mask)

            strip(kb, lanes, n, ld, scale)
            with for_range(b, j0, j, name="bi") as i:
                row_axpy(kb, dt, w, at(i, i64(0)), row, sa.load(w, at(i, j)), n, ld)
        ptr = sa.ptr
        b.call(gemm, [ptr(w, at(i64(0), n)), ptr(w, at(i64(0), j0)), ptr(w, at(j0, n)), j0, k, b.sub(j1, j0),
                      ld, ld, ld])
    kb.finish()


def _determinant(kb: KernelBuilder, args: BatchArgs, mode: str, dt: DType, out_dt: DType, w, n, ld, singular,
                 parity, offs) -> None:
    b = kb.b
    sa = kb.arith(dt)
    odd = b.icmp_signed("!=", parity, i64(0))
    sign = sa.var(sa.select(odd, sa.const(-1.0), sa.one()))
    logdet = sa.rvar(sa.rconst(0.0))
    with for_range(b, i64(0), n, name="di") as i:
        d = sa.load(w, b.add(b.mul(i, ld), i))
        if dt.is_complex:
            ad = sa.abs(d)
            sign.set(sa.mul(sign.get(), sa.scale(d, b.fdiv(sa.rconst(1.0), ad))))
        else:
            ad = sa.rabs(d)
            sign.set(sa.select(b.fcmp_ordered("<", d, sa.rconst(0.0)), sa.neg(sign.get()), sign.get()))
        logdet.set(b.fadd(logdet.get(), sa.rlog(ad)))
    s = sa.select(singular, sa.zero(), sign.get())
    ld_ = b.select(singular, sa.rconst(float("-inf")), logdet.get())
    if mode == "det":
        det = sa.scale(s, sa.rexp(ld_)) if dt.is_complex else b.fmul(s, sa.rexp(ld_))
        operand_matrix(kb, args, 1, out_dt, offs[1], dt).store(i64(0), i64(0), det)
    else:
        operand_matrix(kb, args, 1, out_dt, offs[1], dt).store(i64(0), i64(0), s)
        operand_matrix(kb, args, 2, out_dt.real_dtype, offs[2], dt.real_dtype).store(i64(0), i64(0), ld_)
