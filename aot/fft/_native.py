"""The compiled FFT kernels of this process, built and loaded a group at a time.

The kernel module of a precision is cut into groups (codegen/fft/groups.py): the core (c2c entry
and real passes) when a precision is first used, the passes of one radix in one direction when a
plan first needs them, the run-time planner and the eager path's call thunks when used. A group
is a shared library in the disk cache, keyed by its name, the CPU (/proc/cpuinfo), the llvmlite
build and the generator's sources; a hit is loaded by the dynamic loader with neither llvmlite nor
the code generator imported (~0.2 ms a group). A miss generates the group's module, optimises it
at GROUP_OPT_LEVEL, links it with `cc` and stores it (~0.03-0.3 s a group); the misses of one
load are built side by side on the cores, and the eager path's first call loads the core with the
passes and thunks it needs next (`loaded(precision, first)`), so an empty cache builds them
together. Without `cc` the object code is cached instead and loaded into a JIT engine. The loader
fills each group's import table (names.imports_of) with the addresses of the groups that are
loaded.

`kernels(precision)` serves compiled graphs: every group, and their entries registered
process-wide for the graph's object code (llvmlite). The eager path uses `loaded(precision)`.
"""
from __future__ import annotations

import _thread  # not threading: a warm start imports nothing it does not use
import functools
import os
import sys
import time

import _cffi_backend  # the cffi runtime: cffi.FFI() would import pycparser (~30 ms of a warm start)
import numpy as np

from codegen.fft.names import (
    c2r_name,
    entry_name,
    four_step_name,
    group_name,
    group_of,
    halves_name,
    imports_of,
    imports_symbol,
    pass_keys,
    plan_names,
    planes_name,
    r2c_name,
    shared_name,
    split_name,
    vlen_symbol,
)
from codegen.fft.plan import CODELET_RADICES
from ir.abi_slots import ARRAY_FIELDS
from ir.logger import PROGRESS, get_logger

log = get_logger(__name__)

_FORMAT = "3"  # of the cached groups: kernel ABI, loader conventions (3: JIT objects, large code model)
_REAL = {"f32": (np.float32, "float"), "f64": (np.float64, "double")}
_C2C_SIG = ("void(*)(const int64_t *, const {T} *, const {T} *, {T} *, int64_t, int64_t, int64_t, int64_t, "
            "int64_t, int32_t, {T}, {T} *)")
_R2C_SIG = "void(*)({T} *, int64_t, int64_t, int64_t, const {T} *, {T})"
_C2R_SIG = "void(*)(const {T} *, int64_t, {T} *, int64_t, int64_t, int64_t, const {T} *)"
_SHARED_SIG = "void(*)(const int64_t *, const {T} *, const {T} *, {T} *, {T} *, int32_t, int64_t)"
_THUNK_SIG = "void(*)(const int64_t *, intptr_t, intptr_t)"  # (block, id(src), id(dst))
_THUNK_KINDS = ("c2c", "r2c", "c2r", "job")  # ir.abi_slots.FFT_THUNK_KINDS (codegen/trampolines.py)
_lock = _thread.RLock()
ffi = _cffi_backend.FFI()  # cffi calls cost ~1 us less than ctypes and release the GIL as well
# the sources whose code a group holds (relative to the repository's packages)
_SOURCES = (("codegen/fft", "*.py"), ("codegen/llvm", "*.py"), ("codegen/kernels", "parallel.py"),
            ("codegen/targets", "base.py"), ("codegen", "trampolines.py"), ("codegen", "block_cache.py"),
            ("ir", "abi_slots.py"),
            ("aot/fft", "_native.py"))


@functools.cache
def _source_digest() -> str:
    """Name, size and mtime of the generator's sources: an edit (or a reinstall) of any of them
    invalidates the cached kernels. (Stat, not content: reading and hashing them costs ~2 ms of
    a warm start.)"""
    from runtime.disk_cache import cache_key

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parts = []
    for folder, pattern in _SOURCES:
        names = sorted(n for n in os.listdir(os.path.join(root, folder)) if _matches(n, pattern))
        for name in names:
            st = os.stat(os.path.join(root, folder, name))
            parts.append(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns}")
    return cache_key(*parts)


def _matches(name: str, pattern: str) -> bool:
    return name.endswith(".py") if pattern == "*.py" else name == pattern


@functools.cache
def _host_stamp() -> str:
    """What the generated code depends on about this machine, read without llvmlite: the CPU's
    model and feature flags, the platform and the installed LLVM (llvmlite's library). Without
    /proc/cpuinfo: LLVM's own description of the host (imports llvmlite)."""
    from runtime.host_stamp import cpu_features, llvmlite_stamp

    cpu = cpu_features()
    if cpu is None:
        from codegen.targets import host_target

        t = host_target()
        cpu = "|".join((t.triple, t.cpu, t.features, str(t.vector_bits)))
    return "|".join((sys.platform, os.uname().machine, cpu, llvmlite_stamp()))


def kernel_vlen(precision: str, target) -> int:
    """SIMD lanes of the kernel module of `precision` for `target` (callers size scratch by it)."""
    return max(2, target.vector_len(np.dtype(_REAL[precision][0]).itemsize * 8))


# ---- one group: from the disk cache, or built -------------------------------------------------
# LLVM's level for the kernel groups: the codelets are explicit vector code, and O1 ran them as
# fast as O3 (tools/bench_fft_kernels.py, c64/c128 64-4096, alternating runs within noise) and
# builds a group in 0.7x the time
GROUP_OPT_LEVEL = 1


def _group_object(precision: str, group: tuple, vlen: int | None, target) -> bytes:
    """Object code of `group` for `target` (the host's, for a shared library or for the JIT), for
    the core's `vlen` lanes (None: the host's): generated, optimised at GROUP_OPT_LEVEL (imports
    llvmlite)."""
    from codegen.targets import emit_object, optimize
    from codegen.targets.base import data_layout_of, parse, with_tuning

    target = target.replace(opt_level=GROUP_OPT_LEVEL)

    if group[0] == "thunks":
        from codegen.trampolines import HELPERS

        offsets = dict(zip(ARRAY_FIELDS, group[1:]))
        text = HELPERS.ir("fft_thunks", {"precision": precision, "offsets": offsets})
    else:
        from codegen.fft.groups import emit_group
        from codegen.llvm.builder import module_text

        vlen = vlen or kernel_vlen(precision, target)
        text = module_text(emit_group(precision, vlen, group, target.triple, data_layout_of(target)))
    return emit_object(optimize(parse(with_tuning(text, target)), target), target)


def _keys(precision: str, group: tuple, vlen: int | None) -> tuple[str, str]:
    """Disk-cache keys of a group's shared library and of its object code."""
    from runtime.disk_cache import cache_key

    key = cache_key("aot.fft group", _FORMAT, precision, group_name(group), str(vlen), _host_stamp(),
                    _source_digest())
    return cache_key(key, "shared library"), cache_key(key, "object")


def _cached_group(cache, precision: str, group: tuple, vlen: int | None):
    """(symbol -> address function, where it came from) of a group in the disk cache or among the
    prebuilt kernels (_prebuilt.py; then copied into the disk cache), or None."""
    from runtime.elf import ElfError, check_shared_object

    so_key = _keys(precision, group, vlen)[0]
    lib = _cache_get(cache, so_key, check_shared_object)
    if lib is not None:
        return _load_shared(lib, group), "loaded from the disk cache"
    from . import _prebuilt

    found = _prebuilt.group_library(precision, group, vlen)
    if found is None:
        return None
    lib, target = found
    try:
        check_shared_object(lib)
    except ElfError as e:
        log.warning("prebuilt FFT kernel %s %s is not a loadable library (%s); building it", precision,
                    group_name(group), e)
        return None
    _cache_put(cache, so_key, lib)  # later processes find it without the prebuilt manifest's checks
    return _load_shared(lib, group), f"loaded prebuilt ({target})"


def _built_group(cache, precision: str, group: tuple, vlen: int | None):
    """As _cached_group for a group not cached as a library: compiled, linked with cc and stored;
    without cc, compiled for the JIT (unless that object code is cached) and JIT-loaded."""
    from codegen.targets import host_target
    from runtime.native_lib import LinkError, find_cc, link_objects

    so_key, obj_key = _keys(precision, group, vlen)
    try:
        find_cc()
        lib = link_objects([_group_object(precision, group, vlen, host_target())])
    except LinkError as e:  # no usable cc: object code, in a JIT engine
        log.info("fft kernels: not linking %s (%s); loading its object code", group_name(group), e)
        return _jit_group(cache, obj_key, precision, group, vlen)
    _cache_put(cache, so_key, lib)
    return _load_shared(lib, group), "compiled"


def _jit_group(cache, obj_key: str, precision: str, group: tuple, vlen: int | None):
    from codegen.targets import jit_target
    from runtime.elf import check_object

    obj = _cache_get(cache, obj_key, check_object)
    source = "loaded object code from the disk cache" if obj is not None else "compiled"
    if obj is None:
        obj = _group_object(precision, group, vlen, jit_target())
        _cache_put(cache, obj_key, obj)
    return _load_jit(obj), source


def _cache_get(cache, key: str, check) -> bytes | None:
    try:
        return cache.get(key, check=check)  # a damaged entry is discarded (and rebuilt)
    except OSError as e:  # an unusable cache directory only costs time
        log.debug("disk cache unavailable: %s", e)
        return None


def _cache_put(cache, key: str, data: bytes) -> None:
    try:
        cache.put(key, data)
    except OSError as e:
        log.debug("could not write the disk cache: %s", e)


def _load_shared(data: bytes, group: tuple):
    """Load a library's bytes (checked by the disk cache) for good; its symbol lookup."""
    from runtime import pools
    from runtime.native_lib import load_library, symbol_address

    lookup = functools.partial(symbol_address, load_library(data, f"aot-fft-{group_name(group)}", owner="fft"))
    pools.offer(lookup)  # the threads group's pool: the process's, or passing its jobs on to it
    return lookup


def _load_jit(obj: bytes):
    from runtime import pools
    from runtime.jit import JitEngine

    engine = JitEngine()
    engine.add_object(obj, owner="fft")
    _engines.append(engine)  # the code lives as long as its engine: for good
    pools.offer(engine.address)
    return engine.address


_engines: list = []


_announced: set = set()


def _announce_build(precision: str, groups: list) -> None:
    """One line before a precision's first kernels are generated and compiled in this process (the
    core and a first radix pass: about a second of LLVM); later single groups take ~0.3 s each."""
    if precision in _announced or all(g[0] == "thunks" for g in groups):
        return
    _announced.add(precision)
    get_logger(PROGRESS).info(
        "building the %s FFT kernels for their first use (%s, ...; about a second): they are cached on "
        "disk, later processes load them", precision, ", ".join(group_name(g) for g in groups))


class _Groups:
    """The loaded groups of one precision and their import tables."""

    def __init__(self, precision: str):
        self.precision = precision
        self.vlen: int | None = None  # the core's, known once it is loaded
        self.libs: dict[tuple, object] = {}  # group -> address(symbol)
        self.tables: list[tuple] = []  # (table pointer, [(symbol, group)])

    def load(self, groups) -> None:
        """Load `groups`; those missing from the disk cache are built together, in parallel
        (optimisation and code generation release the GIL). The other groups' keys hold the
        core's lanes: read from the core when it is cached, else those it is built for."""
        from runtime.disk_cache import DiskCache

        with _lock:
            cache = DiskCache()
            todo = [g for g in dict.fromkeys(groups) if g not in self.libs]
            missing = []
            if ("core",) in todo:
                todo.remove(("core",))
                core = _cached_group(cache, self.precision, ("core",), None)
                if core is None:
                    from codegen.targets import host_target

                    missing.append(("core",))  # built first in the list: it is added first
                    self.vlen = kernel_vlen(self.precision, host_target())
                else:
                    self._add(("core",), *core)
            hits = []
            for g in todo:
                hit = _cached_group(cache, self.precision, g, self.vlen)
                if hit is None:
                    missing.append(g)
                else:
                    hits.append((g, hit))
            if missing:
                _announce_build(self.precision, missing)
            built = _build_all(cache, self.precision, missing, self.vlen)
            for g, (address, source) in [*zip(missing, built, strict=True), *hits]:
                self._add(g, address, source)

    def _add(self, group: tuple, address, source: str) -> None:
        log.info("fft kernels %s: %s %s", self.precision, group_name(group), source)
        self.libs[group] = address
        if group == ("core",):
            vlen = ffi.cast("int64_t *", address(vlen_symbol(self.precision)))[0]
            if self.vlen is not None and vlen != self.vlen:  # the keys of groups built with it
                raise RuntimeError(f"fft kernels {self.precision}: the core has {vlen} lanes, not {self.vlen}")
            self.vlen = vlen
        imports = imports_of(group, self.precision, self.vlen)
        if imports:
            self.tables.append((ffi.cast("intptr_t *", address(imports_symbol(self.precision))), imports))
        for table, entries in self.tables:  # fill every slot whose group is now loaded
            for i, (symbol, owner) in enumerate(entries):
                if not table[i] and owner in self.libs:
                    table[i] = self.libs[owner](symbol)

    def address(self, group: tuple, symbol: str) -> int:
        self.load([group])
        return self.libs[group](symbol)


def _build_all(cache, precision: str, groups: list, vlen: int | None) -> list:
    """_built_group of each of `groups` (in their order), on as many threads as there are cores
    and groups, the costliest started first."""
    def build(g):
        return _built_group(cache, precision, g, None if g == ("core",) else vlen)

    if len(groups) <= 1:
        return [build(g) for g in groups]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(len(groups), os.cpu_count() or 1)) as pool:
        jobs = {g: pool.submit(build, g) for g in sorted(groups, key=_build_cost, reverse=True)}
        return [jobs[g].result() for g in groups]


def _build_cost(group: tuple) -> int:
    """A group's relative LLVM time (f64, AVX-512, O1: radix 8 0.28 s, the core 0.17 s, radix 2
    0.12 s, the thunks 0.03 s): the order its build starts in."""
    return group[1] if group[0] == "radix" else {"core": 6, "thunks": 1}.get(group[0], 4)


def pass_groups(factors, forward: bool | None = None) -> list[tuple]:
    """The pass groups a plan with these radices runs, in one direction or (None) both."""
    need = {(r if r in CODELET_RADICES else "g", fw)
            for fw in ((True, False) if forward is None else (forward,)) for r in factors}
    return [group_of(r, fw) for r, fw in sorted(need, key=repr)]


def all_groups(vlen: int) -> list[tuple]:
    """Every group of the kernel module but the thunks (what compiled graphs may call)."""
    passes = [group_of(r, fw) for fw in (True, False) for r, _, _ in pass_keys(fw, vlen)]
    return [("core",), *dict.fromkeys(passes), ("planner",)]


class Kernels:
    """The kernels of one precision: the c2c entry as a cffi function pointer (`c2c`, signature
    _C2C_SIG), the real passes, the threads group's shared passes (`shared`, loaded on first use);
    `require(plan)` loads what a plan's passes need before its first call. `ptr(array)` is the data pointer argument for an array,
    `cptr` the C type of it."""

    def __init__(self, precision: str, first=()):
        if precision not in _REAL:
            raise ValueError(f"FFT kernels: precision must be 'f32' or 'f64', got {precision!r}")
        self.precision = precision
        self.real_dtype = np.dtype(_REAL[precision][0])
        self.ctype = _REAL[precision][1]
        self.cptr = self.ctype + " *"
        self.carray = self.ctype + "[]"
        t0 = time.perf_counter()
        self._groups = _Groups(precision)
        self._groups.load([("core",), *first])  # built together where they are not cached
        self.vlen = self._groups.vlen
        self._ready: set[tuple] = set()  # (radix or "g", forward) whose passes are loaded
        self.c2c = self._fn(_C2C_SIG, ("core",), entry_name(precision))
        self.r2c_post = self._fn(_R2C_SIG, ("core",), r2c_name(precision))
        self.c2r_pre = self._fn(_C2R_SIG, ("core",), c2r_name(precision))
        self.load_seconds = time.perf_counter() - t0

    def _fn(self, sig: str, group: tuple, symbol: str):
        return ffi.cast(sig.format(T=self.ctype), self._groups.address(group, symbol))

    def require(self, factors, forward: bool | None = None) -> None:
        """Load the passes that a plan with these radices runs (both directions by default)."""
        need = {(r if r in CODELET_RADICES else "g", fw)
                for fw in ((True, False) if forward is None else (forward,)) for r in factors}
        if need <= self._ready:
            return
        self._groups.load(pass_groups(factors, forward))
        self._ready |= need

    def address(self, symbol: str) -> int:
        """The address of an exported symbol of the loaded groups (the planner's: loaded here)."""
        if symbol in plan_names(self.precision).values():
            return self._groups.address(("planner",), symbol)
        for lib in list(self._groups.libs.values()):
            try:
                return lib(symbol)
            except KeyError:
                continue
        raise KeyError(f"fft kernels {self.precision}: no loaded group exports {symbol!r}")

    @functools.cached_property
    def shared(self):
        """aot_fft_shared_{p} (codegen/fft/threads.py): one long transform's passes on the group's
        pool of threads, loaded on first use; signature _SHARED_SIG."""
        return self._fn(_SHARED_SIG, ("threads",), shared_name(self.precision))

    @functools.cached_property
    def split(self):
        """aot_fft_c2c_split_{p} (codegen/fft/threads.py): batches of the c2c entry split over the
        pool's threads; its argument is names.C2C_JOB's block of int64 words."""
        return self._fn("void(*)(const int64_t *)", ("threads",), split_name(self.precision))

    @functools.cached_property
    def four_step(self):
        """aot_fft_four_step_{p} (codegen/fft/threads.py): one transform of a square length as
        columns, rows and a transpose on the pool's threads; its argument is names.FOUR_STEP_JOB's
        block."""
        self._groups.load([("fourstep",), ("threads",)])
        return self._fn("void(*)(const int64_t *)", ("threads",), four_step_name(self.precision))

    @functools.cached_property
    def planes(self):
        """aot_fft_planes_{p} (codegen/fft/threads.py): the last two axes of an n-D transform plane
        by plane on the pool's threads; its argument is names.PLANES_JOB's block."""
        return self._fn("void(*)(const int64_t *)", ("threads",), planes_name(self.precision))

    @functools.cached_property
    def halves(self):
        """aot_fft_halves_{p} (codegen/fft/threads.py): one transform as its two halves, one a
        thread, and a combining step; its argument is names.HALVES_JOB's block."""
        self._groups.load([("fourstep",), ("threads",)])
        return self._fn("void(*)(const int64_t *)", ("threads",), halves_name(self.precision))

    @functools.cached_property
    def r2c_post_shared(self):
        """The r2c pass of one row shared by the pool's threads (x, h, w, scale, nthreads)."""
        return self._fn("void(*)({T} *, int64_t, const {T} *, {T}, int64_t)", ("threads",),
                        f"aot_fft_r2c_post_shared_{self.precision}")

    @functools.cached_property
    def c2r_pre_shared(self):
        """The c2r pass of one row shared by the pool's threads (x, z, h, w, nthreads)."""
        return self._fn("void(*)(const {T} *, {T} *, int64_t, const {T} *, int64_t)", ("threads",),
                        f"aot_fft_c2r_pre_shared_{self.precision}")

    @functools.cached_property
    def _planner(self) -> dict[str, int]:
        return {w: self._groups.address(("planner",), name) for w, name in plan_names(self.precision).items()}

    @property
    def plan_make(self):
        return ffi.cast("void *(*)(int64_t)", self._planner["make"])

    @property
    def plan_release(self):
        return ffi.cast("void (*)(void *)", self._planner["release"])

    @functools.cached_property
    def plan_job(self):
        """aot_fft_plan_job_{p}(int64_t *job): names.PLAN_JOB's rows through `exec`, on the pool its
        job names (codegen/fft/planner.py)."""
        return ffi.cast("void (*)(int64_t *)", self._planner["job"])

    @functools.cached_property
    def thunks(self) -> dict | None:
        """{kind: cffi function} of the eager fast path's call thunks (codegen/trampolines.py),
        or None when numpy's array struct is not as probed (the general path only)."""
        group = _thunks_group()
        if group is None:
            return None
        from runtime import blocks

        p = self.precision
        blocks.offer(f"aot_fft_call_{p}", functools.partial(self._groups.address, group))
        return {kind: ffi.cast(_THUNK_SIG, self._groups.address(group, f"aot_fft_thunk_{kind}_{p}"))
                for kind in _THUNK_KINDS}

    @functools.cached_property
    def call_builtin(self) -> int | None:
        """Address of aot_fft_call_{precision} (ir.abi_slots.FFT_CALL_HEADER), or None when numpy's
        array struct is not as probed."""
        if self.thunks is None:
            return None
        return self._groups.address(_thunks_group(), f"aot_fft_call_{self.precision}")

    def export(self) -> None:
        """Load every group and make the entries a compiled graph calls resolvable process-wide."""
        import llvmlite.binding as llvm

        self._groups.load([*all_groups(self.vlen), ("fourstep",), ("threads",)])
        self._ready |= {(r, fw) for fw in (True, False) for r in (*CODELET_RADICES, "g")}
        p = self.precision
        for group, name in [(("core",), n) for n in (entry_name(p), r2c_name(p), c2r_name(p))] + [
                (("planner",), n) for n in plan_names(p).values()] + [
                (("threads",), n) for n in (four_step_name(p), halves_name(p))]:  # codegen/graph_fft_split.py
            llvm.add_symbol(name, self._groups.address(group, name))


def _thunks_group() -> tuple | None:
    """The group of the call thunks and builtins, named by the array struct's field offsets
    (ir.abi_slots.ARRAY_FIELDS order); None when they could not be probed."""
    from runtime.buffers import ARRAY_LAYOUT

    if ARRAY_LAYOUT is None:
        return None
    layout = dict(ARRAY_LAYOUT)
    return ("thunks", *(layout[f] for f in ARRAY_FIELDS))


_KERNELS: dict[str, Kernels] = {}
_EXPORTED: set[str] = set()


def loaded(precision: str, first=()) -> Kernels:
    """The eager path's kernels of `precision` (the core loaded; passes as plans need them).
    `first`: groups the caller needs next, loaded (or built) with the core when it is first loaded
    (an empty cache builds them in parallel instead of one after another)."""
    k = _KERNELS.get(precision)
    if k is None:
        with _lock:
            k = _KERNELS.get(precision)
            if k is None:
                k = _KERNELS[precision] = Kernels(precision, first)
    return k


def first_groups(factors, forward: bool) -> list[tuple]:
    """What the eager fast path's first call of a plan with these radices loads after the core:
    its passes in that direction and the call thunks."""
    thunks = _thunks_group()
    return pass_groups(factors, forward) + ([thunks] if thunks is not None else [])


def kernels(precision: str) -> Kernels:
    """The kernels of `precision` with every group loaded and the entries a compiled graph calls
    registered process-wide (so that its object code resolves them)."""
    k = loaded(precision)
    if precision not in _EXPORTED:
        with _lock:
            if precision not in _EXPORTED:
                k.export()
                _EXPORTED.add(precision)
    return k


# ---- shipping (aot/compiler/shipping.py) ------------------------------------------------------
def loaded_libraries(precision: str) -> dict:
    """The disk-cache entries (key -> shared-library bytes) of the groups of `precision` this
    process has loaded, with this host's stamp: what a process on the same kind of host loads
    instead of building them (a pickled compiled function that calls FFTs carries them)."""
    from runtime.disk_cache import DiskCache

    groups = loaded(precision)._groups
    cache, out = DiskCache(), {}
    for group in list(groups.libs):
        key = _keys(precision, group, None if group == ("core",) else groups.vlen)[0]
        data = _cache_get(cache, key, None)
        if data is not None:
            out[key] = data
    return {"stamp": _host_stamp(), "sources": _source_digest(), "libraries": out}


def store_libraries(shipped: dict) -> int:
    """Put libraries from loaded_libraries of another process into this one's disk cache, where
    the groups' keys find them (checked as shared objects when they load); none when the other
    host or the kernels' sources differ (their keys would never be asked for). Returns how many."""
    if shipped.get("stamp") != _host_stamp() or shipped.get("sources") != _source_digest():
        return 0
    from runtime.disk_cache import DiskCache

    cache, n = DiskCache(), 0
    for key, data in shipped["libraries"].items():
        if _cache_get(cache, key, None) is None:
            _cache_put(cache, key, data)
            n += 1
    return n


# ---- the whole module, for a target (shared libraries: aot.export) ---------------------------
def kernel_object(precision: str, target) -> tuple[bytes, str]:
    """The whole kernel module's object code for `target` (disk-cached) and where it came from."""
    import llvmlite

    from runtime.disk_cache import DiskCache, cache_key
    from runtime.elf import check_object

    vlen = kernel_vlen(precision, target)
    key = cache_key("aot.fft", precision, str(vlen), target.triple, target.cpu, target.features,
                    llvmlite.__version__, _source_digest())
    cache = DiskCache()
    obj = cache.get(key, check=check_object)  # a damaged entry is discarded and rebuilt
    if obj is not None:
        return obj, "loaded from the disk cache"
    obj = build_object(precision, vlen, target)
    cache.put(key, obj)
    return obj, "compiled"


def build_object(precision: str, vlen: int, target) -> bytes:
    from codegen.fft import emit_module
    from codegen.targets import emit_object, optimize
    from codegen.targets.base import data_layout_of, parse

    mod = parse(str(emit_module(precision, vlen, target.triple, data_layout_of(target))))
    return emit_object(optimize(mod, target), target)
