"""correlate1d: numpy's sliding dot product out[k] = sum_j a[k - left + j] * v[j] over the j that
fall inside a (j ascending, as numpy's dot), for k in [0, L).

The range is blocks of B = R * VL consecutive outputs. A block whose windows all lie inside a
contiguous a keeps R vector accumulators: for each j, one broadcast of v[j] and R unaligned
vector loads of a, multiplied and added by the dtype's own mul/add rules (so ints wrap, bools are
or'ed ands and complex values multiply as numpy's). Blocks at the ends (where the sums are shorter)
and strided a take a scalar loop. Blocks are independent: the host threads them.

Argument block: a, v, out pointers; n = len(a), m = len(v), a's, v's and out's strides, left, L.
"""

from __future__ import annotations

from llvmlite import ir as L

from ir.core import Block, Operation
from ir.dtypes import DType
from ir.types import ScalarType

from ..llvm.context import LowerCtx
from ..llvm.loops import alloca, elem_ptr, for_range, i64, load_scalar, load_vector, splat_value, store_scalar
from ..llvm.types import I64, PTR, element_bits, value_type
from ..targets.base import Target
from .common import emit_body, new_kernel

N_SLOTS = 10


def block_length(target: Target, dt: DType) -> int:
    """Outputs per work item: R vectors of the dtype's lanes."""
    return _accumulators(dt) * _lanes(target, dt)


def _lanes(target: Target, dt: DType) -> int:
    return target.vector_len(max(element_bits(dt), 32))


def _accumulators(dt: DType) -> int:
    return 2 if dt.is_complex else 4


def _multiply_add(dt: DType) -> Block:
    """acc + p * w in dt (the rows' rules: bools or/and, ints wrap)."""
    t = ScalarType(dt)
    block = Block([t, t, t])
    acc, p, w = block.args
    prod = Operation("mul", [p, w], [t])
    block.append(prod)
    total = Operation("add", [acc, prod.results[0]], [t])
    block.append(total)
    block.append(Operation("yield", list(total.results), []))
    return block


class _Slot:
    """A stack slot holding one value of dt (two for complex: re, im) at vlen lanes."""

    def __init__(self, b: L.IRBuilder, dt: DType, vlen: int):
        t = value_type(dt.real_dtype if dt.is_complex else dt, vlen)
        self.b, self.parts = b, [alloca(b, t) for _ in range(2 if dt.is_complex else 1)]
        self.types = [t] * len(self.parts)

    def store(self, v) -> None:
        for p, x in zip(self.parts, v if isinstance(v, tuple) else (v,)):
            self.b.store(x, p)

    def load(self):
        vals = [self.b.load(p, typ=t) for p, t in zip(self.parts, self.types)]
        return tuple(vals) if len(vals) == 2 else vals[0]


def _zero(ctx: LowerCtx, dt: DType):
    z = ctx.const(dt.real_dtype if dt.is_complex else dt, 0)
    return (z, z) if dt.is_complex else z


def _lane(b: L.IRBuilder, v, k: int):
    idx = L.Constant(L.IntType(32), k)
    if isinstance(v, tuple):
        return tuple(b.extract_element(p, idx) for p in v)
    return b.extract_element(v, idx)


def emit_correlate(module: L.Module, target: Target, name: str, dt: DType, helpers: dict) -> L.Function:
    fn, b = new_kernel(module, name)
    args, tb, te = fn.args
    vl, r = _lanes(target, dt), _accumulators(dt)
    blen = vl * r
    sctx = LowerCtx(module, b, target, 1, helpers)
    vctx = LowerCtx(module, b, target, vl, helpers)
    body = _multiply_add(dt)
    accs = [_Slot(b, dt, vl) for _ in range(r)]
    acc1 = _Slot(b, dt, 1)

    def slot(i):
        return b.load(b.gep(args, [i64(i)], source_etype=I64), typ=I64)

    pa, pv, po = (b.inttoptr(slot(i), PTR) for i in range(3))
    n, m, sa, sv, so, left, total = (slot(i) for i in range(3, N_SLOTS))
    with for_range(b, tb, te, name="q") as q:
        k0 = b.mul(q, i64(blen))
        k1 = b.add(k0, i64(blen))
        inside = b.and_(b.icmp_signed("<=", k1, total), b.icmp_signed(">=", k0, left))
        inside = b.and_(inside, b.icmp_signed("<=", b.add(b.sub(k1, left), b.sub(m, i64(1))), n))
        inside = b.and_(inside, b.icmp_signed("==", sa, i64(1)))
        with b.if_else(inside) as (vector, scalar):
            with vector:
                for acc in accs:
                    acc.store(_zero(vctx, dt))
                base = b.sub(k0, left)
                with for_range(b, 0, m, name="j") as j:
                    w = splat_value(vctx, load_scalar(sctx, dt, elem_ptr(b, dt, pv, b.mul(j, sv))))
                    for k, acc in enumerate(accs):
                        p = load_vector(vctx, dt, elem_ptr(b, dt, pa, b.add(base, b.add(j, i64(k * vl)))))
                        acc.store(emit_body(vctx, body, [acc.load(), p, w])[0])
                for k, acc in enumerate(accs):
                    v = acc.load()
                    for lane in range(vl):
                        out = elem_ptr(b, dt, po, b.mul(b.add(k0, i64(k * vl + lane)), so))
                        store_scalar(sctx, dt, out, _lane(b, v, lane))
            with scalar:
                hi_k = b.select(b.icmp_signed("<", total, k1), total, k1)
                with for_range(b, k0, hi_k, name="k") as k:
                    lo = b.sub(left, k)
                    lo = b.select(b.icmp_signed("<", lo, i64(0)), i64(0), lo)
                    hi = b.sub(b.add(n, left), k)
                    hi = b.select(b.icmp_signed("<", m, hi), m, hi)
                    acc1.store(_zero(sctx, dt))
                    start = b.sub(k, left)
                    with for_range(b, lo, hi, name="js") as j:
                        x = load_scalar(sctx, dt, elem_ptr(b, dt, pa, b.mul(b.add(start, j), sa)))
                        y = load_scalar(sctx, dt, elem_ptr(b, dt, pv, b.mul(j, sv)))
                        acc1.store(emit_body(sctx, body, [acc1.load(), x, y])[0])
                    store_scalar(sctx, dt, elem_ptr(b, dt, po, b.mul(k, so)), acc1.load())
    b.ret_void()
    return fn
