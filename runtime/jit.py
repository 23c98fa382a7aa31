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
    try:  # glibc's soname first: ctypes.util.find_library runs ldconfig/gcc (~10 ms)
        llvm.load_library_permanently("libmvec.so.1")
        return
    except RuntimeError:
        pass
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


# int32 aot_call_checked(ctx, objs): ctx = {entry, n, meta, table...}. For each of the n objects
# (array addresses: inputs, then outputs) data[i] = its data pointer; the first table[1] of them
# must be ndarrays whose type, descr, rank, dims and byte strides equal the table's (else -1: the
# caller takes its general path); then entry(data, meta). Lets the hot path pass id(array) instead
# of checking and unpacking each array in Python, in a two-argument call (cffi converts each
# argument: fewer is faster). Field offsets: runtime.buffers.ARRAY_LAYOUT (probed, not assumed).
_TRAMPOLINE_IR = r"""
define i32 @aot_call_checked(ptr %ctx, ptr %objs) {
entry:
  %fn = load ptr, ptr %ctx
  %pn = getelementptr i64, ptr %ctx, i64 1
  %n = load i64, ptr %pn
  %pmeta = getelementptr i64, ptr %ctx, i64 2
  %meta = load ptr, ptr %pmeta
  %tab = getelementptr i64, ptr %ctx, i64 3
  %data = alloca ptr, i64 %n
  %type = load i64, ptr %tab
  %pnin = getelementptr i64, ptr %tab, i64 1
  %nin = load i64, ptr %pnin
  br label %head
head:
  %i = phi i64 [0, %entry], [%i1, %next]
  %pos = phi i64 [2, %entry], [%pos1, %next]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %body, label %call
body:
  %po = getelementptr ptr, ptr %objs, i64 %i
  %o = load ptr, ptr %po
  %isin = icmp slt i64 %i, %nin
  br i1 %isin, label %check, label %store
check:
  %pt = getelementptr i8, ptr %o, i64 {type}
  %t = load i64, ptr %pt
  %tok = icmp eq i64 %t, %type
  br i1 %tok, label %check2, label %bad
check2:
  %pdesc = getelementptr i8, ptr %o, i64 {descr}
  %desc = load i64, ptr %pdesc
  %pwant = getelementptr i64, ptr %tab, i64 %pos
  %want = load i64, ptr %pwant
  %posnd = add i64 %pos, 1
  %pwnd = getelementptr i64, ptr %tab, i64 %posnd
  %wnd = load i64, ptr %pwnd
  %pnd = getelementptr i8, ptr %o, i64 {nd}
  %nd32 = load i32, ptr %pnd
  %nd = sext i32 %nd32 to i64
  %ok1 = icmp eq i64 %desc, %want
  %ok2 = icmp eq i64 %nd, %wnd
  %ok = and i1 %ok1, %ok2
  br i1 %ok, label %dims, label %bad
dims:
  %pdims = getelementptr i8, ptr %o, i64 {dims}
  %dimsp = load ptr, ptr %pdims
  %pstr = getelementptr i8, ptr %o, i64 {strides}
  %strp = load ptr, ptr %pstr
  %base = add i64 %pos, 2
  br label %khead
khead:
  %k = phi i64 [0, %dims], [%k1, %knext]
  %kc = icmp slt i64 %k, %nd
  br i1 %kc, label %kbody, label %kdone
kbody:
  %pdk = getelementptr i64, ptr %dimsp, i64 %k
  %dk = load i64, ptr %pdk
  %ik = add i64 %base, %k
  %pwk = getelementptr i64, ptr %tab, i64 %ik
  %wk = load i64, ptr %pwk
  %psk = getelementptr i64, ptr %strp, i64 %k
  %sk = load i64, ptr %psk
  %is = add i64 %ik, %nd
  %pws = getelementptr i64, ptr %tab, i64 %is
  %ws = load i64, ptr %pws
  %e1 = icmp eq i64 %dk, %wk
  %e2 = icmp eq i64 %sk, %ws
  %e = and i1 %e1, %e2
  br i1 %e, label %knext, label %bad
knext:
  %k1 = add i64 %k, 1
  br label %khead
kdone:
  %two = mul i64 %nd, 2
  %posc = add i64 %base, %two
  br label %store
store:
  %pos1 = phi i64 [%pos, %body], [%posc, %kdone]
  %pd = getelementptr i8, ptr %o, i64 {data}
  %d = load ptr, ptr %pd
  %slot = getelementptr ptr, ptr %data, i64 %i
  store ptr %d, ptr %slot
  br label %next
next:
  %i1 = add i64 %i, 1
  br label %head
bad:
  ret i32 -1
call:
  %rc = call i32 %fn(ptr %data, ptr %meta)
  ret i32 %rc
}
"""


# int32 aot_call_strided(ctx, objs): ctx = {entry, n, n_meta, table...}, table = {ndarray type,
# inputs, then per object (inputs, outputs): descr, rank, itemsize}. Checks each object's type,
# rank and (inputs) descr, then builds data and meta from the objects themselves: dims, and
# strides in elements (-1, the general path, when a stride is not a multiple of the item size).
# For signatures with symbolic dims, whose meta changes per call; the caller checks the guards.
_STRIDED_IR = r"""
define i32 @aot_call_strided(ptr %ctx, ptr %objs) {
entry:
  %fn = load ptr, ptr %ctx
  %pn = getelementptr i64, ptr %ctx, i64 1
  %n = load i64, ptr %pn
  %pnm = getelementptr i64, ptr %ctx, i64 2
  %nm = load i64, ptr %pnm
  %tab = getelementptr i64, ptr %ctx, i64 3
  %data = alloca ptr, i64 %n
  %meta = alloca i64, i64 %nm
  %type = load i64, ptr %tab
  %pnin = getelementptr i64, ptr %tab, i64 1
  %nin = load i64, ptr %pnin
  br label %head
head:
  %i = phi i64 [0, %entry], [%i1, %kdone]
  %pos = phi i64 [2, %entry], [%pos1, %kdone]
  %mpos = phi i64 [0, %entry], [%mpos1, %kdone]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %body, label %call
body:
  %po = getelementptr ptr, ptr %objs, i64 %i
  %o = load ptr, ptr %po
  %pt = getelementptr i8, ptr %o, i64 {type}
  %t = load i64, ptr %pt
  %tok = icmp eq i64 %t, %type
  %pw = getelementptr i64, ptr %tab, i64 %pos
  %wdesc = load i64, ptr %pw
  %pos_nd = add i64 %pos, 1
  %pwnd = getelementptr i64, ptr %tab, i64 %pos_nd
  %wnd = load i64, ptr %pwnd
  %pos_sz = add i64 %pos, 2
  %psz = getelementptr i64, ptr %tab, i64 %pos_sz
  %isz = load i64, ptr %psz
  br i1 %tok, label %fields, label %bad
fields:
  %pdesc = getelementptr i8, ptr %o, i64 {descr}
  %desc = load i64, ptr %pdesc
  %pnd = getelementptr i8, ptr %o, i64 {nd}
  %nd32 = load i32, ptr %pnd
  %nd = sext i32 %nd32 to i64
  %isin = icmp slt i64 %i, %nin
  %dsame = icmp eq i64 %desc, %wdesc
  %dok = select i1 %isin, i1 %dsame, i1 true
  %ndok = icmp eq i64 %nd, %wnd
  %ok = and i1 %dok, %ndok
  br i1 %ok, label %dims, label %bad
dims:
  %pdims = getelementptr i8, ptr %o, i64 {dims}
  %dimsp = load ptr, ptr %pdims
  %pstr = getelementptr i8, ptr %o, i64 {strides}
  %strp = load ptr, ptr %pstr
  br label %khead
khead:
  %k = phi i64 [0, %dims], [%k1, %kstore]
  %kc = icmp slt i64 %k, %nd
  br i1 %kc, label %kbody, label %kdone
kbody:
  %pdk = getelementptr i64, ptr %dimsp, i64 %k
  %dk = load i64, ptr %pdk
  %md = add i64 %mpos, %k
  %pmd = getelementptr i64, ptr %meta, i64 %md
  store i64 %dk, ptr %pmd
  %psk = getelementptr i64, ptr %strp, i64 %k
  %sk = load i64, ptr %psk
  %q = sdiv i64 %sk, %isz
  %r = srem i64 %sk, %isz
  %rok = icmp eq i64 %r, 0
  br i1 %rok, label %kstore, label %bad
kstore:
  %ms0 = add i64 %mpos, %nd
  %ms = add i64 %ms0, %k
  %pms = getelementptr i64, ptr %meta, i64 %ms
  store i64 %q, ptr %pms
  %k1 = add i64 %k, 1
  br label %khead
kdone:
  %pd = getelementptr i8, ptr %o, i64 {data}
  %d = load ptr, ptr %pd
  %slot = getelementptr ptr, ptr %data, i64 %i
  store ptr %d, ptr %slot
  %pos1 = add i64 %pos, 3
  %two = mul i64 %nd, 2
  %mpos1 = add i64 %mpos, %two
  %i1 = add i64 %i, 1
  br label %head
bad:
  ret i32 -1
call:
  %rc = call i32 %fn(ptr %data, ptr %meta)
  ret i32 %rc
}
"""


@functools.cache
def array_trampoline(layout: tuple[tuple[str, int], ...], strided: bool = False) -> int:
    """Address of aot_call_checked (or, `strided`, aot_call_strided) for these ndarray field
    offsets, compiled once per process."""
    eng = default_engine()
    ir_text = _STRIDED_IR if strided else _TRAMPOLINE_IR
    for field, off in layout:
        ir_text = ir_text.replace("{" + field + "}", str(off))
    with _lock:
        obj = _cached_object(eng, ir_text)
        eng.add_object(obj)
        return eng.address("aot_call_strided" if strided else "aot_call_checked")


def _cached_object(eng: JitEngine, ir_text: str) -> bytes:
    """Object code for `ir_text` through the disk cache (MCJIT code generation even of a small
    module costs several ms on every process start)."""
    from .disk_cache import DiskCache, cache_key

    key = cache_key(ir_text, llvm.get_process_triple(), llvm.get_host_cpu_name(),
                    llvm.get_host_cpu_features().flatten(), llvm.__name__, ".".join(map(str, llvm.llvm_version_info)))
    disk = DiskCache()
    try:
        obj = disk.get(key)
    except OSError as e:  # an unusable cache directory only costs time
        log.debug("disk cache unavailable: %s", e)
        disk, obj = None, None
    if obj is None:
        mod = llvm.parse_assembly(ir_text)
        mod.triple = llvm.get_process_triple()
        mod.data_layout = str(eng.tm.target_data)
        obj = eng.tm.emit_object(mod)
        if disk is not None:
            try:
                disk.put(key, obj)
            except OSError as e:
                log.debug("could not write the disk cache: %s", e)
    return obj
