"""The singular value decomposition by one-sided Jacobi (Hestenes), one batch member per step.

With m >= n the kernel orthogonalises the columns of A, else those of B = A^H (A = V_B S U_B^H):
the N = min(m, n) columns, of length M = max(m, n), are the rows of a row-major work matrix W, so
every dot product and rotation runs over contiguous memory in vectors. The matrix is first scaled
by a power of two (exact) so that its largest entry is near 1 and the column norms cannot overflow
or underflow. Sweeps visit every pair p < q; a pair with |g| > eps * sqrt(a b) (a, b its squared
norms, g = w_p^H w_q) is rotated by G = [[c, s], [-s u*, c u*]] (u the phase of g, (c, s) the
Jacobi rotation of the 2 x 2 Gram matrix), on W's rows and on the rows of Z = V^T (the
accumulated right factor). Sweeps stop when one rotates nothing (at most MAX_SWEEPS). The singular
values are the row norms, sorted descending; the left vectors are the normalised rows, and where
a singular value is exactly zero, or full_matrices asks for more columns than there are, they are
completed to an orthonormal basis by Gram-Schmidt (twice) on unit vectors.

The work operand is one row per member: W (N x M), the singular values (N), then, with the vectors,
Z (N x N) and the left vectors as rows Ut (urows x M, urows = M with full_matrices, else N).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.loops import elem_ptr, for_range, i64, while_loop
from ..llvm.types import I1, I64, PTR
from ..targets.base import Target
from .linalg_common import (
    BatchArgs,
    KernelBuilder,
    Layout,
    Matrix,
    compute_dtype,
    convert_value,
    dot_conj,
    fill,
    imin,
    nonfinite,
    operand_matrix,
    scaled_norm,
    shared_function,
    strip,
)
from .linalg_jacobi import EPS, MAX_SWEEPS, TINY, phase, rotate_rows, rotation

OPERANDS = {True: ("a", "u", "s", "vh", "work"), False: ("a", "s", "work")}
SCALARS = ("m", "n")


def layout(vectors: bool, batch_rank: int) -> Layout:
    return Layout(len(OPERANDS[vectors]), batch_rank, len(SCALARS))


def work_size(m, n, full: bool, vectors: bool, smin, smax):
    """Elements of one member's work row (m, n: dims, ints or sympy; smin/smax: their min/max)."""
    k, big = smin(m, n), smax(m, n)
    if not vectors:
        return m * n + k
    return m * n + k + k * k + (big if full else k) * big


def emit_svd(module: L.Module, target: Target, name: str, out_dt: DType, in_dtype: DType, full: bool,
             vectors: bool, batch_rank: int, helpers: dict, lstsq: bool = False) -> L.Function:
    """out_dt: the dtype of u and vh (s is its real dtype). A NaN in the matrix fails the member (as
    LAPACK's gesdd does not converge for numpy), an infinity makes every output NaN; with `lstsq`,
    both fail (numpy's gelsd)."""
    dt = compute_dtype(out_dt)
    kb = KernelBuilder(module, target, name, helpers)
    b = kb.b
    args = BatchArgs(kb, layout(vectors, batch_rank))
    m, n = args.scalars
    sa = kb.arith(dt)
    names = OPERANDS[vectors]
    flip = b.icmp_signed("<", m, n)  # factor A^H
    big_n, small_n = b.select(flip, n, m), imin(b, m, n)  # M, N
    with for_range(b, kb.begin, kb.end, name="t") as t:
        offs = args.offsets(t)
        work = elem_ptr(b, dt, args.ptrs[len(names) - 1], offs[-1])
        w = Matrix(sa, work, big_n, i64(1))
        a = operand_matrix(kb, args, 0, in_dtype, offs[0])
        with for_range(b, i64(0), small_n, name="cj") as j, for_range(b, i64(0), big_n, name="cr") as r:
            x = convert_value(kb, a.load(b.select(flip, j, r), b.select(flip, r, j)), in_dtype, dt)
            w.store(j, r, sa.select(flip, sa.conj(x), x))
        p = names.index("s")
        s_out = operand_matrix(kb, args, p, out_dt.real_dtype, offs[p], src=dt.real_dtype)
        u = operand_matrix(kb, args, 1, out_dt, offs[1], src=dt) if vectors else None
        vh = operand_matrix(kb, args, 3, out_dt, offs[3], src=dt) if vectors else None
        ucols = m if full else imin(b, m, n)
        vrows = n if full else imin(b, m, n)
        nan, inf = nonfinite(kb, dt, work, b.mul(m, n))
        fails = b.or_(nan, inf) if lstsq else nan
        with b.if_else(b.or_(nan, inf)) as (bad, good):
            with bad:
                with b.if_then(fails):
                    args.fail()
                fill(kb, s_out, small_n, i64(1), float("nan"))
                if vectors:
                    fill(kb, u, m, ucols, float("nan"))
                    fill(kb, vh, vrows, n, float("nan"))
            with good:
                _member(kb, args, dt, w, m, n, flip, full, (s_out, u, vh, ucols, vrows))
    return kb.finish()


def _member(kb: KernelBuilder, args: BatchArgs, dt: DType, w: Matrix, m, n, flip, full: bool, outs) -> None:
    """The decomposition of one member whose matrix W (N x M) holds only finite values; outs: the
    output matrices (s, u, vh; u and vh None without the vectors) and the columns of u / rows of vh."""
    b = kb.b
    sa = kb.arith(dt)
    s_out, u, vh, ucols, vrows = outs
    vectors = u is not None
    small_n = imin(b, m, n)
    fn = shared_function(kb, ("svd_core", dt.name), L.FunctionType(I1, [PTR, I64, I64, I64, PTR]),
                         lambda fb: fb.finish(_core(fb, dt, *fb.fn.args)))
    scale_slot = sa.rvar()
    urows = (b.select(flip, n, m) if full else small_n) if vectors else i64(-1)  # -1: no vectors
    with b.if_then(b.not_(b.call(fn, [w.base, m, n, urows, scale_slot.ptr]))):
        args.fail()
    sigma, z, ut = _parts(kb, dt, w.base, m, n)
    if vectors:
        with b.if_else(flip) as (flipped, direct):
            with flipped:  # A = V_B S U_B^H: u = V_B, vh = U_B^H
                _write(kb, u, m, ucols, lambda r, j: z.load(j, r))
                _write(kb, vh, vrows, n, lambda i, c: sa.conj(ut.load(i, c)))
            with direct:
                _write(kb, u, m, ucols, lambda r, j: ut.load(j, r))
                _write(kb, vh, vrows, n, lambda i, c: sa.conj(z.load(i, c)))
    scale = scale_slot.get()
    with for_range(b, i64(0), small_n, name="us") as j:  # undo the scaling
        s_out.store(j, i64(0), b.fmul(sigma.load(j, i64(0)), scale))


def _parts(kb: KernelBuilder, dt: DType, work, m, n):
    """The work row's sigma (reals), Z and Ut matrices."""
    b = kb.b
    sa = kb.arith(dt)
    big_n, small_n = b.select(b.icmp_signed("<", m, n), n, m), imin(b, m, n)
    sigma = Matrix(kb.arith(dt.real_dtype), sa.ptr(work, b.mul(m, n)), i64(1), i64(1))  # sigma[j] at (j, 0)
    z = Matrix(sa, sa.ptr(work, b.add(b.mul(m, n), small_n)), small_n, i64(1))
    ut = Matrix(sa, sa.ptr(z.base, b.mul(small_n, small_n)), big_n, i64(1))
    return sigma, z, ut


def _core(kb: KernelBuilder, dt: DType, work, m, n, urows, scale_out):
    """i1 svd_core(ptr work, i64 m, i64 n, i64 urows, ptr scale): sigma (scaled, descending), and unless
    urows < 0 Z and urows left vectors Ut, of the work row whose W holds the member; *scale = the
    scaling's inverse; returns "converged"."""
    b = kb.b
    sa = kb.arith(dt)
    vectors = b.icmp_signed(">=", urows, i64(0))
    big_n, small_n = b.select(b.icmp_signed("<", m, n), n, m), imin(b, m, n)
    w = Matrix(sa, work, big_n, i64(1))
    b.store(_scale(kb, dt, work, b.mul(m, n)), scale_out)
    sigma, z, ut = _parts(kb, dt, work, m, n)
    with b.if_then(vectors), for_range(b, i64(0), small_n, name="zi") as i, \
            for_range(b, i64(0), small_n, name="zj") as j:
        z.store(i, j, sa.select(b.icmp_signed("==", i, j), sa.one(), sa.zero()))
    converged = _sweeps(kb, dt, work, z.base, small_n, big_n, vectors)
    _singular_values(kb, dt, w, z, small_n, big_n, sigma, vectors)
    with b.if_then(vectors):
        _left_vectors(kb, dt, w, ut, sigma, small_n, big_n, urows)
    return converged


def _write(kb: KernelBuilder, out: Matrix, rows, cols, value) -> None:
    b = kb.b
    with for_range(b, i64(0), rows, name="oi") as i, for_range(b, i64(0), cols, name="oj") as j:
        out.store(i, j, value(i, j))


def _scale(kb: KernelBuilder, dt: DType, work, count):
    """Scale work[0:count] by 2^-e, the power of two bringing its largest |part| into [1, 2);
    returns 2^e (1 when the data is all zero or not finite)."""
    b = kb.b
    sa = kb.arith(dt)
    rt = dt.real_dtype
    big = sa.rvar(sa.rconst(0.0))
    parts = 2 if dt.is_complex else 1
    flat = kb.arith(rt)
    with for_range(b, i64(0), b.mul(count, i64(parts)), name="sx") as i:
        big.set(flat.rmax(flat.rabs(flat.load(work, i)), big.get()))
    bits, mant, bias = (64, 52, 1023) if rt.bits == 64 else (32, 23, 127)
    it = L.IntType(bits)
    raw = b.bitcast(big.get(), it)
    e = b.and_(b.lshr(raw, L.Constant(it, mant)), L.Constant(it, 2 * bias + 1))  # biased exponent
    usable = b.and_(b.icmp_unsigned(">", e, L.Constant(it, 0)),
                    b.icmp_unsigned("<", e, L.Constant(it, 2 * bias + 1)))  # normal, finite
    down = b.bitcast(b.shl(b.sub(L.Constant(it, 2 * bias), e), L.Constant(it, mant)), flat.rtype)  # 2^(b-e)
    up = b.bitcast(b.shl(e, L.Constant(it, mant)), flat.rtype)  # 2^(e - bias)
    factor = b.select(usable, down, sa.rconst(1.0))
    with b.if_then(usable), for_range(b, i64(0), b.mul(count, i64(parts)), name="sy") as i:
        flat.store(work, i, b.fmul(flat.load(work, i), factor))
    return b.select(usable, up, sa.rconst(1.0))


def _sweeps(kb: KernelBuilder, dt: DType, w, z, cols, length, vectors):
    """One-sided Jacobi on the rows of w (accumulating into z when the i1 `vectors` holds); returns
    i1 "converged"."""
    b = kb.b
    sa = kb.arith(dt)
    eps, tiny = sa.rconst(EPS[dt.real_dtype.bits]), sa.rconst(TINY[dt.real_dtype.bits])
    sweep = kb.var(I64, i64(0))
    more = kb.var(I1, L.Constant(I1, 1))
    with while_loop(b, lambda: b.and_(more.get(), b.icmp_signed("<", sweep.get(), i64(MAX_SWEEPS))), "sw"):
        more.set(L.Constant(I1, 0))
        sweep.set(b.add(sweep.get(), i64(1)))
        with for_range(b, i64(0), cols, name="p") as p, for_range(b, b.add(p, i64(1)), cols, name="q") as q:
            rp, rq = b.mul(p, length), b.mul(q, length)
            alpha, beta, g = _gram(kb, dt, w, rp, rq, length)
            mag = sa.abs(g)
            thr = b.fmul(eps, b.fmul(sa.rsqrt(alpha), sa.rsqrt(beta)))
            go = b.and_(b.fcmp_ordered(">", mag, thr), b.fcmp_ordered(">", mag, tiny))
            with b.if_then(go):
                more.set(L.Constant(I1, 1))
                c, s, _ = rotation(sa, alpha, beta, mag)
                u = sa.conj(phase(sa, g, mag))
                rotate_rows(kb, dt, w, rp, rq, i64(0), length, c, s, u)
                with b.if_then(vectors):
                    zp, zq = b.mul(p, cols), b.mul(q, cols)
                    rotate_rows(kb, dt, z, zp, zq, i64(0), cols, c, s, u)
    return b.not_(more.get())


def _gram(kb: KernelBuilder, dt: DType, w, rp, rq, length):
    """(|w_p|^2, |w_q|^2, w_p^H w_q) in one pass over the two rows."""
    b = kb.b
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)
    ra = kb.arith(dt.real_dtype, lanes)
    aa, bb, g = ra.var(ra.zero()), ra.var(ra.zero()), va.var(va.zero())

    def body(j, mask):
        x, y = va.load(w, b.add(rp, j), mask), va.load(w, b.add(rq, j), mask)
        aa.set(b.fadd(aa.get(), va.abs2(x)))
        bb.set(b.fadd(bb.get(), va.abs2(y)))
        g.set(va.conj_muladd(x, y, g.get()))

    strip(kb, lanes, i64(0), length, body)
    return ra.hsum(aa.get()), ra.hsum(bb.get()), va.hsum(g.get())


def _swap_rows(kb: KernelBuilder, dt: DType, base, ri, rj, length) -> None:
    b = kb.b
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)

    def body(c, mask):
        p, q = b.add(ri, c), b.add(rj, c)
        x, y = va.load(base, p, mask), va.load(base, q, mask)
        va.store(base, p, y, mask)
        va.store(base, q, x, mask)

    strip(kb, lanes, i64(0), length, body)


def _singular_values(kb: KernelBuilder, dt: DType, w: Matrix, z: Matrix, cols, length, sigma: Matrix,
                     vectors) -> None:
    """sigma[j] = |w_j| (of the scaled matrix), sorted descending with the rows of w and (when the i1
    `vectors` holds) z."""
    b = kb.b
    sa = kb.arith(dt)
    with for_range(b, i64(0), cols, name="sn") as j:
        row = b.mul(j, length)
        sigma.store(j, i64(0), scaled_norm(kb, dt, lambda i, row=row: sa.load(w.base, b.add(row, i)), i64(0),
                                           length))
    with for_range(b, i64(0), cols, name="si") as i:
        best = sa.rvar(sigma.load(i, i64(0)))
        at = kb.var(I64, i)
        with for_range(b, b.add(i, i64(1)), cols, name="sj") as j:
            x = sigma.load(j, i64(0))
            larger = b.fcmp_ordered(">", x, best.get())
            best.set(b.select(larger, x, best.get()))
            at.set(b.select(larger, j, at.get()))
        j = at.get()
        with b.if_then(b.icmp_signed("!=", j, i)):
            x = sigma.load(i, i64(0))
            sigma.store(i, i64(0), sigma.load(j, i64(0)))
            sigma.store(j, i64(0), x)
            _swap_rows(kb, dt, w.base, b.mul(i, length), b.mul(j, length), length)
            with b.if_then(vectors):
                _swap_rows(kb, dt, z.base, b.mul(i, cols), b.mul(j, cols), cols)


def _left_vectors(kb: KernelBuilder, dt: DType, w: Matrix, ut: Matrix, sigma: Matrix, cols, length,
                  urows) -> None:
    """Rows of ut: w_j / sigma_j where sigma_j > 0, completed to urows orthonormal rows."""
    b = kb.b
    sa = kb.arith(dt)
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)
    valid = kb.var(I64, i64(0))
    zero = sa.rconst(0.0)
    with for_range(b, i64(0), cols, name="ui") as j:
        s = sigma.load(j, i64(0))
        with b.if_then(b.fcmp_ordered(">", s, zero)):
            valid.set(b.add(j, i64(1)))
            inv = va.ctx.splat(b.fdiv(sa.rconst(1.0), s))
            src, dst = b.mul(j, length), b.mul(j, length)

            def norm_row(c, mask, src=src, dst=dst, inv=inv):
                va.store(ut.base, b.add(dst, c), va.scale(va.load(w.base, b.add(src, c), mask), inv), mask)

            strip(kb, lanes, i64(0), length, norm_row)
    _complete(kb, dt, ut, valid.get(), urows, length)


def _complete(kb: KernelBuilder, dt: DType, ut: Matrix, start, rows, length) -> None:
    """Rows [start, rows) of ut: unit vectors e_c (c increasing) orthogonalised twice against the rows
    above, kept when what is left has norm > 1 / (2 sqrt(length)), normalised."""
    b = kb.b
    sa = kb.arith(dt)
    lanes = kb.lanes(dt)
    va = kb.arith(dt, lanes)
    cand = kb.var(I64, i64(0))
    threshold = b.fdiv(sa.rconst(0.5), sa.rsqrt(b.sitofp(b.select(b.icmp_signed(">", length, i64(0)), length,
                                                                 i64(1)), sa.rtype)))
    with for_range(b, start, rows, name="gr") as j:
        row = b.mul(j, length)
        found = kb.var(I1, L.Constant(I1, 0))
        with while_loop(b, lambda: b.and_(b.not_(found.get()), b.icmp_signed("<", cand.get(), length)), "gc"):
            e = cand.get()
            cand.set(b.add(e, i64(1)))
            with for_range(b, i64(0), length, name="ge") as c:
                ut.store(j, c, sa.select(b.icmp_signed("==", c, e), sa.one(), sa.zero()))
            with for_range(b, i64(0), i64(2), name="twice"), for_range(b, i64(0), j, name="gp") as i:
                ri = b.mul(i, length)
                proj = va.splat(dot_conj(kb, dt, ut.base, ri, row, i64(0), length))

                def sub(c, mask, ri=ri, proj=proj):
                    p = b.add(row, c)
                    va.store(ut.base, p, va.mulsub(va.load(ut.base, p, mask), proj,
                                                   va.load(ut.base, b.add(ri, c), mask)), mask)

                strip(kb, lanes, i64(0), length, sub)
            nrm = sa.rsqrt(sa.real(dot_conj(kb, dt, ut.base, row, row, i64(0), length)))
            with b.if_then(b.fcmp_ordered(">", nrm, threshold)):
                found.set(L.Constant(I1, 1))
                inv = va.ctx.splat(b.fdiv(sa.rconst(1.0), nrm))

                def scale_row(c, mask, inv=inv):
                    p = b.add(row, c)
                    va.store(ut.base, p, va.scale(va.load(ut.base, p, mask), inv), mask)

                strip(kb, lanes, i64(0), length, scale_row)
