"""aot.futures: torch.futures' Future, collect_all and wait_all, for numpy values.

A Future is completed once, with a result or an exception, by any thread; any thread may wait on
it or add callbacks. Callbacks added before completion run on the completing thread, in the order
they were added; callbacks added to a completed future run inline. Completion cascades (a `then`
callback completes its child, whose callbacks complete theirs, ...) recurse only a few levels
deep and then continue from a per-thread queue, so a chain of 10,000 futures completes without
exhausting the stack.

aot hands these out for asynchronous compilation (`CompiledFunction.compile_async`,
`aot.aot_compile_async`).
"""
from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from ir.logger import get_logger

__all__ = ["Future", "collect_all", "wait_all"]

log = get_logger(__name__)

_PENDING, _RESULT, _ERROR = 0, 1, 2
_NESTED_LIMIT = 32  # completions nested deeper than this on one thread wait in its queue
_local = threading.local()


class Future:
    """The eventual result of an asynchronous computation (torch.futures.Future's contract)."""

    def __init__(self, *, devices=None):
        self._devices = _check_devices(devices)
        self._cond = threading.Condition(threading.Lock())
        self._state = _PENDING
        self._value: Any = None
        self._callbacks: list = []

    def __class_getitem__(cls, item):  # Future[int]() as in torch
        return cls

    @property
    def devices(self) -> list[str]:
        """The devices this future's value may live on ("cpu", "cuda:N"), as given."""
        return list(self._devices)

    # --- completing ----------------------------------------------------------------------------
    def set_result(self, result: Any) -> None:
        """Complete the future with `result` and run its callbacks (RuntimeError if completed)."""
        self._complete(_RESULT, result)

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with the exception `result`: wait() and value() raise it."""
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception: result must be an exception instance, got {type(result).__name__}")
        self._complete(_ERROR, result)

    def _complete(self, state: int, value: Any) -> None:
        with self._cond:
            if self._state != _PENDING:
                raise RuntimeError(f"Future can only be marked completed once; this one already holds "
                                   f"{'a result' if self._state == _RESULT else 'an exception'}")
            self._state, self._value = state, value
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        if callbacks:
            _run([(cb, self) for cb in callbacks])

    # --- observing -----------------------------------------------------------------------------
    def done(self) -> bool:
        """True once the future holds a result or an exception."""
        return self._state != _PENDING

    def wait(self) -> Any:
        """Block until the future is completed; its result, or raise its exception."""
        self._wait_done(None)
        return self.value()

    def _wait_done(self, timeout: float | None) -> bool:
        """Wait up to `timeout` seconds (None or inf: no bound); whether the future is done."""
        if timeout is not None and math.isinf(timeout):
            timeout = None
        with self._cond:
            self._cond.wait_for(self.done, timeout)
        return self.done()

    def value(self) -> Any:
        """The result of a completed future, or raise its exception (RuntimeError if pending)."""
        state, value = self._state, self._value
        if state == _PENDING:
            raise RuntimeError("Future.value(): the future is not completed yet (call wait() first, "
                               "or read it inside a callback)")
        if state == _ERROR:
            raise value
        return value

    def exception(self) -> BaseException | None:
        """The exception a completed future holds, else None (no wait)."""
        return self._value if self._state == _ERROR else None

    # --- callbacks -----------------------------------------------------------------------------
    def then(self, callback: Callable[[Future], Any]) -> Future:
        """A new future holding callback(self)'s return value, or the exception it raised; the
        callback runs once this future is completed."""
        _check_callback(callback, "then")
        child = Future(devices=self._devices)

        def chained(fut):
            try:
                result = callback(fut)
            except Exception as e:  # noqa: BLE001 - the child future holds it
                child.set_exception(e)
            except BaseException as e:  # KeyboardInterrupt & co: the child holds it, and it propagates
                child.set_exception(e)
                raise
            else:
                child.set_result(result)

        self._add(chained)
        return child

    def add_done_callback(self, callback: Callable[[Future], None]) -> None:
        """Run callback(self) once this future is completed; an error it raises is logged."""
        _check_callback(callback, "add_done_callback")

        def logged(fut):
            try:
                callback(fut)
            except Exception:  # nothing waits on a done callback: log it
                log.exception("aot.futures: done callback %r of %r raised", callback, fut)

        self._add(logged)

    def _add(self, fn: Callable[[Future], None]) -> None:
        with self._cond:
            if self._state == _PENDING:
                self._callbacks.append(fn)
                return
        fn(self)  # completed: inline

    def __repr__(self) -> str:
        state = ("pending", "result", "exception")[self._state]
        return f"<aot.futures.Future {state}{' on ' + ', '.join(self._devices) if self._devices else ''}>"


def _run(calls: list) -> None:
    """Run (callback, future) pairs; nested deeper than _NESTED_LIMIT, they join this thread's
    queue, which the outermost call drains (no unbounded recursion)."""
    depth = getattr(_local, "depth", 0)
    if depth >= _NESTED_LIMIT:
        _local.queue.extend(calls)
        return
    if depth == 0:
        _local.queue = deque()
    _local.depth = depth + 1
    try:
        for cb, fut in calls:
            cb(fut)
        if depth == 0:
            queue = _local.queue
            while queue:
                cb, fut = queue.popleft()
                cb(fut)
    finally:
        _local.depth = depth


def collect_all(futures: Iterable[Future]) -> Future:
    """A future completed with the list of `futures` once all are completed, or with the first
    exception one of them holds, as soon as it holds it."""
    futures = _check_futures(futures, "collect_all")
    combined = Future()
    if not futures:
        combined.set_result([])
        return combined
    lock = threading.Lock()
    remaining = [len(futures)]

    def one_done(fut):
        with lock:
            if combined.done():
                return
            if fut._state == _ERROR:
                remaining[0] = -1
            else:
                remaining[0] -= 1
                if remaining[0]:
                    return
            # completed under the lock: exactly one caller gets here
            if fut._state == _ERROR:
                combined.set_exception(fut._value)
            else:
                combined.set_result(list(futures))

    for fut in futures:
        fut._add(one_done)
    return combined


def wait_all(futures: Iterable[Future]) -> list:
    """The results of all `futures`, in order; raises the first exception any of them holds,
    without waiting for the rest."""
    return [fut.wait() for fut in collect_all(futures).wait()]


def _check_futures(futures, where: str) -> list:
    try:
        futures = list(futures)
    except TypeError:
        raise TypeError(f"{where}: futures must be a list of aot.futures.Future, "
                        f"got {type(futures).__name__}") from None
    for i, f in enumerate(futures):
        if not isinstance(f, Future):
            raise TypeError(f"{where}: futures[{i}] must be an aot.futures.Future, got {type(f).__name__}")
    return futures


def _check_callback(callback, where: str) -> None:
    if not callable(callback):
        raise TypeError(f"{where}: callback must be callable (it is called with the future), "
                        f"got {type(callback).__name__}")


def _check_devices(devices) -> tuple[str, ...]:
    """devices as names: "cpu", "cuda:N" ("cuda" is cuda:0; an int N is cuda:N)."""
    if devices is None:
        return ()
    if isinstance(devices, (str, int)):
        devices = [devices]
    names = []
    for d in devices:
        name = _device_name(d)
        if name not in names:
            names.append(name)
    return tuple(names)


def _device_name(d) -> str:
    if isinstance(d, int) and not isinstance(d, bool) and d >= 0:
        return f"cuda:{d}"
    if isinstance(d, str):
        kind, _, index = d.strip().partition(":")
        if kind == "cpu" and not index:
            return "cpu"
        if kind == "cuda" and (not index or index.isdigit()):
            return f"cuda:{int(index or 0)}"
    raise ValueError(f"Future: devices must be a list of 'cpu', 'cuda', 'cuda:N' or device indices, got {d!r}")
