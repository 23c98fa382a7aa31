"""One pool of worker threads per process.

The JIT's compiled graphs, every FFT kernel library and every warm-start library carry a pool of
their own (codegen/kernels/parallel.py: a library must run where no other aot code is loaded).
Two pools in one process each keep a worker spinning for ~0.4 ms after a job, so a call of one
right after a call of the other ran with three busy threads on two cores: an eager FFT of
complex128 (256, 1024) on two threads took 300 us alone, 380-410 us right after a compiled
elementwise call; 300-308 us with one pool. Every pool is exported as ir.abi_slots.POOL_ENTRY;
all but the FFT libraries' can pass their jobs on to another (POOL_DELEGATE). `offer` makes the
first pool loaded the process's, or an FFT library's when it comes (its code is left as it was:
with the delegate's check in its parallel_for, complex128 65536 on two threads ran ~10% slower in
some alternating runs, a difference later runs did not reproduce), and points every other pool
that can delegate at it. A job started while the process's pool is
busy (another thread's, or one from inside its chunks) runs on the calling thread, as with any
one pool. Only modules that stay loaded for good are offered: the JIT's code, the FFT libraries
and the warm-start libraries.
"""
from __future__ import annotations

import _thread
import ctypes

from ir.abi_slots import POOL_DELEGATE, POOL_ENTRY

_lock = _thread.allocate_lock()
_SETTER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_process: dict = {}  # "entry": the process pool's POOL_ENTRY; "fixed": it cannot delegate (an FFT library's)
_followers: list[tuple[int, int]] = []  # (POOL_ENTRY, POOL_DELEGATE) of every offered pool that can delegate


def offer(resolve) -> None:
    """A module was loaded for good: `resolve(symbol)` gives its functions' addresses (KeyError
    when it has none). Modules without a pool are ignored."""
    try:
        entry = resolve(POOL_ENTRY)
    except KeyError:
        return
    try:
        setter = resolve(POOL_DELEGATE)
    except KeyError:
        setter = None
    with _lock:
        if setter is not None:
            _followers.append((entry, setter))
            if not _process:
                _process.update(entry=entry, fixed=False)
            else:
                _point(entry, setter)
        elif not _process.get("fixed"):
            _process.update(entry=entry, fixed=True)
            for e, s in _followers:
                _point(e, s)
        # else: a second pool that cannot delegate keeps its own workers


def _point(entry: int, setter: int) -> None:
    """The pool at `entry` passes its jobs on to the process's (nothing when it is the process's)."""
    if entry != _process["entry"]:
        _SETTER(setter)(_process["entry"])


def process_pool() -> int | None:
    """The address of the process pool's POOL_ENTRY, or None before a module with a pool was loaded."""
    return _process.get("entry")
