"""Parallel-for over a kernel's flat range, with pthreads from generated code.

`void aot.parallel_for(ptr kernel, ptr args, i64 total, i64 nthreads)`, emitted once per module:
creates nthreads-1 threads with pthread_create, runs chunk 0 on the calling thread, then joins.
A thread that cannot be created has its chunk run inline, so failure only costs speed. Chunks are
contiguous and rounded to `align` elements (a multiple of the vector length) so that rows split
at vector boundaries.
"""

from __future__ import annotations

from llvmlite import ir as L

from ..llvm.loops import alloca, for_range, i64
from ..llvm.types import I32, I64, PTR, VOID
from .common import KERNEL_TYPE

# job record passed to a worker: {kernel, args, begin, end}
JOB = L.LiteralStructType([PTR, PTR, I64, I64])
PARALLEL_FOR = "aot.parallel_for"


def parallel_for(module: L.Module) -> L.Function:
    fn = module.globals.get(PARALLEL_FOR)
    if fn is not None:
        return fn
    worker = _worker(module)
    create = _declare(module, "pthread_create", I32, [PTR, PTR, PTR, PTR])
    join = _declare(module, "pthread_join", I32, [I64, PTR])
    fn = L.Function(module, L.FunctionType(VOID, [PTR, PTR, I64, I64, I64]), name=PARALLEL_FOR)
    fn.linkage = "internal"
    kern, args, total, nthreads, align = fn.args
    b = L.IRBuilder(fn.append_basic_block("entry"))
    # chunk = ceil(total / nthreads) rounded up to a multiple of align
    chunk = b.sdiv(b.sub(b.add(total, nthreads), i64(1)), nthreads)
    chunk = b.mul(b.sdiv(b.sub(b.add(chunk, align), i64(1)), align), align)
    jobs = alloca(b, JOB, size=nthreads, name="jobs")
    tids = alloca(b, I64, size=nthreads, name="tids")
    oks = alloca(b, L.IntType(8), size=nthreads, name="ok")

    def bounds(t):
        lo = b.mul(t, chunk)
        hi = b.add(lo, chunk)
        lo = b.select(b.icmp_signed("<", total, lo), total, lo)
        hi = b.select(b.icmp_signed("<", total, hi), total, hi)
        return lo, hi

    with for_range(b, 1, nthreads, name="t") as t:
        lo, hi = bounds(t)
        job = b.gep(jobs, [t], source_etype=JOB)
        for k, v in enumerate([kern, args, lo, hi]):
            b.store(v, b.gep(job, [L.Constant(I32, 0), L.Constant(I32, k)], source_etype=JOB))
        rc = b.call(create, [b.gep(tids, [t], source_etype=I64), L.Constant(PTR, None), worker, job])
        ok = b.icmp_signed("==", rc, L.Constant(I32, 0))
        b.store(b.zext(ok, L.IntType(8)), b.gep(oks, [t], source_etype=L.IntType(8)))
        with b.if_then(b.not_(ok)):
            b.call(
                as_callee(kern, KERNEL_TYPE), [args, lo, hi]
            )  # could not start a thread: do its share here
    lo, hi = bounds(i64(0))
    b.call(as_callee(kern, KERNEL_TYPE), [args, lo, hi])
    with for_range(b, 1, nthreads, name="j") as t:
        ok = b.load(b.gep(oks, [t], source_etype=L.IntType(8)), typ=L.IntType(8))
        with b.if_then(b.icmp_unsigned("!=", ok, L.Constant(L.IntType(8), 0))):
            b.call(join, [b.load(b.gep(tids, [t], source_etype=I64), typ=I64), L.Constant(PTR, None)])
    b.ret_void()
    return fn


def _worker(module: L.Module) -> L.Function:
    fn = L.Function(module, L.FunctionType(PTR, [PTR]), name="aot.worker")
    fn.linkage = "internal"
    b = L.IRBuilder(fn.append_basic_block("entry"))
    (job,) = fn.args
    f = [
        b.load(b.gep(job, [L.Constant(I32, 0), L.Constant(I32, k)], source_etype=JOB), typ=t)
        for k, t in enumerate([PTR, PTR, I64, I64])
    ]
    b.call(as_callee(f[0], KERNEL_TYPE), f[1:])
    b.ret(L.Constant(PTR, None))
    return fn


def as_callee(ptr, ftype: L.FunctionType):
    """Make a pointer value callable by llvmlite (opaque pointers: the callee type is explicit)."""
    return _Indirect(ptr, ftype)


class _Indirect:
    """A function pointer as llvmlite's CallInstr expects a callee: `function_type` + reference."""

    def __init__(self, value, ftype: L.FunctionType):
        self.value, self.function_type, self.type = value, ftype, value.type

    def get_reference(self) -> str:
        return self.value.get_reference()


def _declare(module: L.Module, name: str, ret, args) -> L.Function:
    fn = module.globals.get(name)
    return fn if fn is not None else L.Function(module, L.FunctionType(ret, args), name=name)
