"""Quickselect on a small key buffer: the end game of kernels/select.py's lane selection.

Each step partitions the window [lo, hi] around the median of its first, middle and last keys
with a branch-free Lomuto pass (the keys below the pivot to the front: no mispredicted branches,
which dominate a Hoare partition on random keys); when no key is below the pivot, a second pass
moves the keys equal to it to the front, so that runs of ties finish at once. The ranks are taken
in ascending order, each searching only right of the previous one (everything left of a
selected rank is not greater); a rank at either end of its window is the window's least or
greatest key, found by one reduction pass instead. A rank that takes more than MAX_STEPS partitions gives up, and the
caller sorts instead: the worst case stays the sort's.
"""

from __future__ import annotations

from llvmlite import ir as L

from ..llvm.context import declare
from ..llvm.loops import alloca, for_range, i64, while_loop
from ..llvm.types import I1, I64, PTR
from .sort_keys import Var, gep, int_type, new_function, seal

MAX_STEPS = 64
SAMPLED = 15  # keys sampled for the pivot of a window wider than SAMPLE_WINDOW
SAMPLE_WINDOW = 96


def quickselect_function(module: L.Module, bits: int, lanes: int = 1) -> L.Function:
    """`i1 qselect(ptr keys, i64 n, ptr rel, ptr active, ptr vals, i64 m)`: for each active i (1),
    vals[i] = the key at rank rel[i] of keys[0:n) (unsigned keys of `bits`, permuted in place);
    ranks ascending. Returns 1 when it gave up (the caller then sorts). The end scans go `lanes`
    keys at a time."""
    name = f"aot.select.quick_u{bits}x{lanes}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    kt = int_type(bits)
    fn, entry, b = new_function(module, name, I1, [PTR, I64, PTR, PTR, PTR, I64])
    keys, n, rel, active, vals, m = fn.args

    def at(i):
        return gep(b, kt, keys, i)

    def get(i):
        return b.load(at(i), typ=kt)

    def swap(i, j):
        vi, vj = get(i), get(j)
        b.store(vj, at(i))
        b.store(vi, at(j))

    def order(i, j):  # keys[i] <= keys[j] afterwards
        vi, vj = get(i), get(j)
        gt = b.icmp_unsigned(">", vi, vj)
        b.store(b.select(gt, vj, vi), at(i))
        b.store(b.select(gt, vi, vj), at(j))

    gave_up = Var(entry, b, I1, L.Constant(I1, 0))
    start = Var(entry, b, I64, i64(0))
    lo, hi, steps, w = (Var(entry, b, I64) for _ in range(4))
    found = Var(entry, b, I1)

    def lomuto(l, h, p, test):
        """Keys of [l, h) passing test(key, p) to the front; returns where the others start."""
        w.set(l)
        with for_range(b, l, h, name="lomuto") as j:
            t, at_w = get(j), w.get()
            b.store(get(at_w), at(j))
            b.store(t, at(at_w))
            w.set(b.add(at_w, b.zext(test(t, p), I64)))
        return w.get()

    with for_range(b, i64(0), m, name="rank") as t:
        live = b.icmp_signed("==", b.load(gep(b, I64, active, t), typ=I64), i64(1))  # select.py's ACTIVE
        with b.if_then(b.and_(live, b.not_(gave_up.get()))):
            r = b.load(gep(b, I64, rel, t), typ=I64)
            lo.set(start.get())
            hi.set(b.sub(n, i64(1)))
            steps.set(i64(0))
            for edge, pick in ((start.get(), "<"), (hi.get(), ">")):  # the window's least or greatest
                hit = b.icmp_signed("==", r, edge)
                with b.if_then(hit):
                    _extreme_to(module, entry, b, kt, keys, start.get(), n, edge, pick, lanes)
                found.set(hit)
            with while_loop(b, lambda: b.and_(b.icmp_signed(">", hi.get(), lo.get()),
                                              b.not_(b.or_(gave_up.get(), found.get()))), name="part"):
                gave_up.set(b.icmp_signed(">=", steps.get(), i64(MAX_STEPS)))
                steps.set(b.add(steps.get(), i64(1)))
                l, h = lo.get(), hi.get()
                swap(_pivot(b, entry, kt, keys, l, h, r, order), h)  # the pivot waits at the end
                p = get(h)
                below = lomuto(l, h, p, lambda k, p: b.icmp_unsigned("<", k, p))
                with b.if_else(b.icmp_signed("==", below, l)) as (ties, split):
                    with ties:  # nothing below the pivot: [l, e) the keys equal to it (all < e answer p)
                        e = b.add(lomuto(l, h, p, lambda k, p: b.icmp_unsigned("==", k, p)), i64(1))
                        swap(b.sub(e, i64(1)), h)
                        inside = b.icmp_signed("<", r, e)
                        found.set(inside)
                        lo.set(b.select(inside, l, e))
                    with split:  # the pivot goes between: [l, below) < p <= (below, h]
                        swap(below, h)
                        found.set(b.icmp_signed("==", r, below))
                        left = b.icmp_signed("<", r, below)
                        hi.set(b.select(left, b.sub(below, i64(1)), h))
                        lo.set(b.select(left, l, b.add(below, i64(1))))
            with b.if_then(b.not_(gave_up.get())):
                k = get(r)
                b.store(b.zext(k, I64) if bits < 64 else k, gep(b, I64, vals, t))
                start.set(b.add(r, i64(1)))
    b.ret(gave_up.get())
    seal(entry, fn)
    return fn




def _pivot(b: L.IRBuilder, entry, kt, keys, l, h, r, order):
    """The position of the pivot for window [l, h] and target rank r: in windows over
    SAMPLE_WINDOW keys, the sample's key (SAMPLED keys evenly spaced, sorted by insertion) one
    place beyond r's proportional place, toward the window's nearer end (so that r falls in the
    smaller part; the next step, with r near that part's end, splits off a sliver); in smaller
    ones the median of the first, middle and last keys."""
    pos = Var(entry, b, I64)
    sk = alloca(entry, L.ArrayType(kt, SAMPLED), name="sample_keys")
    sp = alloca(entry, L.ArrayType(I64, SAMPLED), name="sample_pos")
    j = Var(entry, b, I64)

    def key_at(arr, t, typ):
        return gep(b, typ, arr, t)

    with b.if_else(b.icmp_signed(">", b.sub(h, l), i64(SAMPLE_WINDOW))) as (big, small):
        with big:
            span, last = b.sub(h, l), SAMPLED - 1
            with for_range(b, i64(0), i64(SAMPLED), name="smp") as i:
                at = b.add(l, b.sdiv(b.mul(span, i), i64(last)))
                k = b.load(gep(b, kt, keys, at), typ=kt)
                j.set(i)

                def more(k=k):
                    t = j.get()
                    prev = b.load(key_at(sk, b.select(b.icmp_signed(">", t, i64(0)), b.sub(t, i64(1)), t), kt), typ=kt)
                    return b.and_(b.icmp_signed(">", t, i64(0)), b.icmp_unsigned(">", prev, k))

                with while_loop(b, more, name="smp_ins"):
                    t = j.get()
                    for arr, typ in ((sk, kt), (sp, I64)):
                        b.store(b.load(key_at(arr, b.sub(t, i64(1)), typ), typ=typ), key_at(arr, t, typ))
                    j.set(b.sub(t, i64(1)))
                b.store(k, key_at(sk, j.get(), kt))
                b.store(at, key_at(sp, j.get(), I64))
            place = b.sdiv(b.mul(b.sub(r, l), i64(last)), span)
            low_half = b.icmp_signed("<", b.mul(b.sub(r, l), i64(2)), span)
            t = b.select(low_half, b.add(place, i64(2)), b.sub(place, i64(1)))
            t = b.select(b.icmp_signed("<", t, i64(0)), i64(0), b.select(b.icmp_signed(">", t, i64(last)),
                                                                         i64(last), t))
            pos.set(b.load(key_at(sp, t, I64), typ=I64))
        with small:
            mid = b.add(l, b.lshr(b.sub(h, l), i64(1)))
            order(l, mid)
            order(mid, h)
            order(l, mid)
            pos.set(mid)
    return pos.get()


def _extreme_to(module, entry: L.IRBuilder, b: L.IRBuilder, kt, keys, lo, n, to, pick: str, lanes: int) -> None:
    """Swap the least (pick "<") or greatest (">") key of keys[lo:n) into position `to`: a
    reduction pass (`lanes` keys at a time) and a search for its first position."""
    best = Var(entry, b, kt, b.load(gep(b, kt, keys, lo), typ=kt))
    tail = lo
    if lanes > 1:
        vt = L.VectorType(kt, lanes)
        what = "umin" if pick == "<" else "umax"
        suffix = f"v{lanes}i{kt.width}"
        acc = Var(entry, b, vt, L.Constant(vt, [(1 << kt.width) - 1 if pick == "<" else 0] * lanes))
        tail = b.sub(n, b.srem(b.sub(n, lo), i64(lanes)))
        with for_range(b, lo, tail, lanes, name="vext") as j:
            v = b.load(gep(b, kt, keys, j), typ=vt, align=kt.width // 8)
            acc.set(b.call(declare(module, f"llvm.{what}.{suffix}", vt, [vt, vt]), [acc.get(), v]))
        r = b.call(declare(module, f"llvm.vector.reduce.{what}.{suffix}", kt, [vt]), [acc.get()])
        best.set(b.select(b.icmp_unsigned(pick, r, best.get()), r, best.get()))
    with for_range(b, tail, n, name="ext") as j:
        k = b.load(gep(b, kt, keys, j), typ=kt)
        best.set(b.select(b.icmp_unsigned(pick, k, best.get()), k, best.get()))
    v = best.get()
    pos = Var(entry, b, I64, lo)
    with while_loop(b, lambda: b.icmp_unsigned("!=", b.load(gep(b, kt, keys, pos.get()), typ=kt), v), name="find"):
        pos.set(b.add(pos.get(), i64(1)))
    p = pos.get()
    b.store(b.load(gep(b, kt, keys, to), typ=kt), gep(b, kt, keys, p))
    b.store(v, gep(b, kt, keys, to))
