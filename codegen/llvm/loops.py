"""Loop and memory helpers for kernel emission (numba cgutils-like), 64-bit index math."""

from __future__ import annotations

import functools
from contextlib import contextmanager

from llvmlite import ir as L

from ir.dtypes import DType

from .builder import const_int, dead_code
from .cast import load_fixup, store_fixup
from .context import LowerCtx, declare
from .types import I1, I32, I64, memory_type, scalar_type


@functools.lru_cache(maxsize=4096)
def i64(v: int) -> L.Constant:
    """An i64 constant, one object per value: llvmlite prints a constant once and reuses the text
    (a module holds thousands of the same few indices and sizes)."""
    return L.Constant(I64, v)


@functools.lru_cache(maxsize=64)
def iota(n: int) -> L.Constant:
    """<n x i64> <0, 1, ..., n-1>."""
    return L.Constant(L.VectorType(I64, n), list(range(n)))


def rolled_md(module: L.Module):
    """`llvm.loop` metadata that keeps LLVM's unroller (full, partial and runtime) off a loop. The
    kernels that write their loops in explicit vectors, with their own independent accumulators
    (reductions, matmul's register tiles) and the row/plane loops around them, gain nothing from
    LLVM unrolling them, and it was half of their compile time: the per-sample-gradient graph of
    tools/bench_func.py spends 0.45 s instead of 0.73 s in LLVM, with no run-time change on
    tools/bench_opt_levels.py's cases."""
    md = getattr(module, "_aot_rolled", None)
    if md is None:
        md = module.add_metadata([L.MetaDataString(module, "aot.rolled")])  # a node of its own
        md.operands = (md, module.add_metadata([L.MetaDataString(module, "llvm.loop.unroll.disable")]))
        module._aot_rolled = md
    return md


@contextmanager
def for_range(b: L.IRBuilder, start, stop, step=1, name: str = "i", loop_md=None, unroll: bool = True):
    """for (i = start; i < stop; i += step) { body }; yields i. The builder ends after the loop.
    `loop_md` is attached to the back edge as llvm.loop metadata (e.g. to keep a loop scalar);
    `unroll=False` attaches rolled_md. Constant bounds with no iteration or one emit no loop."""
    start = i64(start) if isinstance(start, int) else start
    stop = i64(stop) if isinstance(stop, int) else stop
    lo, hi, by = const_int(start), const_int(stop), step if isinstance(step, int) else const_int(step)
    if lo is not None and hi is not None and by is not None and by > 0 and hi - lo <= by:
        # no iteration (its body goes where no edge leads), or one (straight-line code)
        if hi <= lo:
            with dead_code(b):
                yield start
        else:
            yield start
        return
    if not unroll:
        loop_md = rolled_md(b.module)
    with segment_loop(b, start, stop, name, loop_md) as seg:
        yield seg.i
        seg.step = i64(step) if isinstance(step, int) else step


def is_empty(start, stop) -> bool:
    """Whether [start, stop) is known empty when the code is generated (both constants): its loop
    body need not be generated at all (for_range would put it where no edge leads)."""
    lo, hi = const_int(start), const_int(stop)
    return lo is not None and hi is not None and hi <= lo


@contextmanager
def while_loop(b: L.IRBuilder, cond, name: str = "w"):
    """while (cond()) { body }: `cond` emits the test in the loop header."""
    head = b.append_basic_block(f"{name}.head")
    body = b.append_basic_block(f"{name}.body")
    done = b.append_basic_block(f"{name}.done")
    b.branch(head)
    b.position_at_end(head)
    b.cbranch(cond(), body, done)
    b.position_at_end(body)
    yield
    b.branch(head)
    b.position_at_end(done)


class Segment:
    """The loop variable of `segment_loop`; the body sets `step` (how far it got)."""

    def __init__(self, i):
        self.i, self.step = i, None


@contextmanager
def segment_loop(b: L.IRBuilder, begin, end, name: str = "seg", loop_md=None, unroll: bool = True):
    """for (i = begin; i < end; i += step) where the body decides the step (a kernel's row
    segment: from i to the end of its row or of the range); yields a Segment. `loop_md` and
    `unroll` as in for_range."""
    if not unroll:
        loop_md = rolled_md(b.module)
    pre = b.block
    head = b.append_basic_block(f"{name}.head")
    body = b.append_basic_block(f"{name}.body")
    done = b.append_basic_block(f"{name}.done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64, name=name)
    i.add_incoming(begin, pre)
    b.cbranch(b.icmp_signed("<", i, end), body, done)
    b.position_at_end(body)
    seg = Segment(i)
    yield seg
    i.add_incoming(b.add(i, seg.step), b.block)
    back = b.branch(head)
    if loop_md is not None:
        back.set_metadata("llvm.loop", loop_md)
    b.position_at_end(done)


@contextmanager
def if_then(b: L.IRBuilder, cond):
    with b.if_then(cond):
        yield


def elem_ptr(b: L.IRBuilder, dt: DType, base, index):
    return b.gep(base, [index], source_etype=memory_type(dt))


def prefetch(module: L.Module, b: L.IRBuilder, ptr, write: bool = False) -> None:
    """llvm.prefetch of the line at `ptr` into every cache level (no fault: a hint)."""
    fn = declare(module, "llvm.prefetch.p0", L.VoidType(), [L.PointerType(), I32, I32, I32])
    b.call(fn, [ptr, L.Constant(I32, int(write)), L.Constant(I32, 3), L.Constant(I32, 1)])


def _align(dt: DType) -> int:
    return {"bool": 1, "c64": 4, "c128": 8}.get(dt.name, dt.itemsize)


def load_scalar(ctx: LowerCtx, dt: DType, ptr):
    b = ctx.builder
    if dt.is_complex:
        t = scalar_type(dt)
        re = b.load(ptr, typ=t, align=_align(dt))
        im = b.load(b.gep(ptr, [L.Constant(I32, 1)], source_etype=t), typ=t, align=_align(dt))
        return (re, im)
    v = b.load(ptr, typ=memory_type(dt), align=_align(dt))
    return load_fixup(ctx, v, dt)


def store_scalar(ctx: LowerCtx, dt: DType, ptr, v) -> None:
    b = ctx.builder
    if dt.is_complex:
        t = scalar_type(dt)
        b.store(v[0], ptr, align=_align(dt))
        b.store(v[1], b.gep(ptr, [L.Constant(I32, 1)], source_etype=t), align=_align(dt))
        return
    b.store(store_fixup(ctx, v, dt), ptr, align=_align(dt))


def _mem_vec_type(dt: DType, n: int) -> L.VectorType:
    t = scalar_type(dt) if dt.is_complex else memory_type(dt)
    return L.VectorType(t, 2 * n if dt.is_complex else n)


def _interleave_masks(n: int):
    even = L.Constant(L.VectorType(I32, n), list(range(0, 2 * n, 2)))
    odd = L.Constant(L.VectorType(I32, n), list(range(1, 2 * n, 2)))
    inter = L.Constant(L.VectorType(I32, 2 * n), [k // 2 + (n if k % 2 else 0) for k in range(2 * n)])
    return even, odd, inter


def _widen_mask(b: L.IRBuilder, mask, n: int):
    """Lane mask of n -> 2n for interleaved complex memory."""
    idx = L.Constant(L.VectorType(I32, 2 * n), [k // 2 for k in range(2 * n)])
    return b.shuffle_vector(mask, L.Constant(mask.type, L.Undefined), idx)


def load_vector(ctx: LowerCtx, dt: DType, ptr, mask=None):
    """Load ctx.vlen contiguous elements (masked lanes read as zero)."""
    b, n = ctx.builder, ctx.vlen
    vt = _mem_vec_type(dt, n)
    if mask is None:
        v = b.load(ptr, typ=vt, align=_align(dt))
    else:
        m = _widen_mask(b, mask, n) if dt.is_complex else mask
        fn = ctx.function(f"llvm.masked.load.{_suffix(vt)}.p0", vt, [ptr.type, I32, m.type, vt])
        v = b.call(fn, [ptr, L.Constant(I32, _align(dt)), m, L.Constant(vt, None)])
    if dt.is_complex:
        even, odd, _ = _interleave_masks(n)
        return (b.shuffle_vector(v, v, even), b.shuffle_vector(v, v, odd))
    return load_fixup(ctx, v, dt)


def store_vector(ctx: LowerCtx, dt: DType, ptr, v, mask=None, stream: int = 0) -> None:
    """Store a vector (masked lanes only where `mask`); `stream` > 0: a non-temporal store to an
    address aligned to `stream` bytes (codegen/kernels/streaming.py; unmasked only)."""
    b, n = ctx.builder, ctx.vlen
    if dt.is_complex:
        _, _, inter = _interleave_masks(n)
        v = b.shuffle_vector(v[0], v[1], inter)
    else:
        v = store_fixup(ctx, v, dt)
    if mask is None:
        st = b.store(v, ptr, align=stream or _align(dt))
        if stream:
            st.set_metadata("nontemporal", ctx.module.add_metadata([L.Constant(I32, 1)]))
        return
    m = _widen_mask(b, mask, n) if dt.is_complex else mask
    fn = ctx.function(
        f"llvm.masked.store.{_suffix(v.type)}.p0", L.VoidType(), [v.type, ptr.type, I32, m.type]
    )
    b.call(fn, [v, ptr, L.Constant(I32, _align(dt)), m])


def splat_value(ctx: LowerCtx, v):
    if isinstance(v, tuple):
        return tuple(ctx.splat(p) for p in v)
    return ctx.splat(v)


def lane_mask(ctx: LowerCtx, remaining):
    """<vlen x i1>: lane k < remaining."""
    b, n = ctx.builder, ctx.vlen
    return b.icmp_signed("<", iota(n), ctx.splat(remaining))


def _suffix(t: L.Type) -> str:
    e = t.element
    es = f"i{e.width}" if isinstance(e, L.IntType) else {"float": "f32", "double": "f64"}[str(e)]
    return f"v{t.count}{es}"


__all__ = [
    "I1",
    "is_empty",
    "Segment",
    "elem_ptr",
    "for_range",
    "i64",
    "lane_mask",
    "load_scalar",
    "load_vector",
    "segment_loop",
    "splat_value",
    "store_scalar",
    "store_vector",
    "while_loop",
]


def alloca(b: L.IRBuilder, typ: L.Type, size=None, name: str = ""):
    """A stack slot typed as an opaque `ptr` (llvmlite's alloca returns a typed pointer)."""
    a = b.alloca(typ, size=size, name=name)
    a.type = L.PointerType()
    a.slot_type = typ
    return a
