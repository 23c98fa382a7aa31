"""The compiled FFT kernels of this process: built once per (precision, target), cached on disk.

The first use of a precision emits codegen.fft's module, optimises it for the host and stores
the object code in the disk cache (a few seconds); later processes load the object (~10 ms).
"""
from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
from pathlib import Path

import cffi
import numpy as np

log = logging.getLogger(__name__)

_REAL = {"f32": (np.float32, "float"), "f64": (np.float64, "double")}
_C2C_SIG = ("void(*)(const int64_t *, const {T} *, const {T} *, {T} *, int64_t, int64_t, int64_t, int64_t, "
            "int64_t, int32_t, {T}, {T} *)")
_PASS_SIG = "void(*)(const int64_t *, const {T} *, int64_t, const {T} *, {T} *, int64_t, int64_t, int32_t)"
_R2C_SIG = "void(*)({T} *, int64_t, int64_t, int64_t, const {T} *, {T})"
_C2R_SIG = "void(*)(const {T} *, int64_t, {T} *, int64_t, int64_t, int64_t, const {T} *)"
_THUNK_SIG = "void(*)(const int64_t *, intptr_t, intptr_t)"  # (block, id(src), id(dst))
_lock = threading.Lock()
ffi = cffi.FFI()  # cffi calls cost ~1 us less than ctypes and release the GIL as well


@functools.cache
def _source_digest() -> str:
    """Hash of the generator sources: a change to codegen/fft invalidates cached objects."""
    import codegen.fft as pkg

    h = hashlib.sha256()
    for path in sorted(Path(pkg.__file__).parent.glob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()


class Kernels:
    """The c2c entry of one precision as a cffi function pointer (`c2c`, signature _C2C_SIG).

    `ptr(array)` is the data pointer argument for an array, `cptr` the C type of it.
    """

    def __init__(self, precision: str):
        from codegen.fft import c2r_name, entry_name, pass_entry_name, r2c_name
        from codegen.targets import host_target
        from runtime.jit import JitEngine

        self.precision = precision
        self.real_dtype = np.dtype(_REAL[precision][0])
        target = host_target()
        self.vlen = kernel_vlen(precision, target)
        t0 = time.perf_counter()
        obj, source = self._object(target)
        self._engine = JitEngine()
        self._engine.add_object(obj)
        self.ctype = _REAL[precision][1]
        self.cptr = self.ctype + " *"
        self.carray = self.ctype + "[]"
        self.c2c = ffi.cast(_C2C_SIG.format(T=self.ctype), self._engine.export(entry_name(precision)))
        self.pass_range = ffi.cast(_PASS_SIG.format(T=self.ctype), self._engine.address(pass_entry_name(precision)))
        self.r2c_post = ffi.cast(_R2C_SIG.format(T=self.ctype), self._engine.export(r2c_name(precision)))
        self.c2r_pre = ffi.cast(_C2R_SIG.format(T=self.ctype), self._engine.export(c2r_name(precision)))
        from codegen.fft.planner import plan_names

        plan_fns = {w: self._engine.export(name) for w, name in plan_names(precision).items()}
        self.plan_make = ffi.cast("void *(*)(int64_t)", plan_fns["make"])  # compiled graphs call all four
        self.plan_release = ffi.cast("void (*)(void *)", plan_fns["release"])
        self.load_seconds = time.perf_counter() - t0
        log.info("fft kernels %s: %s in %.1f ms", precision, source, 1e3 * self.load_seconds)

    @functools.cached_property
    def thunks(self) -> dict | None:
        """{kind: cffi function} of the eager fast path's call thunks (codegen/trampolines.py,
        loaded by runtime.jit.fft_call_thunks), or None when numpy's array struct is not as probed
        (the general path only)."""
        from codegen.trampolines import HELPERS
        from runtime.buffers import ARRAY_LAYOUT
        from runtime.jit import fft_call_thunks

        if ARRAY_LAYOUT is None:
            return None
        with _lock:
            addrs = fft_call_thunks(self._engine, self.precision, dict(ARRAY_LAYOUT)["data"], HELPERS)
        return {kind: ffi.cast(_THUNK_SIG, addr) for kind, addr in addrs.items()}

    def _object(self, target) -> tuple[bytes, str]:
        return kernel_object(self.precision, target)


def kernel_vlen(precision: str, target) -> int:
    """SIMD lanes of the kernel module of `precision` for `target` (callers size scratch by it)."""
    return max(2, target.vector_len(np.dtype(_REAL[precision][0]).itemsize * 8))


def kernel_object(precision: str, target) -> tuple[bytes, str]:
    """The kernel module's object code for `target` (disk-cached) and where it came from."""
    import llvmlite

    from runtime.disk_cache import DiskCache, cache_key
    from runtime.elf import check_object

    vlen = kernel_vlen(precision, target)
    key = cache_key("aot.fft", precision, str(vlen), target.triple, target.cpu, target.features,
                    llvmlite.__version__, _source_digest())
    cache = DiskCache()
    obj = cache.get(key, check=check_object)  # a damaged entry is discarded and rebuilt
    if obj is not None:
        return obj, "loaded from the disk cache"
    obj = build_object(precision, vlen, target)
    cache.put(key, obj)
    return obj, "compiled"


def build_object(precision: str, vlen: int, target) -> bytes:
    from codegen.fft import emit_module
    from codegen.targets import emit_object, optimize
    from codegen.targets.base import data_layout_of, parse

    mod = parse(str(emit_module(precision, vlen, target.triple, data_layout_of(target))))
    return emit_object(optimize(mod, target), target)


_KERNELS: dict[str, Kernels] = {}


def kernels(precision: str) -> Kernels:
    k = _KERNELS.get(precision)
    if k is None:
        with _lock:
            k = _KERNELS.get(precision)
            if k is None:
                k = _KERNELS[precision] = Kernels(precision)
    return k
