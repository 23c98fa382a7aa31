"""Householder QR (LAPACK geqr2 + org2r), one batch member per step of the range.

A member is copied into a row-major work matrix W (m + 1 rows, n + 1 columns: the last row is
scratch for the w = v^H A row vectors, the last column holds the taus). For each of the
k = min(m, n) columns, the reflector H = I - tau v v^H with v = (1, x / (alpha - beta)) and
beta = -sign(re alpha) * |(alpha, x)| (LAPACK's larfg: R's diagonal gets numpy's signs) maps the
column onto beta e_1, and H^H is applied to the columns right of it: w = v^H W, W -= conj(tau) v w
(row updates, in vectors). R is W's upper triangle; Q = H_1 ... H_k applied to the first columns of
the identity, last reflector first, in a second work matrix (m + 1 rows, mq columns).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.loops import for_range, i64
from ..llvm.types import I64, PTR, VOID
from ..targets.base import Target
from .linalg_common import BatchArgs, KernelBuilder, Layout, compute_dtype, copy_in, count_down, imin
from .linalg_common import operand_matrix, scaled_norm, shared_function, strip, work_matrix

OPERANDS = ("a", "q", "r", "work", "qwork")
SCALARS = ("m", "n", "mq")  # mq: Q's columns (k reduced, m complete)


def layout(batch_rank: int) -> Layout:
    return Layout(len(OPERANDS), batch_rank, len(SCALARS))


def emit_qr(module: L.Module, target: Target, name: str, out_dt: DType, in_dtype: DType, batch_rank: int,
            helpers: dict) -> L.Function:
    dt = compute_dtype(out_dt)
    kb = KernelBuilder(module, target, name, helpers)
    b = kb.b
    args = BatchArgs(kb, layout(batch_rank))
    m, n, mq = args.scalars
    sa = kb.arith(dt)
    k = imin(b, m, n)
    ldw = b.add(n, i64(1))
    with for_range(b, kb.begin, kb.end, name="t") as t:
        offs = args.offsets(t)
        w = work_matrix(kb, args, 3, dt, offs[3], ldw)
        copy_in(kb, operand_matrix(kb, args, 0, in_dtype, offs[0]), in_dtype, w, m, n)
        factor(kb, dt, w.base, m, n, ldw)
        # R: the first rows of W's upper triangle (k rows reduced, m complete: R's rows = Q's columns)
        r = operand_matrix(kb, args, 2, out_dt, offs[2], src=dt)
        with for_range(b, i64(0), mq, name="ri") as i, for_range(b, i64(0), n, name="rj") as j:
            upper = b.and_(b.icmp_signed("<=", i, j), b.icmp_signed("<", i, m))
            x = w.load(b.select(upper, i, i64(0)), j)
            r.store(i, j, sa.select(upper, x, sa.zero()))
        q = work_matrix(kb, args, 4, dt, offs[4], mq)
        form_q(kb, dt, w.base, ldw, q.base, m, k, mq, n)
        out = operand_matrix(kb, args, 1, out_dt, offs[1], src=dt)
        with for_range(b, i64(0), m, name="qi") as i, for_range(b, i64(0), mq, name="qj") as j:
            out.store(i, j, q.load(i, j))
    return kb.finish()


def _reflector(kb: KernelBuilder, dt: DType, w, ldw, j, m, tau_at):
    """larfg on column j of W below row j: W[j, j] = beta, W[j+1:, j] = v[1:], W[j, tau] = tau."""
    b = kb.b
    sa = kb.arith(dt)

    def col(i):
        return b.add(b.mul(i, ldw), j)

    alpha = sa.load(w, col(j))
    xnorm = scaled_norm(kb, dt, lambda i: sa.load(w, col(i)), b.add(j, i64(1)), m)
    ar, ai = sa.real(alpha), sa.imag(alpha)
    zero = sa.rconst(0.0)
    trivial = b.and_(b.fcmp_ordered("==", xnorm, zero), b.fcmp_ordered("==", ai, zero))
    with b.if_else(trivial) as (keep, reflect):
        with keep:
            sa.store(w, tau_at, sa.zero())
        with reflect:
            mag = _hypot3(kb, dt, ar, ai, xnorm)
            beta = b.fneg(sa.ctx.intrinsic("copysign", [mag, ar]))
            inv_beta = b.fdiv(sa.rconst(1.0), beta)
            tau = (b.fmul(b.fsub(beta, ar), inv_beta), b.fneg(b.fmul(ai, inv_beta))) if dt.is_complex else \
                b.fmul(b.fsub(beta, ar), inv_beta)
            scal = sa.recip(sa.sub(alpha, sa.from_real(beta)))
            with for_range(b, b.add(j, i64(1)), m, name="hs") as i:
                sa.store(w, col(i), sa.mul(sa.load(w, col(i)), scal))
            sa.store(w, col(j), sa.from_real(beta))
            sa.store(w, tau_at, tau)


def _hypot3(kb: KernelBuilder, dt: DType, x, y, z):
    """sqrt(x^2 + y^2 + z^2), scaled (LAPACK's lapy3)."""
    b = kb.b
    sa = kb.arith(dt)
    ax, ay, az = sa.rabs(x), sa.rabs(y), sa.rabs(z)
    big = sa.rmax(sa.rmax(ax, ay), az)
    inv = b.fdiv(sa.rconst(1.0), big)
    s = sa.rconst(0.0)
    for v in (ax, ay, az):
        r = b.fmul(v, inv)
        s = sa.rfma(r, r, s)
    out = b.fmul(big, sa.rsqrt(s))
    return b.select(b.fcmp_ordered("==", big, sa.rconst(0.0)), sa.rconst(0.0), out)


def apply_reflector(kb: KernelBuilder, dt: DType, w, ld, j, rows, lo, hi, v, vstride, tau, scratch) -> None:
    """W[j:rows, lo:hi] = (I - tau v v^H) W[j:rows, lo:hi], v[0] = 1 and v[i - j] = v_base[i * vstride]
    for i > j; `scratch` is a row of at least hi elements (the w = v^H W row)."""
    b = kb.b
    sa = kb.arith(dt)
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)

    def copy_row(c, mask):
        va.store(scratch, c, va.load(w, b.add(b.mul(j, ld), c), mask), mask)

    strip(kb, lanes, lo, hi, copy_row)
    with for_range(b, b.add(j, i64(1)), rows, name="wi") as i:
        vi = va.splat(sa.conj(sa.load(v, b.mul(i, vstride))))
        row = b.mul(i, ld)

        def acc(c, mask, vi=vi, row=row):
            acc = va.muladd(vi, va.load(w, b.add(row, c), mask), va.load(scratch, c, mask))
            va.store(scratch, c, acc, mask)

        strip(kb, lanes, lo, hi, acc)
    with for_range(b, j, rows, name="ui") as i:
        vi = sa.select(b.icmp_signed("==", i, j), sa.one(), sa.load(v, b.mul(i, vstride)))
        f = va.splat(sa.mul(tau, vi))
        row = b.mul(i, ld)

        def upd(c, mask, f=f, row=row):
            p = b.add(row, c)
            va.store(w, p, va.mulsub(va.load(w, p, mask), f, va.load(scratch, c, mask)), mask)

        strip(kb, lanes, lo, hi, upd)


def factor(kb: KernelBuilder, dt: DType, w, m, n, ldw) -> None:
    """Householder QR of the m x n W in place (R above the diagonal, the reflectors below, the taus in
    column n, scratch in row m)."""
    fn = shared_function(kb, ("qr_factor", dt.name), L.FunctionType(VOID, [PTR, I64, I64, I64]),
                         lambda fb: (_factor_body(fb, dt, *fb.fn.args), fb.finish()))
    kb.b.call(fn, [w, m, n, ldw])


def _factor_body(kb: KernelBuilder, dt: DType, w, m, n, ldw) -> None:
    b = kb.b
    sa = kb.arith(dt)
    k = imin(b, m, n)
    scratch = sa.ptr(w, b.mul(m, ldw))
    with for_range(b, i64(0), k, name="hj") as j:
        tau_at = b.add(b.mul(j, ldw), n)
        _reflector(kb, dt, w, ldw, j, m, tau_at)
        tau = sa.conj(sa.load(w, tau_at))
        v = sa.ptr(w, j)  # column j: v[i] = w[i * ldw + j]
        apply_reflector(kb, dt, w, ldw, j, m, b.add(j, i64(1)), n, v, ldw, tau, scratch)


def form_q(kb: KernelBuilder, dt: DType, w, ldw, q, m, k, mq, n) -> None:
    """Q (m x mq, row-major at q, an (m + 1)-th row of scratch) from the reflectors in W."""
    ftype = L.FunctionType(VOID, [PTR, I64, PTR, I64, I64, I64, I64])
    fn = shared_function(kb, ("qr_form_q", dt.name), ftype,
                         lambda fb: (_form_q_body(fb, dt, *fb.fn.args), fb.finish()))
    kb.b.call(fn, [w, ldw, q, m, k, mq, n])


def _form_q_body(kb: KernelBuilder, dt: DType, w, ldw, q, m, k, mq, n) -> None:
    b = kb.b
    sa = kb.arith(dt)
    with for_range(b, i64(0), m, name="qi") as i, for_range(b, i64(0), mq, name="qj") as j:
        sa.store(q, b.add(b.mul(i, mq), j), sa.select(b.icmp_signed("==", i, j), sa.one(), sa.zero()))
    scratch = sa.ptr(q, b.mul(m, mq))
    with count_down(b, i64(0), k, name="qk") as j:
        tau = sa.load(w, b.add(b.mul(j, ldw), n))
        apply_reflector(kb, dt, q, mq, j, m, j, mq, sa.ptr(w, j), ldw, tau, scratch)
