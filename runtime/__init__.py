"""runtime: turn LLVM modules into running code and call it with numpy arrays.

`load(llvm_ir, entry, signature)` JIT-compiles a module whose entry follows the ABI of
codegen/entry.py (`int32 entry(void **data, int64 *meta)`) and returns a `JitFunction`: call it
with numpy arrays, get numpy outputs. Never imports aot, codegen or llvmlite.ir.
"""

from __future__ import annotations

import os

import numpy as np

from . import blocks
from .buffers import (
    ARRAY_LAYOUT,
    ArgPacker,
    ArgSpec,
    Signature,
    entry_function,
    readable_layout,
)

__all__ = ["ArgSpec", "JitFunction", "NativeError", "NativeMemoryError", "NativeValueError", "Signature",
           "default_num_threads", "load"]


class NativeError(RuntimeError):
    """Generated code returned a non-zero status."""


class NativeValueError(NativeError, ValueError):
    """Generated code found an input numpy rejects with ValueError (e.g. a negative integer power)."""


class NativeZeroDivisionError(NativeError, ZeroDivisionError):
    """A size expression of the compiled code divided by a size that is zero at run time."""


class NativeMemoryError(NativeError, MemoryError):
    """An intermediate buffer could not be allocated (numpy raises MemoryError there too)."""


class NativeIndexError(NativeError, IndexError):
    """Generated code found an index out of bounds (numpy's IndexError of np.take and indexing)."""


class NativeLinAlgError(NativeError, np.linalg.LinAlgError):
    """numpy's LinAlgError: a singular matrix (inv, solve), one not positive definite (cholesky), an
    SVD or eigenproblem that does not converge (a NaN in svd's input, lstsq's NaN or infinity)."""


# the Python exception class (ir/status.py EntryStatus.python_error) -> the one raised
_NATIVE_ERRORS = {"MemoryError": NativeMemoryError, "IndexError": NativeIndexError,
                  "ValueError": NativeValueError, "ZeroDivisionError": NativeZeroDivisionError,
                  "LinAlgError": NativeLinAlgError}


def native_error(name: str, rc: int) -> NativeError:
    """The exception for an entry function's status `rc` (ir/status.py ENTRY; `name`: the function)."""
    from ir import status  # only when a call failed: a warm start imports no compiler package

    s = status.ENTRY_BY_CODE.get(rc)
    if s is None:
        return NativeError(f"{name}: native error code {rc}")
    cls = _NATIVE_ERRORS.get(s.python_error, NativeError)
    return cls(s.message) if s.own_message else cls(f"{name}: {s.message}")


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
    outputs like a call does, or None for arrays it cannot take (another dtype or shape, unaligned,
    byte-swapped, not an ndarray: then call the JitFunction, which checks and converts them).
    `helpers` (codegen.trampolines.HELPERS, which runtime does not import) builds the native call
    trampoline (aot_call_strided), which checks the arrays, makes the outputs and calls the entry:
    `fast` is then that builtin itself. Without it `fast` checks in Python, only C-contiguous
    arrays, and symbolic signatures have none. `trampoline`: the address of an aot_call_strided
    already loaded (a warm start's shared library holds one), used instead of building it.
    """

    def __init__(self, address: int, signature: Signature, keepalive=None, *, tuple_outputs: bool = False,
                 helpers=None, trampoline: int | None = None):
        self.signature = signature
        self.address = address
        self.tuple_outputs = tuple_outputs
        self._fn = None  # the entry as a cffi function: made when the general path first needs it
        self._packer = ArgPacker(signature)
        self._keepalive = keepalive
        self._helpers = helpers  # codegen.trampolines.HELPERS: native argument checks (else in Python)
        self._given_trampoline = trampoline
        self.object_key = None  # the disk-cache key of the object code it runs (llvm backend), if any
        self._trampoline = self._array_trampoline() if self._packer.all_static else None
        self.fast = self.fast_function(unwrap=not tuple_outputs)

    def _array_trampoline(self):
        if ARRAY_LAYOUT is None:  # an array struct the trampoline cannot read
            return None
        if self._given_trampoline is not None or self._helpers is None:
            return self._given_trampoline
        from .jit import array_trampoline

        return array_trampoline(ARRAY_LAYOUT, self._helpers)

    def fast_function(self, unwrap: bool, guard=None):
        """A `fast` returning one array (`unwrap`, one output) or a tuple. Static signatures need no
        guard (their dtypes and shapes imply it); with symbolic dims `guard(arrays)` (the caller's
        shape guards) must be given and the trampoline available, else there is none (None)."""
        p = self._packer
        if p.all_static:
            if self._trampoline is None:
                return p.fast_function(self.address, self._fail, unwrap)
            return p.strided_fast_function(self.address, self._trampoline, self._fail, unwrap)
        strided = self._array_trampoline() if guard is not None else None
        if strided is None:
            return None
        return p.strided_fast_function(self.address, strided, self._fail, unwrap, guard)

    def returning_tuples(self) -> JitFunction:
        """The same function, always returning a tuple of outputs."""
        same = JitFunction(self.address, self.signature, self._keepalive, tuple_outputs=True,
                           helpers=self._helpers, trampoline=self._given_trampoline)
        same.object_key = self.object_key
        return same

    def __call__(self, *args):
        if self.fast is not None:
            res = self.fast(*args)
            if res is not None:
                return res
        return self._call_general(args)

    def _fail(self, rc: int):
        raise native_error(self.signature.name, rc)

    def _call_general(self, args):
        p = self._packer
        # copies with the same values where the code could not read them (byte order, alignment)
        # (and C-contiguous where the code assumes it)
        args = [readable_layout(a, i < p.n_in and p.sig.inputs[i].contiguous) if isinstance(a, np.ndarray) else a
                for i, a in enumerate(args)]
        env = p.check(args)
        outs = [blocks.empty(tuple(shape), dt) for shape, dt in zip(p.output_shapes(env), p.out_dtypes, strict=False)]
        data, meta = p.pack(list(args) + outs)
        if self._fn is None:
            self._fn = entry_function(self.address)
        rc = self._fn(data, meta)
        if rc:
            self._fail(rc)
        return outs[0] if len(outs) == 1 and not self.tuple_outputs else tuple(outs)


def load(llvm_ir, entry: str, signature: Signature, *, optimize: bool = True, helpers=None) -> JitFunction:
    """JIT-compile `llvm_ir` (text, llvmlite module or binding ModuleRef) and wrap `entry` (`helpers`:
    see JitFunction)."""
    from .jit import default_engine

    engine = default_engine()
    name = engine.add(llvm_ir, optimize=optimize, entries=[entry])[entry]
    return JitFunction(engine.address(name), signature, helpers=helpers)
