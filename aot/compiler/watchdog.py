"""Compile jobs on background threads, waited on within a budget: no compile blocks a call unboundedly.

A native LLVM call cannot be interrupted, so a compile runs on a worker thread (llvmlite's calls
release the GIL, and codegen/targets/base.py runs the long ones outside llvmlite's process-wide
lock) and the caller waits for its Future with a timeout. CompiledFunction (api.py) runs a call
whose compile overran its budget eagerly, and installs the compile's result for later calls when
it finishes. An asynchronous mode (`options={"async_compile": True}`, `f.compile_async(...)`)
is the same machinery with a budget of zero: `submit` returns the Future to hand out.

The budget is `options["compile_timeout"]` (seconds), else the environment variable
AOT_COMPILE_TIMEOUT, else 30 s; `inf` waits without a bound.
"""
from __future__ import annotations

import contextvars
import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import wait as _wait

DEFAULT_COMPILE_TIMEOUT = 30.0
ENV_VAR = "AOT_COMPILE_TIMEOUT"


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


def submit(fn: Callable, *args, name: str = "aot-compile", **kwargs) -> Future:
    """Run fn(*args, **kwargs) on a new daemon thread, in a copy of the caller's context
    variables; returns its Future. Daemon: a compile stuck in native code must not keep the
    interpreter from exiting."""
    job: Future = Future()
    job.set_running_or_notify_cancel()
    ctx = contextvars.copy_context()

    def work():
        try:
            result = ctx.run(fn, *args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed to whoever waits on the job
            job.set_exception(e)
        else:
            job.set_result(result)

    threading.Thread(target=work, name=name, daemon=True).start()
    return job


def wait(job: Future, budget: float) -> bool:
    """Wait up to `budget` seconds (inf: until done); True when the job has finished."""
    _wait([job], timeout=None if math.isinf(budget) else budget)
    return job.done()
