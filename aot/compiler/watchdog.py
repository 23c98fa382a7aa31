"""Compile jobs on background threads: no compile blocks a call unboundedly, and asynchronous
compiles run on a small pool.

A native LLVM call cannot be interrupted, so a synchronous compile runs on a thread of its own
(llvmlite's calls release the GIL, and codegen/targets/base.py runs the long ones outside
llvmlite's process-wide lock) and the caller waits for its Future with a timeout.
CompiledFunction (api.py) runs a call whose compile overran its budget eagerly, and installs the
compile's result for later calls when it finishes.

Asynchronous compiles (`options={"async_compile": True}`, `f.compile_async(...)`,
`aot.aot_compile_async`) run on a pool of daemon threads shared by the process, sized by
$AOT_COMPILE_WORKERS (default 2). Only LLVM's parsing, optimisation and code emission release the
GIL (llvmlite calls them through ctypes; about a third of a compile); tracing, ir passes and
building the LLVM module are Python, so compiles overlap only in their LLVM part
(tools/bench_async.py measures how much).

The budget is `options["compile_timeout"]` (seconds), else the environment variable
AOT_COMPILE_TIMEOUT, else 30 s; `inf` waits without a bound.
"""
from __future__ import annotations

import contextvars
import os
import sys
import threading
from collections.abc import Callable

from ..futures import Future

DEFAULT_COMPILE_TIMEOUT = 30.0
ENV_VAR = "AOT_COMPILE_TIMEOUT"
WORKERS_ENV_VAR = "AOT_COMPILE_WORKERS"
# While a background compile runs, the GIL changes hands after at most this many seconds instead of
# Python's 5 ms: numpy drops the GIL inside each loop, and an eager call on the caller's thread
# would otherwise wait up to 5 ms after every op for the compile's Python code to hand it back
# (a 300-op call: 0.2 s alone, 1.3 s beside a compile; 0.25 s with this).
SWITCH_INTERVAL = 1e-4


def check_budget(value, source: str = "compile_timeout") -> float:
    """`value` as a budget in seconds (> 0; inf for none), or ValueError naming `source`."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{source} must be a number of seconds, got {value!r}") from None
    if not seconds > 0:  # also refuses nan
        raise ValueError(f"{source} must be > 0 seconds (inf: no bound), got {value!r}")
    return seconds


def compile_budget(option=None) -> float:
    """Seconds a call waits for its compile: the option, else $AOT_COMPILE_TIMEOUT, else 30."""
    if option is not None:
        return check_budget(option)
    env = os.environ.get(ENV_VAR)
    return check_budget(env, ENV_VAR) if env else DEFAULT_COMPILE_TIMEOUT


def _job(fn: Callable, args: tuple, kwargs: dict) -> tuple[Future, Callable[[], None]]:
    """A Future and the work that completes it, run in a copy of the caller's context variables."""
    job = Future()
    ctx = contextvars.copy_context()

    def work():
        try:
            result = ctx.run(fn, *args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed to whoever waits on the job
            job.set_exception(e)
        else:
            job.set_result(result)

    return job, work


def submit(fn: Callable, *args, name: str = "aot-compile", **kwargs) -> Future:
    """Run fn(*args, **kwargs) on a new daemon thread; returns its Future. Daemon: a compile stuck
    in native code must not keep the interpreter from exiting."""
    job, work = _job(fn, args, kwargs)
    threading.Thread(target=work, name=name, daemon=True).start()
    return job


def submit_background(fn: Callable, *args, **kwargs) -> Future:
    """Run fn(*args, **kwargs) on the compile pool; returns its Future."""
    job, work = _job(fn, args, kwargs)
    _pool().put(work)
    return job


def wait(job: Future, budget: float) -> bool:
    """Wait up to `budget` seconds (inf: until done); True when the job has finished."""
    return job._wait_done(budget)


def pool_size() -> int:
    """Threads of the compile pool: $AOT_COMPILE_WORKERS, else 2 (1 on one core): about two thirds
    of a compile holds the GIL, so a third thread adds little (tools/bench_async.py)."""
    env = os.environ.get(WORKERS_ENV_VAR)
    if env:
        try:
            n = int(env)
        except ValueError:
            n = 0
        if n < 1:
            raise ValueError(f"{WORKERS_ENV_VAR} must be a positive number of threads, got {env!r}")
        return n
    return max(1, min(2, os.cpu_count() or 1))


class _Pool:
    """Daemon worker threads taking jobs from one queue; a thread starts when a job finds none idle."""

    def __init__(self):
        import queue  # (made on the first background compile: a warm start imports no queue)

        self._jobs = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0
        self._running = 0
        self._saved: float | None = None

    def put(self, work: Callable[[], None]) -> None:
        with self._lock:
            start = self._idle == 0 and self._threads < pool_size()
            if start:
                self._threads += 1
        self._jobs.put(work)
        if start:
            threading.Thread(target=self._worker, name=f"aot-pool-{self._threads}", daemon=True).start()

    def _worker(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            work = self._jobs.get()
            with self._lock:
                self._idle -= 1
                self._busy(+1)
            try:
                work()
            finally:
                with self._lock:
                    self._busy(-1)

    def _busy(self, change: int) -> None:
        """Count running jobs; while any runs, the interpreter's switch interval is short (see
        SWITCH_INTERVAL), and it is put back when the last one ends (unless changed meanwhile)."""
        self._running += change
        if change > 0 and self._running == 1:
            self._saved = sys.getswitchinterval()
            if self._saved > SWITCH_INTERVAL:
                sys.setswitchinterval(SWITCH_INTERVAL)
        elif self._running == 0 and self._saved is not None:
            if sys.getswitchinterval() == SWITCH_INTERVAL:
                sys.setswitchinterval(self._saved)
            self._saved = None


_POOL: list[_Pool] = []


def _pool() -> _Pool:
    """The process's compile pool, made on first use."""
    if not _POOL:
        with _POOL_LOCK:
            if not _POOL:
                _POOL.append(_Pool())
    return _POOL[0]


_POOL_LOCK = threading.Lock()
