"""Compiled functions travel by value: pickling an aot.compile'd function carries its native code.

`pickle.dumps(f)` (and cloudpickle's, which Dask uses) gives the function (as pickle gives it:
module-level functions by reference; cloudpickle sends lambdas and closures by value), its compile
settings and every entry that can travel: its guards (guards.GuardSpec), how the call's leaves map
to the graph's inputs and outputs, its captured graph, and its native code: the object code with
its SHA-256, the entry symbol and signature, the JIT target's triple and CPU features, and which
aot.fft kernel libraries it calls (put into the receiver's disk cache when its host and the
kernels' sources are the same kind; otherwise the receiver builds them, ~2 s). Unpickling loads
that object code into this process's JIT, after checking the
digest and the ELF structure (runtime.elf.check_object) as the disk cache does: no trace and no
compile (`cache_info()["shipped"]` counts these entries); the code is kept in the receiver's disk
cache, so that it can ship it on. Where the code cannot run here (a CPU
lacking one of the features it was compiled for, another architecture) or did not travel (the
sender's disk cache was off), the entry recompiles its captured graph on its first call, with
that call's arrays. Entries that read a module's parameters, or whose guards compare non-scalar
constants by identity, do not travel: the receiver traces them again.

One process unpickling the same compiled function many times (a Dask worker receives it with
every task) gets one function object, which adopts entries it has not seen.
"""
from __future__ import annotations

import pickle
import threading
import uuid
import weakref

from ir.digest import sha256
from ir.logger import get_logger

log = get_logger(__name__)

FORMAT = 1
_received: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # sender's id -> function
_lock = threading.Lock()


class ShippedCodeError(ValueError):
    """Native code in a pickled compiled function that fails its checks (damaged in transit)."""


# ---- sending ------------------------------------------------------------------------------------
def state_of(cf) -> dict:
    """What pickling CompiledFunction `cf` carries."""
    if cf._ship_id is None:
        cf._ship_id = uuid.uuid4().hex
    cf._flush_hits()
    return {"format": FORMAT, "id": cf._ship_id, "fn": _function_of(cf), "backend": cf._backend_arg,
            "dynamic": cf._dynamic, "fullgraph": cf._fullgraph, "options": cf._settings(),
            "dynamic_dims": sorted(cf._dynamic_dims),
            "entries": [e for e in (_cached_state(cf, entry) for entry in list(cf._entries))
                        if e is not None]}


def _cached_state(cf, entry) -> dict | None:
    """An entry's state, made once (a Dask graph pickles the function with every task message)."""
    cache = cf.__dict__.setdefault("_ship_states", {})
    live = {id(e) for e in cf._entries}
    for k in [k for k in cache if k not in live]:  # entries reset() dropped or a late compile replaced
        del cache[k]
    hit = cache.get(id(entry))
    if hit is None or hit[0] is not entry:
        hit = cache[id(entry)] = (entry, _entry_state(entry))
    return hit[1]


def _function_of(cf):
    """The compiled function's own function, or, where a module's attribute of that name is the
    compiled function itself (`@aot.compile` on a module-level def, which pickle could not find by
    name), a reference that imports the module and unwraps it."""
    fn = cf._orig
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if module and module != "__main__" and "<" not in name:
        import sys

        if _attribute(sys.modules.get(module), name) is cf:
            return _Decorated(module, name)
    return fn


def _attribute(owner, dotted: str):
    """owner.a.b for dotted "a.b" (None where one is missing)."""
    for part in dotted.split("."):
        owner = getattr(owner, part, None)
    return owner


class _Decorated:
    """Pickles as (module, qualified name) of a module-level `@aot.compile`d function."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __reduce__(self):
        return _undecorate, (self.module, self.name)


def _undecorate(module: str, name: str):
    import importlib

    owner = _attribute(importlib.import_module(module), name)
    return getattr(owner, "_orig", owner)


def _entry_state(entry) -> dict | None:
    spec = getattr(entry.guards, "spec", None)
    if spec is None or entry.lifted or entry.pending is not None or entry.error is not None:
        return None
    if any(k.startswith("CONST") and not _plain(v) for k, v in spec.consts.items()):
        return None  # an identity guard (`L[i] is CONSTi`): meaningless in another process
    try:
        graph = entry.graph_source or (pickle.dumps(entry.gm) if entry.gm is not None else None)
        state = {"guards": spec, "input_index": entry.input_index, "out_spec": entry.out_spec,
                 "out_template": entry.out_template, "mutations": entry.mutations,
                 "graph": graph, "native": _native_state(entry.runner)}
        pickle.dumps(state)
    except Exception as e:  # noqa: BLE001 - an entry that cannot travel is traced again there
        log.debug("shipping: an entry of %s stays behind: %s", entry.runner, e)
        return None
    return state


def _plain(v) -> bool:
    import numpy as np

    return v is None or isinstance(v, (bool, int, float, complex, str, np.generic))


def _native_state(runner) -> dict | None:
    """The runner's object code and what loading it needs, or None (no disk-cache copy: the
    receiver recompiles the graph)."""
    key = getattr(runner, "object_key", None)
    if key is None or not hasattr(runner, "signature"):
        return None
    from runtime.disk_cache import DiskCache
    from runtime.elf import check_object

    obj = DiskCache().get(key, check=check_object)
    if obj is None:
        return None
    from codegen.targets import jit_target

    t = jit_target()
    sig = runner.signature
    precisions = tuple(getattr(runner, "fft_precisions", ()))
    return {"object": obj, "sha256": sha256(obj).hexdigest(), "key": key, "symbol": sig.name,
            "inputs": [(s.dtype.str, tuple(s.shape), s.contiguous) for s in sig.inputs],
            "outputs": [(s.dtype.str, tuple(s.shape)) for s in sig.outputs],
            "triple": t.triple, "features": t.features, "vector_library": t.vector_library,
            "fft": precisions, "fft_libraries": _fft_libraries(precisions)}


def _fft_libraries(precisions: tuple[str, ...]) -> list:
    """The FFT kernel libraries the code calls, as this process loaded them (aot.fft)."""
    if not precisions:
        return []
    from ..fft._native import loaded_libraries

    return [loaded_libraries(p) for p in precisions]


# ---- receiving ----------------------------------------------------------------------------------
def rebuild(state: dict):
    """The CompiledFunction of a pickled state (one per sender's function in this process)."""
    from .api import CompiledFunction

    if state.get("format") != FORMAT:
        raise ShippedCodeError(f"a pickled aot function of format {state.get('format')!r}; this aot "
                               f"reads format {FORMAT}")
    with _lock:
        cf = _received.get(state["id"])
        if cf is None:
            cf = CompiledFunction(state["fn"], backend=state["backend"], dynamic=state["dynamic"],
                                  fullgraph=state["fullgraph"], **state["options"])
            cf._ship_id = state["id"]
            _received[state["id"]] = cf
    cf._adopt(state["entries"], {tuple(d) for d in state["dynamic_dims"]})
    return cf


def entry_of(cf, state: dict):
    """A CacheEntry from an entry's state: native code loaded, or a runner that compiles the
    captured graph on its first call."""
    from .api import CacheEntry
    from .guards import compile_guards, function_env

    guards = compile_guards(state["guards"], function_env(cf._fn))
    entry = CacheEntry(guards, None, state["input_index"], [], state["out_spec"], state["out_template"], None,
                       mutations=state["mutations"], graph_source=state["graph"])
    entry.runner, shipped = _runner(state["native"]), True
    if entry.runner is None:
        if state["graph"] is None:
            return None, False
        entry.runner, shipped = _CompileOnFirstCall(cf, entry), False
    return entry, shipped


def _runner(native: dict | None):
    """The JitFunction of shipped native code, or None where it cannot run in this process."""
    if native is None or not _runs_here(native):
        return None
    obj = native["object"]
    digest = sha256(obj).hexdigest()
    if digest != native["sha256"]:
        raise ShippedCodeError(f"shipped object code of {native['symbol']}: SHA-256 {digest} "
                               f"!= {native['sha256']} recorded by the sender (damaged in transit?)")
    from runtime.elf import ElfError, check_object

    try:
        check_object(obj)
    except ElfError as e:
        raise ShippedCodeError(f"shipped object code of {native['symbol']}: {e}") from None
    import numpy as np

    from codegen.trampolines import HELPERS
    from runtime import ArgSpec, JitFunction, Signature

    from .llvm_backend import install_shipped

    if native.get("fft_libraries"):
        from ..fft._native import store_libraries

        for shipped in native["fft_libraries"]:
            store_libraries(shipped)
    addr = install_shipped(native["key"], native["symbol"], obj, native["fft"])
    _keep_on_disk(native["key"], obj)
    sig = Signature(tuple(ArgSpec(np.dtype(d), tuple(s), bool(c)) for d, s, c in native["inputs"]),
                    tuple(ArgSpec(np.dtype(d), tuple(s)) for d, s in native["outputs"]), native["symbol"])
    fn = JitFunction(addr, sig, tuple_outputs=True, helpers=HELPERS)
    fn.object_key, fn.fft_precisions = native["key"], native["fft"]
    return fn


def _keep_on_disk(key: str, obj: bytes) -> None:
    """Into this process's disk cache, so that it can ship the code on (and later processes load it)."""
    from runtime.disk_cache import DiskCache

    try:
        cache = DiskCache()
        if cache.get(key) is None:
            cache.put(key, obj)
    except OSError as e:  # an unusable cache directory costs only the re-shipping
        log.debug("shipping: not kept in the disk cache: %s", e)


def _runs_here(native: dict) -> bool:
    """Whether this machine has every CPU feature the code was compiled for (and the same kind)."""
    from codegen.targets import jit_target
    from codegen.targets.cpu import libmvec_available

    here = jit_target()
    wanted = {f for f in native["features"].split(",") if f.startswith("+")}
    missing = wanted - set(here.features.split(","))
    if here.triple != native["triple"] or missing or (native["vector_library"] and not libmvec_available()):
        log.info("shipping: %s was compiled for %s%s; recompiling it here", native["symbol"],
                 native["triple"],
                 f" with {', '.join(sorted(missing))}" if missing else "")
        return False
    return True


class _CompileOnFirstCall:
    """The runner of an entry whose native code did not travel or cannot run here: its captured
    graph, compiled with the first call's arrays."""

    def __init__(self, cf, entry):
        self._cf, self._entry, self._fn = cf, entry, None
        self._lock = threading.Lock()

    def __call__(self, *inputs):
        with self._lock:
            if self._fn is None:
                self._fn = self._cf._call_backend(self._entry.graph(), list(inputs))
                self._cf._stats.compiles += 1
        return self._fn(*inputs)
