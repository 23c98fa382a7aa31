"""np.asarray, np.array, np.asanyarray and np.ascontiguousarray of traced values.

numpy does not dispatch these through __array_function__ (they take `like=` instead), and a traced
array cannot become an ndarray, so the tracer substitutes numpy's own functions while it traces
(aot/compiler/conversions.py) and calls these translations for arguments holding traced values:
a traced array converts to itself (cast when `dtype=` is given; arrays are immutable in traced
code, so a copy is never observable), and nested lists of traced arrays and scalars stack, with
scalars typed as numpy's array construction types them (a Python float is float64, not weak).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .emitter import Emitter, abstract_of
from .numpy_shape import expand_dims, np_stack
from .operands import cast, constant, to_dtype

_ORDERS = (None, "C", "F", "A", "K")


def _nested(em: Emitter, a: Any):
    """A value for a traced array, a scalar, or a (nested) list or tuple of them."""
    if em.is_value(a):
        return a
    if isinstance(a, (list, tuple)):
        if not a:
            raise ValueError("np.array of an empty sequence of traced arrays")
        return np_stack(em, [_nested(em, v) for v in a], 0)
    return constant(em, a)  # a scalar, size or constant array, typed as numpy's construction types it


def _convert(em: Emitter, fname: str, a: Any, dtype: Any, order: Any, ndmin: int = 0):
    if order not in _ORDERS:
        raise ValueError(f"np.{fname}: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    v = _nested(em, a)
    if dtype is not None:
        v = cast(em, v, to_dtype(dtype, "dtype"))
    missing = ndmin - abstract_of(v).ndim
    return expand_dims(em, v, tuple(range(missing))) if missing > 0 else v


def np_asarray(em: Emitter, a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
               copy: Any = None, like: Any = None):
    return _convert(em, "asarray", a, dtype, order)


def np_asanyarray(em: Emitter, a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
                  copy: Any = None, like: Any = None):
    return _convert(em, "asanyarray", a, dtype, order)


def np_array(em: Emitter, object: Any, dtype: Any = None, *, copy: Any = True, order: Any = "K",  # noqa: A002
             subok: bool = False, ndmin: int = 0, ndmax: int = 0, like: Any = None):
    return _convert(em, "array", object, dtype, order, ndmin)


def np_ascontiguousarray(em: Emitter, a: Any, dtype: Any = None, *, like: Any = None):
    v = _convert(em, "ascontiguousarray", a, dtype, None)
    return expand_dims(em, v, (0,)) if abstract_of(v).ndim == 0 else v  # numpy: at least 1-d


# reached through the tracer's substitutions of numpy's own functions (see the module docstring)
DECOMPOSITIONS = {np.asarray: np_asarray, np.asanyarray: np_asanyarray, np.array: np_array,
                  np.ascontiguousarray: np_ascontiguousarray}
