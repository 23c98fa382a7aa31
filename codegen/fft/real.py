"""Real transforms: the pass after (r2c) or before (c2r) a half-length complex transform.

With n = 2h, w = exp(-2 pi i/n) and the table `w[k] = w^k` (k < h, numpy complex layout):

    void aot_fft_r2c_post_{p}(T *x, int64_t h, int64_t howmany, int64_t dist, const T *w, T scale)
        in place on rows x + r*dist (complex elements) holding Z = DFT_h(z), z_j = x_2j + i x_2j+1:
        X_k = (Z_k + conj Z_{h-k})/2 - i/2 w^k (Z_k - conj Z_{h-k}), k <= h (row length h + 1).
    void aot_fft_c2r_pre_{p}(const T *x, int64_t xdist, T *z, int64_t zdist, int64_t h,
                             int64_t howmany, const T *w)
        z_k = (X_k + conj X_{h-k}) + i conj(w^k) (X_k - conj X_{h-k}), k < h, ignoring the
        imaginary parts of X_0 and X_h; then z = IDFT_h(z) gives x_2j = Re z_j, x_2j+1 = Im z_j.

Pairs (k, h-k) are processed together, VLEN of them at a time (the upper half read reversed),
so the r2c pass can work in place. `emit_*_part` emit one row's pass over a range of pairs, which
threads.py splits over a pool for one long row.
"""
from __future__ import annotations

from llvmlite import ir as L

from ..llvm.builder import Builder
from .codelets import CArith
from .layouts import I32, I64, PTR, Scalar, Wide, for_range, i64
from .names import c2r_name, r2c_name

__all__ = ["c2r_name", "emit_c2r_pre", "emit_c2r_pre_part", "emit_r2c_post", "emit_r2c_post_part", "r2c_name"]


class _Pairs:
    def __init__(self, b: L.IRBuilder, ft: L.Type, vlen: int):
        self.b, self.ft, self.vlen = b, ft, vlen
        self.w, self.s = Wide(ft, vlen), Scalar(ft)
        self.rev = L.Constant(L.VectorType(I32, vlen), list(range(vlen - 1, -1, -1)))

    def reverse(self, v):
        b = self.b
        return b.shuffle_vector(v[0], v[0], self.rev), b.shuffle_vector(v[1], v[1], self.rev)

    def load_rev(self, base, last):
        """Elements last, last-1, ..., last-VLEN+1 as lanes 0..VLEN-1."""
        return self.reverse(self.w.load(self.b, base, self.b.sub(last, i64(self.vlen - 1))))

    def store_rev(self, base, last, v) -> None:
        self.w.store(self.b, base, self.b.sub(last, i64(self.vlen - 1)), self.reverse(v))


def _conj(ca: CArith, v):
    return v[0], ca.b.fneg(v[1])


def _post(ca: CArith, a, bconj, w):
    """0.5*(a + bconj) - 0.5i * w * (a - bconj)."""
    s = ca.scale(ca.add(a, bconj), 0.5)
    d = ca.mul(ca.sub(a, bconj), w)
    return ca.add(s, ca.scale(ca.mul_i(d, -1), 0.5))


def _post_mirror(ca: CArith, a, bconj, w):
    """The partner h-k of k, whose twiddle is -conj(w^k): 0.5*(a + bconj) + 0.5i conj(w) (a - bconj)."""
    s = ca.scale(ca.add(a, bconj), 0.5)
    d = ca.mul(ca.sub(a, bconj), w, conj=True)
    return ca.add(s, ca.scale(ca.mul_i(d, 1), 0.5))


def emit_r2c_post(mod: L.Module, precision: str, ft: L.Type, vlen: int) -> L.Function:
    fnty = L.FunctionType(L.VoidType(), [PTR, I64, I64, I64, PTR, ft])
    fn = L.Function(mod, fnty, name=r2c_name(precision))
    x, h, howmany, dist, wt, scale = fn.args
    b = Builder(fn.append_basic_block("entry"))
    k_slot = b.alloca(I64, name="k")
    with for_range(b, 0, howmany, name="row") as r:
        row = b.gep(x, [b.shl(b.mul(r, dist), i64(1))], source_etype=ft)
        _r2c_ends(b, ft, row, h, scale)
        _r2c_pairs(b, ft, vlen, row, h, wt, scale, k_slot, i64(1), b.add(b.sdiv(h, i64(2)), i64(1)))
    b.ret_void()
    return fn


def emit_r2c_post_part(mod: L.Module, precision: str, ft: L.Type, vlen: int) -> L.Function:
    """void part(T *x, int64_t h, int64_t lo, int64_t hi, const T *w, T scale): the r2c pass of
    one row for the pairs k = u + 1, u in [lo, hi) (u < h/2), and X_0, X_h when lo == 0. Split at
    multiples of VLEN, the parts compute every pair with the code the whole row uses."""
    fn, b, k_slot = _part(mod, f"aot_fft_r2c_post_part_{precision}", [PTR, I64, I64, I64, PTR, ft])
    row, h, lo, hi, wt, scale = fn.args
    with b.if_then(b.icmp_signed("==", lo, i64(0))):
        _r2c_ends(b, ft, row, h, scale)
    _r2c_pairs(b, ft, vlen, row, h, wt, scale, k_slot, b.add(lo, i64(1)), b.add(hi, i64(1)))
    b.ret_void()
    return fn


def _part(mod: L.Module, name: str, params: list):
    """(function, builder, k slot) of an internal part function `name` taking `params`."""
    fn = L.Function(mod, L.FunctionType(L.VoidType(), params), name=name)
    fn.linkage = "internal"
    b = Builder(fn.append_basic_block("entry"))
    return fn, b, b.alloca(I64, name="k")


def _r2c_ends(b, ft, row, h, scale) -> None:
    """X_0 = Re Z_0 + Im Z_0 and X_h = Re Z_0 - Im Z_0 (times scale)."""
    lay = Scalar(ft)
    z0 = lay.load(b, row, i64(0))
    lay.store(b, row, i64(0), (b.fmul(b.fadd(z0[0], z0[1]), scale), L.Constant(ft, 0.0)))
    lay.store(b, row, h, (b.fmul(b.fsub(z0[0], z0[1]), scale), L.Constant(ft, 0.0)))


def _r2c_pairs(b, ft, vlen: int, row, h, wt, scale, k_slot, start, end) -> None:
    """The pairs (k, h-k) for k in [start, end) (end <= h/2 + 1), in place: VLEN of them at a
    time while [k, k+VLEN) and [h-k-VLEN+1, h-k] do not meet and k + VLEN <= end, then one at a
    time. A range starting at 1 + m VLEN runs each pair on the code the range [1, h/2 + 1) does."""
    b.store(start, k_slot)
    for lay, step in ((Wide(ft, vlen), vlen), (Scalar(ft), 1)):
        ca = CArith(b, lay.ty)
        pairs = _Pairs(b, ft, vlen) if step > 1 else None
        sc = lay.splat(b, scale)
        k0 = b.load(k_slot, typ=I64)
        if step > 1:  # 2k < h - 2 VLEN + 2, and the block inside the range
            meet = b.sdiv(b.add(h, i64(3 - 2 * step)), i64(2))
            room = b.sub(end, i64(step - 1))
            stop = b.select(b.icmp_signed("<", meet, room), meet, room)
        else:
            stop = end
        with for_range(b, k0, stop, step, name=f"k{step}") as k:
            hk = b.sub(h, k)
            a = lay.load(b, row, k)
            hi = pairs.load_rev(row, hk) if step > 1 else lay.load(b, row, hk)
            w = lay.load(b, wt, k)
            lo_new = _post(ca, a, _conj(ca, hi), w)
            hi_new = _post_mirror(ca, hi, _conj(ca, a), w)
            lo_new = (b.fmul(lo_new[0], sc), b.fmul(lo_new[1], sc))
            hi_new = (b.fmul(hi_new[0], sc), b.fmul(hi_new[1], sc))
            lay.store(b, row, k, lo_new)
            if step > 1:
                pairs.store_rev(row, hk, hi_new)
            else:
                lay.store(b, row, hk, hi_new)
            b.store(b.add(k, i64(step)), k_slot)


def emit_c2r_pre(mod: L.Module, precision: str, ft: L.Type, vlen: int) -> L.Function:
    fnty = L.FunctionType(L.VoidType(), [PTR, I64, PTR, I64, I64, I64, PTR])
    fn = L.Function(mod, fnty, name=c2r_name(precision))
    x, xdist, z, zdist, h, howmany, wt = fn.args
    b = Builder(fn.append_basic_block("entry"))
    k_slot = b.alloca(I64, name="k")
    with for_range(b, 0, howmany, name="row") as r:
        xr = b.gep(x, [b.shl(b.mul(r, xdist), i64(1))], source_etype=ft)
        zr = b.gep(z, [b.shl(b.mul(r, zdist), i64(1))], source_etype=ft)
        _c2r_first(b, ft, xr, zr, h)
        _c2r_values(b, ft, vlen, xr, zr, h, wt, k_slot, i64(1), h)
    b.ret_void()
    return fn


def emit_c2r_pre_part(mod: L.Module, precision: str, ft: L.Type, vlen: int) -> L.Function:
    """void part(const T *x, T *z, int64_t h, int64_t lo, int64_t hi, const T *w): the c2r pass of
    one row for k = u + 1, u in [lo, hi) (u < h - 1), and z_0 when lo == 0 (split as r2c's part)."""
    fn, b, k_slot = _part(mod, f"aot_fft_c2r_pre_part_{precision}", [PTR, PTR, I64, I64, I64, PTR])
    xr, zr, h, lo, hi, wt = fn.args
    with b.if_then(b.icmp_signed("==", lo, i64(0))):
        _c2r_first(b, ft, xr, zr, h)
    _c2r_values(b, ft, vlen, xr, zr, h, wt, k_slot, b.add(lo, i64(1)), b.add(hi, i64(1)))
    b.ret_void()
    return fn


def _c2r_first(b, ft, xr, zr, h) -> None:
    s = Scalar(ft)
    x0 = s.load(b, xr, i64(0))[0]
    xh = s.load(b, xr, h)[0]
    s.store(b, zr, i64(0), (b.fadd(x0, xh), b.fsub(x0, xh)))


def _c2r_values(b, ft, vlen: int, xr, zr, h, wt, k_slot, start, end) -> None:
    """z_k for k in [start, end) (end <= h): VLEN at a time while k + VLEN <= end, then one at a
    time."""
    b.store(start, k_slot)
    for lay, step in ((Wide(ft, vlen), vlen), (Scalar(ft), 1)):
        ca = CArith(b, lay.ty)
        pairs = _Pairs(b, ft, vlen) if step > 1 else None
        stop = b.sub(end, i64(step - 1))
        with for_range(b, b.load(k_slot, typ=I64), stop, step, name=f"k{step}") as k:
            a = lay.load(b, xr, k)
            hi = pairs.load_rev(xr, b.sub(h, k)) if step > 1 else lay.load(b, xr, b.sub(h, k))
            hc = _conj(ca, hi)
            d = ca.mul_i(ca.mul(ca.sub(a, hc), lay.load(b, wt, k), conj=True), 1)
            lay.store(b, zr, k, ca.add(ca.add(a, hc), d))
            b.store(b.add(k, i64(step)), k_slot)
