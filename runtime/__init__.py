"""runtime: turn LLVM modules into running code and call it with numpy arrays.

`load(llvm_ir, entry, signature)` JIT-compiles a module whose entry follows the ABI of
codegen/entry.py (`int32 entry(void **data, int64 *meta)`) and returns a `JitFunction`: call it
with numpy arrays, get numpy outputs. Never imports aot, codegen or llvmlite.ir.
"""

from __future__ import annotations

import os

import numpy as np

from .buffers import ENTRY_CTYPE, TRAMPOLINE_CTYPE, ArgPacker, ArgSpec, Signature, ffi

__all__ = ["ArgSpec", "JitFunction", "NativeError", "Signature", "default_num_threads", "load"]


class NativeError(RuntimeError):
    """Generated code returned a non-zero status."""


# status codes of the entry ABI (codegen/entry.py STATUS)
_STATUS = {1: "out of memory allocating an intermediate buffer", 2: "index out of range"}


def default_num_threads() -> int:
    """AOT_NUM_THREADS, else the cores this process may use."""
    env = os.environ.get("AOT_NUM_THREADS")
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ValueError(f"AOT_NUM_THREADS must be a positive integer, got {env!r}") from None
        if n < 1:
            raise ValueError(f"AOT_NUM_THREADS must be a positive integer, got {env!r}")
        return n
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class JitFunction:
    """A compiled graph entry callable with numpy arrays; returns a tuple of outputs
    (or the single output when the function has one)."""

    def __init__(self, address: int, signature: Signature, keepalive=None):
        self.signature = signature
        self.address = address
        from .jit import array_trampoline

        self._fn = ffi.cast(ENTRY_CTYPE, address)
        self._packer = ArgPacker(signature, ffi.cast(TRAMPOLINE_CTYPE, array_trampoline()))
        self._keepalive = keepalive
        self._entry = ffi.cast("void *", address)

    def __call__(self, *args):
        p = self._packer
        if p.fast is not None:
            res = p.fast(self._entry, *args) if len(args) == p.n_in else None
            if res is not None:
                outs, rc = res
                if rc:
                    self._fail(rc)
                return outs[0] if len(outs) == 1 else tuple(outs)
        return self._call_general(args)

    def _fail(self, rc: int):
        raise NativeError(f"{self.signature.name}: {_STATUS.get(rc, f'native error code {rc}')}")

    def _call_general(self, args):
        p = self._packer
        env = p.check(args)
        outs = [np.empty(shape, dt) for shape, dt in zip(p.output_shapes(env), p.out_dtypes, strict=False)]
        data, meta = p.pack(list(args) + outs)
        rc = self._fn(data, meta)
        if rc:
            self._fail(rc)
        return outs[0] if len(outs) == 1 else tuple(outs)


def load(llvm_ir, entry: str, signature: Signature, *, optimize: bool = True) -> JitFunction:
    """JIT-compile `llvm_ir` (text, llvmlite module or binding ModuleRef) and wrap `entry`."""
    from .jit import default_engine

    engine = default_engine()
    name = engine.add(llvm_ir, optimize=optimize, entries=[entry])[entry]
    return JitFunction(engine.address(name), signature)
