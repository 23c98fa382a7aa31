"""The FFT kernel module of one precision: passes, plan interpreters and the C-ABI entries.

Besides the c2c entry below, the module exports one pass of a plan over a range
(`aot_fft_pass_{p}`, for threads sharing a long transform), the real-transform passes of
real.py and the run-time planner of planner.py (plans for lengths known only at run time).

Exported (C ABI; pointers to interleaved complex of the precision `T`, strides in elements):

    void aot_fft_c2c_{f32,f64}(const int64_t *plan, const T *twiddles, const T *in, T *out,
                               int64_t howmany, int64_t istride, int64_t idist,
                               int64_t ostride, int64_t odist, int32_t flags, T scale,
                               T *scratch)

computes `howmany` transforms of length plan[0]: out[b*odist + k*ostride] = scale * sum_j
in[b*idist + j*istride] * exp(-+2*pi*i*j*k/n). in == out is allowed. flags: bit 0 forward
(FLAG_FORWARD); bit 1 (FLAG_LANES) lets groups of VLEN transforms run across SIMD lanes (best when
idist == 1 or n is small or odd; contiguous rows of a smooth n are faster one at a time); bit 2
(FLAG_BLOCK) lets neighbouring transforms (idist == 1) of a short n gather (and, when odist == 1,
scatter) LANE_BLOCK lane groups at a time (names.lane_block). The rest run one at a time, vectorised inside the transform
wherever a pass's ido allows. `scratch` holds names.scratch_values(n, VLEN, idist, flags) values
of T (4 * n * VLEN per lane group when lanes are used, else 4 * n); align it (and `out`) to 64 bytes: every pass stores into it, and cache-line-split
stores cost up to 40% (complex128, n = 1024).
"""
from __future__ import annotations

import functools

from llvmlite import ir as L

from ..llvm.builder import Builder
from ..llvm.loops import prefetch
from .fourstep import emit_four_step_passes
from .layouts import I32, I64, PTR, Layout, for_range, i64, layouts_of
from .names import (
    FLAG_BLOCK,
    FLAG_FORWARD,
    FLAG_LANES,
    LANE_BLOCK,
    LANE_BLOCK_MAX_N,
    SCRATCH_PER_LANE,
    SPLIT,
    columns_name,
    combine_name,
    entry_name,
    pass_entry_name,
    pass_keys,
    rows_name,
    transpose_name,
    unzip_name,
)
from .passes import emit_keyed_pass
from .plan import CODELET_RADICES, HEADER_FIELDS
from .planner import emit_planner
from .real import emit_c2r_pre, emit_r2c_post
from .threads import emit_four_step, emit_halves

__all__ = ["FLAG_FORWARD", "FLAG_LANES", "SCRATCH_PER_LANE", "emit_module", "entry_name", "pass_entry_name"]
_SPLIT_KIND = {("w", "p"): "wp", ("p", "p"): "p", ("p", "w"): "pw"}
# lane blocks prefetch the row this far ahead: c2c of (128,128,128) along axis 0 15% faster and
# along axis 1 7% on one thread (6% / 0 on two), columns of 1024 x 1024 2% (medians of four
# alternating processes against the build without)
PREFETCH_ROWS = 8


class _Emitter:
    """The plan interpreters and entries. `passes(radix, forward, src, dst)` gives the function of
    a pass (names.pass_keys): emitted into the module by default, an import stub in groups.py."""

    def __init__(self, mod: L.Module, ft: L.Type, vlen: int, passes=None):
        self.mod, self.ft, self.vlen = mod, ft, vlen
        self.layouts = layouts_of(ft, vlen)
        self.s, self.w, self.v = (self.layouts[k] for k in ("s", "w", "v"))
        passes = passes or (lambda r, fw, src, dst: emit_keyed_pass(mod, r, fw, src, dst, self.layouts))
        self.passes: dict[tuple, L.Function] = {}
        # single transforms whose last radix is a multiple of VLEN keep their work buffers Split
        self.split: dict[bool, dict] = {True: {}, False: {}}
        for fwd in (True, False):
            for r, src, dst in pass_keys(fwd, vlen):
                fn = passes(r, fwd, src, dst)
                if SPLIT in (src, dst):
                    self.split[fwd][(r, _SPLIT_KIND[(src, dst)])] = fn
                else:
                    self.passes[(r, fwd, src)] = fn

    # -- the entries' internal functions, emitted on first use ------------------------------
    @functools.cached_property
    def runners(self) -> dict:
        return {(fw, ln): self.emit_runner(fw, ln) for fw in (True, False) for ln in (True, False)}

    @functools.cached_property
    def movers(self) -> dict:
        """copy, gather, scatter (lanes), gather_b, scatter_b (lane blocks)."""
        return {"copy": self.emit_copy_scalar(), "gather": self.emit_gather_lanes(),
                "scatter": self.emit_scatter_lanes(), "gather_b": self.emit_block_lanes(True),
                "scatter_b": self.emit_block_lanes(False)}

    def run(self, b, forward, lanes: bool, args, res_slot):
        """The plan interpreter of the direction `forward` (an i1) on args; returns its result."""
        with b.if_else(forward) as (f_blk, b_blk):
            with f_blk:
                b.store(b.call(self.runners[(True, lanes)], args), res_slot)
            with b_blk:
                b.store(b.call(self.runners[(False, lanes)], args), res_slot)
        return b.load(res_slot, typ=PTR)

    def run_block(self, b, forward, hdr, tw, src, istride, buf0, buf1, region, res_slot):
        """Gather LANE_BLOCK lane groups of neighbouring transforms (src, istride) into buf1 and
        transform each; returns where the first group's result is (group q's: + q*region)."""
        null = L.Constant(PTR, None)
        b.call(self.movers["gather_b"], [src, buf1, istride, b.load(hdr, typ=I64), i64(LANE_BLOCK), region])
        for q in range(LANE_BLOCK):
            q0 = b.gep(buf0, [b.mul(region, i64(q))], source_etype=self.ft)
            q1 = b.gep(buf1, [b.mul(region, i64(q))], source_etype=self.ft)
            res = self.run(b, forward, True, (hdr, tw, q1, q0, q1, null), res_slot)  # every group's: same offset
        return b.gep(res, [b.mul(region, i64(1 - LANE_BLOCK))], source_etype=self.ft)

    # -- plan interpreter -------------------------------------------------------------------
    def emit_runner(self, forward: bool, lanes: bool) -> L.Function:
        """ptr run(plan, tw, src, buf0, buf1, final): all passes; returns where the result is.

        Pass f writes buf0/buf1 alternately (so src must not be buf0), the last one `final`
        when that is not null.
        """
        fnty = L.FunctionType(PTR, [PTR, PTR, PTR, PTR, PTR, PTR])
        name = f"aot_fft_run_{'f' if forward else 'b'}_{'v' if lanes else 's'}"
        fn = L.Function(self.mod, fnty, name=name)
        fn.linkage = "internal"
        hdr, tw, src, buf0, buf1, final = fn.args
        b = Builder(fn.append_basic_block("entry"))
        cur = b.alloca(PTR, name="cur")
        b.store(src, cur)
        nf = b.load(b.gep(hdr, [i64(1)], source_etype=I64), typ=I64)
        split_ok = None if lanes or not self.split[forward] else self._split_ok(b, hdr, nf)
        with for_range(b, 0, nf, name="f") as f:
            row = b.gep(hdr, [b.add(i64(2), b.mul(f, i64(HEADER_FIELDS)))], source_etype=I64)
            ip, l1, ido, tw_off, cs_off = (b.load(b.gep(row, [i64(c)], source_etype=I64), typ=I64)
                                           for c in range(HEADER_FIELDS))
            dst = b.select(b.icmp_signed("==", b.and_(f, i64(1)), i64(0)), buf0, buf1)
            last = b.icmp_signed("==", f, b.sub(nf, i64(1)))
            use_final = b.and_(last, b.icmp_unsigned("!=", final, L.Constant(PTR, None)))
            dst = b.select(use_final, final, dst)
            wa = b.gep(tw, [b.shl(tw_off, i64(1))], source_etype=self.ft)
            src_f = b.load(cur, typ=PTR)
            lay = self.v if lanes else self.w
            args = (ido, l1, src_f, dst, wa, l1, ido, i64(0))
            if split_ok is None:
                self._dispatch(b, ip, forward, lay, args, tw, cs_off)
            else:
                with b.if_else(split_ok) as (then, otherwise):
                    with then:
                        self._dispatch_split(b, ip, forward, f, nf, args)
                    with otherwise:
                        self._dispatch(b, ip, forward, lay, args, tw, cs_off)
            b.store(dst, cur)
        b.ret(b.load(cur, typ=PTR))
        return fn

    def _split_ok(self, b, hdr, nf):
        """Whether the Split passes cover the plan: two passes or more, every radix a codelet
        and the last one a multiple of VLEN (so every earlier ido is)."""
        ok = b.alloca(L.IntType(1), name="split_ok")
        last_ip = b.load(b.gep(hdr, [b.add(i64(2), b.mul(b.sub(nf, i64(1)), i64(HEADER_FIELDS)))],
                               source_etype=I64), typ=I64)
        last_ok = L.Constant(L.IntType(1), 0)
        for r, kind in self.split[True]:
            if kind == "pw":
                last_ok = b.or_(last_ok, b.icmp_signed("==", last_ip, i64(r)))
        b.store(b.and_(b.icmp_signed(">=", nf, i64(2)), last_ok), ok)
        with for_range(b, 0, nf, name="fs") as f:
            ip = b.load(b.gep(hdr, [b.add(i64(2), b.mul(f, i64(HEADER_FIELDS)))], source_etype=I64), typ=I64)
            known = L.Constant(L.IntType(1), 0)
            for r in CODELET_RADICES:
                known = b.or_(known, b.icmp_signed("==", ip, i64(r)))
            b.store(b.and_(b.load(ok), known), ok)
        return b.load(ok)

    def _dispatch_split(self, b, ip, forward: bool, f, nf, args: tuple) -> None:
        """The pass of a plan that _split_ok accepted: numpy layout to Split first, Split to
        the numpy layout last, Split to Split in between."""
        passes = self.split[forward]
        first, last = b.icmp_signed("==", f, i64(0)), b.icmp_signed("==", f, b.sub(nf, i64(1)))
        done = b.append_basic_block("split.done")
        sw = b.switch(ip, done)  # _split_ok leaves no other radix
        for r in CODELET_RADICES:
            blk = b.append_basic_block(f"split{r}")
            sw.add_case(L.Constant(I64, r), blk)
            b.position_at_end(blk)
            fn = b.select(first, passes[(r, "wp")], passes[(r, "p")])
            if (r, "pw") in passes:
                fn = b.select(last, passes[(r, "pw")], fn)
            b.call(fn, args)
            b.branch(done)
        b.position_at_end(done)

    def _dispatch(self, b, ip, forward: bool, lay: Layout, args: tuple, tw, cs_off) -> None:
        done = b.append_basic_block("radix.done")
        generic = b.append_basic_block("radix.generic")
        sw = b.switch(ip, generic)
        for r in CODELET_RADICES:
            blk = b.append_basic_block(f"radix{r}")
            sw.add_case(L.Constant(I64, r), blk)
            b.position_at_end(blk)
            b.call(self.passes[(r, forward, lay.name)], args)
            b.branch(done)
        b.position_at_end(generic)
        cs = b.gep(tw, [b.shl(cs_off, i64(1))], source_etype=self.ft)
        if lay is self.w:  # the generic pass has no ido == 1 variant over k
            wide = b.icmp_signed("==", b.srem(args[6], i64(self.vlen)), i64(0))
            with b.if_else(wide) as (then, otherwise):
                with then:
                    b.call(self.passes[("g", forward, "w")], [*args, cs, ip])
                with otherwise:
                    b.call(self.passes[("g", forward, "s")], [*args, cs, ip])
        else:
            b.call(self.passes[("g", forward, lay.name)], [*args, cs, ip])
        b.branch(done)
        b.position_at_end(done)

    def emit_pass_entry(self, precision: str) -> L.Function:
        """void aot_fft_pass_{p}(plan, tw, f, src, dst, lo, hi, flags): pass f of one transform,
        for k in [lo, hi) when l1 > 1, else for i in [lo, hi) (threads share a long transform).
        Any range works; multiples of VLEN keep the pass VLEN-wide (over i when ido % VLEN == 0,
        over k when ido == 1)."""
        fnty = L.FunctionType(L.VoidType(), [PTR, PTR, I64, PTR, PTR, I64, I64, I32])
        fn = L.Function(self.mod, fnty, name=pass_entry_name(precision))
        hdr, tw, f, src, dst, lo, hi, flags = fn.args
        b = Builder(fn.append_basic_block("entry"))
        row = b.gep(hdr, [b.add(i64(2), b.mul(f, i64(HEADER_FIELDS)))], source_etype=I64)
        ip, l1, ido, tw_off, cs_off = (b.load(b.gep(row, [i64(c)], source_etype=I64), typ=I64)
                                       for c in range(HEADER_FIELDS))
        count = b.sub(hi, lo)
        over_k = b.icmp_signed(">", l1, i64(1))
        # over k: cc + lo*ip*ido, ch + lo*ido; over i: cc and ch + lo, the twiddles from i0 = lo
        cc_off = b.select(over_k, b.mul(lo, b.mul(ip, ido)), lo)
        ch_off = b.select(over_k, b.mul(lo, ido), lo)
        kn = b.select(over_k, count, i64(1))
        inn = b.select(over_k, ido, count)
        i0 = b.select(over_k, i64(0), lo)

        def at(base, off):
            return b.gep(base, [b.shl(off, i64(1))], source_etype=self.ft)

        args = (ido, l1, at(src, cc_off), at(dst, ch_off), at(tw, tw_off), kn, inn, i0)
        forward = b.icmp_signed("!=", b.and_(flags, L.Constant(I32, FLAG_FORWARD)), L.Constant(I32, 0))
        with b.if_else(forward) as (then, otherwise):
            with then:
                self._dispatch(b, ip, True, self.w, args, tw, cs_off)
            with otherwise:
                self._dispatch(b, ip, False, self.w, args, tw, cs_off)
        b.ret_void()
        return fn

    # -- moving data between strided user arrays and the work buffers ------------------------
    def emit_copy_scalar(self) -> L.Function:
        """copy(src, sstride, dst, dstride, n, scale): complex elements, times scale."""
        fnty = L.FunctionType(L.VoidType(), [PTR, I64, PTR, I64, I64, self.ft])
        fn = L.Function(self.mod, fnty, name="aot_fft_copy_s")
        fn.linkage = "internal"
        src, ss, dst, ds, n, scale = fn.args
        b = Builder(fn.append_basic_block("entry"))
        s = self.s
        with for_range(b, 0, n, name="e") as e:
            re, im = s.load(b, src, b.mul(e, ss))
            s.store(b, dst, b.mul(e, ds), (b.fmul(re, scale), b.fmul(im, scale)))
        b.ret_void()
        return fn

    def emit_gather_lanes(self) -> L.Function:
        """gather(src, stride, dist, n, buf): VLEN transforms into the lane layout."""
        fnty = L.FunctionType(L.VoidType(), [PTR, I64, I64, I64, PTR])
        fn = L.Function(self.mod, fnty, name="aot_fft_gather_v")
        fn.linkage = "internal"
        src, stride, dist, n, buf = fn.args
        b = Builder(fn.append_basic_block("entry"))
        with b.if_else(b.icmp_signed("==", dist, i64(1))) as (contiguous, strided):
            with contiguous, for_range(b, 0, n, name="e") as e:  # neighbour lanes: one wide load
                self.v.store(b, buf, e, self.w.load(b, src, b.mul(e, stride)))
            with strided, for_range(b, 0, n, name="e") as e:
                re, im = self._lane_values(b, src, b.mul(e, stride), dist)
                self.v.store(b, buf, e, (re, im))
        b.ret_void()
        return fn

    def emit_block_lanes(self, gather: bool) -> L.Function:
        """gather(src, stride, n, buf, groups, region) / scatter(buf, dst, stride, n, groups,
        region, scale): `groups` lane groups of neighbouring transforms (idist == 1) at once, lane
        group q in the lane buffer at buf + q*region values; each row moves groups*VLEN elements
        in a row."""
        ints = [I64, I64, I64, I64]
        fnty = L.FunctionType(L.VoidType(), [PTR, PTR] + ints + ([] if gather else [self.ft]))
        fn = L.Function(self.mod, fnty, name=f"aot_fft_{'gather' if gather else 'scatter'}_vb")
        fn.linkage = "internal"
        (a, c, stride, n, groups, region, *rest) = fn.args
        b = Builder(fn.append_basic_block("entry"))
        k = None if gather else self.v.splat(b, rest[0])
        with for_range(b, 0, n, name="e") as e:
            self._prefetch_row(b, a if gather else c, b.add(e, i64(PREFETCH_ROWS)), n, stride, groups, not gather)
            with for_range(b, 0, groups, name="q") as q:
                first = b.add(b.mul(e, stride), b.mul(q, i64(self.vlen)))
                if gather:  # a = src, c = buf
                    buf = b.gep(c, [b.mul(q, region)], source_etype=self.ft)
                    self.v.store(b, buf, e, self.w.load(b, a, first))
                else:  # a = buf, c = dst
                    re, im = self.v.load(b, b.gep(a, [b.mul(q, region)], source_etype=self.ft), e)
                    self.w.store(b, c, first, (b.fmul(re, k), b.fmul(im, k)))
        b.ret_void()
        return fn

    def _prefetch_row(self, b, base, row, n, stride, groups, write: bool) -> None:
        """Prefetch the groups * VLEN elements of `row` (when row < n) at base + row*stride: the rows
        of a strided axis are pages apart, where hardware prefetchers stop."""
        line_values = 64 // (4 if isinstance(self.ft, L.FloatType) else 8)
        with b.if_then(b.icmp_signed("<", row, n)):
            start = b.gep(base, [b.shl(b.mul(row, stride), i64(1))], source_etype=self.ft)
            lines = b.sdiv(b.mul(groups, i64(2 * self.vlen)), i64(line_values))
            with for_range(b, 0, lines, name="line") as line:
                prefetch(self.mod, b, b.gep(start, [b.mul(line, i64(line_values))], source_etype=self.ft), write)

    def _lane_values(self, b, src, first, dist):
        undef = L.Constant(self.v.ty, L.Undefined)
        re, im = undef, undef
        for lane in range(self.vlen):
            x = self.s.load(b, src, b.add(first, b.mul(dist, i64(lane))))
            re = b.insert_element(re, x[0], L.Constant(I32, lane))
            im = b.insert_element(im, x[1], L.Constant(I32, lane))
        return re, im

    def emit_scatter_lanes(self) -> L.Function:
        """scatter(buf, dst, stride, dist, n, scale): the lane layout back, times scale."""
        fnty = L.FunctionType(L.VoidType(), [PTR, PTR, I64, I64, I64, self.ft])
        fn = L.Function(self.mod, fnty, name="aot_fft_scatter_v")
        fn.linkage = "internal"
        buf, dst, stride, dist, n, scale = fn.args
        b = Builder(fn.append_basic_block("entry"))
        k = self.v.splat(b, scale)
        with b.if_else(b.icmp_signed("==", dist, i64(1))) as (contiguous, strided):
            with contiguous, for_range(b, 0, n, name="e") as e:
                re, im = self.v.load(b, buf, e)
                self.w.store(b, dst, b.mul(e, stride), (b.fmul(re, k), b.fmul(im, k)))
            with strided, for_range(b, 0, n, name="e") as e:
                re, im = self.v.load(b, buf, e)
                re, im = b.fmul(re, k), b.fmul(im, k)
                first = b.mul(e, stride)
                for lane in range(self.vlen):
                    idx = L.Constant(I32, lane)
                    self.s.store(b, dst, b.add(first, b.mul(dist, i64(lane))),
                                 (b.extract_element(re, idx), b.extract_element(im, idx)))
        b.ret_void()
        return fn

    # -- the exported entry -------------------------------------------------------------------
    def emit_entry(self, precision: str) -> L.Function:
        ft, vl = self.ft, self.vlen
        mv = self.movers
        fnty = L.FunctionType(L.VoidType(), [PTR, PTR, PTR, PTR, I64, I64, I64, I64, I64, I32, ft, PTR])
        fn = L.Function(self.mod, fnty, name=entry_name(precision))
        hdr, tw, src, dst, howmany, istr, idist, ostr, odist, flags, scale, scratch = fn.args
        b = Builder(fn.append_basic_block("entry"))
        n = b.load(hdr, typ=I64)
        nf = b.load(b.gep(hdr, [i64(1)], source_etype=I64), typ=I64)
        buf0 = scratch
        lanes_ok = b.icmp_signed("!=", b.and_(flags, L.Constant(I32, FLAG_LANES)), L.Constant(I32, 0))
        lanes_used = b.and_(lanes_ok, b.icmp_signed(">=", howmany, i64(vl)))
        buf1 = b.gep(scratch, [b.mul(n, b.select(lanes_used, i64(2 * vl), i64(2)))], source_etype=ft)
        forward = b.icmp_signed("!=", b.and_(flags, L.Constant(I32, FLAG_FORWARD)), L.Constant(I32, 0))
        null = L.Constant(PTR, None)
        g_slot = b.alloca(I64, name="g")
        res_slot = b.alloca(PTR, name="res")
        b.store(i64(0), g_slot)

        def at(base, dist, g):
            return b.gep(base, [b.shl(b.mul(g, dist), i64(1))], source_etype=ft)

        if vl > 1:
            groups = b.select(lanes_ok, b.sdiv(howmany, i64(vl)), i64(0))
            blocked = b.and_(b.icmp_signed("!=", b.and_(flags, L.Constant(I32, FLAG_BLOCK)), L.Constant(I32, 0)),
                             b.and_(b.icmp_signed("==", idist, i64(1)), b.icmp_signed("<=", n, i64(LANE_BLOCK_MAX_N))))
            blocks = b.select(blocked, b.sdiv(groups, i64(LANE_BLOCK)), i64(0))
            region = b.mul(n, i64(SCRATCH_PER_LANE * vl))
            with for_range(b, 0, blocks, name="blk") as blk:
                g = b.mul(blk, i64(LANE_BLOCK * vl))
                res0 = self.run_block(b, forward, hdr, tw, at(src, idist, g), istr, buf0, buf1, region, res_slot)
                with b.if_else(b.icmp_signed("==", odist, i64(1))) as (columns, rows):
                    with columns:
                        b.call(mv["scatter_b"], [res0, at(dst, odist, g), ostr, n, i64(LANE_BLOCK), region, scale])
                    with rows:  # each transform's output is a row of its own
                        for q in range(LANE_BLOCK):
                            b.call(mv["scatter"], [b.gep(res0, [b.mul(region, i64(q))], source_etype=ft),
                                                   at(dst, odist, b.add(g, i64(q * vl))), ostr, odist, n, scale])
            with for_range(b, b.mul(blocks, i64(LANE_BLOCK)), groups, name="grp") as grp:
                g = b.mul(grp, i64(vl))
                b.call(mv["gather"], [at(src, idist, g), istr, idist, n, buf1])
                res = self.run(b, forward, True, (hdr, tw, buf1, buf0, buf1, null), res_slot)
                b.call(mv["scatter"], [res, at(dst, odist, g), ostr, odist, n, scale])
            b.store(b.mul(groups, i64(vl)), g_slot)
        with for_range(b, b.load(g_slot, typ=I64), howmany, name="one") as g:
            s_in, s_out = at(src, idist, g), at(dst, odist, g)
            direct_in = b.icmp_signed("==", istr, i64(1))
            with b.if_then(b.not_(direct_in)):
                b.call(mv["copy"], [s_in, istr, buf1, i64(1), n, L.Constant(ft, 1.0)])
            first = b.select(direct_in, s_in, buf1)
            can_final = b.and_(b.icmp_signed("==", ostr, i64(1)),
                               b.or_(b.icmp_signed(">=", nf, i64(2)), b.icmp_unsigned("!=", first, s_out)))
            res = self.run(b, forward, False, (hdr, tw, first, buf0, buf1, b.select(can_final, s_out, null)),
                           res_slot)
            in_place = b.icmp_unsigned("==", res, s_out)
            unit = b.fcmp_ordered("==", scale, L.Constant(ft, 1.0))
            with b.if_then(b.not_(b.and_(in_place, unit))):
                b.call(mv["copy"], [res, i64(1), s_out, ostr, n, scale])
        b.ret_void()
        return fn


def emit_module(precision: str, vlen: int, triple: str = "", data_layout: str = "") -> L.Module:
    """The kernel module of `precision` ("f32" or "f64") for `vlen` SIMD lanes. Give the target's
    `triple` and `data_layout` (targets.base.data_layout_of) when the module is for a target: the
    parser then gives loads and stores without an explicit alignment the target's ABI alignment."""
    if precision not in ("f32", "f64"):
        raise ValueError(f"FFT kernels: precision must be 'f32' or 'f64', got {precision!r}")
    mod = L.Module(name=f"aot_fft_{precision}")
    if triple:
        mod.triple = triple
    if data_layout:
        mod.data_layout = data_layout
    ft = L.FloatType() if precision == "f32" else L.DoubleType()
    vlen = max(2, vlen)
    em = _Emitter(mod, ft, vlen)
    c2c = em.emit_entry(precision)
    emit_four_step_passes(em, precision, c2c)
    fn = mod.get_global
    emit_four_step(mod, precision, vlen, {"columns": fn(columns_name(precision)), "c2c": c2c,
                                          "rows_t": fn(rows_name(precision)), "transpose": fn(transpose_name(precision))})
    emit_halves(mod, precision, vlen, {"c2c": c2c, "unzip": fn(unzip_name(precision)),
                                       "combine": fn(combine_name(precision))})
    em.emit_pass_entry(precision)
    emit_planner(mod, precision, ft, vlen, c2c)
    emit_r2c_post(mod, precision, ft, vlen)
    emit_c2r_pre(mod, precision, ft, vlen)
    return mod
