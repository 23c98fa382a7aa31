"""kernel.reduce -> one LLVM function; the parallel range is the flat index of the output elements.

For each output element the reduced dims run as nested loops (in their original order, so the
argmax/argmin counter is numpy's flat index). When the innermost iteration dim is reduced and
every input is contiguous (or broadcast) along it, that loop runs on vector accumulators and
finishes with one masked iteration; lanes are combined in a fixed order, so results do not depend
on the thread count. Accumulators live in stack slots that mem2reg promotes.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.core import Block
from ir.dtypes import DType, int64
from ir.records import record
from ir.reductions import REDUCTIONS

from ..llvm import complexops as C
from ..llvm.builder import Builder, const_int
from ..llvm.cast import convert
from ..llvm.context import LowerCtx, declare
from ..llvm.loops import (
    alloca,
    elem_ptr,
    for_range,
    i64,
    is_empty,
    lane_mask,
    load_scalar,
    load_vector,
    prefetch,
    segment_loop,
    splat_value,
    store_scalar,
    store_vector,
)
from ..llvm.types import I64
from ..targets.base import Target
from .common import ArgBlock, OperandInfo, emit_body, max_element_bits, new_kernel

# kinds whose lanes accumulate independently (the records' `vectorisable`)
_VECTOR_KINDS = frozenset(k for k, r in REDUCTIONS.items() if r.vectorisable)


def identity(ctx: LowerCtx, kind: str, dt: DType):
    """The accumulator's start value of `kind` (its record's `identity`) in `dt`."""
    which = REDUCTIONS[kind].identity
    low = which == "lowest"
    if dt.is_complex:
        rt = dt.real_dtype
        if which in ("lowest", "highest"):  # the ends of numpy's lexicographic order
            end = ctx.const(rt, float("-inf") if low else float("inf"))
            return (end, end)
        return (ctx.const(rt, 1.0 if which == "one" else 0.0), ctx.const(rt, 0.0))
    if which in ("zero", "one"):
        return ctx.const(dt, int(which == "one"))
    if dt.is_float:
        return ctx.const(dt, float("-inf") if low else float("inf"))
    if dt.is_bool:
        return ctx.const(dt, 0 if low else 1)
    return ctx.const(dt, -(2 ** (dt.bits - 1)) if low else 2 ** (dt.bits - 1) - 1)


def better(ctx: LowerCtx, kind: str, dt: DType, x, best):
    """i1: x replaces best (order ">": x > best or a first nan; numpy's nan-propagating order)."""
    f = ctx.builder
    strict = REDUCTIONS[kind].order
    if dt.is_complex:  # lexicographic (real, then imag); a nan in either part is a nan
        tie = f.and_(f.fcmp_ordered("==", x[0], best[0]), f.fcmp_ordered(strict, x[1], best[1]))
        cmp = f.or_(f.fcmp_ordered(strict, x[0], best[0]), tie)
        x_nan, best_nan = f.fcmp_unordered("uno", x[0], x[1]), f.fcmp_unordered("uno", best[0], best[1])
        return f.and_(f.not_(best_nan), f.or_(x_nan, cmp))
    if dt.is_float:  # x > best, or x is the first nan: x unordered-or-greater and best no nan
        return f.and_(f.fcmp_unordered(strict, x, best), f.fcmp_ordered("ord", best, best))
    if dt.is_bool:
        return f.icmp_unsigned(strict, x, best)
    return f.icmp_signed(strict, x, best)


def _keep_better(kind: str):
    def comb(ctx: LowerCtx, dt: DType, acc, x):
        take = better(ctx, kind, dt, x, acc)
        return C.select(ctx, take, x, acc) if dt.is_complex else ctx.builder.select(take, x, acc)

    return comb


def _sum(ctx: LowerCtx, dt: DType, acc, x):
    f = ctx.builder
    return C.add(ctx, acc, x) if dt.is_complex else f.fadd(acc, x) if dt.is_float else f.add(acc, x)


def _prod(ctx: LowerCtx, dt: DType, acc, x):
    f = ctx.builder
    return C.mul(ctx, acc, x) if dt.is_complex else f.fmul(acc, x) if dt.is_float else f.mul(acc, x)


# kind -> fn(ctx, dt, acc, x): the LLVM combine of each non-index record of ir.reductions (index
# kinds track their position with `better` in the kernel; tests check the table covers the records)
COMBINE = {
    "sum": _sum,
    "prod": _prod,
    "any": lambda ctx, dt, acc, x: ctx.builder.or_(acc, x),
    "all": lambda ctx, dt, acc, x: ctx.builder.and_(acc, x),
    "max": _keep_better("max"),
    "min": _keep_better("min"),
}


def combine(ctx: LowerCtx, kind: str, dt: DType, acc, x):
    return COMBINE[kind](ctx, dt, acc, x)


class _Slot:
    """An accumulator in a stack slot (complex: two slots)."""

    def __init__(self, b: L.IRBuilder, entry_b: L.IRBuilder, value):
        self.b = b
        parts = value if isinstance(value, tuple) else (value,)
        self.ptrs = [alloca(entry_b, p.type) for p in parts]
        self.is_pair = isinstance(value, tuple)

    def get(self):
        vals = [self.b.load(p, typ=p.slot_type) for p in self.ptrs]
        return tuple(vals) if self.is_pair else vals[0]

    def set(self, value) -> None:
        for p, v in zip(self.ptrs, value if self.is_pair else (value,), strict=False):
            self.b.store(v, p)


@record(frozen=True)
class ReduceSpec:
    """What one reduce kernel computes: over the iteration `shape`, `kind` (an ir.reductions
    record's name) of the scalar body `block` (one argument per input, one yielded value)
    accumulated in `acc_dtype` along `axes`, from `inputs` into `output` (the output's broadcast
    flags are True on the reduced dims). A dim may be `dynamic` (read from the argument block even
    when the graph's shape is static: split_reduce's chunks)."""

    shape: tuple
    axes: tuple
    kind: str
    acc_dtype: DType
    block: Block
    inputs: tuple[OperandInfo, ...]
    output: OperandInfo


def emit_reduce(module: L.Module, target: Target, name: str, spec: ReduceSpec, helpers: dict) -> L.Function:
    """`void name(args, begin, end)`: output elements [begin, end) of a kernel.reduce."""
    shape, axes, kind, acc_dtype, block = spec.shape, spec.axes, spec.kind, spec.acc_dtype, spec.block
    inputs, output = list(spec.inputs), spec.output
    if not shape:  # a 0-d reduction is a copy of its single element
        shape, axes = (1,), ()
        inputs = [OperandInfo(i.dtype, (True,)) for i in inputs]
        output = OperandInfo(output.dtype, (False,))
    r = len(shape)
    axes = tuple(sorted({a % r for a in axes}))
    fn, b = new_kernel(module, name, lean=True)
    entry_b = Builder(fn.entry_basic_block)
    args, begin, end = fn.args
    infos = inputs + [output]
    ab = ArgBlock(b, args, shape, infos)
    ab.mark_unread(fn)
    entry_b.position_at_start(fn.entry_basic_block)
    yield_dt = block.terminator.operands[0].type.dtype
    sctx = LowerCtx(module, b, target, 1, helpers)
    kept = [k for k in range(r) if k not in axes]

    vlen = target.vector_len(max_element_bits(block, [i.dtype for i in infos] + [acc_dtype]))

    def one_output(o):
        offs = [i64(0)] * len(infos)
        rest = o
        for k in reversed(kept):
            # (o is below the kept dims' product, so the outermost one's index is what is left: no
            # division there, none at all for a row reduction of a matrix)
            idx = rest if k == kept[0] else b.srem(rest, ab.dims[k])
            rest = b.sdiv(rest, ab.dims[k])
            offs = [b.add(off, b.mul(idx, ab.strides[n][k])) for n, off in enumerate(offs)]
        is_arg = REDUCTIONS[kind].index
        val_dt = yield_dt if is_arg else acc_dtype
        acc = _Slot(b, entry_b, identity(sctx, kind, val_dt))
        acc.set(identity(sctx, kind, val_dt))
        counter = best_idx = None
        if is_arg:
            counter, best_idx = _Slot(b, entry_b, i64(0)), _Slot(b, entry_b, i64(0))
            counter.set(i64(0))
            best_idx.set(i64(0))

        def scalar_step(offsets):
            vals = [
                load_scalar(sctx, info.dtype, elem_ptr(b, info.dtype, ab.ptrs[n], offsets[n]))
                for n, info in enumerate(inputs)
            ]
            (x,) = emit_body(sctx, block, vals)
            if is_arg:
                take = better(sctx, kind, val_dt, x, acc.get())
                acc.set(C.select(sctx, take, x, acc.get()) if val_dt.is_complex
                        else b.select(take, x, acc.get()))
                best_idx.set(b.select(take, counter.get(), best_idx.get()))
                counter.set(b.add(counter.get(), i64(1)))
            else:
                acc.set(combine(sctx, kind, acc_dtype, acc.get(), convert(sctx, x, yield_dt, acc_dtype)))

        vectorise = (
            r - 1 in axes
            and (kind in _VECTOR_KINDS or is_arg)
            and vlen > 1
            and not acc_dtype.is_complex
            and not val_dt.is_complex
            and shape[-1] != 1
        )
        _reduced_loops(
            b,
            ab,
            axes,
            offs,
            scalar_step,
            inputs,
            entry_b,
            vectorise and is_arg
            and (
                lambda row_offs, run: _vector_arg_row(
                    LowerCtx(module, b, target, vlen, helpers), block, kind, val_dt, inputs, ab, row_offs,
                    run, acc, best_idx, counter, entry_b)
            )
            or vectorise
            and (
                lambda row_offs, run: _vector_row(
                    LowerCtx(module, b, target, vlen, helpers),
                    block,
                    kind,
                    acc_dtype,
                    yield_dt,
                    inputs,
                    ab,
                    row_offs,
                    run,
                    acc,
                    entry_b,
                )
            ),
        )
        out_val = best_idx.get() if is_arg else acc.get()
        store_scalar(
            sctx,
            output.dtype,
            elem_ptr(b, output.dtype, ab.ptrs[-1], offs[-1]),
            convert(sctx, out_val, int64 if is_arg else acc_dtype, output.dtype),
        )

    if (
        axes
        and r - 1 not in axes
        and (kind in _VECTOR_KINDS or REDUCTIONS[kind].index)
        and vlen > 1
        and not acc_dtype.is_complex
        and not yield_dt.is_complex
        and shape[-1] != 1
    ):
        vctx = LowerCtx(module, b, target, vlen, helpers)
        _rows(vctx, ab, axes, kind, acc_dtype, yield_dt, block, inputs, output, begin, end, one_output)
    else:
        with for_range(b, begin, end, name="o", unroll=False) as o:
            one_output(o)
    b.ret_void()
    return fn


def _reduced_loops(b, ab, axes, offs, scalar_step, inputs, entry_b, vector_row) -> None:
    """Nested loops over the reduced dims; the innermost may take the vector path."""
    if not axes:
        scalar_step(offs)
        return
    ptr_offs = offs[: len(inputs)]

    def nest(level, cur):
        k = axes[level]
        if level == len(axes) - 1 and vector_row:
            contig = L.Constant(L.IntType(1), 1)
            for n, info in enumerate(inputs):
                if not info.bcast[k]:
                    contig = b.and_(contig, b.icmp_signed("==", ab.strides[n][k], i64(1)))
            with b.if_else(contig) as (then, otherwise):
                with then:
                    vector_row(cur, ab.dims[k])
                with otherwise:
                    _scalar_level(k, cur)
            return
        if level == len(axes) - 1:
            _scalar_level(k, cur)
            return
        with for_range(b, 0, ab.dims[k], name=f"r{k}", unroll=False) as idx:
            nest(level + 1, [b.add(o, b.mul(idx, ab.strides[n][k])) for n, o in enumerate(cur)])

    def _scalar_level(k, cur):
        with for_range(b, 0, ab.dims[k], name=f"r{k}", unroll=False) as idx:
            scalar_step([b.add(o, b.mul(idx, ab.strides[n][k])) for n, o in enumerate(cur)])

    nest(0, ptr_offs)


# A contiguous row's vector loop prefetches its inputs this far ahead: the loop of a max (two
# compares and a masked move per vector) kept too few loads in flight to stream from memory, 12
# GB/s on one thread where a sum ran at 15.5; with the prefetches both run at 17-21, on two threads
# 41-47 (a max of 128 MB had run at 24-28). 4 and 16 KB measured the same as 8.
PREFETCH_BYTES = 8192


class _RowInputs:
    """The inputs of one contiguous row: their bases, and the broadcast ones loaded once."""

    def __init__(self, ctx: LowerCtx, ab: ArgBlock, inputs, offs):
        b = ctx.builder
        self.ctx, self.inputs = ctx, inputs
        self.sctx = LowerCtx(ctx.module, b, ctx.target, 1, ctx._helpers)
        self.bases = [elem_ptr(b, info.dtype, ab.ptrs[i], offs[i]) for i, info in enumerate(inputs)]
        self.hoisted = {i: splat_value(ctx, load_scalar(self.sctx, info.dtype, self.bases[i]))
                        for i, info in enumerate(inputs) if info.bcast[-1]}

    def prefetches(self, run) -> bool:
        """Whether a row of `run` elements prefetches: not when it is static and no longer than
        the distance (a softmax's rows of 1024 float32 in L1 ran 2-6% slower with the hints).
        Measured on a Zen 5 too, in settled turns: all(x < 2.0) of 1e7 float64 1.18 ms with the
        hints, 1.69 without; max(x * y) 3.2 / 3.7 ms; sums 0-3% slower with them."""
        length = const_int(run)
        widest = max((info.dtype.itemsize for i, info in enumerate(self.inputs) if i not in self.hoisted), default=0)
        return widest > 0 and (length is None or length * widest > PREFETCH_BYTES)

    def prefetch(self, k, run) -> None:
        """Prefetch the streamed inputs PREFETCH_BYTES past element k, not past the row's last
        element (beyond an array's end a prefetch walks page tables in vain: a (64, 4096) float64
        sum in L2 on two threads ran at 61 GB/s instead of 160)."""
        b = self.ctx.builder
        last = b.sub(run, i64(1))
        for i, info in enumerate(self.inputs):
            if i in self.hoisted:
                continue
            ahead = b.add(k, i64(max(1, PREFETCH_BYTES // info.dtype.itemsize)))
            ahead = b.select(b.icmp_signed("<", ahead, last), ahead, last)
            prefetch(self.ctx.module, b, elem_ptr(b, info.dtype, self.bases[i], ahead))

    def values(self, k, mask) -> list:
        """The inputs' vectors at element k of the row (masked lanes read as zero)."""
        ctx, b = self.ctx, self.ctx.builder
        return [self.hoisted[i] if i in self.hoisted
                else load_vector(ctx, info.dtype, elem_ptr(b, info.dtype, self.bases[i], k), mask)
                for i, info in enumerate(self.inputs)]


def _vector_row(ctx: LowerCtx, block, kind, acc_dtype, yield_dt, inputs, ab, offs, run, acc, entry_b) -> None:
    b, n = ctx.builder, ctx.vlen
    row = _RowInputs(ctx, ab, inputs, offs)
    sctx = row.sctx
    ways = unroll_ways(block)
    # (a static row shorter than a group reaches only the first accumulator: the others are never made)
    ways = ways if not is_empty(i64(0), b.and_(run, i64(-n * ways))) else 1
    vaccs = [_Slot(b, entry_b, identity(ctx, kind, acc_dtype)) for _ in range(ways)]
    for v in vaccs:
        v.set(identity(ctx, kind, acc_dtype))

    def step(vacc, k, mask, hint: bool = False):
        if hint:  # PREFETCH_BYTES ahead
            row.prefetch(k, run)
        (x,) = emit_body(ctx, block, row.values(k, mask))
        x = convert(ctx, x, yield_dt, acc_dtype)
        if mask is not None:  # masked lanes contribute the identity
            x = b.select(mask, x, identity(ctx, kind, acc_dtype))
        vacc.set(combine(ctx, kind, acc_dtype, vacc.get(), x))

    def comb(x, y):
        return combine(ctx, kind, acc_dtype, x, y)

    # `ways` independent accumulators take vectors in turn (a0 gets vectors 0, W, 2W, ...), so
    # their latency chains overlap; the rest of the row goes to a0, then a masked tail. Float sums
    # do this per block of CASCADE_VECTORS vectors per accumulator and add the blocks' sums
    # pairwise (_Cascade): an error that grows with log(n), as numpy's pairwise sum, not with n
    full = b.and_(run, i64(-n))
    pairwise = kind == "sum" and acc_dtype.is_float
    group = n * ways * (CASCADE_VECTORS if pairwise else 1)
    unrolled = b.and_(run, i64(-group))
    ahead = row.prefetches(run)
    cascade = None
    if not is_empty(i64(0), unrolled):  # (a static row shorter than a group has no block, no partials)
        cascade = _Cascade(ctx, entry_b, acc_dtype) if pairwise else None
        with for_range(b, 0, unrolled, group, name="rv", unroll=False) as k0:
            for j in range(group // (n * ways)):
                k = b.add(k0, i64(j * n * ways))
                for w, vacc in enumerate(vaccs):
                    step(vacc, b.add(k, i64(w * n)), None, hint=ahead)
            if cascade:
                cascade.push(_tree(comb, [a.get() for a in vaccs]))
                for a in vaccs:
                    a.set(identity(ctx, kind, acc_dtype))
    if not is_empty(unrolled, full):
        with for_range(b, unrolled, full, n, name="rv1", unroll=False) as k:
            step(vaccs[0], k, None)
    if not is_empty(full, run):
        with b.if_then(b.icmp_signed("<", full, run)):
            step(vaccs[0], full, lane_mask(ctx, b.sub(run, full)))
    # a row that only reaches the first accumulator (static and shorter than a group) leaves the
    # others at the identity, which combining would not change: a + identity is a, bit for bit,
    # for every kind (a sum that starts at +0 never holds -0)
    v = _tree(comb, [a.get() for a in (vaccs if cascade or not is_empty(i64(0), unrolled) else vaccs[:1])])
    if cascade:
        v = cascade.total(v)
    total = lane_tree(b, v, lambda x, y: combine(sctx, kind, acc_dtype, x, y))
    acc.set(combine(sctx, kind, acc_dtype, acc.get(), total))


CASCADE_VECTORS = 4  # vectors per accumulator in one block of a float sum (f64 on AVX-512: 128 elements)


class _Cascade:
    """Pairwise addition of a row's block sums (vectors): block j (from 1) is added to the last
    ctz(j) partials on a stack, each of them the sum of a power-of-two run of blocks, so every
    element of the row sees O(log blocks) additions; at the end the rest of the row is added to
    the partials from the newest to the oldest. The order depends on the row's length only."""

    DEPTH = 64  # partials: one per bit of the block count

    def __init__(self, ctx: LowerCtx, entry_b: L.IRBuilder, dt: DType):
        self.ctx, self.b, self.entry_b = ctx, ctx.builder, entry_b
        self.vt = ctx.ty(dt)
        self.stack = alloca(entry_b, self.vt, size=self.DEPTH)
        self.count = alloca(entry_b, I64)
        self.b.store(i64(0), self.count)

    def _slot(self, k):
        return self.b.gep(self.stack, [k], source_etype=self.vt)

    def push(self, v) -> None:
        b = self.b
        j = b.add(b.load(self.count, typ=I64), i64(1))
        b.store(j, self.count)
        ctpop = declare(self.ctx.module, "llvm.ctpop.i64", I64, [I64])
        cttz = declare(self.ctx.module, "llvm.cttz.i64", I64, [I64, L.IntType(1)])
        top = b.call(ctpop, [b.sub(j, i64(1))])  # partials before this block
        merges = b.call(cttz, [j, L.Constant(L.IntType(1), 0)])
        cur = self._fold(v, top, merges)
        b.store(cur, self._slot(b.sub(top, merges)))

    def total(self, rest):
        """`rest` plus every partial, newest first (then the stack is reset for the next row)."""
        b = self.b
        top = b.call(declare(self.ctx.module, "llvm.ctpop.i64", I64, [I64]), [b.load(self.count, typ=I64)])
        total = self._fold(rest, top, top)
        b.store(i64(0), self.count)
        return total

    def _fold(self, v, top, count):
        """v added to the `count` newest of the `top` partials, newest first: older + (... + v)."""
        b = self.b
        cur = _Slot(b, self.entry_b, v)
        cur.set(v)
        with for_range(b, 0, count, name="fold", unroll=False) as m:
            older = b.load(self._slot(b.sub(b.sub(top, m), i64(1))), typ=self.vt)
            cur.set(b.fadd(older, cur.get()))
        return cur.get()


def unroll_ways(block) -> int:
    """Vector accumulators of a contiguous row: 4 for light bodies, 2 when the body is large (each
    accumulator repeats it in the loop: compile time) — a fixed function of the body, so that the
    summation order is one per kernel (docs: the order below)."""
    return 4 if len(block.ops) <= 6 else 2


def lane_tree(b: L.IRBuilder, v, comb):
    """The lanes of vector `v` combined in _tree's order, half a vector at a time: the even lanes
    with the odd ones ((l0 . l1), (l2 . l3), ...), then the same on the halves: the bits _tree
    gives on the extracted lanes, in log2(n) vector steps instead of n - 1 scalar ones."""
    n = v.type.count
    while n > 1:
        if n % 2:  # (vector widths are powers of two)
            lanes = [b.extract_element(v, L.Constant(L.IntType(32), k)) for k in range(n)]
            return _tree(comb, lanes)
        n //= 2
        even = b.shuffle_vector(v, v, L.Constant(L.VectorType(L.IntType(32), n), list(range(0, 2 * n, 2))))
        odd = b.shuffle_vector(v, v, L.Constant(L.VectorType(L.IntType(32), n), list(range(1, 2 * n, 2))))
        v = comb(even, odd)
    return b.extract_element(v, L.Constant(L.IntType(32), 0))


def _tree(comb, values: list):
    """Pairwise combination in a fixed order: ((v0 . v1) . (v2 . v3))."""
    while len(values) > 1:
        values = [comb(values[i], values[i + 1]) if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


def _vector_arg_row(ctx: LowerCtx, block, kind, yield_dt, inputs, ab, offs, run, acc, best_idx, counter,
                    entry_b) -> None:
    """argmax/argmin over one contiguous row: per lane the best value and its flat index, in
    `ways` independent (value, index) accumulators that take vectors in turn (so their compare and
    select chains overlap; a lane's first element starts it, `better` keeps the earliest of equal
    values and the first nan), then the accumulators and the lanes in index order: numpy's first
    occurrence, the first nan for floats."""
    b, n = ctx.builder, ctx.vlen
    row = _RowInputs(ctx, ab, inputs, offs)
    sctx = row.sctx
    none = i64(2**63 - 1)  # a lane that has not started yet
    ways = unroll_ways(block)
    iota = L.Constant(L.VectorType(L.IntType(64), n), list(range(n)))
    start = counter.get()
    slots = []
    for _ in range(ways):
        vbest, vidx = _Slot(b, entry_b, identity(ctx, kind, yield_dt)), _Slot(b, entry_b, ctx.splat(none))
        vbest.set(identity(ctx, kind, yield_dt))
        vidx.set(ctx.splat(none))
        slots.append((vbest, vidx))

    def step(slot, k, mask, started: bool):
        """One vector at row element k into `slot`; `started`: every lane of the slot holds an
        element already (the loop after the first group), so no lane needs the `none` test."""
        vbest, vidx = slot
        (x,) = emit_body(ctx, block, row.values(k, mask))
        idx = vidx.get()
        take = better(ctx, kind, yield_dt, x, vbest.get())
        if not started:
            take = b.or_(take, b.icmp_signed("==", idx, ctx.splat(none)))
        if mask is not None:
            take = b.and_(take, mask)
        vbest.set(b.select(take, x, vbest.get()))
        vidx.set(b.select(take, b.add(ctx.splat(b.add(start, k)), iota), idx))

    group = n * ways
    unrolled = b.and_(run, i64(-group))
    with b.if_then(b.icmp_signed(">", unrolled, i64(0))):  # the first group starts every lane
        for w, slot in enumerate(slots):
            step(slot, i64(w * n), None, False)
    with for_range(b, group, unrolled, group, name="av", unroll=False) as k0:
        for w, slot in enumerate(slots):
            step(slot, b.add(k0, i64(w * n)), None, True)
    full = b.and_(run, i64(-n))
    with for_range(b, unrolled, full, n, name="av1", unroll=False) as k:
        step(slots[0], k, None, False)
    with b.if_then(b.icmp_signed("<", full, run)):
        step(slots[0], full, lane_mask(ctx, b.sub(run, full)), False)
    vb, vi = slots[0][0].get(), slots[0][1].get()
    for xb, xs in slots[1:]:  # lane by lane, the earliest index winning ties
        vb, vi = _earlier_best(ctx, kind, yield_dt, xb.get(), xs.get(), vb, vi, ctx.splat(none))
    lane = [L.Constant(L.IntType(32), j) for j in range(n)]
    v, i = b.extract_element(vb, lane[0]), b.extract_element(vi, lane[0])
    for j in range(1, n):
        xv, xi = b.extract_element(vb, lane[j]), b.extract_element(vi, lane[j])
        v, i = _earlier_best(sctx, kind, yield_dt, xv, xi, v, i, none)
    with b.if_then(b.icmp_signed("!=", i, none)):  # the row after the rows before it: ties keep theirs
        take = better(sctx, kind, yield_dt, v, acc.get())
        acc.set(b.select(take, v, acc.get()))
        best_idx.set(b.select(take, i, best_idx.get()))
    counter.set(b.add(start, run))


def _earlier_best(ctx: LowerCtx, kind, dt: DType, xv, xi, v, i, none):
    """(value, index) of the better of (xv, xi) and (v, i), the smaller index when they are the
    same value; an index `none` has no value yet (scalars, or vectors lane by lane)."""
    b = ctx.builder
    tie = b.and_(_same(ctx, dt, xv, v), b.icmp_signed("<", xi, i))
    take = b.or_(better(ctx, kind, dt, xv, v), tie)
    take = b.and_(b.icmp_signed("!=", xi, none), b.or_(take, b.icmp_signed("==", i, none)))
    return b.select(take, xv, v), b.select(take, xi, i)


def _same(ctx: LowerCtx, dt: DType, x, y):
    """i1: x and y are equal for argmax's ties (two nans are equal)."""
    f = ctx.builder
    if dt.is_float:
        return f.or_(f.fcmp_ordered("==", x, y), f.and_(f.fcmp_unordered("uno", x, x), f.fcmp_unordered("uno", y, y)))
    return f.icmp_signed("==", x, y)


__all__ = ["ReduceSpec", "combine", "emit_reduce", "identity"]


def _rows(
    ctx: LowerCtx,
    ab: ArgBlock,
    axes,
    kind,
    acc_dtype,
    yield_dt,
    block,
    inputs,
    output,
    begin,
    end,
    one_output,
) -> None:
    """Reductions that keep the innermost dim (e.g. sum over axis 0 of a C-contiguous matrix):
    VL adjacent outputs at a time, each a vector accumulator over the reduced dims, so every load
    is a contiguous vector. Falls back to one output at a time for other layouts. Each output
    still sums its elements in index order, so both paths give identical results."""
    b, n = ctx.builder, ctx.vlen
    r = len(ab.shape)
    kept = [k for k in range(r) if k not in axes]
    last = ab.dims[-1]
    contig = b.icmp_signed("==", ab.strides[-1][-1], i64(1))
    for i, info in enumerate(inputs):
        if not info.bcast[-1]:
            contig = b.and_(contig, b.icmp_signed("==", ab.strides[i][-1], i64(1)))
    with segment_loop(b, begin, end, unroll=False) as seg:
        i = seg.i
        j = b.srem(i, last)
        rest = b.sdiv(i, last)
        offs = [b.mul(j, ab.strides[m][-1]) for m in range(len(inputs) + 1)]
        for k in reversed(kept[:-1]):
            idx = b.srem(rest, ab.dims[k])
            rest = b.sdiv(rest, ab.dims[k])
            offs = [b.add(o, b.mul(idx, ab.strides[m][k])) for m, o in enumerate(offs)]
        run = b.sub(last, j)
        left = b.sub(end, i)
        run = b.select(b.icmp_signed("<", left, run), left, run)
        sctx = LowerCtx(ctx.module, b, ctx.target, 1, ctx._helpers)
        with b.if_else(contig) as (then, otherwise):
            with then:
                # tiles of `wide` vectors of adjacent outputs: each step of the reduced dims loads
                # wide * VL contiguous elements (a strided walk down the rows otherwise touches one
                # cache line per row and page); then single vectors, then a masked one
                wide = COLUMN_TILE if len(block.ops) <= 6 else 2
                tiles = b.and_(run, i64(-n * wide))
                full = b.and_(run, i64(-n))
                with for_range(b, 0, tiles, n * wide, name="tile", unroll=False) as c:
                    _column_block(
                        ctx, sctx, ab, axes, kind, acc_dtype, yield_dt, block, inputs, output, offs, c, None,
                        wide,
                    )
                with for_range(b, tiles, full, n, name="col", unroll=False) as c:
                    _column_block(
                        ctx, sctx, ab, axes, kind, acc_dtype, yield_dt, block, inputs, output, offs, c, None
                    )
                with b.if_then(b.icmp_signed("<", full, run)):
                    mask = lane_mask(ctx, b.sub(run, full))
                    _column_block(
                        ctx, sctx, ab, axes, kind, acc_dtype, yield_dt, block, inputs, output, offs, full, mask
                    )
            with otherwise, for_range(b, 0, run, name="one", unroll=False) as k:
                one_output(b.add(i, k))
        seg.step = run


def _column_block(
    ctx, sctx, ab, axes, kind, acc_dtype, yield_dt, block, inputs, output, offs, col, mask, wide=1
) -> None:
    """Outputs [col, col + wide * VL) of one row segment: `wide` vector accumulators over the
    reduced dims (each output still in index order: the same result for any `wide`)."""
    if REDUCTIONS[kind].index:
        for w in range(wide):
            _column_arg_block(ctx, sctx, ab, axes, kind, yield_dt, block, inputs, output, offs,
                              ctx.builder.add(col, i64(w * ctx.vlen)), mask)
        return
    b, n = ctx.builder, ctx.vlen
    entry_b = _entry_builder(b)
    accs = [_Slot(b, entry_b, identity(ctx, kind, acc_dtype)) for _ in range(wide)]
    for acc in accs:
        acc.set(identity(ctx, kind, acc_dtype))

    def step(cur):
        hoisted = _broadcast_values(ctx, sctx, ab, inputs, cur)
        for w, acc in enumerate(accs):
            vals = _column_values(ctx, ab, inputs, cur, b.add(col, i64(w * n)), mask, hoisted)
            (x,) = emit_body(ctx, block, vals)
            acc.set(combine(ctx, kind, acc_dtype, acc.get(), convert(ctx, x, yield_dt, acc_dtype)))

    _over_reduced(b, ab, axes, offs[: len(inputs)], step)
    for w, acc in enumerate(accs):
        out = elem_ptr(b, output.dtype, ab.ptrs[-1], b.add(offs[-1], b.add(col, i64(w * n))))
        store_vector(ctx, output.dtype, out, convert(ctx, acc.get(), acc_dtype, output.dtype), mask)


COLUMN_TILE = 8  # vectors of adjacent outputs per tile of a reduction along a strided axis


def _column_arg_block(ctx, sctx, ab, axes, kind, yield_dt, block, inputs, output, offs, col, mask) -> None:
    """argmax/argmin of outputs [col, col + VL): per lane the best value and the flat index of the
    reduced dims where it was first seen (`better`: strict order, the first nan), as the scalar
    path keeps them."""
    b = ctx.builder
    entry_b = _entry_builder(b)
    best = _Slot(b, entry_b, identity(ctx, kind, yield_dt))
    best.set(identity(ctx, kind, yield_dt))
    where = _Slot(b, entry_b, ctx.splat(i64(0)))
    where.set(ctx.splat(i64(0)))
    counter = alloca(entry_b, I64)
    b.store(i64(0), counter)

    def step(cur):
        vals = _column_values(ctx, ab, inputs, cur, col, mask, _broadcast_values(ctx, sctx, ab, inputs, cur))
        (x,) = emit_body(ctx, block, vals)
        k = b.load(counter, typ=I64)
        take = better(ctx, kind, yield_dt, x, best.get())
        best.set(b.select(take, x, best.get()))
        where.set(b.select(take, ctx.splat(k), where.get()))
        b.store(b.add(k, i64(1)), counter)

    _over_reduced(b, ab, axes, offs[: len(inputs)], step)
    out = elem_ptr(b, output.dtype, ab.ptrs[-1], b.add(offs[-1], col))
    store_vector(ctx, output.dtype, out, convert(ctx, where.get(), int64, output.dtype), mask)


def _over_reduced(b: L.IRBuilder, ab: ArgBlock, axes, offs: list, step) -> None:
    """`step(offsets)` for every index of the reduced dims, in C order (nested loops)."""

    def nest(level, cur):
        if level == len(axes):
            step(cur)
            return
        k = axes[level]
        with for_range(b, 0, ab.dims[k], name=f"rr{k}", unroll=False) as idx:
            nest(level + 1, [b.add(o, b.mul(idx, ab.strides[m][k])) for m, o in enumerate(cur)])

    nest(0, offs)


def _entry_builder(b: L.IRBuilder) -> L.IRBuilder:
    """A builder at the start of b's function's entry block (for stack slots)."""
    entry_b = Builder(b.function.entry_basic_block)
    entry_b.position_at_start(b.function.entry_basic_block)
    return entry_b


def _broadcast_values(ctx: LowerCtx, sctx: LowerCtx, ab: ArgBlock, inputs, cur) -> dict:
    """The inputs broadcast along the outputs (the last dim), splatted: input index -> vector."""
    b = ctx.builder
    return {m: splat_value(ctx, load_scalar(sctx, info.dtype, elem_ptr(b, info.dtype, ab.ptrs[m], cur[m])))
            for m, info in enumerate(inputs) if info.bcast[-1]}


def _column_values(ctx: LowerCtx, ab: ArgBlock, inputs, cur, col, mask, hoisted: dict) -> list:
    """The inputs' vectors of outputs [col, col + VL) at the reduced-dims offsets `cur`."""
    b = ctx.builder
    vals = []
    for m, info in enumerate(inputs):
        if m in hoisted:
            vals.append(hoisted[m])
        else:
            p = elem_ptr(b, info.dtype, ab.ptrs[m], b.add(cur[m], b.mul(col, ab.strides[m][-1])))
            vals.append(load_vector(ctx, info.dtype, p, mask))
    return vals
