"""Non-temporal ("streaming") stores for elementwise kernels whose arrays do not stay in cache.

A store to a line that is not in cache reads the line first (read for ownership), so writing an
output of N bytes moves 2N over the memory bus. x86's MOVNT stores fill whole lines in the
write-combining buffers and write them without that read, but leave nothing cached: they pay only
when the arrays a kernel call touches would not stay cached anyway, and only in kernels that wait
on memory (bodies calling transcendental math, elementwise.compute_bound, keep plain stores) and
whose output nothing reads back soon (a row group's kernels, codegen/row_groups.py, keep them).

Measured on this project's 2-core VM: x[i]*2 into a second array with both kinds of store (a
hand-written loop) streams 0.77-0.84x as fast on one thread and 0.95-0.97x on two with 16-32 MB
per array (the pair stays cached between calls), 1.07x / 1.40x at 48 MB, 1.43x / 1.50x from 64 MB.
tools/bench_streaming.py, 2.5*x + y (three arrays; regular / streamed, one thread / two): 32 MB
each 1.39 / 1.12, 48 MB 1.63 / 1.44, 64 MB 1.50 / 1.56, 256 MB 1.46 / 1.39; at 16 MB (below the
threshold) both store alike. So a kernel call streams when its arrays (the outputs and the inputs
that are not broadcast) total STREAM_MIN_BYTES or more, each vector row from the first element at
which every output starts a 64-byte line (the elements before it, and the masked tail, store as
usual).

Streaming changes where values go, never what they are: the stored vectors are the same ones,
so results are bit-identical with and without it and for any thread split. The weakly ordered
stores are fenced (SFENCE) before the kernel returns, before the thread pool's release of its
completion makes the output visible to another thread.
"""

from __future__ import annotations

import math

from llvmlite import ir as L

from ir.symbols import is_static

from ..llvm.context import declare
from ..llvm.loops import i64
from ..llvm.types import I64

STREAM_MIN_BYTES = 96 << 20  # of arrays touched by one kernel call (the crossover above)
LINE = 64  # bytes: streamed stores start on a cache line
_MIN_STORE = 32  # bytes per vector store: narrower ones (a bool output of a float64 body) never stream


def stream_condition(b: L.IRBuilder, target, dims: list, shape: tuple, inputs: list, outputs: list,
                     vlen: int) -> L.Value | None:
    """An i1 that is true when the call's arrays total STREAM_MIN_BYTES or more, or None when this
    kernel never streams (target, vector width, or a static shape below the threshold)."""
    if not target.streaming_stores or vlen < 2 or not outputs:
        return None
    if any(vlen * o.dtype.itemsize < _MIN_STORE for o in outputs):
        return None
    per_element = sum(o.dtype.itemsize for o in outputs)
    per_element += sum(i.dtype.itemsize for i in inputs if not any(i.bcast))
    if all(is_static(d) for d in shape):
        if math.prod(shape) * per_element < STREAM_MIN_BYTES:
            return None
        return L.Constant(L.IntType(1), 1)
    total = i64(per_element)
    for d in dims:
        total = b.mul(total, d)
    return b.icmp_signed(">=", total, i64(STREAM_MIN_BYTES))


def aligned_start(b: L.IRBuilder, out_bases: list, outputs: list, run, vlen: int) -> tuple[L.Value, L.Value]:
    """(ok, k0): k0 is the first element of a row at which every output starts a cache line, and ok
    says the row has one with at least a whole vector after it."""
    sizes = [o.dtype.itemsize for o in outputs]
    addrs = [b.ptrtoint(p, I64) for p in out_bases]
    first = addrs[0]
    ok = b.icmp_unsigned("==", b.and_(first, i64(sizes[0] - 1)), i64(0))
    k0 = b.udiv(b.and_(b.sub(i64(0), first), i64(LINE - 1)), i64(sizes[0]))
    for a, s in zip(addrs[1:], sizes[1:]):
        at = b.add(a, b.mul(k0, i64(s)))
        ok = b.and_(ok, b.icmp_unsigned("==", b.and_(at, i64(LINE - 1)), i64(0)))
    ok = b.and_(ok, b.icmp_signed("<=", b.add(k0, i64(vlen)), run))
    return ok, k0


def store_alignments(outputs: list, vlen: int) -> list[int]:
    """Per output, the alignment its streamed vector stores have (a line, or the store's width)."""
    return [min(LINE, vlen * o.dtype.itemsize) for o in outputs]


def fence(module: L.Module, b: L.IRBuilder) -> None:
    """SFENCE: the streamed stores are globally visible before anything after it."""
    b.call(declare(module, "llvm.x86.sse.sfence", L.VoidType(), []), [])
