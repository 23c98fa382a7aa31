"""np.zeros, np.ones, np.empty and np.full called by the traced function itself, substituted while
it is traced: they return traced arrays, so that the function may fill them in place with traced
values (`out = np.zeros(n); out[1:] = x[:-1]`), as numpy code does. Calls from numpy, aot or other
libraries (their module names) get numpy's own arrays. Constant writes into a new array that no op
has read yet fold at trace time (capture.py `fold_setitem`): a table filled in a Python loop stays
one constant. The substitution is conversions.py's (next to the array constructors); which capture
runs on this thread is `creating`'s.
"""
from __future__ import annotations

import contextlib
import functools
import operator
import sys
import threading
from typing import Any

from .. import frontend

CREATION_NAMES = ("zeros", "ones", "empty", "full")
# traced only when a size is symbolic (x.shape[0] under dynamic=True): numpy's own would make an
# object array of SymInts; with plain ints they stay numpy's constants
SYMBOLIC_NAMES = ("arange", "linspace", "eye", "identity")
_LIBRARIES = ("numpy", "aot", "ir", "codegen", "runtime", "scipy", "sympy", "llvmlite")
_current = threading.local()


@contextlib.contextmanager
def creating(tracer):
    """Make `tracer` the capture this thread's np.zeros & co trace into."""
    before = getattr(_current, "tracer", None)
    _current.tracer = tracer
    try:
        yield
    finally:
        _current.tracer = before


def current_capture():
    """The capture running on this thread (the innermost, when transforms nest), or None."""
    return getattr(_current, "tracer", None)


def _library_frame(depth: int) -> bool:
    name = sys._getframe(depth + 1).f_globals.get("__name__", "") or ""
    return name.split(".", 1)[0] in _LIBRARIES


def _specialized(values) -> list:
    """Symbolic sizes as the ints they are now (a guard each, as numpy's own use of them would)."""
    return [operator.index(v) if hasattr(v, "node") and not hasattr(v, "dtype") else v for v in values]


def _symbolic(values) -> bool:
    return any(hasattr(v, "node") and not hasattr(v, "dtype") for v in values)


def created_call(original: Any):
    symbolic_only = original.__name__ in SYMBOLIC_NAMES

    @functools.wraps(original)
    def call(*args, **kwargs):
        tracer = getattr(_current, "tracer", None)
        if tracer is None or kwargs.get("like") is not None or _library_frame(1) \
                or (symbolic_only and not _symbolic((*args, *kwargs.values()))):
            return original(*args, **kwargs)
        sized = dict(zip(kwargs, tracer.sizes_as_exprs(tuple(kwargs.values())), strict=True))
        try:
            out = frontend.translate(tracer, original, *tracer.sizes_as_exprs(args), **sized)
        except frontend.UnsupportedError:  # what the translation refuses (a symbolic arange stop): numpy's,
            return original(*_specialized(args), **dict(zip(kwargs, _specialized(kwargs.values()))))  # sizes fixed
        return tracer.settle(out, args)

    return call
