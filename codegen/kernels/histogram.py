"""np.histogram's counts in one pass: each sample's bin computed and counted at once, into per-chunk
partial histograms (aot/ops/histogram.py has the arithmetic).

`emit_histogram` is a kernel over chunks of the samples: chunk t zeroes its partial histogram
(SUB copies of the bins and a spare bin, `row` elements after chunk t-1's: int64 counts, or
float64 sums of the weights) and adds each of its samples to the copy of its position modulo SUB (so that runs of
samples in one bin do not wait on each other's store). Equal-width bins compute the bin index
of `lanes` samples at a time (the comparisons with the range, the subtraction, division,
truncation and the corrections against the edges, which are recomputed as np.linspace computes
them rather than gathered), then count lane by lane; explicit edges take a branch-free binary
search over the (static) number of edges. A dropped sample (outside the
range, NaN) adds nothing. `emit_merge` sums the partial histograms of every chunk and copy into
the result (a kernel over the bins), cast to the result's dtype.

Argument blocks:
  histogram: [x, w (0 without weights), edges, partial, first_k, last_k, first_s, denom, start,
             step, delta, stop (0-d operands: pointers; 0 for explicit edges), n, x stride,
             w stride, edges stride, chunk, row]
  merge:     [partial, out, out stride, rows (chunks * copies), row stride (bins + 1)]
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType, float64, int64
from ir.records import record

from ..llvm.builder import Builder
from ..llvm.cast import convert
from ..llvm.context import LowerCtx
from ..llvm.loops import alloca, elem_ptr, for_range, i64, load_scalar, load_vector, store_scalar
from ..llvm.types import F64, I64, PTR
from ..targets.base import Target
from .common import new_kernel

N_SLOTS = 18


@record(frozen=True)
class Dtypes:
    """The dtypes of one histogram: samples, weights (None), edges; for equal-width bins also the
    range comparison's (kd), the subtraction's (sd), the division's (fd) and linspace's."""

    x: DType
    w: DType | None
    edges: DType
    kd: DType | None = None
    sd: DType | None = None
    fd: DType | None = None
    lin: DType | None = None  # np.linspace's dtype (the edges' arithmetic)

    @property
    def uniform(self) -> bool:
        return self.kd is not None


def _ge(b: L.IRBuilder, dt: DType, x, y):
    return b.fcmp_ordered(">=", x, y) if dt.is_float else b.icmp_signed(">=", x, y)


def _le(b: L.IRBuilder, dt: DType, x, y):
    return b.fcmp_ordered("<=", x, y) if dt.is_float else b.icmp_signed("<=", x, y)


def _lt(b: L.IRBuilder, dt: DType, x, y):
    return b.fcmp_ordered("<", x, y) if dt.is_float else b.icmp_signed("<", x, y)


class _Bins:
    """Per-sample bin computations of one kernel (scalar contexts, and a vector one)."""

    def __init__(self, kb, dts: Dtypes, nb: int, bounds: dict):
        self.kb, self.dts, self.nb, self.bounds = kb, dts, nb, bounds

    def edge(self, ctx: LowerCtx, i, linear: bool = False):
        """Edge i (i64, scalar or vector): computed as np.linspace does for equal-width bins (the
        values of the edges operand; `linear`: the step is known not to be 0), loaded otherwise."""
        b, d = ctx.builder, self.dts
        if not d.uniform:
            return load_scalar(ctx, d.edges, elem_ptr(b, d.edges, self.kb.edges, b.mul(i, self.kb.es)))
        bd = {k: ctx.splat(self.bounds[k]) for k in ("start", "step", "delta", "stop")}
        fi = convert(ctx, i, int64, d.lin)
        div = ctx.const(d.lin, self.nb)
        if linear:
            y = b.fmul(fi, bd["step"])
        else:
            zero_step = b.fcmp_ordered("==", bd["step"], ctx.const(d.lin, 0.0))
            y = b.select(zero_step, b.fmul(b.fdiv(fi, div), bd["delta"]), b.fmul(fi, bd["step"]))
        y = b.select(b.icmp_signed("==", i, ctx.const(int64, self.nb)), bd["stop"], b.fadd(y, bd["start"]))
        return convert(ctx, y, d.lin, d.edges)

    def uniform_index(self, ctx: LowerCtx, v):
        """(keep, t, first index) of samples v (vectors in a vector context): numpy's truncated
        ((t - first) / denom) * nb, clamped to the last bin, before the corrections."""
        b, d = ctx.builder, self.dts
        bd = {k: ctx.splat(self.bounds[k]) for k in ("first_k", "last_k", "first_s", "denom")}
        xk = convert(ctx, v, d.x, d.kd)
        keep = b.and_(_ge(b, d.kd, xk, bd["first_k"]), _le(b, d.kd, xk, bd["last_k"]))
        t = convert(ctx, v, d.x, d.edges)
        s = convert(ctx, b.fsub(convert(ctx, t, d.edges, d.sd), bd["first_s"]), d.sd, d.fd)
        f = b.fmul(b.fdiv(s, bd["denom"]), ctx.const(d.fd, self.nb))
        # truncated where it is a number (rounding can take it a little past nb; overflowed
        # bounds make NaNs), else 0: what follows clamps the bin into [0, nb)
        sane = b.and_(b.fcmp_ordered(">=", f, ctx.const(d.fd, 0.0)), b.fcmp_ordered("<", f, ctx.const(d.fd, 2.0**62)))
        f = b.select(b.and_(keep, sane), f, ctx.const(d.fd, 0.0))
        trunc = b.fptosi(f, ctx.ty(int64))
        last, zero = ctx.const(int64, self.nb - 1), ctx.const(int64, 0)
        idx = b.select(b.icmp_signed(">", trunc, last), last, trunc)
        idx = b.select(b.icmp_signed("<", idx, zero), zero, idx)  # never below the edges (memory safety)
        self.f, self.trunc = f, trunc
        return keep, t, idx

    def margin(self, ctx: LowerCtx):
        """How far (in bins) the computed bin position f can be from a sample's true position
        between the edges: a bound on the rounding of f's steps and of linspace's edges,
        16 eps (nb + max(|start|, |stop|) nb / |denom|), eps the coarsest of the dtypes
        involved; 1 (no sample is safely inside a bin) when that is not below 1/4."""
        b, d = ctx.builder, self.dts
        eps = max(2.0 ** -(23 if dt.bits == 32 else 52) for dt in (d.fd, d.sd, d.lin, d.edges))
        big = [b.call(ctx.function(f"llvm.fabs.{'f32' if d.lin.bits == 32 else 'f64'}", ctx.ty(d.lin), [ctx.ty(d.lin)]),
                      [self.bounds[k]]) for k in ("start", "stop")]
        m = convert(ctx, b.select(b.fcmp_ordered(">", big[0], big[1]), big[0], big[1]), d.lin, d.fd)
        denom = b.call(ctx.function(f"llvm.fabs.{'f32' if d.fd.bits == 32 else 'f64'}", ctx.ty(d.fd), [ctx.ty(d.fd)]),
                       [self.bounds["denom"]])
        nbf = ctx.const(d.fd, self.nb)
        bound = b.fmul(ctx.const(d.fd, 16 * eps), b.fadd(nbf, b.fdiv(b.fmul(m, nbf), denom)))
        return b.select(b.fcmp_ordered("<", bound, ctx.const(d.fd, 0.25)), bound, ctx.const(d.fd, 1.0))

    def inside(self, ctx: LowerCtx, keep, margin):
        """Lanes whose bins need no correction: dropped ones, and those whose position f lies more
        than `margin` inside a bin (the edges then cannot disagree with it)."""
        b, d = ctx.builder, self.dts
        frac = b.fsub(self.f, convert(ctx, self.trunc, int64, d.fd))
        m = ctx.splat(margin)
        clear = b.and_(b.fcmp_ordered(">", frac, m), b.fcmp_ordered("<", frac, b.fsub(ctx.const(d.fd, 1.0), m)))
        clear = b.and_(clear, b.icmp_signed("<", self.trunc, ctx.const(int64, self.nb)))
        return b.or_(b.not_(keep), clear)

    def correct(self, ctx: LowerCtx, t, idx, linear: bool = False):
        """numpy's corrections of a first index against the edges."""
        b, bt = ctx.builder, self.dts.edges
        zero, one = ctx.const(int64, 0), ctx.const(int64, 1)
        idx = b.sub(idx, b.zext(_lt(b, bt, t, self.edge(ctx, idx, linear)), ctx.ty(int64)))
        idx = b.select(b.icmp_signed("<", idx, zero), zero, idx)
        up = b.and_(_ge(b, bt, t, self.edge(ctx, b.add(idx, one), linear)),
                    b.icmp_signed("!=", idx, ctx.const(int64, self.nb - 1)))
        return b.add(idx, b.zext(up, ctx.ty(int64)))

    def edges_index(self, ctx: LowerCtx, v):
        """(keep, index) of a sample over explicit edges: a branch-free search for the edges <= it."""
        b, cd = ctx.builder, self.dts.edges
        c = convert(ctx, v, self.dts.x, cd)
        base, length = i64(0), self.nb + 1
        while length > 1:
            half = length // 2
            probe = b.add(base, i64(half))
            base = b.select(_le(b, cd, self.edge(ctx, probe), c), probe, base)
            length -= half
        count = b.add(base, b.zext(_le(b, cd, self.edge(ctx, base), c), I64))
        last = self.edge(ctx, i64(self.nb))
        on_last = b.fcmp_ordered("==", c, last) if cd.is_float else b.icmp_signed("==", c, last)
        idx = b.select(on_last, i64(self.nb - 1), b.sub(count, i64(1)))
        keep = b.and_(b.icmp_signed(">=", idx, i64(0)), b.icmp_signed("<", idx, i64(self.nb)))
        return keep, b.select(keep, idx, i64(0))


class _Kernel:
    """The argument block's values."""

    def __init__(self, b: L.IRBuilder, args, dts: Dtypes, ctx: LowerCtx):
        def slot(i):
            return b.load(b.gep(args, [i64(i)], source_etype=I64), typ=I64)

        self.x, self.w, self.edges, self.part = (b.inttoptr(slot(i), PTR) for i in range(4))
        self.bounds = {}
        if dts.uniform:
            names = (("first_k", dts.kd), ("last_k", dts.kd), ("first_s", dts.sd), ("denom", dts.fd),
                     ("start", dts.lin), ("step", dts.lin), ("delta", dts.lin), ("stop", dts.lin))
            for k, (name, dt) in enumerate(names):
                self.bounds[name] = load_scalar(ctx, dt, b.inttoptr(slot(4 + k), PTR))
        self.n, self.xs, self.ws, self.es, self.chunk, self.row = (slot(i) for i in range(12, N_SLOTS))


def emit_histogram(module: L.Module, target: Target, name: str, dts: Dtypes, nb: int, sub: int, lanes: int,
                   helpers: dict) -> L.Function:
    """The chunk kernel (see the module docstring); `lanes`: samples per vector (1: scalar)."""
    fn, entry = new_kernel(module, name)
    args, tb, te = fn.args
    b = Builder(fn.append_basic_block("body"))
    ctx = LowerCtx(module, b, target, 1, helpers)
    kb = _Kernel(b, args, dts, ctx)
    bins = _Bins(kb, dts, nb, kb.bounds)
    acc = float64 if dts.w is not None else int64
    with for_range(b, tb, te, name="t") as t:
        row = elem_ptr(b, acc, kb.part, b.mul(t, kb.row))
        with for_range(b, i64(0), kb.row, name="zero") as k:
            store_scalar(ctx, acc, elem_ptr(b, acc, row, k), ctx.const(acc, 0))
        lo = b.mul(t, kb.chunk)
        hi = b.add(lo, kb.chunk)
        hi = b.select(b.icmp_signed("<", kb.n, hi), kb.n, hi)
        start = lo
        if dts.uniform and lanes > 1:
            start = _vector_loop(module, target, helpers, entry, b, kb, bins, dts, row, lo, hi, lanes, sub)
        with for_range(b, start, hi, name="i") as i:
            v = load_scalar(ctx, dts.x, elem_ptr(b, dts.x, kb.x, b.mul(i, kb.xs)))
            if dts.uniform:
                keep, tv, idx = bins.uniform_index(ctx, v)
                idx = bins.correct(ctx, tv, idx)
            else:
                keep, idx = bins.edges_index(ctx, v)
            _count(ctx, dts, kb, row, idx, keep, i, i64(0), nb)  # copy 0
    b.ret_void()
    entry.branch(fn.blocks[1])
    return fn


def _vector_loop(module, target, helpers, entry: L.IRBuilder, b: L.IRBuilder, kb: _Kernel, bins: _Bins,
                 dts: Dtypes, row, lo, hi, lanes: int, sub: int):
    """Whole vectors of contiguous samples (x and w strides 1) from lo; returns where it stopped."""
    vctx = LowerCtx(module, b, target, lanes, helpers)
    sctx = LowerCtx(module, b, target, 1, helpers)
    unit = b.icmp_signed("==", kb.xs, i64(1))
    if dts.w is not None:
        unit = b.and_(unit, b.icmp_signed("==", kb.ws, i64(1)))
    whole = b.sub(hi, b.srem(b.sub(hi, lo), i64(lanes)))
    linear = b.fcmp_ordered("!=", kb.bounds["step"], sctx.const(dts.lin, 0.0))  # else linspace divides
    stop = b.select(b.and_(unit, linear), whole, lo)
    nb = bins.nb
    spill = alloca(entry, L.VectorType(I64, lanes))
    margin = bins.margin(sctx)
    fixed = alloca(entry, L.VectorType(I64, lanes))
    mask_t = L.IntType(lanes)
    with for_range(b, lo, stop, lanes, name="vi") as i:
        v = load_vector(vctx, dts.x, elem_ptr(b, dts.x, kb.x, i))
        keep, tv, idx = bins.uniform_index(vctx, v)
        b.store(idx, fixed)
        clear = b.bitcast(bins.inside(vctx, keep, margin), mask_t)
        with b.if_then(b.icmp_unsigned("!=", clear, L.Constant(mask_t, -1)), likely=False):
            b.store(bins.correct(vctx, tv, idx, linear=True), fixed)  # a lane near an edge
        idx = b.load(fixed, typ=fixed.slot_type)
        if dts.w is None:  # a dropped sample counts in the spare bin nb
            idx = b.select(keep, idx, vctx.const(int64, nb))
        b.store(idx, spill)  # the lanes' bins read back as scalars: loads, not vector extracts
        for lane in range(lanes):
            k = L.Constant(L.IntType(32), lane)
            keep_l = L.Constant(L.IntType(1), 1) if dts.w is None else b.extract_element(keep, k)
            idx_l = b.load(b.gep(spill, [i64(lane)], source_etype=I64), typ=I64)
            _count(sctx, dts, kb, row, idx_l, keep_l, b.add(i, i64(lane)), i64((lane % sub) * (nb + 1)), nb)
    return stop


def _count(ctx: LowerCtx, dts: Dtypes, kb: _Kernel, row, idx, keep, i, copy, nb: int) -> None:
    """Add sample i (kept or not) to bin idx of the partial histogram's copy at offset `copy`."""
    b = ctx.builder
    slot = elem_ptr(b, float64 if dts.w is not None else int64, row, b.add(copy, idx))
    if dts.w is None:
        b.store(b.add(b.load(slot, typ=I64), b.zext(keep, I64)), slot)
        return
    w = convert(ctx, load_scalar(ctx, dts.w, elem_ptr(b, dts.w, kb.w, b.mul(i, kb.ws))), dts.w, float64)
    b.store(b.fadd(b.load(slot, typ=F64), b.select(keep, w, L.Constant(F64, 0.0))), slot)


def emit_merge(module: L.Module, target: Target, name: str, acc: DType, out: DType, helpers: dict) -> L.Function:
    """out[k] = the sum over rows r of partial[r * stride + k], cast to `out` (a kernel over bins)."""
    fn, b = new_kernel(module, name)
    args, kb_, ke = fn.args
    ctx = LowerCtx(module, b, target, 1, helpers)

    def slot(i):
        return b.load(b.gep(args, [i64(i)], source_etype=I64), typ=I64)

    part, o = b.inttoptr(slot(0), PTR), b.inttoptr(slot(1), PTR)
    os_, rows, stride = slot(2), slot(3), slot(4)
    acc_type = F64 if acc.is_float else I64
    total = alloca(b, acc_type)
    with for_range(b, kb_, ke, name="k") as k:
        b.store(ctx.const(acc, 0), total)
        with for_range(b, i64(0), rows, name="r") as r:
            v = b.load(elem_ptr(b, acc, part, b.add(b.mul(r, stride), k)), typ=acc_type)
            t = b.load(total, typ=acc_type)
            b.store(b.fadd(t, v) if acc.is_float else b.add(t, v), total)
        store_scalar(ctx, out, elem_ptr(b, out, o, b.mul(k, os_)), convert(ctx, b.load(total, typ=acc_type), acc, out))
    b.ret_void()
    return fn
