"""numpy arrays <-> the entry ABI's (data, meta) arrays, on the hot path of every call.

`ArgPacker` is built once per compiled function: it knows each argument's dtype, rank and static
dims, and the output shapes as Python expressions over the size symbols, so a call only checks,
binds symbols, allocates outputs and writes a handful of integers.
"""

from __future__ import annotations

import ctypes
import functools
import math
import operator
import sys

import numpy as np

from ir.records import Record

from . import blocks
from .numpy_api import numpy_api_table


@functools.cache
def _cffi_types() -> tuple:
    """(the cffi runtime, the entry's function type, int64_t[]), made on first use: a call that the
    native trampoline takes never needs them, and `_cffi_backend` costs a warm start ~0.5 ms."""
    import _cffi_backend as cffi  # the cffi runtime itself: cffi.FFI() would import pycparser (~30 ms)

    i64_ptr = cffi.new_pointer_type(cffi.new_primitive_type("int64_t"))
    intptr_ptr = cffi.new_pointer_type(cffi.new_primitive_type("intptr_t"))
    # int32 entry(void **data, int64 *meta): data pointers are passed as integers
    entry = cffi.new_function_type((intptr_ptr, i64_ptr), cffi.new_primitive_type("int32_t"), 0)
    return cffi, entry, cffi.new_array_type(i64_ptr, None)


def entry_function(address: int):
    """A callable cffi function pointer to the entry (`int32 entry(void **data, int64 *meta)`) at `address`."""
    cffi, entry, _ = _cffi_types()
    return cffi.cast(entry, address)


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
    md = _method_defs.get(key)
    if md is None:  # setdefault: a def another thread made meanwhile wins (builtins point at it for good)
        md = _method_defs.setdefault(key, _MethodDef(name.encode(), address, _METH_FASTCALL, None))
    return _new_builtin(ctypes.addressof(md), this, None)


def c_api_address(name: str) -> int:
    """The address of the CPython C API function `name`."""
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value


# the trampolines' ir.abi_slots.PY_HEADER slots: the C API they call; the GIL is released around
# entries with at least this many elements in some argument (numpy's ufunc loops: 500)
GIL_ELEMENTS = 1024
PY_HEADER_SLOTS = {"py_long": c_api_address("PyLong_FromLong"), "save_thread": c_api_address("PyEval_SaveThread"),
                   "restore_thread": c_api_address("PyEval_RestoreThread"), "gil_elements": GIL_ELEMENTS}


def int64_array(values: list[int]):
    cffi, _, array = _cffi_types()
    return cffi.newp(array, values)


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


def readable_layout(a: np.ndarray, contiguous: bool = False) -> np.ndarray:
    """`a`, or a copy of it that generated code can read: native byte order (the code reads the
    host's), elements aligned for their dtype (the code's loads assume it) and strides whole
    elements (the entry ABI counts strides in elements); C-contiguous when the code assumes it
    (`contiguous`: ArgSpec.contiguous). numpy's ufuncs copy such arrays too."""
    if not a.dtype.isnative:
        return a.astype(a.dtype.newbyteorder("="))  # a new, aligned, C-ordered array with the same values
    if (not a.flags.aligned or (a.itemsize and any(s % a.itemsize for s in a.strides))
            or (contiguous and not a.flags.c_contiguous)):
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


class ArgSpec(Record):
    """One argument or result: numpy dtype and dims (int, or str: a symbol name or a Python
    expression over symbol names for results, as ir.size_render.python_source renders sympy's:
    "2*s0 + 1", "s0 // 2", "max(s0, s1)"; sympy's own printing "floor(s0/2)", "Max(s0, s1)" is
    read too). `contiguous`: an input the entry reads as C-contiguous (its strides are not read;
    codegen specialised on the layout): every call path passes such an array, or a C-contiguous
    copy of it."""

    __slots__ = ("dtype", "shape", "contiguous")

    def __init__(self, dtype, shape: tuple, contiguous: bool = False):
        self.dtype, self.shape, self.contiguous = dtype, shape, contiguous

    @property
    def rank(self) -> int:
        return len(self.shape)


class Signature(Record):
    __slots__ = ("inputs", "outputs", "name")

    def __init__(self, inputs: tuple[ArgSpec, ...], outputs: tuple[ArgSpec, ...], name: str = "fn"):
        self.inputs, self.outputs, self.name = inputs, outputs, name


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

    def pack_meta_static(self) -> list[int]:
        """The meta array for C-contiguous arguments of the static shapes."""
        meta = []
        for s in self.sig.inputs + self.sig.outputs:
            meta += list(s.shape) + _c_strides(s.shape)
        return meta

    def fast_function(self, entry: int, fail, unwrap: bool):
        """`fast(*arrays)` for static signatures without the native trampoline (None for symbolic
        ones): the outputs (one array when `unwrap` and there is one, else a tuple), or None when
        the arguments are not exactly C-contiguous aligned ndarrays of the signature's dtypes and
        shapes (the caller then takes the general path). Generated per signature so a call is a few
        Python operations: check, allocate the outputs, call the entry. `fail(rc)` raises for a
        non-zero status of the entry."""
        if not self.all_static:
            return None
        specs = self.sig.inputs + self.sig.outputs
        n_in = self.n_in
        meta = int64_array(self.pack_meta_static() or [0])
        env = {"empty": blocks.empty, "fail": fail, "meta": meta, "ndarray": np.ndarray,
               "call": entry_function(entry)}
        lines = ["def fast(*A):", f"    if len(A) != {n_in}: return None"]
        for i, (s, size) in enumerate(zip(self.sig.inputs, self.itemsizes, strict=False)):
            env[f"sh{i}"], env[f"dt{i}"] = tuple(s.shape), np.dtype(s.dtype)
            env[f"st{i}"] = tuple(x * size for x in _c_strides(s.shape))
            lines.append(f"    if type(A[{i}]) is not ndarray or A[{i}].dtype != dt{i} or "
                         f"A[{i}].shape != sh{i} or A[{i}].strides != st{i} or not A[{i}].flags.aligned: "
                         "return None")
        for i in range(n_in, len(specs)):
            env[f"sh{i}"], env[f"dt{i}"] = tuple(specs[i].shape), np.dtype(specs[i].dtype)
            lines.append(f"    a{i} = empty(sh{i}, dt{i})")
        outs = [f"a{i}" for i in range(n_in, len(specs))]
        ptrs = ", ".join([f"A[{i}].ctypes.data" for i in range(n_in)] + [f"{o}.ctypes.data" for o in outs])
        lines.append(f"    rc = call([{ptrs}], meta)")
        lines.append("    if rc: fail(rc)")
        if unwrap and len(outs) == 1:
            lines.append(f"    return {outs[0]}")
        else:
            lines.append(f"    return ({', '.join(outs)},)")
        exec(compile("\n".join(lines), f"<fast call {self.sig.name}>", "exec"), env)
        return env["fast"]

    def strided_fast_function(self, entry: int, trampoline, fail, unwrap: bool, guard=None):
        """`fast(*arrays)`: the outputs, or None for what it cannot handle (then the caller takes
        the general path). `trampoline` (aot_call_strided) checks the arrays (type, dtype, rank,
        alignment, any strides) and the guards on sizes that it can evaluate (static dims, equal
        dims, bounds: see _DimPlan), makes the outputs when their dims are input dims or static,
        and calls the entry. `guard(arrays)` (the cache entry's guards) must hold too: when it
        carries its `parts` (see aot.compiler.guards) only those the trampoline cannot evaluate are
        tested, in place; without them it is called. None: nothing beyond the signature (a static
        one, whose dtypes and shapes imply the entry's guards). With neither Python guards nor
        output sizes to compute, `fast` is the trampoline's builtin itself."""
        sig = self.sig
        plan = _DimPlan(self, getattr(guard, "parts", None) if guard is not None else ([], {}))
        funcs = {k: v for k, v in _SHAPE_FUNCS.items() if k != "__builtins__"}
        env = {"empty": blocks.empty, "guard": guard, **funcs}
        pre = [] if plan.parts is not None else ["    if not guard(L): return None"]
        tests, reads, outs = list(plan.leftover), [], []
        if not plan.alloc:  # the outputs' sizes are computed here
            symbols: dict[str, tuple[int, int]] = {}
            for i, k, name in self.binders:
                if not name.isidentifier():
                    return None
                symbols.setdefault(name, (i, k))
            reads = [f"        {name} = L[{i}].shape[{k}]" for name, (i, k) in symbols.items()]
            for j, spec in enumerate(sig.outputs):
                dims = []
                for d in spec.shape:
                    if isinstance(d, int):
                        dims.append(str(d))
                        continue
                    code = compile(str(d), "<shape>", "eval")
                    if not set(code.co_names) <= set(symbols) | set(funcs):
                        return None
                    dims.append(str(d) if str(d) in symbols else f"int({d})")
                env[f"dt{j}"] = np.dtype(spec.dtype)
                outs.append(f"empty(({', '.join(dims)}{',' if len(dims) == 1 else ''}), dt{j})")
        if plan.parts is not None:
            env.update({k: v for k, v in plan.parts[1].items() if k not in env and k != "__builtins__"})
        if tests or reads:
            test = [f"        if not ({' and '.join(tests)}): return None"] if tests else []
            pre += ["    try:", *test, *reads,
                    "    except (IndexError, AttributeError, TypeError):", "        return None"]
        call = builtin_at(trampoline, f"{sig.name}_strided", plan.context(entry, fail, unwrap))
        if not pre and not outs:
            return call
        env["call"] = call
        lines = ["def fast(*L):", *pre, f"    return call({', '.join(['*L', *outs])})"]
        exec(compile("\n".join(lines), f"<strided fast call {sig.name}>", "exec"), env)
        return env["fast"]

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


class _Context(np.ndarray):
    """A trampoline's int64 context block that also keeps alive the objects whose ids it holds
    (an ndarray subclass: the native side reads the same array struct)."""

    keep: tuple = ()


class _DimPlan:
    """aot_call_strided's plan for one signature (ir.abi_slots.STRIDED_PLAN, STRIDED_DIM): per
    input dim its bounds and the earlier input dim it must equal, from the signature (static dims,
    symbols shared by several dims) and from the guard relations `parts` = ([(text, relations or
    None)], namespace) that have that form (aot.compiler.guards.size_relations); the other texts are
    `leftover`, for Python. Per output dim: static, or an input dim's value; `alloc` is False when
    some output dim is an expression (Python then computes the sizes and allocates) or numpy's
    PyArray_New was not found."""

    def __init__(self, packer: ArgPacker, parts):
        self.packer, self.parts, self.leftover = packer, parts, []
        self.meta_pos, pos = [], 0  # where each object's dims start in meta
        for spec in packer.sig.inputs + packer.sig.outputs:
            self.meta_pos.append(pos)
            pos += 2 * spec.rank
        self.parent: dict = {}  # union-find over input dims (i, k): equal sizes
        self.bounds: dict = {}  # class representative (i, k) -> [lo, hi]
        first: dict[str, tuple[int, int]] = {}
        for i, k, name in packer.binders:
            self._union(first.setdefault(name, (i, k)), (i, k))
        for text, relations in (parts[0] if parts is not None else []):
            if relations is None or not all(self._relate(*r, dry=True) for r in relations):
                self.leftover.append(text)
                continue
            for r in relations:
                self._relate(*r)
        for i, k, d in packer.static:
            self._bound((i, k), d, d)
        self.outputs, self.alloc = [], new_array_address() is not None
        for spec in packer.sig.outputs:
            rows = []
            for d in spec.shape:
                if isinstance(d, int):
                    rows.append((d, d, -1))
                elif str(d) in first:
                    rows.append((0, DIM_MAX, self._pos(self._find(first[str(d)]))))
                else:
                    rows.append((0, DIM_MAX, -1))
                    self.alloc = False
            self.outputs.append(rows)

    def _pos(self, dim: tuple[int, int]) -> int:
        return self.meta_pos[dim[0]] + dim[1]

    def _find(self, d):
        while self.parent.get(d, d) != d:
            d = self.parent[d]
        return d

    def _union(self, a, b) -> None:
        ra, rb = sorted((self._find(a), self._find(b)))  # the earliest dim represents its class
        if ra != rb:
            self.parent[rb] = ra
            lo, hi = self.bounds.pop(rb, (0, DIM_MAX))
            self._bound(ra, lo, hi)

    def _bound(self, d, lo: int, hi: int) -> None:
        cur = self.bounds.setdefault(self._find(d), [0, DIM_MAX])
        cur[0], cur[1] = max(cur[0], lo), min(cur[1], hi)

    def _relate(self, op: str, a: tuple, b: tuple, dry: bool = False) -> bool:
        """Record one relation natively (dry: only say whether it can be)."""
        inputs = self.packer.sig.inputs
        if any(t[0] == "dim" and not (t[1] < len(inputs) and t[2] < inputs[t[1]].rank) for t in (a, b)):
            return False
        if a[0] == "int" and b[0] == "dim":  # the dim on the left
            a, b, op = b, a, {"==": "==", "<=": ">=", "<": ">", ">=": "<=", ">": "<"}[op]
        if a[0] != "dim" or (b[0] == "dim" and op != "=="):
            return False
        if dry:
            return True
        if b[0] == "dim":
            self._union(a[1:], b[1:])
            return True
        n = b[1]
        self._bound(a[1:], *{"==": (n, n), "<=": (0, n), "<": (0, n - 1), ">=": (n, DIM_MAX),
                             ">": (n + 1, DIM_MAX)}[op])
        return True

    def rows(self) -> list[int]:
        """The plan rows after STRIDED_PLAN: per object its type number, then its dims' rows."""
        out, n_in = [], self.packer.n_in
        for n, spec in enumerate(self.packer.sig.inputs + self.packer.sig.outputs):
            out.append(np.dtype(spec.dtype).num)
            if n >= n_in:
                out += [x for row in self.outputs[n - n_in] for x in row]
                continue
            for k in range(spec.rank):
                rep = self._find((n, k))
                lo, hi = self.bounds.get(rep, (0, DIM_MAX))
                out += [lo, hi, self._pos(rep) if rep != (n, k) else -1]
        return out

    def context(self, entry: int, fail, unwrap: bool) -> np.ndarray:
        """The trampoline's context block: STRIDED_CALL's header and records, the plan, its rows."""
        from ir.abi_slots import STRIDED_CALL, STRIDED_PLAN

        p, sig = self.packer, self.packer.sig
        records = [{"descr": id(np.dtype(s.dtype)) if n < p.n_in else 0, "rank": s.rank,
                    "itemsize": p.itemsizes[n], "contiguous": int(s.contiguous)}
                   for n, s in enumerate(sig.inputs + sig.outputs)]
        block = STRIDED_CALL.pack(records, entry=entry, n_objects=p.n_data, n_meta=max(1, p.n_meta),
                                  ndarray_type=id(np.ndarray), n_inputs=p.n_in, **PY_HEADER_SLOTS)
        block += STRIDED_PLAN.pack(alloc=int(self.alloc), new_array=new_array_address() or 0,
                                   unwrap=int(unwrap and len(sig.outputs) == 1), fail=id(fail), none=id(None),
                                   **_PLAN_C_API, **blocks.plan_slots())
        ctx = np.array(block + self.rows(), np.int64).view(_Context)
        ctx.keep = (fail,)
        return ctx


@functools.cache
def new_array_address() -> int | None:
    """The address of numpy's PyArray_New (its C API table, slot 93), verified by making an array
    with it; None when the table cannot be found or does not behave (outputs are then made in
    Python). Probed on first use (start-up time)."""
    table = numpy_api_table()
    if ARRAY_LAYOUT is None or table is None:
        return None
    try:
        addr = ctypes.c_void_p.from_address(table + 93 * 8).value
        i32, ptr = ctypes.c_int, ctypes.c_void_p
        dims_ptr = ctypes.POINTER(ctypes.c_int64)
        proto = ctypes.PYFUNCTYPE(ctypes.py_object, ptr, i32, dims_ptr, i32, ptr, ptr, i32, i32, ptr)
        dims = (ctypes.c_int64 * 2)(3, 5)
        a = proto(addr)(id(np.ndarray), 2, dims, np.dtype(np.float64).num, None, None, 0, 0, None)
    except (AttributeError, ImportError, ValueError, TypeError, OSError):
        return None
    ok = type(a) is np.ndarray and a.shape == (3, 5) and a.dtype == np.float64 and a.flags.c_contiguous
    return addr if ok else None


DIM_MAX = 2**63 - 1  # ir.abi_slots.DIM_MAX (not imported at import time: `import runtime` needs no ir)
_PLAN_C_API = {"call_fail": c_api_address("PyObject_CallFunctionObjArgs"), "incref": c_api_address("Py_IncRef"),
               "decref": c_api_address("Py_DecRef"), "tuple_new": c_api_address("PyTuple_New"),
               "tuple_set": c_api_address("PyTuple_SetItem")}


def _c_strides(shape) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]
