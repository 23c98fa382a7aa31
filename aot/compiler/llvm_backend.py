"""The "llvm" backend: fx graph of core ops -> ir -> optimised, fused ir -> LLVM -> native code.

Object code is cached on disk under a key made of the name-normalised ir text, the target
(triple, CPU, features) and the versions of aot and llvmlite, so a second process compiling the
same function loads it instead of running LLVM. In-process, equal keys share one loaded entry.

options["profile"] (aot.profile) builds an entry that times its kernel launches: the flag is part
of the codegen options, hence of the key, so profiled and plain code never serve each other's
calls. Its ProfileLayout (the counters' global and the launch sites' kernel names) is stored next
to the object code and, with the counters' address, set on the runner as `profile`
(a ProfileCounters); such entries are never linked for a warm start (their runner has no
`object_key`).
"""
from __future__ import annotations

import functools
import os
import threading
import time

import ir
from ir.logger import INFO, get_logger
from ir.passes import run_pipeline
from ir.printer import print_module
from ir.records import record
from ir.symbols import deciding

from ..futures import Future
from ..logs import artifact_logger
from .to_ir import graph_to_ir

log = get_logger(__name__)
ir_log = artifact_logger("ir")
graph_log = artifact_logger("graph")

# the optimisation pipeline, top to bottom (fusion last: it works on canonical, deduplicated ir)
PIPELINE = ("canonicalize", "fold", "canonicalize", "cse", "dce", "fuse", "fuse_fft", "dce")

# LLVM's O1: the code generator writes its loops as explicit vectors with their own accumulators
# and unrolling, so O2/O3's extra passes (GVN, SLP, LLVM's unroller, more inlining) leave the run
# time as it is on every case of tools/bench_opt_levels.py (elementwise, reductions, normalisations,
# matmul, sorts, scans, median, histogram, convolve, linalg; 1 and 2 threads) and cost 0.5-0.8x of
# the first call on top; options={"opt_level": 3} or AOT_OPT_LEVEL=3 give them back
DEFAULT_OPT_LEVEL = 1
_loaded: dict[str, int] = {}  # cache key -> entry address in the process-wide JIT engine
# where this process's native code came from: LLVM runs, disk-cache loads, in-process reuses
STATS = {"compiles": 0, "disk_hits": 0, "memory_hits": 0}
SECONDS = {"compiles": 0.0}  # spent on them: lowering and LLVM
_in_flight: dict[str, Future] = {}  # cache key -> its address, while one thread compiles it
_layouts: dict = {}  # cache key -> codegen.options.ProfileLayout of a profiled entry
_lock = threading.Lock()


@functools.cache
def _host(opt_level: int):
    from codegen import jit_target

    return jit_target(opt_level=opt_level)


def opt_level_of(options: dict) -> int:
    """The LLVM optimisation level a compile runs at: options["opt_level"] (0-3), else $AOT_OPT_LEVEL,
    else DEFAULT_OPT_LEVEL."""
    level = options.get("opt_level")
    if level is None:
        env = os.environ.get("AOT_OPT_LEVEL")
        if not env:
            return DEFAULT_OPT_LEVEL
        if env not in ("0", "1", "2", "3"):
            raise ValueError(f"AOT_OPT_LEVEL must be 0, 1, 2 or 3, got {env!r}")
        return int(env)
    if type(level) is not int or not 0 <= level <= 3:
        raise ValueError(f"aot.compile: options['opt_level'] must be an int from 0 to 3, got {level!r}")
    return level


def profile_of(options: dict) -> bool:
    """Whether a compile builds a profiled entry: options["profile"] (True or False, default False)."""
    return _flag(options, "profile", False)


def _flag(options: dict, name: str, default: bool) -> bool:
    value = options.get(name, default)
    if type(value) is not bool:
        raise ValueError(f"aot.compile: options[{name!r}] must be True or False, got {value!r}")
    return value


@record(frozen=True)
class ProfileCounters:
    """A profiled entry's counters as loaded: their layout and the address of the global (0 for a
    graph without native code, which has none)."""

    layout: object  # codegen.options.ProfileLayout
    address: int


def build_ir(gm) -> ir.Module:
    """Lower and optimise a captured graph; the returned module holds one function `main`."""
    if graph_log.isEnabledFor(INFO):
        graph_log.info("captured graph:\n%s", gm.graph)
    with deciding(facts_of(gm)):
        module = graph_to_ir(gm, "main")
        run_pipeline(module, ",".join(PIPELINE))
    return module


def facts_of(gm):
    """What lowering may assume about symbolic sizes: the capture's guards (None when static)."""
    dyn = gm.meta.get("dynamic") if hasattr(gm, "meta") else None
    if dyn is None:
        return None
    from .dynamic import KnownFacts

    return KnownFacts(dyn)


def signature_of(func: ir.Func, name: str, contiguous: tuple = ()):
    """The entry's runtime Signature; `contiguous`: per input, whether the code assumes it
    C-contiguous (CodegenOptions.contiguous_inputs)."""
    from ir.size_render import python_source
    from runtime import ArgSpec, Signature

    def spec(t, contig=False):  # symbolic dims as Python source (output shapes are computed from it per call)
        return ArgSpec(t.dtype.numpy, tuple(d if isinstance(d, int) else python_source(d) for d in t.shape),
                       contig)

    inputs = tuple(spec(t, k < len(contiguous) and bool(contiguous[k])) for k, t in enumerate(func.arg_types))
    return Signature(inputs, tuple(spec(t) for t in func.result_types), name)


def canonical_text(module: ir.Module) -> str:
    """The module printed without value names, so that renaming variables keeps the cache key."""
    hints = [(v, v.name_hint) for f in module.funcs.values() for v in _values(f)]
    try:
        for v, _ in hints:
            v.name_hint = None
        return print_module(module)
    finally:
        for v, h in hints:
            v.name_hint = h


def _values(func: ir.Func):
    yield from func.args
    for op in func.walk():
        yield from op.results
        for r in op.regions:
            for b in r.blocks:
                yield from b.args


def cache_key_of(module: ir.Module, target, options) -> str:
    import llvmlite

    import aot
    from runtime.disk_cache import cache_key

    return cache_key(canonical_text(module), target.triple, target.cpu, target.features, str(target.opt_level),
                     str(target.vector_bits), str(target.vector_library), target.code_model,
                     target.relocation, repr(options), aot.__version__, llvmlite.__version__,
                     codegen_fingerprint())


@functools.cache
def codegen_fingerprint() -> str:
    """Stamp of the code generator's sources: object code cached by another version of codegen/
    (even with the same package version, e.g. during development) must not be reused. Path, size
    and mtime of each file, as the warm start stamps aot's sources (fingerprint._source_stamp):
    an edit changes them, and reading and hashing the ~90 files cost 4 ms of every first compile."""
    import os

    import codegen

    from .fingerprint import tree_stamp

    return tree_stamp(os.path.dirname(os.path.abspath(codegen.__file__)))


def compile_graph(gm, example_inputs, options: dict):
    """Backend entry point: returns a callable(flat arrays) -> tuple of outputs."""
    t0 = time.perf_counter()
    module = build_ir(gm)
    func = module.funcs["main"]
    if not func.result_types:  # every output is an input or a constant: no native code to run
        return _no_code(profile_of(options))
    fn = load_module(module, options, facts_of(gm), contiguous_of(gm))
    log.debug("llvm backend: compiled in %.1f ms", 1e3 * (time.perf_counter() - t0))
    runner = fn.returning_tuples()  # its `fast` is CompiledFunction's hot path
    runner.fft_precisions = fn.fft_precisions
    if hasattr(fn, "profile"):
        runner.profile = fn.profile
    return runner


def contiguous_of(gm) -> tuple:
    """Per graph input, whether the code may assume it C-contiguous (gm.meta["contiguous"], which
    aot.compile sets with a guard on each such argument's layout; none without it)."""
    meta = getattr(gm, "meta", None) or {}
    return tuple(bool(x) for x in meta.get("contiguous", ()))


def _no_code(profile: bool):
    def nothing(*a):
        return ()

    if profile:  # no entry, no kernels: a profile of zeros
        from codegen.options import ProfileLayout

        nothing.profile = ProfileCounters(ProfileLayout(""), 0)
    return nothing


def load_module(module: ir.Module, options: dict, facts=None, contiguous: tuple = ()):
    """Native callable for `module`'s function `main`, through the in-process and disk caches
    (`contiguous`: per input, whether the code may assume it C-contiguous). Thread-safe: one thread
    compiles a key, the others wait for it (_load_once)."""
    from codegen.options import CodegenOptions
    from runtime import JitFunction, default_num_threads

    target = _host(opt_level_of(options))
    func = module.funcs["main"]
    contiguous = tuple(contiguous[: len(func.args)]) if any(contiguous) else ()
    cg = CodegenOptions(num_threads=int(options.get("num_threads") or default_num_threads()),
                        profile=profile_of(options), contiguous_inputs=contiguous,
                        streaming_stores=_flag(options, "streaming_stores", True))
    key = cache_key_of(module, target, cg)
    name = f"aot_{key[:24]}"
    sig = signature_of(func, name, contiguous)
    precisions = fft_precisions(func)
    addr = _load_once(key, lambda: _build(module, key, name, target, cg, options, facts, precisions))
    from codegen.trampolines import HELPERS  # builds runtime's call trampolines (IR only on a cache miss)

    fn = JitFunction(addr, sig, helpers=HELPERS)
    fn.fft_precisions = precisions  # what a shipped copy loads first (shipping.py)
    if cg.profile:
        fn.profile = _counters(key)
    elif options.get("disk_cache", True):
        fn.object_key = key  # the object a warm start links into a shared library (warm_start.py)
    return fn


def _load_once(key: str, build) -> int:
    """The entry address loaded under `key`: `build()` run by one thread, the others waiting for
    it (LLVM runs outside the lock: compiles run on watchdog threads, one of them possibly stuck,
    and compiles of other keys go on)."""
    with _lock:
        addr = _loaded.get(key)
        job = _in_flight.get(key) if addr is None else None
        owner = addr is None and job is None
        if owner:
            job = _in_flight[key] = Future()
        STATS["memory_hits"] += not owner
    if owner:
        try:
            addr = build()
            job.set_result(addr)
        except BaseException as e:
            job.set_exception(e)  # the waiters raise it too
            raise
        finally:
            with _lock:
                del _in_flight[key]
    elif addr is None:
        addr = job.wait()
    return addr


def _counters(key: str) -> ProfileCounters:
    """The counters of the profiled entry loaded under `key`."""
    layout = _layouts[key]
    from runtime.jit import default_engine

    return ProfileCounters(layout, default_engine().global_address(layout.symbol))


def _build(module: ir.Module, key: str, name: str, target, cg, options: dict, facts, precisions) -> int:
    obj = _object_code(module, key, name, target, cg, options, facts)
    load_fft_kernels(precisions)
    return _install(key, name, obj)


def _object_code(module: ir.Module, key: str, name: str, target, cg, options: dict, facts) -> bytes:
    """The object code of `module` from the disk cache, or compiled (and stored there)."""
    from codegen import compile_object, lower_module
    from runtime.disk_cache import DiskCache
    from runtime.elf import check_object

    disk = DiskCache() if options.get("disk_cache", True) else None
    obj = disk.get(key, check=check_object) if disk is not None else None  # damaged: discarded, rebuilt
    if obj is not None and cg.profile and not _cached_layout(disk, key):
        obj = None  # a profiled object is of no use without its layout
    _count("disk_hits" if obj is not None else "compiles")
    if obj is None:
        func = module.funcs["main"]
        func.name = name
        t0 = time.perf_counter()
        try:
            with deciding(facts):
                llmod = lower_module(module, target, cg)
            obj = compile_object(llmod, target)
        finally:
            func.name = "main"
            with _lock:
                SECONDS["compiles"] += time.perf_counter() - t0
        if cg.profile:
            _set_layout(key, llmod.__dict__["aot_profile"][name])
        if disk is not None:
            disk.put(key, obj)
            if cg.profile:
                disk.put(_layout_key(key), _layouts[key].to_json().encode())
    return obj


def _layout_key(key: str) -> str:
    from runtime.disk_cache import cache_key

    return cache_key("aot profile layout", key)


def _cached_layout(disk, key: str) -> bool:
    """Load a profiled object's layout from the disk cache; False when it is missing or damaged."""
    from codegen.options import ProfileLayout

    data = disk.get(_layout_key(key))
    try:
        _set_layout(key, ProfileLayout.from_json(data.decode()))
    except (AttributeError, ValueError, KeyError, TypeError):  # None, not JSON, not a layout
        return False
    return True


def _set_layout(key: str, layout) -> None:
    with _lock:
        _layouts[key] = layout


def _install(key: str, name: str, obj: bytes) -> int:
    """Load `obj` into the process's JIT engine (its owner thread only); returns the address.
    The object was emitted for the large code model (codegen.jit_target): the engine may map its
    code and constants far apart."""
    from codegen.trampolines import HELPERS
    from ir.abi_slots import BLOCKS_CTX, BUFFER_ALLOC, BUFFER_FREE, SHARED_PARALLEL_FOR
    from runtime import perf_map
    from runtime.jit import blocks_module, default_engine, shared_pool

    if SHARED_PARALLEL_FOR.encode() in obj:  # the thread pool the graph's kernels run on (its
        shared_pool(HELPERS)  # name is in the symbol table of an object that calls it; serial code has none)
    if any(s.encode() in obj for s in (BUFFER_ALLOC, BUFFER_FREE, BLOCKS_CTX)):  # the allocator of its
        blocks_module(HELPERS)  # buffers (likewise; a graph may only free, e.g. a transform's scratch)
    engine = default_engine()
    engine.add_object(obj, owner=perf_map.current_owner() if perf_map.ENABLED else "")
    addr = engine.address(name)
    with _lock:
        _loaded[key] = addr
    return addr


def _count(stat: str) -> None:
    with _lock:
        STATS[stat] += 1


def fft_precisions(func: ir.Func) -> tuple[str, ...]:
    """The precisions of the FFT kernels a graph calls ("f32", "f64"; none for most graphs, which
    then need no code generator import)."""
    from ir.structural import FFT_KINDS

    if not any(op.name in FFT_KINDS or op.name == "kernel.fft" for op in func.walk()):
        return ()
    from codegen.graph_fft import kernel_precisions

    return tuple(kernel_precisions(func))


def load_fft_kernels(precisions: tuple[str, ...]) -> None:
    """Load the FFT kernels of `precisions`, so that their symbols resolve when an object calling
    them loads."""
    if precisions:
        from ..fft._native import kernels

        for precision in precisions:
            kernels(precision)  # registers the module's entries process-wide


def install_shipped(key: str, name: str, obj: bytes, precisions: tuple[str, ...]) -> int:
    """Load object code that another process compiled under cache key `key` (shipping.py, which
    verified it), unless this process has it already; returns entry `name`'s address."""
    def build() -> int:
        load_fft_kernels(precisions)
        return _install(key, name, obj)

    return _load_once(key, build)


