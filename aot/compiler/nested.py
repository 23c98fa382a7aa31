"""Which nested capture is running on this thread: a function transform (aot.func) traces its
function inside the capture that called it, and arrays of the outer captures used there are seen
by the inner one (capture.TracedArray.tracer) as its free variables."""
from __future__ import annotations

import contextlib
import threading

_state = threading.local()


def innermost():
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def running(tracer):
    stack = _state.__dict__.setdefault("stack", [])
    stack.append(tracer)
    try:
        yield tracer
    finally:
        stack.pop()
