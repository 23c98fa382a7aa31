"""The complex Schur form of a square matrix (for eig and eigvals, kernels/linalg_eig.py).

All arithmetic is complex128 (a real matrix is a complex one with zero imaginary parts: one code
path, backward stable as the real double-shift algorithm, whose advantages would be exactly real
eigenvalues and exact conjugate pairs for real matrices, and some 3x fewer flops). The matrix H is row-major (n x n, leading dimension n); the Schur vectors are
kept as rows, Zt = Z^T, so that every update of them runs over contiguous memory in vectors.

- balance: LAPACK gebal's scaling (no permutations): rows and columns scaled by powers of two
  (exact) until each row and column have comparable 2-norms; d holds the factors (reals).
- hessenberg: Householder reduction to upper Hessenberg form (gehd2: H = P^H H P per column, with
  qr's larfg), Zt = (P_1 ... P_{n-2})^T accumulated as it goes.
- schur: the single-shift QR algorithm (as LAPACK's zlahqr, without its search for two small
  consecutive subdiagonals): deflation by the Ahues-Kressner criterion, Wilkinson shifts and
  exceptional shifts every 10 iterations without deflation, bulges chased by complex Givens
  rotations, at most 30 max(10, n) iterations per eigenvalue. With vectors the whole of H is
  updated (the Schur form T); without, only the active block (the diagonal is all that is read).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType, float64

from ..llvm.loops import for_range, i64, while_loop
from ..llvm.types import I1, I64, PTR, VOID
from .linalg_common import Arith, KernelBuilder, scaled_norm, shared_function, strip
from .linalg_qr import _reflector as larfg

ULP = 2.0**-52  # LAPACK's dlamch('P')
SAFMIN = 2.0**-1022
SFMIN1 = SAFMIN / ULP  # gebal's bounds on the scaling factors
SFMAX1 = 1.0 / SFMIN1
SFMIN2, SFMAX2 = 2.0 * SFMIN1, 1.0 / (2.0 * SFMIN1)
MAX_BALANCE_SWEEPS = 100  # gebal converges in a few; the bound only guarantees termination
EXCEPTIONAL = 10  # zlahqr's KEXSH: an exceptional shift after this many iterations without deflation
ITERATIONS = 30  # QR iterations allowed per eigenvalue, times max(10, n) (zlahqr's ITMAX)


# --- small complex helpers -----------------------------------------------------------------------
def csqrt(sa: Arith, z):
    """The principal square root of a complex scalar."""
    b = sa.b
    re, im = z
    zero = sa.rconst(0.0)
    t = sa.rsqrt(b.fmul(sa.rconst(0.5), b.fadd(sa.rhypot(re, im), sa.rabs(re))))
    half = b.fdiv(im, b.fmul(sa.rconst(2.0), t))
    pos = b.fcmp_ordered(">=", re, zero)
    out = (b.select(pos, t, sa.rabs(half)), b.select(pos, half, sa.ctx.intrinsic("copysign", [t, im])))
    is_zero = b.fcmp_ordered("==", t, zero)
    return (b.select(is_zero, zero, out[0]), b.select(is_zero, zero, out[1]))


def givens(sa: Arith, x, y):
    """(c, s, r), c real: [[c, s], [-conj(s), c]] [x, y] = [r, 0]."""
    b = sa.b
    zero, one = sa.rconst(0.0), sa.rconst(1.0)
    ax, ay = sa.abs(x), sa.abs(y)
    nrm = sa.rhypot(ax, ay)
    ph = sa.scale(x, b.fdiv(one, ax))  # x / |x|
    inv = b.fdiv(one, nrm)
    c = b.fmul(ax, inv)
    s = sa.scale(sa.mul(ph, sa.conj(y)), inv)
    r = sa.scale(ph, nrm)
    y0, x0 = b.fcmp_ordered("==", ay, zero), b.fcmp_ordered("==", ax, zero)
    s_x0 = sa.scale(sa.conj(y), b.fdiv(one, ay))  # x == 0: c = 0, s = conj(y) / |y|, r = |y|
    c = b.select(y0, one, b.select(x0, zero, c))
    s = sa.select(y0, sa.zero(), sa.select(x0, s_x0, s))
    r = sa.select(y0, x, sa.select(x0, sa.from_real(ay), r))
    return c, s, r


def rot_rows(kb: KernelBuilder, dt: DType, base, rp, rq, lo, hi, c, s) -> None:
    """Rows at offsets rp, rq over [lo, hi): p' = c p + s q, q' = c q - conj(s) p."""
    b = kb.b
    sa = kb.arith(dt)
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)
    cv = va.ctx.splat(c)
    sv, ns = va.splat(s), va.splat(sa.neg(sa.conj(s)))

    def body(j, mask):
        p, q = b.add(rp, j), b.add(rq, j)
        x, y = va.load(base, p, mask), va.load(base, q, mask)
        va.store(base, p, va.muladd(sv, y, va.scale(x, cv)), mask)
        va.store(base, q, va.muladd(ns, x, va.scale(y, cv)), mask)

    strip(kb, lanes, lo, hi, body)


def rot_cols(kb: KernelBuilder, dt: DType, base, ld, col, lo, hi, c, s) -> None:
    """Columns col, col + 1 over rows [lo, hi): p' = c p + conj(s) q, q' = c q - s p (H G^H)."""
    b = kb.b
    sa = kb.arith(dt)
    sc = sa.conj(s)
    with for_range(b, lo, hi, name="rc") as r:
        ip = b.add(b.mul(r, ld), col)
        iq = b.add(ip, i64(1))
        x, y = sa.load(base, ip), sa.load(base, iq)
        sa.store(base, ip, sa.muladd(sc, y, sa.scale(x, c)))
        sa.store(base, iq, sa.mulsub(sa.scale(y, c), s, x))


def reflect_rows(kb: KernelBuilder, dt: DType, base, ld, rows, cols, vec, coef, conj_vec: bool, tmp) -> None:
    """W = (I - coef u u^H) W on rows [r0, r1) x columns [c0, c1) of the row-major `base`, u[r] =
    vec[r] (conjugated with `conj_vec`); tmp: a row of at least c1 elements (w = u^H W)."""
    b = kb.b
    sa = kb.arith(dt)
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)
    (r0, r1), (c0, c1) = rows, cols
    strip(kb, lanes, c0, c1, lambda c, mask: va.store(tmp, c, va.zero(), mask))
    with for_range(b, r0, r1, name="rw") as r:
        u = sa.load(vec, r)
        cu = va.splat(u if conj_vec else sa.conj(u))  # conj(u[r])
        row = b.mul(r, ld)

        def acc(c, mask, cu=cu, row=row):
            va.store(tmp, c, va.muladd(cu, va.load(base, b.add(row, c), mask), va.load(tmp, c, mask)), mask)

        strip(kb, lanes, c0, c1, acc)
    with for_range(b, r0, r1, name="ru") as r:
        u = sa.load(vec, r)
        f = va.splat(sa.mul(coef, sa.conj(u) if conj_vec else u))
        row = b.mul(r, ld)

        def upd(c, mask, f=f, row=row):
            p = b.add(row, c)
            va.store(base, p, va.mulsub(va.load(base, p, mask), f, va.load(tmp, c, mask)), mask)

        strip(kb, lanes, c0, c1, upd)


def reflect_cols(kb: KernelBuilder, dt: DType, base, ld, rows, cols, vec, coef) -> None:
    """W = W (I - coef v v^H) on rows [r0, r1) x columns [c0, c1), v[c] = vec[c]."""
    b = kb.b
    sa = kb.arith(dt)
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)
    (r0, r1), (c0, c1) = rows, cols
    with for_range(b, r0, r1, name="cw") as r:
        row = b.mul(r, ld)
        acc = va.var(va.zero())

        def dot(c, mask, row=row, acc=acc):
            acc.set(va.muladd(va.load(base, b.add(row, c), mask), va.load(vec, c, mask), acc.get()))

        strip(kb, lanes, c0, c1, dot)
        f = va.splat(sa.mul(coef, va.hsum(acc.get())))

        def upd(c, mask, row=row, f=f):
            p = b.add(row, c)
            va.store(base, p, va.mulsub(va.load(base, p, mask), f, va.conj(va.load(vec, c, mask))), mask)

        strip(kb, lanes, c0, c1, upd)


# --- balancing -----------------------------------------------------------------------------------
def balance(kb: KernelBuilder, dt: DType, h, d, n) -> None:
    """Scale H's rows and columns (gebal, job 'S'); d: n reals, the factors (H = D^-1 A D)."""
    fn = shared_function(kb, ("eig_balance", dt.name), L.FunctionType(VOID, [PTR, PTR, I64]),
                         lambda fb: (_balance_body(fb, dt, *fb.fn.args), fb.finish()))
    kb.b.call(fn, [h, d, n])


def _balance_body(kb: KernelBuilder, dt: DType, h, d, n) -> None:
    b = kb.b
    sa = kb.arith(dt)
    ra = kb.arith(float64)
    with for_range(b, i64(0), n, name="bd") as i:
        ra.store(d, i, ra.rconst(1.0))
    more = kb.var(I1, L.Constant(I1, 1))
    sweeps = kb.var(I64, i64(0))
    with while_loop(b, lambda: b.and_(more.get(), b.icmp_signed("<", sweeps.get(), i64(MAX_BALANCE_SWEEPS))),
                    "bs"):
        more.set(L.Constant(I1, 0))
        sweeps.set(b.add(sweeps.get(), i64(1)))
        with for_range(b, i64(0), n, name="bi") as i:
            row = b.mul(i, n)
            c = scaled_norm(kb, dt, lambda j, i=i: sa.load(h, b.add(b.mul(j, n), i)), i64(0), n)
            r = scaled_norm(kb, dt, lambda j, row=row: sa.load(h, b.add(row, j)), i64(0), n)
            ca, rr = ra.rvar(ra.rconst(0.0)), ra.rvar(ra.rconst(0.0))
            with for_range(b, i64(0), n, name="bm") as j:
                ca.set(ra.rmax(sa.abs1(sa.load(h, b.add(b.mul(j, n), i))), ca.get()))
                rr.set(ra.rmax(sa.abs1(sa.load(h, b.add(row, j))), rr.get()))
            nonzero = b.and_(b.fcmp_ordered(">", c, ra.rconst(0.0)), b.fcmp_ordered(">", r, ra.rconst(0.0)))
            with b.if_then(nonzero):
                f = _balance_factor(kb, c, r, ca.get(), rr.get())
                _apply_factor(kb, dt, h, d, n, i, f, more)


def _balance_factor(kb: KernelBuilder, c, r, ca, rr):
    """gebal's power of two f for one index (column norm c, row norm r, their largest entries),
    or 1 when scaling would not reduce c + r by 5%."""
    b = kb.b
    ra = kb.arith(float64)
    two, half = ra.rconst(2.0), ra.rconst(0.5)
    s = b.fadd(c, r)
    f, cv, rv, gv, cav, rav = (ra.rvar(x) for x in (ra.rconst(1.0), c, r, b.fmul(r, half), ca, rr))

    def mx(*xs):
        out = xs[0]
        for x in xs[1:]:
            out = ra.rmax(out, x)
        return out

    def mn(*xs):
        out = xs[0]
        for x in xs[1:]:
            out = b.select(b.fcmp_ordered("<", x, out), x, out)
        return out

    def up_ok():
        return b.and_(b.fcmp_ordered("<", cv.get(), gv.get()),
                      b.and_(b.fcmp_ordered("<", mx(f.get(), cv.get(), cav.get()), ra.rconst(SFMAX2)),
                             b.fcmp_ordered(">", mn(rv.get(), gv.get(), rav.get()), ra.rconst(SFMIN2))))

    with while_loop(b, up_ok, "bu"):
        for v, k in ((f, two), (cv, two), (cav, two), (rv, half), (gv, half), (rav, half)):
            v.set(b.fmul(v.get(), k))
    gv.set(b.fmul(cv.get(), half))

    def down_ok():
        return b.and_(b.fcmp_ordered(">=", gv.get(), rv.get()),
                      b.and_(b.fcmp_ordered("<", mx(rv.get(), rav.get()), ra.rconst(SFMAX2)),
                             b.fcmp_ordered(">", mn(f.get(), cv.get(), gv.get(), cav.get()),
                                            ra.rconst(SFMIN2))))

    with while_loop(b, down_ok, "bw"):
        for v, k in ((f, half), (cv, half), (gv, half), (cav, half), (rv, two), (rav, two)):
            v.set(b.fmul(v.get(), k))
    worth = b.fcmp_ordered("<", b.fadd(cv.get(), rv.get()), b.fmul(ra.rconst(0.95), s))
    return b.select(worth, f.get(), ra.rconst(1.0))


def _apply_factor(kb: KernelBuilder, dt: DType, h, d, n, i, f, more) -> None:
    """Row i of H divided by f, column i multiplied by it, d[i] *= f, unless f is 1 or d[i] f would
    leave gebal's range."""
    b = kb.b
    sa = kb.arith(dt)
    ra = kb.arith(float64)
    one = ra.rconst(1.0)
    di = ra.load(d, i)
    tiny = b.and_(b.and_(b.fcmp_ordered("<", f, one), b.fcmp_ordered("<", di, one)),
                  b.fcmp_ordered("<=", b.fmul(f, di), ra.rconst(SFMIN1)))
    huge = b.and_(b.and_(b.fcmp_ordered(">", f, one), b.fcmp_ordered(">", di, one)),
                  b.fcmp_ordered(">=", di, b.fdiv(ra.rconst(SFMAX1), f)))
    go = b.and_(b.fcmp_ordered("!=", f, one), b.not_(b.or_(tiny, huge)))
    with b.if_then(go):
        ra.store(d, i, b.fmul(di, f))
        more.set(L.Constant(I1, 1))
        g = b.fdiv(one, f)
        row = b.mul(i, n)
        with for_range(b, i64(0), n, name="br") as j:
            p = b.add(row, j)
            sa.store(h, p, sa.scale(sa.load(h, p), g))
        with for_range(b, i64(0), n, name="bc") as j:
            p = b.add(b.mul(j, n), i)
            sa.store(h, p, sa.scale(sa.load(h, p), f))


# --- Hessenberg reduction ------------------------------------------------------------------------
def hessenberg(kb: KernelBuilder, dt: DType, h, zt, vec, tmp, tau, n, vectors) -> None:
    """H to upper Hessenberg form; with the i1 `vectors`, Zt = the accumulated reflectors (rows).
    vec, tmp: n-element scratch rows; tau: one element of scratch."""
    ftype = L.FunctionType(VOID, [PTR, PTR, PTR, PTR, PTR, I64, I1])
    fn = shared_function(kb, ("eig_hessenberg", dt.name), ftype,
                         lambda fb: (_hessenberg_body(fb, dt, *fb.fn.args), fb.finish()))
    kb.b.call(fn, [h, zt, vec, tmp, tau, n, vectors])


def _hessenberg_body(kb: KernelBuilder, dt: DType, h, zt, vec, tmp, tau, n, vectors) -> None:
    b = kb.b
    sa = kb.arith(dt)
    with b.if_then(vectors), for_range(b, i64(0), n, name="zi") as i, \
            for_range(b, i64(0), n, name="zj") as j:
        sa.store(zt, b.add(b.mul(i, n), j), sa.select(b.icmp_signed("==", i, j), sa.one(), sa.zero()))
    below = sa.ptr(h, n)  # H from row 1: larfg's "column j below row j" is H[j+1:, j]
    tau_at = b.sub(b.ptrtoint(tau, I64), b.ptrtoint(below, I64))
    tau_at = b.sdiv(tau_at, i64(16))  # in complex128 elements
    with for_range(b, i64(0), b.sub(n, i64(2)), name="hj") as j:
        larfg(kb, dt, below, n, j, b.sub(n, i64(1)), tau_at)
        t = sa.load(tau, i64(0))
        j1 = b.add(j, i64(1))
        sa.store(vec, j1, sa.one())  # v[j+1] = 1, v[r] = H[r, j] below, which become zeros
        with for_range(b, b.add(j, i64(2)), n, name="hv") as r:
            p = b.add(b.mul(r, n), j)
            sa.store(vec, r, sa.load(h, p))
            sa.store(h, p, sa.zero())
        with b.if_then(b.not_(sa.is_zero(t))):  # tau 0: the identity (a column already reduced)
            reflect_rows(kb, dt, h, n, (j1, n), (j1, n), vec, sa.conj(t), False, tmp)  # P^H H
            reflect_cols(kb, dt, h, n, (i64(0), n), (j1, n), vec, t)  # H P
            with b.if_then(vectors):  # Zt = P^T Zt = (I - tau conj(v) v^T) Zt
                reflect_rows(kb, dt, zt, n, (j1, n), (i64(0), n), vec, t, True, tmp)


# --- the QR algorithm ----------------------------------------------------------------------------
def schur(kb: KernelBuilder, dt: DType, h, zt, n, vectors):
    """The Schur form of the Hessenberg H in place (with the i1 `vectors`: all of T, Zt updated);
    returns i1 "converged"."""
    fn = shared_function(kb, ("eig_schur", dt.name), L.FunctionType(I1, [PTR, PTR, I64, I1]),
                         lambda fb: fb.finish(_schur_body(fb, dt, *fb.fn.args)))
    return kb.b.call(fn, [h, zt, n, vectors])


def _schur_body(kb: KernelBuilder, dt: DType, h, zt, n, vectors):
    b = kb.b
    sa = kb.arith(dt)
    nf = b.sitofp(n, sa.rtype)
    smlnum = b.fmul(sa.rconst(SAFMIN), b.fdiv(nf, sa.rconst(ULP)))
    itmax = b.mul(i64(ITERATIONS), b.select(b.icmp_signed(">", n, i64(10)), n, i64(10)))
    ok = kb.var(I1, L.Constant(I1, 1))
    hi = kb.var(I64, b.sub(n, i64(1)))  # eigenvalues hi+1 .. n-1 have converged
    with while_loop(b, lambda: b.and_(ok.get(), b.icmp_signed(">=", hi.get(), i64(0))), "qi"):
        lo = kb.var(I64, i64(0))
        its = kb.var(I64, i64(0))
        active = kb.var(I1, L.Constant(I1, 1))
        with while_loop(b, lambda: b.and_(active.get(), ok.get()), "qk"):
            i = hi.get()
            low = _split(kb, dt, h, n, lo.get(), i, smlnum)
            lo.set(low)
            with b.if_then(b.icmp_signed(">", low, i64(0))):
                sa.store(h, b.add(b.mul(low, n), b.sub(low, i64(1))), sa.zero())
            with b.if_else(b.icmp_signed(">=", low, i)) as (deflated, iterate):
                with deflated:
                    active.set(L.Constant(I1, 0))
                with iterate, b.if_else(b.icmp_signed(">=", its.get(), itmax)) as (stuck, step):
                    with stuck:
                        ok.set(L.Constant(I1, 0))
                    with step:
                        its.set(b.add(its.get(), i64(1)))
                        t = _shift(kb, dt, h, n, low, i, its.get())
                        _sweep(kb, dt, h, zt, n, low, i, t, vectors)
        hi.set(b.sub(lo.get(), i64(1)))
    return ok.get()


def _split(kb: KernelBuilder, dt: DType, h, n, lo, i, smlnum):
    """The largest k in (lo, i] whose subdiagonal H[k, k-1] is negligible, else lo (zlahqr's
    deflation test, Ahues and Kressner's criterion)."""
    b = kb.b
    k = kb.var(I64, i)
    scanning = kb.var(I1, b.icmp_signed(">", i, lo))
    with while_loop(b, lambda: scanning.get(), "qs"):
        kv = k.get()
        with b.if_else(_negligible(kb, dt, h, n, kv, smlnum)) as (found, more):
            with found:
                scanning.set(L.Constant(I1, 0))
            with more:
                k.set(b.sub(kv, i64(1)))
                scanning.set(b.icmp_signed(">", b.sub(kv, i64(1)), lo))
    return k.get()


def _negligible(kb: KernelBuilder, dt: DType, h, n, k, smlnum):
    """i1: H[k, k-1] (k >= 1) is negligible."""
    b = kb.b
    sa = kb.arith(dt)
    zero, ulp = sa.rconst(0.0), sa.rconst(ULP)

    def at(i, j):
        return sa.load(h, b.add(b.mul(i, n), j))

    km1 = b.sub(k, i64(1))
    sub, sup = sa.abs1(at(k, km1)), sa.abs1(at(km1, k))
    hkk, hmm = at(k, k), at(km1, km1)
    tst = b.fadd(sa.abs1(hmm), sa.abs1(hkk))
    # both diagonal entries zero: the neighbouring subdiagonals instead
    left = b.icmp_signed(">=", k, i64(2))
    right = b.icmp_signed("<", b.add(k, i64(1)), n)
    extra_l = sa.abs1(at(b.select(left, km1, k), b.select(left, b.sub(k, i64(2)), km1)))
    extra_r = sa.abs1(at(b.select(right, b.add(k, i64(1)), k), b.select(right, k, km1)))
    bonus = b.fadd(b.select(left, extra_l, zero), b.select(right, extra_r, zero))
    tst = b.select(b.fcmp_ordered("==", tst, zero), b.fadd(tst, bonus), tst)
    ab, ba = sa.rmax(sub, sup), b.select(b.fcmp_ordered("<", sub, sup), sub, sup)
    d = sa.abs1(sa.sub(hmm, hkk))
    aa, bb = sa.rmax(sa.abs1(hkk), d), b.select(b.fcmp_ordered("<", sa.abs1(hkk), d), sa.abs1(hkk), d)
    s = b.fadd(aa, ab)
    bound = sa.rmax(smlnum, b.fmul(ulp, b.fmul(bb, b.fdiv(aa, s))))
    ak = b.fcmp_ordered("<=", b.fmul(ba, b.fdiv(ab, s)), bound)
    small = b.and_(b.fcmp_ordered("<=", sub, b.fmul(ulp, tst)), ak)
    return b.or_(b.fcmp_ordered("<=", sub, smlnum), small)


def _shift(kb: KernelBuilder, dt: DType, h, n, lo, i, its):
    """The shift of iteration `its` on the active block [lo, i]: Wilkinson's (the eigenvalue of the
    trailing 2 x 2 block nearer H[i, i]), or an exceptional one every EXCEPTIONAL iterations."""
    b = kb.b
    sa = kb.arith(dt)

    def at(r, c):
        return sa.load(h, b.add(b.mul(r, n), c))

    im1 = b.sub(i, i64(1))
    hii, hmm = at(i, i), at(im1, im1)
    u = sa.mul(csqrt(sa, at(im1, i)), csqrt(sa, at(i, im1)))
    su = sa.abs1(u)
    x = sa.scale(sa.sub(hmm, hii), sa.rconst(0.5))
    sx = sa.abs1(x)
    s = sa.rmax(su, sx)
    inv_s = b.fdiv(sa.rconst(1.0), s)
    xs, us = sa.scale(x, inv_s), sa.scale(u, inv_s)
    y = sa.scale(csqrt(sa, sa.add(sa.mul(xs, xs), sa.mul(us, us))), s)
    xn = sa.scale(x, b.fdiv(sa.rconst(1.0), sx))
    away = b.fcmp_ordered("<", b.fadd(b.fmul(xn[0], y[0]), b.fmul(xn[1], y[1])), sa.rconst(0.0))
    y = sa.select(b.and_(b.fcmp_ordered(">", sx, sa.rconst(0.0)), away), sa.neg(y), y)
    wilkinson = sa.sub(hii, sa.mul(u, sa.div(u, sa.add(x, y))))
    wilkinson = sa.select(b.fcmp_ordered("==", su, sa.rconst(0.0)), hii, wilkinson)
    # exceptional shifts (zlahqr): from the bottom every 2 EXCEPTIONAL iterations, else the top
    bottom = sa.add(hii, sa.from_real(b.fmul(sa.rconst(0.75), sa.abs1(at(i, im1)))))
    l1 = b.add(lo, i64(1))
    top = sa.add(at(lo, lo), sa.from_real(b.fmul(sa.rconst(0.75), sa.abs1(at(l1, lo)))))
    every = b.icmp_signed("==", b.srem(its, i64(EXCEPTIONAL)), i64(0))
    twice = b.icmp_signed("==", b.srem(its, i64(2 * EXCEPTIONAL)), i64(0))
    return sa.select(twice, bottom, sa.select(every, top, wilkinson))


def _sweep(kb: KernelBuilder, dt: DType, h, zt, n, lo, i, t, vectors) -> None:
    """One implicit single-shift QR step on the active block [lo, i]: a rotation from the shifted
    first column, then the bulge chased down by rotations restoring the Hessenberg form."""
    b = kb.b
    sa = kb.arith(dt)
    first_col = b.select(vectors, i64(0), lo)  # columns / rows the rotations touch
    last_col = b.add(b.select(vectors, b.sub(n, i64(1)), i), i64(1))

    def idx(r, c):
        return b.add(b.mul(r, n), c)

    with for_range(b, lo, i, name="qb") as k:
        first = b.icmp_signed("==", k, lo)
        k1 = b.add(k, i64(1))
        prev = b.select(first, k, b.sub(k, i64(1)))  # column k-1 (k on the first step: unused)
        x = sa.select(first, sa.sub(sa.load(h, idx(k, k)), t), sa.load(h, idx(k, prev)))
        y = sa.load(h, idx(k1, prev))
        c, s, r = givens(sa, x, y)
        with b.if_then(b.not_(first)):
            sa.store(h, idx(k, prev), r)
            sa.store(h, idx(k1, prev), sa.zero())
        rot_rows(kb, dt, h, b.mul(k, n), b.mul(k1, n), k, last_col, c, s)
        k3 = b.add(k, i64(3))
        i1 = b.add(i, i64(1))
        rot_cols(kb, dt, h, n, k, first_col, b.select(b.icmp_signed("<", k3, i1), k3, i1), c, s)
        with b.if_then(vectors):
            rot_rows(kb, dt, zt, b.mul(k, n), b.mul(k1, n), i64(0), n, c, sa.conj(s))
