"""Large outputs reuse freed blocks: the process's numpy memory handler (ir.abi_slots.BLOCK_CACHE).

The kernel zeroes every page a process maps fresh, and glibc maps each block of 32 MB or more
fresh on every malloc and unmaps it on free: a compiled `np.sqrt(a) * 2 + 1` over 1e7 float64
spent half its 9 ms faulting in its new output. The arrays aot makes of at least ALIGNED_BYTES
(the call builtins' outputs, the FFTs') are allocated with the handler made here, current only
around their allocation: every block it gives starts on a cache line, and the array keeps the
handler, whose free keeps a block of MIN_BYTES or more for the next such array, up to BLOCK_ROWS
blocks and `AOT_BLOCK_CACHE_MB` megabytes (default 512; 0 turns the cache off). numpy's own
arrays never see it; `trim()` gives the blocks back.

The handler's functions are native (codegen/block_cache.py), emitted in the blocks module (loaded
once into the JIT, linked into each warm-started library) and in aot.fft's call thunks; the first
module loaded offers them (`offer`), and the handler points at that copy for the life of the
process (every loaded module stays mapped: the JIT's engines are never torn down, ctypes never
closes a library). Compiled graphs (JIT code) allocate their intermediate buffers through the
blocks module as well, so an intermediate of a large call reuses a block too. The handler struct,
its name, the capsule and the cache block are never freed: arrays may outlive every Python object
at interpreter exit.
"""
from __future__ import annotations

import _thread
import ctypes
import math
import os

import numpy as np

from ir.abi_slots import (
    BLOCK_CACHE,
    BLOCK_FUNCTIONS,
    BLOCK_ROW,
    BLOCK_ROWS,
    BLOCKS_CTX,
    PY_DATA_MEM_SET_HANDLER,
    block_symbol,
)

from .numpy_api import numpy_api_table

ENV_VAR = "AOT_BLOCK_CACHE_MB"
# The cache keeps every block the handler makes (from ALIGNED_BYTES): when it kept them from 4 MB
# only, glibc gave the handler's aligned blocks of 1-4 MB back to the kernel on free, and a loop
# `r = f(x)` faulted its result in anew on every call: a compiled sin(x) * 2 + y over 150k-400k
# float64 took 190-510 page faults and 350-940 us a call, 95-430 us from the cache; complex128
# FFTs of 2^17 on two threads 1.17 ms against 0.42 ms. (numpy's own blocks of that size, from
# malloc, were reused without faults.)
MIN_BYTES = 1 << 20
# Outputs of at least ALIGNED_BYTES are made with the handler (and so kept by its cache), for its
# alignment too: its blocks start on a cache line, numpy's (glibc's) 16 bytes into one. Threads
# splitting a misaligned output share the lines at their boundaries, which a transposing pass (the
# FFT's four steps) has in every row: a complex128 FFT of 65536 on two threads ran 15% slower
# into numpy's array than into an aligned one. Below 1 MB the handler's blocks lost: in one
# process alternating both, an FFT of 27648 complex128 (432 KB) ran 5-9% slower into the
# handler's block than into numpy's (why was not found), 32768 (512 KB) the same, 65536 and 131072
# 3-8% faster.
ALIGNED_BYTES = 1 << 20
_NAME = b"aot_blocks"  # the handler's name, as np.core.multiarray.get_handler_name reports it
_CAPSULE_NAME = b"mem_handler"  # numpy's name for handler capsules

_lock = _thread.allocate_lock()
_state: dict = {}  # "capsule" (None: no handler in this process), "ctx", "trim", "set_handler", "swap"


def max_bytes() -> int:
    """The cache's capacity in bytes (AOT_BLOCK_CACHE_MB megabytes, default 512; 0: no cache)."""
    env = os.environ.get(ENV_VAR, "").strip() or "512"
    try:
        mb = float(env)
    except ValueError:
        mb = -1.0
    if not 0 <= mb < 1 << 40:  # (NaN fails too)
        raise ValueError(f"{ENV_VAR} must be a number of megabytes >= 0 (0 turns the cache off), got {env!r}")
    return int(mb * (1 << 20))


def offer(module: str, resolve) -> None:
    """A module with the handler's functions was loaded (`module`'s BLOCK_FUNCTIONS; `resolve(symbol)`:
    an address, KeyError when it has none): install the handler with them unless one is installed
    (nothing when the cache is off or numpy lacks the API), then point the module's BLOCKS_CTX at
    the cache block, when it has one (the blocks module: its copy of compiled graphs' allocator
    uses the cache from then on)."""
    if max_bytes() == 0:
        return
    with _lock:
        if not _state:
            _install_with(module, resolve)
        ctx = _state.get("ctx")
    if ctx:
        try:
            ctypes.c_void_p.from_address(resolve(BLOCKS_CTX)).value = ctx
        except (KeyError, AttributeError):
            pass


def _install_with(module: str, resolve) -> None:
    set_handler = _set_handler_address()
    if set_handler is None:
        _state["capsule"] = None
        return
    try:
        fns = {name: resolve(block_symbol(module, name)) for name in BLOCK_FUNCTIONS}
    except (KeyError, AttributeError):  # a module built before it had them: a later one offers
        return
    _state.update(_install(fns), set_handler=set_handler, trim=fns["trim"])


def offered() -> bool:
    """Whether a module offered the handler's functions (or the handler cannot be made)."""
    return bool(_state)


def plan_slots() -> dict:
    """The call builtins' slots (ir.abi_slots.STRIDED_PLAN's set_handler, handler, handler_bytes):
    handler 0 (none) until a module offered the functions."""
    capsule = _state.get("capsule")
    return {"set_handler": _state.get("set_handler", 0), "handler": 0 if capsule is None else id(capsule),
            "handler_bytes": ALIGNED_BYTES}


def empty(shape, dtype: np.dtype) -> np.ndarray:
    """np.empty(shape, dtype), made with the handler when it holds at least ALIGNED_BYTES and the
    handler is installed: cache-line aligned, and from the cache when large (`shape` a tuple or an
    int of Python ints; on the dynamic call path: a few hundred ns, ~1 us with the handler)."""
    capsule = _state.get("capsule")
    if capsule is None or math.prod(shape if type(shape) is tuple else (shape,)) * dtype.itemsize < ALIGNED_BYTES:
        return np.empty(shape, dtype)
    swap = _swap()
    old = swap(capsule)
    try:
        return np.empty(shape, dtype)
    finally:
        swap(old)


def trim() -> None:
    """Free every cached block (arrays using the handler are not affected)."""
    if _state.get("trim"):
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_state["trim"])(_state["ctx"])


def cached_bytes() -> int:
    """Bytes held in the cache now."""
    ctx = _state.get("ctx")
    return 0 if not ctx else ctypes.c_int64.from_address(ctx + 8 * BLOCK_CACHE.cached_bytes).value


def _install(fns: dict) -> dict:
    """The cache block, the handler struct (numpy's PyDataMem_Handler: name[127], version, then
    PyDataMemAllocator: ctx, malloc, calloc, realloc, free) and its capsule, in memory never freed."""
    raw = ctypes.pythonapi.PyMem_RawMalloc
    raw.restype, raw.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    n_ctx = len(BLOCK_CACHE) + BLOCK_ROWS * len(BLOCK_ROW)
    ctx = raw(8 * n_ctx)
    handler = raw(128 + 8 * 5)
    name = raw(len(_CAPSULE_NAME) + 1)
    if not (ctx and handler and name):
        raise MemoryError("aot: the block cache's handler")
    ctypes.memset(ctx, 0, 8 * n_ctx)
    words = (ctypes.c_int64 * n_ctx).from_address(ctx)
    words[BLOCK_CACHE.min_bytes], words[BLOCK_CACHE.max_bytes] = MIN_BYTES, max_bytes()
    ctypes.memset(handler, 0, 128)
    ctypes.memmove(handler, _NAME, len(_NAME))
    ctypes.c_uint8.from_address(handler + 127).value = 1  # version
    ptrs = (ctypes.c_void_p * 5).from_address(handler + 128)
    ptrs[:] = [ctx, fns["malloc"], fns["calloc"], fns["realloc"], fns["free"]]
    ctypes.memmove(name, _CAPSULE_NAME + b"\0", len(_CAPSULE_NAME) + 1)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    capsule = new(handler, name, None)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(capsule))  # never deallocated: arrays point at it
    lock = ctypes.c_int64.from_address(ctx + 8 * BLOCK_CACHE.lock)
    # a child of fork() has none of the parent's other threads: a lock one of them held is free
    os.register_at_fork(after_in_child=lambda: setattr(lock, "value", 0))
    return {"capsule": capsule, "ctx": ctx}


def _set_handler_address() -> int | None:
    """numpy's PyDataMem_SetHandler (its C API table), or None when the table cannot be read."""
    table = numpy_api_table()
    if table is None:
        return None
    return ctypes.c_void_p.from_address(table + PY_DATA_MEM_SET_HANDLER * 8).value or None


def _swap():
    """PyDataMem_SetHandler as a ctypes function (returns the previous handler, a new reference)."""
    fn = _state.get("swap")
    if fn is None:
        fn = _state["swap"] = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(_state["set_handler"])
    return fn
