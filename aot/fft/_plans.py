"""Executable plans and their LRU cache (bounded by count and bytes).

A plan is data: a direct plan is the kernel header plus twiddles of codegen.fft.plan; a Bluestein
plan adds the chirp and the transformed convolution kernel for a fast length n2 >= 2n - 1.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from codegen.fft.plan import bluestein_chirp, good_size, make_cplan, use_bluestein

from ._native import ffi


class DirectPlan:
    kind = "direct"

    def __init__(self, n: int, cdtype: np.dtype):
        cp = make_cplan(n, cdtype)
        self.n, self.cdtype, self.factors = n, cdtype, cp.factors
        self.header, self.twiddles = cp.header, cp.twiddles
        self.nbytes = cp.nbytes
        self._pointers = None

    def pointers(self, k):
        """(header, twiddles) as cffi pointers for the kernels `k` of this plan's precision."""
        if self._pointers is None:
            self._pointers = (ffi.cast("int64_t *", self.header.ctypes.data),
                              ffi.cast(k.cptr, self.twiddles.ctypes.data))
        return self._pointers


class BluesteinPlan:
    """x -> conj(b) * ((x * conj(b)) (*) b) with b_k = exp(i*pi*k^2/n); the circular
    convolution of length n2 runs on a direct plan (pocketfft's fftblue)."""

    kind = "bluestein"

    def __init__(self, n: int, cdtype: np.dtype, run_direct):
        self.n, self.cdtype = n, cdtype
        self.n2 = good_size(2 * n - 1)
        self.inner = DirectPlan(self.n2, cdtype)
        b = bluestein_chirp(n)
        kernel = np.zeros(self.n2, np.complex128)
        kernel[:n] = b
        kernel[self.n2 - n + 1:] = b[1:][::-1]
        # transform in double whatever the plan's precision, then fold in 1/n2
        inner128 = self.inner if cdtype == np.complex128 else DirectPlan(self.n2, np.dtype(np.complex128))
        run_direct(inner128, kernel[None, :], kernel[None, :], True, 1.0 / self.n2)
        self.kernel_f = kernel.astype(cdtype)
        self.chirp_conj = np.conj(b).astype(cdtype)
        self.factors = [n]
        self.nbytes = self.inner.nbytes + self.kernel_f.nbytes + self.chirp_conj.nbytes


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    evictions: int = 0
    entries: int = 0
    bytes: int = 0


class PlanCache:
    """LRU of plans keyed by (n, complex dtype). `clear()` empties it; `stats()` reports use."""

    def __init__(self, max_entries: int = 64, max_bytes: int = 512 << 20):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._plans: OrderedDict = OrderedDict()
        self._bytes = 0
        self._stats = CacheStats()
        self._lock = threading.Lock()

    def get(self, n: int, cdtype: np.dtype, run_direct):
        key = (n, cdtype.char)
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                self._plans.move_to_end(key)
                self._stats.hits += 1
                return plan
            self._stats.misses += 1
        plan = BluesteinPlan(n, cdtype, run_direct) if use_bluestein(n) else DirectPlan(n, cdtype)
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

    def stats(self) -> CacheStats:
        with self._lock:
            s = self._stats
            return CacheStats(s.hits, s.misses, s.evictions, len(self._plans), self._bytes)
