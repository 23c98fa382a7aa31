"""Compaction kernels: the rows of `src` that `mask` selects, in order, into the first `size` rows of
`dst`; the rows after them hold the fill value (codegen/graph_compaction.py drives the passes).

A row is `inner` contiguous elements at a row stride (a 1-D compaction: inner = 1, any stride).
The mask is cut into blocks of `blen` rows, the parallel range of the first two kernels:

- count: block t counts its selected rows into totals[t];
- write: block t copies its selected rows to dst rows offsets[t], offsets[t] + 1, ... and stops
  when it reaches `size` (or its end); it stores how many it placed into totals[t], so that a
  single block needs no count pass (offsets[0] = 0) and min(sum of totals, size) is the number of
  rows written in either case (a block stops only when the rows before it and its own fill `size`);
  rows of one element are written without a branch (an unselected one goes to a stack slot);
- fill: the elements after the written rows, flat range [0, elements left): element k is
  dst[(base + k) * step] (a strided 1-D output: base = rows written, step = its stride; rows of
  contiguous elements: base = rows written * inner, step = 1).

Argument blocks (i64 slots; strides in elements):
  count: [mask, mask stride, n, blen, totals]
  write: [src, src row stride, mask, mask stride, n, blen, offsets, totals, dst, dst row stride, size, inner]
  fill:  [dst, base, step, fill value pointer]
Elements move as their memory type (bools as i8, complex as {re, im}): nothing is converted.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.builder import Builder
from ..llvm.loops import alloca, for_range, i64
from ..llvm.types import I8, I64, PTR, memory_type
from .common import new_kernel
from .sort_keys import Var, gep


class _Kernel:
    """A kernel's function, its entry block (stack slots) and body builder, and its slots."""

    def __init__(self, module: L.Module, name: str):
        self.fn, self.entry = new_kernel(module, name)
        self.args, self.begin, self.end = self.fn.args
        self.b = Builder(self.fn.append_basic_block("body"))

    def slot(self, i: int):
        return self.b.load(self.b.gep(self.args, [i64(i)], source_etype=I64), typ=I64)

    def ptr(self, i: int):
        return self.b.inttoptr(self.slot(i), PTR)

    def var(self, init, name: str) -> Var:
        return Var(self.entry, self.b, I64, init, name)

    def block_bounds(self, t, blen, n):
        """[t * blen, min((t + 1) * blen, n)): block t's rows."""
        b = self.b
        lo = b.mul(t, blen)
        hi = b.add(lo, blen)
        return lo, b.select(b.icmp_signed("<", n, hi), n, hi)

    def selected(self, mask, stride, i):
        b = self.b
        return b.icmp_unsigned("!=", b.load(gep(b, I8, mask, b.mul(i, stride)), typ=I8), L.Constant(I8, 0))

    def done(self) -> L.Function:
        self.b.ret_void()
        self.entry.branch(self.fn.blocks[1])
        return self.fn


def emit_count(module: L.Module, name: str) -> L.Function:
    k = _Kernel(module, name)
    b = k.b
    mask, m_str, n, blen, totals = k.ptr(0), k.slot(1), k.slot(2), k.slot(3), k.ptr(4)
    count = k.var(i64(0), "count")
    with for_range(b, k.begin, k.end, name="blk") as t:
        lo, hi = k.block_bounds(t, blen, n)
        count.set(i64(0))
        with for_range(b, lo, hi, name="i") as i:
            count.set(b.add(count.get(), b.zext(k.selected(mask, m_str, i), I64)))
        b.store(count.get(), gep(b, I64, totals, t))
    return k.done()


def emit_write(module: L.Module, name: str, dt: DType, single: bool) -> L.Function:
    """single: rows of one element (a 1-D compaction), whatever `inner` the block holds."""
    k = _Kernel(module, name)
    b, fn, mt = k.b, k.fn, memory_type(dt)
    src, s_row, mask, m_str, n, blen = k.ptr(0), k.slot(1), k.ptr(2), k.slot(3), k.slot(4), k.slot(5)
    offsets, totals, dst, d_row, size = k.ptr(6), k.ptr(7), k.ptr(8), k.slot(9), k.slot(10)
    inner = i64(1) if single else k.slot(11)
    i, placed = k.var(None, "i"), k.var(None, "placed")
    sink = alloca(k.entry, mt, name="sink")
    with for_range(b, k.begin, k.end, name="blk") as t:
        lo, hi = k.block_bounds(t, blen, n)
        at = b.load(gep(b, I64, offsets, t), typ=I64)
        i.set(lo)
        placed.set(i64(0))
        head, body, done = (fn.append_basic_block(f"w.{s}") for s in ("head", "body", "done"))
        b.branch(head)
        b.position_at_end(head)  # rows left in the block, and room left in dst
        more = b.and_(b.icmp_signed("<", i.get(), hi), b.icmp_signed("<", b.add(at, placed.get()), size))
        b.cbranch(more, body, done)
        b.position_at_end(body)
        row = i.get()
        picked = k.selected(mask, m_str, row)
        s0, d0 = b.mul(row, s_row), b.mul(b.add(at, placed.get()), d_row)
        if single:  # branch-free: an unselected element goes to a stack slot
            b.store(b.load(gep(b, mt, src, s0), typ=mt), b.select(picked, gep(b, mt, dst, d0), sink))
        else:
            with b.if_then(picked), for_range(b, i64(0), inner, name="e") as e:
                b.store(b.load(gep(b, mt, src, b.add(s0, e)), typ=mt), gep(b, mt, dst, b.add(d0, e)))
        placed.set(b.add(placed.get(), b.zext(picked, I64)))
        i.set(b.add(row, i64(1)))
        b.branch(head)
        b.position_at_end(done)
        b.store(placed.get(), gep(b, I64, totals, t))
    return k.done()


def emit_fill(module: L.Module, name: str, dt: DType) -> L.Function:
    k = _Kernel(module, name)
    b, mt = k.b, memory_type(dt)
    dst, base, step, fill = k.ptr(0), k.slot(1), k.slot(2), k.ptr(3)
    value = b.load(fill, typ=mt)
    with for_range(b, k.begin, k.end, name="f") as e:
        b.store(value, gep(b, mt, dst, b.mul(b.add(base, e), step)))
    return k.done()
