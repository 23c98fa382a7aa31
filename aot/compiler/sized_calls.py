"""numpy's data-dependent functions with jax's `size=`, substituted while a function is traced.

np.nonzero(x, size=3) fails in numpy itself: its dispatcher rejects the unknown keyword before
__array_function__ is reached. While a capture runs (conversions.traced_conversions substitutes
these next to the array constructors), `numpy.<name>` for each function of
aot/frontend/numpy_sized.py's table is a wrapper that hands a call with a traced array among its
arguments to the front end's translation (size= or not: without it the translation raises the
refusal naming size=), computes a call with size= on plain numpy arrays at once with the numpy
references (EagerEmitter), and gives every other call to numpy's own function, so other threads
and numpy itself see no difference. Code that bound the function before (`from numpy import
unique`) still reaches numpy's.
"""
from __future__ import annotations

import functools
from typing import Any

from .. import frontend
from ..frontend.numpy_sized import SIZED

SIZED_NAMES = tuple(f.__name__ for f in SIZED)


def _tracer_in(values, traced_type, depth: int = 0):
    """The tracer of the first traced array among `values` (nested lists and tuples too), or None."""
    for v in values:
        if isinstance(v, traced_type):
            return v.tracer
        if isinstance(v, (list, tuple)) and depth < 32:
            t = _tracer_in(v, traced_type, depth + 1)
            if t is not None:
                return t
    return None


def sized_call(original: Any, traced_type):
    @functools.wraps(original)
    def call(*args, **kwargs):
        tracer = _tracer_in(args + tuple(kwargs.values()), traced_type)
        if tracer is not None:
            kwargs = dict(zip(kwargs, tracer.sizes_as_exprs(tuple(kwargs.values())), strict=True))
            return frontend.translate(tracer, original, *tracer.sizes_as_exprs(args), **kwargs)
        if "size" in kwargs:  # constants of the traced function: the result is a constant too
            return frontend.translate(frontend.EagerEmitter(), original, *args, **kwargs)
        return original(*args, **kwargs)

    return call
