"""Running complex transforms along one axis of numpy arrays on the generated kernels.

The batch dimensions (all but the transform axis) are merged where both arrays allow; the
largest becomes the kernel's `howmany` (its groups of VLEN run across SIMD lanes), the others
are looped here. Big batches are split over a thread pool (cffi releases the GIL during kernel
calls), in whole lane groups; the passes of one long transform are shared by the threads of the
kernels' native pool (codegen/fft/threads.py). Neither changes a result's bits.
"""
from __future__ import annotations

import _thread  # not threading: a warm start imports nothing it does not use
import functools
import itertools
import math

import numpy as np

from codegen.fft.names import (
    C2C_JOB,
    FLAG_BLOCK,
    FLAG_FORWARD,
    FLAG_LANES,
    FOUR_STEP_JOB,
    HALVES_JOB,
    LANE_BLOCK,
    PLAN_JOB,
    PLANES_JOB,
    four_step_scratch,
    halves_scratch,
    scratch_values,
    thread_region,
)
from codegen.fft.plan import HALVES_MIN_BYTES, choose_split, four_step_tables, halves_tables
from codegen.fft.plan import machine_cores as _machine_cores
from runtime import blocks

from ._native import ffi
from ._native import loaded as kernels  # the eager path's: passes load as plans need them
from ._plans import BluesteinPlan, DirectPlan, PlanCache


class _PlanCache(PlanCache):
    """The plan cache, and what was prepared from its plans: the eager fast path registers a hook
    that `clear()` calls (so it frees them) and a count of the calls that reused a plan through
    it (hits in `stats()`)."""

    def __init__(self):
        super().__init__()
        self.clear_hooks: list = []
        self.hit_counts: list = []

    def clear(self) -> None:
        super().clear()
        for hook in self.clear_hooks:
            hook()

    def stats(self):
        s = super().stats()
        s.hits += sum(count() for count in self.hit_counts)
        return s


PLANS = _PlanCache()
_PARALLEL_MIN_WORK = 1 << 16  # complex elements; below this one thread is faster
# single transforms from this size share their passes among threads (smaller ones spend more in
# the per-pass barrier than they gain: c128 2^16 and c64 2^17 gain 20%, c64 2^16 nothing)
_THREADED_MIN_BYTES = 1 << 20
_LANES_MAX_N = 32  # rows up to this length run across lanes even when they are not neighbours
_LANES_LIMIT_N = 1 << 14  # longer transforms run one at a time (lane buffers would leave the caches)
_SCRATCH_KEEP_BYTES = 64 << 20
_local = _thread._local()
_JOB = {name: i for i, name in enumerate(C2C_JOB)}
_PLAN_JOB = {name: i for i, name in enumerate(PLAN_JOB)}
_FOUR = {name: i for i, name in enumerate(FOUR_STEP_JOB)}
_HALVES = {name: i for i, name in enumerate(HALVES_JOB)}
_PLANES = {name: i for i, name in enumerate(PLANES_JOB)}
# n-D transforms over the last two axes run plane by plane (run_planes) when a plane is at most this
PLANE_MAX_BYTES = 1 << 20


def _precision(cdtype: np.dtype) -> str:
    return "f32" if cdtype == np.complex64 else "f64"


_threads: int | None = None


def num_threads() -> int:
    """AOT_NUM_THREADS (read once), else the usable cores; `set_num_threads` overrides it."""
    global _threads
    if _threads is None:
        from runtime import default_num_threads

        _threads = default_num_threads()
    return _threads


THREAD_HOOKS: list = []  # called when the thread count changes (_fast: its jobs hold the count)


def set_num_threads(n: int) -> None:
    global _threads
    if int(n) < 1:
        raise ValueError(f"set_num_threads: expected a positive thread count, got {n!r}")
    _threads = int(n)
    for hook in THREAD_HOOKS:
        hook()


@functools.cache
def _pool():
    import os
    from concurrent.futures import ThreadPoolExecutor  # imported when first used (~1 ms)

    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="aot-fft")


def _scratch(nvalues: int, k) -> object:
    """A per-thread work buffer (pointer), grown on demand and kept: no page faults per call."""
    return scratch_entry(nvalues, k)[1]


def _moveaxis(a: np.ndarray, axis: int, to: int) -> np.ndarray:
    """np.moveaxis for one axis, free when nothing moves (np.moveaxis costs ~5 us a call, which
    small transforms notice)."""
    nd = a.ndim
    if axis % nd == to % nd:
        return a
    return np.moveaxis(a, axis, to)


def new_array(shape, dtype) -> np.ndarray:
    """np.empty(shape, dtype) for outputs and work arrays: from ALIGNED_BYTES on, made by
    runtime/blocks.py's handler, cache-line aligned (threads' parts then share no line), and a large
    one reuses a block an earlier one freed instead of new pages the kernel must zero."""
    dtype = np.dtype(dtype)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
    if not blocks.offered() and math.prod(shape) * dtype.itemsize >= blocks.ALIGNED_BYTES:
        kernels(_precision(np.result_type(dtype, np.complex64))).thunks  # noqa: B018 - offers the handler's functions
    return blocks.empty(shape, dtype)


_BYTE = np.dtype(np.uint8)


def _aligned_empty(count: int, dtype) -> np.ndarray:
    """np.empty(count, dtype) starting on a 64-byte boundary: the kernels store to scratch a
    cache line at a time, and a misaligned scratch costs up to 40% (codegen/fft/module.py)."""
    dtype = np.dtype(dtype)
    nbytes = count * dtype.itemsize + 64
    # (the handler for its cache of large blocks only: this array aligns itself)
    raw = blocks.empty(nbytes, _BYTE) if nbytes >= blocks.MIN_BYTES else np.empty(nbytes, _BYTE)
    skip = -raw.ctypes.data % 64
    return raw[skip: skip + count * dtype.itemsize].view(dtype)


def scratch_entry(nvalues: int, k) -> tuple:
    """(buffer, pointer) of `_scratch`: holding the buffer keeps the pointer valid after the
    thread's buffer has grown."""
    bufs = getattr(_local, "bufs", None)
    if bufs is None:
        bufs = _local.bufs = {}
    entry = bufs.get(k.precision)
    if entry is None or entry[0].size < nvalues:
        buf = _aligned_empty(max(nvalues, 1 << 15), k.real_dtype)
        entry = (buf, ffi.cast(k.cptr, buf.ctypes.data))
        if buf.nbytes <= _SCRATCH_KEEP_BYTES:
            bufs[k.precision] = entry
        else:  # too big to keep per thread; the caller holds the pointer only during its call
            _local.big = entry
    return entry


def _ptr(a: np.ndarray, k):
    """The data pointer of `a` for the kernel (from_buffer is the fast way, contiguous only)."""
    if a.flags.c_contiguous:
        return ffi.from_buffer(k.carray, a)
    return ffi.cast(k.cptr, a.ctypes.data)


def get_plan(n: int, cdtype: np.dtype):
    return PLANS.get(n, cdtype)


def _batch_dims(shape, axis, sstr, dstr):
    """(count, src stride, dst stride) of the batch dims, adjacent ones merged where possible."""
    merged: list[list[int]] = []
    for d in range(len(shape)):
        if d == axis or shape[d] == 1:
            continue
        cnt, s, o = shape[d], sstr[d], dstr[d]
        if merged and merged[-1][1] == cnt * s and merged[-1][2] == cnt * o:
            merged[-1] = [merged[-1][0] * cnt, s, o]
        else:
            merged.append([cnt, s, o])
    return merged


def _cut(shape, axis: int, sstr, dstr) -> tuple:
    """(the kernel's batch (howmany, idist, odist), the other batch dims, their index count) of a
    pass along `axis`, as run_direct cuts it: the largest batch dim is the kernel's."""
    dims = _batch_dims(shape, axis, sstr, dstr)
    n = shape[axis]
    main = dims.pop(max(range(len(dims)), key=lambda i: (dims[i][0], i))) if dims else (1, n, n)
    return main, dims, int(np.prod([c for c, _, _ in dims]))


def _elem_strides(a: np.ndarray) -> tuple | None:
    size = a.itemsize
    if any(s % size for s in a.strides):
        return None
    return tuple(s // size for s in a.strides)


def _flags(forward: bool, n: int, idist: int, howmany: int, vlen: int) -> tuple[int, int]:
    """Kernel flags and scratch size: lanes for neighbouring transforms (idist == 1), for lengths
    the wide in-transform layout cannot cover (n % VLEN), and for short transforms; neighbours
    gather blocks of lane groups."""
    lanes = howmany >= vlen and n <= _LANES_LIMIT_N and (idist == 1 or n % vlen != 0 or n <= _LANES_MAX_N)
    flags = (FLAG_FORWARD if forward else 0) | (FLAG_LANES | FLAG_BLOCK if lanes else 0)
    return flags, scratch_values(n, vlen, idist, flags)


class _FourStep:
    """A transform of length m1 * m2 as m2 columns and m1 rows (codegen/fft/plan.py's
    four_step_split; threads.py's aot_fft_four_step runs it): the plans of m1 and m2, pass 1's
    twiddle tables and the job block, whose src, dst, scale, scratch and nthreads each call sets.
    `square` (a square split): no work array, the rows transform in place and a third pass
    transposes; else the rows transpose while writing from a work array. Either may run in place."""

    in_place = True  # may src be dst

    def __init__(self, k, cdtype: np.dtype, m1: int, m2: int, square: bool):
        self.m1, self.m2, self.square = m1, m2, square
        self.plans = (get_plan(m1, cdtype), get_plan(m2, cdtype))
        a, b = four_step_tables(m1, m2, k.vlen)
        self.wa, self.wb = a.astype(cdtype), b.astype(k.real_dtype)
        self.work_values, self.region = four_step_scratch(m1, m2, square, k.vlen)
        self.job = np.zeros(len(FOUR_STEP_JOB), np.int64)  # each call fills a copy (threads may share the plan)
        self.job[[_FOUR[f] for f in ("wa", "wb", "m1", "m2", "region")]] = (
            self.wa.ctypes.data, self.wb.ctypes.data, m1, m2, self.region)

    def prepared(self, k, forward: bool, scale: float) -> tuple:
        """(job block but for src and dst, its function, src's word, dst's word, what the block
        points into) of one call on this thread's scratch."""
        threads = num_threads()
        (h1, t1), (h2, t2) = (p.pointers(k, forward) for p in self.plans)
        scratch = scratch_entry(self.work_values + self.region * threads, k)
        work = _address(scratch[1])
        regions = work + self.work_values * k.real_dtype.itemsize
        job = self.job.copy()
        job[[_FOUR[f] for f in ("hdr1", "tw1", "hdr2", "tw2", "work", "flags", "scratch", "nthreads")]] = (
            _address(h1), _address(t1), _address(h2), _address(t2), 0 if self.square else work,
            FLAG_FORWARD if forward else 0, regions, threads)
        job.view(np.float64)[_FOUR["scale"]] = scale
        return job, k.four_step, _FOUR["src"], _FOUR["dst"], (self, scratch[0])

    def __call__(self, k, sp, dp, forward: bool, scale: float) -> None:
        _run_job(self.prepared(k, forward, scale), sp, dp)


class _Halves:
    """A transform of even length n as the transforms of its even and odd elements, one a thread,
    and a radix-2 step (threads.py's aot_fft_halves): the half-length plan, the step's two root
    tables and the job block, whose src, dst, flags, scale, scratch and nthreads each call sets.
    Not in place: the unzipping writes dst while it reads src."""

    in_place = False  # may src be dst

    def __init__(self, k, cdtype: np.dtype, n: int):
        h = n // 2
        self.plan = get_plan(h, cdtype)
        shift, lo, hi = halves_tables(n, k.vlen)
        self.lo, self.hi = lo.astype(cdtype), hi.astype(cdtype)
        self.region = halves_scratch(h, k.vlen)
        self.job = np.zeros(len(HALVES_JOB), np.int64)  # each call fills a copy (threads may share the plan)
        self.job[[_HALVES[f] for f in ("h", "lo", "hi", "shift", "region")]] = (
            h, self.lo.ctypes.data, self.hi.ctypes.data, shift, self.region)

    def prepared(self, k, forward: bool, scale: float) -> tuple:
        """As _FourStep.prepared."""
        hdr, tw = self.plan.pointers(k, forward)
        scratch = scratch_entry(2 * self.region, k)
        job = self.job.copy()
        job[[_HALVES[f] for f in ("hdr", "tw", "flags", "scratch", "nthreads")]] = (
            _address(hdr), _address(tw), FLAG_FORWARD if forward else 0, _address(scratch[1]), num_threads())
        job.view(np.float64)[_HALVES["scale"]] = scale
        return job, k.halves, _HALVES["src"], _HALVES["dst"], (self, scratch[0])

    def __call__(self, k, sp, dp, forward: bool, scale: float) -> None:
        _run_job(self.prepared(k, forward, scale), sp, dp)


def _run_job(prepared: tuple, sp, dp) -> None:
    """Run a split transform's job (a .prepared(...) result) from sp into dp."""
    job, fn, src, dst, _keep = prepared
    job[src], job[dst] = _address(sp), _address(dp)
    fn(ffi.cast("int64_t *", job.ctypes.data))


def _address(p) -> int:
    """The address a cffi pointer holds, as an int (for the native job blocks)."""
    return int(ffi.cast("intptr_t", p))


def split_of(plan: DirectPlan, k) -> _FourStep | _Halves | None:
    """The plan's split form (made on first use; codegen/fft/plan.py's choose_split): its halves or
    its four steps, or None."""
    fs = plan.__dict__.get("_split", False)
    if fs is False:
        choice = choose_split(plan.n, plan.cdtype.itemsize, k.vlen, LANE_BLOCK, _machine_cores())
        fs = None
        if choice == ("halves",):
            fs = _Halves(k, plan.cdtype, plan.n)
        elif choice is not None:
            fs = _FourStep(k, plan.cdtype, choice[1], choice[2], square=choice[3])
        plan._split = fs
    return fs


def run_direct(plan: DirectPlan, src: np.ndarray, dst: np.ndarray, forward: bool, scale: float,
               axis: int = -1) -> None:
    """dst = scale * DFT(src) along `axis` (same shapes, both plan.cdtype; src may be dst)."""
    axis %= src.ndim
    k = kernels(_precision(plan.cdtype))
    n = plan.n
    if n * src.itemsize >= HALVES_MIN_BYTES and src.strides[axis] == dst.strides[axis] == src.itemsize:
        fs = split_of(plan, k)
        sstr, dstr = _elem_strides(src), _elem_strides(dst)
        if fs is not None and sstr is not None and dstr is not None:
            if not fs.in_place and np.may_share_memory(src, dst):
                src = src.copy()  # the same bits in place as not
                sstr = _elem_strides(src)
            _run_rows(fs, k, src, dst, axis, sstr, dstr, forward, scale)
            return
    if axis == src.ndim - 1 and src.flags.c_contiguous and dst.flags.c_contiguous and src.size < _PARALLEL_MIN_WORK:
        howmany = src.size // n  # fast path: rows of a C-contiguous array, one call
        hdr, tw = plan.pointers(k, forward)
        flags, size = _flags(forward, n, n, howmany, k.vlen)
        k.c2c(hdr, tw, ffi.from_buffer(k.carray, src), ffi.from_buffer(k.carray, dst), howmany, 1, n, 1, n,
              flags, scale, _scratch(size, k))
        return
    sstr, dstr = _elem_strides(src), _elem_strides(dst)
    if sstr is None:
        src = src.copy()
        sstr = _elem_strides(src)
    dims = _batch_dims(src.shape, axis, sstr, dstr)
    if dims:
        main = max(range(len(dims)), key=lambda i: (dims[i][0], i))
        howmany, idist, odist = dims.pop(main)
    else:
        howmany, idist, odist = 1, 0, 0
    sp, dp = _ptr(src, k), _ptr(dst, k)
    hdr, tw = plan.pointers(k, forward)
    if (not dims and howmany == 1 and n * plan.cdtype.itemsize >= _THREADED_MIN_BYTES and num_threads() > 1
            and sstr[axis] == 1 and dstr[axis] == 1 and (len(plan.factors) >= 2 or not np.shares_memory(src, dst))):
        # in place is fine with two passes or more: the first reads src before the last writes dst
        _threaded_single(plan, k, sp, dp, forward, scale)
        if scale != 1.0:
            dst *= scale
        return
    if not dims and (n * howmany < _PARALLEL_MIN_WORK or howmany == 1):  # the common small case: one call
        flags, size = _flags(forward, n, idist, howmany, k.vlen)
        k.c2c(hdr, tw, sp, dp, howmany, sstr[axis], idist, dstr[axis], odist, flags, scale, _scratch(size, k))
        return
    work = n * howmany * int(np.prod([c for c, _, _ in dims]))
    threads = num_threads() if work >= _PARALLEL_MIN_WORK else 1
    flags, size = _flags(forward, n, idist, howmany, k.vlen)
    if threads > 1:
        _split_over_threads(k, hdr, tw, sp, dp, n, (howmany, idist, odist), dims, (sstr[axis], dstr[axis]),
                            flags, size, scale, threads)
        return
    for idx in itertools.product(*(range(c) for c, _, _ in dims)):
        so = sum(i * s for i, (_, s, _) in zip(idx, dims))
        do = sum(i * o for i, (_, _, o) in zip(idx, dims))
        k.c2c(hdr, tw, sp + 2 * so, dp + 2 * do, howmany, sstr[axis], idist, dstr[axis], odist, flags, scale,
              _scratch(size, k))


def _run_rows(fs: _FourStep | _Halves, k, src, dst, axis: int, sstr, dstr, forward: bool, scale: float) -> None:
    """Every transform along a unit-stride axis in its split (halves or four steps), one after
    another (strides in elements)."""
    sp, dp = _ptr(src, k), _ptr(dst, k)
    dims = [(c, s, o) for d, (c, s, o) in enumerate(zip(src.shape, sstr, dstr)) if d != axis]
    for idx in itertools.product(*(range(c) for c, _, _ in dims)):
        so = sum(i * s for i, (_, s, _) in zip(idx, dims))
        do = sum(i * o for i, (_, _, o) in zip(idx, dims))
        fs(k, sp + 2 * so, dp + 2 * do, forward, scale)


def _split_over_threads(k, hdr, tw, sp, dp, n, main, dims, strides, flags, size, scale, threads) -> None:
    """The batch on the kernels' native pool (codegen/fft/threads.py's c2c split): the largest other
    batch dim as its tasks, any further dims looped here."""
    job, dims, _ = split_job(k, hdr, tw, main, dims, strides, flags, size, scale, threads)
    src, dst = _address(sp), _address(dp)
    item = 2 * k.real_dtype.itemsize
    block = ffi.cast("int64_t *", job.ctypes.data)
    for idx in itertools.product(*(range(c) for c, _, _ in dims)):
        job[_JOB["src"]] = src + item * sum(i * s for i, (_, s, _) in zip(idx, dims))
        job[_JOB["dst"]] = dst + item * sum(i * o for i, (_, _, o) in zip(idx, dims))
        k.split(block)


def split_job(k, hdr, tw, main, dims, strides, flags, size, scale, threads) -> tuple:
    """(job block of the c2c split but for src and dst, the batch dims its caller loops over, the
    scratch buffer it points into) of a batch of transforms: `main` (howmany, idist, odist) and
    `dims` [(count, istride, ostride)] as _batch_dims gives them, `strides` along the axis, in
    elements (_fast's prepared batches run the same job: the same bits)."""
    howmany, idist, odist = main
    dims, tasks = list(dims), (1, 0, 0)
    if dims:
        tasks = dims.pop(max(range(len(dims)), key=lambda i: (dims[i][0], i)))
    elif not flags & FLAG_LANES:  # transforms run one at a time anyway: each its own task
        tasks, (howmany, idist, odist) = main, (1, 0, 0)
    region = thread_region(size)  # from a thread's scratch to the next
    scratch = scratch_entry(region * threads, k)
    job = np.zeros(len(C2C_JOB), np.int64)
    job[[_JOB[f] for f in ("hdr", "tw", "howmany", "istride", "idist", "ostride", "odist", "flags", "scratch",
                           "scratch_values", "tasks", "tsrc", "tdst", "nthreads")]] = (
        _address(hdr), _address(tw), howmany, strides[0], idist, strides[1], odist,
        flags, _address(scratch[1]), region, *tasks, threads)
    job.view(np.float64)[_JOB["scale"]] = scale
    return job, dims, scratch[0]


def _threaded_single(plan: DirectPlan, k, sp, dp, forward: bool, scale: float) -> None:
    """One long transform, each pass shared by the threads of the kernels' native pool
    (codegen/fft/threads.py: a pass split over k, or over i when l1 == 1; the pool's join is the
    barrier between passes). The last pass writes dp."""
    hdr, tw = plan.pointers(k, forward)
    k.shared(hdr, tw, sp, dp, _scratch(4 * plan.n, k), FLAG_FORWARD if forward else 0, num_threads())


def run_planes(src: np.ndarray, dst: np.ndarray, forward: bool, scales: tuple) -> bool:
    """dst = the DFT of src along its last two axes, plane by plane while each is in the caches
    (threads.py's aot_fft_planes), with scales (rows, columns); the same bits for any thread count
    (the choice does not depend on it). False (nothing done) unless both are C-contiguous of the
    same complex dtype, with two planes or more of at most PLANE_MAX_BYTES, direct plans and
    enough work."""
    n1, n2 = src.shape[-2:]
    planes = src.size // max(n1 * n2, 1)
    if (src.ndim < 3 or not (src.flags.c_contiguous and dst.flags.c_contiguous) or src.size < _PARALLEL_MIN_WORK
            or n1 * n2 * src.itemsize > PLANE_MAX_BYTES or planes < 2):
        return False
    rows, cols = get_plan(n2, src.dtype), get_plan(n1, src.dtype)
    if rows.kind != "direct" or cols.kind != "direct":
        return False
    k = kernels(_precision(src.dtype))
    (hr, tr), (hc, tc) = rows.pointers(k, forward), cols.pointers(k, forward)
    flags_rows, size_rows = _flags(forward, n2, n2, n1, k.vlen)
    flags_cols, size_cols = _flags(forward, n1, 1, n2, k.vlen)
    threads = num_threads()
    region = thread_region(max(size_rows, size_cols))
    job = np.zeros(len(PLANES_JOB), np.int64)
    job[[_PLANES[f] for f in ("hdr_rows", "tw_rows", "hdr_cols", "tw_cols", "src", "dst", "planes", "sdist", "ddist",
                              "n1", "n2", "flags_rows", "flags_cols", "scratch", "region", "nthreads")]] = (
        _address(hr), _address(tr), _address(hc), _address(tc), src.ctypes.data, dst.ctypes.data, planes, n1 * n2,
        n1 * n2, n1, n2, flags_rows, flags_cols, _address(_scratch(region * threads, k)), region, threads)
    job.view(np.float64)[[_PLANES["scale_rows"], _PLANES["scale_cols"]]] = scales
    k.planes(ffi.cast("int64_t *", job.ctypes.data))
    return True


def run_bluestein(plan: BluesteinPlan, src: np.ndarray, dst: np.ndarray, forward: bool, scale: float,
                  axis: int) -> None:
    if plan.block is not None:
        _native_bluestein(plan, src, dst, forward, scale, axis % src.ndim)
        return
    x = _moveaxis(src, axis, -1)
    n, n2 = plan.n, plan.n2
    work = new_array(x.shape[:-1] + (n2,), plan.cdtype)  # (a large one: a reused block, no page faults)
    head = work[..., :n]
    work[..., n:] = 0
    # each product is numpy's contiguous loop whatever x's strides (a strided x is copied first): it
    # fuses an FMA where the CPU has one (its strided loop does not), as a compiled graph's does
    if forward and x.strides[-1] == x.itemsize:
        np.multiply(x, plan.chirp_conj, out=head)
    else:
        np.copyto(head, x)
        if not forward:  # backward = conj(forward(conj(x)))
            np.conjugate(head, out=head)
        head *= plan.chirp_conj
    run_direct(plan.inner, work, work, True, 1.0)
    work *= plan.kernel_f
    run_direct(plan.inner, work, work, False, 1.0)
    res = work[..., :n]
    res *= plan.chirp_conj
    if not forward:
        np.conjugate(res, out=res)
    if scale != 1.0:
        res *= scale
    np.copyto(_moveaxis(dst, axis, -1), res)


def _native_bluestein(plan: BluesteinPlan, src: np.ndarray, dst: np.ndarray, forward: bool, scale: float,
                      axis: int) -> None:
    """The kernel module's Bluestein plan over every transform along `axis` (a row at a time, on
    this thread): the largest batch dim in each call, the others one call per index."""
    k = kernels(_precision(plan.cdtype))
    sstr, dstr = _elem_strides(src), _elem_strides(dst)
    if sstr is None:
        src = src.copy()
        sstr = _elem_strides(src)
    main, dims, _ = _cut(src.shape, axis, sstr, dstr)
    job = bluestein_job(k, plan, main, (sstr[axis], dstr[axis]), forward, scale)
    sp, dp = _address(_ptr(src, k)), _address(_ptr(dst, k))
    itemsize = plan.cdtype.itemsize
    for index in itertools.product(*(range(c) for c, _, _ in dims)):
        job[_PLAN_JOB["src"]] = sp + itemsize * sum(i * s for i, (_, s, _) in zip(index, dims))
        job[_PLAN_JOB["dst"]] = dp + itemsize * sum(i * o for i, (_, _, o) in zip(index, dims))
        k.plan_job(ffi.cast("int64_t *", job.ctypes.data))
        check_bluestein(job, plan.n)


def bluestein_job(k, plan: BluesteinPlan, main: tuple, strides: tuple, forward: bool, scale: float) -> np.ndarray:
    """names.PLAN_JOB's block (src and dst left 0) running plan.block over the batch `main`
    (howmany, idist, odist), `strides` along the axis, in elements: on the process's pool in
    whole rows when there is enough work (each row as on one thread: the same bits)."""
    howmany, idist, odist = main
    threads = num_threads() if howmany > 1 and howmany * plan.n2 >= _PARALLEL_MIN_WORK else 1
    pool = 0
    if threads > 1:
        from runtime import pools

        k.split  # noqa: B018 - loads the threads group, whose pool the process takes
        pool = pools.process_pool() or 0
    job = np.zeros(len(PLAN_JOB), np.int64)
    job[[_PLAN_JOB[f] for f in ("plan", "istride", "idist", "ostride", "odist", "flags", "howmany", "nthreads", "pool",
                                "chunk")]] = (
        _address(plan.block), strides[0], idist, strides[1], odist, FLAG_FORWARD if forward else 0, howmany,
        threads, pool, -(-howmany // threads))
    job.view(np.float64)[_PLAN_JOB["scale"]] = scale
    return job


def check_bluestein(job: np.ndarray, n: int) -> None:
    """MemoryError when a row of the job could not allocate its buffer (the job is reset)."""
    if job[_PLAN_JOB["status"]]:
        job[_PLAN_JOB["status"]] = 0
        raise MemoryError(f"aot.fft: no memory for a Bluestein transform of length {n}")


def c2c(src: np.ndarray, dst: np.ndarray, axis: int, forward: bool, scale: float) -> None:
    """dst = scale * DFT(src) along axis; both complex of one dtype, same shape."""
    n = src.shape[axis]
    if src.size == 0:
        return
    plan = get_plan(n, src.dtype)
    if plan.kind == "bluestein":
        run_bluestein(plan, src, dst, forward, scale, axis)
    else:
        run_direct(plan, src, dst, forward, scale, axis)
