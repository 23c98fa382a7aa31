"""The general eigenproblem (eig, eigvals) as LAPACK's geev does it, one batch member per step.

A member is copied (converted to complex128) into a row-major work matrix H. A NaN or an
infinity fails the member (numpy checks finiteness first: LinAlgError "Array must not contain
infs or NaNs"). Otherwise H is scaled by a power of two so that its largest |part| is near 1
(exact; the eigenvalues scale back), balanced, reduced to Hessenberg form and to the complex
Schur form T = Z^H H Z (kernels/linalg_schur.py). The eigenvalues are T's diagonal, in that order
(numpy's are in LAPACK's, which may differ: compare them as a set).

Eigenvectors (trevc's back substitution, then geev's normalisation): for each k from the last,
x solves (T[:k, :k] - T[k, k]) x = -T[:k, k] with x[k] = 1; a diagonal entry within
max(ulp |T[k, k]|, smlnum) of T[k, k] is moved that far away (repeated and defective eigenvalues
get finite, nearly parallel vectors, as LAPACK's), and x is rescaled whenever an entry exceeds
2^26, so the solve never overflows. Then v = D Z x (D: the balancing), scaled to unit 2-norm
with its largest component real and positive (zgeev's convention, dgeev's up to a sign: the
vectors of distinct eigenvalues are numpy's times +-1). v overwrites row k of Zt, which no later
(smaller) k reads.

Work per member (complex128 elements): H (n^2), Zt (n^2, with vectors), two scratch rows, the
balancing factors (n reals) and a tau: work_size.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType, complex128, float64

from ..llvm.loops import elem_ptr, for_range, i64
from ..llvm.types import I1, I64, PTR, VOID
from ..targets.base import Target
from .linalg_common import (
    BatchArgs,
    KernelBuilder,
    Layout,
    Matrix,
    copy_in,
    count_down,
    fill,
    nonfinite,
    operand_matrix,
    shared_function,
    strip,
)
from .linalg_schur import SAFMIN, ULP, balance, hessenberg, schur
from .linalg_svd import _scale as scale_to_unit

OPERANDS = {True: ("a", "w", "v", "work"), False: ("a", "w", "work")}
SCALARS = ("n",)
NO_CONVERGENCE, NOT_FINITE = 1, 2  # bits of the error slot (members on several threads or them in)
RESCALE = 2.0**26  # the back substitution rescales x when an entry exceeds this (hqr2's test)
DT = complex128  # numpy.linalg computes in double precision; complex throughout (linalg_schur)


def layout(vectors: bool, batch_rank: int) -> Layout:
    return Layout(len(OPERANDS[vectors]), batch_rank, len(SCALARS))


def work_size(n, vectors: bool):
    """complex128 elements of one member's work row (n: an int or a sympy size)."""
    return (2 if vectors else 1) * n * n + 3 * n + 1


def emit_eig(module: L.Module, target: Target, name: str, out_dt: DType, in_dtype: DType, vectors: bool,
             batch_rank: int, helpers: dict) -> L.Function:
    """out_dt: the (complex) dtype of w and v."""
    kb = KernelBuilder(module, target, name, helpers)
    b = kb.b
    args = BatchArgs(kb, layout(vectors, batch_rank))
    (n,) = args.scalars
    sa = kb.arith(DT)
    wk = len(OPERANDS[vectors]) - 1
    with for_range(b, kb.begin, kb.end, name="t") as t:
        offs = args.offsets(t)
        work = elem_ptr(b, DT, args.ptrs[wk], offs[wk])
        h = Matrix(sa, work, n, i64(1))
        copy_in(kb, operand_matrix(kb, args, 0, in_dtype, offs[0]), in_dtype, h, n, n)
        w_out = operand_matrix(kb, args, 1, out_dt, offs[1], src=DT)
        v_out = operand_matrix(kb, args, 2, out_dt, offs[2], src=DT) if vectors else None
        nan, inf = nonfinite(kb, DT, work, b.mul(n, n))
        with b.if_else(b.or_(nan, inf)) as (bad, good):
            with bad:
                _fail(kb, args, NOT_FINITE)
                fill(kb, w_out, n, i64(1), float("nan"))
                if vectors:
                    fill(kb, v_out, n, n, float("nan"))
            with good:
                scale = sa.rvar()
                ok = _core(kb, work, n, vectors, scale.ptr)
                with b.if_then(b.not_(ok)):
                    _fail(kb, args, NO_CONVERGENCE)
                with for_range(b, i64(0), n, name="wo") as k:
                    w_out.store(k, i64(0), sa.scale(h.load(k, k), scale.get()))
                if vectors:
                    vt = Matrix(sa, sa.ptr(work, b.mul(n, n)), n, i64(1))
                    with for_range(b, i64(0), n, name="vi") as i, for_range(b, i64(0), n, name="vj") as j:
                        v_out.store(i, j, vt.load(j, i))
    return kb.finish()


def _fail(kb: KernelBuilder, args: BatchArgs, bit: int) -> None:
    kb.b.atomic_rmw("or", args.error, i64(bit), "monotonic")


def _parts(kb: KernelBuilder, work, n, vectors):
    """Pointers into a member's work row: H, Zt, two scratch rows, the balancing factors, tau."""
    b = kb.b
    sa = kb.arith(DT)
    nn = b.mul(n, n)
    zt = sa.ptr(work, nn)
    vec = sa.ptr(zt, b.select(vectors, nn, i64(0)))
    tmp = sa.ptr(vec, n)
    d = sa.ptr(tmp, n)
    return work, zt, vec, tmp, d, sa.ptr(d, n)


def _core(kb: KernelBuilder, work, n, vectors: bool, scale_out):
    """Run the member in the work row (its matrix in H); *scale_out = the eigenvalues' scale;
    returns i1 "converged"."""
    ftype = L.FunctionType(I1, [PTR, I64, I1, PTR])
    fn = shared_function(kb, ("eig_core",), ftype, lambda fb: fb.finish(_core_body(fb, *fb.fn.args)))
    return kb.b.call(fn, [work, n, L.Constant(I1, int(vectors)), scale_out])


def _core_body(kb: KernelBuilder, work, n, vectors, scale_out):
    b = kb.b
    h, zt, vec, tmp, d, tau = _parts(kb, work, n, vectors)
    b.store(scale_to_unit(kb, DT, h, b.mul(n, n)), scale_out)
    balance(kb, DT, h, d, n)
    hessenberg(kb, DT, h, zt, vec, tmp, tau, n, vectors)
    ok = schur(kb, DT, h, zt, n, vectors)
    with b.if_then(b.and_(ok, vectors)):
        _vectors(kb, h, zt, vec, tmp, d, n)
    return ok


def _vectors(kb: KernelBuilder, t, zt, x, tmp, d, n) -> None:
    """Rows of Zt = the unit eigenvectors of the Schur form T (back-transformed by Zt and D)."""
    ftype = L.FunctionType(VOID, [PTR, PTR, PTR, PTR, PTR, I64])
    fn = shared_function(kb, ("eig_vectors",), ftype,
                         lambda fb: (_vectors_body(fb, *fb.fn.args), fb.finish()))
    kb.b.call(fn, [t, zt, x, tmp, d, n])


def _vectors_body(kb: KernelBuilder, t, zt, x, tmp, d, n) -> None:
    b = kb.b
    sa = kb.arith(DT)
    lanes = kb.lanes(DT)
    va = kb.arith(DT, lanes)
    with count_down(b, i64(0), n, name="ek") as k:
        _solve(kb, t, x, n, k)
        strip(kb, lanes, i64(0), n, lambda c, mask: va.store(tmp, c, va.zero(), mask))
        with for_range(b, i64(0), b.add(k, i64(1)), name="ez") as j:  # tmp = Z x = sum_j x[j] Zt[j, :]
            xj = va.splat(sa.load(x, j))
            row = b.mul(j, n)

            def axpy(c, mask, xj=xj, row=row):
                va.store(tmp, c, va.muladd(xj, va.load(zt, b.add(row, c), mask), va.load(tmp, c, mask)), mask)

            strip(kb, lanes, i64(0), n, axpy)
        row = b.mul(k, n)
        ra = kb.arith(float64)
        with for_range(b, i64(0), n, name="ed") as c:  # undo the balancing: v = D Z x
            sa.store(zt, b.add(row, c), sa.scale(sa.load(tmp, c), ra.load(d, c)))
        _normalise(kb, sa.ptr(zt, row), n)


def _solve(kb: KernelBuilder, t, x, n, k) -> None:
    """x[:k+1] with x[k] = 1 and (T[:k, :k] - T[k, k]) x[:k] = -T[:k, k] (rescaled as it goes)."""
    b = kb.b
    sa = kb.arith(DT)
    lanes = kb.lanes(DT)
    va = kb.arith(DT, lanes)
    lam = sa.load(t, b.add(b.mul(k, n), k))
    smlnum = b.fmul(sa.rconst(SAFMIN), b.fdiv(b.sitofp(n, sa.rtype), sa.rconst(ULP)))
    smin = sa.rmax(b.fmul(sa.rconst(ULP), sa.abs1(lam)), smlnum)
    sa.store(x, k, sa.one())
    k1 = b.add(k, i64(1))
    with count_down(b, i64(0), k, name="es") as r:
        row = b.mul(r, n)
        acc = va.var(va.zero())

        def dot(c, mask):
            acc.set(va.muladd(va.load(t, b.add(row, c), mask), va.load(x, c, mask), acc.get()))

        strip(kb, lanes, b.add(r, i64(1)), k1, dot)
        diag = sa.sub(sa.load(t, b.add(row, r)), lam)
        diag = sa.select(b.fcmp_ordered("<", sa.abs1(diag), smin), sa.from_real(smin), diag)
        xr = sa.neg(sa.div(va.hsum(acc.get()), diag))
        sa.store(x, r, xr)
        big = sa.abs1(xr)
        with b.if_then(b.fcmp_ordered(">", big, sa.rconst(RESCALE))):
            inv = va.ctx.splat(b.fdiv(sa.rconst(1.0), big))
            strip(kb, lanes, r, k1, lambda c, mask: va.store(x, c, va.scale(va.load(x, c, mask), inv), mask))


def _normalise(kb: KernelBuilder, v, n) -> None:
    """v[:n] scaled to unit 2-norm with its largest |component| real and positive (zgeev)."""
    b = kb.b
    sa = kb.arith(DT)
    zero, one = sa.rconst(0.0), sa.rconst(1.0)
    top = sa.rvar(zero)
    with for_range(b, i64(0), n, name="nm") as i:
        top.set(sa.rmax(sa.abs1(sa.load(v, i)), top.get()))
    inv_top = b.fdiv(one, top.get())  # so that the sum of squares cannot overflow
    ssq, best = sa.rvar(zero), sa.rvar(sa.rconst(-1.0))
    at = kb.var(I64, i64(0))
    with for_range(b, i64(0), n, name="ns") as i:
        m2 = sa.abs2(sa.scale(sa.load(v, i), inv_top))
        ssq.set(b.fadd(ssq.get(), m2))
        larger = b.fcmp_ordered(">", m2, best.get())
        best.set(b.select(larger, m2, best.get()))
        at.set(b.select(larger, i, at.get()))
    with b.if_then(b.fcmp_ordered(">", top.get(), zero)):
        lead = sa.scale(sa.load(v, at.get()), inv_top)
        # v * conj(lead) / (|lead| ||v / top|| top)
        denom = b.fmul(b.fmul(sa.rsqrt(best.get()), sa.rsqrt(ssq.get())), top.get())
        f = sa.scale(sa.conj(lead), b.fdiv(one, denom))
        with for_range(b, i64(0), n, name="nf") as i:
            sa.store(v, i, sa.mul(sa.load(v, i), f))
        p = at.get()
        sa.store(v, p, sa.from_real(sa.real(sa.load(v, p))))
