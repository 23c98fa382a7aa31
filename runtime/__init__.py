"""runtime: turn LLVM modules into running code and call it with numpy arrays.

`load(llvm_ir, entry, signature)` JIT-compiles a module whose entry follows the ABI of
codegen/entry.py (`int32 entry(void **data, int64 *meta)`) and returns a `JitFunction`: call it
with numpy arrays, get numpy outputs. Never imports aot, codegen or llvmlite.ir.
"""

from __future__ import annotations

import os

import numpy as np

from .buffers import ARRAY_LAYOUT, ENTRY_TYPE, TRAMPOLINE_TYPE, ArgPacker, ArgSpec, Signature, function_at

__all__ = ["ArgSpec", "JitFunction", "NativeError", "NativeValueError", "Signature", "default_num_threads", "load"]


class NativeError(RuntimeError):
    """Generated code returned a non-zero status."""


class NativeValueError(NativeError, ValueError):
    """Generated code found an input numpy rejects with ValueError (e.g. a negative integer power)."""


class NativeZeroDivisionError(NativeError, ZeroDivisionError):
    """A size expression of the compiled code divided by a size that is zero at run time."""


_PYTHON_ERRORS = {3: NativeValueError, 4: NativeZeroDivisionError}  # raised as Python/numpy raise them

# status codes of the entry ABI (codegen/entry.py STATUS)
_STATUS = {1: "out of memory allocating an intermediate buffer", 2: "index out of range",
           3: "Integers to negative integer powers are not allowed.", 4: "division by zero"}


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
    (or the single output when the function has one, unless `tuple_outputs`).

    `fast` (None for signatures with symbolic dims) is the hot path: `fast(*arrays)` returns the
    outputs like a call does, or None when the arrays are not exactly C-contiguous ndarrays of the
    signature's dtypes and shapes (then call the JitFunction, which checks and handles any strides).
    """

    def __init__(self, address: int, signature: Signature, keepalive=None, *, tuple_outputs: bool = False):
        self.signature = signature
        self.address = address
        self.tuple_outputs = tuple_outputs
        self._fn = function_at(ENTRY_TYPE, address)
        self._packer = ArgPacker(signature)
        self._keepalive = keepalive
        trampoline = None
        if ARRAY_LAYOUT is not None and self._packer.all_static:
            from .jit import array_trampoline

            trampoline = function_at(TRAMPOLINE_TYPE, array_trampoline(ARRAY_LAYOUT))
        self._trampoline = trampoline
        self.fast = self.fast_function(unwrap=not tuple_outputs)

    def fast_function(self, unwrap: bool, guard=None):
        """A `fast` returning one array (`unwrap`, one output) or a tuple. Static signatures check
        everything natively; with symbolic dims `guard(arrays)` (the caller's shape guards) must be
        given, else there is none (None)."""
        p = self._packer
        if p.all_static:
            return p.fast_function(self.address, self._trampoline, self._fail, unwrap)
        if guard is None or ARRAY_LAYOUT is None:
            return None
        from .jit import array_trampoline

        strided = function_at(TRAMPOLINE_TYPE, array_trampoline(ARRAY_LAYOUT, strided=True))
        return p.strided_fast_function(self.address, strided, self._fail, unwrap, guard)

    def returning_tuples(self) -> JitFunction:
        """The same function, always returning a tuple of outputs."""
        return JitFunction(self.address, self.signature, self._keepalive, tuple_outputs=True)

    def __call__(self, *args):
        if self.fast is not None:
            res = self.fast(*args)
            if res is not None:
                return res
        return self._call_general(args)

    def _fail(self, rc: int):
        if rc in _PYTHON_ERRORS:  # Python's and numpy's own messages: the symbol name means nothing here
            raise _PYTHON_ERRORS[rc](_STATUS[rc])
        raise NativeError(f"{self.signature.name}: {_STATUS.get(rc, f'native error code {rc}')}")

    def _call_general(self, args):
        p = self._packer
        # generated code reads native byte order: swap other arrays (same values, numpy's dtype rules)
        args = [a.astype(a.dtype.newbyteorder("=")) if isinstance(a, np.ndarray) and not a.dtype.isnative else a
                for a in args]
        env = p.check(args)
        outs = [np.empty(shape, dt) for shape, dt in zip(p.output_shapes(env), p.out_dtypes, strict=False)]
        data, meta = p.pack(list(args) + outs)
        rc = self._fn(data, meta)
        if rc:
            self._fail(rc)
        return outs[0] if len(outs) == 1 and not self.tuple_outputs else tuple(outs)


def load(llvm_ir, entry: str, signature: Signature, *, optimize: bool = True) -> JitFunction:
    """JIT-compile `llvm_ir` (text, llvmlite module or binding ModuleRef) and wrap `entry`."""
    from .jit import default_engine

    engine = default_engine()
    name = engine.add(llvm_ir, optimize=optimize, entries=[entry])[entry]
    return JitFunction(engine.address(name), signature)
