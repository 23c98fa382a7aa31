"""One long real row sorted on several threads: a parallel LSD radix sort (8-bit digits).

The row is cut into T blocks (block t: [t * n / T, (t + 1) * n / T)); each kernel runs over the
blocks, so the host threads over them. The host (graph_sorting.py) drives the passes:

    keys     keys (and indices) of block t into K0 (I0); its float counts into stats[3t:3t+3]
    per digit (8-bit, least significant first):
      hist     hist[t][b]: how many keys of block t of the source have digit b
      (host)   skip the digit when one bucket holds every key, else offs[t][b] = keys with a
               smaller digit + keys with digit b in earlier blocks
      scatter  block t moves its keys (indices) to offs[t][digit]++ in the other buffer: stable
    out      decoded keys (sort) or indices (argsort) of block t into the output
    fix      (floats, sort) one range: the signed zeros and NaNs restored from the input
              (sorting.py's `restore_floats`)

Complex rows (three key words) take the row kernel of sorting.py, on one thread.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.builder import Builder
from ..llvm.loops import for_range, i64
from ..llvm.types import I64, PTR
from .common import new_kernel
from .sort_keys import (
    Var,
    decode_key,
    gep,
    int_type,
    is_nan_bits,
    is_zero_bits,
    key_bits,
    load_bits,
    real_key,
)
from .sorting import BUCKETS, restore_floats

STATS = ("nan", "negzero", "neg")  # per-block float counts (sorting.py's names)


def _kernel(module: L.Module, name: str, nslots: int):
    """(fn, entry builder, body builder, slot values, block index) of a kernel over blocks."""
    fn, entry = new_kernel(module, name)
    args, begin, end = fn.args
    slots = [entry.load(entry.gep(args, [i64(i)], source_etype=I64), typ=I64) for i in range(nslots)]
    b = Builder(fn.append_basic_block("body"))
    return fn, entry, b, slots, (begin, end)


def _block(b: L.IRBuilder, t, n, nblocks):
    return b.sdiv(b.mul(t, n), nblocks), b.sdiv(b.mul(b.add(t, i64(1)), n), nblocks)


def _finish(fn, entry: L.IRBuilder, b: L.IRBuilder) -> L.Function:
    b.ret_void()
    entry.branch(fn.blocks[1])
    return fn


def emit_keys(module: L.Module, name: str, dt: DType, argsort: bool) -> L.Function:
    """args: [x, x stride, K0, I0, n, T, stats]."""
    fn, entry, b, s, (begin, end) = _kernel(module, name, 7)
    x, k0, i0, stats = (entry.inttoptr(s[i], PTR) for i in (0, 2, 3, 6))
    xs, n, nblocks = s[1], s[4], s[5]
    bits = key_bits(dt)
    kt = int_type(bits)
    count = dt.is_float and not argsort
    with for_range(b, begin, end, name="blk") as t:
        lo, hi = _block(b, t, n, nblocks)
        counts = [Var(entry, b, I64, i64(0)) for _ in STATS] if count else []
        with for_range(b, lo, hi, name="key") as j:
            v = load_bits(b, dt, x, b.mul(j, xs))
            b.store(real_key(b, dt, v), gep(b, kt, k0, j))
            if argsort:
                b.store(j, gep(b, I64, i0, j))
            if count:
                nan, zero = is_nan_bits(b, v, bits), is_zero_bits(b, v, bits)
                neg = b.icmp_signed("<", v, L.Constant(kt, 0))
                flags = (nan, b.and_(zero, neg), b.and_(neg, b.not_(b.or_(zero, nan))))
                for c, flag in zip(counts, flags):
                    c.set(b.add(c.get(), b.zext(flag, I64)))
        for k, c in enumerate(counts):
            b.store(c.get(), gep(b, I64, stats, b.add(b.mul(t, i64(len(STATS))), i64(k))))
    return _finish(fn, entry, b)


def emit_hist(module: L.Module, name: str, bits: int) -> L.Function:
    """args: [src keys, n, T, hist, shift]: hist[t * 256 + b] = keys of block t with digit b."""
    fn, entry, b, s, (begin, end) = _kernel(module, name, 5)
    src, hist = entry.inttoptr(s[0], PTR), entry.inttoptr(s[3], PTR)
    n, nblocks, shift = s[1], s[2], s[4]
    kt = int_type(bits)
    sh = entry.trunc(shift, kt) if bits < 64 else shift
    with for_range(b, begin, end, name="blk") as t:
        h = gep(b, I64, hist, b.mul(t, i64(BUCKETS)))
        with for_range(b, i64(0), i64(BUCKETS), name="clear") as c:
            b.store(i64(0), gep(b, I64, h, c))
        lo, hi = _block(b, t, n, nblocks)
        with for_range(b, lo, hi, name="count") as j:
            slot = gep(b, I64, h, _digit(b, b.load(gep(b, kt, src, j), typ=kt), sh, bits))
            b.store(b.add(b.load(slot, typ=I64), i64(1)), slot)
    return _finish(fn, entry, b)


def _digit(b: L.IRBuilder, key, shift, bits: int):
    d = b.and_(b.lshr(key, shift), L.Constant(key.type, BUCKETS - 1))
    return b.zext(d, I64) if bits < 64 else d


def emit_scatter(module: L.Module, name: str, bits: int, with_idx: bool) -> L.Function:
    """args: [src keys, dst keys, src idx, dst idx, n, T, offs, shift]."""
    fn, entry, b, s, (begin, end) = _kernel(module, name, 8)
    sk, dk, si, di, offs = (entry.inttoptr(s[i], PTR) for i in (0, 1, 2, 3, 6))
    n, nblocks, shift = s[4], s[5], s[7]
    kt = int_type(bits)
    sh = entry.trunc(shift, kt) if bits < 64 else shift
    with for_range(b, begin, end, name="blk") as t:
        o = gep(b, I64, offs, b.mul(t, i64(BUCKETS)))
        lo, hi = _block(b, t, n, nblocks)
        with for_range(b, lo, hi, name="scatter") as j:
            k = b.load(gep(b, kt, sk, j), typ=kt)
            slot = gep(b, I64, o, _digit(b, k, sh, bits))
            p = b.load(slot, typ=I64)
            b.store(b.add(p, i64(1)), slot)
            b.store(k, gep(b, kt, dk, p))
            if with_idx:
                b.store(b.load(gep(b, I64, si, j), typ=I64), gep(b, I64, di, p))
    return _finish(fn, entry, b)


def emit_out(module: L.Module, name: str, dt: DType, argsort: bool) -> L.Function:
    """args: [sorted keys, sorted idx, out, out stride, n, T]."""
    fn, entry, b, s, (begin, end) = _kernel(module, name, 6)
    k, idx, out = (entry.inttoptr(s[i], PTR) for i in range(3))
    os_, n, nblocks = s[3], s[4], s[5]
    kt = int_type(key_bits(dt))
    with for_range(b, begin, end, name="blk") as t:
        lo, hi = _block(b, t, n, nblocks)
        with for_range(b, lo, hi, name="out") as j:
            if argsort:
                b.store(b.load(gep(b, I64, idx, j), typ=I64), gep(b, I64, out, b.mul(j, os_)))
            else:
                b.store(decode_key(b, dt, b.load(gep(b, kt, k, j), typ=kt)), gep(b, kt, out, b.mul(j, os_)))
    return _finish(fn, entry, b)


def emit_fix(module: L.Module, name: str, dt: DType) -> L.Function:
    """args: [x, x stride, out, out stride, n, T, stats]: the float fix-up over the whole row (run
    as a range of one)."""
    fn, entry, b, s, (begin, end) = _kernel(module, name, 7)
    x, out, stats = (entry.inttoptr(s[i], PTR) for i in (0, 2, 6))
    xs, os_, n, nblocks = s[1], s[3], s[4], s[5]
    with b.if_then(b.icmp_signed("<", begin, end)):
        counts = {}
        for k, what in enumerate(STATS):
            total = Var(entry, b, I64, i64(0))
            with for_range(b, i64(0), nblocks, name=f"sum_{what}") as t:
                v = b.load(gep(b, I64, stats, b.add(b.mul(t, i64(len(STATS))), i64(k))), typ=I64)
                total.set(b.add(total.get(), v))
            counts[what] = total
        restore_floats(b, entry, dt, x, xs, out, os_, n, counts)
    return _finish(fn, entry, b)
