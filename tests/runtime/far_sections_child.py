"""Run by test_jit_far_sections.py in a process of its own: lays out the address space so that the
JIT engine's next code mapping lands 63 GiB below its next read-only data mapping, then loads object
code emitted for target `sys.argv[1]` ("jit": codegen.jit_target, "library": the shared-library
host target) and calls it. Prints "same" when the result is numpy's; aborts or misbehaves when the
object's code reaches its constants with 32-bit offsets."""

from __future__ import annotations

import ctypes
import sys

from codegen.targets import host_target, jit_target
from codegen.targets.base import emit_object, parse
from runtime.jit import default_engine

PAGE, GIB = 4096, 1 << 30
STEPS = 600  # code over a page (it cannot take the one-page hole), constants under one
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_PROT_NONE, _FLAGS = 0, 0x02 | 0x20 | 0x4000  # MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
_FAILED = ctypes.c_void_p(-1).value


def _reserve(size: int) -> int | None:
    p = _libc.mmap(None, size, _PROT_NONE, _FLAGS, -1, 0)
    return None if p in (None, _FAILED) else p


def _chain_ir() -> str:
    lines = ["define double @chain(double %x0) {"]
    for i in range(STEPS):
        op, c = ("fmul", "1.0000001") if i % 2 == 0 else ("fadd", "0.25")
        lines.append(f"  %x{i + 1} = {op} double %x{i}, {c}")
    return "\n".join([*lines, f"  ret double %x{STEPS}", "}"])


def _far_apart_layout() -> None:
    """Linux maps a new region at the top of the highest free gap that fits: reserve 64 GiB, fill
    every gap above it, then free one page at its top (room for the constants only) and 1 GiB at
    its bottom (where the code goes)."""
    low = _reserve(64 * GIB)
    assert low, "cannot reserve address space"
    for size in [1 << k for k in range(30, 11, -1)]:
        while (p := _reserve(size)) is not None and p > low:
            pass
        if p is not None:
            _libc.munmap(p, size)
    _libc.munmap(low + 64 * GIB - PAGE, PAGE)
    _libc.munmap(low, GIB)


def main(which: str) -> None:
    target = jit_target() if which == "jit" else host_target()
    obj = emit_object(parse(_chain_ir()), target)
    engine = default_engine()
    _far_apart_layout()
    engine.add_object(obj)
    fn = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(engine.address("chain"))
    want = 1.5
    for i in range(STEPS):
        want = want * 1.0000001 if i % 2 == 0 else want + 0.25
    got = fn(1.5)
    print("same" if got == want else f"differs: {got!r} != {want!r}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
