"""kernel.elementwise -> one LLVM function over a strided iteration space.

The flat range [begin, end) is walked row by row (a row is a run along the innermost dim): the
outer index is decomposed once per plane (the rows along dim -2; the next rows of a plane are a
pointer step away, which matters for short rows: broadcast products such as g[:, :, None] * x[:, None]
spend as much on the decomposition as on the stores), then each row runs either vectorised (every
operand has innermost stride 1, or 0 when it broadcasts statically) or scalar with arbitrary strides. The
vector path finishes a row with one masked iteration instead of a scalar tail, so every element
of a contiguous row takes the same (vector) code path whatever the thread split: threaded and
serial results are bit-identical.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.opdef import COST_TRANSCENDENTAL
from ir.passes.fuse_plan import recompute_cost

from ..llvm.context import LowerCtx
from ..llvm.loops import (
    elem_ptr,
    for_range,
    i64,
    lane_mask,
    load_scalar,
    load_vector,
    segment_loop,
    splat_value,
    store_scalar,
    store_vector,
)
from ..llvm.types import I64
from ..targets.base import Target
from .common import (
    ArgBlock,
    OperandInfo,
    arg_block_size,
    emit_body,
    max_element_bits,
    new_kernel,
    reports_errors,
)
from .streaming import aligned_start, fence, store_alignments, stream_condition


def emit_elementwise(
    module: L.Module,
    target: Target,
    name: str,
    shape: tuple,
    block,
    inputs: list[OperandInfo],
    outputs: list[OperandInfo],
    helpers: dict,
    whole: bool = False,
    streaming: bool = True,
) -> L.Function:
    """Emit `void name(args, begin, end)` for a kernel.elementwise body `block`. `whole`: the kernel
    is only ever called over its whole range (Host.one_call), and is built for it: whole rows,
    their count and length constants where the shape is static. `streaming`: calls over large
    arrays may store with non-temporal hints (streaming.py)."""
    shape = tuple(shape) or (1,)
    if len(inputs[0].bcast if inputs else outputs[0].bcast) != len(shape):  # rank-0 kernels
        inputs = [OperandInfo(i.dtype, (True,)) for i in inputs]
        outputs = [OperandInfo(o.dtype, (False,)) for o in outputs]
    fn, b = new_kernel(module, name, lean=True)
    args, begin, end = fn.args
    infos = inputs + outputs
    ab = ArgBlock(b, args, shape, infos)
    ab.mark_unread(fn)
    vlen = target.vector_len(max_element_bits(block, [i.dtype for i in infos]))
    err = None
    if reports_errors(block):
        err = b.gep(args, [i64(arg_block_size(len(infos), len(shape)))], source_etype=I64)
    sctx = LowerCtx(module, b, target, 1, helpers, err)
    vctx = LowerCtx(module, b, target, vlen, helpers, err) if vlen > 1 and shape[-1] != 1 else None
    r = len(shape)
    last = ab.dims[-1]
    stream = None
    if streaming and vctx is not None and not compute_bound(block):  # (memory is not what it waits on)
        stream = stream_condition(b, target, ab.dims, shape, inputs, outputs, vlen)

    def finish():
        if stream is not None:
            with b.if_then(stream):
                fence(module, b)
        b.ret_void()

    contig = None
    if vctx is not None:
        contig = L.Constant(L.IntType(1), 1)
        for i, info in enumerate(infos):
            if not info.bcast[-1]:
                contig = b.and_(contig, b.icmp_signed("==", ab.strides[i][-1], i64(1)))

    if whole and r == 1:
        begin, end = i64(0), last
    if r == 1:  # one row: the range itself (a contiguous kernel, its dims coalesced)
        bases = [elem_ptr(b, info.dtype, ab.ptrs[n], b.mul(begin, ab.strides[n][0])) for n, info in enumerate(infos)]
        _row(b, sctx, vctx, contig, block, inputs, outputs, bases, b.sub(end, begin), ab, stream)
        finish()
        return fn

    def row(offs, q, jq, run):  # the row q rows on in this plane, from index jq along the innermost dim
        offs_q = [b.add(o, b.mul(q, ab.strides[n][r - 2])) for n, o in enumerate(offs)]
        offs_q = [b.add(o, b.mul(jq, ab.strides[n][-1])) for n, o in enumerate(offs_q)]
        bases = [elem_ptr(b, info.dtype, ab.ptrs[n], offs_q[n]) for n, info in enumerate(infos)]
        _row(b, sctx, vctx, contig, block, inputs, outputs, bases, run, ab, stream)

    if whole:  # plane by plane, row by row
        planes = i64(1)
        for d in ab.dims[:-2]:
            planes = b.mul(planes, d)
        with for_range(b, 0, planes, name="plane", unroll=False) as p:
            offs, _ = _offsets(b, ab, p, r - 3, len(infos))
            with for_range(b, 0, ab.dims[r - 2], name="q", unroll=False) as q:
                row(offs, q, i64(0), last)
        finish()
        return fn

    # the rows of one plane (dim -2) per iteration
    with segment_loop(b, begin, end, "row", unroll=False) as seg:
        i = seg.i
        j = b.srem(i, last)
        offs, plane = _offsets(b, ab, b.sdiv(i, last), r - 2, len(infos))
        run0 = b.sub(last, j)
        left = b.sub(end, i)
        run0 = b.select(b.icmp_signed("<", left, run0), left, run0)
        # the next whole rows of this plane inside the range: pointer steps, no index decomposition
        extra = b.sdiv(b.sub(left, run0), last)
        room = b.sub(b.sub(ab.dims[r - 2], i64(1)), plane)
        extra = b.select(b.icmp_signed("<", room, extra), room, extra)
        if vctx is not None and isinstance(shape[-1], int):
            # whole rows of a static length: a constant trip count (LLVM unrolls short rows; their
            # masked tail is gone)
            row(offs, i64(0), j, run0)
            with for_range(b, 1, b.add(extra, i64(1)), name="q", unroll=False) as q:
                row(offs, q, i64(0), i64(shape[-1]))
        else:
            with for_range(b, 0, b.add(extra, i64(1)), name="q", unroll=False) as q:
                first = b.icmp_signed("==", q, i64(0))
                row(offs, q, b.select(first, j, i64(0)), b.select(first, run0, last))
        seg.step = b.add(run0, b.mul(extra, last))
    finish()
    return fn


def _offsets(b, ab, rows, top: int, n: int) -> tuple[list, L.Value]:
    """Each operand's element offset of row `rows` (a flat index over dims 0..top), and the index
    along dim `top`."""
    offs = [i64(0)] * n
    inner = rows
    rest = rows
    for k in range(top, -1, -1):
        idx = b.srem(rest, ab.dims[k]) if k > 0 else rest
        rest = b.sdiv(rest, ab.dims[k]) if k > 0 else None
        inner = idx if k == top else inner
        offs = [b.add(o, b.mul(idx, ab.strides[m][k])) for m, o in enumerate(offs)]
    return offs, inner


def _row(b, sctx, vctx, contig, block, inputs, outputs, bases, run, ab, stream=None) -> None:
    """One row of `run` elements from `bases`: vectorised when every innermost stride is 1 (or a
    static broadcast), else scalar with the strides; `stream` (an i1, or None) lets the vector row
    store with non-temporal hints (streaming.py)."""
    def scalar_row():
        with for_range(b, 0, run, name="k", unroll=False) as k:
            vals = [
                load_scalar(sctx, info.dtype, elem_ptr(b, info.dtype, bases[n], b.mul(k, ab.strides[n][-1])))
                for n, info in enumerate(inputs)
            ]
            res = emit_body(sctx, block, vals)
            for m, info in enumerate(outputs):
                n = len(inputs) + m
                store_scalar(
                    sctx, info.dtype, elem_ptr(b, info.dtype, bases[n], b.mul(k, ab.strides[n][-1])), res[m]
                )

    if vctx is None:
        scalar_row()
        return
    with b.if_else(contig) as (then, otherwise):
        with then:
            _vector_row(vctx, block, inputs, outputs, bases, run, stream)
        with otherwise:
            scalar_row()


def compute_bound(block) -> bool:
    """Whether a body calls transcendental math (sin, exp, ...: a libmvec call or a long polynomial
    per vector): LLVM's unrolling of its vector loop lets two iterations' chains overlap, 1.3-1.5x on
    tools/bench_elementwise.py's sin/exp chain. Cheaper bodies are memory-bound and keep their
    loop rolled (rolled_md)."""
    return any(recompute_cost(op) >= COST_TRANSCENDENTAL for op in block.ops)


def _vector_row(ctx: LowerCtx, block, inputs, outputs, bases, run, stream=None) -> None:
    b, n = ctx.builder, ctx.vlen
    # broadcast operands: one scalar load per row, splatted
    hoisted = {}
    for idx, info in enumerate(inputs):
        if info.bcast[-1]:
            s = load_scalar(LowerCtx(ctx.module, b, ctx.target, 1, ctx._helpers), info.dtype, bases[idx])
            hoisted[idx] = splat_value(ctx, s)

    def one(k, mask, streamed=None, aligns=()):
        """The vector at element k (masked lanes only where `mask`); `streamed` (an i1): its
        stores are non-temporal when it holds, to addresses aligned to `aligns` (per output)."""
        vals = [
            hoisted[idx]
            if idx in hoisted
            else load_vector(ctx, info.dtype, elem_ptr(b, info.dtype, bases[idx], k), mask)
            for idx, info in enumerate(inputs)
        ]
        ctx.lane_mask = mask
        res = emit_body(ctx, block, vals)
        ctx.lane_mask = None
        ptrs = [elem_ptr(b, info.dtype, bases[len(inputs) + m], k) for m, info in enumerate(outputs)]
        if streamed is None:
            for m, info in enumerate(outputs):
                store_vector(ctx, info.dtype, ptrs[m], res[m], mask)
            return
        with b.if_else(streamed) as (then, otherwise):  # (the body once: the store is all that differs)
            with then:
                for m, info in enumerate(outputs):
                    store_vector(ctx, info.dtype, ptrs[m], res[m], stream=aligns[m])
            with otherwise:
                for m, info in enumerate(outputs):
                    store_vector(ctx, info.dtype, ptrs[m], res[m])

    if stream is None:
        last = b.and_(run, i64(-n))
        with for_range(b, 0, last, n, name="v", unroll=compute_bound(block)) as k:
            one(k, None)
        with b.if_then(b.icmp_signed("<", last, run)):
            one(last, lane_mask(ctx, b.sub(run, last)))
        return
    # streamed: masked vectors up to the outputs' first line (at most two: streaming.py), whole
    # vectors streamed from there, the masked tail; the head and the tail share one masked body
    ok, k0 = aligned_start(b, bases[len(inputs):], outputs, run, n)
    streamed, aligns = b.and_(stream, ok), store_alignments(outputs, n)
    start = b.select(streamed, k0, i64(0))
    last = b.add(start, b.and_(b.sub(run, start), i64(-n)))
    with for_range(b, start, last, n, name="v", unroll=compute_bound(block)) as k:
        one(k, None, streamed, aligns)
    with for_range(b, 0, 2, name="edge", unroll=False) as t:
        head = b.icmp_signed("==", t, i64(0))
        lo, hi = b.select(head, i64(0), last), b.select(head, start, run)
        with for_range(b, lo, hi, n, name="vm", unroll=False) as k:
            one(k, lane_mask(ctx, b.sub(hi, k)))
