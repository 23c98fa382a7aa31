"""aot.compile: torch.compile's contract for numpy functions and aot.nn modules.

A CompiledFunction keeps a list of cache entries, each a compiled artifact with its guards. A call
flattens its arguments, runs the first entry whose guards hold, and otherwise captures and compiles
a new entry (recompiling with symbolic dims when a shape guard failed, see policy.py).

The llvm backend compiles on a watchdog thread (watchdog.py): a compile that overruns its budget
(options["compile_timeout"], $AOT_COMPILE_TIMEOUT, 30 s) leaves its entry running the captured
graph eagerly with numpy, with one warning, and the native runner replaces it when the compile
finishes (unless reset() dropped the entry meanwhile; a failed late compile keeps it eager).

Asynchronous compilation (background.py): with options={"async_compile": True} a call that no
entry serves runs eagerly with numpy and starts the capture and compile on the compile pool;
`f.compile_async(*args)` starts one explicitly and returns its aot.futures.Future.
"""
from __future__ import annotations

import _thread  # not threading: a warm start imports nothing it does not use
import functools
import sys
import warnings
from collections.abc import Callable

import numpy as np

from ir.logger import get_logger

from .._pytree import LeafSpec, TreeSpec, tree_flatten, tree_unflatten
from . import warm_start
from .backends import lookup_backend
from .guards import build_guards, compile_guards, free_variable_guards, leaf_sources
from .in_flight import InFlight, check_flag

# The tracer (capture, conversions, creations: the frontend and ops), the compile pool (watchdog,
# background) and futures are imported when first needed, not here: a warm start
# (warm_start.py) loads cached native code without them.

log = get_logger(__name__)
# AOT_LOGS's artifacts (aot/logs.py): `import aot` switched on the ones it names
recompiles_log = get_logger("aot.recompiles")
guards_log = get_logger("aot.guards")

DEFAULT_CACHE_SIZE_LIMIT = 8
_compiling = _thread._local()


def _any_dask(leaves) -> bool:
    from ..dask import any_dask  # (a process without dask has no dask arrays: no import)

    return any_dask(leaves)


def is_compiling() -> bool:
    """True while aot is capturing a function (like torch.compiler.is_compiling)."""
    return getattr(_compiling, "depth", 0) > 0


class CacheEntry:
    """A compiled artifact with its guards (plain class: a warm start makes no dataclass)."""

    def __init__(self, guards, runner: Callable, input_index: list[int], lifted: list, out_spec, out_template: list,
                 gm, hits: int = 0, error: BaseException | None = None, fast=None, pending=None,
                 mutations: list | None = None, graph_source: bytes | None = None):
        self.guards = guards  # guards.GuardSet: readable texts + one compiled check
        self.runner = runner  # flat arrays -> flat outputs
        self.input_index = input_index  # which flat leaves are graph inputs (arrays)
        self.lifted = lifted  # fetchers for lifted arrays (parameters, captured globals)
        self.out_spec = out_spec
        self.out_template = out_template  # per output leaf: ("graph", k) or ("const", value)
        self.gm = gm
        self.hits = hits
        self.error = error  # its compile failed: the entry runs the graph eagerly
        self.fast = fast  # None: not decided yet; False: none; else fast(*arrays) -> result or None
        self.pending = pending  # the compile's Future while the entry runs eagerly (it overran its budget)
        self.mutations = [] if mutations is None else mutations  # capture.Capture.mutations: copied back
        # a shipped entry's captured graph, pickled (shipping.py): unpickled when first needed (its
        # symbolic shapes import sympy, which running the shipped native code never needs)
        self.graph_source = graph_source

    def replace(self, **changes) -> CacheEntry:
        import copy

        new = copy.copy(self)
        for name, value in changes.items():
            if not hasattr(new, name):
                raise TypeError(f"CacheEntry has no field {name!r}")
            setattr(new, name, value)
        return new

    def graph(self):
        if self.gm is None and self.graph_source is not None:
            import pickle

            self.gm = pickle.loads(self.graph_source)
        return self.gm


class CacheStats:
    def __init__(self):
        self.compiles = self.hits = self.guard_failures = self.eager_fallbacks = self.compile_timeouts = 0
        self.warm_starts = 0  # entries loaded from an earlier process's native code (warm_start.py)
        self.shipped = 0  # entries loaded from native code that came pickled (shipping.py)
        self.native_calls = 0  # calls a compiled entry served
        self.eager_calls = 0  # calls numpy served (eager fallback, compile in flight or overrun, failed)


class CompiledFunction:
    """The callable aot.compile returns."""

    def __init__(self, fn: Callable, *, backend="llvm", dynamic=None, fullgraph=False, options=None,
                 cache_size_limit: int | None = None):
        self._orig = fn
        self._fn, self._module = _unwrap_module(fn)
        self._backend_arg = backend
        self._ship_id = None  # set when pickled (shipping.py): copies in one process are one function
        self._backend_name = backend if isinstance(backend, str) else getattr(backend, "__name__", "custom")
        self._backend = lookup_backend(backend)
        self._dynamic = dynamic
        self._fullgraph = fullgraph
        self._options = dict(options or {})
        self._limit = cache_size_limit or self._options.pop("cache_size_limit", DEFAULT_CACHE_SIZE_LIMIT)
        self._timeout = self._options.pop("compile_timeout", None)
        if self._timeout is not None:
            from .watchdog import check_budget

            check_budget(self._timeout)
        self._async = check_flag(self._options.pop("async_compile", False))
        self._background = InFlight()  # compiles running on the pool, by call signature
        self._entries: list[CacheEntry] = []
        self._stats = CacheStats()
        self._lock = _thread.RLock()
        self._eager_reason: str | None = None
        self._dynamic_dims: set[tuple[int, int]] = set()  # (leaf index, dim) seen to change
        self._strided_leaves: set[int] = set()  # array leaves seen not C-contiguous after a compile
        self._fast, self._fast_entry, self._fast_hits = None, None, 0  # see _hot
        functools.update_wrapper(self, fn if not self._module else type(self._module).forward)

    # --- pickling (shipping.py) ---------------------------------------------------------------
    def __reduce__(self):
        from . import shipping

        return shipping.rebuild, (shipping.state_of(self),)

    def _settings(self) -> dict:
        """The keyword arguments that make a function compiling like this one."""
        options = dict(self._options, async_compile=self._async)
        if self._timeout is not None:
            options["compile_timeout"] = self._timeout
        return {"options": options, "cache_size_limit": self._limit}

    def _adopt(self, states: list, dynamic_dims: set) -> None:
        """Add the shipped entries (their states) this function does not hold yet."""
        from . import shipping

        with self._lock:
            have = {getattr(e.runner, "object_key", None) for e in self._entries} - {None}
            # an entry whose guards equal an earlier one's is never reached (the earlier wins): this
            # also keeps entries that recompile here (no object code, or CPU features missing, so
            # no object_key) from piling up, one per time the function is received
            specs = [e.guards.spec for e in self._entries if getattr(e.guards, "spec", None) is not None]
            for st in states:
                if (st["native"] is not None and st["native"]["key"] in have) or st["guards"] in specs:
                    continue
                entry, shipped = shipping.entry_of(self, st)
                if entry is not None and len(self._entries) < self._limit:
                    self._entries.append(entry)
                    self._stats.shipped += shipped
            self._dynamic_dims |= dynamic_dims

    # --- calling -----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        fast = self._fast  # hot path: the entry the last fast call hit, its arrays checked natively
        if fast is not None and not kwargs:
            out = fast(*args)
            if out is not None:
                self._fast_hits += 1  # added to the entry's count by _flush_hits
                return out
        return self._call(args, kwargs)

    def _call(self, args: tuple, kwargs: dict):
        if _tracing():  # called by a function being traced: its code is traced inline
            return self._fn(*args, **kwargs)
        if not kwargs:  # plain positional arrays: each entry's own fast path
            for entry in self._entries:
                if entry.fast:
                    out = entry.fast(*args)
                    if out is not None:
                        self._hot(entry)
                        entry.hits += 1
                        self._stats.hits += 1
                        self._stats.native_calls += 1
                        return out
        leaves, spec = tree_flatten((args, kwargs)) if kwargs else tree_flatten(args)
        if "dask" in sys.modules and _any_dask(leaves):  # dask arrays out, a native kernel per chunk
            from ..dask import call

            return call(self, args, kwargs)
        for entry in self._entries:
            if entry.guards.check(leaves):
                entry.hits += 1
                self._stats.hits += 1
                if entry.fast is None:
                    entry.fast = _fast_path(entry, args, kwargs, leaves)
                return self._run(entry, leaves, args, kwargs)
        if self._eager_reason is not None:
            return self._eager(args, kwargs)
        if self._async or self._background:
            from . import background

            return background.miss(self, args, kwargs, leaves, spec)
        with self._lock:
            return self._miss(args, kwargs, leaves, spec)

    def _hot(self, entry: CacheEntry | None) -> None:
        """Make `entry`'s fast path the one __call__ tries first (None: no entry)."""
        self._flush_hits()
        self._fast_entry, self._fast = entry, (entry.fast or None) if entry is not None else None

    def _flush_hits(self) -> None:
        n, self._fast_hits = self._fast_hits, 0
        if n:
            self._fast_entry.hits += n
            self._stats.hits += n
            self._stats.native_calls += n

    def _run(self, entry: CacheEntry, leaves: list, args: tuple, kwargs: dict):
        inputs = [leaves[i] for i in entry.input_index]
        if entry.lifted:
            inputs += [f() for f in entry.lifted]
        if entry.mutations and _overlapping(inputs):  # arguments sharing memory: numpy's own answer
            return self._eager(args, kwargs)
        if entry.pending is None and entry.error is None:
            self._stats.native_calls += 1
        else:
            self._stats.eager_calls += 1
        outs = entry.runner(*inputs)
        for _, i, k in entry.mutations:  # numpy updates the caller's arrays in place
            np.copyto(leaves[i], outs[k])
        flat = [outs[k] if kind == "graph" else (leaves[k] if kind == "input" else k)
                for kind, k in entry.out_template]
        return tree_unflatten(flat, entry.out_spec)

    def _matching(self, leaves) -> CacheEntry | None:
        return next((e for e in self._entries if e.guards.check(leaves)), None)

    def _miss(self, args, kwargs, leaves, spec):
        entry = self._matching(leaves)  # another thread may have compiled it meanwhile
        if entry is not None:
            return self._run(entry, leaves, args, kwargs)
        self._note_miss(leaves)
        if self._full():
            return self._fall_back(f"cache size limit ({self._limit}) reached", args, kwargs)
        warm_key = self._warm_key(args, kwargs)
        entry = self._warm_started(warm_key, args, leaves)
        if entry is not None:
            return self._run(entry, leaves, args, kwargs)
        from .capture import GraphBreak

        try:
            entry = self._compile(args, kwargs, leaves, spec)
        except GraphBreak as e:
            if self._fullgraph:
                raise
            return self._fall_back(str(e), args, kwargs)
        self._add_entry(entry, warm_key, args)
        if entry.pending is not None:
            self._overran(entry)
        return self._run(entry, leaves, args, kwargs)

    def _note_miss(self, leaves) -> None:
        """A call no entry serves: with entries, a guard failure (which dims changed)."""
        if self._entries:
            self._stats.guard_failures += 1
            self._note_guard_failure(leaves)

    def _full(self) -> bool:
        return len(self._entries) + len(self._background) >= self._limit

    def _warm_started(self, warm_key, args, leaves) -> CacheEntry | None:
        """The entry an earlier process's native code gives this call (added), or None."""
        entry = self._warm_entry(warm_key, args, leaves) if warm_key is not None else None
        if entry is not None:
            self._entries.append(entry)
            self._stats.warm_starts += 1
        return entry

    def _add_entry(self, entry: CacheEntry, warm_key, args) -> None:
        self._entries.append(entry)
        self._stats.compiles += 1
        if warm_key is not None and warm_start.qualifies(entry, args):
            warm_start.record(warm_key, entry)

    def _warm_key(self, args: tuple, kwargs: dict) -> str | None:
        """The warm-start key of this call (warm_start.py), or None where it cannot have one: a
        static compile that is not the first entry, another backend, a module's parameters,
        disabled. A symbolic compile (the dims that changed so far, or dynamic=True) has one too:
        its dims keyed as open, its guards stored with it."""
        dynamic = self._dynamic_for_next()
        if ((self._entries and dynamic is False) or self._backend_name != "llvm" or self._module is not None
                or not warm_start.enabled(self._options)):
            return None
        from .fingerprint import function_key

        return function_key(self._fn, args, kwargs, warm_start.settings_of(self._options, self._dynamic), dynamic)

    def _warm_entry(self, key: str, args: tuple, leaves: list) -> CacheEntry | None:
        from runtime import perf_map

        with perf_map.serving(self._fn):  # profilers name the code it loads after self._fn
            found = warm_start.lookup(key, args)
        if found is None:
            return None
        runner, out_spec, n_out, contiguous, stored = found
        extra, env = free_variable_guards(self._fn)
        if stored is None:
            gset = build_guards(_StaticLeaves(len(leaves)), leaves, extra, env, contiguous=contiguous)
        else:  # a symbolic compile's: its guards as they were built, then this function's free variables
            try:
                gset = compile_guards(warm_start.stored_spec(stored, extra, leaf_sources(self._fn, args, {})), env)
                fits = gset.check(leaves)
            except Exception as e:  # noqa: BLE001 - a damaged record: compile instead
                log.warning("warm start: stored guards unusable (%s); compiling", e)
                return None
            if not fits:  # (another relation between the sizes: compile for it)
                return None
        n = len(args)
        return CacheEntry(gset, runner, list(range(n)), [], out_spec, [("graph", k) for k in range(n_out)], None)

    def _note_guard_failure(self, leaves):
        for entry in self._entries:
            reason = entry.guards.why_failed(leaves)
            recompiles_log.info("Recompiling function %s: guard failed: %s",
                                getattr(self._fn, "__qualname__", self._fn), reason)
            for i, d in entry.guards.failed_dims(leaves):
                self._dynamic_dims.add((i, d))
            self._strided_leaves.update(entry.guards.failed_layouts(leaves))

    def _fall_back(self, reason: str, args, kwargs):
        if self._eager_reason is None:
            self._eager_reason = reason
            self._stats.eager_fallbacks += 1
            warnings.warn(f"aot.compile: running {self._qualname} eagerly "
                          f"with numpy: {reason}", RuntimeWarning, stacklevel=3)
        return self._eager(args, kwargs)

    def _eager(self, args: tuple, kwargs: dict):
        """The function run by numpy, with the calls aot accepts beyond numpy's signatures (jax's size=
        of np.nonzero & co: conversions.py) still accepted."""
        self._stats.eager_calls += 1
        if "aot.compiler.capture" not in sys.modules:  # no capture yet (an async first call): plain numpy
            try:
                return self._fn(*args, **kwargs)
            except TypeError as e:  # perhaps a call only aot accepts (size=): again, as below
                if "keyword argument" not in str(e):
                    raise
        from .capture import TracedArray
        from .conversions import traced_conversions

        with traced_conversions(TracedArray):
            return self._fn(*args, **kwargs)

    def _overran(self, entry: CacheEntry) -> None:
        from . import watchdog

        self._stats.compile_timeouts += 1
        budget = watchdog.compile_budget(self._timeout)
        warnings.warn(f"aot.compile: compiling {self._qualname} took longer than its budget of {budget:g} s "
                      f"(options={{'compile_timeout': seconds}} or {watchdog.ENV_VAR}); running it "
                      f"eagerly with numpy until the compile finishes in the background",
                      RuntimeWarning, stacklevel=4)
        entry.pending.add_done_callback(functools.partial(self._compiled_late, entry))

    def _compiled_late(self, entry: CacheEntry, job) -> None:
        """An overrun compile finished: its runner replaces the entry's eager one."""
        with self._lock:
            index = next((i for i, e in enumerate(self._entries) if e is entry), None)
            if index is None:  # reset() dropped the entry meanwhile
                return
            if job.exception() is not None:
                entry.pending, entry.error = None, job.exception()
                log.warning("aot.compile: the background compile of %s failed; it keeps running "
                            "eagerly", self._qualname, exc_info=job.exception())
                return
            if self._fast_entry is entry:
                self._hot(None)
            self._entries[index] = entry.replace(runner=job.value(), fast=None, pending=None)

    def _compile(self, args, kwargs, leaves, spec, wait: bool = True) -> CacheEntry:
        """Capture and compile an entry for this call. `wait=False` (a background compile, already
        off the caller's thread): the backend runs here, without a budget."""
        from .capture import capture

        dynamic = self._dynamic_for_next()
        _compiling.depth = getattr(_compiling, "depth", 0) + 1
        try:
            names = leaf_sources(self._fn, args, kwargs)
            cap = capture(self._fn, args, kwargs, leaves, spec, module=self._module, dynamic=dynamic, names=names)
        finally:
            _compiling.depth -= 1
        extra, env = free_variable_guards(self._fn)
        example = [leaves[i] for i in cap.input_index] + [f() for f in cap.lifted]
        contiguous = self._layouts(cap, example)
        gset = build_guards(cap, leaves, extra, env, names=names,
                            contiguous=[i for i, c in zip(cap.input_index, contiguous) if c])
        guards_log.info("guards for %s:\n  %s", getattr(self._fn, "__qualname__", self._fn),
                        "\n  ".join(gset.texts))
        error = None
        if wait:
            runner, pending = self._build_runner(cap.gm, example)
        else:
            try:
                runner, pending = self._call_backend(cap.gm, example), None
            except Exception as e:  # noqa: BLE001 - the entry keeps the error and runs the graph eagerly
                runner, pending, error = cap.gm.forward, None, e
        return CacheEntry(gset, runner, cap.input_index, cap.lifted, cap.out_spec, cap.out_template, cap.gm,
                          pending=pending, error=error, mutations=cap.mutations)

    def _layouts(self, cap, example: list) -> tuple:
        """Which graph inputs the native code may read as C-contiguous (numba's layouts, torch's
        stride guards): those that are now, but for arguments an earlier entry saw in another
        layout (one generic entry serves them). Recorded on the graph (gm.meta["contiguous"]) for
        the llvm backend; arguments get a guard each (build_guards), lifted arrays none (the
        runtime copies one that is not, ArgSpec.contiguous)."""
        if self._backend_name != "llvm":
            return ()
        n = len(cap.input_index)
        flags = tuple(isinstance(a, np.ndarray) and a.flags.c_contiguous
                      and not (k < n and cap.input_index[k] in self._strided_leaves) for k, a in enumerate(example))
        cap.gm.meta["contiguous"] = flags
        return flags

    def _build_runner(self, gm, example):
        """(runner, None), or for the llvm backend past its budget (gm.forward, the compile's Future)."""
        if self._backend_name != "llvm":
            return self._call_backend(gm, example), None
        from . import watchdog

        budget = watchdog.compile_budget(self._timeout)
        job = watchdog.submit(self._call_backend, gm, example, name=f"aot-compile {self._qualname}")
        if watchdog.wait(job, budget):
            return job.wait(), None
        return gm.forward, job

    def _call_backend(self, gm, example):
        from runtime import perf_map

        with perf_map.serving(self._fn):  # as in _warm_entry
            return self._run_backend(gm, example)

    def _run_backend(self, gm, example):
        try:
            return self._backend(gm, example, self._options) if self._backend_name == "llvm" \
                else self._backend(gm, example)
        except TypeError as e:
            if "positional argument" not in str(e):
                raise
            return self._backend(gm, example)

    def _dynamic_for_next(self):
        """dynamic=True: all dims symbolic; False: none; None: the dims that changed so far."""
        if self._dynamic is True:
            return True
        if self._dynamic is False:
            return False
        return frozenset(self._dynamic_dims) if self._dynamic_dims else False

    # --- introspection -----------------------------------------------------------------------
    def cache_info(self) -> dict:
        self._flush_hits()
        return {
            "compiles": self._stats.compiles,
            "hits": self._stats.hits,
            "guard_failures": self._stats.guard_failures,
            "eager_fallbacks": self._stats.eager_fallbacks,
            "eager_reason": self._eager_reason,
            "compile_timeouts": self._stats.compile_timeouts,
            "warm_starts": self._stats.warm_starts,
            "shipped": self._stats.shipped,
            "calls": {"native": self._stats.native_calls, "eager": self._stats.eager_calls},
            "compiling": len(self._background),
            "entries": [{"guards": list(e.guards.texts), "hits": e.hits, "compiling": e.pending is not None,
                         "failed": None if e.error is None else f"{type(e.error).__name__}: {e.error}"}
                        for e in self._entries],
        }

    def compile_async(self, *args, **kwargs):
        """Start compiling an entry for calls like this one on the compile pool; returns an
        aot.futures.Future completed with the entry (its `guards.texts`), or the compile's error.
        An entry that already serves these arguments completes the future at once."""
        from . import background

        return background.compile_async(self, args, kwargs)

    def reset(self) -> None:
        with self._lock:
            self._hot(None)
            self._entries.clear()
            self._stats = CacheStats()
            self._eager_reason = None
            self._dynamic_dims.clear()
            self._strided_leaves.clear()
            self._background.forget()  # compiles in flight finish, but install nothing

    @property
    def _qualname(self) -> str:
        return getattr(self._fn, "__qualname__", str(self._fn))

    @property
    def graphs(self) -> list:
        return [e.graph() for e in self._entries]

    def __repr__(self) -> str:
        return f"<aot compiled {getattr(self._fn, '__qualname__', self._fn)} backend={self._backend_name}>"


class _StaticLeaves:
    """What build_guards reads of a capture, for a warm-started entry: every leaf an array of
    static shape."""

    def __init__(self, n: int):
        self.n = n
        self.dynamic_dims: dict = {}

    @property
    def leaf_kinds(self) -> list:
        return ["array"] * self.n


def _tracing() -> bool:
    """Whether a capture runs on this thread (none can before the tracer was first imported)."""
    creations = sys.modules.get("aot.compiler.creations")
    return creations is not None and creations.current_capture() is not None


def _overlapping(arrays: list) -> bool:
    """Whether two of a call's arrays may share memory (an update of one would show in the other)."""
    return any(np.may_share_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:])


def _fast_path(entry: CacheEntry, args: tuple, kwargs: dict, leaves: list):
    """The runner's `fast(*arrays)` when calls with exactly these positional arrays need no
    flattening or remapping: every argument is an array fed to the graph in order (then the lifted
    parameters, fetched per call), and the graph's outputs are the result as they are (one array,
    or a flat tuple). It checks the guards (or, for static shapes, dtype, shape and layout
    natively, which imply them; lifted arrays are checked the same way)."""
    make = getattr(entry.runner, "fast_function", None)
    n_out = len(entry.out_template)
    if (make is None or kwargs or len(leaves) != len(args) or entry.mutations
            or entry.input_index != list(range(len(args)))
            or entry.out_template != [("graph", k) for k in range(n_out)]):
        return False
    if entry.out_spec == LeafSpec and n_out == 1:
        unwrap = True
    elif entry.out_spec == TreeSpec("tuple", (), (LeafSpec,) * n_out):
        unwrap = False
    else:
        return False
    # the guards see the call's leaves only: with lifted arrays, static signatures only (guard=None)
    # (the strided call checks types, dtypes and ranks natively: the guards on sizes are left)
    guard = None if entry.lifted else (entry.guards.shape_check or entry.guards.check)
    fast = make(unwrap=unwrap, guard=guard)
    if not fast:
        return False
    extra = entry.guards.extra_check  # guards on closure/global scalars: not implied by the arrays
    if extra is not None:
        inner = fast

        def fast(*a):
            return inner(*a) if extra() else None

    if not entry.lifted:
        return fast
    from numpy import asarray  # Parameters subclass ndarray: the native check wants the exact type

    lifted = entry.lifted
    return lambda *a: fast(*a, *[asarray(f()) for f in lifted])


def _unwrap_module(fn):
    nn = sys.modules.get("aot.nn")  # no aot.nn.Module can exist before aot.nn is imported
    if nn is None:
        return fn, None
    if isinstance(fn, nn.Module):
        return fn.forward, fn
    return fn, None
