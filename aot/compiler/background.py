"""Asynchronous compilation for CompiledFunction (api.py): calls never wait for a compile.

With options={"async_compile": True}, a call that no entry serves runs eagerly with numpy and then
starts capture and compile of an entry for it on the compile pool (watchdog.py); later calls use
the entry once it is installed. The call runs first and the compile is queued after it: tracing
is Python and holds the GIL, which would otherwise stall the eager call between numpy's loops.

Compiles in flight are keyed by the call's signature: the tree structure, and per leaf its dtype
and shape (dims the function already treats as dynamic left out) or its scalar value. A call
matching a compile in flight runs eagerly without starting another; a call whose shapes differ
from one in flight counts as the guard failure it will be, so that its dims become dynamic (the
same policy as the synchronous path) instead of compiling one entry per shape.

A failed background compile never loses its error: the Future holds it, one warning says so, and
the function keeps answering eagerly (a failed capture: every call; a failed backend: the calls
its entry's guards admit, through the captured graph).
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from ir.logger import get_logger

from .._pytree import tree_flatten
from ..futures import Future
from ..logs import artifact_logger
from . import watchdog

log = get_logger(__name__)
recompiles_log = artifact_logger("recompiles")

_SCALARS = (bool, int, float, complex, str, type(None))


def signature(cf, leaves: list, spec) -> tuple:
    """The call's key among compiles in flight (see the module docstring)."""
    every = cf._dynamic is True
    dims = cf._dynamic_dims
    return (spec, tuple(_leaf_key(i, leaf, every, dims) for i, leaf in enumerate(leaves)))


def _leaf_key(i: int, leaf, every: bool, dims) -> tuple:
    if isinstance(leaf, np.ndarray):
        shape = tuple(None if every or (i, d) in dims else n for d, n in enumerate(leaf.shape))
        return ("array", leaf.dtype.str, shape)
    if isinstance(leaf, _SCALARS):
        return ("scalar", type(leaf), leaf)
    return ("object", type(leaf))


def miss(cf, args: tuple, kwargs: dict, leaves: list, spec):
    """A call no entry served, while async compilation is on or compiles are in flight."""
    reason, start = None, False
    with cf._lock:
        entry = cf._matching(leaves)
        if entry is None:
            sig = signature(cf, leaves, spec)
            job = cf._background.get(sig)
            if job is None and not cf._async:  # compiles in flight, none for this call: compile it now
                return cf._miss(args, kwargs, leaves, spec)
            if job is None:
                entry, job, sig, reason, start = _claim(cf, args, kwargs, leaves, spec)
    if entry is not None:
        return cf._run(entry, leaves, args, kwargs)
    if reason is not None:
        return cf._fall_back(reason, args, kwargs)
    if not cf._async:  # compile_async started this compile: wait for it as a compile of this call would
        if watchdog.wait(job, watchdog.compile_budget(cf._timeout)):
            return cf._call(args, kwargs)
        return cf._eager(args, kwargs)
    if not start:
        return cf._eager(args, kwargs)
    try:
        out = cf._eager(args, kwargs)
    except BaseException as e:  # the call itself fails: nothing to compile for it
        with cf._lock:
            cf._background.remove(sig, job)
        job.set_exception(e)
        raise
    _submit(cf, sig, job, args, kwargs, leaves, spec)
    return out


def compile_async(cf, args: tuple, kwargs: dict) -> Future:
    """CompiledFunction.compile_async: the Future of an entry for calls like this one."""
    leaves, spec = tree_flatten((args, kwargs)) if kwargs else tree_flatten(args)
    with cf._lock:
        entry = cf._matching(leaves)
        if entry is None and cf._eager_reason is None:
            sig = signature(cf, leaves, spec)
            job = cf._background.get(sig)
            if job is not None:
                return job
            entry, job, sig, reason, start = _claim(cf, args, kwargs, leaves, spec)
            if job is not None and not start:  # one in flight after all (its dims became dynamic)
                return job
        else:
            reason = cf._eager_reason
    if entry is not None:
        return _completed(entry)
    if reason is not None:
        failed = Future()
        failed.set_exception(cf._background.error or
                             RuntimeError(f"aot.compile: {cf._qualname} runs eagerly with numpy: {reason}"))
        return failed
    _submit(cf, sig, job, args, kwargs, leaves, spec)
    return job


def _claim(cf, args, kwargs, leaves, spec):
    """Under cf._lock, for a call with no entry and no compile in flight: (entry, job, sig, reason,
    new): a warm start's entry; or the reason the function must run eagerly; or the job of a
    compile in flight after all (the dims just noted made the call one of its), new False; or a
    job registered in flight now, new True (the caller submits it)."""
    cf._note_miss(leaves)
    _note_in_flight_dims(cf, signature(cf, leaves, spec))
    sig = signature(cf, leaves, spec)  # with the dims just noted
    job = cf._background.get(sig)
    if job is not None:
        return None, job, sig, None, False
    if cf._full():
        return None, None, None, f"cache size limit ({cf._limit}) reached", False
    entry = cf._warm_started(cf._warm_key(args, kwargs), args, leaves)
    if entry is not None:
        return entry, None, sig, None, False
    job = Future()
    cf._background.add(sig, job)
    return None, job, sig, None, True


def _note_in_flight_dims(cf, mine: tuple) -> None:
    """Dims in which this call differs from a compile in flight of the same structure become
    dynamic (automatic policy only), as the guard failure they would cause once it lands."""
    if cf._dynamic is not None:
        return
    spec = mine[0]
    for spec_b, keys in cf._background.signatures():
        if spec_b != spec or len(keys) != len(mine[1]):
            continue
        changed = [(i, d) for i, (a, b) in enumerate(zip(mine[1], keys))
                   if a[0] == b[0] == "array" and a[1] == b[1] and len(a[2]) == len(b[2])
                   for d, (m, n) in enumerate(zip(a[2], b[2])) if m is not None and n is not None and m != n]
        if changed:
            recompiles_log.info("Recompiling function %s: shapes %s changed while its compile runs "
                                "in the background", cf._qualname, changed)
            cf._dynamic_dims.update(changed)


def _submit(cf, sig, job: Future, args, kwargs, leaves, spec) -> None:
    watchdog.submit_background(_compile_job, cf, sig, job, cf._background.generation, args, kwargs, leaves, spec)


def _compile_job(cf, sig, job: Future, generation: int, args, kwargs, leaves, spec):
    """On the pool: capture and compile, install the entry, complete `job` (never raises)."""
    started, eager_before = time.perf_counter(), cf._stats.eager_calls
    try:
        warm_key = cf._warm_key(args, kwargs)
        entry = cf._compile(args, kwargs, leaves, spec, wait=False)
    except BaseException as e:  # noqa: BLE001 - the capture failed: the future holds the error
        _capture_failed(cf, sig, job, generation, e)
        return
    with cf._lock:
        current = cf._background.generation == generation
        if current:
            cf._background.remove(sig, job)
            cf._add_entry(entry, warm_key if entry.error is None else None, args)
    if entry.error is not None:
        if current:
            _warn(cf, entry.error)
        job.set_exception(entry.error)
        return
    if current:
        recompiles_log.info("aot.compile: %s switched to native code (compiled in the background in %.0f ms; "
                            "%d calls ran eagerly meanwhile)", cf._qualname, 1e3 * (time.perf_counter() - started),
                            cf._stats.eager_calls - eager_before)
    job.set_result(entry)


def _capture_failed(cf, sig, job: Future, generation: int, error: BaseException) -> None:
    with cf._lock:
        current = cf._background.generation == generation
        if current:
            cf._background.remove(sig, job)
            if cf._eager_reason is None:
                cf._eager_reason = f"background compile failed: {type(error).__name__}: {error}"
                cf._stats.eager_fallbacks += 1
                cf._background.error = error
    if current:
        _warn(cf, error)
    job.set_exception(error)


def _warn(cf, error: BaseException) -> None:
    log.debug("background compile of %s failed", cf._qualname, exc_info=error)
    warnings.warn(f"aot.compile: the background compile of {cf._qualname} failed "
                  f"({type(error).__name__}: {error}); it keeps running eagerly with numpy "
                  f"(the compile's Future holds the error)", RuntimeWarning, stacklevel=2)


def _completed(entry) -> Future:
    done = Future()
    done.set_result(entry)
    return done
