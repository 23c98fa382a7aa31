"""ENTRY_LOWERINGS row of `compact` (aot/ops/compaction.py): values[mask] cut or padded to `size` rows.

A two-pass blocked compaction, threaded where the length allows: the mask is cut into at most
BLOCKS_PER_THREAD * T blocks of at least MIN_BLOCK rows; with several blocks each counts its selected
rows (in parallel), the host turns the counts into offsets (an exclusive prefix sum over the
blocks), and each block writes its rows from its offset (in parallel, stopping at `size`); a mask
short enough for one block is written in one pass. Then the rows left are filled. The kernels are
in kernels/compaction.py.

A 1-D compaction reads and writes strided elements in place; values of rank > 1 are first copied
to a C-contiguous buffer (rows of `inner` contiguous elements) and the result is a contiguous
buffer of its own (the driver copies it into the entry's output when that is where it goes).
"""

from __future__ import annotations

from ir import status
from ir.records import record
from ir.types import TensorType

from .graph_base import Desc, EntryCtx, entry_rule
from .graph_ops import copy
from .kernels.compaction import emit_count, emit_fill, emit_write
from .llvm.builder import emit_if
from .llvm.loops import alloca, for_range, i64
from .llvm.types import I8, I64

MIN_BLOCK = 1 << 14  # rows per block at least: a block's count pass must outweigh its launch
BLOCKS_PER_THREAD = 4  # blocks per build-time thread at most (uneven masks balance over them)


@entry_rule("compact")
def _compact(ectx: EntryCtx, op, x: Desc, mask: Desc, fill: Desc, out):
    rt = op.results[0].type
    size = ectx.dim(op.attrs["size"])
    if x.rank <= 1:  # a 0-d x is one row (numpy's x[m] of 0-d x and m)
        o = out[0] if out[0] is not None else ectx.alloc(rt)
        zero = i64(0)
        n, x_stride, m_stride = (x.shape[0], x.strides[0], mask.strides[0]) if x.rank else (i64(1), zero, zero)
        rows = _Rows(x.data, x_stride, o.data, o.strides[0], i64(1), contiguous=False)
        run_compaction(ectx, x.dtype, rows, mask.data, m_stride, n, size, fill.data)
        return [o]
    mark = ectx.host.n_buffers()
    src = ectx.alloc(TensorType(x.dtype, x.static_shape))
    copy(ectx, x, src)
    o = ectx.alloc(rt)
    inner = ectx.numel(x.shape[1:])
    rows = _Rows(src.data, inner, o.data, inner, inner, contiguous=True)
    run_compaction(ectx, x.dtype, rows, mask.data, mask.strides[0], x.shape[0], size, fill.data)
    ectx.host.free(ectx.host.buffers_since(mark)[:1])  # the contiguous copy of the values
    return [o]


@record
class _Rows:
    """Where the rows are: source and destination data and row strides (elements), elements per
    row, and whether the destination's rows are contiguous (rows of one strided element if not)."""

    src: object
    src_stride: object
    dst: object
    dst_stride: object
    inner: object
    contiguous: bool


def run_compaction(ectx: EntryCtx, dt, rows: _Rows, mask, m_stride, n, size, fill_ptr) -> None:
    """The selected rows of `rows` (mask: its data pointer and stride) into `size` rows, then the fill."""
    b, host = ectx.builder, ectx.host
    nt = max(1, host.split_ways())
    blocks = b.sdiv(b.add(n, i64(MIN_BLOCK - 1)), i64(MIN_BLOCK))
    blocks = _clamp(b, blocks, 1, BLOCKS_PER_THREAD * nt if nt > 1 else 1)  # serial code: one pass
    blen = b.sdiv(b.add(n, b.sub(blocks, i64(1))), blocks)
    mark = host.n_buffers()
    nbytes, overflow = ectx._checked_product([blocks, i64(16)])  # offsets, then totals
    buf, failed = host.alloc(nbytes, overflow)
    ectx.fail_if(failed, status.OUT_OF_MEMORY)
    offsets = buf
    totals = b.gep(buf, [b.mul(blocks, i64(8))], source_etype=I8)
    work = b.mul(n, rows.inner)
    def several():
        count = emit_count(ectx.module, ectx.kernel_name("compact_count", "mask"))
        ectx.call_kernel(count, [mask, m_stride, n, blen, totals], blocks, 1, work=n)
        _exclusive_scan(ectx, totals, offsets, blocks)

    emit_if(b, b.icmp_signed(">", blocks, i64(1)), several, lambda: b.store(i64(0), offsets))
    write = emit_write(ectx.module, ectx.kernel_name("compact_write", dt), dt, single=not rows.contiguous)
    slots = [rows.src, rows.src_stride, mask, m_stride, n, blen, offsets, totals, rows.dst,
             rows.dst_stride, size, rows.inner]
    ectx.call_kernel(write, slots, blocks, 1, work=work)
    kept = _sum(ectx, totals, blocks)
    kept = b.select(b.icmp_signed("<", kept, size), kept, size)
    left = b.mul(b.sub(size, kept), rows.inner)
    base, step = (b.mul(kept, rows.inner), i64(1)) if rows.contiguous else (kept, rows.dst_stride)
    fill = emit_fill(ectx.module, ectx.kernel_name("compact_fill", dt), dt)
    ectx.call_kernel(fill, [rows.dst, base, step, fill_ptr], left, 1)
    host.free(host.buffers_since(mark))


def _clamp(b, v, lo: int, hi: int):
    v = b.select(b.icmp_signed("<", v, i64(lo)), i64(lo), v)
    return b.select(b.icmp_signed(">", v, i64(hi)), i64(hi), v)


def _exclusive_scan(ectx: EntryCtx, counts, offsets, blocks) -> None:
    """offsets[t] = counts[0] + ... + counts[t - 1] (on the host: a few entries per thread)."""
    b = ectx.builder
    running = alloca(ectx.alloca_builder, I64)
    b.store(i64(0), running)
    with for_range(b, i64(0), blocks, name="blk") as t:
        at = b.load(running, typ=I64)
        b.store(at, b.gep(offsets, [t], source_etype=I64))
        b.store(b.add(at, b.load(b.gep(counts, [t], source_etype=I64), typ=I64)), running)


def _sum(ectx: EntryCtx, counts, blocks):
    b = ectx.builder
    total = alloca(ectx.alloca_builder, I64)
    b.store(i64(0), total)
    with for_range(b, i64(0), blocks, name="blk") as t:
        b.store(b.add(b.load(total, typ=I64), b.load(b.gep(counts, [t], source_etype=I64), typ=I64)), total)
    return b.load(total, typ=I64)
