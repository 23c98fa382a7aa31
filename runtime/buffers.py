"""numpy arrays <-> the entry ABI's (data, meta) arrays, on the hot path of every call.

`ArgPacker` is built once per compiled function: it knows each argument's dtype, rank and static
dims, and the output shapes as Python expressions over the size symbols, so a call only checks,
binds symbols, allocates outputs and writes a handful of integers.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import cffi
import numpy as np

ffi = cffi.FFI()
ENTRY_CTYPE = "int32_t(*)(void *[], int64_t[])"
TRAMPOLINE_CTYPE = "int32_t(*)(void *, intptr_t[], int64_t, int64_t, int64_t[])"


# names sympy prints in size expressions (str(expr)), evaluated on Python ints
_SHAPE_FUNCS = {
    "floor": math.floor,
    "ceiling": math.ceil,
    "Max": max,
    "Min": min,
    "Mod": operator.mod,
    "__builtins__": {},
}


def _find_data_offset() -> int | None:
    """Byte offset of the data pointer inside a numpy array object (PyArrayObject_fields.data),
    found by probing rather than assumed; None if it cannot be found."""
    import ctypes

    probe = np.arange(3.0)
    want = probe.ctypes.data
    base = id(probe)
    for off in range(8, 129, 8):
        if ctypes.c_void_p.from_address(base + off).value == want:
            return off
    return None


DATA_OFFSET = _find_data_offset()


@dataclass(frozen=True)
class ArgSpec:
    """One argument or result: numpy dtype and dims (int, or str: a symbol name or an expression
    over symbol names such as "2*s0+1", "s0//2" or sympy's printing "floor(s0/2)", "Max(s0, s1)"
    for results)."""

    dtype: np.dtype
    shape: tuple

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class Signature:
    inputs: tuple[ArgSpec, ...]
    outputs: tuple[ArgSpec, ...]
    name: str = "fn"


class ArgPacker:
    def __init__(self, sig: Signature, trampoline=None):
        self.sig = sig
        self.n_in = len(sig.inputs)
        self.n_data = self.n_in + len(sig.outputs)
        self.n_meta = sum(2 * s.rank for s in sig.inputs + sig.outputs)
        self.in_dtypes = [np.dtype(s.dtype) for s in sig.inputs]
        self.out_dtypes = [np.dtype(s.dtype) for s in sig.outputs]
        self.itemsizes = [d.itemsize for d in self.in_dtypes + self.out_dtypes]
        # (input index, dim index, symbol name) for dims that bind a symbol; static dims to check
        self.binders, self.static = [], []
        for i, s in enumerate(sig.inputs):
            for k, d in enumerate(s.shape):
                if isinstance(d, int):
                    self.static.append((i, k, d))
                else:
                    self.binders.append((i, k, str(d)))
        self.out_exprs = [
            tuple(d if isinstance(d, int) else compile(str(d), "<shape>", "eval") for d in s.shape)
            for s in sig.outputs
        ]
        self.static_out = all(isinstance(d, int) for s in sig.outputs for d in s.shape)
        self._prepare_fast_path(trampoline)

    def _prepare_fast_path(self, trampoline=None) -> None:
        """All shapes static: for C-contiguous arguments the meta array is a constant, and a
        per-signature function (generated Python, unrolled per argument) does the whole call.
        With `trampoline` (runtime.jit.array_trampoline) the native side reads each array's data
        pointer from the array object, so Python passes only id(array)."""
        specs = self.sig.inputs + self.sig.outputs
        self.fast = None
        if not all(isinstance(d, int) for s in specs for d in s.shape):
            return
        meta = []
        env = {
            "ndarray": np.ndarray,
            "empty": np.empty,
            "buf": ffi.from_buffer,
            "tramp": trampoline,
            "off": DATA_OFFSET,
            "n": len(specs),
        }
        lines = [f"def fast(fn, {', '.join(f'a{i}' for i in range(self.n_in))}):"]
        for i, (s, size) in enumerate(zip(specs, self.itemsizes, strict=False)):
            st = _c_strides(s.shape)
            meta += list(s.shape) + st
            env[f"dt{i}"], env[f"sh{i}"] = np.dtype(s.dtype), tuple(s.shape)
            env[f"st{i}"] = tuple(x * size for x in st)
            if i < self.n_in:
                lines.append(
                    f"    if type(a{i}) is not ndarray or a{i}.dtype != dt{i} or a{i}.shape != sh{i} "
                    f"or a{i}.strides != st{i}: return None"
                )
            else:
                lines.append(f"    a{i} = empty(sh{i}, dt{i})")
        env["meta"] = ffi.new("int64_t[]", meta or [0])
        outs = ", ".join(f"a{i}" for i in range(self.n_in, len(specs)))
        if trampoline is not None and DATA_OFFSET is not None:
            ids = ", ".join(f"id(a{i})" for i in range(len(specs)))
            lines.append(f"    return ({outs},), tramp(fn, [{ids}], n, off, meta)")
        else:
            ptrs = ", ".join(f"buf(a{i})" for i in range(len(specs)))
            lines.append(f"    return ({outs},), fn([{ptrs}], meta)")
        exec(compile("\n".join(lines), f"<fast call {self.sig.name}>", "exec"), env)
        self.fast = env["fast"]

    def check(self, args) -> dict:
        """Validate the inputs; returns the symbol bindings."""
        sig = self.sig
        if len(args) != self.n_in:
            raise TypeError(f"{sig.name}() takes {self.n_in} array argument(s), got {len(args)}")
        for i, a in enumerate(args):
            if not isinstance(a, np.ndarray):
                raise TypeError(f"{sig.name}(): argument #{i} must be a numpy array, got {type(a).__name__}")
            if a.dtype != self.in_dtypes[i]:
                raise TypeError(
                    f"{sig.name}(): argument #{i} has dtype {a.dtype}, expected {self.in_dtypes[i]}"
                )
            if a.ndim != sig.inputs[i].rank:
                raise ValueError(
                    f"{sig.name}(): argument #{i} has {a.ndim} dims, expected {sig.inputs[i].rank}"
                )
        for i, k, d in self.static:
            if args[i].shape[k] != d:
                raise ValueError(
                    f"{sig.name}(): argument #{i} has shape {args[i].shape}, expected dim {k} == {d}"
                )
        env: dict = {}
        for i, k, name in self.binders:
            v = args[i].shape[k]
            if env.setdefault(name, v) != v:
                raise ValueError(f"{sig.name}(): size {name} is {env[name]} and {v} in different arguments")
        return env

    def output_shapes(self, env: dict) -> list[tuple]:
        if self.static_out:
            return [tuple(s.shape) for s in self.sig.outputs]
        return [
            tuple(d if isinstance(d, int) else int(eval(d, _SHAPE_FUNCS, env)) for d in expr)
            for expr in self.out_exprs
        ]

    def pack(self, arrays: list[np.ndarray]):
        """(data pointers, meta list) for inputs followed by outputs (any strides)."""
        data = []
        meta = []
        for n, a in enumerate(arrays):
            data.append(ffi.cast("void *", a.__array_interface__["data"][0]))
            meta.extend(a.shape)
            size = self.itemsizes[n]
            st = a.strides
            if any(s % size for s in st):
                raise ValueError(
                    f"{self.sig.name}(): array #{n} has strides {st} that are not a multiple "
                    f"of its item size {size}"
                )
            meta.extend(s // size for s in st)
        return data, meta or [0]


def _c_strides(shape) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]
