"""The selection kernels over lanes: select_kth (order statistics) and partition / argpartition.

Both run over scratch slots as the sort kernel does (kernels/sorting.py): slot p handles lanes
[p * rows / P, (p + 1) * rows / P) one after the other in its own part of a scratch buffer the host
allocated (P parts of `slot_bytes`, laid out by `row_layout`), so the host threads over slots.

A lane's positions are wrapped (a negative one counts from the end) and checked (one outside
[0, n) sets the error slot and skips the lane: IndexError), sorted with their request order (by
insertion: a lane asks for few) and made distinct; kernels/select.py's lane function
finds their keys.

- select_rows writes the decoded keys in request order (a NaN as the lane's own NaN at that rank:
  NaNs rank last in input order, so payloads and signs are numpy's stable-order ones).
- partition_rows (kth static: KS distinct positions at most) then makes the stable three-way
  partition around the distinct values u_0 < ... < u_r at those positions: a counting pass gives
  each element its class (2 * #{u_i < key} + [key == one of them]), and a scattering pass writes
  the elements (their input bits: NaN payloads survive) or their indices in class order, input
  order within a class.

Argument blocks (rank-1 "other" dims, C order over them):
  select:    [x, idx, out, scratch, rows, P, n, Q, slot_bytes, x axis stride, idx axis stride,
              out axis stride, dims, x strides, idx strides (0: the same positions for every
              lane), out strides, error]
  partition: [x, out, scratch, kth table, K, rows, P, n, slot_bytes, x axis stride, out axis stride,
              dims, x strides, out strides, error]
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.builder import Builder
from ..llvm.loops import alloca, for_range, i64, while_loop
from ..llvm.types import I1, I8, I64, PTR
from .common import new_kernel
from .select import lane_function, lane_layout, select_key
from .sort_keys import Var, decode_key, gep, int_type, is_nan_bits, key_bits, load_bits
from .sorting import n_bytes

SELECT_FIXED, PARTITION_FIXED = 12, 11
RANK_SEGMENTS = 5  # RK, RI, QU, RANKS, VALS: 8 bytes per position each


def row_layout(b: L.IRBuilder, n, q, dt: DType) -> tuple[list, L.Value]:
    """(offsets, bytes) of one slot: the position arrays, then the lane function's scratch."""
    offs, total = [], i64(0)
    for _ in range(RANK_SEGMENTS):
        offs.append(total)
        total = b.add(total, n_bytes(b, q, 8))
    offs.append(total)
    _, lane = lane_layout(b, n, q, dt)
    return offs, b.add(total, lane)


class _Args:
    def __init__(self, b: L.IRBuilder, args):
        self.b, self.args = b, args

    def __call__(self, i: int):
        return self.b.load(self.b.gep(self.args, [i64(i)], source_etype=I64), typ=I64)

    def ptr(self, i: int):
        return self.b.inttoptr(self(i), PTR)

    def error(self, i: int):
        return self.b.gep(self.args, [i64(i)], source_etype=I64)


def _lane_offsets(b: L.IRBuilder, q, dims: list, strides: list) -> list:
    """Element offsets of lane q (C order over the other dims) in each operand."""
    offs, rest = [i64(0)] * len(strides), q
    for k in range(len(dims) - 1, -1, -1):
        idx = b.srem(rest, dims[k]) if k else rest  # the outermost index needs no division
        rest = b.sdiv(rest, dims[k]) if k else rest
        offs = [b.add(o, b.mul(idx, s[k])) for o, s in zip(offs, strides)]
    return offs


def _slot_lanes(b: L.IRBuilder, p, rows, nslots):
    return b.sdiv(b.mul(p, rows), nslots), b.sdiv(b.mul(b.add(p, i64(1)), rows), nslots)


def _ranks(entry, b: L.IRBuilder, seg: list, npos, n, position):
    """Wrap and check positions t = 0..npos-1 (`position(t)`), sort them with t along and keep the
    distinct ones in RANKS; QU[t] = the distinct rank of request t. Returns (i1 bad, m)."""
    rk0, ri0, qu, ranks = seg[:4]
    bad = Var(entry, b, I1, L.Constant(I1, 0))
    with for_range(b, i64(0), npos, name="pos") as t:
        p = position(t)
        p = b.select(b.icmp_signed("<", p, i64(0)), b.add(p, n), p)
        bad.set(b.or_(bad.get(), b.or_(b.icmp_signed("<", p, i64(0)), b.icmp_signed(">=", p, n))))
        b.store(p, gep(b, I64, rk0, t))
        b.store(t, gep(b, I64, ri0, t))
    m = Var(entry, b, I64, i64(0))
    with b.if_then(b.not_(bad.get())):
        _insertion_pairs(entry, b, rk0, ri0, npos)
        sk, si = rk0, ri0
        with for_range(b, i64(0), npos, name="uniq") as t:
            r = b.load(gep(b, I64, sk, t), typ=I64)
            prev = b.load(gep(b, I64, sk, b.select(b.icmp_signed(">", t, i64(0)), b.sub(t, i64(1)), t)), typ=I64)
            new = b.or_(b.icmp_signed("==", t, i64(0)), b.icmp_signed("!=", r, prev))
            with b.if_then(new):
                b.store(r, gep(b, I64, ranks, m.get()))
                m.set(b.add(m.get(), i64(1)))
            b.store(b.sub(m.get(), i64(1)), gep(b, I64, qu, b.load(gep(b, I64, si, t), typ=I64)))
    return bad.get(), m.get()


def _insertion_pairs(entry, b: L.IRBuilder, keys, vals, n) -> None:
    """Sort keys[0:n] (i64) with vals along, by insertion: the positions of one lane are few."""
    j = Var(entry, b, I64)
    with for_range(b, i64(1), n, name="ins") as i:
        k, v = b.load(gep(b, I64, keys, i), typ=I64), b.load(gep(b, I64, vals, i), typ=I64)
        j.set(i)

        def more():
            at = j.get()
            prev = b.load(gep(b, I64, keys, b.select(b.icmp_signed(">", at, i64(0)), b.sub(at, i64(1)), at)), typ=I64)
            return b.and_(b.icmp_signed(">", at, i64(0)), b.icmp_signed(">", prev, k))

        with while_loop(b, more, name="shift"):
            at = j.get()
            for arr in (keys, vals):
                b.store(b.load(gep(b, I64, arr, b.sub(at, i64(1))), typ=I64), gep(b, I64, arr, at))
            j.set(b.sub(at, i64(1)))
        b.store(k, gep(b, I64, keys, j.get()))
        b.store(v, gep(b, I64, vals, j.get()))


def _segments(b: L.IRBuilder, base, n, q, dt: DType) -> list:
    offs, _ = row_layout(b, n, q, dt)
    return [b.gep(base, [o], source_etype=I8) for o in offs]


def emit_select_rows(module: L.Module, name: str, dt: DType, rank: int, lanes: int) -> L.Function:
    """The select_kth kernel over scratch slots (see the module docstring); lanes: the passes'
    vector width."""
    lane = lane_function(module, dt, lanes)
    fn, entry = new_kernel(module, name)
    args, begin, end = fn.args
    b = Builder(fn.append_basic_block("body"))
    a = _Args(b, args)
    x, idx, out, scratch = a.ptr(0), a.ptr(1), a.ptr(2), a.ptr(3)
    rows, nslots, n, npos, slot_bytes, xs, iqs, oqs = (a(i) for i in range(4, SELECT_FIXED))
    r = rank - 1
    dims = [a(SELECT_FIXED + k) for k in range(r)]
    strides = [[a(SELECT_FIXED + (j + 1) * r + k) for k in range(r)] for j in range(3)]
    err = a.error(SELECT_FIXED + 4 * r)
    bits = key_bits(dt)
    kt = int_type(bits)
    with for_range(b, begin, end, name="slot") as p:
        seg = _segments(b, b.gep(scratch, [b.mul(p, slot_bytes)], source_etype=I8), n, npos, dt)
        lo, hi = _slot_lanes(b, p, rows, nslots)
        with for_range(b, lo, hi, name="lane") as q:
            xo, io, oo = _lane_offsets(b, q, dims, strides)
            bad, m = _ranks(entry, b, seg, npos, n,
                            lambda t: b.load(gep(b, I64, idx, b.add(io, b.mul(t, iqs))), typ=I64))
            with b.if_else(bad, likely=False) as (fail, good):
                with fail:
                    b.store(i64(1), err)
                with good:
                    xp = b.gep(x, [b.mul(xo, i64(dt.itemsize))], source_etype=I8)
                    b.call(lane, [xp, xs, n, seg[3], m, seg[4], seg[5]])
                    with for_range(b, i64(0), npos, name="put") as t:
                        u = b.load(gep(b, I64, seg[2], t), typ=I64)
                        key = b.load(gep(b, I64, seg[4], u), typ=I64)
                        key = b.trunc(key, kt) if bits < 64 else key
                        res = Var(entry, b, kt, decode_key(b, dt, key))
                        if dt.is_float:  # a NaN: the element itself, as the stable order has it
                            rank = b.load(gep(b, I64, seg[3], u), typ=I64)
                            with b.if_then(b.icmp_unsigned("==", key, L.Constant(kt, -1)), likely=False):
                                _nan_at(entry, b, dt, xp, xs, n, b.sub(b.sub(n, i64(1)), rank), res)
                        b.store(res.get(), gep(b, kt, out, b.add(oo, b.mul(t, oqs))))
    b.ret_void()
    entry.branch(fn.blocks[1])
    return fn


def _nan_at(entry, b: L.IRBuilder, dt: DType, xp, xs, n, t, res: Var) -> None:
    """res = the bits of the lane's t-th NaN counted from its end (NaNs sort last in input order)."""
    pos = Var(entry, b, I64, b.sub(n, i64(1)))
    seen = Var(entry, b, I64, i64(0))
    found = Var(entry, b, I1, L.Constant(I1, 0))
    with while_loop(b, lambda: b.and_(b.icmp_signed(">=", pos.get(), i64(0)), b.not_(found.get())), name="nan"):
        v = load_bits(b, dt, xp, b.mul(pos.get(), xs))
        with b.if_then(is_nan_bits(b, v, dt.bits)):
            hit = b.icmp_signed("==", seen.get(), t)
            with b.if_then(hit):
                res.set(v)
            found.set(hit)
            seen.set(b.add(seen.get(), i64(1)))
        pos.set(b.sub(pos.get(), i64(1)))


def emit_partition_rows(module: L.Module, name: str, dt: DType, rank: int, ks: int, argsort: bool,
                        lanes: int) -> L.Function:
    """The partition (argsort: argpartition) kernel for at most `ks` distinct kth positions."""
    lane = lane_function(module, dt, lanes)
    fn, entry = new_kernel(module, name)
    args, begin, end = fn.args
    b = Builder(fn.append_basic_block("body"))
    a = _Args(b, args)
    x, out, scratch, kth = a.ptr(0), a.ptr(1), a.ptr(2), a.ptr(3)
    nk, rows, nslots, n, slot_bytes, xs, os_ = (a(i) for i in range(4, PARTITION_FIXED))
    r = rank - 1
    dims = [a(PARTITION_FIXED + k) for k in range(r)]
    strides = [[a(PARTITION_FIXED + (j + 1) * r + k) for k in range(r)] for j in range(2)]
    err = a.error(PARTITION_FIXED + 3 * r)
    bits = key_bits(dt)
    kt = int_type(bits)
    values = alloca(entry, L.ArrayType(kt, ks + 1), name="u")
    counts = alloca(entry, L.ArrayType(I64, 2 * ks + 1), name="counts")
    with for_range(b, begin, end, name="slot") as p:
        seg = _segments(b, b.gep(scratch, [b.mul(p, slot_bytes)], source_etype=I8), n, nk, dt)
        lo, hi = _slot_lanes(b, p, rows, nslots)
        with for_range(b, lo, hi, name="lane") as q:
            xo, oo = _lane_offsets(b, q, dims, strides)
            bad, m = _ranks(entry, b, seg, nk, n, lambda t: b.load(gep(b, I64, kth, t), typ=I64))
            with b.if_else(bad, likely=False) as (fail, good):
                with fail:
                    b.store(i64(1), err)
                with good:
                    xp = b.gep(x, [b.mul(xo, i64(dt.itemsize))], source_etype=I8)
                    op = b.gep(out, [b.mul(oo, i64(8 if argsort else dt.itemsize))], source_etype=I8)
                    b.call(lane, [xp, xs, n, seg[3], m, seg[4], seg[5]])
                    nu = _distinct_values(entry, b, seg[4], m, values, kt, ks)
                    us = [b.load(gep(b, kt, values, i64(i)), typ=kt) for i in range(ks)]

                    def klass(j, xp=xp, us=us, nu=nu):
                        key = select_key(b, dt, load_bits(b, dt, xp, b.mul(j, xs)))
                        lt = i64(0)
                        for u in us:  # padded with the top key, which no key exceeds
                            lt = b.add(lt, b.zext(b.icmp_unsigned("<", u, key), I64))
                        at = b.load(gep(b, kt, values, lt), typ=kt)
                        eq = b.and_(b.icmp_signed("<", lt, nu), b.icmp_unsigned("==", at, key))
                        return b.add(b.shl(lt, i64(1)), b.zext(eq, I64))

                    _scatter_by_class(entry, b, dt, xp, xs, op, os_, n, counts, 2 * ks + 1, klass, argsort)
    b.ret_void()
    entry.branch(fn.blocks[1])
    return fn


def _distinct_values(entry, b: L.IRBuilder, vals, m, values, kt, ks: int):
    """values[0:nu] = the distinct keys of vals[0:m] (ascending), the rest the top key; returns nu."""
    top = L.Constant(kt, -1)
    for i in range(ks + 1):
        b.store(top, gep(b, kt, values, i64(i)))
    nu = Var(entry, b, I64, i64(0))
    with for_range(b, i64(0), m, name="dist") as i:
        v = b.load(gep(b, I64, vals, i), typ=I64)
        v = b.trunc(v, kt) if kt.width < 64 else v
        k = nu.get()
        prev = b.load(gep(b, kt, values, b.select(b.icmp_signed(">", k, i64(0)), b.sub(k, i64(1)), k)), typ=kt)
        with b.if_then(b.or_(b.icmp_signed("==", k, i64(0)), b.icmp_unsigned("!=", v, prev))):
            b.store(v, gep(b, kt, values, k))
            nu.set(b.add(k, i64(1)))
    return nu.get()


def _scatter_by_class(entry, b: L.IRBuilder, dt: DType, xp, xs, op, os_, n, counts, nclass: int, klass,
                      argsort: bool) -> None:
    """Count the lane's classes, turn the counts into starts, then write each element (or index) at
    its class's next position: a stable counting sort by class."""
    for c in range(nclass):
        b.store(i64(0), gep(b, I64, counts, i64(c)))
    with for_range(b, i64(0), n, name="count") as j:
        slot = gep(b, I64, counts, klass(j))
        b.store(b.add(b.load(slot, typ=I64), i64(1)), slot)
    total = i64(0)
    for c in range(nclass):
        slot = gep(b, I64, counts, i64(c))
        cnt = b.load(slot, typ=I64)
        b.store(total, slot)
        total = b.add(total, cnt)
    et = I8 if dt.is_bool else int_type(dt.bits)
    with for_range(b, i64(0), n, name="scatter") as j:
        slot = gep(b, I64, counts, klass(j))
        at = b.load(slot, typ=I64)
        b.store(b.add(at, i64(1)), slot)
        if argsort:
            b.store(j, gep(b, I64, op, b.mul(at, os_)))
        else:
            b.store(load_bits(b, dt, xp, b.mul(j, xs)), gep(b, et, op, b.mul(at, os_)))
