"""Scan kernels: numpy's sequential fold along one axis, out[0] = x[0], out[i] = op(out[i-1], x[i]).

`emit_lanes`: the parallel range is the lanes (each index of the other dims, in C order), and each
lane folds its axis in order. When the scan axis is not the innermost dim and both operands are
contiguous along the innermost one, VL adjacent lanes fold together in one vector register (a
masked group ends a row); every lane still folds in numpy's order, so the result is the same on
either path and for any thread split.

`emit_blocks`: a long axis cut into chunks, for kinds whose combine is exactly associative
(ir/scans.py): the range is (chunk t, lane) pairs, flat t * lanes + lane. Phase "total" folds each
chunk into totals[t * lanes + lane]; the caller scans the totals along t (emit_lanes); phase
"apply" folds each chunk again, starting from the scanned total of the chunks before it.

The combine is the kind's reduction record rule (kernels/reduce.py `combine`) or, for an
elementwise kind, its kernel body (ir/scans.py `combine_body`) lowered like any fused body.

Argument block: the input and output data pointers, the dims, the input strides, the output strides
(elements); blocks add the totals pointer and the chunk length; then an error slot when the
combine can raise (an integer power).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir import records
from ir.core import Block
from ir.dtypes import DType
from ir.scans import combine_body, record

from ..llvm.builder import Builder
from ..llvm.cast import convert
from ..llvm.context import LowerCtx
from ..llvm.loops import (
    alloca,
    elem_ptr,
    for_range,
    i64,
    lane_mask,
    load_scalar,
    load_vector,
    segment_loop,
    store_scalar,
    store_vector,
)
from ..llvm.types import I64, PTR
from ..targets.base import Target
from .common import ArgBlock, OperandInfo, arg_block_size, emit_body, max_element_bits, new_kernel
from .reduce import combine


@records.record(frozen=True)
class ScanSpec:
    """One scan kernel: `kind` (ir/scans.py) along `axis` of the iteration `shape` (static ints,
    size expressions, or any other object for a dim read at run time), of `src` operands converted
    on load to `dtype` (accumulator and result); `reports`: the combine can raise and the kernel
    has an error slot."""

    shape: tuple
    axis: int
    kind: str
    src: DType
    dtype: DType
    reports: bool = False

    @property
    def body(self) -> Block | None:
        return None if record(self.kind) is not None else combine_body(self.kind, self.dtype)

    def vector_len(self, target: Target) -> int:
        body = self.body
        block = body if body is not None else Block([])
        return target.vector_len(max_element_bits(block, [self.src, self.dtype]))


def combiner(spec: ScanSpec):
    """fn(ctx, acc, x) -> the combined value (scalars or vectors, by ctx.vlen)."""
    return kind_combiner(spec.kind, spec.dtype)


def kind_combiner(kind: str, dtype: DType):
    """fn(ctx, acc, x) combining with scan kind `kind` (ir/scans.py) in `dtype` (also ufunc.at's)."""
    if record(kind) is not None:
        return lambda ctx, acc, x: combine(ctx, kind, dtype, acc, x)
    body = combine_body(kind, dtype)
    return lambda ctx, acc, x: emit_body(ctx, body, [acc, x])[0]


class _Acc:
    """The running value in stack slots (two for complex), promoted to registers by mem2reg."""

    def __init__(self, entry_b: L.IRBuilder, b: L.IRBuilder, like):
        self.b, self.pair = b, isinstance(like, tuple)
        self.ptrs = [alloca(entry_b, p.type) for p in (like if self.pair else (like,))]

    def get(self):
        vals = [self.b.load(p, typ=p.slot_type) for p in self.ptrs]
        return tuple(vals) if self.pair else vals[0]

    def set(self, value) -> None:
        for p, v in zip(self.ptrs, value if self.pair else (value,), strict=True):
            self.b.store(v, p)


class _Kernel:
    """What both kernels share: the argument block, the contexts, and lane offsets."""

    def __init__(self, module: L.Module, target: Target, name: str, spec: ScanSpec, helpers: dict,
                 vlen: int = 1):
        self.spec, self.src, self.dt = spec, spec.src, spec.dtype
        r = len(spec.shape)
        self.fn, self.b = new_kernel(module, name)
        self.args, self.begin, self.end = self.fn.args
        self.entry_b = Builder(self.fn.entry_basic_block)
        self.entry_b.position_at_start(self.fn.entry_basic_block)
        infos = [OperandInfo(spec.src, (False,) * r), OperandInfo(spec.dtype, (False,) * r)]
        self.ab = ArgBlock(self.b, self.args, spec.shape, infos)
        self.n_slots = arg_block_size(2, r)
        err = self.slot_ptr(self.extra_slots) if spec.reports else None
        self.sctx = LowerCtx(module, self.b, target, 1, helpers, err)
        self.vctx = LowerCtx(module, self.b, target, vlen, helpers, err) if vlen > 1 else None
        self.step = combiner(spec)
        self.kept = [k for k in range(r) if k != spec.axis]
        self.n = self.ab.dims[spec.axis]
        self.s_in, self.s_out = self.ab.strides[0][spec.axis], self.ab.strides[1][spec.axis]

    extra_slots = 0

    def slot_ptr(self, k: int):
        return self.b.gep(self.args, [i64(self.n_slots + k)], source_etype=I64)

    def slot(self, k: int):
        return self.b.load(self.slot_ptr(k), typ=I64)

    def lane_offsets(self, lane, kept=None) -> list:
        """(input, output) element offsets of flat lane index `lane` over the kept dims (C order)."""
        b, ab = self.b, self.ab
        offs, rest = [i64(0), i64(0)], lane
        for k in reversed(self.kept if kept is None else kept):
            idx = b.srem(rest, ab.dims[k])
            rest = b.sdiv(rest, ab.dims[k])
            offs = [b.add(o, b.mul(idx, ab.strides[m][k])) for m, o in enumerate(offs)]
        return offs

    def lanes(self):
        n = i64(1)
        for k in self.kept:
            n = self.b.mul(n, self.ab.dims[k])
        return n

    def scalar_io(self):
        """(ctx, load an operand as the accumulator dtype, store a result) for one lane."""
        ctx, src, dt = self.sctx, self.src, self.dt
        return (ctx, lambda p: convert(ctx, load_scalar(ctx, src, p), src, dt),
                lambda p, v: store_scalar(ctx, dt, p, v))

    def vector_io(self, mask):
        ctx, src, dt = self.vctx, self.src, self.dt
        return (ctx, lambda p: convert(ctx, load_vector(ctx, src, p, mask), src, dt),
                lambda p, v: store_vector(ctx, dt, p, v, mask))

    def fold(self, ctx, load, store, src, dst, start, stop, acc: _Acc) -> None:
        """acc <- acc combined with src[start:stop] in order, storing each value to dst (if given)."""
        b = self.b
        with for_range(b, start, stop, name="s") as i:
            v = self.step(ctx, acc.get(), load(elem_ptr(b, self.src, src, b.mul(i, self.s_in))))
            acc.set(v)
            if dst is not None:
                store(elem_ptr(b, self.dt, dst, b.mul(i, self.s_out)), v)

    def fold_lane(self, ctx, load, store, src, dst) -> None:
        """One lane (scalar or a vector of adjacent lanes): out[0] = x[0], then the fold."""
        b = self.b
        with b.if_then(b.icmp_signed(">", self.n, i64(0))):
            first = load(src)
            store(dst, first)
            acc = _Acc(self.entry_b, b, first)
            acc.set(first)
            self.fold(ctx, load, store, src, dst, i64(1), self.n, acc)

    def one_lane(self, lane) -> None:
        b, ab = self.b, self.ab
        off_in, off_out = self.lane_offsets(lane)
        ctx, load, store = self.scalar_io()
        self.fold_lane(ctx, load, store, elem_ptr(b, self.src, ab.ptrs[0], off_in),
                       elem_ptr(b, self.dt, ab.ptrs[1], off_out))


def emit_lanes(module: L.Module, target: Target, name: str, spec: ScanSpec, helpers: dict) -> L.Function:
    """`void name(args, begin, end)`: lanes [begin, end) of the scan, each folded in order."""
    r = len(spec.shape)
    vlen = spec.vector_len(target)
    vector = spec.axis != r - 1 and vlen > 1 and not spec.dtype.is_complex and spec.shape[-1] != 1
    k = _Kernel(module, target, name, spec, helpers, vlen if vector else 1)
    if vector:
        _vector_rows(k)
    else:
        with for_range(k.b, k.begin, k.end, name="lane") as lane:
            k.one_lane(lane)
    k.b.ret_void()
    return k.fn


def _vector_rows(k: _Kernel) -> None:
    """Lanes run along the innermost dim: groups of VL adjacent lanes fold in one vector when both
    operands are contiguous there (checked at run time), else one lane at a time."""
    b, ab = k.b, k.ab
    n_vec = k.vctx.vlen
    last = ab.dims[-1]
    unit = [b.icmp_signed("==", ab.strides[m][-1], i64(1)) for m in (0, 1)]
    contig = b.and_(*unit)
    with segment_loop(b, k.begin, k.end, "row") as seg:
        i = seg.i
        j = b.srem(i, last)
        off_in, off_out = k.lane_offsets(b.sdiv(i, last), k.kept[:-1])
        off_in, off_out = b.add(off_in, j), b.add(off_out, j)
        run = b.sub(last, j)
        left = b.sub(k.end, i)
        run = b.select(b.icmp_signed("<", left, run), left, run)
        with b.if_else(contig) as (then, otherwise):
            with then:
                full = b.and_(run, i64(-n_vec))

                def group(c, mask):
                    src = elem_ptr(b, k.src, ab.ptrs[0], b.add(off_in, c))
                    dst = elem_ptr(b, k.dt, ab.ptrs[1], b.add(off_out, c))
                    k.vctx.lane_mask = mask  # (errors of masked-off lanes are not reported)
                    k.fold_lane(*k.vector_io(mask), src, dst)
                    k.vctx.lane_mask = None

                with for_range(b, 0, full, n_vec, name="g") as c:
                    group(c, None)
                with b.if_then(b.icmp_signed("<", full, run)):
                    group(full, lane_mask(k.vctx, b.sub(run, full)))
            with otherwise, for_range(b, 0, run, name="one") as m:
                k.one_lane(b.add(i, m))
        seg.step = run


class _Blocks(_Kernel):
    extra_slots = 2  # the totals pointer, the chunk length


def emit_blocks(module: L.Module, target: Target, name: str, spec: ScanSpec, phase: str,
                helpers: dict) -> L.Function:
    """`void name(args, begin, end)`: (chunk, lane) pairs [begin, end) of a blocked scan; phase
    "total" writes each chunk's fold to the totals, "apply" writes the chunk's scan from the
    scanned totals of the chunks before it."""
    k = _Blocks(module, target, name, spec, helpers)
    b, ab, dt = k.b, k.ab, k.dt
    tctx = k.sctx
    totals = b.inttoptr(k.slot(0), PTR)
    chunk = k.slot(1)
    lanes = k.lanes()
    ctx, load, store = k.scalar_io()
    with for_range(b, k.begin, k.end, name="pair") as p:
        t, lane = b.sdiv(p, lanes), b.srem(p, lanes)
        lo = b.mul(t, chunk)
        hi = b.add(lo, chunk)
        hi = b.select(b.icmp_signed("<", k.n, hi), k.n, hi)
        with b.if_then(b.icmp_signed("<", lo, hi)):
            off_in, off_out = k.lane_offsets(lane)
            src = elem_ptr(b, k.src, ab.ptrs[0], b.add(off_in, b.mul(lo, k.s_in)))
            dst = elem_ptr(b, dt, ab.ptrs[1], b.add(off_out, b.mul(lo, k.s_out)))
            first = load(src)
            acc = _Acc(k.entry_b, b, first)
            acc.set(first)
            if phase == "apply":
                with b.if_then(b.icmp_signed(">", t, i64(0))):
                    before = load_scalar(tctx, dt, elem_ptr(b, dt, totals, b.sub(p, lanes)))
                    acc.set(k.step(ctx, before, first))
                store(dst, acc.get())
            k.fold(ctx, load, store, src, dst if phase == "apply" else None, i64(1), b.sub(hi, lo), acc)
            if phase == "total":
                store(elem_ptr(b, dt, totals, p), acc.get())
    b.ret_void()
    return k.fn
