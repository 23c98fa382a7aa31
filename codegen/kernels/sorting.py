"""sort / argsort kernels: stable LSD radix sorts of order-preserving keys (sort_keys.py).

One row (a 1-D lane along the sorted axis) is sorted by `sort_one`: a pass turns the elements into
keys (and their indices 0..n-1 when indices are wanted), the keys are sorted, and a pass writes the
result: the decoded keys (sort) or the carried indices (argsort). Key sorting (`key_sort`) is an
LSD radix sort with 8-bit digits: one pass counts every digit's histogram, then each digit whose
keys do not all fall in one bucket is a stable scatter between two buffers. Short rows, where the
256 counters of a radix pass cost more than the keys, sort by insertion (up to SMALL elements) or
by ranks counted with SIMD compares (up to RANK_MAX), both stable. Complex rows sort their
indices by the three key words in turn, least significant first (each sort is stable), then
gather the elements. A sort of floats restores what the keys merge: the signed zeros of a row
with a -0.0 and the NaNs' bits are rewritten from the input, in input order (a stable sort keeps
equal elements in that order).

The kernel `sort_rows` runs over a range of scratch slots: slot p sorts rows
[p * rows / P, (p + 1) * rows / P) one after the other in its own part of the scratch buffer the
host allocated (P parts of `slot_bytes`), so the host threads over slots (independent rows run in
parallel) and the scratch stays P rows' worth.

Argument block: [x, out, scratch, rows, P, n, slot_bytes, x axis stride, out axis stride,
the other dims (rank - 1), x's strides along them, out's strides along them].
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.loops import alloca, for_range, i64
from ..llvm.types import I1, I64, PTR, VOID
from .common import new_kernel
from .sort_keys import (
    Var,
    decode_key,
    element_keys,
    gep,
    int_type,
    is_nan_bits,
    is_zero_bits,
    key_bits,
    load_bits,
    memset0,
    new_function,
    real_key,
    seal,
)

SMALL = 16  # rows up to this length sort by insertion
RANK_MAX = 128  # rows up to this length sort by ranks (a radix pass costs 256 counters)
assert RANK_MAX < 256, "rank counts of bool keys are summed in i8 lanes"
VECTOR_BITS = 512  # the rank counts' vectors (narrower targets split them)
DIGIT = 8
BUCKETS = 1 << DIGIT
FIXED_SLOTS = 9


# --- scratch layout -----------------------------------------------------------------------------------
def segments(dt: DType, want_indices: bool) -> list[int]:
    """Bytes per element of each scratch segment of a row: key buffers K0, K1, then index buffers
    I0, I1 when indices are carried, then the two upper key words of complex rows."""
    kb = key_bits(dt) // 8
    segs = [kb, kb]
    if want_indices or dt.is_complex:
        segs += [8, 8]
    if dt.is_complex:
        segs += [8, 8]
    return segs


def carries_indices(dt: DType, argsort: bool) -> bool:
    return argsort or dt.is_complex


def n_bytes(b: L.IRBuilder, n, per: int):
    """n * per bytes rounded up to whole cache lines."""
    return b.and_(b.add(b.mul(n, i64(per)), i64(63)), i64(-64))


def slot_layout(b: L.IRBuilder, n, dt: DType, argsort: bool) -> tuple[list, L.Value]:
    """(segment byte offsets, total bytes) of one slot for rows of n elements; each segment starts
    on a cache line."""
    offs, total = [], i64(0)
    for per in segments(dt, carries_indices(dt, argsort)):
        offs.append(total)
        total = b.add(total, n_bytes(b, n, per))
    return offs, total


# --- the key sort -------------------------------------------------------------------------------------
def _insertion(b: L.IRBuilder, fn: L.Function, kt: L.Type, keys, idx, n) -> None:
    """Stable insertion sort of keys[0:n] (unsigned), moving idx along when it is not None."""
    with for_range(b, i64(1), n, name="ins") as j:
        k = b.load(gep(b, kt, keys, j), typ=kt)
        i = b.load(gep(b, I64, idx, j), typ=I64) if idx is not None else None
        pre = b.block
        head = fn.append_basic_block("ins.head")
        test = fn.append_basic_block("ins.test")
        move = fn.append_basic_block("ins.move")
        done = fn.append_basic_block("ins.done")
        b.branch(head)
        b.position_at_end(head)
        m = b.phi(I64, name="m")
        m.add_incoming(j, pre)
        b.cbranch(b.icmp_signed(">", m, i64(0)), test, done)
        b.position_at_end(test)
        m1 = b.sub(m, i64(1))
        prev = b.load(gep(b, kt, keys, m1), typ=kt)
        b.cbranch(b.icmp_unsigned(">", prev, k), move, done)
        b.position_at_end(move)
        b.store(prev, gep(b, kt, keys, m))
        if idx is not None:
            b.store(b.load(gep(b, I64, idx, m1), typ=I64), gep(b, I64, idx, m))
        m.add_incoming(m1, move)
        b.branch(head)
        b.position_at_end(done)
        at = b.phi(I64, name="at")
        at.add_incoming(m, head)
        at.add_incoming(m, test)
        b.store(k, gep(b, kt, keys, at))
        if idx is not None:
            b.store(i, gep(b, I64, idx, at))


def _count(b: L.IRBuilder, entry: L.IRBuilder, kt: L.Type, keys, lo, hi, key, cmp: str):
    """How many of keys[lo:hi] compare `cmp` (unsigned) to key: SIMD vectors, then a scalar tail."""
    lanes = VECTOR_BITS // kt.width
    vt = L.VectorType(kt, lanes)
    undef = L.Constant(vt, L.Undefined)
    splat = b.insert_element(undef, key, L.Constant(L.IntType(32), 0))
    splat = b.shuffle_vector(splat, undef, L.Constant(L.VectorType(L.IntType(32), lanes), [0] * lanes))
    acc = Var(entry, b, vt, L.Constant(vt, [0] * lanes))
    full = b.sub(hi, b.srem(b.sub(hi, lo), i64(lanes)))
    with for_range(b, i64(0), b.sdiv(b.sub(full, lo), i64(lanes)), name="vcmp") as v:
        chunk = b.load(gep(b, kt, keys, b.add(lo, b.mul(v, i64(lanes)))), typ=vt, align=1)
        acc.set(b.sub(acc.get(), b.sext(b.icmp_unsigned(cmp, chunk, splat), vt)))
    vsum = _reduce_add(b, acc.get())
    total = Var(entry, b, I64, b.zext(vsum, I64) if kt.width < 64 else vsum)
    with for_range(b, full, hi, name="cmp") as j:
        kj = b.load(gep(b, kt, keys, j), typ=kt)
        total.set(b.add(total.get(), b.zext(b.icmp_unsigned(cmp, kj, key), I64)))
    return total.get()


def _reduce_add(b: L.IRBuilder, v):
    t = v.type
    name = f"llvm.vector.reduce.add.v{t.count}i{t.element.width}"
    fn = b.module.globals.get(name) or L.Function(b.module, L.FunctionType(t.element, [t]), name=name)
    return b.call(fn, [v])


def _rank_sort(b: L.IRBuilder, entry: L.IRBuilder, kt: L.Type, k0, k1, i0, i1, n) -> None:
    """Stable sort of k0[0:n] (i0 along, when not None) into k1 (i1) by ranks: key i goes to the
    number of keys before it that are <= it plus the keys after it that are < it. n**2 compares
    in SIMD counts, branch-free: fast for short rows."""
    with for_range(b, i64(0), n, name="rank") as i:
        ki = b.load(gep(b, kt, k0, i), typ=kt)
        r = b.add(_count(b, entry, kt, k0, i64(0), i, ki, "<="), _count(b, entry, kt, k0, i, n, ki, "<"))
        b.store(ki, gep(b, kt, k1, r))
        if i0 is not None:
            b.store(b.load(gep(b, I64, i0, i), typ=I64), gep(b, I64, i1, r))


def key_sort(module: L.Module, bits: int, with_idx: bool) -> L.Function:
    """`i1 key_sort(ptr k0, ptr k1, ptr i0, ptr i1, i64 n)`: sorts the unsigned keys k0[0:n] (and the
    indices i0 along) stably; returns whether the result ended in k1/i1 (else k0/i0). Rows of up
    to SMALL keys sort by insertion, up to RANK_MAX by ranks, longer ones by LSD radix."""
    name = f"aot.sort.keys_u{bits}{'_idx' if with_idx else ''}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    kt = int_type(bits)
    digits = bits // DIGIT
    fn, entry, b = new_function(module, name, I1, [PTR, PTR, PTR, PTR, I64])
    k0, k1, i0, i1 = fn.args[:4]
    n = fn.args[4]
    hist = alloca(entry, L.ArrayType(I64, digits * BUCKETS), name="hist")
    small, medium, ranked, big = (fn.append_basic_block(w) for w in ("small", "medium", "ranked", "big"))
    b.cbranch(b.icmp_signed("<=", n, i64(SMALL)), small, medium)
    b.position_at_end(small)
    _insertion(b, fn, kt, k0, i0 if with_idx else None, n)
    b.ret(L.Constant(I1, 0))
    b.position_at_end(medium)
    b.cbranch(b.icmp_signed("<=", n, i64(RANK_MAX)), ranked, big)
    b.position_at_end(ranked)
    _rank_sort(b, entry, kt, k0, k1, i0 if with_idx else None, i1, n)
    b.ret(L.Constant(I1, 1))
    b.position_at_end(big)
    flipped = Var(entry, b, I1, L.Constant(I1, 0))
    memset0(module, b, hist, i64(digits * BUCKETS * 8))
    mask = L.Constant(kt, BUCKETS - 1)
    with for_range(b, i64(0), n, name="hist") as j:
        k = b.load(gep(b, kt, k0, j), typ=kt)
        for d in range(digits):
            bucket = b.and_(b.lshr(k, L.Constant(kt, DIGIT * d)) if d else k, mask)
            slot = gep(b, I64, hist, b.add(i64(d * BUCKETS), b.zext(bucket, I64) if bits < 64 else bucket))
            b.store(b.add(b.load(slot, typ=I64), i64(1)), slot)
    src_k, dst_k = Var(entry, b, PTR, k0), Var(entry, b, PTR, k1)
    src_i, dst_i = Var(entry, b, PTR, i0), Var(entry, b, PTR, i1)
    with for_range(b, i64(0), i64(digits), name="digit") as d:
        shift = b.trunc(b.mul(d, i64(DIGIT)), kt) if bits < 64 else b.mul(d, i64(DIGIT))
        h = gep(b, I64, hist, b.mul(d, i64(BUCKETS)))

        def bucket_of(key):
            bk = b.and_(b.lshr(key, shift), mask)
            return b.zext(bk, I64) if bits < 64 else bk

        sk = src_k.get()
        first = b.load(gep(b, I64, h, bucket_of(b.load(sk, typ=kt))), typ=I64)
        with b.if_then(b.icmp_signed("!=", first, n)):  # else every key has this digit: skip it
            total = Var(entry, b, I64, i64(0))
            with for_range(b, i64(0), i64(BUCKETS), name="scan") as t:
                slot = gep(b, I64, h, t)
                c = b.load(slot, typ=I64)
                b.store(total.get(), slot)
                total.set(b.add(total.get(), c))
            sk, dk, si, di = src_k.get(), dst_k.get(), src_i.get(), dst_i.get()
            with for_range(b, i64(0), n, name="scatter") as j:
                k = b.load(gep(b, kt, sk, j), typ=kt)
                slot = gep(b, I64, h, bucket_of(k))
                p = b.load(slot, typ=I64)
                b.store(b.add(p, i64(1)), slot)
                b.store(k, gep(b, kt, dk, p))
                if with_idx:
                    b.store(b.load(gep(b, I64, si, j), typ=I64), gep(b, I64, di, p))
            src_k.set(dk), dst_k.set(sk), src_i.set(di), dst_i.set(si)
            flipped.set(b.xor(flipped.get(), L.Constant(I1, 1)))
    b.ret(flipped.get())
    seal(entry, fn)
    return fn


# --- one row ------------------------------------------------------------------------------------------
def sort_one(module: L.Module, dt: DType, argsort: bool) -> L.Function:
    """`void sort_one(ptr x, i64 xs, ptr out, i64 os, i64 n, ptr scratch)`: one row of n elements
    (strides xs, os in elements) sorted into out (values, or indices for argsort)."""
    name = f"aot.sort.row_{dt.name}{'_arg' if argsort else ''}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn, entry, b = new_function(module, name, VOID, [PTR, I64, PTR, I64, I64, PTR])
    x, xs, out, os_, n, scratch = fn.args
    offs, _ = slot_layout(b, n, dt, argsort)
    seg = [b.gep(scratch, [o], source_etype=L.IntType(8)) for o in offs]
    with_idx = carries_indices(dt, argsort)
    if dt.is_complex:
        k_res, i_res = _sort_complex(module, entry, b, dt, x, xs, n, seg)
    else:
        k_res, i_res, counts = _sort_real(module, entry, b, dt, x, xs, n, seg, with_idx, argsort)
    if argsort:
        with for_range(b, i64(0), n, name="out") as j:
            b.store(b.load(gep(b, I64, i_res, j), typ=I64), gep(b, I64, out, b.mul(j, os_)))
    elif dt.is_complex:
        rt = L.IntType(dt.real_dtype.bits)
        with for_range(b, i64(0), n, name="out") as j:
            src = b.mul(b.load(gep(b, I64, i_res, j), typ=I64), b.mul(xs, i64(2)))
            dst = b.mul(j, b.mul(os_, i64(2)))
            for part in (0, 1):
                v = b.load(gep(b, rt, x, b.add(src, i64(part))), typ=rt)
                b.store(v, gep(b, rt, out, b.add(dst, i64(part))))
    else:
        kt = int_type(key_bits(dt))
        with for_range(b, i64(0), n, name="out") as j:
            k = b.load(gep(b, kt, k_res, j), typ=kt)
            b.store(decode_key(b, dt, k), gep(b, kt, out, b.mul(j, os_)))
        if dt.is_float:
            restore_floats(b, entry, dt, x, xs, out, os_, n, counts)
    b.ret_void()
    seal(entry, fn)
    return fn


def _sort_real(module, entry, b, dt: DType, x, xs, n, seg, with_idx: bool, argsort: bool):
    """Keys (and indices) into K0 (I0), sorted; returns (keys, indices, float counts)."""
    bits = key_bits(dt)
    kt = int_type(bits)
    count_floats = dt.is_float and not argsort
    counts = {k: Var(entry, b, I64, i64(0)) for k in ("nan", "negzero", "neg")} if count_floats else {}
    with for_range(b, i64(0), n, name="key") as j:
        v = load_bits(b, dt, x, b.mul(j, xs))
        b.store(real_key(b, dt, v), gep(b, kt, seg[0], j))
        if with_idx:
            b.store(j, gep(b, I64, seg[2], j))
        if count_floats:
            nan, zero = is_nan_bits(b, v, bits), is_zero_bits(b, v, bits)
            neg = b.icmp_signed("<", v, L.Constant(kt, 0))
            for name, flag in (("nan", nan), ("negzero", b.and_(zero, neg)),
                               ("neg", b.and_(neg, b.not_(b.or_(zero, nan))))):
                counts[name].set(b.add(counts[name].get(), b.zext(flag, I64)))
    i0, i1 = (seg[2], seg[3]) if with_idx else (L.Constant(PTR, None),) * 2
    flipped = b.call(key_sort(module, bits, with_idx), [seg[0], seg[1], i0, i1, n])
    return b.select(flipped, seg[1], seg[0]), (b.select(flipped, i1, i0) if with_idx else None), counts


def _sort_complex(module, entry, b, dt: DType, x, xs, n, seg):
    """Indices sorted by the low, middle, then class word (stable each): (keys, indices)."""
    k0, k1, i0, i1, w_mid, w_cls = seg
    with for_range(b, i64(0), n, name="key") as j:
        cls, mid, low = element_keys(b, dt, x, b.mul(j, xs))
        b.store(low, gep(b, I64, k0, j))
        b.store(mid, gep(b, I64, w_mid, j))
        b.store(cls, gep(b, I64, w_cls, j))
        b.store(j, gep(b, I64, i0, j))
    sort = key_sort(module, 64, True)
    flipped = b.call(sort, [k0, k1, i0, i1, n])
    for word in (w_mid, w_cls):
        cur = b.select(flipped, i1, i0)
        with for_range(b, i64(0), n, name="gather") as j:
            i = b.load(gep(b, I64, cur, j), typ=I64)
            b.store(b.load(gep(b, I64, word, i), typ=I64), gep(b, I64, k0, j))
            b.store(i, gep(b, I64, i0, j))  # i0 is cur, or cur is i1: either way safe
        flipped = b.call(sort, [k0, k1, i0, i1, n])
    return b.select(flipped, k1, k0), b.select(flipped, i1, i0)


def restore_floats(b, entry, dt: DType, x, xs, out, os_, n, counts) -> None:
    """Rewrite the zeros of a row holding a -0.0 (they start after the negatives) and the NaNs (the
    row's tail) from the input in input order: keys merged them."""
    bits = dt.bits
    kt = int_type(bits)
    zeros_at = counts["neg"].get()
    nan_at = b.sub(n, counts["nan"].get())
    for start, which in ((zeros_at, "negzero"), (nan_at, "nan")):
        with b.if_then(b.icmp_signed(">", counts[which].get(), i64(0))):
            pos = Var(entry, b, I64, start)
            with for_range(b, i64(0), n, name=f"fix_{which}") as t:
                v = load_bits(b, dt, x, b.mul(t, xs))
                hit = is_zero_bits(b, v, bits) if which == "negzero" else is_nan_bits(b, v, bits)
                with b.if_then(hit):
                    p = pos.get()
                    b.store(v, gep(b, kt, out, b.mul(p, os_)))
                    pos.set(b.add(p, i64(1)))


# --- the kernel ---------------------------------------------------------------------------------------
def emit_sort_rows(module: L.Module, name: str, dt: DType, rank: int, argsort: bool) -> L.Function:
    """The sort_rows kernel of arrays of `rank` dims (see the module docstring)."""
    row = sort_one(module, dt, argsort)
    fn, b = new_kernel(module, name)
    args, begin, end = fn.args

    def slot(i):
        return b.load(b.gep(args, [i64(i)], source_etype=I64), typ=I64)

    x, out, scratch = (b.inttoptr(slot(i), PTR) for i in range(3))
    rows, nslots, n, slot_bytes, xs, os_ = (slot(i) for i in range(3, FIXED_SLOTS))
    r = rank - 1
    dims = [slot(FIXED_SLOTS + k) for k in range(r)]
    x_str = [slot(FIXED_SLOTS + r + k) for k in range(r)]
    o_str = [slot(FIXED_SLOTS + 2 * r + k) for k in range(r)]
    x_el = i64(dt.itemsize)
    with for_range(b, begin, end, name="slot") as p:
        base = b.gep(scratch, [b.mul(p, slot_bytes)], source_etype=L.IntType(8))
        lo = b.sdiv(b.mul(p, rows), nslots)
        hi = b.sdiv(b.mul(b.add(p, i64(1)), rows), nslots)
        with for_range(b, lo, hi, name="row") as q:
            xo, oo, rest = i64(0), i64(0), q
            for k in range(r - 1, -1, -1):
                idx = b.srem(rest, dims[k]) if k else rest  # the outermost index needs no division
                rest = b.sdiv(rest, dims[k]) if k else rest
                xo = b.add(xo, b.mul(idx, x_str[k]))
                oo = b.add(oo, b.mul(idx, o_str[k]))
            xp = b.gep(x, [b.mul(xo, x_el)], source_etype=L.IntType(8))
            out_el = i64(8 if argsort else dt.itemsize)
            op = b.gep(out, [b.mul(oo, out_el)], source_etype=L.IntType(8))
            b.call(row, [xp, xs, op, os_, n, base])
    b.ret_void()
    return fn
