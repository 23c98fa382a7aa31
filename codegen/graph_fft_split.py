"""Long transforms of a compiled graph (one row, or a batch row after row) in the eager path's
split (codegen/fft/plan.py's choose_split): the entry fills a job block with the plan constants,
the call's arrays and a cached scratch buffer, and calls the FFT kernels' aot_fft_four_step or
aot_fft_halves (the threads group, exported for the JIT by aot/fft/_native.py; a library links the
whole kernel module, which holds them too), so a compiled transform runs on every core and gives
the eager call's bits (rfft and irfft too, through their half-length transforms). Their thread
count is the build's (Host.split_ways): a library's NAME_set_num_threads does not reach them.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as L

from ir import status

from .fft.names import (
    FLAG_FORWARD,
    FOUR_STEP_JOB,
    HALVES_JOB,
    LANE_BLOCK,
    four_step_name,
    four_step_scratch,
    halves_name,
    halves_scratch,
)
from .fft.plan import choose_split, four_step_tables, halves_tables, machine_cores
from .graph_base import EntryCtx
from .graph_fft_common import float_type, plan_globals, precision_of
from .llvm.builder import const_int
from .llvm.context import declare
from .llvm.loops import alloca, for_range, i64
from .llvm.types import I64, PTR, VOID


def split_call(ectx: EntryCtx, cdtype, n: int, src, dst, howmany, strides: tuple, forward: bool, scale: float,
               vlen: int):
    """(condition, emit) for `howmany` rows of length n split one after another, as the eager path
    runs them, when choose_split gives a split: `emit()` emits them, where `condition` (an i1, or
    None when it always holds) is true at run time: unit strides along the rows (a library's arrays
    may have others), and for halves the output apart from the input (a library's may alias; in
    place, each row is copied to the scratch first); None when the split does not apply. strides =
    (istride, idist, ostride, odist), i64 values."""
    if not ectx.host.calls_fft_threads:
        return None
    choice = choose_split(n, cdtype.numpy.itemsize, vlen, LANE_BLOCK, machine_cores())
    if choice is None:
        return None
    b = ectx.builder
    checks = [b.icmp_signed("==", strides[k], i64(1)) for k in (0, 2) if const_int(strides[k]) != 1]
    if choice[0] == "halves" and src is not dst:  # the batches' whole extents apart (distances >= 0)
        item = i64(cdtype.numpy.itemsize)
        last = b.sub(howmany, i64(1))
        s, d = b.ptrtoint(src, I64), b.ptrtoint(dst, I64)
        s_end = b.add(s, b.mul(b.add(b.mul(last, strides[1]), i64(n)), item))
        d_end = b.add(d, b.mul(b.add(b.mul(last, strides[3]), i64(n)), item))
        checks += [b.icmp_signed(">=", strides[1], i64(0)), b.icmp_signed(">=", strides[3], i64(0)),
                   b.or_(b.icmp_unsigned("<=", s_end, d), b.icmp_unsigned("<=", d_end, s))]
    condition = None
    for c in checks:
        condition = c if condition is None else b.and_(condition, c)
    return condition, lambda: _emit_split(ectx, cdtype, n, src, dst, howmany, strides, choice, forward, scale, vlen)


def _emit_split(ectx: EntryCtx, cdtype, n: int, src, dst, howmany, strides: tuple, choice: tuple, forward: bool,
                scale: float, vlen: int) -> None:
    real = np.dtype(cdtype.real_dtype.numpy)
    threads = max(1, ectx.host.split_ways())
    if choice[0] == "halves":
        words, values, symbol = _halves_job(ectx, cdtype, n, vlen, threads)
        name = halves_name(precision_of(cdtype))
    else:
        words, values, symbol = _four_step_job(ectx, cdtype, *choice[1:], vlen, threads)
        name = four_step_name(precision_of(cdtype))
    b, host, ft = ectx.builder, ectx.host, float_type(cdtype)
    copy = choice[0] == "halves" and src is dst  # in place: each row is copied first, as eagerly
    if copy:
        symbol = {field: offset + 2 * n for field, offset in symbol.items()}
        values += 2 * n
    scratch, failed = host.scratch(b, values * real.itemsize)
    ectx.fail_if(failed, status.OUT_OF_MEMORY)
    words.update(flags=i64(FLAG_FORWARD if forward else 0), nthreads=i64(threads),
                 scale=i64(int(np.float64(scale).view(np.int64))))
    for field, offset in symbol.items():  # pointers into the scratch buffer (values of T)
        words[field] = b.gep(scratch, [i64(offset)], source_etype=ft)
    fields = FOUR_STEP_JOB if choice[0] == "four" else HALVES_JOB
    job = alloca(host.alloca_builder, I64, size=len(fields))

    def put(field, v):
        b.store(b.ptrtoint(v, I64) if isinstance(v.type, L.PointerType) else v,
                b.gep(job, [i64(fields.index(field))], source_etype=I64))

    for field, v in words.items():
        put(field, v)
    with for_range(b, 0, howmany, name="row") as r:  # one row after another, each on every thread
        row = b.gep(src, [b.shl(b.mul(r, strides[1]), i64(1))], source_etype=ft)
        if copy:
            memcpy = declare(ectx.module, "llvm.memcpy.p0.p0.i64", VOID, [PTR, PTR, I64, L.IntType(1)])
            b.call(memcpy, [scratch, row, i64(n * cdtype.numpy.itemsize), L.Constant(L.IntType(1), 0)])
            row = scratch
        put("src", row)
        put("dst", b.gep(dst, [b.shl(b.mul(r, strides[3]), i64(1))], source_etype=ft))
        b.call(declare(ectx.module, name, VOID, [PTR]), [job])
    host.free_scratch(b, scratch)


def _four_step_job(ectx: EntryCtx, cdtype, m1: int, m2: int, square: bool, vlen: int, threads: int):
    """(the job's constant words, scratch values, {field: offset in the scratch}) as
    aot/fft/_exec.py's _FourStep fills them."""
    host = ectx.host
    (h1, t1), (h2, t2) = plan_globals(ectx, cdtype, m1), plan_globals(ectx, cdtype, m2)
    a, bl = four_step_tables(m1, m2, vlen)
    work, region = four_step_scratch(m1, m2, square, vlen)
    words = {"hdr1": h1, "tw1": t1, "hdr2": h2, "tw2": t2, "wa": host.constant("fft_four_a", a.astype(cdtype.numpy)),
             "wb": host.constant("fft_four_b", bl.astype(cdtype.real_dtype.numpy)), "m1": i64(m1), "m2": i64(m2),
             "region": i64(region)}
    if square:
        words["work"] = i64(0)
    return words, work + region * threads, ({"scratch": work} if square else {"work": 0, "scratch": work})


def _halves_job(ectx: EntryCtx, cdtype, n: int, vlen: int, threads: int):
    """As _four_step_job, for aot/fft/_exec.py's _Halves."""
    host = ectx.host
    h = n // 2
    hdr, tw = plan_globals(ectx, cdtype, h)
    shift, lo, hi = halves_tables(n, vlen)
    region = halves_scratch(h, vlen)
    words = {"hdr": hdr, "tw": tw, "h": i64(h), "lo": host.constant("fft_halves_lo", lo.astype(cdtype.numpy)),
             "hi": host.constant("fft_halves_hi", hi.astype(cdtype.numpy)), "shift": i64(shift),
             "region": i64(region)}
    return words, 2 * region, {"scratch": 0}
