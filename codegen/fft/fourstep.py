"""The passes of a four-step transform (plan.py's four_step_split) besides the c2c entry: the
columns with their twiddles, the rows written transposed, and the square transpose in place.
threads.py's aot_fft_four_step runs them. And the first and last passes of a transform split in
two halves (threads.py's aot_fft_halves): the unzipping and the radix-2 step.

    void aot_fft_columns_tw_{p}(const int64_t *plan, const T *tw, const T *src, T *dst,
                                int64_t lo, int64_t hi, int64_t stride, int32_t flags,
                                const T *wa, const T *wb, T *scratch)

transforms the columns j2 in [lo, hi) of src (length plan[0] = n1, rows `stride` = n2 apart) and
writes dst[k1*stride + j2] = y[k1, j2] * w^(j2*k1), w = exp(-2 pi i/(n1*n2)) with FLAG_FORWARD in
flags, else its conjugate; wa and wb are plan.four_step_tables' a and b. lo and hi are multiples
of LANE_BLOCK * VLEN: the columns move in lane blocks (module.py's run_block), and every column
runs the same code whichever range holds it, so a split over threads changes no bit. `scratch`
holds names.scratch_values(n1, VLEN, 1, FLAG_LANES | FLAG_BLOCK) values of T, 64-byte aligned.
src == dst is allowed: a lane block is read whole before it is written.

    void aot_fft_rows_t_{p}(const int64_t *plan, const T *tw, T *work, T *dst, int64_t lo,
                            int64_t hi, int64_t m1, int32_t flags, T scale, T *scratch)

transforms rows lo..hi of work (length m2 = plan[0], rows m2 apart; lo and hi multiples of VLEN)
in place, ROWS_T_BLOCK * VLEN rows at a time with the c2c entry, and writes dst[k2*m1 + r] =
scale * z[r, k2] from VLEN x VLEN blocks transposed in registers (the rows are in the caches
then); m2 is a multiple of VLEN. `scratch`: 4 * m2 values of T.

    void aot_fft_unzip2_{p}(const T *x, T *dst, int64_t h, int64_t klo, int64_t khi)

dst[k] = x[2k] and dst[h + k] = x[2k + 1] for k in [klo, khi) (multiples of VLEN, as h): the even
and odd elements into the halves of dst, VLEN of each at a time (shuffled in registers).

    void aot_fft_combine2_{p}(T *x, int64_t h, const T *lo, const T *hi, int64_t shift,
                              int32_t flags, T scale, int64_t klo, int64_t khi)

the radix-2 decimation-in-time step in place: with e = x[k], o = x[k + h] * w^k (w = exp(-2 pi i /
2h) with FLAG_FORWARD, else its conjugate), x[k] = scale * (e + o) and x[k + h] = scale * (e - o)
for k in [klo, khi) (multiples of VLEN, as h). w^k = hi[k >> shift] * lo[k & (2^shift - 1)] for
the roots exp(+2 pi i j / 2h) (pocketfft's two tables: one rounding more than exact roots);
2^shift is a multiple of VLEN.

    void aot_fft_transpose_{p}(T *a, int64_t m, int64_t lo, int64_t hi)

transposes the m x m complex matrix a in place (m a multiple of VLEN), VLEN x VLEN blocks at a
time, block rows t and m/VLEN - 1 - t for t in [lo, hi) (each pair swaps the same number of
blocks, so that threads splitting t share the work evenly); t < ceil(m / VLEN / 2).
"""
from __future__ import annotations

from llvmlite import ir as L

from ..llvm.builder import Builder
from .layouts import I32, I64, PTR, for_range, i64
from .names import (
    FLAG_FORWARD,
    LANE_BLOCK,
    SCRATCH_PER_LANE,
    columns_name,
    combine_name,
    rows_name,
    transpose_name,
    unzip_name,
)

# the functions' types (groups.py's import stubs declare them too)
COLUMNS_TYPE = L.FunctionType(L.VoidType(), [PTR, PTR, PTR, PTR, I64, I64, I64, I32, PTR, PTR, PTR])
TRANSPOSE_TYPE = L.FunctionType(L.VoidType(), [PTR, I64, I64, I64])
UNZIP_TYPE = L.FunctionType(L.VoidType(), [PTR, PTR, I64, I64, I64])


def combine2_type(ft: L.Type) -> L.FunctionType:
    return L.FunctionType(L.VoidType(), [PTR, I64, PTR, PTR, I64, I32, ft, I64, I64])


def rows_t_type(ft: L.Type) -> L.FunctionType:
    return L.FunctionType(L.VoidType(), [PTR, PTR, PTR, PTR, I64, I64, I64, I32, ft, PTR])


def emit_columns(em, precision: str) -> L.Function:
    """The function above, on module.py's _Emitter `em` (its lane runners and block gather)."""
    ft, vl, v, w = em.ft, em.vlen, em.v, em.w
    fn = L.Function(em.mod, COLUMNS_TYPE, name=columns_name(precision))
    hdr, tw, src, dst, lo, hi, stride, flags, wa, wb, scratch = fn.args
    b = Builder(fn.append_basic_block("entry"))
    n = b.load(hdr, typ=I64)
    region = b.mul(n, i64(SCRATCH_PER_LANE * vl))
    buf1 = b.gep(scratch, [b.mul(n, i64(2 * vl))], source_etype=ft)
    forward = b.icmp_signed("!=", b.and_(flags, L.Constant(I32, FLAG_FORWARD)), L.Constant(I32, 0))
    sign = v.splat(b, b.select(forward, L.Constant(ft, -1.0), L.Constant(ft, 1.0)))
    res_slot = b.alloca(PTR, name="res")
    step = LANE_BLOCK * vl
    with for_range(b, 0, b.sdiv(b.sub(hi, lo), i64(step)), name="blk") as blk:
        g = b.add(lo, b.mul(blk, i64(step)))
        at_g = b.gep(src, [b.shl(g, i64(1))], source_etype=ft)
        res0 = em.run_block(b, forward, hdr, tw, at_g, stride, scratch, buf1, region, res_slot)
        first_a = b.mul(b.sdiv(g, i64(vl)), n)  # wa's row of the block's first lane group
        with for_range(b, 0, n, name="k1") as k1:
            bre, bim = v.load(b, wb, k1)
            for q in range(LANE_BLOCK):
                are, aim = v.load_twiddle(b, wa, b.add(b.add(first_a, b.mul(n, i64(q))), k1))
                tre = b.fsub(b.fmul(are, bre), b.fmul(aim, bim))
                tim = b.fmul(b.fadd(b.fmul(are, bim), b.fmul(aim, bre)), sign)
                re, im = v.load(b, b.gep(res0, [b.mul(region, i64(q))], source_etype=ft), k1)
                y = (b.fsub(b.fmul(re, tre), b.fmul(im, tim)), b.fadd(b.fmul(re, tim), b.fmul(im, tre)))
                w.store(b, dst, b.add(b.mul(k1, stride), b.add(g, i64(q * vl))), y)
    b.ret_void()
    return fn


def emit_transpose(em, precision: str) -> L.Function:
    """The transpose above: each block's rows load as Wide vectors, their re and im parts
    transpose in registers (layouts.Wide._transpose) and store as the mirror block's rows."""
    vl, w = em.vlen, em.w
    fn = L.Function(em.mod, TRANSPOSE_TYPE, name=transpose_name(precision))
    a, m, lo, hi = fn.args
    b = Builder(fn.append_basic_block("entry"))
    nb = b.sdiv(m, i64(vl))

    def load_t(row0, col0):  # the block at (row0, col0), transposed: its rows as (re, im)
        return _transposed_block(b, w, vl, a, b.add(b.mul(row0, m), col0), m)

    def store(row0, col0, rows):
        for r, v in enumerate(rows):
            w.store(b, a, b.add(b.mul(b.add(row0, i64(r)), m), col0), v)

    def block_row(bi):  # blocks (bi, bj) and (bj, bi) for bj >= bi swap transposed
        with for_range(b, bi, nb, name="bj") as bj:
            r0, c0 = b.mul(bi, i64(vl)), b.mul(bj, i64(vl))
            p = load_t(r0, c0)
            q = load_t(c0, r0)
            store(c0, r0, p)
            store(r0, c0, q)  # the diagonal block (bj == bi) stores the same values twice

    with for_range(b, lo, hi, name="t") as t:
        block_row(t)
        mirror = b.sub(b.sub(nb, i64(1)), t)
        with b.if_then(b.icmp_signed(">", mirror, t)):
            block_row(mirror)
    b.ret_void()
    return fn


def _transposed_block(b, w, vl: int, base, first, row_stride) -> list:
    """The VLEN x VLEN block of complex values whose rows start at base[first + r*row_stride],
    transposed: its columns as (re, im) vectors."""
    rows = [w.load(b, base, b.add(first, b.mul(row_stride, i64(r)))) for r in range(vl)]
    return list(zip(w._transpose(b, [re for re, _ in rows]), w._transpose(b, [im for _, im in rows])))


# rows_t transforms up to this many VLEN-row groups before writing them: each output row then
# takes ROWS_T_BLOCK * VLEN neighbours (8 cache lines for c128) instead of VLEN (2)
ROWS_T_BLOCK = 4


def emit_rows_transposed(em, precision: str, c2c: L.Function) -> L.Function:
    """aot_fft_rows_t above; `c2c` is the module's c2c entry."""
    ft, vl, w = em.ft, em.vlen, em.w
    fn = L.Function(em.mod, rows_t_type(ft), name=rows_name(precision))
    hdr, tw, work, dst, lo, hi, m1, flags, scale, scratch = fn.args
    b = Builder(fn.append_basic_block("entry"))
    m2 = b.load(hdr, typ=I64)
    k = w.splat(b, scale)
    forward = b.and_(flags, L.Constant(I32, FLAG_FORWARD))
    most = ROWS_T_BLOCK * vl
    with for_range(b, lo, hi, most, name="g") as g:
        count = b.select(b.icmp_signed("<", b.sub(hi, g), i64(most)), b.sub(hi, g), i64(most))
        rows = b.gep(work, [b.shl(b.mul(g, m2), i64(1))], source_etype=ft)
        b.call(c2c, [hdr, tw, rows, rows, count, i64(1), m2, i64(1), m2, forward, L.Constant(ft, 1.0), scratch])
        with for_range(b, 0, b.sdiv(m2, i64(vl)), name="kb") as kb, \
                for_range(b, 0, b.sdiv(count, i64(vl)), name="q") as q:
            k2, r = b.mul(kb, i64(vl)), b.mul(q, i64(vl))
            block = b.gep(rows, [b.shl(b.mul(r, m2), i64(1))], source_etype=ft)
            for c, (re, im) in enumerate(_transposed_block(b, w, vl, block, k2, m2)):
                at = b.add(b.mul(b.add(k2, i64(c)), m1), b.add(g, r))
                w.store(b, dst, at, (b.fmul(re, k), b.fmul(im, k)))
    b.ret_void()
    return fn


def emit_combine2(em, precision: str) -> L.Function:
    """aot_fft_combine2 above."""
    ft, vl, v, w = em.ft, em.vlen, em.v, em.w
    fn = L.Function(em.mod, combine2_type(ft), name=combine_name(precision))
    x, h, lo_t, hi_t, shift, flags, scale, klo, khi = fn.args
    b = Builder(fn.append_basic_block("entry"))
    forward = b.icmp_signed("!=", b.and_(flags, L.Constant(I32, FLAG_FORWARD)), L.Constant(I32, 0))
    sign = w.splat(b, b.select(forward, L.Constant(ft, -1.0), L.Constant(ft, 1.0)))
    ks = w.splat(b, scale)
    mask = b.sub(b.shl(i64(1), shift), i64(1))
    with for_range(b, klo, khi, vl, name="k") as k:
        hre, him = v.load_twiddle(b, hi_t, b.ashr(k, shift))  # one root, splat over the lanes
        lre, lim = w.load(b, lo_t, b.and_(k, mask))
        wr = b.fsub(b.fmul(hre, lre), b.fmul(him, lim))
        wi = b.fmul(b.fadd(b.fmul(hre, lim), b.fmul(him, lre)), sign)
        (er, ei), (odr, odi) = w.load(b, x, k), w.load(b, x, b.add(k, h))
        tr = b.fsub(b.fmul(odr, wr), b.fmul(odi, wi))
        ti = b.fadd(b.fmul(odr, wi), b.fmul(odi, wr))
        w.store(b, x, k, (b.fmul(b.fadd(er, tr), ks), b.fmul(b.fadd(ei, ti), ks)))
        w.store(b, x, b.add(k, h), (b.fmul(b.fsub(er, tr), ks), b.fmul(b.fsub(ei, ti), ks)))
    b.ret_void()
    return fn


def emit_unzip2(em, precision: str) -> L.Function:
    """aot_fft_unzip2 above."""
    vl, w = em.vlen, em.w
    fn = L.Function(em.mod, UNZIP_TYPE, name=unzip_name(precision))
    x, dst, h, klo, khi = fn.args
    b = Builder(fn.append_basic_block("entry"))
    mask_ty = L.VectorType(I32, vl)
    even = L.Constant(mask_ty, list(range(0, 2 * vl, 2)))
    odd = L.Constant(mask_ty, list(range(1, 2 * vl, 2)))
    with for_range(b, klo, khi, vl, name="k") as k:
        (ar, ai), (br, bi) = w.load(b, x, b.shl(k, i64(1))), w.load(b, x, b.add(b.shl(k, i64(1)), i64(vl)))
        w.store(b, dst, k, (b.shuffle_vector(ar, br, even), b.shuffle_vector(ai, bi, even)))
        w.store(b, dst, b.add(k, h), (b.shuffle_vector(ar, br, odd), b.shuffle_vector(ai, bi, odd)))
    b.ret_void()
    return fn


def emit_four_step_passes(em, precision: str, c2c: L.Function) -> None:
    """The functions above, into em's module (`c2c`: its c2c entry)."""
    emit_columns(em, precision)
    emit_rows_transposed(em, precision, c2c)
    emit_transpose(em, precision)
    emit_combine2(em, precision)
    emit_unzip2(em, precision)
