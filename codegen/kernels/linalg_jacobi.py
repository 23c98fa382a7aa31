"""The Hermitian eigenproblem by cyclic Jacobi (eigh, eigvalsh), one batch member per step.

The Hermitian matrix is read from A's lower triangle (UPLO 'L') or upper one ('U'), with a real
diagonal, into a full row-major work matrix W. Sweeps visit every pair p < q in row order; a pair
whose |W[p, q]| exceeds eps * sqrt(|W[p, p]| |W[q, q]|) (a relative test: small eigenvalues keep
their relative accuracy) is annihilated by the unitary G = [[c, s], [-s u*, c u*]], u the phase
of W[p, q] and (c, s) the real Jacobi rotation of [[W[p, p], |W[p, q]|], [|W[p, q]|, W[q, q]]]:
W = G^H W G updates rows p and q in vectors and mirrors them into columns p and q (W stays
Hermitian), and the eigenvector matrix, kept as its transpose Z = V^T, takes Z_p, Z_q = rows of
Z G. Sweeps stop when one rotates nothing (at most MAX_SWEEPS). The eigenvalues are the diagonal,
sorted ascending with their vectors (numpy's order).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.loops import for_range, i64, while_loop
from ..llvm.types import I1, I64, PTR
from ..targets.base import Target
from .linalg_common import Arith, BatchArgs, KernelBuilder, Layout, compute_dtype, convert_value
from .linalg_common import fill, nonfinite, operand_matrix, shared_function, strip, work_matrix

MAX_SWEEPS = 60
OPERANDS = {True: ("a", "w", "v", "work"), False: ("a", "w", "work")}
SCALARS = ("n",)
EPS = {32: 2.0**-23, 64: 2.0**-52}
TINY = {32: 1.1754943508222875e-38, 64: 2.2250738585072014e-308}


def layout(vectors: bool, batch_rank: int) -> Layout:
    return Layout(len(OPERANDS[vectors]), batch_rank, len(SCALARS))


def rotation(sa: Arith, a, d, mag):
    """(c, s, t) of the real Jacobi rotation diagonalising [[a, mag], [mag, d]] (mag > 0):
    tau = (d - a) / 2 mag, t = sign(tau) / (|tau| + sqrt(1 + tau^2)), c = 1 / sqrt(1 + t^2)."""
    b = sa.b
    one = sa.rconst(1.0)
    tau = b.fdiv(b.fsub(d, a), b.fmul(sa.rconst(2.0), mag))
    t = b.fdiv(sa.ctx.intrinsic("copysign", [one, tau]), b.fadd(sa.rabs(tau), sa.rhypot(one, tau)))
    c = b.fdiv(one, sa.rhypot(one, t))
    return c, b.fmul(t, c), t


def phase(sa: Arith, x, mag):
    """x / |x| (real: the sign)."""
    return sa.scale(x, sa.b.fdiv(sa.rconst(1.0), mag))


def rotate_rows(kb: KernelBuilder, dt: DType, base, rp, rq, lo, hi, c, s, u) -> None:
    """Rows p, q (offsets rp, rq) over [lo, hi): p' = c p - s u q, q' = s p + c u q."""
    b = kb.b
    sa = kb.arith(dt)
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)
    cv, sv = va.ctx.splat(c) if lanes > 1 else c, va.ctx.splat(s) if lanes > 1 else s
    su = va.splat(sa.scale(u, s))
    cu = va.splat(sa.scale(u, c))

    def body(j, mask):
        p, q = b.add(rp, j), b.add(rq, j)
        x, y = va.load(base, p, mask), va.load(base, q, mask)
        va.store(base, p, va.mulsub(va.scale(x, cv), su, y), mask)
        va.store(base, q, va.muladd(cu, y, va.scale(x, sv)), mask)

    strip(kb, lanes, lo, hi, body)


def emit_eigh(module: L.Module, target: Target, name: str, out_dt: DType, in_dtype: DType, uplo: str,
              vectors: bool, batch_rank: int, helpers: dict) -> L.Function:
    """out_dt: the eigenvectors' dtype (the eigenvalues are its real dtype)."""
    dt = compute_dtype(out_dt)
    kb = KernelBuilder(module, target, name, helpers)
    b = kb.b
    args = BatchArgs(kb, layout(vectors, batch_rank))
    (n,) = args.scalars
    sa = kb.arith(dt)
    wk = len(OPERANDS[vectors]) - 1
    with for_range(b, kb.begin, kb.end, name="t") as t:
        offs = args.offsets(t)
        w = work_matrix(kb, args, wk, dt, offs[wk], n)
        z = work_matrix(kb, args, wk, dt, b.add(offs[wk], b.mul(n, n)), n) if vectors else None
        a = operand_matrix(kb, args, 0, in_dtype, offs[0])
        with for_range(b, i64(0), n, name="ci") as i, for_range(b, i64(0), b.add(i, i64(1)), name="cj") as j:
            x = convert_value(kb, a.load(j, i) if uplo == "U" else a.load(i, j), in_dtype, dt)
            x = sa.conj(x) if uplo == "U" else x
            x = sa.select(b.icmp_signed("==", i, j), sa.from_real(sa.real(x)), x)
            w.store(i, j, x)
            w.store(j, i, sa.conj(x))
        wout = operand_matrix(kb, args, 1, out_dt.real_dtype, offs[1], src=dt.real_dtype)
        v = operand_matrix(kb, args, 2, out_dt, offs[2], src=dt) if vectors else None
        nan, inf = nonfinite(kb, dt, w.base, b.mul(n, n))
        with b.if_else(b.or_(nan, inf)) as (bad, good):
            with bad:  # numpy (LAPACK's heevd) returns NaNs
                fill(kb, wout, n, i64(1), float("nan"))
                if vectors:
                    fill(kb, v, n, n, float("nan"))
            with good:
                if vectors:
                    with for_range(b, i64(0), n, name="zi") as i, for_range(b, i64(0), n, name="zj") as j:
                        z.store(i, j, sa.select(b.icmp_signed("==", i, j), sa.one(), sa.zero()))
                with b.if_then(b.not_(_sweeps(kb, dt, w.base, z.base if vectors else None, n))):
                    args.fail()
                with for_range(b, i64(0), n, name="wi") as i:
                    wout.store(i, i64(0), sa.real(w.load(i, i)))
                if vectors:
                    with for_range(b, i64(0), n, name="vi") as i, for_range(b, i64(0), n, name="vj") as j:
                        v.store(i, j, z.load(j, i))
    return kb.finish()


def _sweeps(kb: KernelBuilder, dt: DType, w, z, n):
    """Jacobi sweeps on the Hermitian n x n w (accumulating into z unless None), then the diagonal
    sorted ascending (with z's rows); returns i1 "converged"."""
    fn = shared_function(kb, ("eigh_sweeps", dt.name), L.FunctionType(I1, [PTR, PTR, I64]),
                         lambda fb: fb.finish(_sweeps_body(fb, dt, *fb.fn.args)))
    return kb.b.call(fn, [w, z if z is not None else L.Constant(PTR, None), n])


def _sweeps_body(kb: KernelBuilder, dt: DType, w, z, n):
    """i1 sweeps(ptr w, ptr z, i64 n); z null: no vectors."""
    b = kb.b
    vectors = b.icmp_unsigned("!=", z, L.Constant(PTR, None))
    sa = kb.arith(dt)
    eps, tiny = sa.rconst(EPS[dt.real_dtype.bits]), sa.rconst(TINY[dt.real_dtype.bits])
    sweep = kb.var(I64, i64(0))
    more = kb.var(I1, L.Constant(I1, 1))

    def at(i, j):
        return b.add(b.mul(i, n), j)

    with while_loop(b, lambda: b.and_(more.get(), b.icmp_signed("<", sweep.get(), i64(MAX_SWEEPS))), "sw"):
        more.set(L.Constant(I1, 0))
        sweep.set(b.add(sweep.get(), i64(1)))
        with for_range(b, i64(0), n, name="p") as p, for_range(b, b.add(p, i64(1)), n, name="q") as q:
            apq = sa.load(w, at(p, q))
            mag = sa.abs(apq)
            app, aqq = sa.real(sa.load(w, at(p, p))), sa.real(sa.load(w, at(q, q)))
            thr = b.fmul(eps, b.fmul(sa.rsqrt(sa.rabs(app)), sa.rsqrt(sa.rabs(aqq))))
            go = b.and_(b.fcmp_ordered(">", mag, thr), b.fcmp_ordered(">", mag, tiny))
            with b.if_then(go):
                more.set(L.Constant(I1, 1))
                c, s, t = rotation(sa, app, aqq, mag)
                u = phase(sa, apq, mag)
                rotate_rows(kb, dt, w, at(p, i64(0)), at(q, i64(0)), i64(0), n, c, s, u)
                with b.if_then(vectors):
                    rotate_rows(kb, dt, z, at(p, i64(0)), at(q, i64(0)), i64(0), n, c, s, sa.conj(u))
                with for_range(b, i64(0), n, name="m") as r:  # columns p, q: conj of the new rows
                    sa.store(w, at(r, p), sa.conj(sa.load(w, at(p, r))))
                    sa.store(w, at(r, q), sa.conj(sa.load(w, at(q, r))))
                tm = b.fmul(t, mag)
                sa.store(w, at(p, p), sa.from_real(b.fsub(app, tm)))
                sa.store(w, at(q, q), sa.from_real(b.fadd(aqq, tm)))
                sa.store(w, at(p, q), sa.zero())
                sa.store(w, at(q, p), sa.zero())
    converged = b.not_(more.get())
    _sort(kb, dt, w, z, n, vectors)
    return converged


def _sort(kb: KernelBuilder, dt: DType, w, z, n, vectors) -> None:
    """Selection sort of the diagonal, ascending, with the rows of z (when the i1 `vectors` holds)."""
    b = kb.b
    sa = kb.arith(dt)
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)

    def diag(i):
        return b.add(b.mul(i, n), i)

    with for_range(b, i64(0), n, name="si") as i:
        best = sa.rvar(sa.real(sa.load(w, diag(i))))
        at = kb.var(I64, i)
        with for_range(b, b.add(i, i64(1)), n, name="sj") as j:
            x = sa.real(sa.load(w, diag(j)))
            lower = b.fcmp_ordered("<", x, best.get())
            best.set(b.select(lower, x, best.get()))
            at.set(b.select(lower, j, at.get()))
        j = at.get()
        with b.if_then(b.icmp_signed("!=", j, i)):
            x, y = sa.load(w, diag(i)), sa.load(w, diag(j))
            sa.store(w, diag(i), y)
            sa.store(w, diag(j), x)
            with b.if_then(vectors):
                ri, rj = b.mul(i, n), b.mul(j, n)

                def swap(c, mask, ri=ri, rj=rj):
                    p, q = b.add(ri, c), b.add(rj, c)
                    x, y = va.load(z, p, mask), va.load(z, q, mask)
                    va.store(z, p, y, mask)
                    va.store(z, q, x, mask)

                strip(kb, lanes, i64(0), n, swap)
