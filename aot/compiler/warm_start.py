"""Warm start: a first call that loads an earlier process's native code without compiler work.

When aot.compile's first call in a process misses its in-memory cache, the function's key
(fingerprint.py: its code and everything it reads, the arguments' dtypes and shapes, versions,
sources, CPU) is looked up in the disk cache. A hit holds a record (the entry and trampoline
symbols, the signature, the output structure) and a shared library with the entry and its call
trampoline linked together, each checked against the SHA-256 the cache stores with it; the library
is loaded with the dynamic loader and called. Neither the tracer, the code generator, sympy nor
llvmlite is imported. The entry's guards are then built as for a traced entry, so a later call with
other shapes or a changed global scalar still recompiles.

A symbolic compile (the dims that changed so far, or dynamic=True) has a key too, with those
dims open (fingerprint.function_key's `dynamic`), and its record holds its guards over the
arguments (texts over the flat leaves: the ShapeEnv's relations among them), which a load
compiles without sympy and checks before the entry is used: a call they reject compiles.

A compile whose entry qualifies (static shapes or stored guards, positional arrays in, arrays
out in a flat tuple or alone, no parameters, no in-place updates, code that needs nothing but
libc, libm, libmvec and pthreads) writes the record after linking the shared library with `cc` on
a background thread, which the interpreter waits for at exit. The library is linked from the JIT's
own object code, which addresses everything absolutely (codegen.jit_target's large code model): it
carries text relocations, which the dynamic loader applies when it loads it. Without `cc`, or with
AOT_WARM_START=0 or the option `disk_cache=False`, there is no warm start and nothing else changes.
"""
from __future__ import annotations

import _thread
import marshal
import os

import numpy as np

from ir.logger import get_logger

from .._pytree import LeafSpec, TreeSpec

log = get_logger(__name__)

ENV_VAR = "AOT_WARM_START"
_FORMAT = 4  # of the record (2: its trampoline is aot_call_strided; 3: inputs say whether the code
# reads them as C-contiguous; 4: a symbolic compile's guards); other formats are ignored
_lock = _thread.allocate_lock()  # threading is imported when a record is written
_queue: list[tuple] = []  # records to link and store, in order, by one worker thread at a time
_worker: list = []  # the linking thread, while it runs


def enabled(options: dict) -> bool:
    return os.environ.get(ENV_VAR, "1") != "0" and options.get("disk_cache", True)


def settings_of(options: dict, dynamic) -> str:
    """The compile settings that enter the key."""
    return repr((_FORMAT, sorted(options.items(), key=lambda kv: kv[0]), dynamic))


def _cache():
    from runtime.disk_cache import DiskCache

    return DiskCache()


def _keys(key: str) -> tuple[str, str]:
    from runtime.disk_cache import cache_key

    return cache_key("aot warm record", key), cache_key("aot warm library", key)


# ---- loading --------------------------------------------------------------------------------
def lookup(key: str, args: tuple):
    """(runner, out_spec, n_outputs, the inputs its code reads as C-contiguous) from the disk
    cache for `key`, or None (missing, damaged, or not matching `args`: then the caller compiles
    as usual)."""
    record_key, lib_key = _keys(key)
    try:
        cache = _cache()
        blob = cache.get(record_key)
        record = _parse(blob, args) if blob is not None else None
        lib = cache.get(lib_key) if record is not None else None
    except OSError as e:
        log.debug("warm start: disk cache unavailable: %s", e)
        return None
    if lib is None:
        return None
    try:
        runner = _load(record, lib)
    except (OSError, KeyError) as e:  # a library the loader rejects: compile instead
        log.warning("warm start: could not load a cached library (%s); compiling", e)
        return None
    n_out = len(record["outputs"])
    spec = LeafSpec if record["unwrap"] else TreeSpec("tuple", (), (LeafSpec,) * n_out)
    return runner, spec, n_out, [i for i, (_, _, c) in enumerate(record["inputs"]) if c], record["guards"]


def stored_spec(stored: dict, extra: list, names: list[str]):
    """The GuardSpec of a symbolic compile's stored guards (the arguments' texts, in terms of the
    flat leaves L[i]), with `extra` (free_variable_guards: source, readable) appended; `names`:
    the leaves' sources (guards.leaf_sources), for the readable texts."""
    from .guards import GuardSpec, _rename

    texts = list(stored["texts"]) + [src for src, _ in extra]
    readable = [_rename(t, names) for t in stored["texts"]] + [text for _, text in extra]
    return GuardSpec(texts, readable, readable, list(stored["sizes"]), dict(stored["static_dims"]),
                     dict(stored["ranks"]), {}, [src for src, _ in extra], {}, names, True,
                     tuple(stored["contiguous"]))


def _parse(blob: bytes, args: tuple) -> dict | None:
    try:
        record = marshal.loads(blob)
    except (EOFError, ValueError, TypeError):
        return None
    fields = {"format", "entry", "trampoline", "inputs", "outputs", "unwrap", "guards"}
    if not isinstance(record, dict) or set(record) != fields or record["format"] != _FORMAT:
        return None
    try:  # the key says they match: be sure (a symbolic dim, a string, matches any size)
        if len(record["inputs"]) != len(args) or not all(
                d == a.dtype.str and len(s) == a.ndim and all(type(n) is str or n == m for n, m in zip(s, a.shape))
                for (d, s, _), a in zip(record["inputs"], args)):
            return None
        symbolic = any(type(n) is str for _, s, _ in record["inputs"] for n in s)
        if symbolic != (record["guards"] is not None) or (symbolic and not _guards_ok(record["guards"])):
            return None
    except (TypeError, ValueError):
        return None
    return record


def _guards_ok(g) -> bool:
    """Whether a record's stored guards have the shape _symbolic_guards gives them."""
    return (isinstance(g, dict) and set(g) == {"texts", "sizes", "static_dims", "ranks", "contiguous"}
            and all(isinstance(t, str) for t in (*g["texts"], *g["sizes"]))
            and isinstance(g["static_dims"], dict) and isinstance(g["ranks"], dict))


def _load(record: dict, lib_bytes: bytes):
    from ir.abi_slots import BLOCKS_MODULE
    from runtime import ArgSpec, JitFunction, Signature, blocks, perf_map, pools
    from runtime.native_lib import load_library, symbol_address

    owner = perf_map.current_owner() if perf_map.ENABLED else ""
    lib = load_library(lib_bytes, record["entry"], owner, {record["trampoline"]: "trampoline"})
    blocks.offer(BLOCKS_MODULE, lambda symbol: symbol_address(lib, symbol))  # (the library's copy)
    pools.offer(lambda symbol: symbol_address(lib, symbol))  # (its pool, if its code runs threads)
    sig = Signature(tuple(ArgSpec(d, tuple(s), bool(c)) for d, s, c in record["inputs"]),
                    tuple(ArgSpec(d, tuple(s)) for d, s in record["outputs"]), record["entry"])
    return JitFunction(symbol_address(lib, record["entry"]), sig, keepalive=lib, tuple_outputs=True,
                       trampoline=symbol_address(lib, record["trampoline"]))


# ---- recording ------------------------------------------------------------------------------
def qualifies(entry, args: tuple) -> bool:
    """Whether a compiled cache entry can be stored for a warm start (see the module docstring)."""
    n_out = len(entry.out_template)
    flat = entry.out_spec == LeafSpec and n_out == 1 or entry.out_spec == TreeSpec("tuple", (), (LeafSpec,) * n_out)
    runner = entry.runner
    return (flat and not entry.lifted and not entry.mutations and entry.pending is None
            and entry.input_index == list(range(len(args)))
            and entry.out_template == [("graph", k) for k in range(n_out)]
            and getattr(runner, "object_key", None) is not None and runner.signature is not None
            and (_static(runner.signature) or _symbolic_guards(entry) is not None))


def _static(sig) -> bool:
    return all(isinstance(d, int) for s in sig.inputs + sig.outputs for d in s.shape)


def _symbolic_guards(entry) -> dict | None:
    """A symbolic compile's guards over its arguments, as stored in its record: the texts of its
    GuardSpec but the free variables' (recomputed at load), or None where it has other leaves."""
    spec = getattr(entry.guards, "spec", None)
    if spec is None or not spec.all_arrays or spec.consts or spec.env:
        return None
    extra = set(spec.extra)
    return {"texts": [t for t in spec.texts if t not in extra], "sizes": list(spec.sizes),
            "static_dims": {i: dict(d) for i, d in spec.static_dims.items()}, "ranks": dict(spec.ranks),
            "contiguous": list(spec.contiguous)}


def record(key: str, entry) -> None:
    """Link `entry`'s native code into a shared library and store it with its record, on a
    background thread: one at a time (a program compiling many functions runs one `cc` at a
    time), non-daemon (the interpreter waits at exit for the links still queued, ~50 ms each)."""
    with _lock:
        guards = None if _static(entry.runner.signature) else _symbolic_guards(entry)
        _queue.append((key, entry.runner, entry.out_spec == LeafSpec, guards))
        if not _worker:
            import threading

            _worker.append(threading.Thread(target=_work, name="aot-warm-start-link"))
            _worker[0].start()


def wait() -> None:
    """Wait until every queued record is stored (tests; the interpreter does it at exit)."""
    with _lock:
        t = _worker[0] if _worker else None
    if t is not None:
        t.join()


def _work() -> None:
    while True:
        with _lock:
            if not _queue:
                _worker.clear()
                return
            job = _queue.pop(0)
        _store(*job)


def _store(key: str, runner, unwrap: bool, guards: dict | None) -> None:
    try:
        _link_and_put(key, runner, unwrap, guards)
    except Exception as e:  # noqa: BLE001 - a warm start is an optimisation: never fail the program for it
        log.debug("warm start: not stored: %s", e)


def _link_and_put(key: str, runner, unwrap: bool, guards: dict | None) -> None:
    from codegen.trampolines import HELPERS
    from ir.abi_slots import SHARED_PARALLEL_FOR
    from runtime.buffers import ARRAY_LAYOUT
    from runtime.elf import check_object
    from runtime.jit import array_trampoline_object, blocks_object, shared_pool_object
    from runtime.native_lib import link_objects

    cache = _cache()
    obj = cache.get(runner.object_key, check=check_object)
    if obj is None:
        return
    tramp, tramp_symbol = array_trampoline_object(ARRAY_LAYOUT, HELPERS)
    pool = [shared_pool_object(HELPERS)] if SHARED_PARALLEL_FOR.encode() in obj else []  # its own, if it runs threads
    lib = link_objects([obj, tramp, blocks_object(HELPERS), *pool])  # (blocks: the handler, graphs' buffers)
    sig = runner.signature
    rec = {"format": _FORMAT, "entry": sig.name, "trampoline": tramp_symbol, "unwrap": unwrap, "guards": guards,
           "inputs": [(np.dtype(s.dtype).str, tuple(s.shape), s.contiguous) for s in sig.inputs],
           "outputs": [(np.dtype(s.dtype).str, tuple(s.shape)) for s in sig.outputs]}
    record_key, lib_key = _keys(key)
    cache.put(lib_key, lib)  # the library first: a record is only ever seen with its library
    cache.put(record_key, marshal.dumps(rec))
    log.debug("warm start: stored %s (%d bytes)", sig.name, len(lib))
