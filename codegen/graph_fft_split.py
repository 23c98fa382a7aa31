"""One long transform of a compiled graph in the eager path's split (codegen/fft/plan.py's
choose_split): the entry fills a job block with the plan constants, the call's arrays and a cached
scratch buffer, and calls the FFT kernels' aot_fft_four_step or aot_fft_halves (the threads group,
exported for the JIT by aot/fft/_native.py; a library links the whole kernel module, which holds
them too), so a compiled transform runs on every core and gives the eager call's bits. Their thread
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
from .llvm.loops import alloca, i64
from .llvm.types import I64, PTR, VOID


def split_call(ectx: EntryCtx, cdtype, n: int, src, dst, howmany, strides: tuple, forward: bool, scale: float,
               vlen: int):
    """(condition, emit) for the split transform of one row when choose_split gives one: `emit()`
    emits it, where `condition` (an i1, or None when it always holds) is true at run time: unit
    strides (a library's arrays may have others), and for halves src and dst apart (a library's
    output may alias its input); None when the split does not apply."""
    if not ectx.host.calls_fft_threads or const_int(howmany) != 1:
        return None
    choice = choose_split(n, cdtype.numpy.itemsize, vlen, LANE_BLOCK, machine_cores())
    if choice is None or (choice[0] == "halves" and src is dst):
        return None
    b = ectx.builder
    checks = [b.icmp_signed("==", strides[k], i64(1)) for k in (0, 2) if const_int(strides[k]) != 1]
    if choice[0] == "halves":
        size = i64(n * cdtype.numpy.itemsize)
        s, d = b.ptrtoint(src, I64), b.ptrtoint(dst, I64)
        checks.append(b.or_(b.icmp_unsigned("<=", b.add(s, size), d), b.icmp_unsigned("<=", b.add(d, size), s)))
    condition = None
    for c in checks:
        condition = c if condition is None else b.and_(condition, c)
    return condition, lambda: _emit_split(ectx, cdtype, n, src, dst, choice, forward, scale, vlen)


def _emit_split(ectx: EntryCtx, cdtype, n: int, src, dst, choice: tuple, forward: bool, scale: float,
                vlen: int) -> None:
    real = np.dtype(cdtype.real_dtype.numpy)
    threads = max(1, ectx.host.split_ways())
    if choice[0] == "halves":
        words, values, symbol = _halves_job(ectx, cdtype, n, vlen, threads)
        name = halves_name(precision_of(cdtype))
    else:
        words, values, symbol = _four_step_job(ectx, cdtype, *choice[1:], vlen, threads)
        name = four_step_name(precision_of(cdtype))
    b, host = ectx.builder, ectx.host
    scratch, failed = host.scratch(b, values * real.itemsize)
    ectx.fail_if(failed, status.OUT_OF_MEMORY)
    words.update(src=src, dst=dst, flags=i64(FLAG_FORWARD if forward else 0), nthreads=i64(threads),
                 scale=i64(int(np.float64(scale).view(np.int64))))
    for field, offset in symbol.items():  # pointers into the scratch buffer (values of T)
        words[field] = b.gep(scratch, [i64(offset)], source_etype=float_type(cdtype))
    fields = FOUR_STEP_JOB if choice[0] == "four" else HALVES_JOB
    job = alloca(host.alloca_builder, I64, size=len(fields))
    for k, field in enumerate(fields):
        v = words[field]
        b.store(b.ptrtoint(v, I64) if isinstance(v.type, L.PointerType) else v, b.gep(job, [i64(k)], source_etype=I64))
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
