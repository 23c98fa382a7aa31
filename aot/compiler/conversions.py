"""numpy's array constructors, substituted while a function is traced.

np.asarray(x) at the top of a function is everyday numpy, but numpy does not dispatch asarray,
array, asanyarray or ascontiguousarray through __array_function__, and a traced array cannot
become an ndarray. While any capture runs, `numpy.<name>` is a wrapper that hands arguments
holding traced arrays to the front end's translation (aot/frontend/numpy_conversions.py) and
everything else to numpy's own function, so other threads and numpy itself see no difference.
Code that bound the function before (`from numpy import asarray`) still reaches numpy's, and
breaks the graph as before.
"""
from __future__ import annotations

import contextlib
import functools
import threading

import numpy as np

from .. import frontend
from .creations import CREATION_NAMES, SYMBOLIC_NAMES, created_call
from .sized_calls import SIZED_NAMES, sized_call

NAMES = ("asarray", "array", "asanyarray", "ascontiguousarray", "from_dlpack")  # from_dlpack: numpy_assembly
NAMES += SIZED_NAMES  # np.nonzero, np.unique & co, for size= (sized_calls.py)
NAMES += CREATION_NAMES + SYMBOLIC_NAMES  # np.zeros & co called by the traced function (creations.py)
NAMES += ("roots",)  # numpy's dispatcher iterates p itself, which would pin a symbolic len(p)
_ORIGINAL = {name: getattr(np, name) for name in NAMES}
_lock = threading.Lock()
_active = 0


def _tracer_of(a, traced_type, depth: int = 0):
    """The tracer of the first traced array in `a` (nested lists and tuples too), or None."""
    if isinstance(a, traced_type):
        return a.tracer
    if isinstance(a, (list, tuple)) and depth < 32:
        for v in a:
            t = _tracer_of(v, traced_type, depth + 1)
            if t is not None:
                return t
    return None


def _substitute(name: str, traced_type):
    """The wrapper standing for numpy's `name`; numpy's like= dispatch may hand it to
    __array_function__, so it names the function it stands for (`__aot_original__`)."""
    wrapper = _wrapper(name, traced_type)
    wrapper.__aot_original__ = _ORIGINAL[name]
    return wrapper


def _wrapper(name: str, traced_type):
    original = _ORIGINAL[name]
    if name in SIZED_NAMES:
        return sized_call(original, traced_type)
    if name in CREATION_NAMES + SYMBOLIC_NAMES:
        return created_call(original)

    @functools.wraps(original)
    def conversion(a, *args, **kwargs):
        tracer = _tracer_of(a, traced_type)
        if tracer is None:
            return original(a, *args, **kwargs)
        out = frontend.translate(tracer, original, a, *args, **kwargs)
        copies = name == "array" and kwargs.get("copy", True) is True  # np.array copies; the others may not
        return tracer.settle(out, (a,), view=not copies)

    return conversion


@contextlib.contextmanager
def traced_conversions(traced_type):
    """Substitute the constructors for the duration (re-entrant, shared by concurrent captures)."""
    global _active
    with _lock:
        if _active == 0:
            for name in NAMES:
                setattr(np, name, _substitute(name, traced_type))
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                for name in NAMES:
                    setattr(np, name, _ORIGINAL[name])
