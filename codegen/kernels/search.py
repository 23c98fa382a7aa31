"""searchsorted: a binary search per value over the flat range of the values (threaded by the host).

numpy's binsearch with its sort order (NaNs last, -0.0 == 0.0; complex by NaN class, real,
imaginary, through the keys of sort_keys.py, as bools): side="left" finds the first i with not
a[i] < v, side="right" the first i with v < a[i]. Ints and floats compare as they are. Both
operands arrive in one dtype (the front end casts to their common type).

Argument block: [a, v, out, len(a), a's stride, the values' dims (rank), v's strides, out's
strides] (strides in elements).
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.dtypes import DType

from ..llvm.builder import Builder
from ..llvm.loops import for_range, i64
from ..llvm.types import I64, PTR, memory_type
from .common import new_kernel
from .sort_keys import Var, element_keys, gep, keys_less


def _probe_value(b: L.IRBuilder, dt: DType, ptr, index):
    """What a search compares: the element itself for ints and floats, its key words otherwise."""
    if dt.is_int or dt.is_float:
        t = memory_type(dt)
        return b.load(b.gep(ptr, [index], source_etype=t), typ=t)
    return element_keys(b, dt, ptr, index)


def _less(b: L.IRBuilder, dt: DType, x, y):
    """numpy's sort order x < y: NaN after everything (floats), keys for bool and complex."""
    if dt.is_int:
        return b.icmp_signed("<", x, y)
    if dt.is_float:
        y_nan_x_not = b.and_(b.fcmp_unordered("uno", y, y), b.fcmp_ordered("ord", x, x))
        return b.or_(b.fcmp_ordered("<", x, y), y_nan_x_not)
    return keys_less(b, x, y)


def emit_searchsorted(module: L.Module, name: str, dt: DType, rank: int, side: str) -> L.Function:
    fn, entry = new_kernel(module, name)  # the entry block holds the stack slots
    args, begin, end = fn.args
    b = Builder(fn.append_basic_block("body"))

    def slot(i):
        return b.load(b.gep(args, [i64(i)], source_etype=I64), typ=I64)

    a, v, out = (b.inttoptr(slot(i), PTR) for i in range(3))
    na, a_str = slot(3), slot(4)
    dims = [slot(5 + k) for k in range(rank)]
    v_str = [slot(5 + rank + k) for k in range(rank)]
    o_str = [slot(5 + 2 * rank + k) for k in range(rank)]
    lo, hi = Var(entry, b, I64, None, "lo"), Var(entry, b, I64, None, "hi")
    with for_range(b, begin, end, name="v") as i:
        vo, oo, rest = i64(0), i64(0), i
        for k in range(rank - 1, -1, -1):
            idx = b.srem(rest, dims[k]) if k else rest  # the outermost index needs no division
            rest = b.sdiv(rest, dims[k]) if k else rest
            vo = b.add(vo, b.mul(idx, v_str[k]))
            oo = b.add(oo, b.mul(idx, o_str[k]))
        key = _probe_value(b, dt, v, vo)
        lo.set(i64(0))
        hi.set(na)
        head = fn.append_basic_block("bs.head")
        body = fn.append_basic_block("bs.body")
        done = fn.append_basic_block("bs.done")
        b.branch(head)
        b.position_at_end(head)
        b.cbranch(b.icmp_signed("<", lo.get(), hi.get()), body, done)
        b.position_at_end(body)
        l_, h_ = lo.get(), hi.get()
        mid = b.add(l_, b.ashr(b.sub(h_, l_), i64(1)))
        probe = _probe_value(b, dt, a, b.mul(mid, a_str))
        go_right = _less(b, dt, probe, key) if side == "left" else b.not_(_less(b, dt, key, probe))
        lo.set(b.select(go_right, b.add(mid, i64(1)), l_))
        hi.set(b.select(go_right, h_, mid))
        b.branch(head)
        b.position_at_end(done)
        b.store(lo.get(), gep(b, I64, out, oo))
    b.ret_void()
    entry.branch(fn.blocks[1])
    return fn
