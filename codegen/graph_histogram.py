"""ENTRY_LOWERINGS rows of np.histogram's one-pass counts (aot/ops/histogram.py): histogram_uniform
and histogram_edges.

Many samples over few bins take the threaded path: each of the host's split_ways() chunks of the
samples counts into its own partial histogram, and a merge kernel sums them into the result
(deterministic for a fixed thread count; weighted sums differ from numpy's order only by
reassociation). Otherwise one chunk counts everything. Each partial histogram holds SUB copies
of the bins when there are at most SUB_MAX_BINS of them (kernels/histogram.py)."""

from __future__ import annotations

from ir import status
from ir.dtypes import float64, int64

from .graph_base import Desc, EntryCtx, entry_rule
from .kernels.histogram import N_SLOTS, Dtypes, emit_histogram, emit_merge
from .llvm.loops import i64

SUB, SUB_MAX_BINS = 4, 1024
VALUES_PER_BIN = 4  # the threaded path needs this many samples per private bin


@entry_rule("histogram_uniform", "histogram_edges")
def _histogram(ectx: EntryCtx, op, x: Desc, edges: Desc, *rest: Desc, out):
    o = out[0] if out[0] is not None else ectx.alloc(op.results[0].type)
    uniform = op.name == "histogram_uniform"
    bounds, weights = (rest[:8], rest[8:]) if uniform else ((), rest)
    w = weights[0] if weights else None
    nb = op.results[0].type.shape[0]
    steps = (bounds[0].dtype, bounds[2].dtype, bounds[3].dtype, bounds[4].dtype) if uniform else ()  # kd sd fd lin
    dts = Dtypes(x.dtype, w.dtype if w is not None else None, edges.dtype, *steps)
    sub = SUB if nb <= SUB_MAX_BINS else 1
    widest = max(d.bits for d in (x.dtype, edges.dtype, *(d.dtype for d in bounds)))
    name = ectx.kernel_name(op.name, x.dtype, nb, "bins")
    kern = emit_histogram(ectx.module, ectx.target, name, dts, nb, sub,
                          ectx.target.vector_len(widest), ectx.helpers)
    b, host = ectx.builder, ectx.host
    n = x.shape[0]
    nt = max(1, host.split_ways())
    chunks = i64(1)
    if nt > 1:
        many = b.icmp_signed(">=", n, i64(max(ectx.options.parallel_threshold, 2 * nt)))
        few_bins = b.icmp_signed("<=", i64((nb + 1) * sub * nt * VALUES_PER_BIN), n)
        chunks = b.select(b.and_(many, few_bins), i64(nt), i64(1))
    row = i64((nb + 1) * sub)  # each copy with a spare bin for the dropped samples
    nbytes, overflow = ectx._checked_product([chunks, row, i64(8)])
    mark = host.n_buffers()
    part, failed = host.alloc(nbytes, overflow)
    ectx.fail_if(failed, status.OUT_OF_MEMORY)
    zero = i64(0)
    ptrs = [d.data for d in bounds] if uniform else [zero] * 8
    chunk = b.sdiv(b.add(n, b.sub(chunks, i64(1))), chunks)
    slots = [x.data, w.data if w is not None else zero, edges.data, part, *ptrs, n, x.strides[0],
             w.strides[0] if w is not None else zero, edges.strides[0], chunk, row]
    assert len(slots) == N_SLOTS
    ectx.call_kernel(kern, slots, chunks, 1, work=n)
    acc = float64 if w is not None else int64
    merge = emit_merge(ectx.module, ectx.target, ectx.kernel_name("histogram_merge", o.dtype), acc, o.dtype,
                       ectx.helpers)
    rows = b.mul(chunks, i64(sub))
    ectx.call_kernel(merge, [part, o.data, o.strides[0], rows, i64(nb + 1)], i64(nb), 1, work=b.mul(rows, i64(nb)))
    host.free(host.buffers_since(mark))
    return [o]
