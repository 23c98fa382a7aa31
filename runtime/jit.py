"""In-process JIT: LLVM IR text -> native function addresses (llvmlite.binding MCJIT).

The only runtime module that touches llvmlite (binding only). Modules are optimised here with
the host TargetMachine and the new pass manager (O3, loop and SLP vectorisers), then added to one
shared MCJIT engine. glibc's libmvec is loaded into the process once, so calls to its vector
math functions (`_ZGVeN8v_sin`, ...) resolve.
"""

from __future__ import annotations

import atexit
import ctypes.util
import functools
import logging
import threading
import time

import llvmlite.binding as llvm

log = logging.getLogger(__name__)
_lock = threading.RLock()


@functools.cache
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    name = ctypes.util.find_library("mvec")
    if name:
        try:
            llvm.load_library_permanently(name)
        except RuntimeError as e:  # vector math falls back to what the module declares
            log.warning("could not load %s: %s", name, e)


def host_target_machine(opt_level: int = 3):
    """A new host TargetMachine (an MCJIT engine takes ownership of the one it is given)."""
    _init()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=opt_level, jit=True
    )


class JitEngine:
    """An MCJIT engine; the code of its modules lives as long as the engine object.

    The process shares one (`default_engine`) that is never disposed: disposing MCJIT engines
    while others are alive was seen to abort the process (EH-frame deregistration), and compiled
    functions must outlive every callable that refers to them anyway."""

    def __init__(self, opt_level: int = 3):
        _init()
        self.opt_level = opt_level
        self.tm = host_target_machine(opt_level)
        backing = llvm.parse_assembly("")
        backing.triple = llvm.get_process_triple()
        self.engine = llvm.create_mcjit_compiler(backing, self.tm)
        self._modules: list = []
        self._symbols: set[str] = set()

    def add(self, llvm_ir, optimize: bool = True, entries: list[str] = ()) -> dict[str, str]:
        """Compile LLVM IR (text, llvmlite module or ModuleRef). Returns, for each name in `entries`,
        the symbol it has in the engine: a name already taken by an earlier module gets a suffix."""
        t0 = time.perf_counter()
        mod = llvm_ir if isinstance(llvm_ir, llvm.ModuleRef) else llvm.parse_assembly(str(llvm_ir))
        mod.verify()
        mod.triple = llvm.get_process_triple()
        mod.data_layout = str(self.tm.target_data)
        with _lock:
            names = {}
            for e in entries:
                fn = mod.get_function(e)
                if e in self._symbols:
                    fn.name = f"{e}.{len(self._symbols)}"
                names[e] = fn.name
            for fn in mod.functions:
                if not fn.is_declaration and fn.linkage != llvm.Linkage.internal:
                    self._symbols.add(fn.name)
            if optimize:
                self._optimize(mod)
            self.engine.add_module(mod)
            self.engine.finalize_object()
            self._modules.append(mod)
        log.debug("jit: compiled module in %.1f ms", 1e3 * (time.perf_counter() - t0))
        return names

    def add_object(self, obj: bytes) -> None:
        """Load object code (e.g. from the disk cache) into the engine."""
        with _lock:
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            self.engine.finalize_object()

    def _optimize(self, mod) -> None:
        pto = llvm.create_pipeline_tuning_options(speed_level=self.opt_level)
        pto.loop_vectorization = self.opt_level >= 2
        pto.slp_vectorization = self.opt_level >= 2
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)

    def address(self, name: str) -> int:
        addr = self.engine.get_function_address(name)
        if not addr:
            raise KeyError(f"JIT: no function named {name!r} in the compiled modules")
        return addr


_default: list[JitEngine] = []


def default_engine() -> JitEngine:
    with _lock:
        if not _default:
            _default.append(JitEngine())
            atexit.register(_leak_at_exit)
        return _default[0]


def _leak_at_exit() -> None:
    """Native code may still run from other atexit handlers; never tear the engine down."""
    for e in _default:
        e.engine._closed = True  # llvmlite's ObjectRef: skip disposal in __del__


# int32 aot_call_arrays(entry, objs, n, data_offset, meta): data[i] = *(objs[i] + data_offset), then
# entry(data, meta). Lets the hot path pass id(array) instead of extracting each data pointer in Python.
_TRAMPOLINE_IR = r"""
define i32 @aot_call_arrays(ptr %fn, ptr %objs, i64 %n, i64 %off, ptr %meta) {
entry:
  %data = alloca ptr, i64 %n
  br label %head
head:
  %i = phi i64 [0, %entry], [%i1, %body]
  %c = icmp slt i64 %i, %n
  br i1 %c, label %body, label %call
body:
  %po = getelementptr ptr, ptr %objs, i64 %i
  %o = load ptr, ptr %po
  %pd = getelementptr i8, ptr %o, i64 %off
  %d = load ptr, ptr %pd
  %slot = getelementptr ptr, ptr %data, i64 %i
  store ptr %d, ptr %slot
  %i1 = add i64 %i, 1
  br label %head
call:
  %rc = call i32 %fn(ptr %data, ptr %meta)
  ret i32 %rc
}
"""


@functools.cache
def array_trampoline() -> int:
    """Address of aot_call_arrays, compiled once per process."""
    eng = default_engine()
    name = eng.add(_TRAMPOLINE_IR, entries=["aot_call_arrays"])["aot_call_arrays"]
    return eng.address(name)
