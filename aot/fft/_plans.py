"""Executable plans and their LRU cache (bounded by count and bytes).

A plan is data: a direct plan is the kernel header plus twiddles of codegen.fft.plan; a Bluestein
plan adds the chirp and the transformed convolution kernel for a fast length n2 >= 2n - 1.
"""
from __future__ import annotations

import _thread  # not threading: a warm start imports nothing it does not use
from collections import OrderedDict

import numpy as np

from codegen.fft.names import FIELD_BLUE, FIELD_CHIRP, FIELD_HDR, FIELD_N2, FIELD_TW
from codegen.fft.plan import (
    HEADER_FIELDS,
    bluestein_block,
    bluestein_chirp,
    bluestein_kernel,
    bluestein_size,
    factorize,
    make_cplan,
    native_bluestein,
    pass_rows,
    use_bluestein,
)
from ir.records import Record

from ._native import ffi

# from here on plans are built by the kernel module (its planner's 0.1 ms at 2^20 against plan.py's
# 6-50 ms); the bits are plan.py's (plan.roots_at), as a compiled graph bakes them in
NATIVE_PLAN_MIN = 1 << 15


class DirectPlan:
    kind = "direct"

    def __init__(self, n: int, cdtype: np.dtype):
        self.n, self.cdtype = n, cdtype
        # (a length Bluestein would serve has no native direct plan: the planner makes a Bluestein
        # one, running passes this process may not have loaded)
        if n >= NATIVE_PLAN_MIN and not use_bluestein(n):
            self.header, self.twiddles, self._block = _native_plan(n, cdtype)
            self.factors = [int(f) for f in pass_rows(self.header)[:, 0]]
        else:
            cp = make_cplan(n, cdtype)
            self.header, self.twiddles, self.factors = cp.header, cp.twiddles, cp.factors
            self._block = None
        self.nbytes = self.header.nbytes + self.twiddles.nbytes
        self._pointers = None
        self._directions: set = set()  # whose passes `pointers` had loaded

    def pointers(self, k, forward: bool | None = None):
        """(header, twiddles) as cffi pointers for the kernels `k` of this plan's precision, once
        the passes the plan runs in that direction (None: both) are loaded."""
        if forward not in self._directions:
            k.require(self.factors, forward)
            self._directions.add(forward)
        if self._pointers is None:
            self._pointers = (ffi.cast("int64_t *", self.header.ctypes.data),
                              ffi.cast(k.cptr, self.twiddles.ctypes.data))
        return self._pointers


class _Block:
    """Owns a native plan block (released with the last reference: the plan holds it)."""

    def __init__(self, k, block):
        self.k, self.block = k, block

    def __del__(self):
        self.k.plan_release(self.block)


def _native_plan(n: int, cdtype: np.dtype) -> tuple[np.ndarray, np.ndarray, _Block]:
    """Header and twiddles of a direct plan built by codegen/fft/planner.py, as read-only
    arrays over the plan block, and the block's owner (it frees the block: keep it with them)."""
    from ._native import loaded

    k = loaded("f32" if cdtype == np.complex64 else "f64")
    block = k.plan_make(n)
    if block == ffi.NULL:
        raise MemoryError(f"aot.fft: cannot allocate the plan of length {n}")
    words = ffi.cast("int64_t *", block)
    if words[FIELD_BLUE] or words[FIELD_N2] != n:
        k.plan_release(block)
        raise RuntimeError(f"aot.fft: the native planner and plan.py disagree on the length {n}")
    base = int(ffi.cast("uintptr_t", block))
    owner = _Block(k, block)
    nf = words[words[FIELD_HDR] // 8 + 1]
    header = _view(base + words[FIELD_HDR], np.dtype(np.int64), 2 + HEADER_FIELDS * nf)
    ntw = (words[FIELD_CHIRP] - words[FIELD_TW]) // cdtype.itemsize
    return header, _view(base + words[FIELD_TW], cdtype, ntw), owner


def _held_block(n: int, n2: int, cdtype: np.dtype) -> tuple:
    """(block pointer, the array holding it, bytes) of plan.bluestein_block, 64-byte aligned, with
    the passes of n2 loaded (both directions: a call runs both)."""
    from ._native import loaded

    loaded("f32" if cdtype == np.complex64 else "f64").require(factorize(n2))
    block = bluestein_block(n, cdtype)
    raw = np.empty(block.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    held = raw[start:start + block.nbytes]
    held[:] = block
    return ffi.cast("void *", held.ctypes.data), held, block.nbytes


def _view(address: int, dtype: np.dtype, count: int) -> np.ndarray:
    arr = np.frombuffer(ffi.buffer(ffi.cast("char *", address), count * dtype.itemsize), dtype)
    arr.setflags(write=False)
    return arr


class BluesteinPlan:
    """x -> conj(b) * ((x * conj(b)) (*) b) with b_k = exp(i*pi*k^2/n); the circular
    convolution of length n2 runs on a direct plan (pocketfft's fftblue)."""

    kind = "bluestein"

    def __init__(self, n: int, cdtype: np.dtype):
        self.n, self.cdtype = n, cdtype
        self.n2 = bluestein_size(n)
        self.factors = [n]
        self.block = None  # the kernel module's plan (native_bluestein), else the steps below
        if native_bluestein(n, cdtype.itemsize):
            self.block, self._block, self.nbytes = _held_block(n, self.n2, cdtype)
            return
        self.inner = DirectPlan(self.n2, cdtype)
        self.kernel_f = bluestein_kernel(n).astype(cdtype)  # as a compiled graph bakes it in
        self.chirp_conj = np.conj(bluestein_chirp(n)).astype(cdtype)
        self.nbytes = self.inner.nbytes + self.kernel_f.nbytes + self.chirp_conj.nbytes


class PlanCacheStats(Record):
    __slots__ = ("hits", "misses", "evictions", "entries", "bytes")

    def __init__(self, hits: int = 0, misses: int = 0, evictions: int = 0, entries: int = 0, bytes: int = 0):
        self.hits, self.misses, self.evictions, self.entries, self.bytes = hits, misses, evictions, entries, bytes


class PlanCache:
    """LRU of plans keyed by (n, complex dtype). `clear()` empties it; `stats()` reports use."""

    def __init__(self, max_entries: int = 64, max_bytes: int = 512 << 20):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._plans: OrderedDict = OrderedDict()
        self._bytes = 0
        self._stats = PlanCacheStats()
        self._lock = _thread.allocate_lock()

    def get(self, n: int, cdtype: np.dtype):
        key = (n, cdtype.char)
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                self._plans.move_to_end(key)
                self._stats.hits += 1
                return plan
            self._stats.misses += 1
        plan = BluesteinPlan(n, cdtype) if use_bluestein(n) else DirectPlan(n, cdtype)
        with self._lock:
            if key not in self._plans:
                self._plans[key] = plan
                self._bytes += plan.nbytes
                self._evict()
        return plan

    def _evict(self) -> None:
        while len(self._plans) > 1 and (len(self._plans) > self.max_entries or self._bytes > self.max_bytes):
            _, old = self._plans.popitem(last=False)
            self._bytes -= old.nbytes
            self._stats.evictions += 1

    def clear(self) -> None:
        with self._lock:
            self._plans.clear()
            self._bytes = 0

    def stats(self) -> PlanCacheStats:
        with self._lock:
            s = self._stats
            return PlanCacheStats(s.hits, s.misses, s.evictions, len(self._plans), self._bytes)
