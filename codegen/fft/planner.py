"""Plans built in native code, for transform lengths known only at run time.

plan.py builds plans in Python for lengths known when a graph compiles (they are baked into the
module); a graph or a shared library whose transform length is a symbol builds its plan when it
runs, with these functions of the kernel module (same factorisation, same header format, the
same Bluestein rule, so the kernels cannot tell the difference):

    void *aot_fft_plan_make_{p}(int64_t n)
        an allocated plan block for length n >= 1 (NULL when out of memory); layout below.
    int32_t aot_fft_plan_exec_{p}(void *plan, const T *in, T *out, int64_t howmany,
                                  int64_t istride, int64_t idist, int64_t ostride, int64_t odist,
                                  int32_t flags, T scale)
        as aot_fft_c2c_{p} (same flags), direct or Bluestein; scratch is allocated here;
        returns 0, or 1 when out of memory.
    int32_t aot_fft_plan_roots_{p}(int64_t n, T *out)
        the table of the real passes: exp(-2 pi i k/n), k < n/2 (1 when out of memory).
    void *aot_fft_plan_get_{p}(void *slot, int64_t n) / void aot_fft_plan_release_{p}(void *plan)
        a one-entry cache per call site: `slot` is 16 zeroed bytes {spin lock, plan}; `get`
        returns the slot's plan when its length is n, else builds one and puts it there, with a
        reference the caller gives back with `release` (plans are freed by their last user, so a
        thread may replace the slot's plan while another still runs on it).

Plan block (int64 words, then 64-byte aligned tables of interleaved complex T):
    [0] n  [1] 1 when Bluestein  [2] references  [3] n2: the length of the direct transform
    (n, or Bluestein's convolution length)  [4] header offset  [5] twiddles offset  [6] chirp
    offset  [7] kernel offset (bytes from the block's start). The header and twiddles are
    plan.py's for length n2; Bluestein adds conj(exp(i pi k^2/n)), k < n, and the forward DFT of
    the chirp kernel divided by n2.

Twiddles come from two tables of roots (pocketfft's scheme: exp(2 pi i m/n) = hi[m >> s] *
lo[m & (2^s - 1)], each product rounded once per operation), so a length of 2^20 plans in a
tenth of a millisecond; angles are reduced to the nearest quarter turn exactly with integer
arithmetic before libm's cos and sin. plan.roots_at computes the same tables in Python above 2^14,
so a plan made here and plan.py's are the same bits there (an eager call from 2^15, and a graph
that baked plan.py's in); below 2^14 plan.py's roots are exact, these one rounding more (a
symbolic length's plan).
"""
from __future__ import annotations

import math

from llvmlite import ir as L

from ..llvm.builder import Builder
from ..llvm.loops import for_range, while_loop
from .layouts import I32, I64, PTR, i64
from .names import (
    FIELD_BLUE,
    FIELD_CHIRP,
    FIELD_HDR,
    FIELD_KERN,
    FIELD_N,
    FIELD_N2,
    FIELD_REFS,
    FIELD_TW,
    FLAG_BLOCK,
    FLAG_LANES,
    LANE_BLOCK,
    LANE_BLOCK_MAX_N,
    PLAN_JOB,
    SCRATCH_PER_LANE,
    plan_names,
)
from .passes import long_ido
from .plan import BLUESTEIN_MULTIPLE, CODELET_RADICES, HEADER_FIELDS, TWIDDLE_BLOCK

F64 = L.DoubleType()
I1 = L.IntType(1)
MAX_FACTORS = 64
META_BYTES = 128
HUGE_PAGE, HUGE_BLOCK, MADV_HUGEPAGE = 2 << 20, 4 << 20, 14  # Linux's transparent huge pages
__all__ = ["FIELD_BLUE", "FIELD_CHIRP", "FIELD_HDR", "FIELD_KERN", "FIELD_N", "FIELD_N2", "FIELD_REFS", "FIELD_TW",
           "emit_planner", "plan_names"]


def _f(v: float) -> L.Constant:
    return L.Constant(F64, v)


class _Vars:
    """Mutable locals as stack slots (mem2reg turns them into SSA)."""

    def __init__(self, b: L.IRBuilder, jump: L.Instruction):
        self.b = b
        self.entry = Builder(jump.parent)
        self.entry.position_before(jump)  # the entry block holds only the slots

    def new(self, init, ty=I64):
        slot = self.entry.alloca(ty)
        self.b.store(i64(init) if isinstance(init, int) else init, slot)
        return slot

    def get(self, slot, ty=I64):
        return self.b.load(slot, typ=ty)

    def set(self, slot, v) -> None:
        self.b.store(i64(v) if isinstance(v, int) else v, slot)


def _function(mod: L.Module, name: str, ret, args: list, internal: bool = True):
    fn = L.Function(mod, L.FunctionType(ret, args), name=name)
    if internal:
        fn.linkage = "internal"
    entry = Builder(fn.append_basic_block("entry"))
    b = Builder(fn.append_basic_block("body"))
    return fn, b, _Vars(b, entry.branch(b.block))


def _square_le(b: L.IRBuilder, p, n):
    """p * p <= n for 0 < p, without overflowing i64 (p <= n / p)."""
    return b.icmp_signed("<=", p, b.sdiv(n, p))


def _declare(mod: L.Module, name: str, ret, args) -> L.Function:
    fn = mod.globals.get(name)
    return fn if fn is not None else L.Function(mod, L.FunctionType(ret, args), name=name)


class _Planner:
    def __init__(self, mod: L.Module, precision: str, ft: L.Type, vlen: int, c2c: L.Function):
        self.mod, self.ft, self.vlen, self.c2c = mod, ft, vlen, c2c
        self.linux = "linux" in (mod.triple or "")
        self.names = plan_names(precision)
        self.tsize = 4 if precision == "f32" else 8
        self.aligned_alloc = _declare(mod, "aligned_alloc", PTR, [I64, I64])
        self.free = _declare(mod, "free", L.VoidType(), [PTR])
        self.sin = _declare(mod, "llvm.sin.f64", F64, [F64])
        self.cos = _declare(mod, "llvm.cos.f64", F64, [F64])

    def malloc(self, b: L.IRBuilder, args: list):
        """aligned_alloc(64, size rounded up): the kernels store to scratch a cache line at a
        time (a misaligned scratch costs up to 40%), and tables start on cache lines."""
        size = b.and_(b.add(args[0], i64(63)), i64(-64))
        return b.call(self.aligned_alloc, [i64(64), size])

    def malloc_table(self, b: L.IRBuilder, size):
        """A plan block: from HUGE_BLOCK bytes on (Linux), 2 MiB aligned and advised to use huge
        pages, since first touching 16 MiB of twiddles (2^20) in 4 KiB pages costs more than
        computing them; elsewhere as `malloc`."""
        if not self.linux:
            return self.malloc(b, [size])
        slot = b.alloca(PTR)
        with b.if_else(b.icmp_signed(">=", size, i64(HUGE_BLOCK))) as (big, small):
            with big:
                rounded = b.and_(b.add(size, i64(HUGE_PAGE - 1)), i64(-HUGE_PAGE))
                p = b.call(self.aligned_alloc, [i64(HUGE_PAGE), rounded])
                with b.if_then(b.icmp_unsigned("!=", p, L.Constant(PTR, None))):
                    madvise = _declare(self.mod, "madvise", I32, [PTR, I64, I32])
                    b.call(madvise, [p, rounded, L.Constant(I32, MADV_HUGEPAGE)])  # a hint: failure is fine
                b.store(p, slot)
            with small:
                b.store(self.malloc(b, [size]), slot)
        return b.load(slot, typ=PTR)

    def emit(self) -> None:
        self.factorize = self._factorize()
        self.cost = self._cost_guess()
        self.good = self._good_size()
        self.blue = self._use_bluestein()
        self.root = self._root()
        self.tables = self._roots_tables()
        self.make = self._make()
        self._job(self._chunk(self._exec()))
        self._get_release()
        self._real_roots()

    # -- integer planning, as plan.py ------------------------------------------------------------
    def _factorize(self) -> L.Function:
        """i64 factorize(n, i64 *facts): plan.factorize's order; returns the count."""
        fn, b, v = _function(self.mod, "aot_fft_factorize", I64, [I64, PTR])
        n0, facts = fn.args
        n, k, eights, two, threes, p = v.new(n0), v.new(0), v.new(0), v.new(1), v.new(0), v.new(5)

        def push(x):
            kk = v.get(k)
            b.store(x, b.gep(facts, [kk], source_etype=I64))
            v.set(k, b.add(kk, i64(1)))

        def divides(d):
            return lambda: b.icmp_signed("==", b.srem(v.get(n), d), i64(0))

        with while_loop(b, divides(i64(8)), "eights"):
            v.set(eights, b.add(v.get(eights), i64(1)))
            v.set(n, b.sdiv(v.get(n), i64(8)))
        with while_loop(b, divides(i64(2)), "twos"):
            v.set(two, b.mul(v.get(two), i64(2)))
            v.set(n, b.sdiv(v.get(n), i64(2)))
        with while_loop(b, divides(i64(3)), "threes"):
            v.set(threes, b.add(v.get(threes), i64(1)))
            v.set(n, b.sdiv(v.get(n), i64(3)))
        with b.if_then(b.icmp_signed("==", b.srem(v.get(threes), i64(2)), i64(1))):
            push(i64(3))
        with for_range(b, 0, b.sdiv(v.get(threes), i64(2)), name="nines"):
            push(i64(9))
        with while_loop(b, lambda: _square_le(b, v.get(p), v.get(n)), "odd"):
            with while_loop(b, lambda: divides(v.get(p))(), "odd.div"):
                push(v.get(p))
                v.set(n, b.sdiv(v.get(n), v.get(p)))
            v.set(p, b.add(v.get(p), i64(2)))
        with b.if_then(b.icmp_signed(">", v.get(n), i64(1))):
            push(v.get(n))
        with b.if_then(b.icmp_signed(">", v.get(two), i64(1))):
            push(v.get(two))
        with for_range(b, 0, v.get(eights), name="e8"):
            push(i64(8))
        b.ret(v.get(k))
        return fn

    def _cost_guess(self) -> L.Function:
        """double cost(n): plan.cost_guess."""
        fn, b, v = _function(self.mod, "aot_fft_cost", F64, [I64])
        m, res, x = v.new(fn.args[0]), v.new(_f(0.0), F64), v.new(3)

        def strip(d, add):
            with while_loop(b, lambda: b.icmp_signed("==", b.srem(v.get(m), d), i64(0)), "strip"):
                v.set(res, b.fadd(v.get(res, F64), add(d)))
                v.set(m, b.sdiv(v.get(m), d))

        def weight(d):
            df = b.sitofp(d, F64)
            return b.select(b.icmp_signed("<=", d, i64(5)), df, b.fmul(df, _f(1.1)))

        strip(i64(4), lambda d: _f(2.0))
        strip(i64(2), lambda d: _f(2.0))
        with while_loop(b, lambda: _square_le(b, v.get(x), v.get(m)), "odd"):
            strip(v.get(x), weight)
            v.set(x, b.add(v.get(x), i64(2)))
        with b.if_then(b.icmp_signed(">", v.get(m), i64(1))):
            v.set(res, b.fadd(v.get(res, F64), weight(v.get(m))))
        b.ret(b.fmul(v.get(res, F64), b.sitofp(fn.args[0], F64)))
        return fn

    def _good_size(self) -> L.Function:
        """i64 good_size(target): plan.good_size."""
        fn, b, v = _function(self.mod, "aot_fft_good_size", I64, [I64])
        target = fn.args[0]
        small = b.icmp_signed("<=", target, i64(6))
        with b.if_then(small):
            b.ret(target)
        ctlz = _declare(self.mod, "llvm.ctlz.i64", I64, [I64, I1])
        bits = b.sub(i64(64), b.call(ctlz, [b.sub(target, i64(1)), L.Constant(I1, 0)]))
        best = v.new(b.shl(i64(1), bits))
        f7, f5, f3, f2 = v.new(1), v.new(1), v.new(1), v.new(1)

        def below(slot):
            return lambda: b.icmp_signed("<", v.get(slot), v.get(best))

        with while_loop(b, below(f7), "f7"):
            v.set(f5, v.get(f7))
            with while_loop(b, below(f5), "f5"):
                v.set(f3, v.get(f5))
                with while_loop(b, below(f3), "f3"):
                    v.set(f2, v.get(f3))
                    with while_loop(b, lambda: b.icmp_signed("<", v.get(f2), target), "f2"):
                        v.set(f2, b.mul(v.get(f2), i64(2)))
                    lt = b.icmp_signed("<", v.get(f2), v.get(best))
                    v.set(best, b.select(lt, v.get(f2), v.get(best)))
                    v.set(f3, b.mul(v.get(f3), i64(3)))
                v.set(f5, b.mul(v.get(f5), i64(5)))
            v.set(f7, b.mul(v.get(f7), i64(7)))
        b.ret(v.get(best))
        return fn

    def _use_bluestein(self) -> L.Function:
        """i1 use_bluestein(n): plan.use_bluestein (largest prime factor by trial division)."""
        fn, b, v = _function(self.mod, "aot_fft_use_bluestein", I1, [I64])
        n = fn.args[0]
        m, lpf, p = v.new(n), v.new(2), v.new(3)
        with while_loop(b, lambda: b.icmp_signed("==", b.srem(v.get(m), i64(2)), i64(0)), "twos"):
            v.set(m, b.sdiv(v.get(m), i64(2)))
        with while_loop(b, lambda: _square_le(b, v.get(p), v.get(m)), "odd"):
            with while_loop(b, lambda: b.icmp_signed("==", b.srem(v.get(m), v.get(p)), i64(0)), "div"):
                v.set(lpf, v.get(p))
                v.set(m, b.sdiv(v.get(m), v.get(p)))
            v.set(p, b.add(v.get(p), i64(2)))
        last = v.get(m)
        v.set(lpf, b.select(b.icmp_signed(">", last, i64(1)), last, v.get(lpf)))
        lp = v.get(lpf)
        direct = b.or_(b.icmp_signed("<", n, i64(50)), _square_le(b, lp, n))
        with b.if_then(direct):
            b.ret(L.Constant(I1, 0))
        n2 = b.call(self.good, [b.sub(b.mul(n, i64(2)), i64(1))])
        blue = b.fmul(_f(3.0), b.call(self.cost, [n2]))
        b.ret(b.fcmp_ordered("<", blue, b.call(self.cost, [n])))
        return fn

    # -- roots of unity --------------------------------------------------------------------------
    def _root(self) -> L.Function:
        """void root(m, n, double *out): exp(2 pi i m/n) for 0 <= m < n, angle reduced exactly."""
        fn, b, _ = _function(self.mod, "aot_fft_root", L.VoidType(), [I64, I64, PTR])
        m, n, out = fn.args
        a = b.mul(m, i64(4))
        q = b.sdiv(a, n)
        r = b.sub(a, b.mul(q, n))
        up = b.icmp_signed(">", b.mul(r, i64(2)), n)  # round to the nearest quarter turn
        q = b.and_(b.select(up, b.add(q, i64(1)), q), i64(3))
        r = b.select(up, b.sub(r, n), r)
        ang = b.fmul(_f(math.pi / 2), b.fdiv(b.sitofp(r, F64), b.sitofp(n, F64)))
        c, s = b.call(self.cos, [ang]), b.call(self.sin, [ang])
        nc, ns = b.fneg(c), b.fneg(s)
        q1, q2 = b.icmp_signed("==", q, i64(1)), b.icmp_signed("==", q, i64(2))
        q0 = b.icmp_signed("==", q, i64(0))
        cos = b.select(q0, c, b.select(q1, ns, b.select(q2, nc, s)))
        sin = b.select(q0, s, b.select(q1, c, b.select(q2, ns, nc)))
        b.store(cos, out)
        b.store(sin, b.gep(out, [i64(1)], source_etype=F64))
        b.ret_void()
        return fn

    def _roots_tables(self) -> L.Function:
        """ptr tables(n, i64 *shift): lo[2^shift] then hi[ceil(n / 2^shift)] (complex double,
        malloc'ed; NULL when out of memory): exp(2 pi i m/n) = hi[m >> shift] * lo[m & mask]."""
        fn, b, _ = _function(self.mod, "aot_fft_roots_tables", PTR, [I64, PTR])
        n, shift_out = fn.args
        ctlz = _declare(self.mod, "llvm.ctlz.i64", I64, [I64, I1])
        bits = b.sub(i64(64), b.call(ctlz, [b.sub(n, i64(1)), L.Constant(I1, 0)]))
        shift = b.lshr(b.add(bits, i64(1)), i64(1))
        b.store(shift, shift_out)
        lo_n = b.shl(i64(1), shift)
        hi_n = b.sdiv(b.sub(b.add(n, lo_n), i64(1)), lo_n)
        tab = self.malloc(b, [b.mul(b.add(lo_n, hi_n), i64(16))])
        with b.if_then(b.icmp_unsigned("==", tab, L.Constant(PTR, None))):
            b.ret(tab)
        with for_range(b, 0, lo_n, name="lo") as k:
            b.call(self.root, [b.srem(k, n), n, b.gep(tab, [b.shl(k, i64(1))], source_etype=F64)])
        hi = b.gep(tab, [b.shl(lo_n, i64(1))], source_etype=F64)
        with for_range(b, 0, hi_n, name="hi") as k:
            b.call(self.root, [b.srem(b.mul(k, lo_n), n), n, b.gep(hi, [b.shl(k, i64(1))], source_etype=F64)])
        b.ret(tab)
        return fn

    def _root_from(self, b: L.IRBuilder, tab, shift, m):
        """exp(2 pi i m/n) as (re, im) doubles from `tables`, 0 <= m < n."""
        lo_n = b.shl(i64(1), shift)

        def load(idx):
            p = b.gep(tab, [b.shl(idx, i64(1))], source_etype=F64)
            return b.load(p, typ=F64), b.load(b.gep(p, [i64(1)], source_etype=F64), typ=F64)

        ar, ai = load(b.and_(m, b.sub(lo_n, i64(1))))
        br, bi = load(b.add(lo_n, b.ashr(m, shift)))
        return b.fsub(b.fmul(ar, br), b.fmul(ai, bi)), b.fadd(b.fmul(ar, bi), b.fmul(ai, br))

    def _store_c(self, b: L.IRBuilder, base, e, re, im, conj: bool = False) -> None:
        """base[e] = re + i im (or its conjugate) in the plan's precision."""
        if self.ft != F64:
            re, im = b.fptrunc(re, self.ft), b.fptrunc(im, self.ft)
        if conj:
            im = b.fneg(im)
        p = b.gep(base, [b.shl(e, i64(1))], source_etype=self.ft)
        b.store(re, p)
        b.store(im, b.gep(p, [i64(1)], source_etype=self.ft))

    # -- plan blocks -----------------------------------------------------------------------------
    def _field(self, b, plan, k: int):
        return b.gep(plan, [i64(k)], source_etype=I64)

    def _at(self, b, plan, k: int):
        """The table whose byte offset is in word k."""
        return b.gep(plan, [b.load(self._field(b, plan, k), typ=I64)], source_etype=L.IntType(8))

    def _make(self) -> L.Function:
        fn, b, v = _function(self.mod, self.names["make"], PTR, [I64], internal=False)
        n = fn.args[0]
        null = L.Constant(PTR, None)
        with b.if_then(b.icmp_signed("<", n, i64(1))):
            b.ret(null)
        blue = b.call(self.blue, [n])
        m = i64(BLUESTEIN_MULTIPLE)  # plan.bluestein_size
        ceil = b.sdiv(b.add(b.sub(b.mul(n, i64(2)), i64(1)), b.sub(m, i64(1))), m)
        n2 = b.select(blue, b.mul(m, b.call(self.good, [ceil])), n)
        facts = v.entry.alloca(I64, size=MAX_FACTORS)
        nf = b.select(b.icmp_signed(">", n2, i64(1)), b.call(self.factorize, [n2, facts]), i64(0))
        ntw, l1 = v.new(0), v.new(1)
        with for_range(b, 0, nf, name="count") as f:
            ip = b.load(b.gep(facts, [f], source_etype=I64), typ=I64)
            ido = b.sdiv(n2, b.mul(v.get(l1), ip))
            v.set(ntw, b.add(v.get(ntw), b.add(self._twiddle_count(b, ip, ido), self._generic_extra(b, ip))))
            v.set(l1, b.mul(v.get(l1), ip))

        def round64(x):
            return b.and_(b.add(x, i64(63)), i64(-64))

        csize = 2 * self.tsize
        hdr_off = i64(META_BYTES)
        tw_off = b.add(hdr_off, round64(b.mul(b.add(i64(2), b.mul(nf, i64(HEADER_FIELDS))), i64(8))))
        chirp_off = b.add(tw_off, round64(b.mul(v.get(ntw), i64(csize))))
        kern_off = b.add(chirp_off, b.select(blue, round64(b.mul(n, i64(csize))), i64(0)))
        total = b.add(kern_off, b.select(blue, round64(b.mul(n2, i64(csize))), i64(0)))
        plan = self.malloc_table(b, total)
        with b.if_then(b.icmp_unsigned("==", plan, null)):
            b.ret(null)
        for k, val in ((FIELD_N, n), (FIELD_BLUE, b.zext(blue, I64)), (FIELD_REFS, i64(1)), (FIELD_N2, n2),
                       (FIELD_HDR, hdr_off), (FIELD_TW, tw_off), (FIELD_CHIRP, chirp_off), (FIELD_KERN, kern_off)):
            b.store(val, self._field(b, plan, k))
        ok = b.call(self._fill_direct(), [plan, facts, nf])
        with b.if_then(b.not_(ok)):
            b.call(self.free, [plan])
            b.ret(null)
        with b.if_then(blue):
            ok = b.call(self._fill_bluestein(), [plan])
            with b.if_then(b.not_(ok)):
                b.call(self.free, [plan])
                b.ret(null)
        b.ret(plan)
        return fn

    def _generic_extra(self, b, ip):
        """ip when the radix runs on the generic pass (its cos/sin table), else 0."""
        coded = L.Constant(I1, 0)
        for r in CODELET_RADICES:
            coded = b.or_(coded, b.icmp_signed("==", ip, i64(r)))
        return b.select(coded, i64(0), ip)

    def _two_level(self, b, ip, ido):
        """plan.two_level(ip, ido) as an i1."""
        return b.and_(b.icmp_signed("==", self._generic_extra(b, ip), i64(0)), long_ido(b, ido))

    def _twiddle_count(self, b, ip, ido):
        """plan.twiddle_count(ip, ido)."""
        per_leg = b.select(self._two_level(b, ip, ido), b.add(i64(TWIDDLE_BLOCK), b.sdiv(ido, i64(TWIDDLE_BLOCK))), ido)
        return b.mul(b.sub(ip, i64(1)), per_leg)

    def _fill_pass(self, b, tab, shift, tw, tw_off, ip, l1, ido):
        """The twiddle table of one pass at tw + tw_off, full or two-level as plan.py's
        _twiddle_exponents lays it out; returns its length."""
        legs = b.sub(ip, i64(1))
        blocks = b.sdiv(ido, i64(TWIDDLE_BLOCK))

        def fill(first, count, step):  # w(j, i*step) for i < count at first + (j-1)*count + i
            with for_range(b, 1, ip, name="j") as j, for_range(b, 0, count, name="i") as i:
                m = b.mul(b.mul(j, l1), b.mul(i, step))  # < ip * l1 * ido = n
                re, im = self._root_from(b, tab, shift, m)
                self._store_c(b, tw, b.add(first, b.add(b.mul(b.sub(j, i64(1)), count), i)), re, im)

        with b.if_else(self._two_level(b, ip, ido)) as (two_level, full):
            with two_level:
                fill(tw_off, i64(TWIDDLE_BLOCK), i64(1))
                fill(b.add(tw_off, b.mul(legs, i64(TWIDDLE_BLOCK))), blocks, i64(TWIDDLE_BLOCK))
            with full:
                fill(tw_off, ido, i64(1))
        return self._twiddle_count(b, ip, ido)

    def _fill_direct(self) -> L.Function:
        """i1 fill(plan, facts, nf): header and twiddles of length n2 (false: out of memory)."""
        fn, b, v = _function(self.mod, "aot_fft_plan_fill", I1, [PTR, PTR, I64])
        plan, facts, nf = fn.args
        n = b.load(self._field(b, plan, FIELD_N2), typ=I64)
        hdr, tw = self._at(b, plan, FIELD_HDR), self._at(b, plan, FIELD_TW)
        b.store(n, hdr)
        b.store(nf, b.gep(hdr, [i64(1)], source_etype=I64))
        shift_slot = v.entry.alloca(I64)
        tab = b.call(self.tables, [n, shift_slot])
        with b.if_then(b.icmp_unsigned("==", tab, L.Constant(PTR, None))):
            b.ret(L.Constant(I1, 0))
        shift = b.load(shift_slot, typ=I64)
        off, l1 = v.new(0), v.new(1)
        with for_range(b, 0, nf, name="pass") as f:
            ip = b.load(b.gep(facts, [f], source_etype=I64), typ=I64)
            l1v = v.get(l1)
            ido = b.sdiv(n, b.mul(l1v, ip))
            tw_off = v.get(off)
            v.set(off, b.add(tw_off, self._fill_pass(b, tab, shift, tw, tw_off, ip, l1v, ido)))
            cs_off = v.new(-1)
            with b.if_then(b.icmp_signed("!=", self._generic_extra(b, ip), i64(0))):
                v.set(cs_off, v.get(off))
                step = b.sdiv(n, ip)
                with for_range(b, 0, ip, name="cs") as mm:
                    re, im = self._root_from(b, tab, shift, b.mul(mm, step))
                    self._store_c(b, tw, b.add(v.get(cs_off), mm), re, im)
                v.set(off, b.add(v.get(off), ip))
            row = b.gep(hdr, [b.add(i64(2), b.mul(f, i64(HEADER_FIELDS)))], source_etype=I64)
            for c, val in enumerate((ip, l1v, ido, tw_off, v.get(cs_off))):
                b.store(val, b.gep(row, [i64(c)], source_etype=I64))
            v.set(l1, b.mul(l1v, ip))
        b.call(self.free, [tab])
        b.ret(L.Constant(I1, 1))
        return fn

    def _fill_bluestein(self) -> L.Function:
        """i1 fill(plan): conj chirp (n) and DFT(kernel)/n2 (n2), kernel = chirp at k and n2-k."""
        fn, b, v = _function(self.mod, "aot_fft_plan_fill_blue", I1, [PTR])
        plan = fn.args[0]
        false = L.Constant(I1, 0)
        n = b.load(self._field(b, plan, FIELD_N), typ=I64)
        n2 = b.load(self._field(b, plan, FIELD_N2), typ=I64)
        chirp, kern = self._at(b, plan, FIELD_CHIRP), self._at(b, plan, FIELD_KERN)
        shift_slot = v.entry.alloca(I64)
        two_n = b.mul(n, i64(2))
        tab = b.call(self.tables, [two_n, shift_slot])
        with b.if_then(b.icmp_unsigned("==", tab, L.Constant(PTR, None))):
            b.ret(false)
        shift = b.load(shift_slot, typ=I64)
        with for_range(b, 0, n2, name="z") as k:
            self._store_c(b, kern, k, _f(0.0), _f(0.0))
        sq = v.new(0)  # k^2 mod 2n, updated exactly
        with for_range(b, 0, n, name="k") as k:
            re, im = self._root_from(b, tab, shift, v.get(sq))
            self._store_c(b, chirp, k, re, im, conj=True)
            self._store_c(b, kern, k, re, im)
            with b.if_then(b.icmp_signed(">", k, i64(0))):
                self._store_c(b, kern, b.sub(n2, k), re, im)
            nxt = b.add(v.get(sq), b.add(b.mul(k, i64(2)), i64(1)))
            v.set(sq, b.srem(nxt, two_n))
        b.call(self.free, [tab])
        scratch = self.malloc(b, [b.mul(n2, i64(4 * self.tsize))])
        with b.if_then(b.icmp_unsigned("==", scratch, L.Constant(PTR, None))):
            b.ret(false)
        hdr, tw = self._at(b, plan, FIELD_HDR), self._at(b, plan, FIELD_TW)
        inv = b.fdiv(_f(1.0), b.sitofp(n2, F64))
        if self.ft != F64:
            inv = b.fptrunc(inv, self.ft)
        b.call(self.c2c, [hdr, tw, kern, kern, i64(1), i64(1), i64(0), i64(1), i64(0),
                          L.Constant(I32, 1), inv, scratch])
        b.call(self.free, [scratch])
        b.ret(L.Constant(I1, 1))
        return fn

    # -- running a plan --------------------------------------------------------------------------
    def _lanes_per(self, b, flags, howmany, idist, n):
        """The c2c entry's scratch per element in complex pairs (names.scratch_values)."""
        def bit(flag):
            return b.icmp_signed("!=", b.and_(flags, L.Constant(I32, flag)), L.Constant(I32, 0))

        lanes = b.and_(bit(FLAG_LANES), b.icmp_signed(">=", howmany, i64(self.vlen)))
        blocked = b.and_(bit(FLAG_BLOCK), b.and_(b.icmp_signed("==", idist, i64(1)),
                                                 b.icmp_signed("<=", n, i64(LANE_BLOCK_MAX_N))))
        per_lane = b.select(blocked, i64(self.vlen * LANE_BLOCK), i64(self.vlen))
        return b.select(lanes, per_lane, i64(1))

    def _exec(self) -> L.Function:
        ft = self.ft
        fn, b, _ = _function(self.mod, self.names["exec"], I32,
                             [PTR, PTR, PTR, I64, I64, I64, I64, I64, I32, ft], internal=False)
        plan, src, dst, howmany, istr, idist, ostr, odist, flags, scale = fn.args
        null = L.Constant(PTR, None)
        n2 = b.load(self._field(b, plan, FIELD_N2), typ=I64)
        hdr, tw = self._at(b, plan, FIELD_HDR), self._at(b, plan, FIELD_TW)
        blue = b.icmp_signed("!=", b.load(self._field(b, plan, FIELD_BLUE), typ=I64), i64(0))
        with b.if_then(b.not_(blue)):
            scratch = self.malloc(b, [b.mul(b.mul(n2, self._lanes_per(b, flags, howmany, idist, n2)),
                                            i64(SCRATCH_PER_LANE * self.tsize))])
            with b.if_then(b.icmp_unsigned("==", scratch, null)):
                b.ret(L.Constant(I32, 1))
            b.call(self.c2c, [hdr, tw, src, dst, howmany, istr, idist, ostr, odist, flags, scale, scratch])
            b.call(self.free, [scratch])
            b.ret(L.Constant(I32, 0))
        n = b.load(self._field(b, plan, FIELD_N), typ=I64)
        chirp, kern = self._at(b, plan, FIELD_CHIRP), self._at(b, plan, FIELD_KERN)
        lead = b.and_(b.add(b.mul(n2, i64(2 * self.tsize)), i64(63)), i64(-64))  # n2 complex, whole lines
        buf = self.malloc(b, [b.add(lead, b.mul(n2, i64(4 * self.tsize)))])  # then 4*n2 of scratch
        with b.if_then(b.icmp_unsigned("==", buf, null)):
            b.ret(L.Constant(I32, 1))
        scratch = b.gep(buf, [lead], source_etype=L.IntType(8))
        fwd = b.icmp_signed("!=", b.and_(flags, L.Constant(I32, 1)), L.Constant(I32, 0))
        one, zero = L.Constant(ft, 1.0), L.Constant(ft, 0.0)

        def load(base, e):
            p = b.gep(base, [b.shl(e, i64(1))], source_etype=ft)
            return b.load(p, typ=ft), b.load(b.gep(p, [i64(1)], source_etype=ft), typ=ft)

        def store(base, e, c):
            p = b.gep(base, [b.shl(e, i64(1))], source_etype=ft)
            b.store(c[0], p)
            b.store(c[1], b.gep(p, [i64(1)], source_etype=ft))

        def mul(x, y):
            return (b.fsub(b.fmul(x[0], y[0]), b.fmul(x[1], y[1])), b.fadd(b.fmul(x[0], y[1]), b.fmul(x[1], y[0])))

        def conj_if_back(x):
            return x[0], b.select(fwd, x[1], b.fneg(x[1]))

        with for_range(b, 0, howmany, name="row") as row:
            s_row = b.gep(src, [b.shl(b.mul(row, idist), i64(1))], source_etype=ft)
            d_row = b.gep(dst, [b.shl(b.mul(row, odist), i64(1))], source_etype=ft)
            with for_range(b, 0, n, name="pre") as k:  # backward = conj(forward(conj x))
                store(buf, k, mul(conj_if_back(load(s_row, b.mul(k, istr))), load(chirp, k)))
            with for_range(b, n, n2, name="pad") as k:
                store(buf, k, (zero, zero))
            b.call(self.c2c, [hdr, tw, buf, buf, i64(1), i64(1), i64(0), i64(1), i64(0),
                              L.Constant(I32, 1), one, scratch])
            with for_range(b, 0, n2, name="conv") as k:
                store(buf, k, mul(load(buf, k), load(kern, k)))
            b.call(self.c2c, [hdr, tw, buf, buf, i64(1), i64(1), i64(0), i64(1), i64(0),
                              L.Constant(I32, 0), one, scratch])
            with for_range(b, 0, n, name="post") as k:
                re, im = conj_if_back(mul(load(buf, k), load(chirp, k)))
                store(d_row, b.mul(k, ostr), (b.fmul(re, scale), b.fmul(im, scale)))
        b.call(self.free, [buf])
        b.ret(L.Constant(I32, 0))
        return fn

    # -- the table of the real passes ------------------------------------------------------------
    def _real_roots(self) -> None:
        """i32 roots(n, T *out): out[k] = exp(-2 pi i k/n), k < n/2 (0, or 1 when out of memory)."""
        fn, b, v = _function(self.mod, self.names["roots"], I32, [I64, PTR], internal=False)
        n, out = fn.args
        shift_slot = v.entry.alloca(I64)
        tab = b.call(self.tables, [n, shift_slot])
        with b.if_then(b.icmp_unsigned("==", tab, L.Constant(PTR, None))):
            b.ret(L.Constant(I32, 1))
        shift = b.load(shift_slot, typ=I64)
        with for_range(b, 0, b.sdiv(n, i64(2)), name="k") as k:
            m = b.select(b.icmp_signed("==", k, i64(0)), i64(0), b.sub(n, k))  # -k mod n
            re, im = self._root_from(b, tab, shift, m)
            self._store_c(b, out, k, re, im)
        b.call(self.free, [tab])
        b.ret(L.Constant(I32, 0))

    def _chunk(self, run: L.Function) -> None:
        """void chunk(i64 *args, lo, hi): `exec` of transforms lo..hi of args (names.PLAN_JOB's first
        ten words: plan ... scale (a double's bits), status): a pool's kernel
        (codegen/kernels/common.KERNEL_TYPE), so an eager batch splits over the process's pool;
        status becomes 1 when a chunk runs out of memory."""
        fn = L.Function(self.mod, L.FunctionType(L.VoidType(), [PTR, I64, I64]), name=self.names["chunk"])
        args, lo, hi = fn.args
        b = Builder(fn.append_basic_block("entry"))
        word = {f: b.load(b.gep(args, [i64(PLAN_JOB.index(f))], source_etype=I64), typ=I64) for f in PLAN_JOB[:9]}
        plan, src, dst = (b.inttoptr(word[f], PTR) for f in ("plan", "src", "dst"))
        istr, idist, ostr, odist = (word[f] for f in ("istride", "idist", "ostride", "odist"))
        scale = b.bitcast(word["scale"], F64)
        if self.ft != F64:
            scale = b.fptrunc(scale, self.ft)
        s = b.gep(src, [b.shl(b.mul(lo, idist), i64(1))], source_etype=self.ft)
        d = b.gep(dst, [b.shl(b.mul(lo, odist), i64(1))], source_etype=self.ft)
        rc = b.call(run, [plan, s, d, b.sub(hi, lo), istr, idist, ostr, odist, b.trunc(word["flags"], I32), scale])
        with b.if_then(b.icmp_signed("!=", rc, L.Constant(I32, 0))):
            b.store(i64(1), b.gep(args, [i64(PLAN_JOB.index("status"))], source_etype=I64))
        b.ret_void()
        return fn

    def _job(self, chunk: L.Function) -> None:
        """void job(i64 *job): names.PLAN_JOB's block, the chunk kernel over its `howmany` rows, on
        the pool its `pool` word names in chunks of `chunk` rows when `nthreads` > 1 (an eager call's
        prepared job: aot/fft/_fast.py)."""
        fn = L.Function(self.mod, L.FunctionType(L.VoidType(), [PTR]), name=self.names["job"])
        (job,) = fn.args
        b = Builder(fn.append_basic_block("entry"))

        def word(name):
            return b.load(b.gep(job, [i64(PLAN_JOB.index(name))], source_etype=I64), typ=I64)

        howmany, nthreads, pool = word("howmany"), word("nthreads"), word("pool")
        shared = b.and_(b.icmp_signed(">", nthreads, i64(1)), b.icmp_signed("!=", pool, i64(0)))
        with b.if_else(shared) as (on_pool, here):
            with on_pool:
                pfor = b.inttoptr(pool, L.FunctionType(L.VoidType(), [PTR, PTR, I64, I64, I64]).as_pointer())
                b.call(pfor, [b.bitcast(chunk, PTR), job, howmany, nthreads, word("chunk")])
            with here:
                b.call(chunk, [job, i64(0), howmany])
        b.ret_void()

    # -- the per-call-site cache -------------------------------------------------------------------
    def _get_release(self) -> None:
        release, b, _ = _function(self.mod, self.names["release"], L.VoidType(), [PTR], internal=False)
        plan = release.args[0]
        with b.if_then(b.icmp_unsigned("!=", plan, L.Constant(PTR, None))):
            old = b.atomic_rmw("sub", self._field(b, plan, FIELD_REFS), i64(1), "acq_rel")
            with b.if_then(b.icmp_signed("==", old, i64(1))):
                b.call(self.free, [plan])
        b.ret_void()

        get, b, _ = _function(self.mod, self.names["get"], PTR, [PTR, I64], internal=False)
        slot, n = get.args
        lock = slot
        pslot = b.gep(slot, [i64(1)], source_etype=I64)
        null = L.Constant(PTR, None)

        def acquire():
            with while_loop(b, lambda: b.not_(b.extract_value(
                    b.cmpxchg(lock, i64(0), i64(1), "acquire", "monotonic"), 1)), "spin"):
                pass

        def unlock():
            b.atomic_rmw("xchg", lock, i64(0), "release")

        acquire()
        cur = b.load(pslot, typ=PTR)
        with b.if_then(b.icmp_unsigned("!=", cur, null)):  # noqa: SIM117  (branch first: never load through null)
            with b.if_then(b.icmp_signed("==", b.load(self._field(b, cur, FIELD_N), typ=I64), n)):
                b.atomic_rmw("add", self._field(b, cur, FIELD_REFS), i64(1), "acq_rel")
                unlock()
                b.ret(cur)
        unlock()
        fresh = b.call(self.make, [n])  # built outside the lock: it may take milliseconds
        with b.if_then(b.icmp_unsigned("==", fresh, null)):
            b.ret(null)
        b.store(i64(2), self._field(b, fresh, FIELD_REFS))  # the slot's and the caller's
        acquire()
        old = b.load(pslot, typ=PTR)
        b.store(fresh, pslot)
        unlock()
        b.call(release, [old])
        b.ret(fresh)


def emit_planner(mod: L.Module, precision: str, ft: L.Type, vlen: int, c2c: L.Function) -> None:
    """Add the run-time plan functions of `precision` to the kernel module (after its c2c entry)."""
    _Planner(mod, precision, ft, vlen, c2c).emit()
