"""Loading precompiled object code into the process (for cached kernel families such as FFT).

runtime/jit.py compiles LLVM IR; this adds what a disk-cached family needs: load object bytes into
an MCJIT engine and resolve symbols. (To be merged into runtime/jit.py as `JitEngine.add_object`.)
It also holds the call thunks of aot.fft's eager fast path (`fft_call_thunks`).
"""
from __future__ import annotations

import logging
import threading

import llvmlite.binding as llvm

from .jit import JitEngine

log = logging.getLogger(__name__)
_lock = threading.Lock()


class ObjectEngine:
    """An MCJIT engine holding object files; code lives as long as this object."""

    def __init__(self):
        self._jit = JitEngine()

    def add_object(self, obj: bytes) -> None:
        with _lock:
            self._jit.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            self._jit.engine.finalize_object()

    def address(self, name: str) -> int:
        return self._jit.address(name)

    def export(self, name: str) -> int:
        """Make `name` resolvable by code loaded into any engine of the process (compiled graphs
        call the FFT kernels as external symbols); returns its address."""
        addr = self.address(name)
        llvm.add_symbol(name, addr)
        return addr


# Call thunks of aot.fft's eager fast path: void aot_fft_thunk_{kind}_{p}(int64 *blk, obj src, obj dst).
# blk holds, prepared once per cached case, the kernel pointers and every argument:
#   0 c2c entry, 1 plan header, 2 twiddles, 3 howmany, 4 istride, 5 idist, 6 ostride, 7 odist,
#   8 flags, 9 scale (double), 10 scratch, 11 real pass (r2c_post / c2r_pre), 12 h, 13 roots w,
#   14 r2c: the post pass's scale (double); c2r: the input's row distance, 15 and 16: byte offsets
#   added to the src and dst pointers (one block per outer index of a batch that does not merge),
#   17 and 18: when not null, the src and dst base pointers (a work buffer of the prepared call)
#   in place of the arrays' data pointers.
# src and dst are numpy arrays (id()); their data pointers are read at the probed offset
# (runtime.buffers.ARRAY_LAYOUT), so a call passes three arguments instead of twelve: cffi
# converts each argument (~75 ns apiece), which made the kernel call itself the largest overhead.
# c2c: kernel(src -> dst); r2c: kernel(src -> dst), then the post pass on dst; c2r: the pre pass
# (src -> dst), then the kernel in place on dst.
_THUNK_IR = r"""
define internal {ptr, ptr} @pointers(ptr %blk, ptr %so, ptr %do) alwaysinline {
  %ps = getelementptr i8, ptr %so, i64 {data}
  %src0 = load ptr, ptr %ps
  %pd = getelementptr i8, ptr %do, i64 {data}
  %dst0 = load ptr, ptr %pd
  %a17 = getelementptr i64, ptr %blk, i64 17
  %sabs = load ptr, ptr %a17
  %snull = icmp eq ptr %sabs, null
  %src1 = select i1 %snull, ptr %src0, ptr %sabs
  %a18 = getelementptr i64, ptr %blk, i64 18
  %dabs = load ptr, ptr %a18
  %dnull = icmp eq ptr %dabs, null
  %dst1 = select i1 %dnull, ptr %dst0, ptr %dabs
  %a15 = getelementptr i64, ptr %blk, i64 15
  %soff = load i64, ptr %a15
  %src = getelementptr i8, ptr %src1, i64 %soff
  %a16 = getelementptr i64, ptr %blk, i64 16
  %doff = load i64, ptr %a16
  %dst = getelementptr i8, ptr %dst1, i64 %doff
  %r0 = insertvalue {ptr, ptr} undef, ptr %src, 0
  %r1 = insertvalue {ptr, ptr} %r0, ptr %dst, 1
  ret {ptr, ptr} %r1
}

define internal void @c2c_{p}(ptr %blk, ptr %src, ptr %dst) alwaysinline {
  %fn = load ptr, ptr %blk
  %a1 = getelementptr i64, ptr %blk, i64 1
  %hdr = load ptr, ptr %a1
  %a2 = getelementptr i64, ptr %blk, i64 2
  %tw = load ptr, ptr %a2
  %a3 = getelementptr i64, ptr %blk, i64 3
  %howmany = load i64, ptr %a3
  %a4 = getelementptr i64, ptr %blk, i64 4
  %is = load i64, ptr %a4
  %a5 = getelementptr i64, ptr %blk, i64 5
  %id = load i64, ptr %a5
  %a6 = getelementptr i64, ptr %blk, i64 6
  %os = load i64, ptr %a6
  %a7 = getelementptr i64, ptr %blk, i64 7
  %od = load i64, ptr %a7
  %a8 = getelementptr i64, ptr %blk, i64 8
  %fl64 = load i64, ptr %a8
  %fl = trunc i64 %fl64 to i32
  %a9 = getelementptr i64, ptr %blk, i64 9
  %sc64 = load double, ptr %a9
  %sc = {to_t} double %sc64 to {T}
  %a10 = getelementptr i64, ptr %blk, i64 10
  %scr = load ptr, ptr %a10
  call void %fn(ptr %hdr, ptr %tw, ptr %src, ptr %dst, i64 %howmany, i64 %is, i64 %id, i64 %os, i64 %od, i32 %fl, {T} %sc, ptr %scr)
  ret void
}

define void @aot_fft_thunk_c2c_{p}(ptr %blk, ptr %so, ptr %do) {
  %sd = call {ptr, ptr} @pointers(ptr %blk, ptr %so, ptr %do)
  %src = extractvalue {ptr, ptr} %sd, 0
  %dst = extractvalue {ptr, ptr} %sd, 1
  call void @c2c_{p}(ptr %blk, ptr %src, ptr %dst)
  ret void
}

define void @aot_fft_thunk_r2c_{p}(ptr %blk, ptr %so, ptr %do) {
  %sd = call {ptr, ptr} @pointers(ptr %blk, ptr %so, ptr %do)
  %src = extractvalue {ptr, ptr} %sd, 0
  %dst = extractvalue {ptr, ptr} %sd, 1
  call void @c2c_{p}(ptr %blk, ptr %src, ptr %dst)
  %a11 = getelementptr i64, ptr %blk, i64 11
  %post = load ptr, ptr %a11
  %a12 = getelementptr i64, ptr %blk, i64 12
  %h = load i64, ptr %a12
  %a3 = getelementptr i64, ptr %blk, i64 3
  %rows = load i64, ptr %a3
  %a7 = getelementptr i64, ptr %blk, i64 7
  %od = load i64, ptr %a7
  %a13 = getelementptr i64, ptr %blk, i64 13
  %w = load ptr, ptr %a13
  %a14 = getelementptr i64, ptr %blk, i64 14
  %sc64 = load double, ptr %a14
  %sc = {to_t} double %sc64 to {T}
  call void %post(ptr %dst, i64 %h, i64 %rows, i64 %od, ptr %w, {T} %sc)
  ret void
}

define void @aot_fft_thunk_c2r_{p}(ptr %blk, ptr %so, ptr %do) {
  %sd = call {ptr, ptr} @pointers(ptr %blk, ptr %so, ptr %do)
  %src = extractvalue {ptr, ptr} %sd, 0
  %dst = extractvalue {ptr, ptr} %sd, 1
  %a11 = getelementptr i64, ptr %blk, i64 11
  %pre = load ptr, ptr %a11
  %a12 = getelementptr i64, ptr %blk, i64 12
  %h = load i64, ptr %a12
  %a3 = getelementptr i64, ptr %blk, i64 3
  %rows = load i64, ptr %a3
  %a13 = getelementptr i64, ptr %blk, i64 13
  %w = load ptr, ptr %a13
  %a14 = getelementptr i64, ptr %blk, i64 14
  %idist = load i64, ptr %a14
  call void %pre(ptr %src, i64 %idist, ptr %dst, i64 %h, i64 %h, i64 %rows, ptr %w)
  call void @c2c_{p}(ptr %blk, ptr %dst, ptr %dst)
  ret void
}
"""
THUNK_SLOTS = 19
THUNK_KINDS = ("c2c", "r2c", "c2r")


def fft_call_thunks(engine: ObjectEngine, precision: str, data_offset: int) -> dict[str, int]:
    """Load the call thunks of `precision` ("f32" or "f64") into `engine` (the one holding that
    precision's kernels) for arrays whose data pointer is at `data_offset` bytes; returns
    {kind: address}. The object code comes from the disk cache after the first process."""
    from .jit import _cached_object

    t = {"f32": ("float", "fptrunc"), "f64": ("double", "bitcast")}[precision]
    text = _THUNK_IR.replace("{p}", precision).replace("{T}", t[0]).replace("{to_t}", t[1])
    text = text.replace("{data}", str(data_offset))
    engine.add_object(_cached_object(engine._jit, text))
    return {kind: engine.address(f"aot_fft_thunk_{kind}_{precision}") for kind in THUNK_KINDS}
