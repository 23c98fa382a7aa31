"""The eager fast path: a call whose key was seen before is one allocation and one native call
per pass.

The key (kind, shape, strides, dtype, n, axis, norm; the n-D forms' s and axes in the n and axis
places, call_nd) fixes everything the general path decides for an ndarray input: the plan, the
strides and batch the kernel sees, the scale, the output shape and dtype. The first call of a key
prepares the kernel's arguments in an int64 block (ir.abi_slots.FFT_THUNK: codegen/trampolines.py's
call thunks read it); or a composed entry, when the kernels need a copy of the input first
(_composed: another axis, padding, odd real lengths, the Hermitian forms, chains of one-axis
entries); or records that the key takes the general path (n-D transforms of threaded work, other
dtypes, bad arguments: their errors come from the general path). A long transform split over the
pool, or a batch the pool shares, runs the general path's job ("job" thunks). Later calls
allocate the output and pass the block and the two arrays (irfft2/irfftn also use a work buffer
that the entry keeps).

Entries are per thread (each holds its thread's scratch buffer) and bounded; `plan_cache.clear()`
drops them. Only exact types take this path: ndarray input, n/axis int or None (s/axes tuples or
lists of ints), norm str or None (so a float n still gets numpy's TypeError).
"""
from __future__ import annotations

import _thread  # not threading: a warm start imports nothing it does not use
import itertools
import weakref

import numpy as np

from ir.abi_slots import FFT_THUNK as T

from . import _api, _tables
from ._exec import (
    _JOB,
    _PARALLEL_MIN_WORK,
    _PLAN_JOB,
    HALVES_MIN_BYTES,
    PLANS,
    THREAD_HOOKS,
    _address,
    _batch_dims,
    _cut,
    _elem_strides,
    _flags,
    _precision,
    bluestein_job,
    check_bluestein,
    get_plan,
    new_array,
    num_threads,
    scratch_entry,
    split_job,
    split_of,
)
from ._native import ffi, first_groups
from ._native import loaded as kernels

_MAX_BLOCKS = 64  # kernel calls of one pass (batch dims that do not merge)
_MAX_ENTRIES = 128  # per thread; each holds a plan (at most ~1 MB: the lengths here are short)
_CPLX = (np.dtype(np.complex64), np.dtype(np.complex128))
_REAL = (np.dtype(np.float32), np.dtype(np.float64))
_may_share_memory = np.may_share_memory


class _Cache(dict):
    """One thread's entries (a dict that `weakref` can hold, so clear() reaches every thread's)
    and the number of calls they served."""

    __slots__ = ("__weakref__", "hits")

    def __init__(self):
        super().__init__()
        self.hits = 0


_CACHES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # every live thread's
_ids = itertools.count()


class _Local(_thread._local):
    def __init__(self):
        self.cache = _Cache()
        _CACHES[next(_ids)] = self.cache


local = _Local()


def clear() -> None:
    for cache in list(_CACHES.values()):
        cache.clear()
    _tables.clear()


def _hits() -> int:
    return sum(cache.hits for cache in list(_CACHES.values())) + _tables.hits()


PLANS.clear_hooks.append(clear)
THREAD_HOOKS.append(clear)
PLANS.hit_counts.append(_hits)


def call(kind: str, a: np.ndarray, n, axis, norm):
    """The transform `kind` of ndarray `a` through a prepared entry; None: take the general path.
    (aot.fft's public functions inline the hit path of this; see _public.)"""
    return _keyed(kind, a, n, axis, norm) if _simple(n, axis, norm) else None


def _keyed(kind: str, a: np.ndarray, n, axis, norm):
    """The output of `a`'s entry under key (kind, ..., n, axis, norm), prepared on its first call;
    None: the general path."""
    cache = local.cache
    e = cache.get((kind, a.shape, a.strides, a.dtype, n, axis, norm))
    if e is None:
        return miss(kind, a, n, axis, norm)
    if not e:
        return None
    cache.hits += 1
    return run(e, a)


def miss(kind: str, a: np.ndarray, n, axis, norm):
    """The first call of a key: prepare its entry (or record that it takes the general path); a
    small entry also goes to the kind's native table of its arguments (_tables)."""
    cache = local.cache
    entry = _prepare(kind, a, n, axis, norm)
    e = entry.done() if entry else False
    if e and type(e) is tuple:
        _tables.kind(kind).install((n, axis, norm), a, entry, kernels(entry.precision))
    if len(cache) >= _MAX_ENTRIES:
        cache.clear()
    cache[(kind, a.shape, a.strides, a.dtype, n, axis, norm)] = e
    return run(e, a) if e else None


def run(e: tuple, a: np.ndarray, res: np.ndarray | None = None) -> np.ndarray:
    """The output of entry `e` for input `a`: allocated (or `res`, fit for it: call_into), then
    the kernel calls (thunk, block); a composed entry (_composed) makes its own."""
    if type(e) is not tuple:
        return e(a)
    shape, dtype, convert, thunk, blk, more, _ = e
    if convert:  # real input of a complex transform: convert, then transform in place
        if res is None:
            res = a.astype(dtype)
        else:
            np.copyto(res, a, casting="unsafe")
        thunk(blk, id(res), id(res))
    else:
        if res is None:
            res = new_array(shape, dtype)  # cache-line aligned when large
        thunk(blk, id(a), id(res))
    for thunk, blk, from_a in more:
        thunk(blk, id(a) if from_a else id(res), id(res))
    return res


def call_nd(kind: str, a: np.ndarray, s: tuple | None, axes: tuple | None, norm):
    """As call, for an n-D transform with `s` and `axes` given as tuples of ints (None: the
    default), checked by the caller (_public._ints); they take the key's n and axis places."""
    return _keyed(kind, a, s, axes, norm) if norm is None or type(norm) is str else None


def run_in_place(e: tuple, x: np.ndarray) -> np.ndarray:
    """Entry `e`'s passes in place on `x`, a C-ordered array of its output's shape and dtype that
    the caller owns; `e` must run its passes in place (an entry prepared for real input that it
    converts: _c2c_passes with convert)."""
    _, _, convert, thunk, blk, more, _ = e
    assert convert, "run_in_place needs an entry whose passes run in place"
    thunk(blk, id(x), id(x))
    for thunk, blk, _ in more:
        thunk(blk, id(x), id(x))
    return x


def _simple(n, axis, norm) -> bool:
    return ((n is None or type(n) is int) and (axis is None or type(axis) is int)
            and (norm is None or type(norm) is str))


def call_into(kind: str, a: np.ndarray, n, axis, norm, out: np.ndarray):
    """As call, writing the result into `out` (numpy's `out=`); None: take the general path (which
    checks `out` and says what is wrong with it)."""
    if not _simple(n, axis, norm):
        return None
    cache = local.cache
    key = (kind, a.shape, a.strides, a.dtype, n, axis, norm)
    e = cache.get(key)
    if e is None:  # the first call prepares it
        if call(kind, a, n, axis, norm) is None:
            return None
        e = cache.get(key)
    if e and type(e) is not tuple:  # a composed entry makes its own result: copied, as _api does
        cache.hits += 1
        return _api._finish(e(a), out)
    if not e or not fits(e, a, out):
        return None
    cache.hits += 1
    return run(e, a, out)


def fits(e: tuple, a: np.ndarray, out: np.ndarray) -> bool:
    """Whether entry `e` may write its result for `a` into `out`: the kernels write whole C-ordered
    rows, and read the input while they write, so an `out` of another layout or dtype, or one
    overlapping the input, goes the general way."""
    return (out.shape == e[0] and out.dtype == e[1] and out.flags.carray
            and not _may_share_memory(a, out))


def entry(kind: str, a: np.ndarray, n=None, axis=None, norm=None):
    """The prepared entry of a call (after one call of it), or None: for tests and benchmarks."""
    return local.cache.get((kind, a.shape, a.strides, a.dtype, n, axis, norm)) or None


def kernel_only(kind: str, a: np.ndarray, n=None, axis=None, norm=None):
    """A callable that runs only the native part of the prepared call of `kind` on `a` (into an
    output allocated once): the time the fast path cannot save."""
    call(kind, a, n, axis, norm)
    e = entry(kind, a, n, axis, norm)
    if e is None or type(e) is not tuple:
        raise ValueError(f"{kind}: this call takes the general path or a composed entry (no kernel-only call)")
    shape, dtype, convert, thunk, blk, more, _ = e
    res = a.astype(dtype) if convert else np.empty(shape, dtype)
    src, dst = id(res if convert else a), id(res)
    more = [(t, b, id(a) if from_a else dst) for t, b, from_a in more]

    def native(_alive=(a, res)):  # the arrays whose ids are passed
        thunk(blk, src, dst)
        for t, b, s in more:
            t(b, s, dst)

    return native


def _prepare(kind: str, a: np.ndarray, n, axis, norm):
    """The _Entry of a key, or None when the key takes the general path."""
    if a.size == 0:
        return None
    try:
        return _PREPARE[kind](a, n, axis, norm)
    except (TypeError, ValueError, IndexError, _NoThunks):  # bad arguments: the general path raises
        return None


class _NoThunks(Exception):
    """numpy's array struct is not as probed: no fast path in this process."""


class _Entry:
    """An entry under construction: the output, the kernel calls (thunk, block, reads the input)
    and what they point into. The first call reads the input (or, `convert`, its converted copy)."""

    def __init__(self, shape, dtype, convert: bool = False):
        self.shape, self.dtype, self.convert = tuple(shape), np.dtype(dtype), convert
        self.passes: list = []
        self.blocks: list = []  # the passes' blocks (int64 arrays)
        self.keep: list = []
        self.precision = ""
        self.scratch_values = 0  # of the largest scratch a pass uses
        self.work = None  # a work buffer the blocks point into (irfftn), or None
        self.shared = False  # a pass runs on the pool's threads: never in a native table (_tables)
        self.checks: list = []  # Python passes after the last pass added (_StatusCheck)

    def add(self, kind: str, precision: str, blks: list, from_input: bool) -> None:
        thunks = kernels(precision).thunks
        if thunks is None:
            raise _NoThunks
        self.precision = precision
        for blk in blks:
            self.keep.append(blk)
            self.blocks.append(blk)
            self.passes.append((thunks[kind], ffi.cast("int64_t *", blk.ctypes.data), from_input))

    def done(self) -> tuple:
        (thunk, blk, _), *more = self.passes
        return self.shape, self.dtype, self.convert, thunk, blk, tuple(more), tuple(self.keep)


def _c_strides(shape) -> tuple:
    """Element strides of a C-contiguous array of `shape`."""
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


def _c2c_blocks(entry: _Entry, cdt: np.dtype, shape, axis: int, sstr, dstr, forward: bool, scale: float,
                batches: bool = False):
    """The blocks of one complex pass along `axis`, one kernel call each (the largest batch dim
    is the kernel's, the others are one block per index, as in _exec.run_direct), or None when
    the general path must run. `shape` is the transformed shape; strides are in complex elements.
    `batches`: a batch of enough work for the pool may run as run_direct runs it (_batch_job;
    the n-D transforms' general path may take other routes: not for them)."""
    n = shape[axis]
    main, dims, calls = _cut(shape, axis, sstr, dstr)
    howmany, idist, odist = main
    if calls > _MAX_BLOCKS:
        return None
    if n * howmany * calls >= _PARALLEL_MIN_WORK and not (batches and _batched(howmany, dims) and num_threads() == 1):
        return None  # (on more threads: _batch_job)
    found = _rows_plan(n, cdt, forward)
    if found is None:
        return None
    plan, k = found
    plan.pointers(k, forward)  # loads the plan's passes
    flags, size = _flags(forward, n, idist, howmany, k.vlen)
    scratch = scratch_entry(size, k)
    entry.keep += [plan, scratch[0]]
    entry.scratch_values = max(entry.scratch_values, size)
    blk = np.zeros(len(T), np.int64)
    blk[[T.c2c, T.plan, T.twiddles, T.howmany, T.istride, T.idist, T.ostride, T.odist, T.flags, T.scratch]] = (
        _address(k.c2c), plan.header.ctypes.data, plan.twiddles.ctypes.data, howmany, sstr[axis], idist, dstr[axis],
        odist, flags, scratch[0].ctypes.data)
    blk.view(np.float64)[T.scale] = scale
    return _per_index(blk, dims, cdt.itemsize)


def _rows_plan(n: int, cdt: np.dtype, forward: bool) -> tuple | None:
    """(plan, kernels) of length n when its transforms run whole (a direct plan, not split in
    halves or four steps as the general path's _run_rows splits them, for the same bits), or None."""
    plan = get_plan(n, cdt)
    if plan.kind != "direct":
        return None
    k = kernels(_precision(cdt), first_groups(plan.factors, forward))
    if n * cdt.itemsize >= HALVES_MIN_BYTES and split_of(plan, k) is not None:
        return None
    return plan, k


def _job_block(entry: _Entry, fn, job: np.ndarray, src: int, dst: int, keep) -> np.ndarray:
    """The "job" thunk's block running `fn(job)` with the job's words `src` and `dst` set to the
    call's arrays; the entry keeps what the job points into and never goes to a native table (the
    job runs on the pool)."""
    entry.keep += [job, keep]
    entry.shared = True
    blk = np.zeros(len(T), np.int64)
    blk[[T.c2c, T.job, T.job_src, T.job_dst]] = (_address(fn), job.ctypes.data, src, dst)
    return blk


def _per_index(blk: np.ndarray, dims: list, itemsize: int) -> list:
    """Copies of `blk`, one per index of the batch `dims` [(count, istride, ostride)] (elements),
    each with its byte offsets into the input and output."""
    blks = []
    for idx in itertools.product(*(range(c) for c, _, _ in dims)):
        b = blk.copy()
        b[T.src_offset] = itemsize * sum(i * s for i, (_, s, _) in zip(idx, dims))
        b[T.dst_offset] = itemsize * sum(i * o for i, (_, _, o) in zip(idx, dims))
        blks.append(b)
    return blks


def _batched(howmany: int, dims: list) -> bool:
    """Whether a pass is a batch (not one transform, which runs split or shared: _split_job)."""
    return howmany > 1 or bool(dims)


def _batch_job(entry: _Entry, cdt: np.dtype, shape, axis: int, sstr, dstr, forward: bool, scale: float):
    """[block] of the "job" thunk, one per index of the batch dims the pool's job does not cover,
    for a batch that _exec.run_direct splits over the pool's threads (the same job: the same bits),
    or None."""
    n = shape[axis]
    main, dims, calls = _cut(shape, axis, sstr, dstr)
    if (n * main[0] * calls < _PARALLEL_MIN_WORK or not _batched(main[0], dims) or calls > _MAX_BLOCKS
            or num_threads() == 1):
        return None
    found = _rows_plan(n, cdt, forward)
    if found is None:
        return None
    plan, k = found
    hdr, tw = plan.pointers(k, forward)
    flags, size = _flags(forward, n, main[1], main[0], k.vlen)
    job, dims, scratch = split_job(k, hdr, tw, main, dims, (sstr[axis], dstr[axis]), flags, size, scale,
                                   num_threads())
    blk = _job_block(entry, k.split, job, _JOB["src"], _JOB["dst"], (scratch, plan))
    return _per_index(blk, dims, cdt.itemsize)


def _split_job(entry: _Entry, cdt: np.dtype, shape, axis: int, sstr, dstr, forward: bool, scale: float,
               in_place: bool):
    """[block] of the "job" thunk for one long transform along `axis` that the general path runs
    split in halves or four steps over the pool's threads (_exec.run_direct, the same job: the
    same bits), or None."""
    n = shape[axis]
    if (n * cdt.itemsize < HALVES_MIN_BYTES or int(np.prod(shape)) != n or sstr[axis] != 1
            or dstr[axis] != 1):
        return None
    plan = get_plan(n, cdt)
    if plan.kind != "direct":
        return None
    k = kernels(_precision(cdt))
    fs = split_of(plan, k)
    if fs is None or (in_place and not fs.in_place):
        return None
    job, fn, src, dst, keep = fs.prepared(k, forward, scale)
    return [_job_block(entry, fn, job, src, dst, (keep, plan))]


def _bluestein_job(entry: _Entry, cdt: np.dtype, shape, axis: int, sstr, dstr, forward: bool, scale: float):
    """[block] of the "job" thunk running the kernel module's exec on a Bluestein plan's block
    (_exec.bluestein_job: the general path's job, the same bits), one per index of the batch dims
    it does not cover, or None; the entry then checks the job's status after each call."""
    n = shape[axis]
    plan = get_plan(n, cdt)
    if plan.kind != "bluestein" or plan.block is None:
        return None
    main, dims, calls = _cut(shape, axis, sstr, dstr)
    if calls > _MAX_BLOCKS:
        return None
    k = kernels(_precision(cdt))
    job = bluestein_job(k, plan, main, (sstr[axis], dstr[axis]), forward, scale)
    blk = _job_block(entry, k.plan_job, job, _PLAN_JOB["src"], _PLAN_JOB["dst"], plan)
    entry.checks.append(_StatusCheck(job, n))
    return _per_index(blk, dims, cdt.itemsize)


class _StatusCheck:
    """A pass after a Bluestein job: MemoryError when a row could not allocate its buffer (the
    thunks cannot raise)."""

    def __init__(self, job: np.ndarray, n: int):
        self.job, self.n = job, n

    def __call__(self, blk, src, dst) -> None:
        check_bluestein(self.job, self.n)


def _c2c_passes(a: np.ndarray, lengths, axes, forward: bool, norm):
    """Entry of complex transforms over `axes` (1 pass each, the last axis first), or None."""
    if a.dtype in _CPLX:
        cdt, convert = a.dtype, False
    elif a.dtype in _REAL and a.flags.c_contiguous:
        cdt, convert = _api._complex_dtype(a.dtype), True
    else:
        return None
    shape = list(a.shape)
    for n, ax in zip(lengths, axes):
        if n > shape[ax] or (convert and n != shape[ax]):
            return None  # zero padding, or a cropped copy of converted input: the general path
        shape[ax] = n
    entry = _Entry(shape, cdt, convert)
    out_str = _c_strides(shape)
    src = out_str if convert else _elem_strides(a)
    if src is None:
        return None
    from_input = not convert
    one = len(axes) == 1  # the n-D transforms' general path runs larger passes its own ways
    for n, ax in reversed(list(zip(lengths, axes))):
        scale = _api._scale(norm, n, forward)
        kind, blks = "job", _bluestein_job(entry, cdt, shape, ax, src, out_str, forward, scale)
        if blks is None:
            blks = _split_job(entry, cdt, shape, ax, src, out_str, forward, scale, not from_input)
        if blks is None and one:
            blks = _batch_job(entry, cdt, shape, ax, src, out_str, forward, scale)
        if blks is None:
            kind, blks = "c2c", _c2c_blocks(entry, cdt, shape, ax, src, out_str, forward, scale, one)
        if blks is None:
            return None
        entry.add(kind, _precision(cdt), blks, from_input)
        entry.passes += [(check, None, False) for check in entry.checks]
        entry.checks.clear()
        src, from_input = out_str, False  # later passes run in place on the result
    return entry


def _axis(a: np.ndarray, axis) -> int:
    return _api.normalize_axis_index(-1 if axis is None else axis, a.ndim)


def _prep_c2c(forward: bool):
    def prep(a, n, axis, norm):
        ax = _axis(a, axis)
        n = _api._check_n(a.shape[ax] if n is None else n)
        if n > a.shape[ax] and a.dtype in _CPLX + _REAL:
            return _composed().c2c_padded(a, n, ax, forward, norm)
        return _c2c_passes(a, [n], [ax], forward, norm)

    return prep


def _resized(a: np.ndarray, lengths, axes) -> bool:
    """Whether `s` crops or pads an axis other than the first one transformed (the last of
    `axes`): the general path resizes each axis just before its pass, so the earlier passes' batches
    hold more rows than one entry's would (other batches, other bits): a chain of one-axis entries
    (_composed.Chain) runs it as the general path does."""
    return any(n != a.shape[ax] for n, ax in zip(lengths[:-1], axes[:-1]))


def _cooked(a: np.ndarray, s, axes, invreal: bool = False) -> tuple[list, list]:
    """_api._cook's lengths and axes, each length checked as the general path checks it (an
    irfftn of one value per row asks for 0 points: numpy's ValueError, from the general path)."""
    lengths, axes = _api._cook(a, s, axes, invreal)
    for n in lengths:
        _api._check_n(n)
    return lengths, axes


def _prep_c2cn(forward: bool, default_axes):
    """n-D complex transforms; `n` and `axis` hold the call's `s` and `axes` (tuples, call_nd; None:
    the defaults)."""

    def prep(a, n, axis, norm):
        lengths, axes = _cooked(a, n, default_axes if axis is None else axis)
        axes = [_api.normalize_axis_index(ax, a.ndim) for ax in axes]
        if not axes or len(set(axes)) != len(axes):
            return None
        if _resized(a, lengths, axes):
            return _composed().c2c_chain(a, lengths, axes, forward, norm)
        entry = _c2c_passes(a, lengths, axes, forward, norm)
        if entry is None and lengths[-1] > a.shape[axes[-1]]:  # zero padding: the chain pads
            return _composed().c2c_chain(a, lengths, axes, forward, norm)
        return entry

    return prep


def _r2c_entry(a: np.ndarray, n: int, norm) -> _Entry | None:
    """rfft along the last axis: the half-length complex kernel on the input's pairs, then the
    post pass (even n, unit stride); None when the general path must run."""
    m, last = a.shape[-1], a.ndim - 1
    if a.dtype not in _REAL or n % 2 or n > m:
        return None
    sstr = _elem_strides(a)
    if sstr is None or sstr[last] != 1 or any(s % 2 for d, s in zip(a.shape[:-1], sstr) if d > 1):
        return None
    h, rdt = n // 2, a.dtype
    cdt = np.result_type(rdt, 1j)
    out_shape = a.shape[:-1] + (h + 1,)
    entry = _Entry(out_shape, cdt)
    shape = a.shape[:-1] + (h,)
    pairs = tuple(s // 2 for s in sstr[:-1]) + (1,)  # the input as complex pairs
    blks = _c2c_blocks(entry, cdt, shape, last, pairs, _c_strides(out_shape), True, 1.0)
    if blks is None or len(blks) > 1 or int(np.prod(out_shape)) >= _PARALLEL_MIN_WORK:
        return None
    blk = blks[0]
    k = kernels(_precision(cdt))
    roots = _real_roots(n, cdt)
    blk[T.odist] = h + 1  # the post pass's row distance (also right for one row)
    blk[T.real_pass], blk[T.h], blk[T.roots] = _address(k.r2c_post), h, roots.ctypes.data
    blk.view(np.float64)[T.real_arg] = _api._scale(norm, n, True)
    entry.keep.append(roots)
    entry.add("r2c", _precision(cdt), [blk], True)
    return entry


def _real_roots(n: int, cdt: np.dtype) -> np.ndarray:
    from ._real import _roots

    return _roots(n, cdt.char)


def _c2r_entry(a: np.ndarray, n, norm) -> _Entry | None:
    """irfft along the last axis; None when the general path must run."""
    n = _api._check_n((a.shape[-1] - 1) * 2 if n is None else n)
    if a.dtype not in _CPLX:
        return None
    entry = _Entry(a.shape[:-1] + (n,), _api._real_dtype(a.dtype))
    blk = _c2r_block(entry, a.shape, _elem_strides(a), a.dtype, n, norm)
    if blk is None:
        return None
    entry.add("c2r", _precision(a.dtype), [blk], True)
    return entry


def _c2r_block(entry: _Entry, shape, sstr, cdt: np.dtype, n: int, norm):
    """The block of a c2r pass along the last axis of complex input of `shape` and element
    strides `sstr`: the pre pass into the output (as complex), then the half-length complex
    kernel in place on it (even n, unit stride); None when the general path must run."""
    last = len(shape) - 1
    if n % 2 or n // 2 + 1 > shape[-1] or sstr is None or sstr[last] != 1:
        return None
    h = n // 2
    zshape = shape[:-1] + (h,)
    zstr = _c_strides(zshape)
    dims = _batch_dims(zshape, last, sstr, zstr)
    if len(dims) > 1 or int(np.prod(shape[:-1])) * (h + 1) >= _PARALLEL_MIN_WORK:
        return None
    blks = _c2c_blocks(entry, cdt, zshape, last, zstr, zstr, False, _api._scale(norm, n, False))
    if blks is None:  # one block: the output rows always merge
        return None
    blk = blks[0]
    k = kernels(_precision(cdt))
    roots = _real_roots(n, cdt)
    blk[T.real_pass], blk[T.h], blk[T.roots] = _address(k.c2r_pre), h, roots.ctypes.data
    blk[T.real_arg] = dims[0][1] if dims else h + 1  # the input's row distance
    entry.keep.append(roots)
    return blk


def _prep_rfft(a, n, axis, norm):
    """rfft: the native entry, else a composed one (_composed)."""
    ax = _axis(a, axis)
    n = _api._check_n(a.shape[ax] if n is None else n)
    entry = _r2c_entry(a, n, norm) if ax == a.ndim - 1 else None
    return entry or _composed().r2c(a, n, ax, norm)


def _prep_irfft(a, n, axis, norm):
    """irfft: the native entry, else a composed one (_composed)."""
    ax = _axis(a, axis)
    n = _api._check_n((a.shape[ax] - 1) * 2 if n is None else n)
    entry = _c2r_entry(a, n, norm) if ax == a.ndim - 1 else None
    return entry or _composed().c2r(a, n, ax, norm)


def _prep_hermitian(prep, of_input: bool):
    """hfft/hfft2/hfftn (irfft's of the input's conjugate) and ihfft/ihfft2/ihfftn (the conjugate
    of rfft's), norms swapped: the kind's entry composed with the conjugate."""

    def hermitian(a, n, axis, norm):
        _api._check_norm(norm)
        return _composed().conjugated(prep, a, n, axis, _api._SWAP[norm], of_input)

    return hermitian


def _composed():
    from . import _composed  # (it imports this module: loaded by the first miss that needs it)

    return _composed


def _prep_rfftn(default_axes):
    def prep(a, n, axis, norm):
        lengths, axes = _cooked(a, n, default_axes if axis is None else axis)
        axes = [_api.normalize_axis_index(ax, a.ndim) for ax in axes]
        if not axes or len(set(axes)) != len(axes):
            return None
        if _resized(a, lengths, axes):
            return _composed().r2c_chain(a, lengths, axes, norm)
        if axes[-1] != a.ndim - 1:
            return _composed().r2c_n(a, lengths, axes, norm)
        entry = _r2c_entry(a, lengths[-1], norm)
        if entry is None:  # (odd n, strided rows: the composed rfft's copy first)
            return _composed().r2c_n(a, lengths, axes, norm)
        shape, out_str = entry.shape, _c_strides(entry.shape)
        for ax in reversed(axes[:-1]):  # complex passes in place on the half spectrum
            blks = _c2c_blocks(entry, entry.dtype, shape, ax, out_str, out_str, True,
                               _api._scale(norm, shape[ax], True))
            if blks is None:
                return None
            entry.add("c2c", _precision(entry.dtype), blks, False)
        return entry

    return prep


def _prep_irfftn(default_axes):
    """The complex passes from the input into a work buffer of the entry (kept: entries are per
    thread), in place there, then the c2r pass from it into the output; a real axis that is not
    the array's last, or an `s` that resizes: composed (_composed)."""

    def prep(a, n, axis, norm):
        lengths, axes = _cooked(a, n, default_axes if axis is None else axis, invreal=True)
        axes = [_api.normalize_axis_index(ax, a.ndim) for ax in axes]
        if a.dtype not in _CPLX or not axes or len(set(axes)) != len(axes) or np.prod(a.shape) >= _PARALLEL_MIN_WORK:
            return None
        if _resized(a, lengths, axes):
            return _composed().c2r_chain(a, lengths, axes, norm)
        if axes[-1] != a.ndim - 1:
            return _composed().c2r_n(a, lengths, axes, norm)
        return _irfftn_entry(a, lengths, axes, norm) or _composed().c2r_chain(a, lengths, axes, norm)

    return prep


def _irfftn_entry(a: np.ndarray, lengths: list, axes: list, norm) -> _Entry | None:
    """irfftn whose real axis is the array's last and whose `s` resizes no other axis, as one
    entry; None where it cannot be one (the real pass's input padded, strided rows)."""
    cdt = a.dtype
    work = np.empty(a.shape, cdt)
    entry = _Entry(a.shape[:-1] + (lengths[-1],), _api._real_dtype(cdt))
    entry.keep.append(work)
    entry.work = work
    src, wstr, from_input = _elem_strides(a), _c_strides(a.shape), True
    for ax in axes[:-1]:
        blks = _c2c_blocks(entry, cdt, a.shape, ax, src, wstr, False, _api._scale(norm, a.shape[ax], False))
        if blks is None:
            return None
        for b in blks:
            b[T.src_base], b[T.dst_base] = (0 if from_input else work.ctypes.data), work.ctypes.data
        entry.add("c2c", _precision(cdt), blks, from_input)
        src, from_input = wstr, False
    blk = _c2r_block(entry, a.shape, src, cdt, lengths[-1], norm)
    if blk is None:
        return None
    if not from_input:
        blk[T.src_base] = work.ctypes.data
    entry.add("c2r", _precision(cdt), [blk], from_input)
    return entry


_PREPARE = {
    "fft": _prep_c2c(True), "ifft": _prep_c2c(False), "rfft": _prep_rfft, "irfft": _prep_irfft,
    "hfft": _prep_hermitian(_prep_irfft, True), "ihfft": _prep_hermitian(_prep_rfft, False),
    "fftn": _prep_c2cn(True, None), "ifftn": _prep_c2cn(False, None),
    "fft2": _prep_c2cn(True, [-2, -1]), "ifft2": _prep_c2cn(False, [-2, -1]),
    "rfftn": _prep_rfftn(None), "rfft2": _prep_rfftn([-2, -1]),
    "irfftn": _prep_irfftn(None), "irfft2": _prep_irfftn([-2, -1]),
    "hfftn": _prep_hermitian(_prep_irfftn(None), True), "hfft2": _prep_hermitian(_prep_irfftn([-2, -1]), True),
    "ihfftn": _prep_hermitian(_prep_rfftn(None), False), "ihfft2": _prep_hermitian(_prep_rfftn([-2, -1]), False),
}
