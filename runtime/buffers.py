"""numpy arrays <-> the entry ABI's (data, meta) arrays, on the hot path of every call.

`ArgPacker` is built once per compiled function: it knows each argument's dtype, rank and static
dims, and the output shapes as Python expressions over the size symbols, so a call only checks,
binds symbols, allocates outputs and writes a handful of integers.
"""

from __future__ import annotations

import ctypes
import math
import operator
import sys
from dataclasses import dataclass

import _cffi_backend as _cffi  # the cffi runtime itself: cffi.FFI() would import pycparser (~30 ms)
import numpy as np

_I32 = _cffi.new_primitive_type("int32_t")
_I64 = _cffi.new_primitive_type("int64_t")
_INTPTR = _cffi.new_primitive_type("intptr_t")
_I64_PTR = _cffi.new_pointer_type(_I64)
_INTPTR_PTR = _cffi.new_pointer_type(_INTPTR)
_I64_ARRAY = _cffi.new_array_type(_I64_PTR, None)
# int32 entry(void **data, int64 *meta): data pointers are passed as integers
ENTRY_TYPE = _cffi.new_function_type((_INTPTR_PTR, _I64_PTR), _I32, 0)


def function_at(ctype, address: int):
    """A callable cffi function pointer of type `ctype` (ENTRY_TYPE) at `address`."""
    return _cffi.cast(ctype, address)


class _MethodDef(ctypes.Structure):  # CPython's PyMethodDef
    _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p), ("flags", ctypes.c_int),
                ("doc", ctypes.c_char_p)]


_METH_FASTCALL = 0x80
_method_defs: dict[tuple[int, str], _MethodDef] = {}  # kept for the process: builtins point at them
_new_builtin = ctypes.pythonapi.PyCFunction_NewEx
_new_builtin.restype, _new_builtin.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]


def builtin_at(address: int, name: str, this: np.ndarray):
    """A Python builtin calling the METH_FASTCALL function at `address` with `this` as its self
    (runtime.jit.array_trampoline's helpers: `this` is their int64 context block)."""
    key = (address, name)
    if key not in _method_defs:
        _method_defs[key] = _MethodDef(name.encode(), address, _METH_FASTCALL, None)
    return _new_builtin(ctypes.addressof(_method_defs[key]), this, None)


def _c_api(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value


# the trampolines' ir.abi_slots.PY_HEADER slots: the C API they call; the GIL is released around
# entries with at least this many elements in some argument (numpy's ufunc loops: 500)
GIL_ELEMENTS = 1024
PY_HEADER_SLOTS = {"py_long": _c_api("PyLong_FromLong"), "save_thread": _c_api("PyEval_SaveThread"),
                   "restore_thread": _c_api("PyEval_RestoreThread"), "gil_elements": GIL_ELEMENTS}


def int64_array(values: list[int]):
    return _cffi.newp(_I64_ARRAY, values)


# the names that size expressions in Python call: ir.size_render.python_source's (max, min, math),
# and those of sympy's own printing (str(expr)) in hand-written signatures
_SHAPE_FUNCS = {
    "max": max,
    "min": min,
    "math": math,
    "floor": math.floor,
    "ceiling": math.ceil,
    "Max": max,
    "Min": min,
    "Mod": operator.mod,
    "__builtins__": {},
}


# PyArrayObject_fields (numpy's public struct, the same in numpy 1.x and 2.x on 64-bit targets): the
# fields the native helpers read, ir.abi_slots.ARRAY_FIELDS (not imported here: `import runtime`,
# e.g. by aot_load, does not need the ir package)
_NUMPY_LAYOUT = (("type", 8), ("data", 16), ("nd", 24), ("dims", 32), ("strides", 40), ("descr", 56),
                 ("flags", 64))


def _probe_array_layout() -> tuple[tuple[str, int], ...] | None:
    """The byte offsets of an array object's fields that the native argument check reads, verified
    on two arrays of this process (the pointer fields only after every plain field matched, so a
    different layout is never dereferenced); None when they do not match (the hot path then checks
    arrays in Python)."""
    off = dict(_NUMPY_LAYOUT)
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return None

    def word(a, o):
        return ctypes.c_void_p.from_address(id(a) + o).value or 0

    def int64s(p, n):
        return [ctypes.c_int64.from_address(p + 8 * k).value for k in range(n)]

    unaligned = np.frombuffer(bytearray(17), np.float64, 2, offset=1)
    for a in (np.zeros((3, 5), np.float32), np.zeros((7, 2, 9), np.int64)[:, :, ::2], unaligned):
        plain = (word(a, off["type"]) == id(np.ndarray) and word(a, off["data"]) == a.ctypes.data
                 and ctypes.c_int32.from_address(id(a) + off["nd"]).value == a.ndim
                 and ctypes.c_int32.from_address(id(a) + off["flags"]).value == a.flags.num
                 and word(a, off["descr"]) == id(a.dtype))
        if not plain or int64s(word(a, off["dims"]), a.ndim) != list(a.shape) \
                or int64s(word(a, off["strides"]), a.ndim) != list(a.strides):
            return None
    return _NUMPY_LAYOUT


ARRAY_LAYOUT = _probe_array_layout()


def readable_layout(a: np.ndarray) -> np.ndarray:
    """`a`, or a copy of it that generated code can read: native byte order (the code reads the
    host's), elements aligned for their dtype (the code's loads assume it) and strides whole
    elements (the entry ABI counts strides in elements). numpy's ufuncs copy such arrays too."""
    if not a.dtype.isnative:
        return a.astype(a.dtype.newbyteorder("="))  # a new, aligned array with the same values
    if not a.flags.aligned or (a.itemsize and any(s % a.itemsize for s in a.strides)):
        return a.copy(order="C")
    return a


def check_array_kind(a, where: str, *, allow_matrix: bool) -> None:
    """TypeError for ndarray subclasses whose meaning compiled code would silently drop: masked
    arrays (the mask) and, unless `allow_matrix`, np.matrix (operators with matrix semantics)."""
    if type(a) is np.ndarray:
        return
    ma = sys.modules.get("numpy.ma")  # not imported: no masked array can exist
    if ma is not None and isinstance(a, ma.MaskedArray):
        raise TypeError(f"{where} is a masked array: compiled code would ignore its mask; pass "
                        "np.ma.filled(a, fill_value) or a.data")
    if not allow_matrix and isinstance(a, np.matrix):
        raise TypeError(f"{where} is a np.matrix, whose operators (*, **) and reductions differ from "
                        "ndarray's, which the compiled code implements; pass np.asarray(a)")


@dataclass(frozen=True)
class ArgSpec:
    """One argument or result: numpy dtype and dims (int, or str: a symbol name or a Python
    expression over symbol names for results, as ir.size_render.python_source renders sympy's:
    "2*s0 + 1", "s0 // 2", "max(s0, s1)"; sympy's own printing "floor(s0/2)", "Max(s0, s1)" is
    read too)."""

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
    def __init__(self, sig: Signature):
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
        self.all_static = all(isinstance(d, int) for s in sig.inputs + sig.outputs for d in s.shape)
        self.meta = int64_array(self.pack_meta_static() or [0]) if self.all_static else None

    def pack_meta_static(self) -> list[int]:
        """The meta array for C-contiguous arguments of the static shapes."""
        meta = []
        for s in self.sig.inputs + self.sig.outputs:
            meta += list(s.shape) + _c_strides(s.shape)
        return meta

    def fast_function(self, entry: int, trampoline, fail, unwrap: bool):
        """`fast(*arrays)` for static signatures (None otherwise): the outputs (one array when
        `unwrap` and there is one, else a tuple), or None when the arguments are not exactly
        C-contiguous ndarrays of the signature's dtypes and shapes (the caller then takes the
        general path). Generated per signature so a call is a few Python operations: allocate the
        outputs, then one native call (`trampoline`, runtime.jit.array_trampoline) that checks the
        inputs against a table and unpacks their data pointers. `fail(rc)` raises for a non-zero
        status of the entry."""
        if not self.all_static:
            return None
        specs = self.sig.inputs + self.sig.outputs
        n_in = self.n_in
        env = {"empty": np.empty, "fail": fail, "meta": self.meta, "ndarray": np.ndarray}
        lines = ["def fast(*A):", f"    if len(A) != {n_in}: return None"]
        for i in range(n_in, len(specs)):
            env[f"sh{i}"], env[f"dt{i}"] = tuple(specs[i].shape), np.dtype(specs[i].dtype)
            lines.append(f"    a{i} = empty(sh{i}, dt{i})")
        outs = [f"a{i}" for i in range(n_in, len(specs))]
        if trampoline is not None and ARRAY_LAYOUT is not None:
            meta_addr = int(_cffi.cast(_INTPTR, self.meta))  # env["meta"] keeps it alive
            ctx = np.array(self._checked_context(entry, meta_addr), np.int64)
            env["call"] = builtin_at(trampoline, f"{self.sig.name}_checked", ctx)
            objs = ", ".join([f"A[{i}]" for i in range(n_in)] + outs)
            lines.append(f"    rc = call({objs})")
            lines.append("    if rc:")
            lines.append("        if rc < 0: return None")
            lines.append("        fail(rc)")
        else:  # no native checks: the same conditions in Python
            for i, (s, size) in enumerate(zip(self.sig.inputs, self.itemsizes, strict=False)):
                env[f"sh{i}"], env[f"dt{i}"] = tuple(s.shape), np.dtype(s.dtype)
                env[f"st{i}"] = tuple(x * size for x in _c_strides(s.shape))
                lines.append(f"    if type(A[{i}]) is not ndarray or A[{i}].dtype != dt{i} or "
                             f"A[{i}].shape != sh{i} or A[{i}].strides != st{i} or not A[{i}].flags.aligned: "
                             "return None")
            env["call"] = function_at(ENTRY_TYPE, entry)
            ptrs = ", ".join([f"A[{i}].ctypes.data" for i in range(n_in)] + [f"{o}.ctypes.data" for o in outs])
            lines.append(f"    rc = call([{ptrs}], meta)")
            lines.append("    if rc: fail(rc)")
        if unwrap and len(outs) == 1:
            lines.append(f"    return {outs[0]}")
        else:
            lines.append(f"    return ({', '.join(outs)},)")
        exec(compile("\n".join(lines), f"<fast call {self.sig.name}>", "exec"), env)
        return env["fast"]

    def strided_fast_function(self, entry: int, trampoline, fail, unwrap: bool, guard):
        """`fast(*arrays)` for signatures with symbolic dims: `guard(arrays)` (the cache entry's
        guards: dtypes, ranks, static dims, equal symbols, ranges; inlined when it carries its
        source, see _guard_lines) must hold; the symbols are read
        from the input shapes, the outputs allocated from the signature's size expressions, and
        `trampoline` (aot_call_strided) builds data and meta from the arrays, any strides. Returns
        None for what it cannot handle (then the caller takes the general path)."""
        sig, n_in = self.sig, self.n_in
        symbols: dict[str, tuple[int, int]] = {}
        for i, k, name in self.binders:
            if not name.isidentifier():
                return None
            symbols.setdefault(name, (i, k))
        funcs = {k: v for k, v in _SHAPE_FUNCS.items() if k != "__builtins__"}
        env = {"empty": np.empty, "fail": fail, "guard": guard, **funcs}
        lines = ["def fast(*L):", *self._guard_lines(guard, env)]
        lines += [f"    {name} = L[{i}].shape[{k}]" for name, (i, k) in symbols.items()]
        for j, s in enumerate(sig.outputs):
            dims = []
            for d in s.shape:
                if isinstance(d, int):
                    dims.append(str(d))
                    continue
                code = compile(str(d), "<shape>", "eval")
                if not set(code.co_names) <= set(symbols) | set(funcs):
                    return None
                dims.append(str(d) if str(d) in symbols else f"int({d})")
            env[f"dt{j}"] = np.dtype(s.dtype)
            lines.append(f"    o{j} = empty(({', '.join(dims)}{',' if len(dims) == 1 else ''}), dt{j})")
        from ir.abi_slots import STRIDED_CALL

        records = [{"descr": id(np.dtype(s.dtype)) if n < n_in else 0, "rank": s.rank,
                    "itemsize": self.itemsizes[n]} for n, s in enumerate(sig.inputs + sig.outputs)]
        ctx = np.array(STRIDED_CALL.pack(records, entry=entry, n_objects=self.n_data, n_meta=max(1, self.n_meta),
                                         ndarray_type=id(np.ndarray), n_inputs=n_in, **PY_HEADER_SLOTS), np.int64)
        env["call"] = builtin_at(trampoline, f"{sig.name}_strided", ctx)
        outs = [f"o{j}" for j in range(len(sig.outputs))]
        objs = ", ".join([f"L[{i}]" for i in range(n_in)] + outs)
        lines += [f"    rc = call({objs})", "    if rc:", "        if rc < 0: return None",
                  "        fail(rc)"]
        lines.append(f"    return {outs[0]}" if unwrap and len(outs) == 1 else f"    return ({', '.join(outs)},)")
        exec(compile("\n".join(lines), f"<strided fast call {sig.name}>", "exec"), env)
        return env["fast"]

    @staticmethod
    def _guard_lines(guard, env: dict) -> list[str]:
        """The fast function's first lines: call `guard(L)`, or, when it carries `inline` = (Python
        conditions over the arguments L[i], the names they use), test the conditions in place
        (a call less per call: the guard is most of a dynamic entry's Python work)."""
        inline = getattr(guard, "inline", None)
        if inline is None:
            return ["    if not guard(L): return None"]
        texts, names = inline
        env.update({k: v for k, v in names.items() if k not in env and k != "__builtins__"})
        return ["    try:", f"        if not ({' and '.join(texts) or 'True'}): return None",
                "    except (IndexError, AttributeError, TypeError):", "        return None"]

    def _checked_context(self, entry: int, meta: int) -> list[int]:
        """aot_call_checked's context (ir.abi_slots.CHECKED_CALL): the entry, the object count, the
        static meta array, ndarray's type, the input count, then per input its dtype object, rank,
        dims and C-contiguous strides in bytes."""
        from ir.abi_slots import CHECKED_CALL

        records = [{"descr": id(np.dtype(s.dtype)), "rank": len(s.shape), "dims": s.shape,
                    "strides": [x * size for x in _c_strides(s.shape)]}
                   for s, size in zip(self.sig.inputs, self.itemsizes, strict=False)]
        large = any(math.prod(s.shape) >= GIL_ELEMENTS for s in self.sig.inputs + self.sig.outputs)
        header = dict(PY_HEADER_SLOTS, gil_elements=0 if large else 2**62)  # static: decided here
        return CHECKED_CALL.pack(records, entry=entry, n_objects=self.n_data, meta=meta,
                                 ndarray_type=id(np.ndarray), n_inputs=self.n_in, **header)

    def check(self, args) -> dict:
        """Validate the inputs; returns the symbol bindings."""
        sig = self.sig
        if len(args) != self.n_in:
            raise TypeError(f"{sig.name}() takes {self.n_in} array argument(s), got {len(args)}")
        for i, a in enumerate(args):
            if not isinstance(a, np.ndarray):
                raise TypeError(f"{sig.name}(): argument #{i} must be a numpy array, got {type(a).__name__}")
            check_array_kind(a, f"{sig.name}(): argument #{i}", allow_matrix=False)
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
        """(data pointers, meta array) for inputs followed by outputs (any strides)."""
        data = []
        meta = []
        for n, a in enumerate(arrays):
            data.append(a.__array_interface__["data"][0])
            meta.extend(a.shape)
            size = self.itemsizes[n]
            st = a.strides
            if any(s % size for s in st):
                raise ValueError(
                    f"{self.sig.name}(): array #{n} has strides {st} that are not a multiple "
                    f"of its item size {size}"
                )
            meta.extend(s // size for s in st)
        return data, int64_array(meta or [0])


def _c_strides(shape) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]
